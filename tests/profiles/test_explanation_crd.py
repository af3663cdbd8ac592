"""``scheduler/profiles/explanation_crd.py``: the file in crds/ is its output, and the API server takes it."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from scheduler.app.cli import main
from scheduler.profiles.crd import GROUP
from scheduler.profiles.explanation_crd import crd, explanations_path

REPO = Path(__file__).resolve().parents[2]


def test_crd_file_matches_the_generator() -> None:
    on_disk = yaml.safe_load((REPO / "crds" / "schedulingexplanation.yaml").read_text())
    assert on_disk == crd(), ("crds/schedulingexplanation.yaml drifted: regenerate with "
                              "`kopf-scheduler crd --kind SchedulingExplanation`")
    out = CliRunner().invoke(main, ["crd", "--kind", "SchedulingExplanation"])
    assert out.exit_code == 0 and yaml.safe_load(out.output) == crd()


def test_namespaced_in_the_profiles_group_with_the_printer_columns() -> None:
    spec = crd()["spec"]
    assert spec["group"] == GROUP and spec["scope"] == "Namespaced"
    cols = [c["name"] for c in spec["versions"][0]["additionalPrinterColumns"]]
    assert cols == ["Pod", "Node", "Profile", "Verdict", "Age"]
    assert explanations_path("a", "b", "status") == f"/apis/{GROUP}/v1alpha1/namespaces/a/schedulingexplanations/b/status"
    assert explanations_path() == f"/apis/{GROUP}/v1alpha1/schedulingexplanations"
