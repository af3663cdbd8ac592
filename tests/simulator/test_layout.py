"""The simulated API server's shape: kube-apiserver's seams, held by import-linter and by these guards.

``simulator-layers`` in ``pyproject.toml`` keeps the imports one way (``tests/test_layout.py`` runs the
contracts); the tests here make sure the contract names every package of the simulator and that no class
grows back into a god object.
"""

import ast
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
SIMULATOR = REPO / "scheduler" / "simulator"
CONTRACTS = {c["id"]: c for c in tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]}
MAX_CLASS_LINES = 400


def test_no_class_is_over_400_lines() -> None:
    big = []
    for path in sorted(SIMULATOR.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_CLASS_LINES:
                    big.append(f"{path.relative_to(REPO)}:{node.name} ({lines} lines)")
    assert big == []


def test_the_layers_contract_names_every_package_and_the_server() -> None:
    """Handlers, registries, controllers, the seams and the store each have their layer; a new subpackage
    must be given one."""
    contract = CONTRACTS["simulator-layers"]
    assert contract["containers"] == ["scheduler.simulator"]
    layered = {m.strip() for layer in contract["layers"] for m in layer.split("|")}
    packages = {p.name for p in SIMULATOR.iterdir() if (p / "__init__.py").exists()}
    assert packages <= layered
    assert {"server", "interfaces", "store", "apierrors"} <= layered
    for name in layered:
        assert (SIMULATOR / f"{name}.py").exists() or (SIMULATOR / name / "__init__.py").exists(), name


def test_handlers_and_controllers_are_independent() -> None:
    """Neither side imports the other: the handlers reach the controllers through ``ControllerHooks``,
    the controllers the server through ``ClusterWriter``."""
    layers = CONTRACTS["simulator-layers"]["layers"]
    assert "handlers | controllers" in layers
    assert layers.index("handlers | controllers") < layers.index("registry") < layers.index("interfaces")
