"""Upstream's ``component-helpers/resource/helpers_test.go`` tables, as data, through ``parse_pod``.

Each case is named ``<upstream test>/<upstream case>``. Upstream's ``PodResourcesOptions`` map to
``RequestOptions``: ``SkipPodLevelResources`` is ``pod_level_resources=False``; the nil options of
``TestPodResourceRequests`` are ``use_status_resources=False`` (on or off gives the same answer
without a resize status, so only the cases that say "don't use status" need it).
"""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.model import parse_pod
from scheduler.model.parsing import resource_list
from scheduler.model.podresources import RequestOptions, is_supported_pod_level_resource

NO_STATUS = RequestOptions(use_status_resources=False)
SKIP_POD_LEVEL = RequestOptions(pod_level_resources=False)
INFEASIBLE = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]


def c(name: str = "", restart: str | None = None, **requests: str) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "image": "i", "resources": {"requests": {
        k.replace("_", "-"): v for k, v in requests.items()}}}
    if restart:
        out["restartPolicy"] = restart
    return out


def cs(name: str, allocated: dict[str, str] | None = None, actuated: dict[str, str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "ready": True, "restartCount": 0, "image": "i", "imageID": ""}
    if allocated is not None:
        out["allocatedResources"] = allocated
    if actuated is not None:
        out["resources"] = {"requests": actuated}
    return out


def pod(containers: list[dict[str, Any]] | None = None, inits: list[dict[str, Any]] | None = None, *,
        pod_requests: dict[str, str] | None = None, overhead: dict[str, str] | None = None,
        statuses: list[dict[str, Any]] | None = None, init_statuses: list[dict[str, Any]] | None = None,
        conditions: list[dict[str, Any]] | None = None, status: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": containers or []}
    if inits:
        spec["initContainers"] = inits
    if pod_requests is not None:
        spec["resources"] = {"requests": pod_requests}
    if overhead is not None:
        spec["overhead"] = overhead
    st: dict[str, Any] = dict(status or {})
    if statuses:
        st["containerStatuses"] = statuses
    if init_statuses:
        st["initContainerStatuses"] = init_statuses
    if conditions:
        st["conditions"] = conditions
    return {"metadata": {"name": "p", "namespace": "ns"}, "spec": spec, "status": st}


CASES: list[tuple[str, dict[str, Any], RequestOptions, dict[str, str]]] = [
    # --- TestPodRequestsAndLimits (requests only) ---
    ("TestPodRequestsAndLimits/just-overhead", pod([c()], overhead={"cpu": "5", "memory": "5"}),
     NO_STATUS, {"cpu": "5", "memory": "5"}),
    ("TestPodRequestsAndLimits/req-and-overhead",
     pod([c(cpu="1", memory="10")], overhead={"cpu": "5", "memory": "5"}), NO_STATUS, {"cpu": "6", "memory": "15"}),
    # --- TestPodResourceRequests ---
    ("TestPodResourceRequests/nil options, larger init container", pod([c(cpu="1")], [c(cpu="4")]),
     NO_STATUS, {"cpu": "4"}),
    ("TestPodResourceRequests/nil options, larger containers", pod([c(cpu="2"), c(cpu="3")], [c(cpu="2")]),
     NO_STATUS, {"cpu": "5"}),
    ("TestPodResourceRequests/pod overhead included",
     pod([c(cpu="2"), c(cpu="3")], [c(cpu="2")], overhead={"cpu": "1", "memory": "1Gi"}),
     NO_STATUS, {"cpu": "6", "memory": "1Gi"}),
    ("TestPodResourceRequests/resized, infeasible",
     pod([c("container-1", cpu="4")], statuses=[cs("container-1", actuated={"cpu": "2"})], conditions=INFEASIBLE),
     RequestOptions(), {"cpu": "2"}),
    ("TestPodResourceRequests/resized, infeasible & in-progress",
     pod([c("container-1", cpu="6")], statuses=[cs("container-1", {"cpu": "4"}, {"cpu": "2"})],
         conditions=INFEASIBLE),
     RequestOptions(), {"cpu": "4"}),
    ("TestPodResourceRequests/resized, no resize status",
     pod([c("container-1", cpu="4")], statuses=[cs("container-1", actuated={"cpu": "2"})]),
     RequestOptions(), {"cpu": "4"}),
    ("TestPodResourceRequests/resized: per-resource 3-way maximum",
     pod([c("container-1", cpu="30m", memory="20M", ephemeral_storage="10G")],
         statuses=[cs("container-1", {"cpu": "20m", "memory": "10M", "ephemeral-storage": "30G"},
                      {"cpu": "10m", "memory": "30M", "ephemeral-storage": "20G"})]),
     RequestOptions(), {"cpu": "30m", "memory": "30M", "ephemeral-storage": "30G"}),
    ("TestPodResourceRequests/resized, infeasible, but don't use status",
     pod([c("container-1", cpu="4")], statuses=[cs("container-1", actuated={"cpu": "2"})], conditions=INFEASIBLE),
     NO_STATUS, {"cpu": "4"}),
    ("TestPodResourceRequests/resized, restartable init container, infeasible",
     pod([], [c("restartable-init-1", "Always", cpu="4")],
         init_statuses=[cs("restartable-init-1", actuated={"cpu": "2"})], conditions=INFEASIBLE),
     RequestOptions(), {"cpu": "2"}),
    ("TestPodResourceRequests/resized, restartable init container, no resize status",
     pod([], [c("restartable-init-1", "Always", cpu="4")],
         init_statuses=[cs("restartable-init-1", actuated={"cpu": "2"})]),
     RequestOptions(), {"cpu": "4"}),
    ("TestPodResourceRequests/resized, restartable init container, infeasible, but don't use status",
     pod([], [c("restartable-init-1", "Always", cpu="4")],
         init_statuses=[cs("restartable-init-1", actuated={"cpu": "2"})], conditions=INFEASIBLE),
     NO_STATUS, {"cpu": "4"}),
    ("TestPodResourceRequests/restartable init container",
     pod([c("container-1", cpu="1")], [c("restartable-init-1", "Always", cpu="1")]), NO_STATUS, {"cpu": "2"}),
    ("TestPodResourceRequests/multiple restartable init containers",
     pod([c("container-1", cpu="1")], [c("init-1", cpu="5"), c("restartable-init-1", "Always", cpu="1"),
                                        c("restartable-init-2", "Always", cpu="2"),
                                        c("restartable-init-3", "Always", cpu="3")]), NO_STATUS, {"cpu": "7"}),
    ("TestPodResourceRequests/multiple restartable and regular init containers",
     pod([c("container-1", cpu="1")], [c("init-1", cpu="5"), c("restartable-init-1", "Always", cpu="1"),
                                        c("restartable-init-2", "Always", cpu="2"), c("init-2", cpu="5"),
                                        c("restartable-init-3", "Always", cpu="3")]), NO_STATUS, {"cpu": "8"}),
    ("TestPodResourceRequests/restartable-init, init and regular",
     pod([c("container-1", cpu="100")], [c("restartable-init-1", "Always", cpu="10"), c("init-1", cpu="200")]),
     NO_STATUS, {"cpu": "210"}),
    ("TestPodResourceRequests/aggregate request resolves max of sums instead of sum of maxes",
     pod([c("c1", cpu="1"), c("c2", cpu="2")], statuses=[cs("c1", {"cpu": "2"}), cs("c2", {"cpu": "1"})]),
     RequestOptions(), {"cpu": "3"}),
    # --- TestPodLevelResourceRequests ---
    ("TestPodLevelResourceRequests/nil", pod(), RequestOptions(), {}),
    ("TestPodLevelResourceRequests/pod level memory resource with SkipPodLevelResources true",
     pod(pod_requests={"memory": "2Mi"}), SKIP_POD_LEVEL, {}),
    ("TestPodLevelResourceRequests/pod level memory resource with SkipPodLevelResources false",
     pod(pod_requests={"memory": "2Mi"}), RequestOptions(), {"memory": "2Mi"}),
    ("TestPodLevelResourceRequests/pod level memory and container level cpu resources with "
     "SkipPodLevelResources false",
     pod([c(cpu="2m")], pod_requests={"memory": "2Mi"}), RequestOptions(), {"memory": "2Mi", "cpu": "2m"}),
    ("TestPodLevelResourceRequests/pod level unsupported resources set at both pod-level and container-level "
     "with SkipPodLevelResources false",
     pod([c(storage="3Mi")], pod_requests={"storage": "2Mi"}), RequestOptions(), {"storage": "3Mi"}),
    ("TestPodLevelResourceRequests/pod level unsupported resources set at pod-level with SkipPodLevelResources "
     "false",
     pod([c(memory="3Mi")], pod_requests={"storage": "2Mi"}), RequestOptions(), {"memory": "3Mi"}),
    ("TestPodLevelResourceRequests/only container level resources set with SkipPodLevelResources false",
     pod([c(memory="3Mi", cpu="2m")]), RequestOptions(), {"memory": "3Mi", "cpu": "2m"}),
    ("TestPodLevelResourceRequests/both container-level and pod-level resources set with SkipPodLevelResources "
     "false",
     pod([c(memory="3Mi", cpu="2m")], pod_requests={"memory": "6Mi", "cpu": "8m"}), RequestOptions(),
     {"memory": "6Mi", "cpu": "8m"}),
    ("TestPodLevelResourceRequests/container-level resources and init container set with SkipPodLevelResources "
     "false",
     pod([c(memory="3Mi", cpu="2m")], [c(memory="5Mi", cpu="4m")]), RequestOptions(), {"memory": "5Mi", "cpu": "4m"}),
    ("TestPodLevelResourceRequests/container-level resources and init container set with SkipPodLevelResources "
     "false (SkipPodLevelResources true)",
     pod([c(memory="3Mi", cpu="2m")], [c(memory="5Mi", cpu="4m")]), SKIP_POD_LEVEL, {"memory": "5Mi", "cpu": "4m"}),
    ("TestPodLevelResourceRequests/container-level resources and sidecar container set with "
     "SkipPodLevelResources false",
     pod([c(memory="3Mi", cpu="2m")], [c(restart="Always", memory="5Mi", cpu="4m")]), RequestOptions(),
     {"memory": "8Mi", "cpu": "6m"}),
    ("TestPodLevelResourceRequests/container-level resources, init and sidecar container set with "
     "SkipPodLevelResources false",
     pod([c(memory="3Mi", cpu="2m")], [c(restart="Always", memory="5Mi", cpu="4m"), c(memory="6Mi", cpu="8m")]),
     RequestOptions(), {"memory": "11Mi", "cpu": "12m"}),
    ("TestPodLevelResourceRequests/pod-level resources, container-level resources, init and sidecar container "
     "set with SkipPodLevelResources false",
     pod([c(memory="3Mi", cpu="2m")], [c(restart="Always", memory="5Mi", cpu="4m"), c(memory="6Mi", cpu="8m")],
         pod_requests={"memory": "15Mi", "cpu": "18m"}),
     RequestOptions(), {"memory": "15Mi", "cpu": "18m"}),
    ("TestPodLevelResourceRequests/pod-level resources, hugepage request/limit single page size",
     pod(pod_requests={"memory": "10Mi", "hugepages-2Mi": "2Mi"}), RequestOptions(),
     {"memory": "10Mi", "hugepages-2Mi": "2Mi"}),
    ("TestPodLevelResourceRequests/pod-level resources, hugepage request/limit multiple page sizes",
     pod(pod_requests={"cpu": "1", "hugepages-2Mi": "2Mi", "hugepages-1Gi": "1Gi"}), RequestOptions(),
     {"cpu": "1", "hugepages-2Mi": "2Mi", "hugepages-1Gi": "1Gi"}),
    ("TestPodLevelResourceRequests/pod-level resources, container-level resources, hugepage request/limit "
     "single page size",
     pod([c(hugepages_2Mi="6Mi")], pod_requests={"cpu": "1", "hugepages-2Mi": "10Mi"}), RequestOptions(),
     {"cpu": "1", "hugepages-2Mi": "10Mi"}),
    ("TestPodLevelResourceRequests/pod-level resources, container-level resources, hugepage request/limit "
     "multiple page sizes",
     pod([c(cpu="1", hugepages_1Gi="2Gi")], pod_requests={"cpu": "1", "hugepages-2Mi": "10Mi",
                                                          "hugepages-1Gi": "2Gi"}),
     RequestOptions(), {"cpu": "1", "hugepages-2Mi": "10Mi", "hugepages-1Gi": "2Gi"}),
    ("TestPodLevelResourceRequests/pod-level resources, container-level resources, hugepage request/limit "
     "multiple page sizes between pod-level and container-level",
     pod([c(memory="4Mi", hugepages_1Gi="1Gi")], pod_requests={"cpu": "1", "hugepages-2Mi": "10Mi"}),
     RequestOptions(), {"cpu": "1", "memory": "4Mi", "hugepages-2Mi": "10Mi", "hugepages-1Gi": "1Gi"}),
    # --- TestPodResourceRequestsAndLimits... with pod-level status (InPlacePodLevelResourcesVerticalScaling) ---
    ("TestPodResourceRequestsAndLimits/aggregate container request/limit resolves directly from pod status "
     "when PLR vertical scaling enabled",
     pod([c("c1", cpu="1")], status={"allocatedResources": {"cpu": "4"}, "resources": {"requests": {"cpu": "3"}}}),
     RequestOptions(), {"cpu": "4"}),
]


@pytest.mark.parametrize(("name", "raw", "opts", "want"), CASES, ids=[case[0] for case in CASES])
def test_pod_requests_as_upstream(name: str, raw: dict[str, Any], opts: RequestOptions, want: dict[str, str]
                                  ) -> None:
    assert dict(parse_pod(raw, opts).requests) == resource_list(want, "want")


@pytest.mark.parametrize(("resource", "supported"), [
    ("cpu", True), ("memory", True), ("ephemeral-storage", False), ("hugepages-2Mi", True), ("hugepages-1Gi", True),
])
def test_is_supported_pod_level_resource(resource: str, supported: bool) -> None:
    """TestIsSupportedPodLevelResource."""
    assert is_supported_pod_level_resource(resource) is supported


def test_resize_counts_in_the_non_zero_requests_too() -> None:
    """Scoring's request (NonMissingContainerRequests) takes the resize max as Filter's does: a
    container resized down from 2 cpu, not yet actuated, still counts 2 cpu; its absent memory
    request counts the 200Mi default in spec and status alike."""
    raw = pod([c("a", cpu="1")], statuses=[cs("a", {"cpu": "1"}, {"cpu": "2"})])
    p = parse_pod(raw)
    assert (p.requests["cpu"], p.non_zero_cpu, p.non_zero_memory) == (2000, 2000, 200 * 1024 * 1024)
    assert parse_pod(raw, NO_STATUS).non_zero_cpu == 1000


def test_pod_level_resize_off_reads_the_containers_and_the_spec() -> None:
    """InPlacePodLevelResourcesVerticalScaling off: the pod-level status maps are not read; the
    container statuses (none here) and the pod-level spec decide."""
    raw = pod([c("c1", cpu="1")], pod_requests={"cpu": "2"},
              status={"allocatedResources": {"cpu": "4"}, "resources": {"requests": {"cpu": "3"}}})
    assert parse_pod(raw).requests["cpu"] == 4000
    assert parse_pod(raw, RequestOptions(pod_level_resize=False)).requests["cpu"] == 2000


def test_pod_level_status_is_net_of_the_overhead() -> None:
    """effectivePodLevelResources: the pod-level status includes the overhead, which is taken off
    before the max and added back once."""
    raw = pod([c("c1", cpu="1")], pod_requests={"cpu": "2"}, overhead={"cpu": "1"},
              status={"resources": {"requests": {"cpu": "4"}}})
    assert parse_pod(raw).requests["cpu"] == 4000
