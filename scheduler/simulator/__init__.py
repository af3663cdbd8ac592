"""The simulated cluster: an in-memory Kubernetes API server (aiohttp) that kubectl, Kopf and the
Python client accept. An edge of the project: it depends on nothing in the core but quantity parsing and label-selector
matching (``scheduler.model.selectors``).

Read in this order: ``resources`` (what is served) → ``store`` (resourceVersions, history, watchers,
size limits) → ``apierrors`` (the Status answers) → ``interfaces`` (the seams: the writer the controllers
see, the hooks the API side calls) → ``registry/`` (each API group's strategy: defaulting, validation;
``strategy`` applies them and ``generic`` stores; CRD schemas in ``schema``, their CEL rules in
``celrules`` and ``cellib``, what a CRD may declare in ``crdcheck``) → ``handlers/`` (one module per verb,
over ``params`` / ``decode`` / ``selectors`` / ``patch`` / ``tables``) → ``server`` (routing,
authentication, faults) → ``controllers/`` (kubelet, workloads, garbage collector, namespace,
disruption, volumes, resource claims, the GPU driver, on one work-queue base) → ``cluster`` (the
embedded ``SimulatedCluster`` and the kubeconfig). An import-linter layers contract keeps the arrows one
way. ``kopf-scheduler cluster-bench``, which measures it, is in ``scheduler.benchmark``.
"""

from scheduler.simulator.apierrors import ApiError
from scheduler.simulator.cluster import SimulatedCluster, iter_documents
from scheduler.simulator.controllers.gpudriver import load_gpu_attributes
from scheduler.simulator.controllers.resourceclaims import pod_claim_names
from scheduler.simulator.controllers.volumes import pod_claims
from scheduler.simulator.faults import ErrorRule, Faults, parse_fault
from scheduler.simulator.server import ApiServer

__all__ = ["ApiError", "ApiServer", "ErrorRule", "Faults", "SimulatedCluster", "iter_documents", "load_gpu_attributes",
           "parse_fault", "pod_claim_names", "pod_claims"]
