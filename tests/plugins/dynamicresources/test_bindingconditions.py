"""DynamicResources with device taints and binding conditions (``bindingconditions``, the gates in
``Features.from_gates``): the checks upstream's ``dynamicresources.go`` makes (``isClaimReadyForBinding``,
``isClaimTimeout``, ``hasBindingConditions``) as a table, then the plugin through its interface on
the ``test_dynamicresources`` fixtures: PreBind waiting for a driver's condition, failing on a
failure condition or a timeout with upstream's texts, Filter and PostFilter recovering the claim,
and a tainted device refused unless tolerated (or the gate is off).

The stored copies of upstream's ``dynamicresources_test.go`` that could be read predate binding
conditions, so these cases follow the functions' own contracts (their doc comments) rather than
upstream's table, and are named for what they check.
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
    DRIVER,
    NAMESPACE,
    NODE,
    NODE_NAME_SELECTOR,
    Env,
    claim,
    deviceClass,
    pod,
    run,
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
