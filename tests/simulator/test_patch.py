"""Strategic merge patches by each list's patch merge key, as the API types declare them."""

from __future__ import annotations

from scheduler.simulator.patch import strategic_merge_patch

RESERVED = {"status": {"reservedFor": [{"resource": "pods", "name": "a", "uid": "ua"},
                                       {"resource": "pods", "name": "b", "uid": "ub"}]}}


def test_a_claims_reserved_for_merges_by_uid() -> None:
    """DynamicResources' Unreserve deletes its pod's entry by uid; a shared claim keeps the others
    (resource.k8s.io/v1 ResourceClaimStatus.ReservedFor: patchStrategy=merge, patchMergeKey=uid)."""
    out = strategic_merge_patch(RESERVED, {"status": {"reservedFor": [{"$patch": "delete", "uid": "ua"}]}})
    assert out["status"]["reservedFor"] == [{"resource": "pods", "name": "b", "uid": "ub"}]
    added = strategic_merge_patch(RESERVED, {"status": {"reservedFor": [
        {"resource": "pods", "name": "c", "uid": "uc"}]}})
    assert [r["uid"] for r in added["status"]["reservedFor"]] == ["ua", "ub", "uc"]
