"""Pod-level resources as kube-apiserver validates them against the containers
(``registry/core/podlevel.py``), and Go's ``Quantity.String`` that its message prints."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from scheduler.simulator.registry.core.podlevel import format_quantity, quantity_format
from tests.simulator.helpers import Http

PODS = "/api/v1/namespaces/default/pods"


@pytest.mark.parametrize(("text", "want"), [
    ("1500m", "1500m"), ("1", "1"), ("2000m", "2"), ("1000", "1k"), ("1500", "1500"), ("6Gi", "6Gi"),
    ("1536Mi", "1536Mi"), ("576Mi", "576Mi"), ("512", "512"), ("0.5", "500m"), ("1e3", "1e3"), ("100k", "100k"),
])
def test_format_quantity_as_go_prints_it(text: str, want: str) -> None:
    from scheduler.quantity import parse_quantity
    assert format_quantity(parse_quantity(text), quantity_format(text)) == want


def test_a_sum_keeps_the_first_quantitys_format() -> None:
    assert format_quantity(Fraction(1) + Fraction(1, 2), quantity_format("1")) == "1500m"
    assert format_quantity(Fraction(6 * 2**30), quantity_format("2Gi")) == "6Gi"


def _pod(name: str, pod_level: dict[str, str], *containers: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {
        "resources": {"requests": pod_level},
        "containers": [{"name": f"c{i}", "image": "pause", "resources": {"requests": r}}
                       for i, r in enumerate(containers)]}}


def test_pod_level_requests_below_the_containers_are_refused(api: Http) -> None:
    """The abcdesktop report's refusal, cause by cause: cpu 1 under 1500m, memory 576Mi under 6Gi."""
    code, body = api("POST", PODS, _pod("under", {"cpu": "1", "memory": "576Mi"},
                                        {"cpu": "1", "memory": "2Gi"}, {"cpu": "500m", "memory": "4Gi"}))
    assert code == 422, body
    assert [(c["field"], c["message"]) for c in body["details"]["causes"]] == [
        ("spec.resources.requests[cpu]",
         'Invalid value: "1": must be greater than or equal to aggregate container requests of 1500m'),
        ("spec.resources.requests[memory]",
         'Invalid value: "576Mi": must be greater than or equal to aggregate container requests of 6Gi')]


def test_pod_level_requests_covering_the_containers_are_accepted(api: Http) -> None:
    code, body = api("POST", PODS, _pod("covers", {"cpu": "2"}, {"cpu": "1"}, {"cpu": "500m", "memory": "1Gi"}))
    assert code == 201, body


def test_a_resize_above_the_pod_level_requests_is_refused(api: Http) -> None:
    assert api("POST", PODS, _pod("capped", {"cpu": "1"}, {"cpu": "500m"}))[0] == 201
    code, body = api("PATCH", f"{PODS}/capped/resize", {"spec": {"containers": [
        {"name": "c0", "resources": {"requests": {"cpu": "2"}}}]}}, ctype="application/strategic-merge-patch+json")
    assert code == 422 and "aggregate container requests of 2" in body["message"], body
