"""``scheduler/features.py`` and ``run --feature-gates``: upstream's syntax, names and defaults."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from scheduler.app.cli import main
from scheduler.features import FeatureGateError, enabled, feature_gates, parse_feature_gates
from scheduler.service import SchedulerService
from tests.builders import MemoryClient


@pytest.mark.parametrize(("text", "want"), [
    ("", {}),
    ("OpportunisticBatching=true", {"OpportunisticBatching": True}),
    ("OpportunisticBatching=false", {"OpportunisticBatching": False}),
    (" OpportunisticBatching = 0 ,", {"OpportunisticBatching": False}),
    ("OpportunisticBatching=T", {"OpportunisticBatching": True}),
    ("OpportunisticBatching=true,OpportunisticBatching=False", {"OpportunisticBatching": False}),
])
def test_parse(text: str, want: dict[str, bool]) -> None:
    assert parse_feature_gates(text) == want


@pytest.mark.parametrize(("text", "message"), [
    ("Foo=true", "unrecognized feature gate: Foo (known: OpportunisticBatching)"),
    ("opportunisticbatching=true", "unrecognized feature gate: opportunisticbatching"),
    ("OpportunisticBatching", "missing bool value for OpportunisticBatching"),
    ("OpportunisticBatching=yes", 'invalid value of OpportunisticBatching=yes, err: strconv.ParseBool: parsing "yes"'),
])
def test_parse_errors(text: str, message: str) -> None:
    with pytest.raises(FeatureGateError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_feature_gates(text)


def test_defaults_are_upstreams() -> None:
    assert feature_gates() == {"OpportunisticBatching": True}
    assert feature_gates({"OpportunisticBatching": False}) == {"OpportunisticBatching": False}


def test_service_passes_the_gate_to_the_scheduler() -> None:
    assert SchedulerService(MemoryClient()).scheduler.batching is True
    off = SchedulerService(MemoryClient(), feature_gates={"OpportunisticBatching": False})
    assert off.scheduler.batching is False


def test_run_refuses_an_unknown_gate() -> None:
    r = CliRunner().invoke(main, ["run", "--feature-gates", "OpportunisticBatching=true,Nope=false"])
    assert r.exit_code == 2
    assert "Invalid value for '--feature-gates': unrecognized feature gate: Nope" in r.output


def test_run_help_names_the_flag() -> None:
    r = CliRunner().invoke(main, ["run", "--help"])
    assert "--feature-gates Name=bool[,Name=bool]" in r.output


def test_enabled_reads_the_given_value_then_upstreams_default():
    assert enabled(None, "DRAConsumableCapacity") is True
    assert enabled({"DRAConsumableCapacity": False}, "DRAConsumableCapacity") is False
    assert enabled({}, "GenericWorkload") is False
    with pytest.raises(KeyError):
        enabled(None, "NoSuchGate")


def test_the_dra_taint_rules_gate_reaches_the_store() -> None:
    assert SchedulerService(MemoryClient()).dra.apply_taint_rules is True
    assert SchedulerService(MemoryClient(), feature_gates={"DRADeviceTaintRules": False}).dra.apply_taint_rules is False
