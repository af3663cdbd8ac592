"""Guards for the project's layering and the `operator` trap (see ../shared/GUIDE.md).

The layering itself is import-linter's contracts in ``pyproject.toml`` (``lint-imports`` runs them in
the README's test command; ``test_import_contracts_are_kept`` runs them from pytest too): the core
never imports an edge, Kopf, aiohttp, kubernetes, requests, httpx or click; the core's layers; the
edges' order. The tests here make sure the contracts cover every module, and that the test tree
mirrors the source.
"""

import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CONTRACTS = {c["id"]: c for c in tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]}
EDGES = set(CONTRACTS["core-layers"]["exhaustive_ignores"])       # the edges are what the core's layers leave out


def _top_level_modules() -> set[str]:
    pkg = REPO / "scheduler"
    return ({p.stem for p in pkg.glob("*.py") if p.stem != "__init__"}
            | {p.name for p in pkg.iterdir() if (p / "__init__.py").exists()})


def test_operator_is_not_a_package() -> None:
    assert not (REPO / "operator" / "__init__.py").exists()
    for f in (REPO / "operator").glob("*.py"):
        stem = f.stem
        assert stem not in sys.stdlib_module_names and stem != "scheduler", f"operator/{f.name} shadows a module"


def test_every_edge_is_a_package_and_the_rest_is_core() -> None:
    """A file's place says whether it is core or edge: no edge module beside the core at the top."""
    modules = _top_level_modules()
    assert {m for m in modules if (REPO / "scheduler" / m / "__init__.py").exists()} >= EDGES
    edge_layers = {m.strip() for layer in CONTRACTS["edges-layers"]["layers"] for m in layer.split("|")}
    assert edge_layers == {f"scheduler.{m}" for m in EDGES}
    forbidden = CONTRACTS["core-no-edges"]
    assert set(forbidden["source_modules"]) == {f"scheduler.{m}" for m in modules - EDGES}
    assert set(forbidden["forbidden_modules"]) >= {f"scheduler.{m}" for m in EDGES} | {
        "kopf", "aiohttp", "kubernetes", "requests", "httpx", "click"}
    layers = CONTRACTS["core-layers"]
    assert layers["exhaustive"] is True
    placed = {m.strip() for layer in layers["layers"] for m in layer.split("|")}
    assert placed == modules - EDGES


def test_the_import_graph_has_no_circle() -> None:
    """No module of ``scheduler`` reaches itself through its imports, ``if TYPE_CHECKING:`` ones
    included (grimp counts them, as the layers contracts do): an import ``a -> b`` lies on a circle
    exactly when ``b`` reaches ``a`` back, i.e. when both sit in a strongly connected component of
    more than one module. A circle found is named by its shortest chain."""
    import grimp
    graph = grimp.build_graph("scheduler", cache_dir=None)
    circles = set()
    for importer in graph.modules:
        for imported in graph.find_modules_directly_imported_by(importer):
            if imported in graph.modules and graph.chain_exists(importer=imported, imported=importer):
                chain = graph.find_shortest_chain(importer=imported, imported=importer)
                assert chain is not None
                circles.add(" -> ".join((importer, *chain)))
    assert sorted(circles) == []


def test_import_contracts_are_kept() -> None:
    out = subprocess.run([sys.executable, "-c", "import sys; from importlinter.cli import lint_imports; "
                          "sys.exit(lint_imports(no_cache=True, no_logo=True))"],
                         cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stdout + out.stderr


# The prose's layout (CONTRIBUTING.md, "House style"): README.md is a map whose test command is the
# one CI runs, the depth lives in docs/, and no link between them points at a file that is not there.
PROSE = ["README.md", "BENCHMARKS.md", "CHANGELOG.md", "CONTRIBUTING.md",
         *sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").glob("*.md"))]


def test_readme_test_command_is_what_ci_runs() -> None:
    ci_command = (REPO / ".ci" / "run").read_text().rstrip("\n").splitlines()[-1]
    for name in ("README.md", "CONTRIBUTING.md"):
        assert f"```sh\n{ci_command}\n```" in (REPO / name).read_text(), name


def test_readme_and_benchmarks_stay_maps() -> None:
    for name in ("README.md", "BENCHMARKS.md"):
        assert len((REPO / name).read_text().splitlines()) < 500, name


def test_prose_links_point_at_files_that_exist() -> None:
    import re
    broken = []
    for name in PROSE:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", (REPO / name).read_text()):
            if "://" not in target and not (REPO / name).parent.joinpath(target).exists():
                broken.append(f"{name} -> {target}")
    assert broken == []


# Test folders that mirror no module of ``scheduler``: the operator's end-to-end runs (``operator/``),
# what ships it (``deploy/``: the wheel, the image, the manifests) and data the tests load.
NOT_MIRRORS = {"operator", "deploy", "fixtures"}


def test_the_test_tree_mirrors_the_source() -> None:
    """Each test folder is named for a module of ``scheduler`` (a package, or a top-level module
    such as ``cycle.py``), and is a package itself; at most three cross-cutting tests stay at the top."""
    tests = REPO / "tests"
    at_top = sorted(p.name for p in tests.glob("test_*.py"))
    assert len(at_top) <= 3, at_top
    folders = {p.name for p in tests.iterdir() if p.is_dir() and p.name != "__pycache__" and not p.name.startswith(".")}
    assert folders - NOT_MIRRORS <= _top_level_modules(), folders - NOT_MIRRORS - _top_level_modules()
    for f in tests.rglob("test_*.py"):
        assert (f.parent / "__init__.py").exists(), f"{f.parent.relative_to(REPO)} has no __init__.py"
