"""The simulated cluster the tests in this folder share: ``sim``, one per test module (starting one
costs a TLS certificate and a serving thread), with ``api`` (raw HTTP with the cluster's token) and
``kubectl`` (the real kubectl, its caches in a HOME of the module's own).

A module sets the cluster's options in ``SIM_OPTIONS`` (``{"seed": 16, "pod_running_after": 0.05}``:
``SimulatedCluster``'s keyword arguments); without it, the cluster has the defaults. A module that
needs more (a CRD installed, another kubectl timeout) overrides the fixture by name and asks for the
one here. Tests that need a fresh cluster per test, or one with faults, build their own.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from scheduler.simulator import SimulatedCluster
from tests.simulator.helpers import Http, started
from tests.simulator.kubectl import Kubectl, kubectl_for


@pytest.fixture(scope="module")
def sim(request: pytest.FixtureRequest) -> Iterator[SimulatedCluster]:
    options: dict[str, Any] = dict(getattr(request.module, "SIM_OPTIONS", {}))
    with started(**options) as c:
        yield c


@pytest.fixture
def api(sim: SimulatedCluster) -> Http:
    return Http(sim)


@pytest.fixture(scope="module")
def kubectl(sim: SimulatedCluster, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    return kubectl_for(sim, tmp_path_factory.mktemp("home"))
