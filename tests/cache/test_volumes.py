"""The volume store (``scheduler.cache.volumes``) and the cache's claim reference counts."""

from __future__ import annotations

from scheduler.cache import Cache, VolumeStore
from scheduler.cache.volumes import not_found
from tests.builders import node, pod


def pvc_body(name: str, ns: str = "default", **spec: object) -> dict[str, object]:
    return {"metadata": {"name": name, "namespace": ns}, "spec": dict(spec)}


def test_upsert_lookup_delete_by_kind() -> None:
    s = VolumeStore()
    v0 = s.version
    assert s.on_event("PersistentVolumeClaim", "ADDED", pvc_body("data", "ns1", accessModes=["ReadWriteOncePod"]))
    assert s.pvc("ns1", "data") is not None and s.pvc("default", "data") is None
    assert s.pvc("ns1", "data").access_modes == {"ReadWriteOncePod"}  # type: ignore[union-attr]
    s.on_event("PersistentVolume", "ADDED", {"metadata": {"name": "pv1"}, "spec": {"capacity": {"storage": "1Gi"}}})
    assert s.pv("pv1").capacity == 2**30  # type: ignore[union-attr]
    s.on_event("StorageClass", "ADDED", {"metadata": {"name": "wait"}, "provisioner": "p",
                                         "volumeBindingMode": "WaitForFirstConsumer"})
    assert s.storage_class("wait").binding_mode == "WaitForFirstConsumer"  # type: ignore[union-attr]
    s.on_event("CSINode", "ADDED", {"metadata": {"name": "n1"},
                                    "spec": {"drivers": [{"name": "d", "nodeID": "n1", "allocatable": {"count": 2}}]}})
    assert s.csi_node("n1").limits() == {"d": 2}  # type: ignore[union-attr]
    assert len(s) == 4 and s.version > v0
    s.on_event("PersistentVolumeClaim", "DELETED", pvc_body("data", "ns1"))
    assert s.pvc("ns1", "data") is None and len(s) == 3


def test_a_body_that_does_not_parse_reads_as_absent() -> None:
    s = VolumeStore()
    s.on_event("PersistentVolumeClaim", "ADDED", pvc_body("data"))
    assert s.on_event("PersistentVolumeClaim", "MODIFIED",
                      pvc_body("data", resources={"requests": {"storage": "lots"}})) is None
    assert s.pvc("default", "data") is None


def test_not_found_is_the_informer_listers_text() -> None:
    assert not_found("PersistentVolumeClaim", "c") == 'persistentvolumeclaim "c" not found'
    assert not_found("StorageClass", "s") == 'storageclass.storage.k8s.io "s" not found'


def test_claim_refs_follow_placement_and_what_if() -> None:
    c = Cache()
    c.add_node(node("n1"))
    spec = {"volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "data"}}]}
    p = pod("p", node_name="n1", spec=spec)
    c.add_pod(p)
    with c.lock:
        snap = c.snapshot()
        assert snap.pvc_in_use("default", "data") and not snap.pvc_in_use("other", "data")
        with snap.what_if() as w:
            w.remove(p, "n1")
            assert not snap.pvc_in_use("default", "data")
        assert snap.pvc_in_use("default", "data")
    c.remove_pod(p)
    assert c.pvc_refs == {}


def test_changes_list_what_changed_since_a_version() -> None:
    s = VolumeStore()
    assert s.changes(0) == ([], 0) and s.changes(1) == (None, 0)    # a reader ahead: another store
    s.on_event("PersistentVolumeClaim", "ADDED", pvc_body("a", "ns1"))
    mid = s.version
    s.on_event("PersistentVolume", "ADDED", {"metadata": {"name": "pv1"}, "spec": {}})
    s.delete("PersistentVolumeClaim", "ns1", "a")
    s.delete("PersistentVolumeClaim", "ns1", "a")        # nothing there: no change
    assert s.changes(0) == ([("PersistentVolumeClaim", ("ns1", "a")), ("PersistentVolume", ("", "pv1")),
                             ("PersistentVolumeClaim", ("ns1", "a"))], 3)
    assert s.changes(mid) == ([("PersistentVolume", ("", "pv1")), ("PersistentVolumeClaim", ("ns1", "a"))], 3)
    assert s.changes(s.version) == ([], 3)


def test_changes_further_back_than_the_journal_say_so() -> None:
    from scheduler.cache.volumes import JOURNAL_MAX

    s = VolumeStore()
    for i in range(JOURNAL_MAX + 10):
        s.on_event("PersistentVolume", "ADDED", {"metadata": {"name": f"pv{i}"}, "spec": {}})
    assert s.changes(0) == (None, s.version)
    recent, end = s.changes(s.version - 3)
    assert end == s.version
    assert recent == [("PersistentVolume", ("", f"pv{i}")) for i in range(JOURNAL_MAX + 7, JOURNAL_MAX + 10)]


def test_changes_made_after_the_version_was_read_wait_for_the_next_call() -> None:
    """A writer on another thread may add to the journal between a reader's reading ``version`` and
    its slicing the journal: those changes are not reported now (the reader's new position is before
    them), and the next call reports them."""
    s = VolumeStore()
    s.on_event("PersistentVolume", "ADDED", {"metadata": {"name": "pv0"}, "spec": {}})
    # As if the writer had journalled two changes but not yet bumped the version.
    s._journal.append((s.version + 1, ("PersistentVolume", ("", "pv1"))))
    s._journal.append((s.version + 2, ("PersistentVolume", ("", "pv2"))))
    got, end = s.changes(0)
    assert (got, end) == ([("PersistentVolume", ("", "pv0"))], 1)
    s.version += 2
    assert s.changes(end) == ([("PersistentVolume", ("", "pv1")), ("PersistentVolume", ("", "pv2"))], 3)
