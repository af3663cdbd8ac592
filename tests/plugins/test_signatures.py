"""Pod signatures (``framework/signature.py``, each plugin's ``sign_pod``).

Ported: ``staging/src/k8s.io/kube-scheduler/framework/signers_test.go`` (TestHostPortsSigner,
TestTolerationsSigner, TestNodeAffinitySigner, TestVolumesSigner) and the unsignable cases of the
plugins' ``SignPod`` (InterPodAffinity, PodTopologySpread with explicit and default constraints,
DynamicResources with claims, NodeResourcesFit with a DRA-backed extended resource). Then the KEP's
"signature consistency" test: on random clusters, pods with equal signatures get equal Filter
verdicts and Score results on every node.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from scheduler.framework import CycleState
from scheduler.framework.signature import (
    HOST_PORTS_SIGNER_NAME,
    IMAGE_NAMES_SIGNER_NAME,
    LABELS_SIGNER_NAME,
    NODE_AFFINITY_SIGNER_NAME,
    NODE_NAME_SIGNER_NAME,
    RESOURCES_SIGNER_NAME,
    SCHEDULER_NAME_SIGNER_NAME,
    TOLERATIONS_SIGNER_NAME,
    VOLUMES_SIGNER_NAME,
    host_ports_signer,
    node_affinity_signer,
    tolerations_signer,
)
from scheduler.plugins.nodedeclaredfeatures import FEATURES_SIGNER_NAME
from tests.builders import make_scheduler, node, pod


def ports_pod(*containers: list[int], init: list[int] | None = None) -> Any:
    cs = [{"name": f"c{i}", "image": "i", "ports": [{"containerPort": 1, "hostPort": p} for p in ps]}
          for i, ps in enumerate(containers)]
    spec: dict[str, Any] = {"containers": cs or [{"name": "c", "image": "i"}]}
    if init is not None:
        spec["initContainers"] = [{"name": "i", "image": "i", "restartPolicy": "Always",
                                   "ports": [{"containerPort": 1, "hostPort": p} for p in init]}]
    return pod("p", spec=spec)


# signers_test.go TestHostPortsSigner (ours carries protocol and host IP with each port).
@pytest.mark.parametrize(("name", "p", "want"), [
    ("no containers", ports_pod(), ()),
    ("containers without host ports", pod("p", spec={"containers": [{"name": "c", "image": "i",
                                                                      "ports": [{"containerPort": 80}]}]}), ()),
    ("single container with host port", ports_pod([8080]), (("TCP", "0.0.0.0", 8080),)),
    ("multiple containers, unsorted host ports, duplicates", ports_pod([80], [443, 80], init=[9090]),
     (("TCP", "0.0.0.0", 80), ("TCP", "0.0.0.0", 443), ("TCP", "0.0.0.0", 9090))),
])
def test_host_ports_signer(name: str, p: Any, want: tuple[object, ...]) -> None:
    assert host_ports_signer(p) == want


def tol(*pairs: tuple[str, str]) -> Any:
    return pod("p", spec={"tolerations": [{"key": k, "value": v, "operator": "Equal", "effect": "NoSchedule"}
                                          for k, v in pairs]})


# signers_test.go TestTolerationsSigner: the order of the tolerations does not matter.
def test_tolerations_signer() -> None:
    assert tolerations_signer(pod("p")) == ()
    assert len(tolerations_signer(tol(("key1", "value1")))) == 1
    assert tolerations_signer(tol(("b", "2"), ("a", "1"), ("b", "1"))) == tolerations_signer(
        tol(("a", "1"), ("b", "1"), ("b", "2")))
    assert tolerations_signer(tol(("a", "1"))) != tolerations_signer(tol(("a", "2")))


# signers_test.go TestNodeAffinitySigner: nil affinity, affinity without node affinity, node affinity.
def test_node_affinity_signer() -> None:
    required = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}]}}
    none = node_affinity_signer(pod("p"))
    assert none == (None, (), ())
    pod_affinity_only = pod("p", spec={"affinity": {"podAffinity": {}}})
    assert node_affinity_signer(pod_affinity_only) == none
    with_na = node_affinity_signer(pod("p", spec={"affinity": {"nodeAffinity": required}}))
    assert with_na != none
    assert with_na == node_affinity_signer(pod("q", spec={"affinity": {"nodeAffinity": required}}))
    assert node_affinity_signer(pod("p", spec={"nodeSelector": {"a": "b"}})) != none


# signers_test.go TestVolumesSigner: configMap and secret volumes (and every volume no plugin reads)
# leave a pod signable; ours: a storage volume makes it unsignable (module docstring).
@pytest.mark.parametrize(("name", "volumes", "signable"), [
    ("no volumes", [], True),
    ("only ignored volumes (ConfigMap, Secret)", [{"name": "v1", "configMap": {"name": "cm"}},
                                                  {"name": "v2", "secret": {"secretName": "s"}}], True),
    ("emptyDir and projected", [{"name": "e", "emptyDir": {}}, {"name": "t", "projected": {"sources": []}}], True),
    ("a claim", [{"name": "d", "persistentVolumeClaim": {"claimName": "c"}}], False),
    ("an ephemeral claim", [{"name": "d", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}], False),
    ("mixed", [{"name": "v1", "configMap": {"name": "cm"}},
               {"name": "d", "persistentVolumeClaim": {"claimName": "c"}}], False),
])
def test_volumes(name: str, volumes: list[dict[str, Any]], signable: bool) -> None:
    s, _ = make_scheduler()
    fwk = s.profiles.current["default-scheduler"]
    sig = fwk.sign_pod(pod("p", spec={"volumes": volumes}))
    assert (sig is not None) == signable
    if sig is not None:
        assert dict(sig)[VOLUMES_SIGNER_NAME] == ()


def default_signature(p: Any) -> dict[str, object] | None:
    s, _ = make_scheduler()
    sig = s.profiles.current["default-scheduler"].sign_pod(p)
    return None if sig is None else dict(sig)


def test_the_default_profile_signs_with_upstreams_names() -> None:
    sig = default_signature(pod("p", labels={"app": "x"}))
    assert sig is not None
    assert set(sig) == {SCHEDULER_NAME_SIGNER_NAME, NODE_AFFINITY_SIGNER_NAME, HOST_PORTS_SIGNER_NAME,
                        RESOURCES_SIGNER_NAME, VOLUMES_SIGNER_NAME, NODE_NAME_SIGNER_NAME, TOLERATIONS_SIGNER_NAME,
                        IMAGE_NAMES_SIGNER_NAME, LABELS_SIGNER_NAME, FEATURES_SIGNER_NAME}
    assert sig[SCHEDULER_NAME_SIGNER_NAME] == "default-scheduler"
    assert sig[FEATURES_SIGNER_NAME] == ()
    assert sig[LABELS_SIGNER_NAME] == ("default", (("app", "x"),))


@pytest.mark.parametrize(("name", "a", "b"), [
    ("another name and uid", pod("a"), pod("b")),
    ("a configMap volume", pod("a"), pod("b", spec={"volumes": [{"name": "v", "configMap": {"name": "x"}}]})),
    ("tolerations in another order", tol(("a", "1"), ("b", "2")), tol(("b", "2"), ("a", "1"))),
])
def test_equal_signatures(name: str, a: Any, b: Any) -> None:
    assert default_signature(a) == default_signature(b) is not None


@pytest.mark.parametrize(("name", "a", "b"), [
    ("cpu", pod("a", "100m"), pod("b", "200m")),
    ("labels (existing pods' anti-affinity reads them)", pod("a", labels={"x": "1"}), pod("b", labels={"x": "2"})),
    ("namespace", pod("a"), pod("b", namespace="other")),
    ("image", pod("a", image="i:1"), pod("b", image="i:2")),
    ("node selector", pod("a", spec={"nodeSelector": {"z": "1"}}), pod("b", spec={"nodeSelector": {"z": "2"}})),
    ("host port", ports_pod([80]), ports_pod([81])),
    ("scheduler name", pod("a"), pod("b", scheduler_name="other")),
    ("node name", pod("a", spec={"nodeName": "n1"}), pod("b", spec={"nodeName": "n2"})),
])
def test_different_signatures(name: str, a: Any, b: Any) -> None:
    sa, sb = default_signature(a), default_signature(b)
    assert sa is not None and sb is not None and sa != sb


SPREAD = {"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                         "labelSelector": {"matchLabels": {"app": "x"}}}]}
ANTI = {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "kubernetes.io/hostname"}]}}}
PREFERRED_AFFINITY = {"affinity": {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    {"weight": 1, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "zone"}}]}}}


# The plugins' SignPod: pods that depend on more than themselves and the node have no signature.
@pytest.mark.parametrize(("name", "spec"), [
    ("InterPodAffinity: required anti-affinity", ANTI),
    ("InterPodAffinity: preferred affinity", PREFERRED_AFFINITY),
    ("PodTopologySpread: topology spread constraints", SPREAD),
    ("DynamicResources: a resource claim", {"resourceClaims": [{"name": "gpu", "resourceClaimName": "c"}]}),
])
def test_unsignable(name: str, spec: dict[str, Any]) -> None:
    assert default_signature(pod("p", spec=spec)) is None


def test_default_spreading_makes_a_pod_unsignable_only_when_it_applies() -> None:
    """System default constraints apply to a pod a Service or controller selects: upstream's code
    refuses every pod while they are configured, the KEP only those they apply to (ours)."""
    from scheduler.model.selectors import parse_label_selector
    from scheduler.plugins.args import PodTopologySpreadArgs
    from scheduler.plugins.podtopologyspread import PodTopologySpread
    selected = parse_label_selector({"matchLabels": {"app": "x"}}, "selector")
    owned = PodTopologySpread(PodTopologySpreadArgs(), lambda p: selected if p.labels.get("app") == "x" else None)
    assert owned.sign_pod(pod("a", labels={"app": "x"}))[1].is_rejected()
    assert owned.sign_pod(pod("b", labels={"app": "y"}))[1].is_success()
    explicit = PodTopologySpread(PodTopologySpreadArgs(defaulting_type="List", default_constraints=(
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"},)), lambda p: selected)
    assert explicit.sign_pod(pod("c"))[1].is_rejected()


def test_dra_backed_extended_resource_is_unsignable() -> None:
    from scheduler.cache.dra import DraStore
    from scheduler.plugins.args import NodeResourcesFitArgs
    from scheduler.plugins.noderesources import NodeResourcesFit

    class Store(DraStore):
        def extended_resource_class(self, name: str) -> Any:
            return object() if name == "example.com/gpu" else None

    fit = NodeResourcesFit(NodeResourcesFitArgs(), Store())
    gpu = pod("g", spec={"containers": [{"name": "c", "image": "i",
                                         "resources": {"requests": {"example.com/gpu": "1"}}}]})
    assert fit.sign_pod(gpu)[1].is_rejected()
    assert fit.sign_pod(pod("p"))[1].is_success()


def test_every_in_tree_profile_plugin_signs() -> None:
    """computeBatchablePlugins: the default profile's PreFilter, Filter, PreScore and Score plugins
    all sign, so the profile signs pods (a profile with extenders, or with a plugin that cannot
    sign, does not: tests/cycle/test_batching.py, "no batching missing sign")."""
    s, _ = make_scheduler()
    assert s.profiles.current["default-scheduler"].signatures_enabled


def test_a_profile_with_extenders_signs_nothing() -> None:
    """computeBatchablePlugins: "Disabling signatures for profile because it has extenders"."""
    from scheduler.framework.extender import ObjectBodies
    from scheduler.kubeapi.extender import HTTPExtender
    from scheduler.plugins.registry import Registry
    from scheduler.profiles import compile_profile, parse_spec
    spec = parse_spec({"schedulerName": "s", "extenders": [{"urlPrefix": "http://127.0.0.1:1", "filterVerb": "f"}]})
    fwk = compile_profile(spec, registry=Registry(), extender_factory=lambda c: HTTPExtender(c, ObjectBodies()))
    assert not fwk.signatures_enabled
    assert fwk.sign_pod(pod("p")) is None


# KEP-5598's signature consistency test: equal signatures, equal results on every node.
def random_pod(rng: random.Random, i: int) -> Any:
    spec: dict[str, Any] = {}
    if rng.random() < 0.3:
        spec["nodeSelector"] = {"tier": rng.choice(["a", "b"])}
    if rng.random() < 0.3:
        spec["tolerations"] = [{"key": "t", "operator": "Exists"}]
    if rng.random() < 0.3:
        spec["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": rng.choice([1, 50]), "preference": {"matchExpressions": [
                {"key": "tier", "operator": "In", "values": [rng.choice(["a", "b"])]}]}}]}}
    if rng.random() < 0.2:
        spec["containers"] = [{"name": "c", "image": "img:1", "ports": [{"containerPort": 1, "hostPort": 8080}],
                               "resources": {"requests": {"cpu": "1"}}}]
    return pod(f"p{i}", rng.choice(["100m", "1", "2"]), labels={"app": rng.choice(["a", "b"])}, spec=spec,
               image=rng.choice(["img:1", "img:2"]))


@pytest.mark.parametrize("seed", range(4))
def test_equal_signatures_give_equal_verdicts_and_scores(seed: int) -> None:
    rng = random.Random(seed)
    s, _ = make_scheduler(seed=seed)
    taint = [{"key": "t", "value": "v", "effect": "NoSchedule"}]
    for i in range(20):
        s.cache.add_node(node(f"n{i}", cpu=rng.choice(["1", "2", "4"]), labels={"tier": rng.choice(["a", "b"])},
                              taints=taint if rng.random() < 0.2 else [],
                              images=[("img:1", 300 * 1024 * 1024)] if rng.random() < 0.5 else None))
    for i in range(15):                                    # existing pods, some with host ports
        s.cache.add_pod(pod(f"e{i}", "500m", node_name=f"n{rng.randrange(20)}",
                            spec={"containers": [{"name": "c", "image": "i", "ports": [
                                {"containerPort": 1, "hostPort": 8080}]}]} if rng.random() < 0.3 else None))
    fwk = s.profiles.current["default-scheduler"]
    groups: dict[object, list[tuple[list[bool], list[int]]]] = {}
    for i in range(200):
        p = random_pod(rng, i)
        sig = fwk.sign_pod(p)
        if sig is None:
            continue
        with s.cache.lock:
            snap = s.cache.snapshot()
            state = CycleState()
            fwk.run_pre_filter(state, p, snap)
            rows = snap.node_order
            verdicts = [fwk.run_filter_on_node(state, p, snap, int(r)).is_success() for r in rows.tolist()]
            feasible = rows[np.array(verdicts, np.bool_)]
            scores: list[int] = []
            if len(feasible):
                fwk.run_pre_score(state, p, snap, feasible)
                totals, _, st = fwk.run_score(state, p, snap, feasible)
                assert st.is_success()
                scores = totals.tolist()
        groups.setdefault(sig, []).append((verdicts, scores))
    shared = [g for g in groups.values() if len(g) > 1]
    assert len(shared) >= 5, "too few pods share a signature for the test to say anything"
    for g in shared:
        assert all(r == g[0] for r in g)
