"""``kopf-scheduler explain NAMESPACE/NAME`` and ``explain -f pod.yaml``: why this node, why not
that one, for a pod in a live cluster or for one that does not exist yet.

It reads the cluster as the scheduler's informers do: the same kinds (``kinds.watched_kinds``:
nodes, namespaces, PDBs, the selector owners, the storage and DRA kinds, the SchedulingProfiles,
every pod), fed through the same handlers (``kinds.feed``) into a scheduler of its own, from a live
cluster (``list_cluster``) or from a dump (``listings_from_objects``, ``--from``: no API server at
all). Then it runs the pod's profile (or ``--profile``: a CR name, a shadow's included, or a
schedulerName) over that cache: PreFilter, Filter and Score, with the real plugins and weights, but
no Reserve, no Permit, no binding and no preemption (PostFilter would evict). The answer is the
decision record ``GET /debug/decisions`` serves, and with ``--all-nodes`` every node with its first
failing plugin and reasons, or its scores. For a member of a gang PodGroup, ``group`` is the
group's answer too (``explain_group.py``: the PodGroup cycle run hypothetically). Nothing is
written to the cluster: the scheduler it builds has a client that refuses every write, and a
hypothetical pod is defaulted by a dry-run create. A profile's HTTP extenders are asked to filter
and prioritize as the scheduler asks them (never to bind).

A bound pod is explained as the scheduler saw it (``as_scheduled``): without itself on its node,
and with the claims and volumes its own placement allocated or bound read as they were before.
The scheduler's own record of the decision (the pod's decision annotation, or ``--scheduler-url``,
else the API server's service proxy to ``kopf-scheduler/kopf-scheduler-metrics:10259``) is shown
beside the local answer and compared with it (``compare``): same node and same per-plugin scores,
or the differences, flagged, with what the cluster shows changed since the record's time.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from scheduler.app.explain_group import format_group, group_answer
from scheduler.app.kinds import WatchedKind, feed, kind_of, watched_kinds
from scheduler.app.profile_status import ProfileFollower
from scheduler.client import SchedulerClient
from scheduler.errors import ClientError, ParseError, SchedulerError
from scheduler.framework import Framework
from scheduler.framework.decision import DECISION_ANNOTATION
from scheduler.kubeapi import KubeClient
from scheduler.kubeapi.extender import http_extender
from scheduler.kubeapi.scheduler_client import BOUND_BY_CONTROLLER as ANN_BOUND_BY_CONTROLLER
from scheduler.model import Pod, parse_pod
from scheduler.model.dra import AllocationResult, ResourceClaim
from scheduler.model.podgroup import PodGroup
from scheduler.model.volumes import SELECTED_NODE_ANNOTATION as ANN_SELECTED_NODE
from scheduler.model.volumes import PersistentVolume, PersistentVolumeClaim
from scheduler.plugins.volumebinding.binder import ANN_BIND_COMPLETED
from scheduler.profiles.crd import PLURAL
from scheduler.profiles.shadows import Shadow
from scheduler.service import SchedulerService

__all__ = ["HYPOTHETICAL_UID", "ExplainError", "as_scheduled", "changes_since", "check_scheduler_url", "compare",
           "dry_run_default", "explain_manifest", "explain_object", "explain_pod", "format_explanation",
           "framework_for", "hypothetical_body", "list_cluster", "listings_from_objects", "loaded_service",
           "recorded_decision"]

Obj = dict[str, Any]
# pkg/controller/volume/persistentvolume/util: AnnDynamicallyProvisioned, on a provisioned PV.
ANN_PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
PROXY = "/api/v1/namespaces/kopf-scheduler/services/https:kopf-scheduler-metrics:10259/proxy"


class ExplainError(SchedulerError):
    """The pod or the profile to explain it with cannot be found."""


class _NoWrites:
    """The SchedulerClient of a scheduler that must never write: explain only reads."""

    async def bind(self, pod: Pod, node_name: str) -> None:
        raise RuntimeError("explain never binds")

    async def report_scheduled(self, pod: Pod, node_name: str, message: str) -> None:
        raise RuntimeError("explain never writes")

    async def report_failure(self, pod: Pod, reason: str, message: str, nominated_node: str | None) -> None:
        raise RuntimeError("explain never writes")

    async def set_pod_group_condition(self, group: PodGroup, condition: Mapping[str, object]) -> None:
        raise RuntimeError("explain never writes")

    async def report_pod_event(self, pod: Pod, type_: str, reason: str, action: str, note: str) -> None:
        raise RuntimeError("explain never writes")

    async def preempt(self, victim: Pod, preemptor: Pod, node_name: str, group: PodGroup | None = None) -> None:
        raise RuntimeError("explain never preempts")

    async def clear_nomination(self, pod: Pod) -> None:
        raise RuntimeError("explain never writes")

    async def nominate(self, pod: Pod, node_name: str) -> None:
        raise RuntimeError("explain never writes")

    async def annotate(self, pod: Pod, annotations: Mapping[str, str]) -> None:
        raise RuntimeError("explain never writes")

    async def bind_volume(self, pv: PersistentVolume, claim: PersistentVolumeClaim) -> None:
        raise RuntimeError("explain never binds")

    async def select_node(self, claim: PersistentVolumeClaim, node_name: str) -> None:
        raise RuntimeError("explain never writes")

    async def get_claim(self, namespace: str, name: str) -> ResourceClaim:
        raise RuntimeError("explain never reads through the scheduler's client")

    async def add_claim_finalizer(self, claim: ResourceClaim) -> ResourceClaim:
        raise RuntimeError("explain never writes")

    async def reserve_claim(self, claim: ResourceClaim, pod: Pod, allocation: AllocationResult | None
                            ) -> ResourceClaim:
        raise RuntimeError("explain never writes")

    async def unreserve_claim(self, claim: ResourceClaim, pod: Pod) -> None:
        raise RuntimeError("explain never writes")

    async def deallocate_claim(self, claim: ResourceClaim) -> None:
        raise RuntimeError("explain never writes")

    async def create_claim(self, body: Mapping[str, Any]) -> ResourceClaim:
        raise RuntimeError("explain never writes")

    async def delete_claim(self, claim: ResourceClaim) -> None:
        raise RuntimeError("explain never writes")

    async def set_extended_resource_claim_status(self, pod: Pod, claim_name: str,
                                                 request_mappings: Sequence[Mapping[str, str]]) -> None:
        raise RuntimeError("explain never writes")


def check_scheduler_url(url: str) -> None:
    """Refuse a ``--scheduler-url`` the user's token must not be sent to: anything but ``https://``
    with a host. The request carries the cluster credential (a bearer token the scheduler's delegated
    authentication reviews), so plain HTTP would hand it to anyone on the path."""
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname:
        raise ExplainError(f"--scheduler-url {url!r}: only https:// is allowed, since the request carries your "
                           f"cluster credentials (the scheduler's secure port serves HTTPS; use --scheduler-ca-file "
                           f"for its certificate)")


async def recorded_decision(api: KubeClient, namespace: str, name: str, scheduler_url: str | None,
                            ca_file: str | None = None) -> tuple[Obj | None, str | None]:
    """The running scheduler's record for the pod, or None and why not. ``scheduler_url`` must be
    ``https://``, and its certificate is verified (against ``ca_file``, else the system's CAs)
    before the token is sent: never over plain HTTP, never to an unverified peer."""
    path = f"/debug/decisions/{namespace}/{name}"
    try:
        if scheduler_url:
            import aiohttp
            check_scheduler_url(scheduler_url)
            try:
                verify = ssl.create_default_context(cafile=ca_file)
            except (OSError, ssl.SSLError) as e:
                raise ExplainError(f"--scheduler-ca-file {ca_file}: {e}") from None
            token = api.config.bearer()
            async with aiohttp.ClientSession() as s, s.get(
                    scheduler_url.rstrip("/") + path, ssl=verify, allow_redirects=False,
                    headers={"Authorization": f"Bearer {token}"} if token else {}) as r:
                if r.status != 200:
                    return None, f"{scheduler_url}: {r.status} {(await r.text())[:200]}"
                body: Obj = await r.json()
                return body, None
        out: Obj = await api.request("GET", PROXY + path)
        return out, None
    except (ClientError, OSError) as e:
        return None, f"the scheduler is not reachable: {e}"


Listings = dict[str, list[Obj]]
# The pod ``explain -f`` stands in for has no uid of its own.
HYPOTHETICAL_UID = "explain-hypothetical-pod"


async def list_cluster(api: KubeClient, kinds: Sequence[WatchedKind]) -> Listings:
    """Every watched kind, listed as the informers list them (an optional kind the cluster does not
    serve reads as empty)."""
    async def one(k: WatchedKind) -> list[Obj]:
        try:
            listing = await api.request("GET", k.path)
        except ClientError as e:
            if e.status == 404 and k.optional:
                return []
            raise ExplainError(f"cannot list {k.plural}: {e}") from None
        return [o for o in (listing or {}).get("items") or [] if isinstance(o, dict)]
    found = await asyncio.gather(*(one(k) for k in kinds))
    return {k.key: items for k, items in zip(kinds, found, strict=True)}


def listings_from_objects(objects: Iterable[Obj], kinds: Sequence[WatchedKind]) -> Listings:
    """A dump's objects (``kopf-scheduler dump``, or any List of them) by watched kind; the kinds the
    scheduler does not read (Deployments, Jobs, PriorityClasses, ...) are left out."""
    out: Listings = {k.key: [] for k in kinds}
    for obj in objects:
        k = kind_of(kinds, obj)
        if k is not None:
            out[k.key].append(obj)
    return out


def _uid(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


def as_scheduled(listings: Listings, pod: Mapping[str, Any]) -> Listings:
    """The cluster as the scheduler saw it when it placed the bound ``pod``: the pod itself is not
    on its node; a ResourceClaim reserved for it alone was allocated for it (the DynamicResources
    plugin allocated it in that very cycle), so it reads as unallocated, as it was; a
    PersistentVolumeClaim the scheduler chose a node for (``volume.kubernetes.io/selected-node``,
    delayed binding) reads as unbound, and the volume provisioned for it as absent (one bound to it
    by that decision as available). A claim or a PVC bound before the pod came (a pre-bound PV, a
    shared claim) stays as it is: the scheduler saw it so too."""
    uid, meta = _uid(pod), pod.get("metadata") or {}
    ns = str(meta.get("namespace") or "default")
    out = dict(listings)
    out["pods"] = [p for p in listings.get("pods", []) if _uid(p) != uid]
    claims: list[Obj] = []
    for c in listings.get("resourceclaims", []):
        status = c.get("status") or {}
        reserved = status.get("reservedFor") or []
        if ((c.get("metadata") or {}).get("namespace") == ns and len(reserved) == 1
                and str(reserved[0].get("uid") or "") == uid):
            c = {**c, "status": {k: v for k, v in status.items()
                                 if k not in ("allocation", "reservedFor", "devices")}}
        claims.append(c)
    out["resourceclaims"] = claims
    names = {str(v["persistentVolumeClaim"].get("claimName")) for v in (pod.get("spec") or {}).get("volumes") or []
             if isinstance(v, dict) and isinstance(v.get("persistentVolumeClaim"), dict)}
    chosen: dict[str, str] = {}                  # the uid of each PVC this decision bound -> its name
    pvcs: list[Obj] = []
    for c in listings.get("persistentvolumeclaims", []):
        cm = c.get("metadata") or {}
        ann = cm.get("annotations") or {}
        if cm.get("namespace") == ns and cm.get("name") in names and ann.get(ANN_SELECTED_NODE) \
                and ann.get(ANN_SELECTED_NODE) == (pod.get("spec") or {}).get("nodeName"):
            chosen[str(cm.get("uid") or "")] = str(cm.get("name"))
            kept = {k: v for k, v in ann.items() if k not in (ANN_SELECTED_NODE, ANN_BIND_COMPLETED,
                                                                ANN_BOUND_BY_CONTROLLER)}
            c = {**c, "metadata": {**cm, "annotations": kept},
                 "spec": {k: v for k, v in (c.get("spec") or {}).items() if k != "volumeName"},
                 "status": {"phase": "Pending"}}
        pvcs.append(c)
    out["persistentvolumeclaims"] = pvcs
    pvs: list[Obj] = []
    for v in listings.get("persistentvolumes", []):
        ref = (v.get("spec") or {}).get("claimRef") or {}
        if str(ref.get("uid") or "") in chosen:
            if ANN_PROVISIONED_BY in ((v.get("metadata") or {}).get("annotations") or {}):
                continue                         # provisioned after the decision
            v = {**v, "spec": {k: x for k, x in (v.get("spec") or {}).items() if k != "claimRef"},
                 "status": {"phase": "Available"}}
        pvs.append(v)
    out["persistentvolumes"] = pvs
    return out


def loaded_service(listings: Listings, kinds: Sequence[WatchedKind],
                   feature_gates: Mapping[str, bool] | None = None,
                   client: SchedulerClient | None = None) -> SchedulerService:
    """A scheduler that writes nothing, fed the listings through the live scheduler's handlers
    (``kinds.feed``; profiles through a ``ProfileFollower`` that writes no status, so a refused
    edit leaves the last accepted spec serving, as it does live). ``feature_gates`` as ``run
    --feature-gates``, so the explained cycle runs with the running scheduler's gates. ``client``:
    one that refuses writes as ``_NoWrites`` does (``capacity``'s also notes the victims preemption
    names)."""
    service = SchedulerService(client or _NoWrites(), seed=0, decision_records=0, extender_factory=http_extender,
                               feature_gates=feature_gates)
    service.leader = False                      # never leading: nothing is written, not even a status
    follower = ProfileFollower(service, None, None, lambda coro: coro.close())
    feed(service, kinds, listings, {PLURAL: follower.on_event})
    return service


RecordSource = Callable[[], Awaitable[tuple[Obj | None, str | None]]]


async def explain_pod(api: KubeClient, namespace: str, name: str, *, profile: str | None = None,
                      all_nodes: bool = False, top_nodes: int = 3, recorded: RecordSource | None = None,
                      feature_gates: Mapping[str, bool] | None = None) -> Obj:
    """``{"decision": record, "nodes": [...]}`` (``nodes`` with ``all_nodes``). A bound pod is
    explained as the scheduler saw it (``as_scheduled``).

    The scheduler's own record is the pod's ``DECISION_ANNOTATION`` when it carries one, else what
    ``recorded`` fetches (``recorded_decision``): it goes in ``recorded`` (None and
    ``recordedError`` when there is none), and the two answers are compared in ``comparison``
    (``compare``), so a disagreement is always flagged."""
    try:
        body: Obj = await api.request("GET", f"/api/v1/namespaces/{namespace}/pods/{name}")
    except ClientError as e:
        raise ExplainError(f"pod {namespace}/{name}: {e}") from None
    try:
        parse_pod(body)
    except ParseError as e:
        raise ExplainError(f"pod {namespace}/{name} cannot be read: {e}") from None
    kinds = watched_kinds(feature_gates)
    listings = await list_cluster(api, kinds)
    out, nodes = explain_object(body, listings, kinds, profile=profile, all_nodes=all_nodes, top_nodes=top_nodes,
                                feature_gates=feature_gates)
    record: Obj | None = None
    annotated = ((body.get("metadata") or {}).get("annotations") or {}).get(DECISION_ANNOTATION)
    with contextlib.suppress(ValueError):
        record = json.loads(annotated) if annotated else None
    if isinstance(record, dict):
        out["recorded"] = record
    elif recorded is not None:
        record, why = await recorded()
        out["recorded"] = record
        if why:
            out["recordedError"] = why
    if isinstance(record, dict):
        out["comparison"] = compare(out, nodes, record, listings, body)
    return out


def explain_object(body: Obj, listings: Listings, kinds: Sequence[WatchedKind], *, profile: str | None = None,
                   all_nodes: bool = False, top_nodes: int = 3,
                   feature_gates: Mapping[str, bool] | None = None) -> tuple[Obj, list[Obj]]:
    """Explain the pod ``body`` over ``listings``: a bound pod as the scheduler saw it, a pending
    or hypothetical one as it would be scheduled now. Also every node's verdict, for ``compare``."""
    bound = bool((body.get("spec") or {}).get("nodeName"))
    original = body
    if bound:
        listings = as_scheduled(listings, body)
        # Explained as if pending again, with its own place free.
        body = {**body, "spec": {**body["spec"], "nodeName": None}}
    else:
        listings = {**listings, "pods": [p for p in listings.get("pods", []) if _uid(p) != _uid(body)]}
    service = loaded_service(listings, kinds, feature_gates)
    try:
        target = parse_pod(body, service.request_options)
    except ParseError as e:
        raise ExplainError(f"the pod cannot be read: {e}") from None
    fwk, shadow = framework_for(service, target, profile)
    record, nodes = service.scheduler.explain(fwk, target, all_nodes=all_nodes, top_nodes=top_nodes)
    out: Obj = {"decision": record.to_json()}
    if all_nodes:
        out["nodes"] = nodes
    else:
        nodes = service.scheduler.explain(fwk, target, all_nodes=True, top_nodes=top_nodes)[1]
    if shadow is not None:
        out["shadow"] = {"profile": shadow.cr_name, "shadowOf": shadow.shadow_of}
    if target.scheduling_group:
        if bound:
            service.on_pod("ADDED", original)    # back on its node: the group counts it bound
        group = group_answer(service, fwk, target)
        if group is not None:
            out["group"] = group
    return out, nodes


def hypothetical_body(body: Obj) -> Obj:
    """``explain -f``'s pod as a Pod to create: of kind Pod, in ``default`` unless it names its
    namespace, named ``hypothetical`` unless it names itself."""
    if body.get("kind", "Pod") != "Pod":
        raise ExplainError(f"-f: expected a Pod, got a {body.get('kind')}")
    meta = dict(body.get("metadata") or {})
    meta.setdefault("namespace", "default")
    if not meta.get("name") and not meta.get("generateName"):
        meta["name"] = "hypothetical"
    body = {**body, "apiVersion": "v1", "kind": "Pod", "metadata": meta}
    if (body.get("spec") or {}).get("nodeName"):
        raise ExplainError("-f: the pod names spec.nodeName, so no scheduler places it")
    return body


async def dry_run_default(api: KubeClient, body: Obj) -> Obj:
    """``body`` as the API server would store it (a server-side dry-run create with the caller's own
    credentials: defaulting and admission, LimitRange and ServiceAccount included; nothing is created)."""
    try:
        created: Obj = await api.request("POST", f"/api/v1/namespaces/{body['metadata']['namespace']}/pods", body,
                                         params={"dryRun": "All"})
    except ClientError as e:
        raise ExplainError(f"the API server refuses the pod: {e}") from None
    return created


async def explain_manifest(body: Obj, *, api: KubeClient | None = None, objects: Iterable[Obj] | None = None,
                           profile: str | None = None, all_nodes: bool = False, top_nodes: int = 3,
                           feature_gates: Mapping[str, bool] | None = None, defaulted: bool = False) -> Obj:
    """Explain a pod that does not exist (``explain -f``), over the live cluster (``api``: the pod
    is defaulted by a server-side dry-run create, as the API server would store it, and nothing is
    created; ``defaulted`` when the caller has done that already) or over a dump's ``objects`` (in
    memory, no API server)."""
    body = hypothetical_body(body)
    kinds = watched_kinds(feature_gates)
    if api is not None:
        if not defaulted:
            body = await dry_run_default(api, body)
        listings = await list_cluster(api, kinds)
    else:
        listings = listings_from_objects(objects or (), kinds)
    body = {**body, "metadata": {**(body.get("metadata") or {}), "uid": HYPOTHETICAL_UID}}
    return explain_object(body, listings, kinds, profile=profile, all_nodes=all_nodes, top_nodes=top_nodes,
                          feature_gates=feature_gates)[0]


def framework_for(service: SchedulerService, target: Pod, profile: str | None) -> tuple[Framework, Shadow | None]:
    """The profile to explain with: ``profile`` (a CR name, live or shadow, or a schedulerName),
    else the pod's own. A shadow answers with its own framework (it often keeps the live profile's
    schedulerName, so the name alone would pick the live one)."""
    if profile is None:
        fwk = service.profiles.for_pod(target)
        if fwk is None:
            raise ExplainError(f"no accepted SchedulingProfile serves schedulerName {target.scheduler_name!r}; "
                               f"pass --profile to ask one ({_profiles(service)})")
        return fwk, None
    current = service.profiles.current
    shadow = service.shadows.get(profile)                    # a shadow CR's name ...
    if shadow is not None:
        return shadow.framework, shadow
    claim = service.profiles.claim(profile)                  # ... a live CR's name ...
    if claim is not None and service.profiles.owner_of(claim.scheduler_name) == profile:
        return current[claim.scheduler_name], None
    found = current.get(profile)                             # ... or a schedulerName
    if found is not None:
        return found, None
    raise ExplainError(f"no accepted SchedulingProfile is named or serves {profile!r} ({_profiles(service)})")


def _profiles(service: SchedulerService) -> str:
    """The profiles there are, for an error message."""
    out = []
    for cr, (st, _gen) in sorted(service.profile_status.items()):
        if st.shadow_of and service.shadows.get(cr) is not None:
            out.append(f"{cr} (shadow of {st.shadow_of})")
        elif st.accepted:
            out.append(f"{cr} (schedulerName {st.scheduler_name})")
        else:
            out.append(f"{cr} (not serving: {st.message})")
    return "profiles: " + (", ".join(out) if out else "none")


def _created(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("creationTimestamp") or "")


def _bound_at(pod: Mapping[str, Any]) -> str:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == "PodScheduled" and c.get("status") == "True":
            return str(c.get("lastTransitionTime") or "")
    return ""


def changes_since(when: str, listings: Listings, target_uid: str) -> list[str]:
    """What the listings show happened at or after ``when`` (RFC 3339, to the second, as records
    and objects are stamped: an object of the same second may be older or newer, and is named):
    pods bound or being deleted, and any other object created. Deletions and edits of objects
    leave no trace in a listing, so this list can miss a change; it never invents one."""
    out: list[str] = []              # the pods first: their bindings are what most often moves scores
    created: list[str] = []
    for key, items in sorted(listings.items(), key=lambda kv: (kv[0] != "pods", kv[0])):
        for obj in items:
            meta = obj.get("metadata") or {}
            if _uid(obj) == target_uid:
                continue
            where = f"{meta.get('namespace')}/{meta.get('name')}" if meta.get("namespace") else str(meta.get("name"))
            if key == "pods":
                bound = _bound_at(obj)
                node = (obj.get("spec") or {}).get("nodeName")
                if node and bound >= when:
                    out.append(f"pod {where} was bound to {node} at {bound}")
                elif meta.get("deletionTimestamp"):
                    out.append(f"pod {where} is being deleted (since {meta['deletionTimestamp']})")
                continue
            if _created(obj) >= when:
                created.append(f"{key} {where} was created at {_created(obj)}")
    return out + created


def compare(result: Obj, nodes: list[Obj], recorded: Obj, listings: Listings, pod: Mapping[str, Any]) -> Obj:
    """The scheduler's record against explain's answer: ``agrees`` when both chose the same node
    (or two nodes tied at the best total: the scheduler picks among ties at random, as upstream's
    ``selectHost``) and every node the record scored has the same per-plugin scores now. Otherwise
    ``differences`` says what differs and ``verdict`` why: ``clusterChanged`` with ``changedSince``
    (what the cluster shows happened since the record's time), ``profileChanged``, ``otherProfile``
    (explained with another profile than the scheduler's), or ``unexplained``: a disagreement that
    no visible change accounts for. Never silent."""
    local = result["decision"]
    if recorded.get("profile", local["profile"]) != local["profile"] or "shadow" in result:
        return {"agrees": False, "verdict": "otherProfile",
                "differences": [f"profile: the scheduler used {recorded.get('profile')}, explain "
                                f"{result.get('shadow', {}).get('profile') or local['profile']}"], "changedSince": []}
    feasible = {str(n["node"]): n for n in nodes if n.get("feasible")}
    differences: list[str] = []
    rec_node, loc_node = recorded.get("node"), local["node"]
    if rec_node != loc_node:
        tie = rec_node in feasible and loc_node in feasible and \
            feasible[rec_node].get("total") == feasible[loc_node].get("total")
        if not tie:
            differences.append(f"node: the scheduler chose {rec_node or '(none)'}, explain {loc_node or '(none)'}")
    for s in recorded.get("scores") or []:
        mine = feasible.get(s.get("node"))
        if mine is None:
            differences.append(f"{s.get('node')}: the scheduler scored it {s.get('total')}, explain finds it "
                               f"infeasible or gone")
            continue
        theirs, ours = s.get("plugins") or {}, mine.get("plugins") or {}
        for p in sorted(set(theirs) | set(ours)):
            if theirs.get(p) != ours.get(p):
                differences.append(f"{s['node']} {p}: the scheduler {theirs.get(p)}, explain {ours.get(p)}")
        if s.get("total") != mine.get("total"):
            differences.append(f"{s['node']} total: the scheduler {s.get('total')}, explain {mine.get('total')}")
    if not differences:
        return {"agrees": True, "verdict": "agrees", "differences": [], "changedSince": []}
    changed = changes_since(str(recorded.get("time") or ""), listings, _uid(pod))
    if recorded.get("profileGeneration", local["profileGeneration"]) != local["profileGeneration"]:
        return {"agrees": False, "verdict": "profileChanged", "differences": differences, "changedSince": [
            f"profile {local['profile']}: generation {recorded.get('profileGeneration')} then, "
            f"{local['profileGeneration']} now", *changed]}
    return {"agrees": False, "verdict": "clusterChanged" if changed else "unexplained",
            "differences": differences, "changedSince": changed}

def format_explanation(result: Obj) -> str:
    d = result["decision"]
    shadow = result.get("shadow")
    lines = [f"pod {d['pod']}  profile {d['profile']}" + (f" (generation {d['profileGeneration']})"
                                                          if d["profileGeneration"] is not None else "")
             + (f"  shadow profile {shadow['profile']} of {shadow['shadowOf']}" if shadow else ""),
             f"node: {d['node'] or '(none: the pod stays pending)'}   evaluated {d['evaluatedNodes']}, "
             f"feasible {d['feasibleNodes']}"]
    if d["filtered"]:
        lines.append("filtered out:")
        lines += [f"  {n:>6}  {reason}" for reason, n in sorted(d["filtered"].items(), key=lambda x: -x[1])]
    if d["scores"]:
        lines.append("best nodes:")
        for s in d["scores"]:
            plugins = "  ".join(f"{p}={v}" for p, v in s["plugins"].items())
            lines.append(f"  {s['node']:<24} {s['total']:>6}  {plugins}")
    if result.get("nodes"):
        lines.append("all nodes:")
    for n in result.get("nodes", []):
        if n["feasible"]:
            plugins = "  ".join(f"{p}={v}" for p, v in (n.get("plugins") or {}).items())
            lines.append(f"  {n['node']:<24} fits   {n.get('total', '')!s:>6}  {plugins}")
        else:
            lines.append(f"  {n['node']:<24} no     {n.get('plugin') or '':<20} {'; '.join(n.get('reasons') or [])}")
    if "recorded" in result:
        rec = result["recorded"]
        lines.append("the scheduler's own record: " + (
            f"node {rec['node']}, attempt {rec['attempt']} at {rec['time']}" if rec else
            f"none ({result.get('recordedError') or 'not recorded'})"))
    cmp = result.get("comparison")
    if cmp is not None:
        if cmp["agrees"]:
            lines.append("explain AGREES with it: the same node and the same per-plugin scores")
        else:
            why = {"clusterChanged": "the cluster changed since the decision",
                   "profileChanged": "the profile changed since the decision",
                   "otherProfile": "explained with another profile than the scheduler's",
                   "unexplained": "NO change the cluster shows explains it"}[cmp["verdict"]]
            lines.append(f"explain DISAGREES with it ({why}):")
            lines += [f"  - {x}" for x in cmp["differences"]]
            if cmp["changedSince"]:
                lines.append("changed since the decision:")
                lines += [f"  - {x}" for x in cmp["changedSince"][:20]]
                if len(cmp["changedSince"]) > 20:
                    lines.append(f"  ... and {len(cmp['changedSince']) - 20} more (--output json lists them all)")
    if result.get("group"):
        lines += format_group(result["group"])
    return "\n".join(lines)
