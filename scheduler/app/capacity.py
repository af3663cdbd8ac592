"""``kopf-scheduler capacity -f pod.yaml``: how many more replicas of a pod fit now, where, and how
many more would fit if preemption ran.

The cluster is read as ``explain`` reads it (``explain.list_cluster`` live, read-only, or
``explain.listings_from_objects`` from a dump) into a scheduler of its own (``explain.loaded_service``)
whose client writes nothing. Then the replicas are placed one by one through that scheduler's own
scheduling cycle (``Scheduler.schedule_one``: PreFilter, Filter, Score and host selection with the
profile's real plugins, then *assume*, Reserve and Permit), so every replica stays assumed in the
in-memory cache and the next one sees it: its resources, ports, inter-pod (anti-)affinity and
spreading terms, its volumes and its DRA claims (Reserve allocates them in the scheduler's stores).
No binding cycle runs: nothing leaves the process.

Each replica is the manifest with a name and uid of its own (``<name>-<n>``). As the controllers
would before the scheduler sees the pod, a replica gets its own ResourceClaim for each claim made
from a ResourceClaimTemplate (``pkg/controller/resourceclaim``: the template's spec, labels and
annotations, ``resource.kubernetes.io/pod-claim-name``, the pod as owner, the name in
``status.resourceClaimStatuses``) and its own PVC ``<pod>-<volume>`` for each generic ephemeral
volume (``pkg/controller/volume/ephemeral``). A PVC or claim named directly is shared by every
replica, as a Deployment's replicas share it.

The first replica that fits nowhere ends the plain count (``fits``, ``perNode``); its cycle's
FitError, as the scheduler's FailedScheduling event words it, is ``firstUnfit``. That same cycle ran
the profile's PostFilter (DefaultPreemption's dry run on the snapshot); when it nominated a node, the
victims it would evict (caught by the client, which deletes nothing) are removed from the in-memory
cache through the service's own pod-deletion handler, and the replica's next cycle places it. That
goes on, replica by replica, until one fits nowhere even with preemption or ``max`` replicas are
placed in all: ``withPreemption`` counts every replica placed (``fits`` included) and the victims
by priority. Replicas share one priority, so they never preempt one another.

A pod naming a gang PodGroup (``spec.schedulingGroup``; ``feature_gates`` with ``GenericWorkload``
on, and GangScheduling in the profile) is answered for its group too, in ``gang``: the scheduler
places a gang whole or not at all, so "how many replicas fit" is not its question; "does the whole
group fit" is. ``minCount`` replicas of the pod join the group's existing pending members, and the
PodGroup cycle runs over them hypothetically (``podgroup_cycle.what_if``: the cycle's own
member-by-member placement, in a ``WhatIf`` on the cache, undone after), with the group's bound
members counted as placed: ``gang`` says whether the quorum is met, where the members go, and
otherwise the per-node diagnosis the scheduler would write on the PodGroup. ``fits``, ``perNode``
and ``withPreemption`` keep their meaning: replicas one at a time, outside the group. With the gate
off the scheduler places such a pod alone, so it is counted pod by pod, and ``note`` says so.

Not modelled: a victim's claims and volumes stay allocated (the claim controller would release
them only after the victim is gone), and a gang does not preempt (nor does the scheduler's: see
``podgroup_cycle``).
"""

from __future__ import annotations

import asyncio
import copy
import re
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from scheduler.app.explain import (
    ExplainError,
    Listings,
    _NoWrites,
    framework_for,
    list_cluster,
    listings_from_objects,
    loaded_service,
)
from scheduler.app.kinds import watched_kinds
from scheduler.cycle import Binding, Dropped, Failure
from scheduler.errors import ClientError, ParseError
from scheduler.framework import Framework
from scheduler.framework.types import QueuedPodInfo
from scheduler.kubeapi import KubeClient
from scheduler.model import Pod, parse_pod
from scheduler.model.podgroup import PodGroup
from scheduler.plugins.gangscheduling import NAME as GANG_SCHEDULING
from scheduler.plugins.gangscheduling import waiting_for_group
from scheduler.podgroup_cycle import what_if
from scheduler.service import SchedulerService

__all__ = ["DEFAULT_MAX", "CapacityError", "capacity", "format_capacity"]

Obj = dict[str, Any]
# The bound on replicas placed when --max is not given: enough for any one workload, and a
# replica's cycle costs milliseconds, so the answer comes in seconds.
DEFAULT_MAX = 1000
# resourceclaim controller's annotation on a claim generated from a template (upstream's
# ``resourceapi.PodResourceClaimAnnotation``).
POD_CLAIM_NAME = "resource.kubernetes.io/pod-claim-name"
# storage/v1 IsDefaultStorageClassAnnotation: the class the DefaultStorageClass admission plugin
# writes into a new PVC that names none.
DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
# The nodes the text output names per line; --output json names all.
TEXT_NODES = 10
GANG_NOTE = ("the pod names spec.schedulingGroup, but with the GenericWorkload gate off (upstream's default) "
             "PodGroups are not scheduled as gangs: replicas are counted pod by pod, as the scheduler would "
             "place them; --feature-gates GenericWorkload=true answers for the whole group, in gang")
NO_GANG_NOTE = ("the pod names spec.schedulingGroup, but the profile runs no GangScheduling, so the scheduler "
                "places its pods one by one: replicas are counted pod by pod")


class CapacityError(Exception):
    """A question capacity cannot answer: a bad manifest, an unknown profile, an unreadable cluster."""


class _Counting(_NoWrites):
    """Writes nothing; notes the victims DefaultPreemption would evict, instead of evicting them."""

    def __init__(self) -> None:
        self.victims: list[Pod] = []

    async def preempt(self, victim: Pod, preemptor: Pod, node_name: str, group: PodGroup | None = None) -> None:
        self.victims.append(victim)

    async def clear_nomination(self, pod: Pod) -> None:
        return None                 # a lower-priority nomination: nothing to clear in memory


async def capacity(body: Obj, *, api: KubeClient | None = None, objects: Iterable[Obj] | None = None,
                   profile: str | None = None, max_replicas: int = DEFAULT_MAX,
                   feature_gates: Mapping[str, bool] | None = None) -> Obj:
    """The answer for the pod ``body`` over the live cluster (``api``: the pod is defaulted by a
    server-side dry-run create, as for ``explain -f``; nothing is created) or a dump's ``objects``:
    ``{pod, profile, max, fits, perNode, withPreemption: {fits, perNode, victims}, firstUnfit}``,
    ``gang`` for a member of a gang PodGroup (``_gang``), ``note`` for a pod in a scheduling group
    that is counted pod by pod. ``feature_gates`` as ``run --feature-gates``."""
    if not isinstance(body, dict):
        raise CapacityError(f"-f: expected a Pod, got {type(body).__name__} {body!r:.60}")
    if body.get("kind", "Pod") != "Pod":
        raise CapacityError(f"-f: expected a Pod, got a {body.get('kind')}")
    meta = dict(body.get("metadata") or {})
    meta.setdefault("namespace", "default")
    if not meta.get("name"):
        meta["name"] = str(meta.get("generateName") or "replica").rstrip("-") or "replica"
    meta.pop("generateName", None)
    body = {**body, "apiVersion": "v1", "kind": "Pod", "metadata": meta}
    kinds = watched_kinds(feature_gates)
    dumped = list(objects or ())
    if api is not None:
        try:
            body = await api.request("POST", f"/api/v1/namespaces/{meta['namespace']}/pods", body,
                                     params={"dryRun": "All"})
        except ClientError as e:
            raise CapacityError(f"the API server refuses the pod: {e}") from None
        try:
            listings = await list_cluster(api, kinds)
        except ExplainError as e:
            raise CapacityError(str(e)) from None
    else:
        body = _admitted(body, dumped)
        listings = listings_from_objects(dumped, kinds)
    if (body.get("spec") or {}).get("nodeName"):
        raise CapacityError("-f: the pod names spec.nodeName, so no scheduler places it")
    if (body.get("spec") or {}).get("schedulingGates"):
        raise CapacityError("-f: the pod has spec.schedulingGates, so no scheduler places it until they are removed")
    client = _Counting()
    service = loaded_service(listings, kinds, feature_gates, client=client)
    try:
        first = parse_pod(_replica(body, 0))
    except ParseError as e:
        raise CapacityError(f"the pod cannot be read: {e}") from None
    try:
        fwk, shadow = framework_for(service, first, profile)
    except ExplainError as e:
        raise CapacityError(str(e)) from None
    if shadow is not None:
        raise CapacityError(f"--profile {profile}: a shadow profile never schedules, so it has no capacity to "
                            f"count; ask its live profile ({shadow.shadow_of}) or explain -f --profile {profile}")
    body = {**body, "spec": {**body["spec"], "schedulerName": fwk.profile_name}}
    gang: Obj | None = None
    note: str | None = None
    if first.scheduling_group:
        if not service.generic_workload:
            note = GANG_NOTE
        elif GANG_SCHEDULING not in fwk.plugins_by_name:
            note = NO_GANG_NOTE
        else:
            gang = _gang(service, fwk, body, listings, first)
    if gang is not None:
        # The pod-by-pod count is of replicas outside the group (fits, perNode keep their meaning).
        body = {**body, "spec": {k: v for k, v in body["spec"].items() if k != "schedulingGroup"}}
    out = await _place(service, client, body, listings, max_replicas)
    out = {"pod": f"{meta['namespace']}/{meta['name']}", "profile": fwk.profile_name, "max": max_replicas, **out}
    if gang is not None:
        out["gang"] = gang
    if note is not None:
        out["note"] = note
    return out


def _gang(service: SchedulerService, fwk: Framework, body: Obj, listings: Listings, first: Pod) -> Obj | None:
    """``gang``: ``minCount`` replicas of ``body`` with the group's pending members, through the
    PodGroup cycle run hypothetically (the module docstring); None for a group that is no gang
    (its pods are placed one by one, as the pod-by-pod count does). The replicas are the first
    ``minCount`` of the count's, with the same claims and volumes made for them."""
    store = service.pod_groups
    group = store.get(first.namespace, first.scheduling_group)
    key = f"{first.namespace}/{first.scheduling_group}"
    if group is None:
        return {"podGroup": key, "fits": False, "minCount": None, "replicas": 0, "bound": 0, "pending": 0,
                "perNode": {}, "unplaced": 0, "diagnosis": waiting_for_group(first.scheduling_group)}
    if not group.is_gang:
        return None
    replicas = []
    for n in range(group.min_count):
        replica = _replica(body, n)
        _controllers(service, replica, listings, n)
        replicas.append(parse_pod(replica))
    a = what_if(service.scheduler, fwk, group, store, replicas)
    tried = len(a.placed) + len(a.unplaced)
    return {"podGroup": key, "fits": a.fits, "minCount": group.min_count, "replicas": len(replicas),
            "bound": len(a.bound), "pending": tried - len(replicas), "perNode": dict(a.per_node),
            "unplaced": len(a.unplaced), "diagnosis": None if a.fits else a.message}


async def _place(service: SchedulerService, client: _Counting, body: Obj, listings: Listings,
                 max_replicas: int) -> Obj:
    """Replicas one by one through the service's scheduling cycle, as the module docstring says."""
    plain: Counter[str] = Counter()
    placed: Counter[str] = Counter()
    victims: Counter[str] = Counter()
    first_unfit: str | None = None
    n = 0
    while sum(placed.values()) < max_replicas:
        replica = _replica(body, n)
        _controllers(service, replica, listings, n)
        pod = parse_pod(replica)
        outcome = service.scheduler.schedule_one(QueuedPodInfo(pod, time.monotonic(), time.monotonic(), attempts=1))
        if isinstance(outcome, Failure) and outcome.nominated_node and not outcome.error:
            if first_unfit is None:
                first_unfit = outcome.message
            gone = await _victims(service, client)
            for v in gone:
                victims[str(v.priority)] += 1
                # Through the service's handler, as the victim's watch DELETED event would come.
                service.on_pod("DELETED", {"metadata": {"uid": v.uid, "namespace": v.namespace, "name": v.name}})
            # The replica's next cycle, nominated to the node its victims freed, as after a real preemption.
            replica["status"] = {**(replica.get("status") or {}), "nominatedNodeName": outcome.nominated_node}
            pod = parse_pod(replica)
            outcome = service.scheduler.schedule_one(QueuedPodInfo(pod, time.monotonic(), time.monotonic(),
                                                                   attempts=2))
        if not isinstance(outcome, Binding):
            if first_unfit is None:
                first_unfit = (outcome.message if isinstance(outcome, Failure)
                               else outcome.why if isinstance(outcome, Dropped) else "a gang is placed as a group")
            break
        placed[outcome.result.node] += 1
        if first_unfit is None:
            plain[outcome.result.node] += 1
        n += 1
    await _victims(service, client)          # nothing of a last, failed preemption left running
    return {"fits": sum(plain.values()), "perNode": _sorted(plain),
            "withPreemption": {"fits": sum(placed.values()), "perNode": _sorted(placed),
                               "victims": dict(sorted(victims.items(), key=lambda kv: -int(kv[0])))},
            "firstUnfit": first_unfit}


async def _victims(service: SchedulerService, client: _Counting) -> list[Pod]:
    """Let the preemption the last cycle started run its course (its evictions reach only
    ``client``), and take the victims it named. The service's background tasks are its ``_spawn``'s."""
    pending = set(service._background)
    if pending:
        await asyncio.wait(pending, timeout=10)
    out, client.victims = client.victims, []
    return out


def _sorted(c: Counter[str]) -> dict[str, int]:
    """Most replicas first, then by node name in natural order (``n2`` before ``n10``)."""
    return dict(sorted(c.items(), key=lambda kv: (-kv[1], _natural(kv[0]))))


def _natural(name: str) -> list[tuple[int, int | str]]:
    return [(0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", name) if part]


def _replica(body: Obj, n: int) -> Obj:
    meta = body["metadata"]
    name = f"{meta['name']}-{n + 1}"
    return {**copy.deepcopy(body), "metadata": {**copy.deepcopy(meta), "name": name,
                                                "uid": f"capacity-{meta['namespace']}-{name}"}}


def _controllers(service: SchedulerService, replica: Obj, listings: Listings, n: int) -> None:
    """What the controllers create for a new pod before it is scheduled: a ResourceClaim per
    template claim (``resourceclaim`` controller), a PVC per generic ephemeral volume (``ephemeral``
    controller), fed to the service as their watch events would be."""
    meta, spec = replica["metadata"], replica.get("spec") or {}
    ns, name, uid = meta["namespace"], meta["name"], meta["uid"]
    owner = [{"apiVersion": "v1", "kind": "Pod", "name": name, "uid": uid, "controller": True,
              "blockOwnerDeletion": True}]
    templates = {(t["metadata"].get("namespace"), t["metadata"].get("name")): t
                 for t in listings.get("resourceclaimtemplates", [])}
    statuses = []
    for rc in spec.get("resourceClaims") or []:
        template = templates.get((ns, rc.get("resourceClaimTemplateName")))
        if template is None:
            continue                            # the DRA plugin says what is missing
        tmeta = (template.get("spec") or {}).get("metadata") or {}
        claim = f"{name}-{rc['name']}-capacity"
        service.on_dra_object("ResourceClaim", "ADDED", {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": claim, "namespace": ns, "uid": f"{uid}-{rc['name']}", "ownerReferences": owner,
                         "annotations": {**(tmeta.get("annotations") or {}), POD_CLAIM_NAME: rc["name"]},
                         **({"labels": dict(tmeta["labels"])} if tmeta.get("labels") else {})},
            "spec": copy.deepcopy((template.get("spec") or {}).get("spec") or {})})
        statuses.append({"name": rc["name"], "resourceClaimName": claim})
    if statuses:
        replica["status"] = {**(replica.get("status") or {}), "resourceClaimStatuses": statuses}
    default_class = next((str(c["metadata"]["name"]) for c in listings.get("storageclasses", [])
                          if ((c.get("metadata") or {}).get("annotations") or {}).get(DEFAULT_CLASS) == "true"),
                         None)
    for v in spec.get("volumes") or []:
        template = ((v.get("ephemeral") or {}).get("volumeClaimTemplate") or {}) if isinstance(v, dict) else {}
        if not template:
            continue
        tmeta = template.get("metadata") or {}
        pvc_spec = copy.deepcopy(template.get("spec") or {})
        if pvc_spec.get("storageClassName") is None and default_class is not None:
            pvc_spec["storageClassName"] = default_class
        service.on_volume_object("PersistentVolumeClaim", "ADDED", {
            "apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": f"{name}-{v.get('name', '')}", "namespace": ns, "uid": f"{uid}-{v.get('name')}",
                         "ownerReferences": owner,
                         **{k: dict(tmeta[k]) for k in ("labels", "annotations") if tmeta.get(k)}},
            "spec": pvc_spec, "status": {"phase": "Pending"}})


def _admitted(body: Obj, objects: list[Obj]) -> Obj:
    """What the Priority admission plugin would write into the pod, from the dump's PriorityClasses:
    ``spec.priority`` and ``preemptionPolicy`` of its ``priorityClassName``, else of the global
    default class (a live cluster's dry-run create does this itself)."""
    spec = dict(body.get("spec") or {})
    if spec.get("priority") is not None:
        return body
    classes = {str((c.get("metadata") or {}).get("name")): c for c in objects if c.get("kind") == "PriorityClass"}
    wanted = spec.get("priorityClassName")
    if wanted:
        pc = classes.get(str(wanted))
        if pc is None:
            raise CapacityError(f"no PriorityClass with name {wanted} was found in the dump")
    else:
        pc = next((c for c in classes.values() if c.get("globalDefault")), None)
        if pc is None:
            return body
        spec["priorityClassName"] = (pc.get("metadata") or {}).get("name")
    spec["priority"] = int(pc.get("value") or 0)
    spec.setdefault("preemptionPolicy", pc.get("preemptionPolicy") or "PreemptLowerPriority")
    return {**body, "spec": spec}


def format_capacity(result: Mapping[str, Any]) -> str:
    """The same facts as ``--output json``, for a person."""
    def where(per_node: Mapping[str, int]) -> str:
        shown = [f"{node} {n}" for node, n in list(per_node.items())[:TEXT_NODES]]
        if len(per_node) > TEXT_NODES:
            shown.append(f"and {len(per_node) - TEXT_NODES} more nodes: --output json lists them all")
        return ", ".join(shown) or "no node"
    pre = result["withPreemption"]
    lines = [f"pod {result['pod']}  profile {result['profile']}",
             f"fits now: {result['fits']} more replica(s)  ({where(result['perNode'])})"]
    victims = sum(pre["victims"].values())
    by_priority = ", ".join(f"priority {p}: {n}" for p, n in pre["victims"].items())
    lines.append(f"with preemption: {pre['fits']} in all  ({where(pre['perNode'])})  "
                 f"evicting {victims} pod(s)" + (f" ({by_priority})" if by_priority else ""))
    if result["firstUnfit"] is None:
        lines.append(f"stopped at --max {result['max']}: more may fit")
    else:
        lines.append(f"first replica that does not fit: {result['firstUnfit']}")
    gang = result.get("gang")
    if gang is not None:
        verdict = "FITS" if gang["fits"] else "does NOT fit"
        existing = f", with {gang['pending']} pending and {gang['bound']} bound member(s)" \
            if gang["pending"] or gang["bound"] else ""
        lines.append(f"pod group {gang['podGroup']} (minCount {gang['minCount']}): {gang['replicas']} replica(s) "
                     f"as one gang{existing}: {verdict}  ({where(gang['perNode'])})")
        if gang["diagnosis"]:
            lines.append(f"  {gang['diagnosis']}")
    if result.get("note"):
        lines.append(f"note: {result['note']}")
    return "\n".join(lines)
