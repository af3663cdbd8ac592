"""``scheduler.framework``'s public names, pinned as httpx pins its exports: out-of-tree plugin
authors import the extension-point Protocols from here, so a change to this list is an API change."""

import scheduler.framework

PUBLIC = [
    "MAX_NODE_SCORE", "SUCCESS", "BatchFilterPlugin", "BatchScorePlugin", "BindPlugin", "ClusterEvent",
    "ClusterEventWithHint", "Code", "CycleState", "Diagnosis", "EnqueueExtensions", "FilterConfigured", "FilterPlugin",
    "FilterRunner",
    "FilterVerdict", "Framework", "FrameworkError", "Handle", "NodeLocalFilter", "NodeToStatus", "PermitPlugin",
    "Plugin", "PodNominator", "PodReadingPreFilter", "PostBindPlugin", "PostFilterContext", "PostFilterPlugin",
    "PostFilterResult", "PreBindPlugin", "PreBindPreFlightPlugin", "PreBindWaiter", "PreEnqueuePlugin", "PreFilterPlugin",
    "PreFilterResult", "PreScorePlugin",
    "QueueSortPlugin", "QueuedPodInfo", "ReservePlugin", "ScoreExtensions", "ScoreExtensionsPlugin", "ScorePlugin",
    "SignPlugin", "StateMissingError", "Status", "UniformScorePlugin", "fit_error_message", "implements", "num_feasible_nodes_to_find",
]


def test_public_api_is_pinned() -> None:
    assert scheduler.framework.__all__ == PUBLIC


def test_every_public_name_is_there() -> None:
    assert all(hasattr(scheduler.framework, name) for name in PUBLIC)


def test_every_extension_point_protocol_is_exported() -> None:
    """Out-of-tree plugin authors import the Protocols from ``scheduler.framework``: none may be
    declared in ``interfaces`` and left out of the package's exports."""
    import typing

    from scheduler.framework import interfaces
    protocols = {name for name, obj in vars(interfaces).items()
                 if isinstance(obj, type) and getattr(obj, "_is_protocol", False) and obj.__module__ == interfaces.__name__
                 and obj is not typing.Protocol}
    assert protocols, "no Protocols found in scheduler.framework.interfaces"
    assert protocols <= set(scheduler.framework.__all__), sorted(protocols - set(scheduler.framework.__all__))
