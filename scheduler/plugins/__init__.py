"""In-tree plugins, one module per upstream plugin, with upstream's names and reason strings.

``registry`` maps names to factories (and loads out-of-tree plugins); ``args`` holds the typed
args; ``helpers`` the vectorised building blocks they share.
"""
