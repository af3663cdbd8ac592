"""The measurement drivers' process helpers: the simulated cluster as a process, ports, stop, RSS."""

from __future__ import annotations

import os
import socket

import pytest

from scheduler.benchmark import processes
from scheduler.kubeapi import load_config


def test_start_cluster_waits_for_its_kubeconfig_and_stop_ends_it() -> None:
    proc, kubeconfig = processes.start_cluster()
    try:
        assert proc.poll() is None and kubeconfig.exists()
        assert load_config(str(kubeconfig)).server.startswith("https://127.0.0.1:")
    finally:
        processes.stop(proc)
    assert proc.returncode is not None


def test_a_cluster_that_cannot_start_is_an_error_not_a_hang() -> None:
    with pytest.raises(RuntimeError, match="exited before it was ready"):
        processes.start_cluster(faults=["not-a-rule"])


def test_free_port_and_peak_rss() -> None:
    port = processes.free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))
    assert processes.peak_rss(os.getpid()) > 0
    assert processes.peak_rss(2**22 + 12345) == 0          # no such process
    assert processes.cli("run")[1:] == ["-m", "scheduler.app.cli", "run"]
