"""Guards for the project's layering and the `operator` trap (see ../shared/GUIDE.md)."""

import ast
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EDGES = {"app", "benchmark", "kubeapi", "simulator"}


def test_operator_is_not_a_package() -> None:
    assert not (REPO / "operator" / "__init__.py").exists()
    for f in (REPO / "operator").glob("*.py"):
        stem = f.stem
        assert stem not in sys.stdlib_module_names and stem != "scheduler", f"operator/{f.name} shadows a module"


def test_core_never_imports_kopf_or_http() -> None:
    for f in (REPO / "scheduler").rglob("*.py"):
        rel = f.relative_to(REPO / "scheduler")
        if rel.parts[0] in EDGES:
            continue
        tree = ast.parse(f.read_text())
        for n in ast.walk(tree):
            names = [a.name for a in n.names] if isinstance(n, ast.Import) else (
                [n.module or ""] if isinstance(n, ast.ImportFrom) else [])
            for name in names:
                top = name.split(".")[0]
                assert top not in {"kopf", "aiohttp", "kubernetes", "requests", "httpx", "click"}, f"{rel} imports {name}"
