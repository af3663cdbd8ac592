"""Dynamic Resource Allocation's core, as upstream's ``k8s.io/dynamic-resource-allocation``: CEL
device selectors (``cel``) and the structured allocator (``allocator``). The objects are
``scheduler.model.dra``, their store ``scheduler.cache.dra``, the plugin
``scheduler.plugins.dynamicresources``."""
