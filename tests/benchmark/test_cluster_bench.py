"""The cluster benchmark command: bounded, loopback only, and its report's shape."""

from __future__ import annotations

import json

from click.testing import CliRunner

from scheduler.app.cli import main


def test_cluster_bench_reports_medians_as_json() -> None:
    result = CliRunner().invoke(main, ["cluster-bench", "--pods", "200", "--watchers", "3", "--repeat", "2",
                                       "--time-limit", "30", "--output", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert (report["pods"], report["watchers"], report["repeat"], len(report["runs"])) == (200, 3, 2, 2)
    m = report["median"]
    assert m["creates_per_second"] > 0 and m["bindings_per_second"] > 0 and m["watch_events_per_second"] > 0
    assert m["watchers_kept_up"] is True      # every watcher saw all 400 events
