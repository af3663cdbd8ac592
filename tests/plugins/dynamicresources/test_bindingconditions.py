"""DynamicResources with device taints and binding conditions (``bindingconditions``, the gates in
``Features.from_gates``): the checks upstream's ``dynamicresources.go`` makes (``isClaimReadyForBinding``,
``isClaimTimeout``, ``hasBindingConditions``) as a table, then the plugin through its interface on
the ``test_dynamicresources`` fixtures: PreBind waiting for a driver's condition, failing on a
failure condition or a timeout with upstream's texts, Filter and PostFilter recovering the claim,
and a tainted device refused unless tolerated (or the gate is off).

The first cases follow the functions' own contracts (their doc comments) and are named for what
they check; the last ones are upstream's ``dynamicresources_test.go`` TestPlugin cases for binding
conditions and device taints, as data, named ``dynamicresources_test.go/<case>`` (the stored copy
read predates kubernetes#140222, so its no-op PostFilter text ``still not schedulable`` reads as
1.37's reasonless Unschedulable here).
"""

from __future__ import annotations

import asyncio
import copy
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from scheduler.dra.allocator import Features
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.diagnosis import NodeToStatus
from scheduler.framework.status import Code
from scheduler.model.dra import AllocatedDeviceStatus, DeviceCondition, ResourceClaim, parse_resource_claim
from scheduler.plugins.dynamicresources import DynamicResources
from scheduler.plugins.dynamicresources.bindingconditions import (
    BindingConditionsError,
    blocked,
    has_binding_conditions,
    is_claim_ready_for_binding,
    is_claim_timeout,
    wait_until_ready,
)
from tests.plugins.dynamicresources.test_dynamicresources import (
    CLAIM_NAME,
    CLAIM_NAME2,
    DRIVER,
    NAMESPACE,
    NODE,
    NODE_NAME_SELECTOR,
    POD_UID,
    Env,
    allocatedClaim,
    claim,
    deviceClass,
    otherClaim,
    pod,
    run,
    status,
    two_claims_pod,
    workerNodeSlice,
)

READY, FAILED = "dra.example.com/ready", "dra.example.com/failed"


def allocated(*, conditions: bool = True, timestamp: str = "", devices: list[dict[str, Any]] | None = None
              ) -> ResourceClaim:
    result: dict[str, Any] = {"driver": DRIVER, "pool": NODE, "device": "instance-1", "request": "req-1"}
    if conditions:
        result |= {"bindingConditions": [READY], "bindingFailureConditions": [FAILED]}
    allocation: dict[str, Any] = {"devices": {"results": [result]}, "nodeSelector": NODE_NAME_SELECTOR}
    if timestamp:
        allocation["allocationTimestamp"] = timestamp
    body = claim(allocation=allocation)
    if devices is not None:
        body["status"]["devices"] = devices
    return parse_resource_claim(body)


def device_status(*conditions: tuple[str, str]) -> list[dict[str, Any]]:
    return [{"driver": DRIVER, "pool": NODE, "device": "instance-1", "conditions": [
        {"type": t, "status": s, "reason": "Because", "message": "the driver says so",
         "lastTransitionTime": "2026-01-01T00:00:00Z"} for t, s in conditions]}]


# --- isClaimReadyForBinding / isClaimTimeout ------------------------------------------------------

READY_CASES = [
    # (case, claim, ready, error)
    ("no-binding-conditions-is-ready", allocated(conditions=False), True, None),
    ("no-device-status-yet", allocated(), False, None),
    ("condition-not-true-yet", allocated(devices=device_status((READY, "False"))), False, None),
    ("condition-true", allocated(devices=device_status((READY, "True"))), True, None),
    ("failure-condition-true", allocated(devices=device_status((READY, "True"), (FAILED, "True"))), False,
     'claim my-pod-my-resource binding failed: reason=Because, message="the driver says so"'),
    ("failure-condition-false", allocated(devices=device_status((READY, "True"), (FAILED, "False"))), True, None),
    ("status-of-another-device", allocated(devices=[{**device_status((READY, "True"))[0], "device": "other"}]),
     False, None),
]


@pytest.mark.parametrize("case", READY_CASES, ids=[c[0] for c in READY_CASES])
def test_is_claim_ready_for_binding(case: Any) -> None:
    _, c, ready, error = case
    if error is not None:
        with pytest.raises(BindingConditionsError) as e:
            is_claim_ready_for_binding(c)
        assert str(e.value) == error
        return
    assert is_claim_ready_for_binding(c) is ready


def test_is_claim_timeout_counts_from_the_allocation_timestamp() -> None:
    stamped = allocated(timestamp="2026-01-01T00:00:00Z")
    start = 1767225600.0      # 2026-01-01T00:00:00Z
    assert not is_claim_timeout(stamped, 600, start + 600)
    assert is_claim_timeout(stamped, 600, start + 601)
    assert not is_claim_timeout(allocated(), 600, start + 10_000)                       # no timestamp
    assert not is_claim_timeout(allocated(conditions=False, timestamp="2026-01-01T00:00:00Z"), 600, start + 10_000)
    assert blocked(stamped, 600, start + 601) and not blocked(stamped, 600, start + 1)
    assert blocked(allocated(devices=device_status((FAILED, "True"))), 600, start)
    assert has_binding_conditions([allocated()]) and not has_binding_conditions([allocated(conditions=False)])


# --- the plugin ---------------------------------------------------------------------------------

BOUND_SLICE = {"metadata": {"name": f"{NODE}-{DRIVER}"}, "spec": {
    "driver": DRIVER, "pool": {"name": NODE, "generation": 1, "resourceSliceCount": 1}, "nodeName": NODE,
    "devices": [{"name": "instance-1", "bindingConditions": [READY], "bindingFailureConditions": [FAILED],
                 "bindsToNode": True}]}}


def bound_env(timeout: float = 5.0) -> Env:
    env = Env(pod(), (claim(), BOUND_SLICE), (deviceClass,))
    env.plugin.binding_timeout = timeout
    env.plugin.binding_poll_interval = 0.01
    return env


def driver_reports(env: Env, *conditions: tuple[str, str]) -> None:
    """What the informer brings once the driver wrote ``status.devices``."""
    current = env.dra.claim(NAMESPACE, CLAIM_NAME)
    assert current is not None
    devices = (AllocatedDeviceStatus(DRIVER, NODE, "instance-1",
                                     tuple(DeviceCondition(t, s, "Because", "the driver says so")
                                           for t, s in conditions)),)
    env.dra.upsert(replace(current, devices=devices))


async def prebind_with_driver(env: Env, *conditions: tuple[str, str], after: float = 0.05) -> Any:
    async def driver() -> None:
        await asyncio.sleep(after)
        driver_reports(env, *conditions)
    task = asyncio.create_task(driver())
    status = await env.plugin.pre_bind(env.state, env.pod, NODE)
    await task
    return status


def test_a_device_with_binding_conditions_is_allocated_and_prebind_waits_for_them() -> None:
    """The device is allocated (before 1.37's gate it never was), the allocation written with its
    binding conditions and an allocationTimestamp, and PreBind returns only once the driver
    reported the condition True."""
    env = bound_env()
    assert env.schedule()
    status = run(prebind_with_driver(env, (READY, "True")))
    assert status.is_success(), status
    assert env.client.pod_events == [("default/my-pod", "Normal", "BindingConditionsPending", "Scheduling",
                                      "waiting for binding conditions for device on node worker")]
    written = env.api()
    assert written.allocation is not None and written.allocation.allocation_timestamp
    assert written.allocation.results[0].binding_conditions == (READY,)
    assert written.allocation.results[0].binding_failure_conditions == (FAILED,)


def test_prebind_keeps_waiting_while_the_condition_is_false_until_the_claim_times_out() -> None:
    """A condition reported False is not ready: PreBind waits until the claim's binding timeout
    (counted from its allocationTimestamp, written in whole seconds, so it ends before the poll's
    own deadline) and fails with upstream's text."""
    env = bound_env(timeout=1.5)
    assert env.schedule()
    status = run(prebind_with_driver(env, (READY, "False")))
    assert status.code == Code.ERROR and status.reasons == ("claim my-pod-my-resource binding timeout",), status


def test_the_poll_running_out_is_a_device_binding_timeout() -> None:
    """A claim without allocationTimestamp never times out by itself: the poll's deadline ends the
    wait (``wait.PollUntilContextTimeout``'s DeadlineExceeded, upstream's ``device binding timeout``)."""
    claims = [allocated(devices=device_status((READY, "False")))]
    with pytest.raises(BindingConditionsError) as e:
        run(wait_until_ready(lambda c: c, claims, 0.2, 0.01))
    assert str(e.value) == "device binding timeout"
    ready = [allocated(devices=device_status((READY, "True")))]
    run(wait_until_ready(lambda c: c, ready, 0.2, 0.01))       # ready: returns at once


def test_a_failure_condition_fails_prebind_with_upstreams_text() -> None:
    env = bound_env()
    assert env.schedule()
    status = run(prebind_with_driver(env, (READY, "False"), (FAILED, "True")))
    assert [e[2] for e in env.client.pod_events] == ["BindingConditionsPending"]
    assert status.code == Code.ERROR
    assert status.reasons == ('claim my-pod-my-resource binding failed: reason=Because, '
                              'message="the driver says so"',), status


def test_binding_conditions_gate_off_never_picks_the_device() -> None:
    """DRADeviceBindingConditions=false: such a device is not allocated (cannot allocate all claims)."""
    env = Env(pod(), (claim(), BOUND_SLICE), (deviceClass,))
    env.plugin = DynamicResources(env.dra, client=env.client,
                                  features=Features.from_gates({"DRADeviceBindingConditions": False}))
    assert not env.schedule()


def test_a_failed_binding_makes_the_claim_unavailable_and_postfilter_deallocates_it() -> None:
    """The retry after a failure: the claim (allocated, its pod unreserved) is available on no node,
    and PostFilter deallocates it through the client."""
    body = claim(allocation={"devices": {"results": [
        {"driver": DRIVER, "pool": NODE, "device": "instance-1", "request": "req-1",
         "bindingConditions": [READY], "bindingFailureConditions": [FAILED]}]}, "nodeSelector": NODE_NAME_SELECTOR})
    body["status"]["devices"] = device_status((FAILED, "True"))
    env = Env(pod(), (body, BOUND_SLICE), (deviceClass,))
    assert not env.schedule()
    with env.cache.lock:
        snap = env.cache.snapshot()
        state = CycleState()
        env.plugin.pre_filter(state, env.pod, snap)
        verdict = env.plugin.filter_nodes(state, env.pod, snap, np.array([snap.row_of(NODE)], np.int64))
    assert verdict.failed[0]
    assert verdict.status_ids is not None
    assert verdict.statuses[verdict.status_ids[0]].reasons == ("resourceclaim not available on the node",)

    async def post_filter() -> Any:
        result = env.plugin.post_filter(state, env.pod, NodeToStatus(), None)  # type: ignore[arg-type]
        await asyncio.sleep(0.05)        # the deallocation is written off the cycle
        return result
    _, status = run(post_filter())
    assert status.reasons == ("deallocation of ResourceClaim completed",), status
    assert env.api().allocation is None


# --- device taints through the plugin ----------------------------------------------------------

def tainted_slice(effect: str) -> dict[str, Any]:
    s = copy.deepcopy(BOUND_SLICE)
    s["spec"]["devices"] = [{"name": "instance-1", "taints": [{"key": "example.com/ecc", "value": "bad",
                                                               "effect": effect}]}]
    return s


def tolerating_claim(**toleration: str) -> dict[str, Any]:
    body = claim()
    body["spec"]["devices"]["requests"][0]["exactly"]["tolerations"] = [toleration]
    return body


@pytest.mark.parametrize("effect,body,gates,schedules", [
    ("NoSchedule", claim(), None, False),
    ("NoExecute", claim(), None, False),
    ("None", claim(), None, True),
    ("NoSchedule", tolerating_claim(key="example.com/ecc", operator="Exists"), None, True),
    ("NoSchedule", tolerating_claim(key="example.com/ecc", operator="Equal", value="good"), None, False),
    ("NoSchedule", claim(), {"DRADeviceTaints": False}, True),
], ids=["noschedule", "noexecute", "effect-none", "tolerated", "other-value", "gate-off"])
def test_a_tainted_device(effect: str, body: dict[str, Any], gates: dict[str, bool] | None, schedules: bool) -> None:
    env = Env(pod(), (body, tainted_slice(effect)), (deviceClass,))
    env.plugin = DynamicResources(env.dra, client=env.client, features=Features.from_gates(gates))
    assert env.schedule() is schedules


def test_prebind_declares_its_wait_so_the_binding_cycle_is_not_cut_short() -> None:
    """``pre_bind_wait``: the binding timeout when the pod gets a device with binding conditions
    (the service adds it to the binding cycle's 60 s deadline), 0 otherwise or with the gate off."""
    env = bound_env(timeout=600)
    assert env.schedule()
    assert env.plugin.pre_bind_wait(env.state) == 600
    plain = Env(pod(), (claim(), tainted_slice("None")), (deviceClass,))
    assert plain.schedule() and plain.plugin.pre_bind_wait(plain.state) == 0
    off = Env(pod(), (claim(), BOUND_SLICE), (deviceClass,))
    off.plugin = DynamicResources(off.dra, client=off.client,
                                  features=Features.from_gates({"DRAResourceClaimDeviceStatus": False}))
    assert not off.schedule() and off.plugin.pre_bind_wait(off.state) == 0


def test_no_event_without_binding_conditions() -> None:
    """A pod whose devices have no binding conditions binds without waiting, and without the event."""
    env = Env(pod(), (claim(), tainted_slice("None")), (deviceClass,))
    assert env.schedule()
    assert run(env.plugin.pre_bind(env.state, env.pod, NODE)).is_success()
    assert env.client.pod_events == []


# --- upstream's dynamicresources_test.go (TestPlugin): the binding-conditions and taint cases --------
# Its objects: bindingConditions ["condition"], bindingFailureConditions ["failed"]; ``fabricSlice``
# (``fabricSlice2``: driver2, instance-2), a node-selector slice whose device binds to the node and has
# both; ``allocationResultWithBindingConditions`` (``...2``: driver2, instance-2, req-2);
# ``boundClaim`` (``boundClaim2``): allocated so, the driver reporting condition True and failed
# False; ``failedBindingClaim`` (``...2``): condition False, failed True; ``taintDevices``: every
# device tainted taint-key=taint-value:NoSchedule. Upstream's harness compares a rejected status by
# its text only; the codes here are those its code returns.
DRIVER2 = "some-driver-2"
UP_CONDITIONS, UP_FAILURES = ["condition"], ["failed"]


def fabric_slice(driver: str, device: str) -> dict[str, Any]:
    return {"metadata": {"name": f"{NODE}-{driver}"}, "spec": {
        "driver": driver, "pool": {"name": NODE, "generation": 1, "resourceSliceCount": 1},
        "nodeSelector": NODE_NAME_SELECTOR,
        "devices": [{"name": device, "bindsToNode": True, "bindingConditions": UP_CONDITIONS,
                     "bindingFailureConditions": UP_FAILURES}]}}


def with_binding(name: str, driver: str, device: str, request: str, *conditions: tuple[str, str] | None,
                 timestamp: str = "") -> dict[str, Any]:
    """``st.FromResourceClaim(allocatedClaim).Allocation(allocationResultWithBindingConditions)``
    with ``AllocatedDeviceStatuses``: one entry for the device with ``conditions`` (None: none given)."""
    allocation: dict[str, Any] = {"devices": {"results": [
        {"driver": driver, "pool": NODE, "device": device, "request": request,
         "bindingConditions": UP_CONDITIONS, "bindingFailureConditions": UP_FAILURES}]},
        "nodeSelector": NODE_NAME_SELECTOR}
    if timestamp:
        allocation["allocationTimestamp"] = timestamp
    body = claim(name, allocation=allocation)
    entry: dict[str, Any] = {"driver": driver, "pool": NODE, "device": device}
    if conditions != (None,):
        entry["conditions"] = [{"type": t, "status": s, "reason": "", "message": "",
                                "lastTransitionTime": "2026-01-01T00:00:00Z"} for t, s in conditions if t]
    body["status"]["devices"] = [entry]
    return body


def _rfc3339(seconds_ago: float) -> str:
    import datetime
    at = datetime.datetime.now(datetime.UTC) - datetime.timedelta(seconds=seconds_ago)
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def bound_claim() -> dict[str, Any]:
    return with_binding(CLAIM_NAME, DRIVER, "instance-1", "req-1", ("condition", "True"), ("failed", "False"))


def failed_binding_claim2() -> dict[str, Any]:
    return with_binding(CLAIM_NAME2, DRIVER2, "instance-2", "req-2", ("condition", "False"), ("failed", "True"))


def _filter_then_post_filter(env: Env) -> tuple[Any, Any]:
    """Filter on worker, and PostFilter after it (its deallocation written off the cycle)."""
    with env.cache.lock:
        snap = env.cache.snapshot()
        assert env.plugin.pre_filter(env.state, env.pod, snap)[1].is_success()
        v = env.plugin.filter_nodes(env.state, env.pod, snap, np.array([snap.row_of(NODE)], np.int64))
    filtered = v.statuses[int(v.status_ids[0]) if v.status_ids is not None else 0] if v.failed[0] else None

    async def post_filter() -> Any:
        _, status = env.plugin.post_filter(env.state, env.pod, NodeToStatus(), None)  # type: ignore[arg-type]
        await asyncio.sleep(0.05)
        return status
    return filtered, run(post_filter())


def _reserved(env: Env, name: str = CLAIM_NAME) -> list[str]:
    return [r.uid for r in env.api(name).reserved_for]


@pytest.mark.parametrize(("case", "claims", "slices", "unavailable"), [
    ("bound-claim-with-failed-binding", lambda: (
        with_binding(CLAIM_NAME, DRIVER, "instance-1", "req-1", ("condition", "False"), ("failed", "True")),),
     (workerNodeSlice,), CLAIM_NAME),
    # allocated ten minutes ago (the default bindingTimeout is 600 s): timed out
    ("bound-claim-with-timed-out-binding", lambda: (
        with_binding(CLAIM_NAME, DRIVER, "instance-1", "req-1", None, timestamp=_rfc3339(600)),), (), CLAIM_NAME),
    ("bound-claim-with-mixed-binding-conditions", lambda: (
        with_binding(CLAIM_NAME, DRIVER, "instance-1", "req-1", ("condition1", "True"), ("condition2", "False"),
                     timestamp=_rfc3339(600)),), (), CLAIM_NAME),
    ("multi-claims-binding-conditions-one-fail", lambda: (bound_claim(), failed_binding_claim2()),
     (fabric_slice(DRIVER, "instance-1"), fabric_slice(DRIVER2, "instance-2")), CLAIM_NAME2),
], ids=["dynamicresources_test.go/bound-claim-with-failed-binding",
        "dynamicresources_test.go/bound-claim-with-timed-out-binding",
        "dynamicresources_test.go/bound-claim-with-mixed-binding-conditions",
        "dynamicresources_test.go/multi-claims-binding-conditions-one-fail"])
def test_upstream_a_claim_whose_binding_failed_or_timed_out(case: str, claims: Any, slices: tuple[dict[str, Any], ...],
                                                            unavailable: str) -> None:
    """Filter: ``resourceclaim not available on the node``; PostFilter deallocates that claim
    (allocation and device statuses cleared; the other claim untouched) with ``deallocation of
    ResourceClaim completed``."""
    objs = claims()
    two = len(objs) > 1
    env = Env(two_claims_pod() if two else pod(), (*objs, *slices), (deviceClass,))
    filtered, post = _filter_then_post_filter(env)
    assert status(filtered) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "resourceclaim not available on the node")
    assert status(post) == (Code.UNSCHEDULABLE, "deallocation of ResourceClaim completed")
    gone = env.api(unavailable)
    assert gone.allocation is None and gone.devices == () and gone.reserved_for == ()
    if two:     # the claim whose binding succeeded keeps its allocation and the driver's report
        kept, given = env.api(CLAIM_NAME), parse_resource_claim(objs[0])
        assert (kept.allocation, kept.devices) == (given.allocation, given.devices)


@pytest.mark.parametrize(("case", "p", "claims", "slices"), [
    ("bound-claim-with-succeeded-binding-conditions", pod, lambda: (bound_claim(),), ()),
    ("bound-claim-without-binding-conditions", lambda: pod(template=True), lambda: (allocatedClaim, otherClaim), ()),
    ("multi-claims-binding-conditions-all-success", two_claims_pod,
     lambda: (bound_claim(), with_binding(CLAIM_NAME2, DRIVER2, "instance-2", "req-2", ("condition", "True"),
                                          ("failed", "False"))),
     (fabric_slice(DRIVER, "instance-1"), fabric_slice(DRIVER2, "instance-2"))),
], ids=["dynamicresources_test.go/bound-claim-with-succeeded-binding-conditions",
        "dynamicresources_test.go/bound-claim-without-binding-conditions",
        "dynamicresources_test.go/multi-claims-binding-conditions-all-success"])
def test_upstream_a_claim_ready_for_binding_is_reserved_in_prebind(case: str, p: Any, claims: Any,
                                                                   slices: tuple[dict[str, Any], ...]) -> None:
    """PreBind succeeds at once and adds the pod to ``reservedFor`` of each of its claims."""
    objs = claims()
    env = Env(p(), (*objs, *slices), (deviceClass,))
    assert env.schedule()
    assert run(env.plugin.pre_bind(env.state, env.pod, NODE)).is_success()
    own = [o["metadata"]["name"] for o in objs if o["metadata"]["name"] != "not-my-claim"]
    assert all(_reserved(env, name) == [POD_UID] for name in own)
    if "not-my-claim" in {o["metadata"]["name"] for o in objs}:
        assert _reserved(env, "not-my-claim") == []


def test_upstream_prebind_fail_with_binding_timeout() -> None:
    """dynamicresources_test.go/prebind-fail-with-binding-timeout: bindingTimeout 600s, the claim
    allocated 590 s ago with binding conditions the driver never reports: PreBind reserves the
    claim, then waits until it times out 10 s later: Error ``claim my-pod-my-resource binding timeout``."""
    body = with_binding(CLAIM_NAME, DRIVER, "instance-1", "req-1", None, timestamp=_rfc3339(600 - 10))
    env = Env(pod(), (body,), (deviceClass,))
    env.plugin.binding_timeout = 600.0
    env.plugin.binding_poll_interval = 0.5        # upstream polls every 5 s; the outcome is the same
    assert env.schedule()
    got = run(env.plugin.pre_bind(env.state, env.pod, NODE))
    assert status(got) == (Code.ERROR, "claim my-pod-my-resource binding timeout")
    assert _reserved(env) == [POD_UID]


@pytest.mark.parametrize(("case", "gates", "want"), [
    ("tainted-device-disabled", {"DRADeviceTaints": False}, None),
    ("tainted-device-enabled", None, (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot allocate all claims")),
], ids=["dynamicresources_test.go/tainted-device-disabled", "dynamicresources_test.go/tainted-device-enabled"])
def test_upstream_tainted_device(case: str, gates: dict[str, bool] | None, want: Any) -> None:
    """``taintDevices(workerNodeSlice)``: with DRADeviceTaints off the claim gets the device and
    PreBind writes it; on, no node can allocate it, and PostFilter has nothing to deallocate."""
    s = copy.deepcopy(workerNodeSlice)
    s["spec"]["devices"] = [{**d, "taints": [{"key": "taint-key", "value": "taint-value", "effect": "NoSchedule"}]}
                            for d in s["spec"]["devices"]]
    env = Env(pod(), (claim(), s), (deviceClass,))
    env.plugin = DynamicResources(env.dra, client=env.client, features=Features.from_gates(gates))
    if want is None:
        assert env.schedule()
        assert run(env.plugin.pre_bind(env.state, env.pod, NODE)).is_success()
        assert env.api().allocation is not None and _reserved(env) == [POD_UID]
    else:
        filtered, post = _filter_then_post_filter(env)
        assert status(filtered) == want
        assert status(post) == (Code.UNSCHEDULABLE, "")     # 1.37's no-op PostFilter (kubernetes#140222)
