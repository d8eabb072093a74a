"""The benchmark command itself: every stage runs and is reported (no timing is asserted: the
figures are the command's output, not a test's)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.bench import STAGES


@pytest.mark.slow
def test_speed_benchmark_reports_every_stage_beside_both_floors(tmp_path: Path) -> None:
    figures_file = tmp_path / "bench.json"
    command = ["pipeline.bench", "--sessions", "40", "--workdir", str(tmp_path)]
    done = subprocess.run(
        [sys.executable, "-m", *command, "--json", str(figures_file)],
        capture_output=True,
        text=True,
        check=True,
    )
    (figures,) = json.loads(figures_file.read_text())
    for name, _, _ in STAGES:
        assert figures[name]["seconds"] > 0 and figures[name]["peak_mb"] > 0, name
    assert figures["floor_seconds"] > 0 and figures["stat_floor_seconds"] > 0
    assert figures["changed_sessions"] >= 1
    assert "stat floor (every entry stat-ed once, in C)" in done.stdout
    assert "rerun_unchanged" in done.stdout and "report" in done.stdout
    # The stages with a target say whether this run met it.
    for line in done.stdout.splitlines():
        if line.startswith(("rerun_unchanged", "check_1pct_changed")):
            assert line.endswith((": met", ": not met")), line
    # The 1% change is undone: the corpus is again as generated.
    assert "F999" not in "".join(p.read_text() for p in (tmp_path / "corpus-40").rglob("forks.md"))
