"""Every NodeResourcesFit / BalancedAllocation table runs three times: with the node table's own rule
for where a resource lives, with every resource in a dense column from its first entry, and with
every extended resource in the sparse side table for good (``scheduler.cache.node_table``). The
answers must not depend on the representation."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from scheduler.cache import node_table


@pytest.fixture(autouse=True, params=["rule", "dense", "sparse"])
def resource_home(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    if request.param != "rule":
        monkeypatch.setattr(node_table, "SPARSE_MIN_ROWS", 0 if request.param == "dense" else 10**9)
        monkeypatch.setattr(node_table, "SPARSE_FRACTION", 10**9)
    yield request.param
