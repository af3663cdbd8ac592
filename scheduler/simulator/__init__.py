"""The simulated cluster: an in-memory Kubernetes API server (aiohttp) that kubectl, Kopf and the
Python client accept. An edge of the project: it depends on nothing in the core but quantity parsing and label-selector
matching (``scheduler.model.selectors``).

Read in this order: ``resources`` (what is served) → ``store`` (resourceVersions, history, watchers,
size limits) → ``params`` / ``decode`` (query parameters and bodies, read within kube-apiserver's
bounds) → ``selectors`` / ``patch`` / ``admission`` / ``schema`` (CRD pruning, defaults; their CEL rules in
``celrules`` and ``cellib``, what a CRD may declare in ``crdcheck``) / ``validation`` / ``storage`` / ``dra``
(what a write goes through) → ``tables`` (kubectl's server-side printing) → ``faults`` → ``server`` (the HTTP
surface and the storage semantics) → ``controllers`` (kubelet, namespace and disruption controllers,
eviction), ``workloads`` (the workload controllers, garbage collection), ``volumes`` (the
PersistentVolume controller, a provisioner, volume protection) and ``devices`` (the resourceclaim
controller, the kubelet's wait for claims, a simulated DRA driver) →
``cluster`` (the embedded ``SimulatedCluster`` and the kubeconfig). ``kopf-scheduler cluster-bench``,
which measures it, is in ``scheduler.benchmark``.
"""

from scheduler.simulator.apierrors import ApiError
from scheduler.simulator.cluster import SimulatedCluster, iter_documents
from scheduler.simulator.faults import ErrorRule, Faults, parse_fault
from scheduler.simulator.server import ApiServer

__all__ = ["ApiError", "ApiServer", "ErrorRule", "Faults", "SimulatedCluster", "iter_documents", "parse_fault"]
