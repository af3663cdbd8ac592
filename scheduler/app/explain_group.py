"""The group's answer for a member of a gang PodGroup: ``explain``'s ``group`` object and its "pod
group" section, for the local route (``explain.explain_object``) and for the leader's answer to a
SchedulingExplanation (``explanations.py``) alike.

A gang is never placed pod by pod: the scheduler's PodGroup cycle places the whole group on one
snapshot, or none of it (``scheduler/podgroup_cycle.py``). So for a pod that names a gang PodGroup
(the ``GenericWorkload`` gate on, and GangScheduling in the profile) one pod's decision is not the
answer a user needs; ``group_answer`` adds the group's: the PodGroup cycle run hypothetically
(``podgroup_cycle.what_if``: the same member-by-member placement the cycle runs, in a ``WhatIf``
on the cache, with nothing assumed, kept or written) over the group's pending members, the pod
explained among them. Members already bound count as placed, as the cycle counts them.

``group`` (``--output json``, and the SchedulingExplanation's ``status.group``) holds:

- ``podGroup``: ``namespace/name``; ``minCount``: the gang's quorum (null when the PodGroup does
  not exist);
- ``fits``: whether the cycle would meet the quorum now (and no member waits at PreEnqueue);
- ``scheduled``: members bound already plus those the cycle would place;
- ``members``: each member, ``{pod, state, node}`` with ``state`` ``bound``, ``placed`` (where the
  cycle would put it) or ``unplaced`` (then ``reason``: its FitError);
- ``perNode``: node -> members the cycle would place there;
- ``message``: the ``PodGroupInitiallyScheduled`` message the cycle would write: when the quorum is
  not met, the per-node diagnosis (``framework/group_diagnosis.py``) the scheduler writes;
- ``waiting``: GangScheduling's PreEnqueue message while the PodGroup or ``minCount`` of its pods
  do not exist yet (the group is not tried until then), else null.
"""

from __future__ import annotations

from typing import Any

from scheduler.framework import Framework
from scheduler.model import Pod
from scheduler.plugins.gangscheduling import NAME as GANG_SCHEDULING
from scheduler.plugins.gangscheduling import waiting_for_group
from scheduler.podgroup_cycle import GroupWhatIf, what_if
from scheduler.service import SchedulerService

__all__ = ["TEXT_MEMBERS", "format_group", "group_answer", "group_json"]

Obj = dict[str, Any]
# The members the table output lists; --output json lists all.
TEXT_MEMBERS = 20


def group_answer(service: SchedulerService, fwk: Framework, target: Pod) -> Obj | None:
    """The ``group`` object for ``target`` (the module docstring), or None when it is scheduled
    alone: the gate is off, it names no PodGroup, the profile runs no GangScheduling, or its group
    is not a gang. ``target`` joins the group's pending members when the service does not know it
    (a pod that does not exist, or one ``explain`` took out of the listings)."""
    if not service.generic_workload or not target.scheduling_group or GANG_SCHEDULING not in fwk.plugins_by_name:
        return None
    store = service.pod_groups
    group = store.get(target.namespace, target.scheduling_group)
    if group is None:
        waiting = waiting_for_group(target.scheduling_group)
        return {"podGroup": f"{target.namespace}/{target.scheduling_group}", "minCount": None, "fits": False,
                "scheduled": 0, "members": [], "perNode": {}, "message": waiting, "waiting": waiting}
    if not group.is_gang:
        return None
    known = {m.uid for m in store.members(group.namespace, group.name)}
    return group_json(what_if(service.scheduler, fwk, group, store, () if target.uid in known else (target,)))


def group_json(a: GroupWhatIf) -> Obj:
    members: list[Obj] = [{"pod": pod, "state": "bound", "node": node} for pod, node in a.bound]
    members += [{"pod": pod, "state": "placed", "node": node} for pod, node in a.placed]
    members += [{"pod": pod, "state": "unplaced", "node": None, "reason": why} for pod, why in a.unplaced]
    return {"podGroup": a.group, "minCount": a.min_count, "fits": a.fits, "scheduled": a.scheduled,
            "members": members, "perNode": dict(a.per_node), "message": a.message, "waiting": a.waiting or None}


def format_group(group: Obj) -> list[str]:
    """The table output's "pod group" section."""
    verdict = "the whole group FITS" if group["fits"] else "the group does NOT fit"
    lines = [f"pod group {group['podGroup']}  minCount {group['minCount'] if group['minCount'] is not None else '?'}"
             f": {verdict}  (scheduled {group['scheduled']})"]
    if group.get("waiting"):
        lines.append(f"  waiting at PreEnqueue: {group['waiting']}")
    members = group.get("members") or []
    for m in members[:TEXT_MEMBERS]:
        where = m["node"] or "(none)"
        what = {"bound": "bound", "placed": "would be placed"}.get(m["state"], m.get("reason") or "")
        lines.append(f"  {m['pod']:<32} {where:<20} {what}")
    if len(members) > TEXT_MEMBERS:
        lines.append(f"  ... and {len(members) - TEXT_MEMBERS} more members (--output json lists them all)")
    if group.get("message") and group.get("message") != group.get("waiting"):
        lines.append(f"  {group['message']}")
    return lines
