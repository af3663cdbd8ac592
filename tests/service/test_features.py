"""``scheduler/features.py`` and ``--feature-gates`` (run, simulate, explain): upstream's syntax,
names, defaults and lock state, checked against a copy of upstream's 1.37 gate table
(``data/kube_scheduler_gates.json``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from scheduler.app.cli import main
from scheduler.features import (
    GATES,
    UPSTREAM_DEFAULTS,
    FeatureGateError,
    enabled,
    feature_gates,
    parse_feature_gates,
)
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
    ("Foo=true", "unrecognized feature gate: Foo"),
    ("opportunisticbatching=true", "unrecognized feature gate: opportunisticbatching"),
    ("OpportunisticBatching", "missing bool value for OpportunisticBatching"),
    ("OpportunisticBatching=yes", 'invalid value of OpportunisticBatching=yes, err: strconv.ParseBool: parsing "yes"'),
])
def test_parse_errors(text: str, message: str) -> None:
    with pytest.raises(FeatureGateError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_feature_gates(text)


def test_unknown_gate_message_is_upstreams_exactly() -> None:
    with pytest.raises(FeatureGateError) as e:
        parse_feature_gates("Foo=true")
    assert str(e.value) == "unrecognized feature gate: Foo"


def test_defaults_are_upstreams() -> None:
    assert feature_gates()["OpportunisticBatching"] is True
    assert feature_gates({"OpportunisticBatching": False})["OpportunisticBatching"] is False
    assert feature_gates() == dict(UPSTREAM_DEFAULTS)
    assert feature_gates({"GenericWorkload": False}) == dict(UPSTREAM_DEFAULTS)


def _upstream_1_37() -> dict[str, dict[str, object]]:
    """Each gate's spec at emulation version 1.37: the last spec whose version (and
    minCompatibilityVersion) is not after 1.37, as ``featuregate.VersionedSpecs.SpecAt`` picks it."""
    table = json.loads((Path(__file__).parent / "data" / "kube_scheduler_gates.json").read_text())["gates"]

    def v(s: str) -> tuple[int, ...]:
        return tuple(int(x) for x in s.split("."))
    out = {}
    for name, specs in table.items():
        at = [s for s in specs if v(s["version"]) <= (1, 37) and v(s.get("minCompatibilityVersion", "0.0")) <= (1, 37)]
        out[name] = at[-1]
    return out


def test_every_gate_matches_upstreams_1_37_table() -> None:
    upstream = _upstream_1_37()
    assert [g.name for g in GATES] == sorted(upstream)
    for g in GATES:
        want = upstream[g.name]
        assert (g.stage, g.default, g.locked) == (want["stage"], want["default"], bool(want.get("locked"))), g.name
    assert set(UPSTREAM_DEFAULTS) == set(upstream)


@pytest.mark.parametrize("gate", [g for g in GATES if g.locked], ids=lambda g: g.name)
def test_a_locked_gate_refuses_its_other_value_with_upstreams_message(gate) -> None:
    other = str(not gate.default).lower()
    with pytest.raises(FeatureGateError) as e:
        parse_feature_gates(f"{gate.name}={other}")
    assert str(e.value) == (f"cannot set feature gate {gate.name} to {other}, "
                            f"feature is locked to {str(gate.default).lower()}")
    assert parse_feature_gates(f"{gate.name}={str(gate.default).lower()}") == {gate.name: gate.default}


@pytest.mark.parametrize("gate", [g for g in GATES if g.default and not g.locked], ids=lambda g: g.name)
def test_a_default_on_gate_accepts_false(gate) -> None:
    assert parse_feature_gates(f"{gate.name}=false") == {gate.name: False}
    assert enabled(parse_feature_gates(f"{gate.name}=false"), gate.name) is False


@pytest.mark.parametrize("gate", [g for g in GATES if not g.default and not g.built], ids=lambda g: g.name)
def test_an_unbuilt_off_gate_refuses_true_naming_it(gate) -> None:
    with pytest.raises(FeatureGateError) as e:
        parse_feature_gates(f"{gate.name}=true")
    assert str(e.value).startswith(f"cannot set feature gate {gate.name} to true: kopf-scheduler has not built")
    assert "yet" in str(e.value)
    assert parse_feature_gates(f"{gate.name}=false") == {gate.name: False}


def test_generic_workload_turns_on() -> None:
    assert parse_feature_gates("GenericWorkload=true") == {"GenericWorkload": True}
    on = SchedulerService(MemoryClient(), feature_gates={"GenericWorkload": True})
    assert on.scheduler.group_cycle is not None
    assert SchedulerService(MemoryClient()).scheduler.group_cycle is None


def test_an_unbuilt_beta_gate_is_refused_as_not_built_yet() -> None:
    with pytest.raises(FeatureGateError, match="SchedulerAsyncAPICalls to true: kopf-scheduler has not built this "
                                               "beta feature yet"):
        parse_feature_gates("SchedulerAsyncAPICalls=true")


def test_several_gates_in_one_flag() -> None:
    assert parse_feature_gates("DRAConsumableCapacity=false,PodLevelResources=false,NodeDeclaredFeatures=true") == {
        "DRAConsumableCapacity": False, "PodLevelResources": False, "NodeDeclaredFeatures": True}


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


@pytest.mark.parametrize("command", [["run"], ["simulate", "--nodes", "0", "--pods", "0"], ["explain", "ns/p"]])
@pytest.mark.parametrize(("gates", "message"), [
    ("Nope=true", "unrecognized feature gate: Nope"),
    ("NodeDeclaredFeatures=false", "cannot set feature gate NodeDeclaredFeatures to false, feature is locked to true"),
    ("SchedulerAsyncAPICalls=true", "cannot set feature gate SchedulerAsyncAPICalls to true: kopf-scheduler has "
                                    "not built"),
])
def test_each_command_refuses_a_gate_as_upstream(command: list[str], gates: str, message: str) -> None:
    r = CliRunner().invoke(main, [*command, "--feature-gates", gates])
    assert r.exit_code == 2, r.output
    assert f"Invalid value for '--feature-gates': {message}" in r.output


@pytest.mark.parametrize("command", ["run", "simulate", "explain"])
def test_each_command_has_the_flag(command: str) -> None:
    r = CliRunner().invoke(main, [command, "--help"])
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


def test_the_docs_gate_table_lists_every_gate_with_its_default() -> None:
    """docs/running.md's table (the README links it): one row per gate, upstream's stage and default."""
    text = (Path(__file__).parents[2] / "docs" / "running.md").read_text()
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0] in {g.name for g in GATES}:
            rows[cells[0]] = cells
    assert set(rows) == {g.name for g in GATES}
    for g in GATES:
        _, stage, default, _ = rows[g.name]
        assert stage == g.stage.replace("Alpha", "alpha").replace("Beta", "beta") + (", locked" if g.locked else "")
        assert default == str(g.default).lower()
