"""The apps and batch groups' strategy: the defaults of Deployments, ReplicaSets, StatefulSets,
DaemonSets, ReplicationControllers and Jobs (``pkg/apis/apps/v1/defaults.go``, ``pkg/apis/batch/v1``),
and a Job's generated selector.
"""

from __future__ import annotations

from typing import Any

__all__ = ["WORKLOAD_STORES", "default_job_selector", "default_workload"]

Obj = dict[str, Any]


WORKLOAD_STORES = frozenset({"apps/deployments", "apps/replicasets", "apps/statefulsets", "apps/daemonsets",
                             "batch/jobs", "/replicationcontrollers"})


def default_workload(store: str, obj: Obj) -> None:
    """``pkg/apis/apps/v1`` and ``batch/v1`` defaults (SetDefaults_Deployment, _StatefulSet, _DaemonSet,
    _ReplicaSet, _Job): what ``kubectl rollout status`` and the controllers read."""
    spec = obj["spec"]
    if store == "apps/deployments" and obj.get("status") is None:
        obj["status"] = {}         # DeploymentStatus is a struct whose fields all omit empty values: {}
    if store in ("apps/deployments", "apps/replicasets", "apps/statefulsets", "/replicationcontrollers"):
        spec.setdefault("replicas", 1)
    if store == "apps/deployments":
        strategy = spec.setdefault("strategy", {})
        if strategy.setdefault("type", "RollingUpdate") == "RollingUpdate":
            rolling = strategy.setdefault("rollingUpdate", {})
            rolling.setdefault("maxUnavailable", "25%")
            rolling.setdefault("maxSurge", "25%")
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)
    elif store == "apps/statefulsets":
        spec.setdefault("podManagementPolicy", "OrderedReady")
        strategy = spec.setdefault("updateStrategy", {})
        if strategy.setdefault("type", "RollingUpdate") == "RollingUpdate":
            strategy.setdefault("rollingUpdate", {}).setdefault("partition", 0)
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("persistentVolumeClaimRetentionPolicy", {"whenDeleted": "Retain", "whenScaled": "Retain"})
    elif store == "apps/daemonsets":
        strategy = spec.setdefault("updateStrategy", {})
        if strategy.setdefault("type", "RollingUpdate") == "RollingUpdate":
            rolling = strategy.setdefault("rollingUpdate", {})
            rolling.setdefault("maxUnavailable", 1)
            rolling.setdefault("maxSurge", 0)
        spec.setdefault("revisionHistoryLimit", 10)
    elif store == "batch/jobs":
        if spec.get("completions") is None and spec.get("parallelism") is None:
            spec["completions"] = 1
        spec.setdefault("parallelism", 1)
        spec.setdefault("backoffLimit", 6)
        spec.setdefault("completionMode", "NonIndexed")
        spec.setdefault("suspend", False)
        spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")


def default_job_selector(job: Obj) -> None:
    """``generateSelector``: a Job's selector is its controller-uid, and its template carries the labels."""
    spec = job.get("spec")
    if not isinstance(spec, dict) or spec.get("manualSelector") or spec.get("selector"):
        return
    uid, name = job["metadata"]["uid"], job["metadata"]["name"]
    spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    labels = spec.setdefault("template", {}).setdefault("metadata", {}).setdefault("labels", {})
    labels.update({"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": name,
                   "controller-uid": uid, "job-name": name})
