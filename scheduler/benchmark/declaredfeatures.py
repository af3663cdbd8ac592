"""scheduler_perf's NodeDeclaredFeatures workloads: NodeDeclaredFeaturesDisabled and ...Enabled.

Upstream 1.37 has them in ``test/integration/scheduler_perf/nodedeclaredfeatures/``: its
``performance-config.yaml`` and ``templates/`` (``node-base.yaml``, ``pod-with-pod-level-resources.yaml``),
registered by ``node_declared_features_test.go`` with two hooks:

* ``preInitNodeDeclaredFeatures``: with the workload's ``NodeDeclaredFeatures`` gate on, replace the
  feature registry (``ndffeatures.AllFeatures``) with ``numNodeDeclaredFeatures`` mock features
  ``Feature1`` .. ``FeatureN`` (5 when the workload does not give the param), each discovered by any
  node and inferred for any pod whose spec has pod-level ``resources``; restored after the run;
* ``updateNodesWithDeclaredFeatures``: with the gate on, each node's ``status.declaredFeatures``
  becomes the sorted names of those features.

Every pod (``pod-<i>``: pod-level requests of 100m and 200Mi, one container without any) therefore
requires all N features, and every node (``node-base.yaml``: ``node-<i>``, 128 CPUs, 16Gi, 110 pods,
no labels, no conditions) declares them all: NodeDeclaredFeatures filters every node and keeps it.
The ops: ``createNodes`` (``$nodes``), ``createPods`` of ``$initPods`` in ``init``, then
``$measurePods`` measured in ``test``. No threshold.

Here ``DeclaredFeatures`` is the workload's ``numNodeDeclaredFeatures`` (``Workload.node_features``):
``mock_registry`` builds the mock features, ``installed`` swaps them in around a core-mode run
(``model/nodefeatures.active_registry``, as upstream swaps its package variable), and
``operator_cli`` starts the end-to-end operator with them installed before its command line runs,
since the operator parses the pods in its own process. The nodes are created with their declared
features already in ``status`` (upstream creates them, then writes the status: the same nodes once
the measured pods come).

**The gate.** 1.37 locks NodeDeclaredFeatures on (GA), and upstream's ``SetFeatureGateDuringTest``
refuses ``NodeDeclaredFeatures: false`` there as ``run --feature-gates`` does here. Core mode runs
NodeDeclaredFeaturesDisabled with the gate off in its own process (what the workload measured before
the lock); end to end the operator refuses the locked value, so ``refusal`` says so instead of
starting a run that cannot start.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from scheduler import features
from scheduler.model import nodefeatures
from scheduler.model.nodefeatures import Feature

__all__ = ["DEFAULT_COUNT", "LABELS", "POD_TEMPLATES", "VARIANTS", "DeclaredFeatures", "declared", "installed",
           "mock_registry", "node", "nodes", "operator_cli", "refusal", "workloads"]

Obj = dict[str, Any]
# workloads.Workload, which imports this module (a type variable keeps the import graph one-way)
W = TypeVar("W")
# node_declared_features_test.go's defaultDeclaredFeaturesCount
DEFAULT_COUNT = 5


@dataclass(frozen=True)
class DeclaredFeatures:
    """The workload's ``numNodeDeclaredFeatures`` param (None: not given)."""

    count: int | None = None

    def mocked(self, gates: Mapping[str, bool] | None) -> int:
        """How many mock features the run registers and the nodes declare: none with the gate off
        (both hooks return at once), else the param or ``DEFAULT_COUNT``."""
        if not features.enabled(gates, features.NODE_DECLARED_FEATURES):
            return 0
        return DEFAULT_COUNT if self.count is None else self.count


def _pod_level_resources(spec: Mapping[str, Any]) -> bool:
    # mockFeature.InferForScheduling: podInfo.Spec.Resources != nil
    return spec.get("resources") is not None


def _any_node(cfg: nodefeatures.NodeConfiguration) -> bool:
    return True         # mockFeature.Discover


def mock_registry(n: int) -> tuple[Feature, ...]:
    """``setupFeatures(n)``: ``Feature1`` .. ``FeatureN``, no max version."""
    return tuple(Feature(f"Feature{i}", _pod_level_resources, _any_node,
                         source="nodedeclaredfeatures/node_declared_features_test.go")
                 for i in range(1, n + 1))


def declared(n: int) -> list[str]:
    """``updateNodesWithDeclaredFeatures``: the names, sorted as Go's ``sort.Strings`` (byte order)."""
    return sorted(f"Feature{i}" for i in range(1, n + 1))


@contextlib.contextmanager
def installed(n: int) -> Iterator[None]:
    """The mock registry of ``n`` features active in this process for the block (none when 0)."""
    if n <= 0:
        yield
        return
    previous = nodefeatures.active_registry(mock_registry(n))
    try:
        yield
    finally:
        nodefeatures.active_registry(previous)


# The operator's entry with the mock registry installed first: ``-c`` keeps ``scheduler.app`` out of
# this package's imports (the app is the layer above the benchmarks).
_LAUNCHER = ("import runpy, sys\n"
             "from scheduler.model import nodefeatures\n"
             "from scheduler.benchmark.declaredfeatures import mock_registry\n"
             "nodefeatures.active_registry(mock_registry(int(sys.argv[1])))\n"
             "sys.argv = ['kopf-scheduler', *sys.argv[2:]]\n"
             "runpy.run_module('scheduler.app.cli', run_name='__main__', alter_sys=True)\n")


def operator_cli(n: int, *args: str) -> list[str]:
    """The argv of ``kopf-scheduler ARGS...`` with ``n`` mock features registered in that process."""
    return [sys.executable, "-c", _LAUNCHER, str(n), *args]


# nodedeclaredfeatures/templates/pod-with-pod-level-resources.yaml (pod-{{ .Index }})
POD_TEMPLATES: dict[str, Obj] = {
    "pod-with-pod-level-resources": {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "pod-", "labels": {}},
        "spec": {"resources": {"requests": {"cpu": "100m", "memory": "200Mi"}},
                 "containers": [{"name": "container-a", "image": "registry.k8s.io/pause:3.10.1"}]}},
}


def node(i: int, n: int) -> Obj:
    """``node-base.yaml``'s node ``i``, declaring the ``n`` mock features (none when 0)."""
    res = {"cpu": "128", "memory": "16Gi", "pods": "110"}
    status: Obj = {"capacity": dict(res), "allocatable": dict(res), "phase": "Running"}
    if n:
        status["declaredFeatures"] = declared(n)
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{i}"}, "spec": {}, "status": status}


def nodes(count: int, n: int) -> list[Obj]:
    return [node(i, n) for i in range(count)]


def refusal(name: str, node_features: DeclaredFeatures | None, gates: Mapping[str, bool]) -> str | None:
    """Why workload ``name`` cannot run end to end under ``gates`` (the workload's, then the
    bench's), or None."""
    if node_features is None or features.enabled(gates, features.NODE_DECLARED_FEATURES):
        return None
    return (f"{name} sets NodeDeclaredFeatures=false, which 1.37 locks to true: the operator refuses it "
            "(upstream's SetFeatureGateDuringTest fails the same way); run it with --mode core")


# (bench name, upstream workload names, numNodeDeclaredFeatures, the gate, sizes as (nodes, initPods,
# measurePods)); the first size is the default one.
VARIANTS: tuple[tuple[str, tuple[str, ...], int | None, bool, tuple[tuple[int, int, int], ...]], ...] = (
    ("NodeDeclaredFeaturesDisabled", ("5000Nodes", "5Nodes"), None, False, ((5000, 5000, 5000), (5, 0, 10))),
    ("NodeDeclaredFeaturesEnabled", ("5000Nodes20DeclaredFeatures",), 20, True, ((5000, 5000, 5000),)),
    ("NodeDeclaredFeaturesEnabled/40DeclaredFeatures", ("5000Nodes40DeclaredFeatures",), 40, True,
     ((5000, 5000, 5000),)),
    ("NodeDeclaredFeaturesEnabled/5DeclaredFeatures", ("5Nodes5DeclaredFeatures",), 5, True, ((5, 0, 10),)),
)

# upstream workload name -> its labels
LABELS: dict[str, tuple[str, ...]] = {
    name: ("integration-test", "short") if name.startswith("5Nodes") else ("performance",)
    for _, names, _, _, _ in VARIANTS for name in names}


def workloads(make: Callable[..., W]) -> list[W]:
    """The bench workloads, built by ``workloads._w`` (``make``): init pods in ``init``, measured ones
    in ``test``, the default profile, upstream's gate and ``numNodeDeclaredFeatures``."""
    tmpl = "pod-with-pod-level-resources"
    return [make(name, tmpl, list(sizes), None, init=tmpl, init_namespace="init", namespace="test",
                 node_features=DeclaredFeatures(count), feature_gates=((features.NODE_DECLARED_FEATURES, gate),))
            for name, _, count, gate, sizes in VARIANTS]
