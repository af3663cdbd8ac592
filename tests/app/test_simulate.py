"""``kopf-scheduler simulate``: the real operator on the embedded cluster, and its exact JSON report
(the replayed dump, the demo cluster, ``--explain``); its input and report (issue #17): ``-f -`` and
directories, ``--nodes 0``, the exit code on refused objects, terminal pods kept terminal and
counted nowhere, the unbound pods grouped by reason, and the progress line (``bound N/M``) that log
lines never run into."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import re
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from scheduler.app.cli import main
from scheduler.app.cli_simulate import EXIT_REJECTED
from scheduler.app.simulate import Progress, format_table, group_unbound, load_objects, reason_of, run_simulation
from scheduler.simulator.cluster import LoadError

Obj = dict[str, Any]


def node(name: str, cpu: str = "2", **labels: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
        "kubernetes.io/hostname": name, **labels}}, "status": {"capacity": {"cpu": cpu, "memory": "4Gi", "pods": "110"}}}


def pod(name: str, cpu: str = "500m", ns: str = "shop", phase: str | None = None, **spec: Any) -> Obj:
    out: Obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
                "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": cpu}}}],
                         **spec}}
    if phase:
        out["status"] = {"phase": phase}
    return out


def as_list(items: list[Obj]) -> str:
    return yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items})


# ---- input ------------------------------------------------------------------------------------------

def test_load_objects_reads_stdin_and_directories_sorted(tmp_path: Path) -> None:
    d = tmp_path / "in"
    d.mkdir()
    (d / "b.yaml").write_text(yaml.safe_dump(node("from-b")))
    (d / "a.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [node("from-a")]}))
    (d / "c.yml").write_text(yaml.safe_dump_all([node("from-c1"), node("from-c2")]))
    (d / "notes.txt").write_text("not an object")
    (d / "sub").mkdir()
    (d / "sub" / "x.yaml").write_text(yaml.safe_dump(node("nested")))
    stdin = io.StringIO(as_list([node("from-stdin")]))
    got = [o["metadata"]["name"] for o in load_objects([str(d), "-"], stdin=stdin)]
    assert got == ["from-a", "from-b", "from-c1", "from-c2", "from-stdin"]
    (tmp_path / "empty").mkdir()
    with pytest.raises(LoadError, match=r"no \.yaml"):
        load_objects([str(tmp_path / "empty")])
    with pytest.raises(LoadError, match="<stdin>: not YAML"):
        load_objects(["-"], stdin=io.StringIO("{not json"))


def run_cli(args: list[str], stdin: str | None = None) -> Any:
    return CliRunner().invoke(main, ["simulate", "--timeout", "60", *args], input=stdin)


INPUT = [
    node("n1"),
    # terminal pods: hold no capacity (done-big would fill n1), replayed with their phase
    pod("done-big", cpu="2", phase="Succeeded", nodeName="n1"),
    pod("failed", cpu="2", phase="Failed", nodeName="n1"),
    pod("never-ran", phase="Failed"),
    *[pod(f"web-{i}") for i in range(3)],
    *[pod(f"huge-{i}", cpu="8") for i in range(4)],
    *[pod(f"picky-{i}", nodeSelector={"disk": "ssd"}) for i in range(2)],
    pod("broken", cpu="two"),
]


def test_stdin_terminal_pods_grouped_reasons_and_exit_codes() -> None:
    text = as_list(INPUT)
    refused = run_cli(["-f", "-", "--output", "json"], stdin=text)
    assert refused.exit_code == EXIT_REJECTED, refused.output
    assert "refused by the API" in refused.stderr
    result = run_cli(["-f", "-", "--output", "json", "--allow-rejected"], stdin=text)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert {"pods", "nodes", "profiles", "rejected", "summary"} <= set(report)
    # terminal pods keep their phase, are not pods to schedule, and use no resources
    assert report["terminal"] == [
        {"namespace": "shop", "name": "done-big", "phase": "Succeeded", "node": "n1"},
        {"namespace": "shop", "name": "failed", "phase": "Failed", "node": "n1"},
        {"namespace": "shop", "name": "never-ran", "phase": "Failed", "node": None}]
    names = {p["name"] for p in report["pods"]}
    assert not names & {"done-big", "failed", "never-ran"}
    (n1,) = report["nodes"]
    assert (n1["pods"], n1["requested"]["cpu"]) == (3, "1500m")
    pods = {p["name"]: p for p in report["pods"]}
    assert [pods[f"web-{i}"]["node"] for i in range(3)] == ["n1"] * 3
    s = report["summary"]
    assert (s["pods"], s["scheduled"], s["unschedulable"], s["terminal"], s["rejected"]) == (9, 3, 6, 3, 1)
    # the unbound pods, one entry per reason, most first
    groups = [(g["reason"], g["count"], g["pods"]) for g in report["unschedulable"]]
    assert groups == [("Insufficient cpu", 4, [f"shop/huge-{i}" for i in range(4)]),
                      ("node(s) didn't match Pod's node affinity/selector", 2, ["shop/picky-0", "shop/picky-1"])]
    assert report["unschedulable"][0]["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert [(r["kind"], r["name"], r["code"]) for r in report["rejected"]] == [("Pod", "broken", 400)]


def test_table_groups_by_reason_and_lists_pods_only_with_show_pods(tmp_path: Path) -> None:
    f = tmp_path / "in.yaml"
    f.write_text(as_list([node("n1"), *[pod(f"huge-{i}", cpu="8") for i in range(5)], pod("web-0")]))
    table = run_cli(["-f", str(f)])
    assert table.exit_code == 0, table.output
    out = table.stdout
    assert re.search(r"^UNBOUND PODS BY REASON \(5\)$", out, re.M)
    assert re.search(r"^ +5  Insufficient cpu$", out, re.M)
    assert out.count("0/1 nodes are available: 1 Insufficient cpu") == 1      # one example, not one per pod
    assert "shop/huge-3" not in out and "PODS\n" not in out
    assert "1/6 pods scheduled, 5 unschedulable" in out
    shown = run_cli(["-f", str(f), "--show-pods"])
    assert shown.exit_code == 0, shown.output
    assert all(f"shop/huge-{i}" in shown.stdout for i in range(5)) and "shop/web-0" in shown.stdout


def test_nodes_zero_settles_at_once() -> None:
    t0 = time.monotonic()
    result = run_cli(["--nodes", "0", "--pods", "4", "--output", "json", "--timeout", "60"])
    assert result.exit_code == 0, result.output
    assert time.monotonic() - t0 < 20                         # not the 60 s timeout
    report = json.loads(result.stdout)
    assert report["summary"]["pods"] == 4 and report["nodes"] == []
    assert [(g["reason"], g["count"]) for g in report["unschedulable"]] == [("no nodes available to schedule pods", 4)]


@pytest.mark.parametrize(("message", "reason"), [
    ("0/5 nodes are available: 2 Insufficient cpu, 3 node(s) had untolerated taint {node.kubernetes.io/unreachable: }."
     " preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling.",
     "Insufficient cpu, node(s) had untolerated taint {node.kubernetes.io/unreachable: }"),
    ("0/3 nodes are available: 3 Insufficient memory.", "Insufficient memory"),
    ("0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims.",
     "pod has unbound immediate PersistentVolumeClaims"),
    ("no nodes available to schedule pods", "no nodes available to schedule pods"),
    (None, "not attempted yet"),
])
def test_reason_of(message: str | None, reason: str) -> None:
    assert reason_of(message) == reason


def test_pending_pods_are_grouped_by_reason_per_profile(tmp_path: Path) -> None:
    """As found: with MostAllocated, 2 ``api`` pods with required hostname anti-affinity stayed pending
    and the report did not say why. Now the table and ``pendingByProfile`` group them per profile,
    apart from another profile's pods pending for another reason."""
    def profile(name: str, strategy: str) -> Obj:
        return {"apiVersion": "scheduling.kopf-scheduler.io/v1alpha1", "kind": "SchedulingProfile",
                "metadata": {"name": name}, "spec": {"schedulerName": name, "pluginConfig": [
                    {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": strategy}}}]}}
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "api"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    api = [{**pod(f"api-{i}", cpu="100m", affinity=anti), "metadata": {"name": f"api-{i}", "namespace": "shop",
                                                                         "labels": {"app": "api"}}} for i in range(4)]
    f = tmp_path / "in.yaml"
    f.write_text(as_list([profile("default-scheduler", "MostAllocated"), profile("batch", "LeastAllocated"),
                          node("n1"), node("n2"), *api, *[pod(f"big-{i}", cpu="8", schedulerName="batch")
                                                          for i in range(3)]]))
    why = "node(s) didn't match pod anti-affinity rules"
    out = run_cli(["-f", str(f), "--output", "json"])
    assert out.exit_code == 0, out.output
    by_profile = json.loads(out.stdout)["pendingByProfile"]
    assert {name: [(g["reason"], g["count"]) for g in groups] for name, groups in by_profile.items()} == {
        "batch": [("Insufficient cpu", 3)], "default-scheduler": [(why, 2)]}
    assert sorted(by_profile["default-scheduler"][0]["pods"]) != [] and all(
        p.startswith("shop/api-") for p in by_profile["default-scheduler"][0]["pods"])
    table = run_cli(["-f", str(f)])
    assert table.exit_code == 0, table.output
    assert re.search(r"^UNBOUND PODS BY REASON \(5\)\n  batch \(3\)\n +PODS  REASON\n +3  Insufficient cpu\n",
                     table.stdout, re.M)
    assert re.search(r"^  default-scheduler \(2\)\n +PODS  REASON\n +2  " + re.escape(why) + "$", table.stdout, re.M)


def test_group_unbound_merges_node_counts_and_skips_bound_and_deleted() -> None:
    pods = [{"namespace": "a", "name": f"p{i}", "node": None, "deleted": False,
             "message": f"0/{i + 3} nodes are available: {i + 3} Insufficient cpu."} for i in range(3)]
    pods += [{"namespace": "a", "name": "bound", "node": "n", "deleted": False, "message": None},
             {"namespace": "a", "name": "gone", "node": None, "deleted": True, "message": "deleted during the run"}]
    (g,) = group_unbound(pods)
    assert (g["reason"], g["count"], g["pods"]) == ("Insufficient cpu", 3, ["a/p0", "a/p1", "a/p2"])


def test_format_table_marks_terminal_pods() -> None:
    from scheduler.app.simulate import SimulationReport
    r = SimulationReport(summary={"pods": 0, "scheduled": 0, "unschedulable": 0, "seconds": 0.1, "podsPerSecond": 0},
                         terminal=[{"namespace": "a", "name": "job-1", "phase": "Succeeded", "node": "n1"}])
    assert "1 terminal (not counted)" in format_table(r)
    assert re.search(r"a/job-1 +n1 +\(Succeeded\)", format_table(r, show_pods=True))


# ---- the progress line ------------------------------------------------------------------------------

PROGRESS = re.compile(r"^bound (\d+)/(\d+)  active \d+  backoff \d+  unschedulable \d+  cycles \d+  \d+\.\d+s$")


def test_progress_line_shows_bound_of_total() -> None:
    lines: list[str] = []
    objects = [node("n1", cpu="4"), *[pod(f"p{i}") for i in range(6)], pod("huge", cpu="8")]
    report = asyncio.run(run_simulation(objects, timeout=60, progress=lines.append))
    assert report.settled and report.summary["scheduled"] == 6
    assert lines[-1] == ""                                    # the line is cleared at the end
    shown = [PROGRESS.match(x) for x in lines[:-1]]
    assert shown and all(shown), lines
    totals = {int(m.group(2)) for m in shown if m}
    assert totals <= {0, 7} and 7 in totals, lines           # M: every pod to schedule, once known
    assert all(int(m.group(1)) <= 6 for m in shown if m)


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_log_records_erase_the_progress_line_first() -> None:
    stream = Tty()
    logger = logging.getLogger("test-progress")
    logger.propagate = False
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    logger.handlers[:] = [handler]
    progress = Progress(stream)
    detach = progress.attach(logger)
    try:
        progress("bound 1/4  active 0")
        logger.warning("something happened")
        progress("bound 2/4  active 0")
    finally:
        detach()
    assert logger.handlers == [handler]
    erase = "\r\033[K"
    assert stream.getvalue() == (f"{erase}bound 1/4  active 0"          # the line
                                 f"{erase}WARNING something happened\n"  # erased, then the record
                                 "bound 1/4  active 0"                   # drawn again below it
                                 f"{erase}bound 2/4  active 0")


def test_progress_off_a_terminal_writes_whole_lines() -> None:
    stream = io.StringIO()
    progress = Progress(stream, every=0)
    progress("bound 1/2")
    progress("bound 2/2")
    progress("")
    assert stream.getvalue() == "bound 1/2\nbound 2/2\n"


# ---- workloads (the simulated controller manager) ---------------------------------------------------

def workload(kind: str, name: str, **spec: Any) -> Obj:
    group = "batch/v1" if kind == "Job" else "apps/v1"
    tmpl: Obj = {"metadata": {"labels": {"app": name}}, "spec": {"containers": [
        {"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}]}}
    if kind == "Job":
        tmpl["spec"]["restartPolicy"] = "Never"
    else:
        spec["selector"] = {"matchLabels": {"app": name}}
    return {"apiVersion": group, "kind": kind, "metadata": {"name": name, "namespace": "shop"},
            "spec": {**spec, "template": tmpl}}


def test_workloads_are_expanded_by_their_controllers_and_scheduled() -> None:
    objects = [node(f"n{i}", cpu="8") for i in range(3)] + [
        workload("Deployment", "web", replicas=30), workload("StatefulSet", "db", replicas=3, serviceName="db"),
        workload("DaemonSet", "agent")]
    result = run_cli(["-f", "-", "--output", "json"], stdin=as_list(objects))
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    by_app: dict[str, list[Obj]] = {}
    for p in report["pods"]:
        by_app.setdefault(p["name"].rsplit("-", 2 if p["name"].startswith("web-") else 1)[0], []).append(p)
    assert len(by_app["web"]) == 30 and all(p["node"] for p in by_app["web"])
    assert sorted(p["name"] for p in by_app["db"]) == ["db-0", "db-1", "db-2"] and all(p["node"] for p in by_app["db"])
    # one daemon pod per node, each on the node its matchFields affinity names
    assert sorted(p["node"] for p in by_app["agent"]) == ["n0", "n1", "n2"]
    assert report["summary"]["scheduled"] == 36


def test_storage_kinds_load_before_claims_and_the_report_gives_each_pods_volumes() -> None:
    """Storage objects load after namespaces and before the claims and pods that use them, whatever the
    input order (a claim before its namespace in the input is no refusal); a dump's bound claim stays
    bound to its volume (the volume's claimRef follows the claim's new uid); each pod entry lists its
    claims and the volumes they are bound to, ``null`` while unbound."""
    sts = workload("StatefulSet", "web", replicas=1, serviceName="web")
    sts["spec"]["volumeClaimTemplates"] = [{"metadata": {"name": "data"}, "spec": {
        "accessModes": ["ReadWriteOnce"], "storageClassName": "static", "resources": {"requests": {"storage": "1Gi"}}}}]
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {
        "name": "old", "namespace": "shop", "uid": "11111111-aaaa-4bbb-8ccc-000000000001",
        "annotations": {"pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes"}},
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "static", "volumeName": "old-pv",
                 "resources": {"requests": {"storage": "1Gi"}}}, "status": {"phase": "Bound"}}
    unbound = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "later", "namespace": "shop"},
               "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "static",
                        "resources": {"requests": {"storage": "50Gi"}}}}

    def volume(name: str, size: str, ref: Obj | None = None) -> Obj:
        out: Obj = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
                    "spec": {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"],
                             "storageClassName": "static", "hostPath": {"path": f"/data/{name}"}}}
        if ref:
            out["spec"]["claimRef"] = ref
            out["status"] = {"phase": "Bound"}
        return out

    objects = [
        node("n1", cpu="8"),
        pod("solo", volumes=[{"name": "d", "persistentVolumeClaim": {"claimName": "old"}}]),
        pod("waits", volumes=[{"name": "d", "persistentVolumeClaim": {"claimName": "later"}}]),
        sts, claim, unbound,
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop", "labels": {"team": "a"}}},
        volume("pv-1", "1Gi"),
        volume("old-pv", "1Gi", {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": "shop",
                                 "name": "old", "uid": "11111111-aaaa-4bbb-8ccc-000000000001"}),
        {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "static"},
         "provisioner": "kubernetes.io/no-provisioner"},
    ]
    result = run_cli(["-f", "-", "--output", "json"], stdin=as_list(objects))
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["rejected"] == []
    volumes = {p["name"]: p["volumes"] for p in report["pods"]}
    assert volumes["web-0"] == [{"claim": "data-web-0", "volume": "pv-1"}]
    assert volumes["solo"] == [{"claim": "old", "volume": "old-pv"}]
    assert volumes["waits"] == [{"claim": "later", "volume": None}]


# ---- DRA (#19) ---------------------------------------------------------------------------------------

def claim_pod(name: str, ns: str = "ml", **claim: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns}, "spec": {
        "resourceClaims": [{"name": "gpu", **claim}],
        "containers": [{"name": "c", "image": "pause", "resources": {"claims": [{"name": "gpu"}]}}]}}


def test_dra_kinds_load_before_pods_and_the_report_gives_each_pods_devices() -> None:
    """Templates and claims come before the pods that use them, whatever the input order; the simulated
    driver (--gpus-per-node) publishes each node's GPUs; each pod entry lists the devices allocated to its
    claims, ``claim`` being the pod's name for the claim; a pod that gets none lists none."""
    objects = [
        node("n1", cpu="8"),
        claim_pod("first", resourceClaimTemplateName="one-gpu"),
        claim_pod("pair", resourceClaimName="two"),
        claim_pod("left-out", resourceClaimTemplateName="one-gpu"),
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
         "metadata": {"name": "one-gpu", "namespace": "ml"},
         "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "two", "namespace": "ml"},
         "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com",
                                                                       "count": 2}}]}}},
    ]
    result = run_cli(["-f", "-", "--output", "json", "--gpus-per-node", "3"], stdin=as_list(objects))
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["rejected"] == []
    wants = {"first": 1, "pair": 2, "left-out": 1}
    # 3 GPUs for 4 wanted: which pods get theirs depends on the order the scheduler takes them in
    bound = [p for p in report["pods"] if p["node"]]
    assert sum(wants[p["name"]] for p in bound) <= 3 and len(bound) >= 1
    for p in bound:
        assert [(d["claim"], d["driver"], d["pool"]) for d in p["devices"]] == [
            ("gpu", "gpu.example.com", "n1")] * wants[p["name"]]
        assert set(p["devices"][0]) == {"claim", "driver", "pool", "device"}
    devices = [d["device"] for p in bound for d in p["devices"]]
    assert len(set(devices)) == len(devices) and set(devices) <= {"gpu-0", "gpu-1", "gpu-2"}
    for p in report["pods"]:
        if not p["node"]:
            assert p["devices"] == [] and "cannot allocate all claims" in p["message"]


def test_a_dumps_allocated_claim_stays_with_its_bound_pod() -> None:
    """A claim allocated and reserved in the input keeps its reservation (``reservedFor`` follows the pod's
    new uid), so the resourceclaim controller does not deallocate it, and the report gives its device in
    exactly this shape."""
    uid = "22222222-aaaa-4bbb-8ccc-000000000001"
    bound = claim_pod("runs", resourceClaimName="held")
    bound["metadata"]["uid"] = uid
    bound["spec"]["nodeName"] = "n1"
    held = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": "held", "namespace": "ml", "finalizers": ["resource.kubernetes.io/delete-protection"]},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
            "status": {"allocation": {"devices": {"results": [
                {"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-1"}]}},
                "reservedFor": [{"resource": "pods", "name": "runs", "uid": uid}]}}
    result = run_cli(["-f", "-", "--output", "json"], stdin=as_list([node("n1"), bound, held]))
    assert result.exit_code == 0, result.output
    (p,) = json.loads(result.stdout)["pods"]
    assert p["node"] == "n1"
    assert p["devices"] == [{"claim": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-1"}]


def test_gpu_attributes_are_checked_up_front(tmp_path: Path) -> None:
    f = tmp_path / "gpus.yaml"
    f.write_text("memory: lots\n")
    result = run_cli(["--nodes", "1", "--pods", "1", "--gpus-per-node", "1", "--gpu-attributes", str(f)])
    assert result.exit_code == 2 and "memory: not a quantity" in result.output


DUMP = {"apiVersion": "v1", "kind": "List", "items": [
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "resourceVersion": "99", "uid": "x"},
     "status": {"capacity": {"cpu": "2", "memory": "4Gi", "pods": "110"}}},
    *[{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"web-{i}", "namespace": "shop"},
       "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "500m"}}}]}}
      for i in range(3)],
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "huge", "namespace": "shop"},
     "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "8"}}}]}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "broken", "namespace": "shop"},
     "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "two"}}}]}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "elsewhere", "namespace": "shop"},
     "spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": "nginx"}]}},
]}


def test_simulate_replays_a_dump_and_reports_exact_json(tmp_path: Path) -> None:
    f = tmp_path / "dump.yaml"
    f.write_text(yaml.safe_dump(DUMP))
    result = CliRunner().invoke(main, ["simulate", "-f", str(f), "--output", "json", "--timeout", "60",
                                       "--allow-rejected"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert set(report) == {"pods", "nodes", "profiles", "rejected", "summary", "unschedulable", "terminal",
                           "pendingByProfile"}
    assert {name: [(g["reason"], g["count"], g["pods"]) for g in groups]
            for name, groups in report["pendingByProfile"].items()} == {
        "default-scheduler": [("Insufficient cpu", 1, ["shop/huge"])],
        "nobody": [("no SchedulingProfile serves schedulerName 'nobody'", 1, ["shop/elsewhere"])]}
    pods = {p["name"]: p for p in report["pods"]}
    assert set(pods["web-0"]) == {"namespace", "name", "schedulerName", "node", "message", "deleted", "volumes",
                                  "devices"}
    assert pods["web-0"]["volumes"] == []          # no claims (#18: each claim and the PV it bound to)
    assert pods["web-0"]["devices"] == []          # no ResourceClaims (#19: each allocated device)
    assert [pods[f"web-{i}"]["node"] for i in range(3)] == ["n1"] * 3
    assert pods["huge"]["node"] is None and pods["huge"]["message"].startswith(
        "0/1 nodes are available: 1 Insufficient cpu.")
    assert pods["elsewhere"]["node"] is None and "nobody" in pods["elsewhere"]["message"]
    assert "broken" not in pods
    (rej,) = report["rejected"]
    assert (rej["kind"], rej["name"], rej["code"]) == ("Pod", "broken", 400)
    assert "spec.containers[0].resources.requests[cpu]" in rej["message"]
    (node,) = report["nodes"]
    assert set(node) == {"name", "pods", "allocatable", "requested"}
    assert (node["name"], node["pods"], node["requested"]["cpu"]) == ("n1", 3, "1500m")
    assert report["profiles"] == [{"name": "default-scheduler", "accepted": True, "message": None}]
    s = report["summary"]
    assert set(s) == {"pods", "scheduled", "unschedulable", "seconds", "podsPerSecond", "terminal", "rejected"}
    assert (s["pods"], s["scheduled"], s["unschedulable"], s["terminal"], s["rejected"]) == (5, 3, 1, 0, 1)
    assert [(g["reason"], g["count"]) for g in report["unschedulable"]] == [
        ("Insufficient cpu", 1), ("no SchedulingProfile serves schedulerName 'nobody'", 1)]


RESTART_ALL = {"name": "c", "image": "nginx", "restartPolicy": "Never", "resources": {"requests": {"cpu": "600m"}},
               "restartPolicyRules": [{"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}]}


def test_node_declared_features_end_to_end(tmp_path: Path) -> None:
    """NodeDeclaredFeatures through the real operator: a pod with a RestartAllContainers rule needs
    RestartAllContainersOnContainerExits, which only the small node declares; its twin no longer fits
    there and the big node does not declare it; a plain pod goes to the big node. (--feature-gates is
    passed through to the operator; both gates keep their defaults.)"""
    def ndf_node(name: str, cpu: str, features: list[str]) -> Obj:
        out = node(name, cpu)
        out["status"]["declaredFeatures"] = features
        return out
    items = [ndf_node("old", "8", []), ndf_node("new", "1", ["RestartAllContainersOnContainerExits"]),
             pod("needs", containers=[RESTART_ALL]), pod("needs-too", containers=[RESTART_ALL]),
             pod("plain", cpu="600m")]
    f = tmp_path / "in.yaml"
    f.write_text(as_list(items))
    result = run_cli(["-f", str(f), "--output", "json", "--feature-gates",
                      "NodeDeclaredFeatures=true,OpportunisticBatching=true"])
    assert result.exit_code == 0, result.output
    pods = {p["name"]: p for p in json.loads(result.stdout)["pods"]}
    placed = {n: pods[n]["node"] for n in ("needs", "needs-too", "plain")}
    assert sorted(str(v) for v in placed.values()) == ["None", "new", "old"], placed
    assert placed["plain"] == "old"
    stuck = "needs" if placed["needs"] is None else "needs-too"
    assert pods[stuck]["message"] == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match Pod's required features. "
        "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, "
        "1 Preemption is not helpful for scheduling.")


def test_pod_anti_affinity_match_label_keys_end_to_end(tmp_path: Path) -> None:
    """InterPodAffinity with matchLabelKeys, as a 1.37 cluster has it: kube-apiserver merges the new
    pod's ``version`` into its anti-affinity selector on create, so the v1 pod on n1 does not repel
    the v2 pod, which fits only there; its twin without matchLabelKeys is repelled and n2 is too
    small for it."""
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname",
         "matchLabelKeys": ["version"]}]}}
    plain = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}}

    def web(name: str, version: str, **spec: Any) -> Obj:
        out = pod(name, **spec)
        out["metadata"]["labels"] = {"app": "web", "version": version}
        return out
    items = [node("n1"), node("n2", cpu="100m"), web("v1", "v1", nodeName="n1"),
             web("v2", "v2", affinity=anti), web("v2-plain", "v2", affinity=plain)]
    f = tmp_path / "in.yaml"
    f.write_text(as_list(items))
    result = run_cli(["-f", str(f), "--output", "json"])
    assert result.exit_code == 0, result.output
    pods = {p["name"]: p for p in json.loads(result.stdout)["pods"]}
    assert pods["v2"]["node"] == "n1"
    assert pods["v2-plain"]["node"] is None
    assert pods["v2-plain"]["message"].startswith(
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match pod anti-affinity rules."), \
        pods["v2-plain"]["message"]


def test_simulate_demo_cluster_table(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["simulate", "--nodes", "3", "--pods", "12", "--seed", "2"])
    assert result.exit_code == 0, result.output
    assert "12/12 pods scheduled, 0 unschedulable" in result.stdout
    assert "default-scheduler: accepted" in result.stdout


def test_simulate_explain_adds_each_pods_decision(tmp_path: Path) -> None:
    """``--explain``: each pod's report gains ``"decision"``, the record ``/debug/decisions`` serves."""
    f = tmp_path / "dump.yaml"
    f.write_text(yaml.safe_dump(DUMP))
    result = CliRunner().invoke(main, ["simulate", "-f", str(f), "--output", "json", "--timeout", "60", "--explain",
                                       "--allow-rejected"])
    assert result.exit_code == 0, result.output
    pods = {p["name"]: p for p in json.loads(result.stdout)["pods"]}
    web = pods["web-0"]["decision"]
    assert list(web) == ["pod", "profile", "profileGeneration", "attempt", "time", "node", "evaluatedNodes",
                         "feasibleNodes", "filtered", "scores", "preemption"]
    assert (web["pod"], web["node"], web["profile"], web["evaluatedNodes"]) == ("shop/web-0", "n1", "default-scheduler", 1)
    huge = pods["huge"]["decision"]
    assert huge["node"] is None and huge["filtered"] == {"Insufficient cpu": 1} and huge["scores"] == []
    assert pods["elsewhere"]["decision"] is None           # no profile serves it: never attempted


def test_two_pods_share_a_partitioned_gpu_and_a_third_does_not_fit(tmp_path: Path) -> None:
    """Partitioned GPUs (DRAPartitionableDevices, on in 1.37): the simulated driver publishes its one
    GPU whole and as two halves consuming the GPU's memory counter. Three pods each claim half a
    GPU: two get the two halves, the third does not fit (the whole GPU is a device too, but its
    counters are taken), and its FitError says why."""
    f = tmp_path / "gpus.yaml"
    f.write_text("memory: 80Gi\npartitions: true\n")
    half = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "half-gpu", "namespace": "ml"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": "gpu.example.com",
                "selectors": [{"cel": {"expression": 'device.attributes["gpu.example.com"].partition == "half"'}}]}}]}}}}
    objects = [node("n1", cpu="8"), half,
               *[claim_pod(f"half-{i}", resourceClaimTemplateName="half-gpu") for i in range(3)]]
    result = run_cli(["-f", "-", "--output", "json", "--gpus-per-node", "1", "--gpu-attributes", str(f)],
                     stdin=as_list(objects))
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["rejected"] == []
    bound = sorted((p for p in report["pods"] if p["node"]), key=lambda p: p["devices"][0]["device"])
    assert [p["devices"] for p in bound] == [
        [{"claim": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0-half-0"}],
        [{"claim": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0-half-1"}]]
    (left,) = [p for p in report["pods"] if not p["node"]]
    assert left["devices"] == []
    assert left["message"] == "0/1 nodes are available: 1 cannot allocate all claims. preemption: 0/1 nodes are " \
                              "available: 1 Preemption is not helpful for scheduling."


def test_pods_share_a_device_while_its_capacity_lasts() -> None:
    """Consumable capacity (DRAConsumableCapacity, on in 1.37): a device with allowMultipleAllocations and
    10 units of bandwidth, claims asking for 4 each: two pods share it (each allocation with its own
    shareID and consumedCapacity), the third does not fit."""
    nic = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "n1-nic"},
           "spec": {"driver": "nic.example.com", "nodeName": "n1", "pool": {"name": "n1", "resourceSliceCount": 1},
                    "devices": [{"name": "nic-0", "allowMultipleAllocations": True,
                                 "capacity": {"bandwidth": {"value": "10"}}}]}}
    cls = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "nic.example.com"},
           "spec": {"selectors": [{"cel": {"expression": 'device.driver == "nic.example.com"'}}]}}
    share = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
             "metadata": {"name": "share", "namespace": "ml"},
             "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                 "deviceClassName": "nic.example.com", "capacity": {"requests": {"bandwidth": "4"}}}}]}}}}
    objects = [node("n1", cpu="8"), nic, cls, share,
               *[claim_pod(f"share-{i}", resourceClaimTemplateName="share") for i in range(3)]]
    result = run_cli(["-f", "-", "--output", "json"], stdin=as_list(objects))
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["rejected"] == []
    bound = [p for p in report["pods"] if p["node"]]
    assert [p["devices"] for p in bound] == [
        [{"claim": "gpu", "driver": "nic.example.com", "pool": "n1", "device": "nic-0"}]] * 2
    (left,) = [p for p in report["pods"] if not p["node"]]
    assert left["message"] == "0/1 nodes are available: 1 cannot allocate all claims. preemption: 0/1 nodes are " \
                              "available: 1 Preemption is not helpful for scheduling."


def test_an_admin_access_claim_takes_a_device_in_use() -> None:
    """adminAccess (DRAAdminAccess, GA): in a namespace labelled for it, a claim with adminAccess gets the
    one GPU another pod holds (and does not hold it: a second admin pod gets it too), while a plain
    claim for it does not fit."""
    admin_ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {
        "name": "ops", "labels": {"resource.kubernetes.io/admin-access": "true"}}}
    one = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
           "metadata": {"name": "one-gpu", "namespace": "ml"},
           "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}}
    admin = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
             "metadata": {"name": "watch-gpu", "namespace": "ops"},
             "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                 "deviceClassName": "gpu.example.com", "adminAccess": True}}]}}}}
    objects = [node("n1", cpu="8"), admin_ns, one, admin,
               *[claim_pod(name, resourceClaimTemplateName="one-gpu") for name in ("holder", "second")],
               *[claim_pod(f"watch-{i}", ns="ops", resourceClaimTemplateName="watch-gpu") for i in range(2)]]
    result = run_cli(["-f", "-", "--output", "json", "--gpus-per-node", "1"], stdin=as_list(objects))
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["rejected"] == []
    pods = {p["name"]: p for p in report["pods"]}
    # which of the two plain pods gets the GPU depends on the order they are taken in
    (plain,) = [n for n in ("holder", "second") if pods[n]["node"]]
    assert {n for n, p in pods.items() if p["node"]} == {"watch-0", "watch-1", plain}
    (other,) = {"holder", "second"} - {plain}
    assert "cannot allocate all claims" in pods[other]["message"]
    for name in ("watch-0", "watch-1"):
        assert pods[name]["devices"] == [{"claim": "gpu", "driver": "gpu.example.com", "pool": "n1",
                                          "device": "gpu-0"}]


def test_pod_level_resources_decide_the_fit_and_the_fit_error() -> None:
    """PodLevelResources (beta, on in 1.37) through ``simulate``: a pod's spec.resources requests
    replace its containers' sum for cpu and memory. On a 2-cpu node, a pod of 100m containers asking
    3 cpus at pod level does not fit (the FitError says so), and one asking 1500m at pod level fits
    and is what the node counts."""
    big = pod("pod-level-big", cpu="100m", resources={"requests": {"cpu": "3"}})
    fits = pod("pod-level-fits", cpu="100m", resources={"requests": {"cpu": "1500m"}})
    result = run_cli(["-f", "-", "--output", "json"], stdin=as_list([node("n1"), big, fits]))
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    pods = {p["name"]: p for p in report["pods"]}
    assert pods["pod-level-fits"]["node"] == "n1" and pods["pod-level-big"]["node"] is None
    (n1,) = report["nodes"]
    assert n1["requested"]["cpu"] == "1500m"
    (group,) = report["unschedulable"]
    assert group["reason"] == "Insufficient cpu" and group["pods"] == ["shop/pod-level-big"]
    assert group["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")


# ---- DRA device taints (#35) ---------------------------------------------------------------------

ECC_RULE = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": "n1-ecc-errors"},
            "spec": {"deviceSelector": {"driver": "gpu.example.com", "pool": "n1"},
                     "taint": {"key": "example.com/ecc", "value": "uncorrectable", "effect": "NoSchedule"}}}


def gpu_template(name: str, *tolerations: Obj) -> Obj:
    exactly: Obj = {"deviceClassName": "gpu.example.com"}
    if tolerations:
        exactly["tolerations"] = list(tolerations)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": name,
            "namespace": "ml"}, "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}}


def test_a_tainted_gpu_is_used_only_by_a_pod_that_tolerates_it() -> None:
    """A DeviceTaintRule taints n1's GPU (NoSchedule): the pod whose claim does not tolerate it stays
    Pending with upstream's FitError text; the one whose claim tolerates it gets the GPU."""
    objects = [node("n1", cpu="8"), ECC_RULE, gpu_template("plain"),
               gpu_template("tolerant", {"key": "example.com/ecc", "operator": "Exists", "effect": "NoSchedule"}),
               claim_pod("plain", resourceClaimTemplateName="plain"),
               claim_pod("tolerant", resourceClaimTemplateName="tolerant")]
    result = run_cli(["-f", "-", "--output", "json", "--gpus-per-node", "1"], stdin=as_list(objects))
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["rejected"] == []
    pods = {p["name"]: p for p in report["pods"]}
    assert pods["tolerant"]["node"] == "n1"
    assert [(d["driver"], d["pool"], d["device"]) for d in pods["tolerant"]["devices"]] == [
        ("gpu.example.com", "n1", "gpu-0")]
    assert pods["plain"]["node"] is None and pods["plain"]["devices"] == []
    assert pods["plain"]["message"].startswith("0/1 nodes are available: 1 cannot allocate all claims."), pods


def test_a_device_taint_rule_moves_the_pod_to_an_untainted_gpu() -> None:
    """Two nodes of one GPU each, n1's tainted by the rule: the pod goes to n2, whatever the seed."""
    for seed in ("1", "2", "3"):
        objects = [node("n1", cpu="8"), node("n2", cpu="8"), ECC_RULE, gpu_template("plain"),
                   claim_pod("plain", resourceClaimTemplateName="plain")]
        result = run_cli(["-f", "-", "--output", "json", "--gpus-per-node", "1", "--seed", seed],
                         stdin=as_list(objects))
        assert result.exit_code == 0, result.output
        (p,) = json.loads(result.stdout)["pods"]
        assert p["node"] == "n2" and p["devices"][0]["pool"] == "n2", p


def test_gpus_with_binding_conditions_bind_once_the_driver_attaches_them(tmp_path: Path) -> None:
    """``--gpu-attributes`` with ``bindingDelaySeconds``: the GPUs carry binding conditions, the
    scheduler's PreBind waits for the driver's ``attached`` condition, and the pods still bind,
    each with its own device."""
    f = tmp_path / "gpus.yaml"
    f.write_text("bindingDelaySeconds: 0.5\n")
    objects = [node("n1", cpu="8"), gpu_template("plain"),
               *[claim_pod(f"p{i}", resourceClaimTemplateName="plain") for i in range(2)]]
    result = run_cli(["-f", "-", "--output", "json", "--gpus-per-node", "2", "--gpu-attributes", str(f)],
                     stdin=as_list(objects))
    assert result.exit_code == 0, result.output
    pods = json.loads(result.stdout)["pods"]
    assert [p["node"] for p in pods] == ["n1", "n1"], pods
    assert sorted(p["devices"][0]["device"] for p in pods) == ["gpu-0", "gpu-1"]
