"""The server state the registries read and write, declared once for the strategy and store mixins
(``strategy.Strategy``, ``generic.GenericStore``) that ``server.ApiServer`` is assembled from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import random
    from collections.abc import Mapping

    from scheduler.simulator.interfaces import ControllerHooks
    from scheduler.simulator.managed import FieldSets
    from scheduler.simulator.openapi import FieldChecker
    from scheduler.simulator.resources import ResourceRegistry
    from scheduler.simulator.store import Store

__all__ = ["StoreState"]


class StoreState:
    """The store and the resource types, the field managers, and the controllers told of writes."""

    store: Store
    registry: ResourceRegistry
    controllers: ControllerHooks
    managed: FieldSets
    fields: FieldChecker
    warnings: list[str] | None       # the current write request's Warning headers
    rng: random.Random
    feature_gates: Mapping[str, bool]   # the cluster's ``--feature-gates`` (unset: upstream's defaults)
