"""The volume plugins read the service's VolumeStore, the one the informers feed, even when it is
still empty at compile time (profiles compile before the first storage object arrives; an empty
store is falsy, and a plugin once swapped it for a private one that never saw a claim)."""

from __future__ import annotations

import pytest

from scheduler.cache import VolumeStore
from scheduler.framework.handle import Handle
from scheduler.plugins import nodevolumelimits, volumebinding, volumerestrictions, volumezone


@pytest.mark.parametrize("module", [volumebinding, volumezone, nodevolumelimits, volumerestrictions],
                         ids=lambda m: m.NAME)
def test_a_plugin_built_on_an_empty_store_reads_that_store(module: object) -> None:
    store = VolumeStore()
    assert len(store) == 0
    plugin = module.new(None, Handle(volumes=store))  # type: ignore[attr-defined]
    assert plugin._volumes is store
    store.on_event("PersistentVolumeClaim", "ADDED", {"metadata": {"name": "data", "namespace": "default"},
                                                       "spec": {}})
    assert plugin._volumes.pvc("default", "data") is not None
