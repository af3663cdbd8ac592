"""The request handlers, by verb, as kube-apiserver's ``staging/src/k8s.io/apiserver/pkg/endpoints/handlers``:
``list``, ``watch``, ``create``, ``update``, ``patch``, ``delete``, ``bind`` (``pods/binding``) and
``scale`` (the ``scale`` subresource), over ``base`` (the request, the answers, body decoding) and
``discovery`` (``/apis``, OpenAPI). Each is a mixin over the registries' strategy and store
(``registry.strategy``, ``registry.generic``); ``server.ApiServer`` routes a request to them.
"""
