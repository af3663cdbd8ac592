"""The simulated kubelet as a client observes it: the labels it registers its node with, and how it ends
a deleted pod."""

from __future__ import annotations

from typing import Any

from tests.simulator.helpers import Http


def _node(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if labels is not None:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta,
            "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def test_a_new_node_carries_the_kubelets_hostname_os_and_arch_labels(api: Http) -> None:
    code, body = api("POST", "/api/v1/nodes", _node("Worker-A.example"))
    assert code == 422     # node names are lowercase DNS subdomains
    code, body = api("POST", "/api/v1/nodes", _node("worker-a.example", {"team": "x"}))
    assert code == 201, body
    code, got = api("GET", "/api/v1/nodes/worker-a.example")
    assert got["metadata"]["labels"] == {
        "team": "x", "kubernetes.io/hostname": "worker-a.example", "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64"}


def test_the_kubelets_labels_never_overwrite_the_nodes_own(api: Http) -> None:
    own = {"kubernetes.io/hostname": "host-7", "kubernetes.io/arch": "arm64"}
    code, body = api("POST", "/api/v1/nodes", _node("labelled", own))
    assert code == 201, body
    labels = api("GET", "/api/v1/nodes/labelled")[1]["metadata"]["labels"]
    assert labels["kubernetes.io/hostname"] == "host-7" and labels["kubernetes.io/arch"] == "arm64"
    assert labels["kubernetes.io/os"] == "linux"
    # Removing one later is the client's to do: an update is no registration.
    code, body = api("PATCH", "/api/v1/nodes/labelled", {"metadata": {"labels": {"kubernetes.io/os": None}}},
                     ctype="application/merge-patch+json")
    assert code == 200 and "kubernetes.io/os" not in body["metadata"]["labels"]


def test_a_pod_selecting_linux_nodes_matches_a_new_node(api: Http) -> None:
    api("POST", "/api/v1/nodes", _node("linux-1"))
    code, body = api("GET", "/api/v1/nodes", params={"labelSelector": "kubernetes.io/os=linux,"
                                                                       "kubernetes.io/hostname=linux-1"})
    assert code == 200 and [n["metadata"]["name"] for n in body["items"]] == ["linux-1"]
