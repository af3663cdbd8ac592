"""DefaultBinder, after upstream's ``defaultbinder/default_binder_test.go``."""

from __future__ import annotations

import asyncio

import pytest

from scheduler.errors import ClientError
from scheduler.framework import CycleState
from scheduler.plugins import defaultbinder
from tests.builders import MemoryClient, pod


# Upstream's pkg/scheduler/framework/plugins/defaultbinder/default_binder_test.go, TestDefaultBinder:
# "successful" posts the Binding to the node; "binding error" returns the client's error as an Error status.
@pytest.mark.parametrize(("name", "inject_err"), [
    ("successful", None),
    ("binding error", ClientError("binding error")),
])
def test_default_binder(name: str, inject_err: ClientError | None) -> None:
    client = MemoryClient()
    client.bind_error = inject_err
    p = pod("foo", namespace="ns")
    status = asyncio.run(defaultbinder.DefaultBinder(client).bind(CycleState(), p, "foohost.kubernetes.mydomain.com"))
    if inject_err is None:
        assert status.is_success(), name
        assert client.bound == {p.uid: "foohost.kubernetes.mydomain.com"}, name
    else:
        assert status.code.name == "ERROR" and status.error is inject_err, name
        assert status.reasons == ("binding error",), name
        assert client.bound == {}, name
