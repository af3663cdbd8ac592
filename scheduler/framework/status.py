"""``Status`` and ``Code``: the result of every plugin call, as upstream's ``fwk.Status``.

A plugin returns a code and the reasons a user will read; the *framework* records which plugin
returned it (``with_plugin``), so plugins never name themselves. Callers ask ``is_success()`` /
``is_rejected()`` rather than comparing codes.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["SUCCESS", "Code", "Status"]


class Code(enum.IntEnum):
    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6

    def __str__(self) -> str:  # upstream's spelling, used in metric labels
        return _NAMES[self]


_NAMES = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}


@dataclass(frozen=True, slots=True)
class Status:
    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""
    error: BaseException | None = None

    @classmethod
    def unschedulable(cls, *reasons: str) -> Status:
        return cls(Code.UNSCHEDULABLE, reasons)

    @classmethod
    def unresolvable(cls, *reasons: str) -> Status:
        return cls(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)

    @classmethod
    def as_error(cls, err: BaseException) -> Status:
        return cls(Code.ERROR, (str(err),), error=err)

    def is_success(self) -> bool:
        return self.code == Code.SUCCESS

    def is_skip(self) -> bool:
        return self.code == Code.SKIP

    def is_wait(self) -> bool:
        return self.code == Code.WAIT

    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending: the pod cannot go here now."""
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)

    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        # Spelled out: ``dataclasses.replace`` costs three times as much, and every bind's status goes here.
        return self if self.plugin == plugin else Status(self.code, self.reasons, plugin, self.error)


SUCCESS = Status()
