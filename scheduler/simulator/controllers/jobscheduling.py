"""The Job controller's workload integration (upstream's ``pkg/controller/job/job_scheduling_manager.go``):
a Job gets a ``Workload`` and a ``PodGroup``, and its pods join the group.

Upstream runs it only with the ``WorkloadWithJob`` gate (alpha, off by default) on top of
``GenericWorkload``, and so does the simulated cluster (``SimulatedCluster(feature_gates=...)``). Then,
for a Job that

- does not wire its pods to a PodGroup of its own (``spec.template.spec.schedulingGroup`` unset), and
- has no controller owner (a Job under a JobSet or CronJob is its parent's business; the delegation
  annotation is not simulated),

the controller, before the Job's first pod, creates the Workload ``<job>-<hash>`` (controller-owned by
the Job, ``spec.controllerRef`` naming it) with one PodGroupTemplate ``<job>-pgt-0`` compiled from the
Job's ``spec.scheduling`` (basic when unset; a gang's ``minCount`` defaults to the Job's
``parallelism``), then the PodGroup ``<workload>-<template>-<hash>`` from that template (owned by the
Job, and by the Workload as a non-controller owner), and sets ``schedulingGroup.podGroupName`` on every
pod it creates. A Job that has started already (pods, a start time, counts) only discovers its objects,
never creates them, as upstream's ``isNewJob`` says. A gang's ``minCount`` follows a changed
``spec.scheduling`` or ``parallelism`` (``syncGangMinCount``).

Upstream writes these objects through ``scheduling.k8s.io/v1alpha3``; this cluster serves only
``v1beta1``, so they are stored and served as ``v1beta1``, as kube-apiserver serves an object in any
version it has. The hashes are FNV-32a, safe-encoded, over the Job's uid and the names, as upstream
computes them, but not byte-for-byte (upstream hashes the uid through ``DeepHashObject``).
"""

from __future__ import annotations

import contextlib
from typing import Any

from scheduler.simulator.apierrors import ApiError
from scheduler.simulator.interfaces import ClusterWriter, Writer
from scheduler.simulator.registry.podgroups import GENERIC_WORKLOAD, GROUP, PODGROUPS, VERSION, WORKLOADS

__all__ = ["WORKLOAD_WITH_JOB", "JobScheduling"]

Obj = dict[str, Any]
WORKLOAD_WITH_JOB = "WorkloadWithJob"
_SAFE = "bcdfghjklmnpqrstvwxz2456789"     # rand.SafeEncodeString's alphabet
_MAX_NAME = 253                           # validation.DNS1123SubdomainMaxLength


def _hash(*parts: str) -> str:
    """FNV-32a over ``parts``, its decimal digits safe-encoded (``rand.SafeEncodeString``)."""
    h = 0x811C9DC5
    for b in "".join(parts).encode():
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return "".join(_SAFE[ord(c) % len(_SAFE)] for c in str(h))


def workload_name(job: Obj) -> str:
    """``computeWorkloadName``: ``<job name, truncated>-<hash of the Job's uid>``."""
    h = _hash(str(job["metadata"].get("uid", "")))
    return f"{job['metadata']['name'][:_MAX_NAME - len(h) - 1]}-{h}"


def template_name(job: Obj) -> str:
    """``podGroupTemplateName``: one template per Job."""
    return f"{job['metadata']['name']}-pgt-0"


def pod_group_name(workload: str, template: str) -> str:
    """``computePodGroupName``: ``<workload>-<template>-<hash>``, each part truncated to its share."""
    h = _hash(workload, template)
    room = _MAX_NAME - len(h) - 2
    if len(workload) + len(template) > room:
        half = room // 2
        if len(workload) <= half:
            template = template[:room - len(workload)]
        elif len(template) <= half:
            workload = workload[:room - len(template)]
        else:
            workload, template = workload[:room - half], template[:half]
    return f"{workload}-{template}-{h}"


def _controller_ref(job: Obj) -> Obj:
    return {"apiVersion": "batch/v1", "kind": "Job", "name": job["metadata"]["name"],
            "uid": job["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}


def _controlled_by(obj: Obj, uid: str) -> bool:
    return any(r.get("controller") and r.get("uid") == uid for r in obj["metadata"].get("ownerReferences") or [])


def _template(job: Obj) -> Obj:
    """``buildWorkloadItem``: the Job's ``spec.scheduling`` (basic when unset), a gang's ``minCount``
    defaulting to ``parallelism``. Nothing else is taken from the Job: upstream's
    ``mapSchedulingConfig`` maps no priority, so the pod template's ``priorityClassName`` stays off
    the template and the PodGroup."""
    spec = job.get("spec") or {}
    scheduling = spec.get("scheduling") or {}
    policy = dict(scheduling.get("schedulingPolicy") or {"basic": {}})
    if policy.get("gang") is not None:
        gang = dict(policy["gang"] or {})
        gang.setdefault("minCount", int(spec.get("parallelism", 1)))
        policy = {"gang": gang}
    out: Obj = {"name": template_name(job), "schedulingPolicy": policy}
    if scheduling.get("disruptionMode") is not None:
        out["disruptionMode"] = scheduling["disruptionMode"]
    return out


class JobScheduling:
    """The Workload and PodGroup of the Jobs the simulated Job controller syncs."""

    def __init__(self, api: ClusterWriter) -> None:
        self.api = api

    def _gate(self, name: str) -> bool:
        # Both gates are off by default upstream (GenericWorkload beta, WorkloadWithJob alpha).
        return bool(self.api.feature_gates.get(name, False))

    def manages(self, job: Obj) -> bool:
        """``shouldManageWorkloadForJob``."""
        if not (self._gate(GENERIC_WORKLOAD) and self._gate(WORKLOAD_WITH_JOB)):
            return False
        template_spec = ((job.get("spec") or {}).get("template") or {}).get("spec") or {}
        if template_spec.get("schedulingGroup") is not None:
            return False
        return not any(r.get("controller") for r in job["metadata"].get("ownerReferences") or [])

    def pod_group_for(self, job: Obj, new_job: bool) -> str | None:
        """``ensureWorkloadAndPodGroup``: the PodGroup the Job's pods join (created for a new Job),
        or None (the Job falls back to pod-by-pod scheduling)."""
        if not self.manages(job):
            return None
        ns, uid = job["metadata"].get("namespace", ""), job["metadata"]["uid"]
        wanted = _template(job)
        workloads = [w for w in self.api.store.bucket(WORKLOADS).items(ns) if _controlled_by(w, uid)]
        if len(workloads) > 1:
            return None
        if not workloads:
            if not new_job:
                return None
            workload = self._create(WORKLOADS, ns, {
                "apiVersion": f"{GROUP}/{VERSION}", "kind": "Workload",
                "metadata": {"name": workload_name(job), "namespace": ns, "ownerReferences": [_controller_ref(job)]},
                "spec": {"controllerRef": {"apiGroup": "batch", "kind": "Job", "name": job["metadata"]["name"]},
                         "podGroupTemplates": [wanted]}})
            if workload is None:
                return None
        else:
            workload = workloads[0]
        templates = (workload.get("spec") or {}).get("podGroupTemplates") or []
        if len(templates) != 1:         # validateWorkloadStructure
            return None
        template = templates[0]
        groups = [g for g in self.api.store.bucket(PODGROUPS).items(ns) if _controlled_by(g, uid)]
        if len(groups) > 1:
            return None
        if not groups:
            if not new_job:
                return None
            wl_name = workload["metadata"]["name"]
            spec: Obj = {"workloadRef": {"workloadName": wl_name, "templateName": template["name"]},
                         "schedulingPolicy": template["schedulingPolicy"]}
            if template.get("disruptionMode") is not None:
                spec["disruptionMode"] = template["disruptionMode"]
            group = self._create(PODGROUPS, ns, {
                "apiVersion": f"{GROUP}/{VERSION}", "kind": "PodGroup",
                "metadata": {"name": pod_group_name(wl_name, template["name"]), "namespace": ns,
                             "ownerReferences": [_controller_ref(job), {
                                 "apiVersion": f"{GROUP}/{VERSION}", "kind": "Workload", "name": wl_name,
                                 "uid": workload["metadata"]["uid"]}]},
                "spec": spec})
            if group is None:
                return None
        else:
            group = groups[0]
        self._sync_min_count(workload, group, wanted)
        return str(group["metadata"]["name"])

    def _sync_min_count(self, workload: Obj, group: Obj, wanted: Obj) -> None:
        """``syncGangMinCount``: a gang's ``minCount`` follows the Job (elastic scaling)."""
        count = (wanted["schedulingPolicy"].get("gang") or {}).get("minCount")
        if count is None:
            return
        templates = workload["spec"]["podGroupTemplates"]
        gang = templates[0]["schedulingPolicy"].get("gang")
        if gang is not None and gang.get("minCount") != count:
            new = {**workload, "spec": {**workload["spec"], "podGroupTemplates": [
                {**templates[0], "schedulingPolicy": {"gang": {**gang, "minCount": count}}}]}}
            self._update(WORKLOADS, workload, new)
        gang = group["spec"]["schedulingPolicy"].get("gang")
        if gang is not None and gang.get("minCount") != count:
            new = {**group, "spec": {**group["spec"], "schedulingPolicy": {"gang": {**gang, "minCount": count}}}}
            self._update(PODGROUPS, group, new)

    def _rt(self, store: str) -> Any:
        return self.api.rt(GROUP, VERSION, store.rpartition("/")[2])

    def _create(self, store: str, ns: str, body: Obj) -> Obj | None:
        try:
            return self.api.create(self._rt(store), ns, body, fresh=True, writer=Writer("kube-controller-manager"))
        except ApiError:                # refused (an invalid spec.scheduling): pod-by-pod, as upstream
            return None

    def _update(self, store: str, old: Obj, new: Obj) -> None:
        with contextlib.suppress(ApiError):
            self.api.write(self._rt(store), old, new)
