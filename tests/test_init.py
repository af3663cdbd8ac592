"""``scheduler``'s public names, pinned as httpx pins its exports: embedding the core from Python
(README, "Using the core from Python") starts here, so a change to this list is an API change.
The extension-point Protocols are ``scheduler.framework``'s (``tests/framework/test_init.py``)."""

import scheduler

PUBLIC = [
    "Cache", "Code", "Framework", "Metrics", "Node", "ParseError", "Pod", "ProfileError", "ProfileMap",
    "QuantityError", "Registry", "Scheduler", "SchedulerError", "SchedulingProfileSpec", "SchedulingQueue",
    "Status", "compile_profile", "parse_node", "parse_pod", "parse_spec",
]


def test_public_api_is_pinned() -> None:
    assert scheduler.__all__ == PUBLIC


def test_every_public_name_is_there() -> None:
    assert all(hasattr(scheduler, name) for name in PUBLIC)


def test_the_package_loads_no_edge() -> None:
    """``import scheduler`` is the core alone: no Kopf, no HTTP, no CLI (the contracts say so of the
    imports; this says so of a fresh interpreter)."""
    import subprocess
    import sys
    code = ("import sys, scheduler; bad = sorted(m for m in sys.modules if m.split('.')[0] in "
            "{'kopf', 'aiohttp', 'click', 'kubernetes'} or m.startswith(('scheduler.app', 'scheduler.kubeapi', "
            "'scheduler.simulator', 'scheduler.benchmark'))); print(bad); sys.exit(1 if bad else 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
