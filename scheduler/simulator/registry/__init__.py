"""The registries: per API group, each kind's strategy, as kube-apiserver's ``pkg/registry/<group>/<kind>``
holds it: defaulting, validation, and what a status write may change. ``meta`` holds the ObjectMeta
rules every kind shares; ``core``, ``apps``, ``scheduling``, ``storage`` and ``resource`` the groups'
own; ``strategy`` applies them to a write, and ``generic`` is the storage path every write takes.
"""
