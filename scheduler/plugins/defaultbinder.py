"""DefaultBinder: ``POST pods/NAME/binding`` through the injected client. A 409 means someone
else bound the pod: it is reported as an error the cycle must not retry."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler.errors import ClientError
from scheduler.framework import interfaces as fwk
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.handle import Handle
from scheduler.framework.status import SUCCESS, Status
from scheduler.model import Pod

if TYPE_CHECKING:
    from scheduler.client import SchedulerClient

NAME = "DefaultBinder"


class DefaultBinder:
    """Upstream's ``defaultbinder.DefaultBinder``: Bind."""

    name = NAME

    def __init__(self, client: SchedulerClient | None) -> None:
        self._client = client

    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        if self._client is None:
            return Status.as_error(RuntimeError("DefaultBinder has no API client"))
        try:
            await self._client.bind(pod, node_name)
        except ClientError as e:
            return Status.as_error(e)
        return SUCCESS


def new(args: None, handle: Handle) -> DefaultBinder:
    return DefaultBinder(handle.client)


if TYPE_CHECKING:
    _: type[fwk.BindPlugin] = DefaultBinder
