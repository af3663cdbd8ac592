"""CEL selector results per (expression, device), shared by every node and cycle until a slice or
class changes, so a device's CEL runs once, not once per node or pod (``scheduler.dra.allocator``).
"""

from __future__ import annotations

from scheduler.dra.cel import CELError, DeviceEnv, compile_expression, device_env
from scheduler.dra.celcost import COST_LIMIT_EXCEEDED
from scheduler.model.dra import ResourceSlice


class SelectorCache:
    """CEL results per (expression, device), and each device's CEL value (a device: driver, pool,
    generation, slice name and index); the owner clears it (``reset``) when slices or classes change."""

    def __init__(self) -> None:
        self.results: dict[tuple[str, tuple[str, str, int, str, int]], bool | CELError] = {}
        self.envs: dict[tuple[str, str, int, str, int], DeviceEnv] = {}
        self.version: object = None

    def reset(self, version: object) -> None:
        if version != self.version:
            self.results.clear()
            self.envs.clear()
            self.version = version

    def matches(self, expression: str, s: ResourceSlice, index: int) -> bool:
        """Raises ``CELError`` for a runtime error (cached too: it is a property of the device),
        and upstream's cost-limit error, unevaluated, for an expression over the budget."""
        where = (s.driver, s.pool.name, s.pool.generation, s.name, index)
        key = (expression, where)
        got = self.results.get(key)
        if got is None:
            env = self.envs.get(where)
            if env is None:
                env = self.envs[where] = device_env(s.driver, s.devices[index])
            compiled = compile_expression(expression)
            if compiled.over_budget:
                # Upstream's runtime cost limit stops such an expression (cel.CostLimit in
                # dynamic-resource-allocation/cel/compile.go); ours is never started.
                got = CELError(COST_LIMIT_EXCEEDED)
            else:
                try:
                    got = compiled.device_matches(env)
                except CELError as e:
                    got = e
            self.results[key] = got
        if isinstance(got, CELError):
            raise got
        return got
