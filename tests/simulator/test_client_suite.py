"""The official Kubernetes Python client's own e2e suite (``kubernetes/e2e_test``) against the simulated
cluster, with the real operator scheduling its pods: an independent check of the simulator's fidelity.

Opt-in (``pytest -m clientsuite -n0 tests/simulator/test_client_suite.py``): it needs the network once
and takes minutes. Nothing of the suite is vendored here:

- the newest ``kubernetes`` release is found with ``pip download --no-binary :all: --no-deps kubernetes``
  (its sdist is kept in pytest's cache). PyPI's sdists do not ship ``e2e_test/``, so the suite comes from
  the release's tag on GitHub (``kubernetes-client/python``, ``v<version>``), or from a checkout of that
  repository named by ``KOPF_SCHEDULER_CLIENT_SUITE`` (a machine without GitHub); offline (no PyPI), the
  test skips;
- that release is installed with ``pip install --target`` into pytest's cache (never into this venv), the
  suite copied into it as the ``kubernetes.e2e_test`` package it is, and run with pytest in a subprocess
  from that directory (its YAML paths are relative to it; bounded by ``SUITE_TIMEOUT``), ``KUBECONFIG`` pointing at the simulated cluster (``e2e_test/base.py``
  reads it);
- the client's own cluster tests that its wheel ships (``PACKAGED``: the dynamic client's) run too; where
  the e2e suite cannot be had, a stand-in ``e2e_test/base.py`` (``_BASE``) gives them the cluster;
- the tests that need a container runtime (``CONTAINER_RUNTIME``: exec, port-forward, container
  metrics) are skipped by name, with the reason; every other test must pass. ``CLIENTSUITE_LOG=path``
  keeps the suite's own output.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from scheduler.profiles.crd import API_VERSION, KIND
from tests.operator.harness import Env, running_operator
from tests.simulator.helpers import node

pytestmark = pytest.mark.clientsuite

SUITE_TIMEOUT = 1200
PIP_TIMEOUT = 600
SOURCE_ENV = "KOPF_SCHEDULER_CLIENT_SUITE"
TAG_URL = "https://github.com/kubernetes-client/python/archive/refs/tags/v{version}.tar.gz"
_EXEC = "execs a command in a running container (connect_*_namespaced_pod_exec): needs a container runtime"
_PORTFORWARD = "port-forwards to a container's port (portforward): needs a container runtime"
_METRICS = ("reads its container's CPU and memory usage from metrics.k8s.io (metrics-server over the kubelet's "
            "cAdvisor): needs a container runtime")
# The suites: the client's, and the asyncio client's (kubernetes.aio) where the release has one.
SUITES = ("e2e_test", "aio/e2e_test")
# The client's cluster tests that its wheel itself ships (the dynamic client's, both flavours). They read
# their cluster from ``kubernetes.e2e_test.base``; without the GitHub suite, ``_BASE`` stands in for it,
# so these run wherever PyPI is reachable.
PACKAGED = ("dynamic/test_client.py", "dynamic/test_discovery.py", "aio/dynamic/client_test.py",
            "aio/dynamic/discovery_test.py")
# ``get_e2e_configuration`` as the suite's ``base.py`` has it, for the KUBECONFIG this test sets (our
# own few lines, written into the installed copy only when the suite's own are not there).
_BASE = {
    "e2e_test": """
from kubernetes.client.configuration import Configuration
from kubernetes.config import kube_config


def get_e2e_configuration():
    config = Configuration()
    kube_config.load_kube_config(client_configuration=config)
    config.assert_hostname = False
    return config
""",
    "aio/e2e_test": """
import asyncio

from kubernetes.aio.client.configuration import Configuration
from kubernetes.aio.config import kube_config


def get_e2e_configuration():
    config = Configuration()
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    loop.run_until_complete(kube_config.load_kube_config(client_configuration=config))
    config.assert_hostname = False
    return config
""",
}
# The suite's tests that need a container runtime, by node id under kubernetes/, and why.
CONTAINER_RUNTIME: dict[str, str] = {
    "e2e_test/test_client.py::TestClient::test_pod_apis": _EXEC,
    "e2e_test/test_client.py::TestClient::test_pod_exec_close_channel": _EXEC,
    "e2e_test/test_client.py::TestClient::test_exit_code": _EXEC,
    "e2e_test/test_client.py::TestClient::test_portforward_raw": _PORTFORWARD,
    "e2e_test/test_client.py::TestClient::test_portforward_http": _PORTFORWARD,
    "e2e_test/test_utils.py::TestUtils::test_metrics_utilities_integration": _METRICS,
}
_V1BETA1_CRD = ("creates an apiextensions.k8s.io/v1beta1 CustomResourceDefinition, an API removed in Kubernetes "
                "1.22: kube-apiserver 1.37 has no such resource either")
# The packaged tests that fail against any 1.37 cluster, by node id under kubernetes/, and why.
NOT_ON_137: dict[str, str] = {
    "dynamic/test_client.py::TestDynamicClient::test_cluster_custom_resources": _V1BETA1_CRD,
    "dynamic/test_client.py::TestDynamicClient::test_namespaced_custom_resources": _V1BETA1_CRD,
    "dynamic/test_client.py::TestDynamicClient::test_async_namespaced_custom_resources": _V1BETA1_CRD,
    "dynamic/test_discovery.py::TestDiscoverer::test_cache_decoder_resource_and_subresource": (
        "compares two dynamic.Resource objects with ==, which the client's Resource does not define (so it is "
        "identity): false against any cluster"),
    "aio/dynamic/client_test.py::TestDynamicClient::test_server_side_apply_api": (
        "applies an apps/v1 Deployment at the pods endpoint: kube-apiserver refuses it with 400 'Incorrect "
        "version specified in apply patch', as this cluster does (tests/simulator/test_patch.py)"),
}
SKIPPED = {**CONTAINER_RUNTIME, **NOT_ON_137}
# Marks SKIPPED's tests skipped with their reasons (written into the suite's copy, not the repo).
_CONFTEST = '''
import json, os
import pytest

SKIP = json.loads(os.environ["CLIENTSUITE_SKIP"])


def pytest_collection_modifyitems(items):
    for item in items:
        rel = item.nodeid.partition("kubernetes/")[2]
        if rel in SKIP:
            item.add_marker(pytest.mark.skip(reason=SKIP[rel]))
'''


def _pip(*args: str, timeout: float = PIP_TIMEOUT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", *args], check=False,
                          capture_output=True, text=True, timeout=timeout)


def _newest_sdist(cache: Path) -> Path:
    """The newest ``kubernetes`` sdist (downloaded once a day into ``cache``)."""
    found = sorted(cache.glob("kubernetes-*.tar.gz"), key=lambda p: p.stat().st_mtime)
    if found and time.time() - found[-1].stat().st_mtime < 86400:
        return found[-1]
    p = _pip("download", "--no-binary", ":all:", "--no-deps", "-d", str(cache), "kubernetes")
    got = sorted(cache.glob("kubernetes-*.tar.gz"), key=lambda p: p.stat().st_mtime)
    if p.returncode != 0 or not got:
        pytest.skip(f"clientsuite: pip download of the kubernetes sdist failed (offline?): {p.stderr[-500:]}")
    got[-1].touch()
    return got[-1]


def _suite_source(cache: Path, sdist: Path, version: str) -> Path | None:
    """A directory holding ``kubernetes/e2e_test``: the sdist's, the env's checkout, or the release's tag;
    None when none of them can be had (GitHub unreachable: only the packaged tests run)."""
    root = cache / f"src-{version}"
    if not (root / "kubernetes" / "e2e_test").is_dir():
        with tarfile.open(sdist) as t:
            t.extractall(cache, filter="data")
        shutil.rmtree(root, ignore_errors=True)
        (cache / sdist.name.removesuffix(".tar.gz")).rename(root)
    if (root / "kubernetes" / "e2e_test").is_dir():
        return root
    if os.environ.get(SOURCE_ENV):
        checkout = Path(os.environ[SOURCE_ENV])
        assert (checkout / "kubernetes" / "e2e_test").is_dir(), f"{SOURCE_ENV}: no kubernetes/e2e_test in it"
        return checkout
    tagged = cache / f"tag-{version}"
    if not tagged.is_dir():
        try:
            with urllib.request.urlopen(TAG_URL.format(version=version), timeout=60) as r:
                (cache / "tag.tar.gz").write_bytes(r.read())
        except (urllib.error.URLError, OSError) as e:
            print(f"clientsuite: the kubernetes {version} sdist has no e2e_test/ and GitHub is not reachable "
                  f"({e}): only the packaged tests run; set {SOURCE_ENV} to a kubernetes-client/python checkout")
            return None
        with tarfile.open(cache / "tag.tar.gz") as t:
            t.extractall(cache / "tag-tmp", filter="data")
        (next((cache / "tag-tmp").iterdir())).rename(tagged)
        shutil.rmtree(cache / "tag-tmp")
    return tagged


def _install(cache: Path, version: str) -> Path:
    """``kubernetes==version`` and its dependencies, ``pip install --target``-ed into the cache."""
    target = cache / f"site-{version}"
    if not (target / "kubernetes" / "__init__.py").is_file():
        p = _pip("install", "--quiet", "--target", str(target), f"kubernetes=={version}")
        if p.returncode != 0:
            shutil.rmtree(target, ignore_errors=True)
            pytest.skip(f"clientsuite: pip install --target kubernetes=={version} failed (offline?): "
                        f"{p.stderr[-500:]}")
    return target


@pytest.fixture(scope="module")
def suite(request: pytest.FixtureRequest) -> Path:
    """The installed client with its e2e suite in place; returns its ``--target`` directory."""
    cache = Path(request.config.cache.mkdir("clientsuite"))
    sdist = _newest_sdist(cache)
    version = sdist.name.removeprefix("kubernetes-").removesuffix(".tar.gz")
    source = _suite_source(cache, sdist, version)
    target = _install(cache, version)
    for suite in SUITES:
        e2e = target / "kubernetes" / suite
        shutil.rmtree(e2e, ignore_errors=True)
        if source is not None and (source / "kubernetes" / suite).is_dir() and e2e.parent.is_dir():
            shutil.copytree(source / "kubernetes" / suite, e2e)
        elif e2e.parent.is_dir():
            e2e.mkdir()
            (e2e / "__init__.py").write_text("")
            (e2e / "base.py").write_text(_BASE[suite])
    (target / "kubernetes" / "conftest.py").write_text(_CONFTEST)
    return target


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Env]:
    """The simulated cluster with nodes, the operator scheduling ``default-scheduler``'s pods, and
    pods that run 0.2 s after binding."""
    with running_operator(tmp_path / "home", pod_running_after=0.2, pod_termination_seconds=1.0) as env:
        for i in range(3):
            assert env.api("POST", "/api/v1/nodes", node(f"node-{i}", labels={
                "kubernetes.io/hostname": f"node-{i}"}))[0] == 201
        env.apply({"apiVersion": API_VERSION, "kind": KIND,
                   "metadata": {"name": "default-scheduler"}, "spec": {"schedulerName": "default-scheduler"}})
        yield env


_OUTCOME = {"failure": "failed", "error": "error", "skipped": "skipped"}      # junit's element → outcome


def _outcomes(junit: Path) -> dict[str, tuple[str, str]]:
    """Each test case's outcome (passed, failed, error, skipped) and message, by name."""
    out: dict[str, tuple[str, str]] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        outcome, message = "passed", ""
        for child in case:
            if child.tag in _OUTCOME:
                outcome, message = _OUTCOME[child.tag], (child.get("message") or "")[:300]
        out[name] = outcome, message
    return out


def test_the_python_clients_e2e_suite_passes(suite: Path, cluster: Env, tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    env = {**os.environ, "PYTHONPATH": str(suite), "KUBECONFIG": str(cluster.cluster.kubeconfig),
           "HOME": str(tmp_path), "CLIENTSUITE_SKIP": json.dumps(SKIPPED)}
    env.pop("PYTEST_ADDOPTS", None)
    # A suite is there when it has tests, not just the stand-in base.py.
    suites = [s for s in SUITES if any((suite / "kubernetes" / s).glob("test_*.py"))]
    packaged = [t for t in PACKAGED if (suite / "kubernetes" / t).is_file()]
    p = subprocess.run([sys.executable, "-m", "pytest", "-c", os.devnull, "--rootdir", str(suite),
                        "-p", "no:cacheprovider", "-p", "no:xdist", "-q", "-rfEs", f"--junitxml={junit}",
                        *[str(suite / "kubernetes" / s) for s in [*suites, *packaged]]],
                       check=False, capture_output=True, text=True, timeout=SUITE_TIMEOUT, cwd=suite, env=env)
    if os.environ.get("CLIENTSUITE_LOG"):
        Path(os.environ["CLIENTSUITE_LOG"]).write_text(p.stdout + p.stderr)
    assert junit.is_file(), p.stdout[-3000:] + p.stderr[-3000:]
    outcomes = _outcomes(junit)
    counts: dict[str, int] = {}
    for outcome, _ in outcomes.values():
        counts[outcome] = counts.get(outcome, 0) + 1
    print(f"clientsuite: {counts} from {[*suites, *packaged]}")
    bad = {n: m for n, (o, m) in outcomes.items() if o in ("failed", "error")}
    assert not bad, json.dumps(bad, indent=1) + "\n" + p.stdout[-4000:]
    # skipped: exactly the tests named, each for its reason; every other test passed
    skipped = {n.rpartition("::")[2]: m for n, (o, m) in outcomes.items() if o == "skipped"}
    named = {k.rpartition("::")[2]: reason for k, reason in SKIPPED.items()
             if k.partition("::")[0] in packaged or k.partition("/test_")[0] in suites}
    assert skipped == named
    assert counts.get("passed", 0) == len(outcomes) - len(named) > 0 and packaged, counts
