"""``KubeSchedulerConfiguration`` (``kubescheduler.config.k8s.io/v1``) → SchedulingProfiles.

``kopf-scheduler config import FILE`` takes a user's kube-scheduler configuration across: one
SchedulingProfile per ``profiles[]`` entry, as upstream's defaulting reads the file
(``apis/config/v1/defaults.go``):

- no ``profiles`` at all is one profile, ``default-scheduler``, with the default plugins; an entry
  without ``schedulerName`` is ``default-scheduler``;
- the top-level ``percentageOfNodesToScore`` applies to a profile that does not set its own
  (upstream's profile-level field overrides the global one), and the top-level
  ``podInitialBackoffSeconds``/``podMaxBackoffSeconds`` (upstream: one queue, so global) go into
  every profile, where kopf-scheduler keeps them;
- ``plugins`` and ``pluginConfig`` are carried as they are: a SchedulingProfile's spec *is* a
  ``profiles[]`` entry, and the same defaulting and multiPoint expansion run on it when it is
  compiled, so its status shows the plugins and weights upstream would run; an args object's own
  ``apiVersion``/``kind`` (its type, checked by the validation) is dropped;
- the top-level ``extenders`` (upstream: one list, called for every profile) go into every
  profile's ``spec.extenders``, as they are, and are validated there as ``validateExtenders`` does.

What has no place in a SchedulingProfile is named, one line each, for the caller to print on
stderr, with where it goes instead (a ``run`` flag, or nothing): ``clientConnection``,
``leaderElection``, ``parallelism``, and so on. Nothing is dropped silently, and nothing unknown is
guessed at.

A file kube-scheduler would refuse to start with is refused whole (``ProfileError``), with upstream's
messages (``config_validation.py``: two profiles with one ``schedulerName``, a removed plugin, a
``percentageOfNodesToScore`` out of range, ...); a profile that its own compile would reject is the
caller's to refuse (``config import`` exits non-zero).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from scheduler.errors import ProfileError
from scheduler.profiles.config_validation import aggregate, validate_configuration
from scheduler.profiles.crd import API_VERSION, KIND

__all__ = ["API_VERSIONS", "ImportResult", "import_configuration"]

API_VERSIONS = ("kubescheduler.config.k8s.io/v1",)
_REMOVED = {"kubescheduler.config.k8s.io/v1beta1": "1.26", "kubescheduler.config.k8s.io/v1beta2": "1.28",
            "kubescheduler.config.k8s.io/v1beta3": "1.29", "kubescheduler.config.k8s.io/v1alpha1": "1.23",
            "kubescheduler.config.k8s.io/v1alpha2": "1.23"}
DEFAULT_SCHEDULER_NAME = "default-scheduler"

# Top-level fields with no place in a profile, and what to do instead.
_ELSEWHERE = {
    "clientConnection": ("use run --kubeconfig, --kube-api-qps and --kube-api-burst"
                         " (content types are the client's own)"),
    "leaderElection": "use run --leader-elect and the --leader-elect-* flags",
    "parallelism": "kopf-scheduler filters and scores a whole node column at once; there is no worker pool to size",
    "healthzBindAddress": "use run --health-bind-address",
    "metricsBindAddress": "use run --metrics-bind-address",
    "enableProfiling": "not served",
    "enableContentionProfiling": "not served",
    "delayCacheUntilActive": "the cache always fills before the lease is taken (--leader-elect)",
    "featureGates": "use run --feature-gates (it takes every kube-scheduler 1.37 gate)",
}
_PROFILE_FIELDS = {"schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig"}
_TOP_FIELDS = {"apiVersion", "kind", "profiles", "percentageOfNodesToScore", "podInitialBackoffSeconds",
               "podMaxBackoffSeconds", "extenders", *_ELSEWHERE}
_DNS_LABEL = re.compile(r"[^a-z0-9.-]+")


@dataclass
class ImportResult:
    """The SchedulingProfile objects, and one line per field that did not come across."""

    profiles: list[dict[str, Any]] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)


def _object_name(scheduler_name: str, taken: set[str]) -> str:
    """The profile's metadata.name: its schedulerName (already a DNS subdomain, the CRD checks it)."""
    base = _DNS_LABEL.sub("-", scheduler_name.lower()).strip("-.") or "profile"
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}-{n}"
    taken.add(name)
    return name


def import_configuration(doc: Any) -> ImportResult:
    """One parsed YAML/JSON document → SchedulingProfiles; ProfileError when it is not a v1 config,
    or is one kube-scheduler's validation refuses."""
    _check_kind(doc)
    errors = validate_configuration(doc)
    if errors:
        raise ProfileError(aggregate(errors))
    out = ImportResult()
    for key in doc:
        if key in _ELSEWHERE:
            out.unsupported.append(f"{key}: not imported: {_ELSEWHERE[key]}")
        elif key not in _TOP_FIELDS:
            out.unsupported.append(f"{key}: not imported: unknown field of KubeSchedulerConfiguration v1")
    profiles = doc.get("profiles")
    if profiles is None or profiles == []:
        profiles = [{}]
    if not isinstance(profiles, list):
        raise ProfileError("profiles: must be a list")
    shared = {k: doc[k] for k in ("podInitialBackoffSeconds", "podMaxBackoffSeconds") if doc.get(k) is not None}
    extenders = doc.get("extenders")
    if extenders is not None and not isinstance(extenders, list):
        raise ProfileError("extenders: must be a list")
    taken: set[str] = set()
    for i, entry in enumerate(profiles):
        spec = _profile_spec(i, entry, doc.get("percentageOfNodesToScore"), shared, extenders, out)
        out.profiles.append({"apiVersion": API_VERSION, "kind": KIND,
                             "metadata": {"name": _object_name(spec["schedulerName"], taken)}, "spec": spec})
    return out


def _check_kind(doc: Any) -> None:
    """Refuse a document that is not a KubeSchedulerConfiguration of a supported apiVersion."""
    if not isinstance(doc, dict):
        raise ProfileError("not a KubeSchedulerConfiguration: the document is not a mapping")
    api, kind = doc.get("apiVersion"), doc.get("kind")
    if kind != "KubeSchedulerConfiguration":
        raise ProfileError(f"not a KubeSchedulerConfiguration: kind is {kind!r}")
    if api in _REMOVED:
        raise ProfileError(f"apiVersion {api} was removed in Kubernetes {_REMOVED[api]}; "
                           f"migrate the file to kubescheduler.config.k8s.io/v1 first")
    if api not in API_VERSIONS:
        raise ProfileError(f"unsupported apiVersion {api!r} (want kubescheduler.config.k8s.io/v1)")


def _profile_spec(i: int, entry: Any, global_pct: Any, shared: Mapping[str, Any], extenders: list[Any] | None,
                  out: ImportResult) -> dict[str, Any]:
    """``profiles[i]`` as a SchedulingProfile spec; its unknown fields are noted in ``out``."""
    if not isinstance(entry, dict):
        raise ProfileError(f"profiles[{i}]: must be a mapping")
    for key in entry:
        if key not in _PROFILE_FIELDS:
            out.unsupported.append(f"profiles[{i}].{key}: not imported: unknown field of KubeSchedulerProfile")
    scheduler_name = entry.get("schedulerName") or DEFAULT_SCHEDULER_NAME
    spec: dict[str, Any] = {"schedulerName": scheduler_name}
    pct = entry.get("percentageOfNodesToScore", global_pct)
    if pct is not None:
        spec["percentageOfNodesToScore"] = pct
    spec.update(shared)
    if entry.get("plugins") is not None:
        spec["plugins"] = entry["plugins"]
    if entry.get("pluginConfig"):
        spec["pluginConfig"] = [_without_type_meta(pc) for pc in entry["pluginConfig"]]
    if extenders:
        spec["extenders"] = extenders
    return spec


def _without_type_meta(pc: Any) -> Any:
    """A pluginConfig entry whose args carry no ``apiVersion``/``kind`` (validation checked them)."""
    if not isinstance(pc, dict) or not isinstance(pc.get("args"), dict):
        return pc
    args = {k: v for k, v in pc["args"].items() if k not in ("apiVersion", "kind")}
    return {**pc, "args": args}
