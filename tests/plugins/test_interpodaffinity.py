"""InterPodAffinity, after upstream's ``interpodaffinity/filtering_test.go`` and ``scoring_test.go``."""

from __future__ import annotations

import pytest

from scheduler.model import Pod
from scheduler.plugins import interpodaffinity
from scheduler.plugins.args import InterPodAffinityArgs
from tests.builders import pod, run_filter, run_score, zoned
from tests.st import MakeNode

IPA = interpodaffinity.InterPodAffinity(InterPodAffinityArgs())


def affinity(kind: str, key: str = "zone", match: dict | None = None) -> dict:
    return {"affinity": {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": match or {"app": "db"}}, "topologyKey": key}]}}}


@pytest.mark.parametrize(("name", "p", "existing", "want"), [
    ("affinity to zone with db", pod("p", spec=affinity("podAffinity")), [pod("db", labels={"app": "db"}, node_name="a1")],
     [None, None, interpodaffinity.ERR_REASON_AFFINITY_RULES_NOT_MATCH, interpodaffinity.ERR_REASON_AFFINITY_RULES_NOT_MATCH]),
    ("no db anywhere, pod does not match itself", pod("p", spec=affinity("podAffinity")), [],
     [interpodaffinity.ERR_REASON_AFFINITY_RULES_NOT_MATCH] * 4),
    ("first pod of a group goes anywhere with the key", pod("p", labels={"app": "db"}, spec=affinity("podAffinity")), [],
     [None, None, None, interpodaffinity.ERR_REASON_AFFINITY_RULES_NOT_MATCH]),
    ("anti-affinity keeps out of the zone", pod("p", spec=affinity("podAntiAffinity")),
     [pod("db", labels={"app": "db"}, node_name="a1")],
     [interpodaffinity.ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH] * 2 + [None, None]),
    ("existing pod's anti-affinity", pod("p", labels={"app": "web"}),
     [pod("db", node_name="b1", spec=affinity("podAntiAffinity", match={"app": "web"}))],
     [None, None, interpodaffinity.ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH, None]),
])
def test_inter_pod_affinity_filter(name: str, p: Pod, existing: list[Pod], want: list[str | None]) -> None:
    got = run_filter(IPA, p, zoned(), existing)
    assert [None if g is None else g.reasons[0] for g in got] == want, name


def test_inter_pod_affinity_preferred_score() -> None:
    spec = {"affinity": {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 5, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "zone"}}]}}}
    got = run_score(IPA, pod("p", spec=spec), zoned()[:3], [pod("db", labels={"app": "db"}, node_name="b1")])
    assert got == [0, 0, 100]


@pytest.mark.parametrize(("name", "p", "existing", "skip"), [
    # filtering.go PreFilter (issue #14 item 9): Skip when the pod has no required terms and no existing
    # pod's required anti-affinity counts against it, as upstream's wantPreFilterStatus: fwk.Skip cases.
    ("no terms, no existing pods", pod("p"), [], True),
    ("no terms; an existing anti-affinity term that does not match the pod", pod("p", labels={"app": "web"}),
     [pod("db", node_name="b1", spec=affinity("podAntiAffinity", match={"app": "cache"}))], True),
    ("no terms; the matching holder's node lacks the topology key", pod("p", labels={"app": "web"}),
     [pod("db", node_name="c1", spec=affinity("podAntiAffinity", match={"app": "web"}))], True),
    ("no terms; an existing anti-affinity term matches the pod", pod("p", labels={"app": "web"}),
     [pod("db", node_name="b1", spec=affinity("podAntiAffinity", match={"app": "web"}))], False),
    ("required affinity of its own", pod("p", spec=affinity("podAffinity")), [], False),
    ("required anti-affinity of its own", pod("p", spec=affinity("podAntiAffinity")), [], False),
])
def test_inter_pod_affinity_pre_filter_skip(name: str, p: Pod, existing: list[Pod], skip: bool) -> None:
    from tests.builders import setup
    snap, state, _ = setup(zoned(), existing)
    _, status = IPA.pre_filter(state, p, snap)
    assert status.is_skip() == skip, name
    assert status.is_success() != skip, name


# --- filtering_test.go TestRequiredAffinitySingleNode -------------------------------------------------
# Node "machine1" has region=r1, zone=z11 (no "node" label). Upstream cases whose terms have no
# topologyKey are left out: kube-apiserver refuses such a pod ("can not be empty"), and our parser too.
POD_LABEL = {"service": "securityscan"}
POD_LABEL2 = {"security": "S1"}
AFF_RULES = interpodaffinity.ERR_REASON_AFFINITY_RULES_NOT_MATCH
ANTI_RULES = interpodaffinity.ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH
EXISTING_ANTI = interpodaffinity.ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH


def req(key: str, op: str, values: list[str] | None = None) -> dict:
    r: dict = {"key": key, "operator": op}
    if values is not None:
        r["values"] = values
    return r


def term(topology: str, *requirements: dict, namespaces: list[str] | None = None) -> dict:
    t: dict = {"labelSelector": {"matchExpressions": list(requirements)}, "topologyKey": topology}
    if namespaces is not None:
        t["namespaces"] = namespaces
    return t


def with_terms(name: str, labels: dict, node_name: str = "", affinity: list[dict] | None = None,
               anti: list[dict] | None = None) -> Pod:
    """upstream's createPodWithAffinityTerms."""
    spec: dict = {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": affinity or []},
                               "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": anti or []}}}
    return pod(name, None, None, labels=labels, node_name=node_name, spec={"containers": [], **spec})


SECURITYSCAN_IN = req("service", "In", ["securityscan", "value2"])
ANTIVIRUS_IN = req("service", "In", ["antivirusscan", "value2"])

SINGLE_NODE = [
    ("A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
     pod("p", None, None, spec={"containers": []}), [], None),
    ("satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that matches "
     "the existing pod", with_terms("p", POD_LABEL2, affinity=[term("region", SECURITYSCAN_IN)]),
     [with_terms("e", POD_LABEL, "machine1")], None),
    ("satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in operator in "
     "labelSelector that matches the existing pod",
     with_terms("p", POD_LABEL2, affinity=[term("region", req("service", "NotIn", ["securityscan3", "value3"]))]),
     [with_terms("e", POD_LABEL, "machine1")], None),
    ("satisfies the PodAffinity with different label Operators in multiple RequiredDuringSchedulingIgnoredDuring"
     "Execution ",
     with_terms("p", POD_LABEL2, affinity=[
         term("region", req("service", "Exists"), req("wrongkey", "DoesNotExist")),
         term("region", req("service", "In", ["securityscan"]), req("service", "NotIn", ["WrongValue"]))]),
     [with_terms("e", POD_LABEL, "machine1")], None),
    ("The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the node "
     "because one of the matchExpression item don't match.",
     with_terms("p", POD_LABEL2, affinity=[
         term("region", req("service", "Exists"), req("wrongkey", "DoesNotExist")),
         term("region", req("service", "In", ["securityscan2"]), req("service", "NotIn", ["WrongValue"]))]),
     [with_terms("e", POD_LABEL, "machine1")], ("UNSCHEDULABLE_AND_UNRESOLVABLE", AFF_RULES)),
    ("satisfies the PodAffinity and PodAntiAffinity with the existing pod",
     with_terms("p", POD_LABEL2, affinity=[term("region", SECURITYSCAN_IN)], anti=[term("node", ANTIVIRUS_IN)]),
     [with_terms("e", POD_LABEL, "machine1")], None),
    ("satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
     with_terms("p", POD_LABEL2, affinity=[term("region", SECURITYSCAN_IN)], anti=[term("node", ANTIVIRUS_IN)]),
     [with_terms("e", POD_LABEL, "machine1", anti=[term("node", ANTIVIRUS_IN)])], None),
    ("satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
     with_terms("p", POD_LABEL2, affinity=[term("region", SECURITYSCAN_IN)], anti=[term("zone", SECURITYSCAN_IN)]),
     [with_terms("e", POD_LABEL, "machine1")], ("UNSCHEDULABLE", ANTI_RULES)),
    ("satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the existing "
     "pod",
     with_terms("p", POD_LABEL, affinity=[term("region", SECURITYSCAN_IN)], anti=[term("node", ANTIVIRUS_IN)]),
     [with_terms("e", POD_LABEL, "machine1", anti=[term("zone", SECURITYSCAN_IN)])],
     ("UNSCHEDULABLE", EXISTING_ANTI)),
    ("verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. doesn't "
     "satisfy PodAntiAffinity symmetry with the existing pod",
     pod("p", None, None, labels=POD_LABEL, spec={"containers": []}),
     [with_terms("e", POD_LABEL, "machine1", anti=[term("zone", SECURITYSCAN_IN)])],
     ("UNSCHEDULABLE", EXISTING_ANTI)),
    ("verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. satisfy "
     "PodAntiAffinity symmetry with the existing pod",
     pod("p", None, None, labels=POD_LABEL, spec={"containers": []}),
     [with_terms("e", POD_LABEL, "machine1", anti=[term("zone", req("service", "NotIn", ["securityscan", "value2"]))])],
     None),
]


@pytest.mark.parametrize(("name", "p", "existing", "want"), SINGLE_NODE, ids=[c[0][:80] for c in SINGLE_NODE])
def test_required_affinity_single_node(name: str, p: Pod, existing: list[Pod], want: tuple[str, str] | None) -> None:
    node1 = MakeNode().Name("machine1").Label("region", "r1").Label("zone", "z11").Obj()
    (got,) = run_filter(IPA, p, [node1], existing)
    assert (None if got is None else (got.code.name, got.reasons[0])) == want, name


SECURITY_EXISTS, SERVICE_EXISTS = req("security", "Exists"), req("service", "Exists")

SINGLE_NODE_SYMMETRY = [
    ("satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with incoming pod",
     with_terms("p", POD_LABEL, anti=[term("region", SERVICE_EXISTS), term("region", SECURITY_EXISTS)]),
     [with_terms("e", POD_LABEL2, "machine1", anti=[term("zone", SECURITY_EXISTS)])], ("UNSCHEDULABLE", ANTI_RULES)),
    ("PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on AffinityTerms",
     with_terms("p", POD_LABEL, anti=[term("zone", SERVICE_EXISTS), term("zone", SECURITY_EXISTS)]),
     [with_terms("e", POD_LABEL2, "machine1", anti=[term("zone", SECURITY_EXISTS)])], ("UNSCHEDULABLE", ANTI_RULES)),
    ("PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on AffinityTerms",
     with_terms("p", POD_LABEL2, anti=[term("zone", SECURITY_EXISTS)]),
     [with_terms("e", POD_LABEL, "machine1", anti=[term("zone", SERVICE_EXISTS), term("zone", SECURITY_EXISTS)])],
     ("UNSCHEDULABLE", EXISTING_ANTI)),
    ("PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on AffinityTerms",
     with_terms("p", {"abc": "", "xyz": ""}, anti=[term("zone", req("abc", "Exists")), term("zone", req("def", "Exists"))]),
     [with_terms("e", {"def": "", "xyz": ""}, "machine1",
                 anti=[term("zone", req("abc", "Exists")), term("zone", req("def", "Exists"))])],
     ("UNSCHEDULABLE", ANTI_RULES)),
    ("PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on AffinityTerms",
     with_terms("p", {"def": "", "xyz": ""}, anti=[term("zone", req("abc", "Exists")), term("zone", req("def", "Exists"))]),
     [with_terms("e", {"abc": "", "xyz": ""}, "machine1",
                 anti=[term("zone", req("abc", "Exists")), term("zone", req("def", "Exists"))])],
     ("UNSCHEDULABLE", ANTI_RULES)),
]


@pytest.mark.parametrize(("name", "p", "existing", "want"), SINGLE_NODE_SYMMETRY,
                         ids=[c[0][:80] for c in SINGLE_NODE_SYMMETRY])
def test_required_affinity_single_node_symmetry(name: str, p: Pod, existing: list[Pod],
                                                want: tuple[str, str] | None) -> None:
    """filtering_test.go TestRequiredAffinitySingleNode, the anti-affinity symmetry cases. In b1 and b2
    both the incoming pod's and the existing pod's anti-affinity are violated; the table these cases
    come from (2020) expected the existing pods' reason, from when Filter checked those first. Current
    upstream's Filter (filtering.go) checks affinity, then the pod's anti-affinity, then the existing
    pods' anti-affinity, so the pod's own reason is reported: we follow current upstream."""
    test_required_affinity_single_node(name, p, existing, want)


# --- filtering_test.go TestRequiredAffinityMultipleNodes ---------------------------------------------

CHINA, CHINA_AZ1, INDIA = {"region": "China"}, {"region": "China", "az": "az1"}, {"region": "India"}


def nodes_labelled(*spec: tuple[str, dict]) -> list:
    out = []
    for name, labels in spec:
        b = MakeNode().Name(name)
        for k, v in labels.items():
            b = b.Label(k, v)
        out.append(b.Obj())
    return out


MULTIPLE_NODES = [
    ("A pod can be scheduled onto all the nodes that have the same topology key & label value with one of them has "
     "an existing pod that matches the affinity rules",
     with_terms("p", {}, affinity=[term("region", req("foo", "In", ["bar"]))]),
     [pod("p1", None, None, labels={"foo": "bar"}, node_name="machine1", spec={"containers": []})],
     nodes_labelled(("machine1", CHINA), ("machine2", CHINA_AZ1), ("machine3", INDIA)),
     [None, None, ("UNSCHEDULABLE_AND_UNRESOLVABLE", AFF_RULES)]),
    ("The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod of the "
     "collection should not be blocked from being scheduled onto any node, even there's no existing pod that matches "
     "the rule anywhere.",
     with_terms("p", {"foo": "bar", "service": "securityscan"},
                affinity=[term("zone", req("foo", "In", ["bar"])), term("zone", req("service", "In", ["securityscan"]))]),
     [pod("p1", None, None, labels={"foo": "bar"}, node_name="nodeA", spec={"containers": []})],
     nodes_labelled(("nodeA", {"zone": "az1", "hostname": "h1"}), ("nodeB", {"zone": "az2", "hostname": "h2"})),
     [None, None]),
    ("NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod "
     "affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
     with_terms("p", {}, anti=[term("region", req("foo", "In", ["abc"]))]),
     [pod("e", None, None, labels={"foo": "abc"}, node_name="nodeA", spec={"containers": []})],
     nodes_labelled(("nodeA", {"region": "r1", "hostname": "nodeA"}), ("nodeB", {"region": "r1", "hostname": "nodeB"})),
     [("UNSCHEDULABLE", ANTI_RULES)] * 2),
    ("This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a pod.",
     with_terms("p", {}, anti=[term("region", req("foo", "In", ["abc"])),
                              term("zone", req("service", "In", ["securityscan"]))]),
     [pod("e", None, None, labels={"foo": "abc", "service": "securityscan"}, node_name="nodeA",
          spec={"containers": []})],
     nodes_labelled(("nodeA", {"region": "r1", "zone": "z1", "hostname": "nodeA"}),
                    ("nodeB", {"region": "r1", "zone": "z2", "hostname": "nodeB"})),
     [("UNSCHEDULABLE", ANTI_RULES)] * 2),
    ("NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod "
     "affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC",
     with_terms("p", {}, anti=[term("region", req("foo", "In", ["abc"]))]),
     [pod("e", None, None, labels={"foo": "abc"}, node_name="nodeA", spec={"containers": []})],
     nodes_labelled(("nodeA", CHINA), ("nodeB", CHINA_AZ1), ("nodeC", INDIA)),
     [("UNSCHEDULABLE", ANTI_RULES), ("UNSCHEDULABLE", ANTI_RULES), None]),
]


@pytest.mark.parametrize(("name", "p", "existing", "nodes", "want"), MULTIPLE_NODES,
                         ids=[c[0][:80] for c in MULTIPLE_NODES])
def test_required_affinity_multiple_nodes(name: str, p: Pod, existing: list[Pod], nodes: list,
                                          want: list[tuple[str, str] | None]) -> None:
    got = run_filter(IPA, p, nodes, existing)
    assert [None if g is None else (g.code.name, g.reasons[0]) for g in got] == want, name


# --- scoring_test.go TestPreferredAffinity -----------------------------------------------------------
# Left out: the NamespaceSelector cases (they need namespace objects in the snapshot; covered by the
# operator tests) and the "{{.bad-value.}}" cases (our parser refuses such a pod before any cycle).

S1, S2 = {"security": "S1"}, {"security": "S2"}
RG_CHINA, RG_INDIA, AZ1, AZ2 = {"region": "China"}, {"region": "India"}, {"az": "az1"}, {"az": "az2"}
RG_CHINA_AZ1 = {"region": "China", "az": "az1"}


def weighted(weight: int, topology: str, *requirements: dict) -> dict:
    return {"weight": weight, "podAffinityTerm": term(topology, *requirements)}


STAY_WITH_S1_IN_REGION = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    weighted(5, "region", req("security", "In", ["S1"]))]}}
STAY_WITH_S2_IN_REGION = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    weighted(6, "region", req("security", "In", ["S2"]))]}}
AFFINITY3 = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    weighted(8, "region", req("security", "NotIn", ["S1"]), req("security", "In", ["S2"])),
    weighted(2, "region", req("security", "Exists"), req("wrongkey", "DoesNotExist"))]}}
HARD_AFFINITY = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    term("region", req("security", "In", ["S1", "value2"])),
    term("region", req("security", "Exists"), req("wrongkey", "DoesNotExist"))]}}
AWAY_FROM_S1_IN_AZ = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    weighted(5, "az", req("security", "In", ["S1"]))]}}
AWAY_FROM_S2_IN_AZ = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    weighted(5, "az", req("security", "In", ["S2"]))]}}
STAY_WITH_S1_AWAY_FROM_S2 = {
    "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [weighted(8, "region", req("security", "In", ["S1"]))]},
    "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        weighted(5, "az", req("security", "In", ["S2"]))]}}

_n = iter(range(10**6))


def apod(labels: dict | None = None, node: str = "", affinity: dict | None = None) -> Pod:
    spec: dict = {"containers": []}
    if affinity is not None:
        spec["affinity"] = affinity
    return pod(f"x{next(_n)}", None, None, labels=labels or {}, node_name=node, spec=spec)


PREFERRED = [
    ("Affinity: pod that matches topology key & pods in nodes will get high score comparing to otherswhich doesn't "
     "match either pods in nodes or in topology key", apod(S1, affinity=STAY_WITH_S1_IN_REGION),
     [apod(S1, "node1"), apod(S2, "node2"), apod(S1, "node3")],
     [("node1", RG_CHINA), ("node2", RG_INDIA), ("node3", AZ1)], [100, 0, 0]),
    ("All the nodes that have the same topology key & label value with one of them has an existing pod that match "
     "the affinity rules, have the same score", apod(affinity=STAY_WITH_S1_IN_REGION), [apod(S1, "node1")],
     [("node1", RG_CHINA), ("node2", RG_CHINA_AZ1), ("node3", RG_INDIA)], [100, 100, 0]),
    ("Affinity: nodes in one region has more matching pods comparing to other region, so the region which has more "
     "matches will get high score", apod(S1, affinity=STAY_WITH_S2_IN_REGION),
     [apod(S2, "node1"), apod(S2, "node1"), apod(S2, "node2"), apod(S2, "node3"), apod(S2, "node4"), apod(S2, "node5")],
     [("node1", RG_CHINA), ("node2", RG_INDIA), ("node3", RG_CHINA), ("node4", RG_CHINA), ("node5", RG_INDIA)],
     [100, 0, 100, 100, 0]),
    ("Affinity: different Label operators and values for pod affinity scheduling preference, including some match "
     "failures ", apod(S1, affinity=AFFINITY3), [apod(S1, "node1"), apod(S2, "node2"), apod(S1, "node3")],
     [("node1", RG_CHINA), ("node2", RG_INDIA), ("node3", AZ1)], [20, 100, 0]),
    ("Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
     apod(S2), [apod(S1, "node1", STAY_WITH_S1_IN_REGION), apod(S2, "node2", STAY_WITH_S2_IN_REGION)],
     [("node1", RG_CHINA), ("node2", RG_INDIA), ("node3", AZ1)], [0, 100, 0]),
    ("Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
     apod(S1), [apod(S1, "node1", HARD_AFFINITY), apod(S2, "node2", HARD_AFFINITY)],
     [("node1", RG_CHINA), ("node2", RG_INDIA), ("node3", AZ1)], [100, 100, 0]),
    ("Anti Affinity: pod that does not match existing pods in node will get high score ",
     apod(S1, affinity=AWAY_FROM_S1_IN_AZ), [apod(S1, "node1"), apod(S2, "node2")],
     [("node1", AZ1), ("node2", RG_CHINA)], [0, 100]),
    ("Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score comparing "
     "to others ", apod(S1, affinity=AWAY_FROM_S1_IN_AZ), [apod(S1, "node1"), apod(S1, "node2")],
     [("node1", AZ1), ("node2", RG_CHINA)], [0, 100]),
    ("Anti Affinity: one node has more matching pods comparing to other node, so the node which has more unmatches "
     "will get high score", apod(S1, affinity=AWAY_FROM_S1_IN_AZ),
     [apod(S1, "node1"), apod(S1, "node1"), apod(S2, "node2")], [("node1", AZ1), ("node2", RG_INDIA)], [0, 100]),
    ("Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score",
     apod(S2), [apod(S1, "node1", AWAY_FROM_S2_IN_AZ), apod(S2, "node2", AWAY_FROM_S1_IN_AZ)],
     [("node1", AZ1), ("node2", AZ2)], [0, 100]),
    ("Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod "
     "affinity & anti affinity", apod(S1, affinity=STAY_WITH_S1_AWAY_FROM_S2), [apod(S1, "node1"), apod(S1, "node2")],
     [("node1", RG_CHINA), ("node2", AZ1)], [100, 0]),
    ("Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and existing pods "
     "have the same labels", apod(S1, affinity=STAY_WITH_S1_AWAY_FROM_S2),
     [apod(S1, "node1"), apod(S1, "node1"), apod(S1, "node2"), apod(S1, "node3"), apod(S1, "node3"), apod(S1, "node4"),
      apod(S1, "node5")],
     [("node1", RG_CHINA_AZ1), ("node2", RG_INDIA), ("node3", RG_CHINA), ("node4", RG_CHINA), ("node5", RG_INDIA)],
     [100, 0, 100, 100, 0]),
    ("Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnoredDuringExecution in "
     "both pod affinity & anti affinity & symmetry", apod(S1, affinity=STAY_WITH_S1_AWAY_FROM_S2),
     [apod(S1, "node1"), apod(S2, "node2"), apod(None, "node3", STAY_WITH_S1_AWAY_FROM_S2),
      apod(None, "node4", AWAY_FROM_S1_IN_AZ)],
     [("node1", RG_CHINA), ("node2", AZ1), ("node3", RG_INDIA), ("node4", AZ2)], [100, 0, 100, 0]),
    ("Avoid panic when partial nodes in a topology don't have pods with affinity", apod(S1),
     [apod(S1, "node1"), apod(None, "node2", STAY_WITH_S1_AWAY_FROM_S2)],
     [("node1", RG_CHINA), ("node2", RG_CHINA)], [0, 0]),
]


@pytest.mark.parametrize(("name", "p", "existing", "nodes", "want"), PREFERRED, ids=[c[0][:80] for c in PREFERRED])
def test_preferred_affinity(name: str, p: Pod, existing: list[Pod], nodes: list[tuple[str, dict]],
                            want: list[int]) -> None:
    assert run_score(IPA, p, nodes_labelled(*nodes), existing) == want, name


def test_preferred_affinity_skips_without_any_affinity() -> None:
    """TestPreferredAffinity, "all nodes are same priority as Affinity is nil": PreScore Skips."""
    from tests.builders import setup
    snap, state, rows = setup(nodes_labelled(("node1", RG_CHINA), ("node2", RG_INDIA), ("node3", AZ1)), [])
    assert IPA.pre_score(state, apod(S1), snap, rows).is_skip()
