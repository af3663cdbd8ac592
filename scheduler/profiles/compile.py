"""Compile a ``SchedulingProfileSpec`` into an immutable ``Framework``.

The rules are upstream's, in order:

1. **Merge with the defaults** (``mergePlugins``): per extension point (multiPoint included), a
   custom ``disabled`` list removes default plugins (``"*"``: all of them); a custom ``enabled``
   plugin that is also a default replaces it in place (keeping the default's position); other
   custom plugins are appended.
2. **Expand multiPoint** (``expandMultiPointPlugins``): each multiPoint plugin is added to every
   point it implements, unless disabled there (or ``"*"``); a plugin also enabled explicitly at a
   point keeps its explicit position: explicit overrides first, then multiPoint, then the other
   explicit ones.
3. **Score weights**: an explicit Score weight wins over the multiPoint weight; 0 or unset means 1.
4. **Args** from ``pluginConfig`` are validated by the plugin's args model; each plugin is built
   once and shared by every point it serves.

A plugin serves the extension points whose Protocol it implements (``implements``: ``isinstance``
against the ``runtime_checkable`` Protocols of ``scheduler.framework.interfaces``); the typed
lists, one per point (``framework/plugin_lists.py``'s frozen ``PluginLists``), are built once here
and handed to ``Framework``, which stores them.

5. **Extenders** (``spec.extenders``) are built by the ``extender_factory`` the service was given
   (the edge's HTTP client); without one, a profile that names extenders is refused rather than
   run without them. As upstream's ``buildExtenders``: the ignorable ones are called after the
   others, and the managed resources marked ``ignoredByScheduler`` become NodeResourcesFit's
   ``ignoredResources`` (replacing any configured there).

Every error is a ``ProfileError`` whose ``field`` is the spec path (``plugins.score.enabled[1]``,
``pluginConfig[0].args.scoringStrategy.type``) so the CR status can name it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pydantic

from scheduler.errors import PluginArgsError, ProfileError, UnknownPluginError
from scheduler.framework.extender import Extender
from scheduler.framework.handle import Handle
from scheduler.framework.interfaces import Plugin, implements
from scheduler.framework.plugin_lists import FrameworkError, PluginLists
from scheduler.framework.runtime import Framework
from scheduler.metrics import Metrics
from scheduler.plugins.registry import Registry
from scheduler.profiles.defaults import default_plugins
from scheduler.profiles.models import (
    EXTENSION_POINTS,
    ExtenderConfig,
    PluginRef,
    Plugins,
    PluginSet,
    SchedulingProfileSpec,
)

__all__ = ["ExtenderBuilder", "build_extenders", "compile_profile", "parse_spec", "pydantic_error_message"]

# Builds one extender from its config; raises ProfileError (its field relative to the entry) or
# any exception for a config it cannot serve (an unreadable certificate file, say).
ExtenderBuilder = Callable[[ExtenderConfig], Extender]

def _one(error: Any, prefix: str) -> tuple[str, str]:
    parts: list[str] = [prefix] if prefix else []
    for loc in error["loc"]:
        if isinstance(loc, int):
            if parts:
                parts[-1] += f"[{loc}]"
            else:
                parts.append(f"[{loc}]")
        else:
            parts.append(str(loc))
    msg = error["msg"]
    if error["type"] == "extra_forbidden":
        msg = "unknown field"
    elif msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    return ".".join(parts), msg


def pydantic_error_message(err: pydantic.ValidationError, prefix: str = "") -> tuple[str, str]:
    """(field path of the first error, every error's message) in Kubernetes' ``a.b[0].c`` notation.

    An edit with several mistakes reports them all, as kube-apiserver's aggregated 422 does, so a
    user fixes them in one round: ``spec.a: m1; spec.b: m2`` (the first field is the error's
    ``field``, and the message carries the others after the first)."""
    errors = [_one(e, prefix) for e in err.errors()]
    field, msg = errors[0]
    rest = [f"{f}: {m}" if f else m for f, m in errors[1:]]
    return field, "; ".join([msg, *rest])


def parse_spec(raw: Mapping[str, Any]) -> SchedulingProfileSpec:
    try:
        return SchedulingProfileSpec.model_validate(dict(raw))
    except pydantic.ValidationError as e:
        field, msg = pydantic_error_message(e, "spec")
        raise ProfileError(msg, field=field) from None


def _merge_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    disabled = {p.name for p in custom.disabled}
    custom_index = {p.name: i for i, p in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[PluginRef] = []
    if "*" not in disabled:
        for p in default.enabled:
            if p.name in disabled:
                continue
            i = custom_index.get(p.name)
            if i is not None:
                p = custom.enabled[i]
                replaced.add(i)
            enabled.append(p)
    enabled += [p for i, p in enumerate(custom.enabled) if i not in replaced]
    return PluginSet(enabled=tuple(enabled), disabled=custom.disabled)


def _merge(default: Plugins, custom: Plugins | None) -> dict[str, PluginSet]:
    points = ("multiPoint", *EXTENSION_POINTS)
    if custom is None:
        return {p: default.point(p) for p in points}
    return {p: _merge_set(default.point(p), custom.point(p)) for p in points}


def build_extenders(spec: SchedulingProfileSpec, factory: ExtenderBuilder | None) -> list[Extender]:
    """One extender per ``spec.extenders`` entry, in the order they are called in: the entries'
    order, the ignorable ones moved to the end (upstream's ``buildExtenders``)."""
    if not spec.extenders:
        return []
    if factory is None:
        raise ProfileError("HTTP extenders are configured, but this process has no extender client "
                           "(only the operator and simulate call extenders)", field="spec.extenders")
    out: list[Extender] = []
    for i, cfg in enumerate(spec.extenders):
        where = f"spec.extenders[{i}]"
        try:
            out.append(factory(cfg))
        except ProfileError as e:
            raise ProfileError(str(e) if not e.field else str(e)[len(e.field) + 2:],
                               field=f"{where}.{e.field}" if e.field else where) from None
        except Exception as e:
            raise ProfileError(f"{type(e).__name__}: {e}", field=where) from None
    return [e for e in out if not e.is_ignorable()] + [e for e in out if e.is_ignorable()]


Where = Callable[[str, str], str]


def compile_profile(spec: SchedulingProfileSpec, *, registry: Registry, handle: Handle | None = None,
                    metrics: Metrics | None = None, seed: int | None = None,
                    on_plugin: Callable[[Plugin], None] | None = None,
                    extender_factory: ExtenderBuilder | None = None) -> Framework:
    handle = handle or Handle()
    extenders = build_extenders(spec, extender_factory)
    merged = _merge(default_plugins(handle.feature_gates), spec.plugins)
    user_points = {p: (spec.plugins.point(p) if spec.plugins else PluginSet())
                   for p in ("multiPoint", *EXTENSION_POINTS)}

    def where(point: str, name: str) -> str:
        for i, p in enumerate(user_points[point].enabled):
            if p.name == name:
                return f"spec.plugins.{point}.enabled[{i}]"
        return f"spec.plugins.{point}"

    args_by_name = _args_by_name(spec, merged, registry)
    instances, plugin_args = _instantiate(merged, args_by_name, registry, handle, on_plugin, where)
    per_point = {point: _expand(point, merged, instances, where) for point in EXTENSION_POINTS}
    try:
        lists = PluginLists.build(spec.scheduler_name, per_point, _score_weights(merged), list(instances.values()))
    except FrameworkError as e:
        raise ProfileError(str(e), field="spec.plugins") from None
    return Framework(
        spec.scheduler_name, lists,
        percentage_of_nodes_to_score=spec.percentage_of_nodes_to_score,
        pod_initial_backoff=float(spec.pod_initial_backoff_seconds),
        pod_max_backoff=float(spec.pod_max_backoff_seconds),
        metrics=metrics, seed=seed, nominator=handle.nominator, plugin_args=plugin_args, extenders=extenders,
        waiting_pods=handle.waiting_pods,
    )


def _args_by_name(spec: SchedulingProfileSpec, merged: Mapping[str, PluginSet], registry: Registry
                  ) -> dict[str, tuple[int | None, dict[str, Any] | None]]:
    """Each configured plugin's (pluginConfig index, raw args); the resources extenders manage
    alone go into NodeResourcesFit's ``ignoredResources`` (upstream's ``buildExtenders``)."""
    args_by_name: dict[str, tuple[int | None, dict[str, Any] | None]] = {
        pc.name: (i, pc.args) for i, pc in enumerate(spec.plugin_config)}
    ignored = [r.name for ext in spec.extenders for r in ext.managed_resources if r.ignored_by_scheduler]
    if ignored:
        # The resources extenders manage alone: NodeResourcesFit must not count them (buildExtenders).
        if not any(ref.name == "NodeResourcesFit" for point in ("multiPoint", *EXTENSION_POINTS)
                   for ref in merged[point].enabled):
            raise ProfileError("can't find NodeResourcesFitArgs in plugin config", field="spec.extenders")
        i, fit_args = args_by_name.get("NodeResourcesFit", (None, None))
        args_by_name["NodeResourcesFit"] = (i, {**(fit_args or {}), "ignoredResources": ignored})
    for name, (i, _) in args_by_name.items():
        if name not in registry:
            raise UnknownPluginError(f"plugin {name!r} is not registered", field=f"spec.pluginConfig[{i}].name")
    return args_by_name


def _instantiate(merged: Mapping[str, PluginSet], args_by_name: Mapping[str, tuple[int | None, dict[str, Any] | None]],
                 registry: Registry, handle: Handle, on_plugin: Callable[[Plugin], None] | None, where: Where
                 ) -> tuple[dict[str, Plugin], dict[str, object]]:
    """Instantiate every enabled plugin once: (plugins by name, their validated args)."""
    instances: dict[str, Plugin] = {}
    plugin_args: dict[str, object] = {}
    for point in ("multiPoint", *EXTENSION_POINTS):
        for ref in merged[point].enabled:
            if ref.name in instances:
                continue
            spec_ = registry.get(ref.name, field=where(point, ref.name))
            raw_args = args_by_name.get(ref.name, (None, None))
            args = _validated_args(spec_.args_model, ref.name, raw_args, handle.feature_gates)
            try:
                plugin = spec_.factory(args, handle)
            except ProfileError as e:
                prefix = f"spec.pluginConfig[{raw_args[0]}].args" if raw_args[0] is not None else ref.name
                raise PluginArgsError(str(e), field=prefix if not e.field else f"{prefix}.{e.field}") from None
            if on_plugin is not None:
                on_plugin(plugin)
            instances[ref.name] = plugin
            plugin_args[ref.name] = args
    return instances, plugin_args


def _validated_args(model: type[pydantic.BaseModel] | None, name: str,
                    raw_args: tuple[int | None, dict[str, Any] | None],
                    feature_gates: Mapping[str, bool] | None = None) -> Any:
    """A plugin's args validated by its args model (None for a plugin that takes none). The
    process's feature gates are the validation's context: upstream's args validation refuses a
    field whose gate is off (``validation_pluginargs.go``)."""
    if model is not None:
        try:
            return model.model_validate(raw_args[1] or {}, context=dict(feature_gates or {}))
        except pydantic.ValidationError as e:
            field, msg = pydantic_error_message(e, f"spec.pluginConfig[{raw_args[0]}].args"
                                                if raw_args[0] is not None else f"{name}.args")
            raise PluginArgsError(msg, field=field) from None
    if raw_args[1]:
        raise PluginArgsError(f"plugin {name!r} takes no args", field=f"spec.pluginConfig[{raw_args[0]}].args")
    return None


def _expand(point: str, merged: Mapping[str, PluginSet], instances: Mapping[str, Plugin], where: Where
            ) -> list[Plugin]:
    """Expand multiPoint into ``point``: the plugins that implement it, in upstream's order."""
    explicit = [r.name for r in merged[point].enabled]
    for n in explicit:
        if not implements(instances[n], point):
            raise ProfileError(f"plugin {n!r} does not extend {point}", field=where(point, n))
    disabled = {r.name for r in merged[point].disabled}
    order = explicit if "*" in disabled else _with_multi_point(point, merged, instances, explicit, disabled, where)
    if len(set(order)) != len(order):
        dup = next(n for n in order if order.count(n) > 1)
        raise ProfileError(f"plugin {dup!r} already registered as {point!r}", field=where(point, dup))
    return [instances[n] for n in order]


def _with_multi_point(point: str, merged: Mapping[str, PluginSet], instances: Mapping[str, Plugin],
                      explicit: list[str], disabled: set[str], where: Where) -> list[str]:
    """Explicit overrides first, then multiPoint, then the other explicit ones."""
    overrides: list[str] = []
    multi: list[str] = []
    for ref in merged["multiPoint"].enabled:
        if not implements(instances[ref.name], point) or ref.name in disabled:
            continue
        if ref.name in explicit:
            overrides.append(ref.name)
            continue
        if ref.name in multi:
            raise ProfileError(f"plugin {ref.name!r} already registered as {point!r}",
                               field=where("multiPoint", ref.name))
        multi.append(ref.name)
    return [n for n in explicit if n in overrides] + multi + [n for n in explicit if n not in overrides]


def _score_weights(merged: Mapping[str, PluginSet]) -> dict[str, int]:
    """Score weights: explicit Score entries win over multiPoint ones; 0/unset means 1."""
    weights: dict[str, int] = {}
    for ref in merged["multiPoint"].enabled:
        weights[ref.name] = ref.weight or 1
    for ref in merged["score"].enabled:
        if ref.weight or ref.name not in weights:
            weights[ref.name] = ref.weight or 1
    return weights
