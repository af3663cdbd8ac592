"""``kopf-scheduler explain NAMESPACE/NAME``: why this node, why not that one, for a pod in a live
cluster.

It reads the cluster as the scheduler's informers would (nodes, namespaces, PDBs, every bound
pod, the SchedulingProfiles), fills a scheduler of its own with them, and runs the pod's profile
(or ``--profile``, by CR name or schedulerName) over that cache: PreFilter, Filter and Score, with
the real plugins and weights, but no Reserve, no Permit, no binding and no preemption (PostFilter
would evict). The answer is the decision record ``GET /debug/decisions`` serves, and with
``--all-nodes`` every node with its first failing plugin and reasons, or its scores. Nothing is
written to the cluster: the scheduler it builds has a client that refuses every write. A profile's
HTTP extenders are asked to filter and prioritize as the scheduler asks them (never to bind).

Where the running scheduler is reachable (``--scheduler-url``, else through the API server's
service proxy to ``kopf-scheduler/kopf-scheduler-metrics:10259``), its own recorded decision for
the pod is shown beside the local one.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from scheduler.errors import ClientError, ParseError, SchedulerError
from scheduler.framework import Framework
from scheduler.kubeapi import KubeClient
from scheduler.kubeapi.extender import http_extender
from scheduler.model import Pod, parse_pod
from scheduler.model.dra import AllocationResult, ResourceClaim
from scheduler.model.volumes import PersistentVolume, PersistentVolumeClaim
from scheduler.profiles.crd import profiles_path
from scheduler.service import SchedulerService

__all__ = ["ExplainError", "check_scheduler_url", "explain_pod", "format_explanation", "recorded_decision"]

Obj = dict[str, Any]
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

    async def preempt(self, victim: Pod, preemptor: Pod, node_name: str) -> None:
        raise RuntimeError("explain never preempts")

    async def clear_nomination(self, pod: Pod) -> None:
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


async def _items(api: KubeClient, path: str) -> list[Obj]:
    items: list[Obj] = (await api.request("GET", path))["items"]
    return items


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


async def explain_pod(api: KubeClient, namespace: str, name: str, *, profile: str | None = None,
                      all_nodes: bool = False, top_nodes: int = 3) -> Obj:
    """``{"decision": record, "nodes": [...]}`` (``nodes`` with ``all_nodes``)."""
    try:
        body: Obj = await api.request("GET", f"/api/v1/namespaces/{namespace}/pods/{name}")
    except ClientError as e:
        raise ExplainError(f"pod {namespace}/{name}: {e}") from None
    try:
        target = parse_pod(body)
    except ParseError as e:
        raise ExplainError(f"pod {namespace}/{name} cannot be read: {e}") from None
    service = await _loaded_service(api, target.uid)
    if target.node_name:
        # A bound pod: explain it as if it were pending again, with its own place free.
        target = parse_pod({**body, "spec": {**body["spec"], "nodeName": None}})
    fwk = _framework(service, target, profile)
    record, nodes = service.scheduler.explain(fwk, target, all_nodes=all_nodes, top_nodes=top_nodes)
    out: Obj = {"decision": record.to_json()}
    if all_nodes:
        out["nodes"] = nodes
    return out


async def _loaded_service(api: KubeClient, target_uid: str) -> SchedulerService:
    """A service that writes nothing, loaded with the cluster as the scheduler sees it: namespaces,
    profiles, nodes, budgets and the assigned pods but the explained one."""
    service = SchedulerService(_NoWrites(), seed=0, decision_records=0, extender_factory=http_extender)
    for ns in await _items(api, "/api/v1/namespaces"):
        service.on_namespace("ADDED", ns)
    crs = await _items(api, profiles_path())
    for cr in crs:
        service.on_profile(cr["metadata"]["name"], cr.get("spec") or {}, cr.get("metadata") or {})
    for node in await _items(api, "/api/v1/nodes"):
        try:
            service.on_node("ADDED", node)
        except ParseError:
            continue                  # the scheduler leaves an unreadable node out, and so does explain
    for pdb in await _items(api, "/apis/policy/v1/poddisruptionbudgets"):
        service.on_pdb("ADDED", pdb)
    for p in await _items(api, "/api/v1/pods"):
        meta = p.get("metadata") or {}
        if (p.get("spec") or {}).get("nodeName") and meta.get("uid") != target_uid:
            try:
                service.on_pod("ADDED", p)
            except ParseError:
                continue
    return service


def _framework(service: SchedulerService, target: Pod, profile: str | None) -> Framework:
    """The profile to explain with: ``profile`` (a CR name or a schedulerName), else the pod's own."""
    if profile is None:
        fwk = service.profiles.for_pod(target)
        if fwk is None:
            raise ExplainError(f"no accepted SchedulingProfile serves schedulerName {target.scheduler_name!r}; "
                               f"pass --profile to ask one")
        return fwk
    current = service.profiles.current
    standing = service.profile_status.get(profile)          # a CR name ...
    if standing is not None and standing[0].accepted and standing[0].scheduler_name in current:
        return current[standing[0].scheduler_name]
    found = current.get(profile)                             # ... or a schedulerName
    if found is None:
        raise ExplainError(f"no accepted SchedulingProfile is named or serves {profile!r} "
                           f"(serving: {', '.join(sorted(current)) or 'none'})")
    return found


def format_explanation(result: Obj) -> str:
    d = result["decision"]
    lines = [f"pod {d['pod']}  profile {d['profile']}" + (f" (generation {d['profileGeneration']})"
                                                          if d["profileGeneration"] is not None else ""),
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
    return "\n".join(lines)
