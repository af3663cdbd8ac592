"""The Dynamic Resource Allocation objects the DynamicResources plugin reads: upstream's DeviceClass,
ResourceClaim, ResourceClaimTemplate and ResourceSlice listers, with the claim assume cache and the
in-flight allocations (upstream's ``SharedDRAManager``: ``dra_manager.go``), as one core store.

The edge (informers) feeds it with ``on_event(kind, event, body)`` or the typed ``upsert`` /
``delete``; the plugin reads it through ``Handle.dra``. It does no I/O and holds the parsed objects
only (``scheduler.model.dra``). A body that does not parse is dropped and reported by the return
value, so one bad object never blocks a cycle; the object then reads as absent.

**Allocated devices.** Every device named in some claim's ``status.allocation`` is in use, and so
is every device of an *in-flight* allocation: the allocation Reserve made for a claim that PreBind
has not written yet (``signal_pending_allocation``). The store keeps a count per ``DeviceID``,
updated incrementally on each claim change, so ``is_allocated`` is O(1) and a cycle never walks
all claims; the pools whose counts changed are journaled (``pool_changes``) for readers that keep
per-pool totals. A claim with an allocation in flight reads with that allocation (the assumption), and
no other pod may allocate it until the write is done or undone (``has_pending_allocation``).

State machine of one claim's allocation, as upstream's::

    unallocated --Reserve: signal_pending_allocation--> in flight
    in flight --Unreserve: remove_pending_allocation + restore--> unallocated
    in flight --PreBind wrote it: assume(written), remove_pending_allocation--> assumed
    assumed --the informer's newer object (upsert / on_event)--> allocated (informer's truth)

**Extended resources backed by DRA** (upstream's ``DeviceClassResolver``, the
``extendedresourcecache``): ``extended_resource_class(name)`` is the DeviceClass whose
``extendedResourceName`` is ``name``, or, for ``deviceclass.resource.kubernetes.io/<class>``, that
class; kept as upstream's cache keeps it (several classes naming it: the newest by
creationTimestamp, then the first by name; the holder renamed or deleted hands the name to the
best class still naming it, kubernetes/kubernetes#141110).
``extended_claim_for(pod)`` is the claim the scheduler created for a pod's extended resources
(annotated ``resource.kubernetes.io/extended-resource-claim: "true"``, controlled by the pod),
indexed by the pod's uid.

**DeviceTaintRules** (``resource.k8s.io/v1``, DRADeviceTaintRules) are kept too, and ``slices()``
hands out the slices with the rules' taints added to the devices they select
(``scheduler.model.devicetaintrules.apply_rules``, upstream's ``resourceslice/tracker``): the allocator reads
one list of taints per device (unless ``apply_taint_rules`` is off: the DRADeviceTaintRules gate).
The patched list is built once per ``slices_version``.
``rule_touches`` says whether a rule selects a device of some slice: a rule change that does is a
ResourceSlice update for the queue, as the tracker's patched-slice events are upstream.

``version`` is bumped on every change; ``slices_version`` only when slices, classes or taint rules
change, so the CEL results cached per device stay valid across cycles until one of them changes.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Container, Iterator, Mapping
from fractions import Fraction
from typing import Any

from scheduler.errors import ParseError
from scheduler.model import Pod
from scheduler.model.devicetaintrules import DeviceTaintRule, apply_rules, parse_device_taint_rule, rule_selects
from scheduler.model.dra import (
    IMPLICIT_EXTENDED_RESOURCE_PREFIX,
    DeviceClass,
    DeviceID,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
    parse_device_class,
    parse_resource_claim,
    parse_resource_claim_template,
    parse_resource_slice,
)

__all__ = ["KINDS", "DraObject", "DraStore", "not_found"]

DraObject = DeviceClass | ResourceClaim | ResourceClaimTemplate | ResourceSlice | DeviceTaintRule

# The kinds the edge watches for the store, as (group, version, plural, kind).
KINDS: tuple[tuple[str, str, str, str], ...] = (
    ("resource.k8s.io", "v1", "deviceclasses", "DeviceClass"),
    ("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim"),
    ("resource.k8s.io", "v1", "resourceclaimtemplates", "ResourceClaimTemplate"),
    ("resource.k8s.io", "v1", "resourceslices", "ResourceSlice"),
    ("resource.k8s.io", "v1", "devicetaintrules", "DeviceTaintRule"),
)
_PARSERS: dict[str, Any] = {
    "DeviceClass": parse_device_class, "ResourceClaim": parse_resource_claim,
    "ResourceClaimTemplate": parse_resource_claim_template, "ResourceSlice": parse_resource_slice,
    "DeviceTaintRule": parse_device_taint_rule,
}
_NAMESPACED = frozenset({"ResourceClaim", "ResourceClaimTemplate"})
# client-go's listers: NotFound names the group-qualified singular resource.
_RESOURCE = {"DeviceClass": "deviceclass.resource.k8s.io", "ResourceClaim": "resourceclaim.resource.k8s.io",
             "ResourceClaimTemplate": "resourceclaimtemplate.resource.k8s.io",
             "ResourceSlice": "resourceslice.resource.k8s.io", "DeviceTaintRule": "devicetaintrule.resource.k8s.io"}
# The kinds whose change changes what the allocator reads of the slices (``slices_version``).
_SLICE_KINDS = frozenset({"ResourceSlice", "DeviceClass", "DeviceTaintRule"})


_NONE: frozenset[str] = frozenset()
_JOURNAL_MAX = 4096


def not_found(kind: str, name: str) -> str:
    """The text of the informer lister's NotFound error for ``kind`` ``name``."""
    return f'{_RESOURCE[kind]} "{name}" not found'


def _key(obj: DraObject) -> tuple[str, str]:
    return (obj.namespace, obj.name) if isinstance(obj, ResourceClaim | ResourceClaimTemplate) else ("", obj.name)


def _older(rv: str, than: str) -> bool:
    """Whether resourceVersion ``rv`` is older than ``than`` (both integers, as the API server's
    are; anything else compares as not older, as the assume cache does not guess)."""
    return rv.isdigit() and than.isdigit() and int(rv) < int(than)


def _devices(claim: ResourceClaim | None) -> tuple[DeviceID, ...]:
    """The devices the claim's allocation holds: admin access holds none (upstream's
    ``GatherAllocatedState`` skips such results); shared ones (with a ``shareID``) count too."""
    if claim is None or claim.allocation is None:
        return ()
    return tuple(r.id for r in claim.allocation.results if r.admin_access is not True)


def _shares(claim: ResourceClaim | None) -> tuple[tuple[DeviceID, Mapping[str, Fraction] | None], ...]:
    """The shared devices (consumable capacity: a result with a ``shareID``) and what each took."""
    if claim is None or claim.allocation is None:
        return ()
    return tuple((r.id, r.consumed_capacity) for r in claim.allocation.results
                 if r.admin_access is not True and r.share_id is not None)


class DraStore:
    """DeviceClasses, ResourceClaims, ResourceClaimTemplates and ResourceSlices by (namespace, name)."""

    def __init__(self) -> None:
        self._objects: dict[str, dict[tuple[str, str], DraObject]] = {k: {} for k in _PARSERS}
        # claim key -> the informer's claim an assumption shadows (None: there was none)
        self._assumed: dict[tuple[str, str], ResourceClaim | None] = {}
        # claim uid -> the claim with the allocation Reserve made (not written yet)
        self._in_flight: dict[str, ResourceClaim] = {}
        self._allocated: dict[DeviceID, int] = {}
        # The same counts' device names per (driver, pool): the allocator's fast path tests a
        # device with one string lookup (``pool_allocated``).
        self._by_pool: dict[tuple[str, str], dict[str, int]] = {}
        # Consumable capacity: how many of the counts above are shares of a device (a result
        # with a shareID: not held whole), and the capacity the shares consumed, summed.
        self._shared: dict[DeviceID, int] = {}
        self._consumed: dict[DeviceID, dict[str, Fraction]] = {}
        # The pools whose allocated devices changed, in order (a journal: ``pool_changes``), from
        # absolute position ``_journal_base``; cleared when long, a reader behind it starts over.
        self._journal: list[tuple[str, str]] = []
        self._journal_base = 0
        # (driver, pool) -> the count of device changes when the pool's last came (``pool_stamp``):
        # never reset, so a stamp names one state of the pool's allocated devices and shares.
        self._changes = 0
        self._stamps: dict[tuple[str, str], int] = {}
        # extendedResourceName -> the class backing it; pod uid -> its extended-resource claim's key
        self._extended: dict[str, DeviceClass] = {}
        # extendedResourceName -> class name -> every class naming it (the winner's candidates)
        self._extended_candidates: dict[str, dict[str, DeviceClass]] = {}
        self._extended_claims: dict[str, tuple[str, str]] = {}
        self.version = 0
        self.slices_version = 0
        # the slices with the taint rules applied, for ``slices_version``
        self._patched: tuple[int, list[ResourceSlice]] | None = None
        # DRADeviceTaintRules: whether the rules' taints are applied at all
        self.apply_taint_rules = True
        # Called with (claim before, claim after) when assume or restore changes the claim the
        # plugins read: upstream's assume cache sends those as update events to the scheduler's
        # handlers, so pods rejected while the claim was in flight are moved (the service sets it).
        self.on_claim_change: Callable[[ResourceClaim | None, ResourceClaim | None], None] | None = None

    def __len__(self) -> int:
        return sum(len(v) for v in self._objects.values())

    # --- allocated-device bookkeeping --------------------------------------------------------
    def _count_claim(self, claim: ResourceClaim | None, delta: int) -> None:
        self._count(_devices(claim), delta)
        for d, consumed in _shares(claim):
            n = self._shared.get(d, 0) + delta
            if n > 0:
                self._shared[d] = n
            else:
                self._shared.pop(d, None)
            if consumed is not None:
                total = self._consumed.setdefault(d, {})
                for name, amount in consumed.items():
                    total[name] = total.get(name, 0) + delta * amount
                if not any(total.values()):
                    del self._consumed[d]

    def _count(self, devices: tuple[DeviceID, ...], delta: int) -> None:
        if len(self._journal) > _JOURNAL_MAX:
            self._journal_base += len(self._journal)
            self._journal.clear()
        for d in devices:
            self._journal.append((d.driver, d.pool))
            self._changes += 1
            self._stamps[(d.driver, d.pool)] = self._changes
            n = self._allocated.get(d, 0) + delta
            pool = self._by_pool.setdefault((d.driver, d.pool), {})
            if n > 0:
                self._allocated[d] = n
                pool[d.device] = n
            else:
                self._allocated.pop(d, None)
                pool.pop(d.device, None)
                if not pool:
                    del self._by_pool[(d.driver, d.pool)]

    def _set_claim(self, key: tuple[str, str], claim: ResourceClaim | None) -> None:
        claims = self._objects["ResourceClaim"]
        old = claims.get(key)
        if isinstance(old, ResourceClaim):
            self._count_claim(old, -1)
            if old.is_extended_resource_claim and old.controller is not None \
                    and self._extended_claims.get(old.controller[3]) == key:
                del self._extended_claims[old.controller[3]]
        if claim is None:
            claims.pop(key, None)
        else:
            claims[key] = claim
            self._count_claim(claim, +1)
            if claim.is_extended_resource_claim and claim.controller is not None:
                self._extended_claims[claim.controller[3]] = key

    def _index_class(self, old: DeviceClass | None, new: DeviceClass | None) -> None:
        """extendedresourcecache's handlers, as fixed by kubernetes/kubernetes#141110: every class
        naming an extendedResourceName is a candidate for it, and the name maps to the newest by
        creationTimestamp, then the first by name. A class renaming it or going leaves the others
        to take it (1.37's cache dropped the name instead)."""
        touched: set[str] = set()
        if old is not None and old.extended_resource_name:
            cands = self._extended_candidates.get(old.extended_resource_name)
            if cands is not None:
                cands.pop(old.name, None)
            touched.add(old.extended_resource_name)
        if new is not None and new.extended_resource_name:
            self._extended_candidates.setdefault(new.extended_resource_name, {})[new.name] = new
            touched.add(new.extended_resource_name)
        for name in touched:
            best: DeviceClass | None = None
            for c in self._extended_candidates.get(name, {}).values():
                if best is None or c.created > best.created or (c.created == best.created and c.name < best.name):
                    best = c
            if best is None:
                self._extended.pop(name, None)
                self._extended_candidates.pop(name, None)
            else:
                self._extended[name] = best

    # --- writes ----------------------------------------------------------------------------
    def upsert(self, obj: DraObject) -> None:
        """The informer's object: it replaces any assumption about it."""
        kind, key = type(obj).__name__, _key(obj)
        if isinstance(obj, ResourceClaim):
            self._assumed.pop(key, None)
            self._set_claim(key, obj)
        else:
            if isinstance(obj, DeviceClass):
                old = self._objects[kind].get(key)
                self._index_class(old if isinstance(old, DeviceClass) else None, obj)
            self._objects[kind][key] = obj
            if kind in _SLICE_KINDS:
                self.slices_version += 1
        self.version += 1

    def delete(self, kind: str, namespace: str, name: str) -> bool:
        """Forget an object; whether it was there."""
        key = (namespace if kind in _NAMESPACED else "", name)
        if key not in self._objects[kind]:
            return False
        if kind == "ResourceClaim":
            self._assumed.pop(key, None)
            self._set_claim(key, None)
        else:
            old = self._objects[kind].pop(key)
            if isinstance(old, DeviceClass):
                self._index_class(old, None)
            if kind in _SLICE_KINDS:
                self.slices_version += 1
        self.version += 1
        return True

    def on_event(self, kind: str, event: str, body: Mapping[str, Any]) -> DraObject | None:
        """Apply one watch event (ADDED / MODIFIED / DELETED) of ``kind``; the parsed object, or
        ``None`` for a deletion or a body that does not parse (then the object reads as absent)."""
        meta = body.get("metadata") or {}
        ns = str(meta.get("namespace") or "default") if kind in _NAMESPACED else ""
        name = str(meta.get("name") or "")
        if event == "DELETED":
            self.delete(kind, ns, name)
            return None
        try:
            obj: DraObject = _PARSERS[kind](body)
        except ParseError:
            self.delete(kind, ns, name)
            return None
        self.upsert(obj)
        return obj

    def assume(self, claim: ResourceClaim) -> bool:
        """Shadow the informer's claim with ``claim`` (upstream's ``AssumeClaimAfterAPICall``: the
        object PreBind wrote) until ``restore`` or the next watch event for it; whether it did. As
        upstream's assume cache, an object older than the one held is not assumed (the watch was
        faster than the write's answer)."""
        key = _key(claim)
        held = self._objects["ResourceClaim"].get(key)
        if isinstance(held, ResourceClaim) and _older(claim.resource_version, held.resource_version):
            return False
        before = held if isinstance(held, ResourceClaim) else None
        if key not in self._assumed:
            self._assumed[key] = before
        self._set_claim(key, claim)
        self.version += 1
        if self.on_claim_change is not None:
            self.on_claim_change(before, claim)
        return True

    def restore(self, namespace: str, name: str) -> None:
        """Undo ``assume`` (upstream's ``AssumedClaimRestore``); nothing if there is no assumption."""
        key = (namespace, name)
        if key not in self._assumed:
            return
        got = self._objects["ResourceClaim"].get(key)
        restored = self._assumed.pop(key)
        self._set_claim(key, restored)
        self.version += 1
        if self.on_claim_change is not None:
            self.on_claim_change(got if isinstance(got, ResourceClaim) else None, restored)

    def is_assumed(self, namespace: str, name: str) -> bool:
        return (namespace, name) in self._assumed

    def signal_pending_allocation(self, claim: ResourceClaim) -> None:
        """Reserve's allocation for ``claim`` (which carries it): its devices count as allocated,
        and no other pod may allocate the claim until it is written or removed."""
        self.remove_pending_allocation(claim.uid)
        self._in_flight[claim.uid] = claim
        self._count_claim(claim, +1)
        self.version += 1

    def remove_pending_allocation(self, uid: str) -> bool:
        """Forget an in-flight allocation; whether there was one."""
        claim = self._in_flight.pop(uid, None)
        if claim is None:
            return False
        self._count_claim(claim, -1)
        self.version += 1
        return True

    def has_pending_allocation(self, uid: str) -> bool:
        return uid in self._in_flight

    def pending_allocation(self, uid: str) -> ResourceClaim | None:
        return self._in_flight.get(uid)

    # --- lookups (upstream's listers' Get / List) --------------------------------------------
    def device_class(self, name: str) -> DeviceClass | None:
        obj = self._objects["DeviceClass"].get(("", name))
        return obj if isinstance(obj, DeviceClass) else None

    def claim(self, namespace: str, name: str) -> ResourceClaim | None:
        obj = self._objects["ResourceClaim"].get((namespace, name))
        return obj if isinstance(obj, ResourceClaim) else None

    def template(self, namespace: str, name: str) -> ResourceClaimTemplate | None:
        obj = self._objects["ResourceClaimTemplate"].get((namespace, name))
        return obj if isinstance(obj, ResourceClaimTemplate) else None

    def extended_resource_class(self, resource: str) -> DeviceClass | None:
        """The DeviceClass backing extended resource ``resource`` (upstream's ``GetDeviceClass``)."""
        if resource.startswith(IMPLICIT_EXTENDED_RESOURCE_PREFIX):
            return self.device_class(resource[len(IMPLICIT_EXTENDED_RESOURCE_PREFIX):])
        return self._extended.get(resource)

    def extended_claim_for(self, pod: Pod) -> ResourceClaim | None:
        """The extended-resource claim created for ``pod`` (upstream's ``findExtendedResourceClaim``:
        annotated, and controlled by the pod, by name and uid)."""
        key = self._extended_claims.get(pod.uid)
        claim = self.claim(*key) if key is not None else None
        if claim is None or claim.controller is None or claim.controller[2] != pod.name:
            return None
        return claim

    def slice(self, name: str) -> ResourceSlice | None:
        """The slice as its driver published it (without the rules' taints)."""
        obj = self._objects["ResourceSlice"].get(("", name))
        return obj if isinstance(obj, ResourceSlice) else None

    def taint_rule(self, name: str) -> DeviceTaintRule | None:
        obj = self._objects["DeviceTaintRule"].get(("", name))
        return obj if isinstance(obj, DeviceTaintRule) else None

    def taint_rules(self) -> list[DeviceTaintRule]:
        return [obj for obj in self._objects["DeviceTaintRule"].values() if isinstance(obj, DeviceTaintRule)]

    def rule_touches(self, rule: DeviceTaintRule | None) -> bool:
        """Whether ``rule`` selects some device of some slice (its change changes a slice)."""
        if rule is None or not self.apply_taint_rules:
            return False
        return any(rule_selects(rule, obj.driver, obj.pool.name, d.name)
                   for obj in self._objects["ResourceSlice"].values() if isinstance(obj, ResourceSlice)
                   for d in obj.devices)

    def device_classes(self) -> Iterator[DeviceClass]:
        for obj in self._objects["DeviceClass"].values():
            if isinstance(obj, DeviceClass):
                yield obj

    def claims(self) -> Iterator[ResourceClaim]:
        for obj in self._objects["ResourceClaim"].values():
            if isinstance(obj, ResourceClaim):
                yield obj

    def slices(self) -> list[ResourceSlice]:
        """Every slice, in the order they arrived (the allocator's order, as upstream's lister's),
        with the DeviceTaintRules' taints on the devices they select."""
        got = self._patched
        if got is not None and got[0] == self.slices_version:
            return list(got[1])
        raw = [obj for obj in self._objects["ResourceSlice"].values() if isinstance(obj, ResourceSlice)]
        patched = apply_rules(raw, self.taint_rules() if self.apply_taint_rules else [])
        self._patched = (self.slices_version, patched)
        return list(patched)

    def is_allocated(self, device: DeviceID) -> bool:
        """Whether a claim's allocation (written, assumed or in flight) holds ``device``, shared
        or whole (upstream's ``IsDeviceAllocated``)."""
        return device in self._allocated

    def is_held_whole(self, device: DeviceID) -> bool:
        """Whether an allocation holds ``device`` whole, not as a share (upstream's
        ``AllocatedDevices``: what no other claim may take)."""
        return self._allocated.get(device, 0) > self._shared.get(device, 0)

    @property
    def has_shares(self) -> bool:
        """Whether some allocation shares a device (consumable capacity)."""
        return bool(self._shared)

    def consumed_capacity(self, device: DeviceID) -> Mapping[str, Fraction] | None:
        """The capacity the shares of ``device`` consumed, summed (upstream's
        ``AggregatedCapacity``); ``None`` when it has none."""
        return self._consumed.get(device)

    def pool_allocated(self, driver: str, pool: str) -> Container[str]:
        """The names of the devices of pool ``driver``/``pool`` that ``is_allocated`` holds: the
        live set (read it at once, never keep it), empty for a pool with none."""
        return self._by_pool.get((driver, pool), _NONE)

    def pool_stamp(self, driver: str, pool: str) -> int:
        """A number that changes whenever an allocation of a device of pool ``driver``/``pool``
        comes or goes, shares included (0: never one): a reader keeps what it derived from the
        pool's allocated devices (the allocator's candidates) for as long as the stamp holds."""
        return self._stamps.get((driver, pool), 0)

    def allocated_among(self, driver: str, pool: str, names: Collection[str]) -> int:
        """How many of the devices ``names`` of pool ``driver``/``pool`` ``is_allocated`` holds (a
        name listed twice counts twice): what NodeResourcesFit's scoring of a DRA-backed extended
        resource reads as a node's requested amount. One set intersection for a frozenset."""
        held = self._by_pool.get((driver, pool))
        if not held:
            return 0
        if isinstance(names, frozenset):
            return len(held.keys() & names)
        return sum(1 for n in names if n in held)

    def pool_changes(self, since: int) -> tuple[list[tuple[str, str]] | None, int]:
        """The (driver, pool) of every change to the allocated devices since journal position
        ``since`` (repeats included), and the position to ask from next time; ``None`` when
        ``since`` is older than what the journal keeps (then re-read everything). Lets a reader
        that keeps counts per pool (``DraScoring``) update only the pools a cycle changed."""
        end = self._journal_base + len(self._journal)
        if since < self._journal_base:
            return None, end
        return self._journal[since - self._journal_base:], end

    def allocated_devices(self) -> frozenset[DeviceID]:
        return frozenset(self._allocated)
