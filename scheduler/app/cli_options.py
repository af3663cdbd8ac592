"""What the ``kopf-scheduler`` commands share (``cli.py`` is the overview): the ``--feature-gates``
callback, the simulated GPU driver's ``--gpus-per-node`` / ``--gpu-attributes`` options and their
check, and the process's logging set-up (``run`` and ``simulate``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click


def _feature_gates(ctx: click.Context, param: click.Parameter, value: str) -> dict[str, bool]:
    """``Name=bool[,Name=bool]`` (``scheduler/features.py``); an unknown gate is a usage error."""
    from scheduler.features import FeatureGateError, parse_feature_gates
    try:
        return parse_feature_gates(value or "")
    except FeatureGateError as e:
        raise click.BadParameter(str(e)) from None


def _gpu_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``--gpus-per-node`` and ``--gpu-attributes``: the simulated DRA driver
    (``scheduler.simulator.controllers.gpudriver``)."""
    fn = click.option("--gpu-attributes", type=click.Path(exists=True, dir_okay=False), default=None,
                      help="YAML describing the simulated GPUs (model, memory, driverVersion, attributes) in place "
                           "of the packaged scheduler/simulator/data/gpus.yaml.")(fn)
    return click.option("--gpus-per-node", type=click.IntRange(0, 128), default=0, show_default=True,
                        help="GPUs the simulated DRA driver gpu.example.com publishes on each node (one "
                             "ResourceSlice per node, DeviceClass gpu.example.com); 0: no driver.")(fn)


def _gpu_description(gpus_per_node: int, path: str | None) -> dict[str, Any] | None:
    """The GPU description ``--gpu-attributes`` names (the packaged one without it), checked up front."""
    from scheduler.simulator import load_gpu_attributes

    if gpus_per_node <= 0 and path is None:
        return None
    try:
        return load_gpu_attributes(path)
    except (ValueError, OSError) as e:
        raise click.BadParameter(str(e), param_hint="--gpu-attributes") from None


def _setup_logging(fmt: str, verbosity: int) -> None:
    import json
    import logging

    level = logging.WARNING if verbosity == 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    handler = logging.StreamHandler()
    if fmt == "json":
        class Json(logging.Formatter):
            def format(self, r: logging.LogRecord) -> str:
                return json.dumps({"ts": r.created, "level": r.levelname.lower(), "logger": r.name,
                                   "msg": r.getMessage(), **({"err": self.formatException(r.exc_info)}
                                                             if r.exc_info else {})})
        handler.setFormatter(Json())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    logging.getLogger("kopf_scheduler").setLevel(min(level, logging.INFO))
