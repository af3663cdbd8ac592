"""scheduler_perf's opportunistic batching workloads: HostPortConflict and ResourceSaturation.

Upstream 1.37 has them in ``test/integration/scheduler_perf/batching/performance-config.yaml``
(registered by ``batching/batching_test.go`` as the ``batching`` benchmark). Both create
``initNodes`` nodes of ``templates/node-default.yaml`` and then ``measurePods`` pods in one
``createPods`` op (namespace ``namespace-1``, the op's index), under the scheduler config
``batching/scheduler-config-no-topology.yaml``: PodTopologySpread with ``defaultingType: List`` and
no default constraints, so no pod has spreading constraints, and a pod's signature is not refused
for them.

* **HostPortConflict** (``templates/pod-hostport-80.yaml``): every pod asks for host port 80, so a
  node takes one pod; "best case for opportunistic batching".
* **ResourceSaturation** (``templates/pod-saturation.yaml``): every pod requests 3 CPUs of a 4-CPU
  node, so again a node takes one pod, through NodeResourcesFit.

The ``createPods`` op's ``signatureBatchSize`` (``signatureBatchSizeParam``) labels pod ``i`` with
``signature: signature-label-<i / batchSize>`` (``podTemplateWithParams.GetPodTemplate`` in
``executor.go``), so that ``batchSize`` consecutive pods share their labels, and with them their
scheduling signature; pods of another batch differ. ``signed_pod`` applies it.

Each workload of upstream's list has its own feature gates (``OpportunisticBatching`` true, or false
for ``_OpportunisticBatchingDisabled``) and batch size, which are not a size here but part of the
workload: ``VARIANTS`` lists them, as bench workloads named ``<Test>`` (batch size 10, at both
upstream sizes), ``<Test>/<N>BatchSize`` and ``<Test>/OpportunisticBatchingDisabled``. None has a
threshold; upstream's labels are ``integration-test, short`` for ``10Nodes_10Pods_10BatchSize`` and
``performance`` for every 20,000-node one (``LABELS``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["LABELS", "NO_TOPOLOGY_PROFILE", "POD_TEMPLATES", "SIGNATURE_LABEL", "TESTS", "VARIANTS",
           "signed_pod", "workloads"]

Obj = dict[str, Any]
# workloads.Workload, which imports this module (a type variable keeps the import graph one-way)
W = TypeVar("W")
PAUSE = "registry.k8s.io/pause:3.10.1"
SIGNATURE_LABEL = "signature"

# upstream's templates/pod-hostport-80.yaml and templates/pod-saturation.yaml: requests only, no limits.
POD_TEMPLATES: dict[str, Obj] = {
    "pod-hostport-80": {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "pod-hostport-80-", "labels": {}},
        "spec": {"containers": [{"image": PAUSE, "name": "pause", "ports": [{"containerPort": 80, "hostPort": 80}],
                                 "resources": {"requests": {"cpu": "100m", "memory": "100Mi"}}}]}},
    "pod-saturation": {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "pod-saturation-", "labels": {}},
        "spec": {"containers": [{"image": PAUSE, "name": "pause",
                                 "resources": {"requests": {"cpu": "3", "memory": "1Gi"}}}]}},
}

# batching/scheduler-config-no-topology.yaml (schedulerConfigPath of both tests).
NO_TOPOLOGY_PROFILE: Obj = {"pluginConfig": [
    {"name": "PodTopologySpread", "args": {"defaultingType": "List", "defaultConstraints": []}}]}

# (test, defaultPodTemplatePath)
TESTS = (("HostPortConflict", "pod-hostport-80"), ("ResourceSaturation", "pod-saturation"))

# (bench suffix, upstream workload names, signatureBatchSize, OpportunisticBatching, sizes as
# (initNodes, 0, measurePods)): the same for both tests. The first size is the default one.
VARIANTS: tuple[tuple[str, tuple[str, ...], int, bool, tuple[tuple[int, int, int], ...]], ...] = (
    ("", ("20000Nodes_20000Pods_10BatchSize", "10Nodes_10Pods_10BatchSize"), 10, True,
     ((20000, 0, 20000), (10, 0, 10))),
    ("/100BatchSize", ("20000Nodes_20000Pods_100BatchSize",), 100, True, ((20000, 0, 20000),)),
    ("/1000BatchSize", ("20000Nodes_20000Pods_1000BatchSize",), 1000, True, ((20000, 0, 20000),)),
    ("/5000BatchSize", ("20000Nodes_20000Pods_5000BatchSize",), 5000, True, ((20000, 0, 20000),)),
    ("/20000BatchSize", ("20000Nodes_20000Pods_20000BatchSize",), 20000, True, ((20000, 0, 20000),)),
    ("/OpportunisticBatchingDisabled", ("20000Nodes_20000Pods_OpportunisticBatchingDisabled",), 1, False,
     ((20000, 0, 20000),)),
)

# upstream workload name -> its labels
LABELS: dict[str, tuple[str, ...]] = {
    name: ("integration-test", "short") if name.startswith("10Nodes") else ("performance",)
    for _, names, _, _, _ in VARIANTS for name in names}


def signed_pod(body: Obj, i: int, batch_size: int) -> Obj:
    """Pod ``i`` of a ``createPods`` op with ``signatureBatchSize``: labelled
    ``signature=signature-label-<i / batchSize>`` (in place; the template's labels kept)."""
    body["metadata"].setdefault("labels", {})[SIGNATURE_LABEL] = f"signature-label-{i // batch_size}"
    return body


def workloads(make: Callable[..., W]) -> list[W]:
    """The bench workloads, built by ``workloads._w`` (``make``): no threshold, the measured pods in
    ``namespace-1`` (the createPods op's index), the no-topology profile, upstream's gate and batch size."""
    return [make(f"{test}{suffix}", tmpl, list(sizes), None, init=tmpl, namespace="namespace-1",
                 profile=NO_TOPOLOGY_PROFILE, signature_batch=batch,
                 feature_gates=(("OpportunisticBatching", gate),))
            for test, tmpl in TESTS for suffix, _, batch, gate, sizes in VARIANTS]
