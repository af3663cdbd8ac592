"""What a search reads of the ``Allocator`` that starts it (``AllocatorInputs``), the allocator's
optional ``Features`` (from the feature gates), and the small checks both the search and the
allocator make (``asks_capacity``, ``check_deadline``): typed here so that the search and the
fast plan sit below the class that drives them (``scheduler.dra.allocator``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Protocol

from scheduler.dra.errors import FilterTimeoutError
from scheduler.dra.pools import Openers, SliceIndex
from scheduler.dra.selector_cache import SelectorCache
from scheduler.features import enabled
from scheduler.model.dra import DeviceClass, DeviceID, ResourceClaim


@dataclass(frozen=True, slots=True)
class Features:
    """The allocator's optional features (upstream's ``structured.Features``), each from its gate;
    the defaults are 1.37's. ``from_gates`` reads them from a ``Handle``'s gates. ``device_taints``
    (DRADeviceTaints): taints keep a device from a request that does not tolerate them;
    ``device_binding_and_status`` (DRADeviceBindingConditions with DRAResourceClaimDeviceStatus, as
    upstream's ``plugins/feature.Features``): devices with binding conditions may be allocated
    (off, they are never picked)."""

    prioritized_list: bool = True           # DRAPrioritizedList
    admin_access: bool = True               # DRAAdminAccess
    partitionable_devices: bool = True      # DRAPartitionableDevices
    consumable_capacity: bool = True        # DRAConsumableCapacity
    fractional_capacity_range: bool = True  # DRAFractionalCapacityRange
    device_taints: bool = True              # DRADeviceTaints
    device_binding_and_status: bool = True  # DRADeviceBindingConditions and DRAResourceClaimDeviceStatus

    @staticmethod
    def from_gates(gates: Mapping[str, bool] | None) -> Features:
        return Features(enabled(gates, "DRAPrioritizedList"), enabled(gates, "DRAAdminAccess"),
                        enabled(gates, "DRAPartitionableDevices"), enabled(gates, "DRAConsumableCapacity"),
                        enabled(gates, "DRAFractionalCapacityRange"), enabled(gates, "DRADeviceTaints"),
                        enabled(gates, "DRADeviceBindingConditions")
                        and enabled(gates, "DRAResourceClaimDeviceStatus"))


Counters = dict[str, dict[str, Fraction]]


class AllocatorInputs(Protocol):
    """What a search reads of the ``Allocator`` that starts it (``scheduler.dra.allocator``): typed
    here so that the search and the fast plan sit below the class that drives them."""

    @property
    def claims(self) -> list[ResourceClaim]: ...
    @property
    def device_class(self) -> Callable[[str], DeviceClass | None]: ...
    @property
    def index(self) -> SliceIndex: ...
    @property
    def is_allocated(self) -> Callable[[DeviceID], bool]: ...
    @property
    def cache(self) -> SelectorCache: ...
    @property
    def features(self) -> Features: ...
    @property
    def pool_allocated(self) -> Callable[[str, str], Container[str]] | None: ...
    @property
    def device_allocated(self) -> Callable[[DeviceID], bool]: ...
    @property
    def consumed_capacity(self) -> Callable[[DeviceID], Mapping[str, Fraction] | None]: ...
    @property
    def available_counters(self) -> dict[tuple[str, str], Counters]: ...
    @property
    def fits_alone(self) -> dict[DeviceID, bool]: ...
    @property
    def pool_stamp(self) -> Callable[[str, str], int] | None: ...
    @property
    def openers(self) -> Openers: ...
    @property
    def pool_changes(self) -> Callable[[int], tuple[list[tuple[str, str]] | None, int]] | None: ...
    @property
    def has_shares(self) -> bool: ...
    @property
    def claims_ask_capacity(self) -> bool: ...


def asks_capacity(claims: Sequence[ResourceClaim]) -> bool:
    """Whether some request of ``claims`` has ``capacity`` (consumable capacity)."""
    return any(sub.has_capacity_requests for c in claims for r in c.spec.requests
               for sub in (r.first_available or ((r.exactly,) if r.exactly is not None else ())))


def check_deadline(deadline: float | None) -> None:
    """``FilterTimeoutError`` once ``time.monotonic()`` is past ``deadline`` (``None``: none)."""
    if deadline is not None and time.monotonic() >= deadline:
        raise FilterTimeoutError("filter operation aborted: context deadline exceeded")
