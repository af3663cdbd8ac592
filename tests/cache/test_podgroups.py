"""``cache.podgroups.PodGroupStore``: watch events in, parsed PodGroups out; an unreadable body reads
as absent rather than keeping a stale group."""

from __future__ import annotations

from typing import Any

from scheduler.cache.podgroups import PodGroupStore


def body(name: str, min_count: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ml", "uid": f"uid-{name}"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}}}


def test_added_modified_unreadable_and_deleted() -> None:
    store = PodGroupStore()
    assert store.get("ml", "a") is None
    added = store.on_event("ADDED", body("a", 2))
    assert added is not None and store.get("ml", "a") is added and added.min_count == 2
    assert store.on_event("MODIFIED", body("a", 4)) is store.get("ml", "a")
    assert store.get("ml", "a").min_count == 4    # type: ignore[union-attr]
    store.on_event("ADDED", body("b", 1))
    assert sorted(g.name for g in store) == ["a", "b"] and len(store) == 2
    # A body the model refuses: dropped, so the group reads as absent, never as its old self.
    assert store.on_event("MODIFIED", body("a", 0)) is None
    assert store.get("ml", "a") is None
    assert store.on_event("DELETED", body("b", 1)) is None
    assert len(store) == 0
