"""An asyncio Kubernetes REST client (an edge: aiohttp), shared by the operator and the simulated cluster.

``KubeClient`` speaks JSON to any API server: a kubeconfig (bearer token, client certificates, CA),
in-cluster service-account config, or a URL and token. It resolves ``apiVersion``/``kind`` to URL
paths through discovery, streams watches as dicts, and raises ``scheduler.errors.ClientError``
subclasses carrying the HTTP status, so the core can tell 404 and 409 from the rest.
"""

from scheduler.kubeapi.client import KubeClient, new_event_loop, resource_path
from scheduler.kubeapi.config import KubeConfig, load_config

__all__ = ["KubeClient", "KubeConfig", "load_config", "new_event_loop", "resource_path"]
