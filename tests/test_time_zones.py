"""Times are UTC whatever the machine's zone (spec §3: a timestamp is read as a UTC instant;
docs/tables.md: timestamps are UTC). DuckDB formats and returns TIMESTAMPTZ values in the
session's zone, which defaults to the machine's: a message's `…Z`, a stored finding and a
census point's date followed TZ. Each case runs the real command in a child process under
a zone far from UTC.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from tests.conftest import FIXTURES, ROOT, copy_tree

SESSION = "docs/research/demo-brainstorm"
ZONES = ["America/New_York", "Asia/Tokyo"]


def census(*args: str, zone: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pipeline.cli", *args],
        cwd=ROOT,
        env={**os.environ, "TZ": zone},
        capture_output=True,
        text=True,
        check=False,
    )


def _stale(root: Path) -> Path:
    """The applied base with a turn after its compose: BS-COMPOSE-02 names the turn's time."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "applied" / "repo", root / "repo")
    capture = repo / SESSION / "ops" / "capture.md"
    capture.write_text(capture.read_text() + "\n### T10 · 2026-07-10T16:24Z\nlate.\n")
    return repo


@pytest.mark.parametrize("zone", ZONES)
def test_a_findings_time_is_utc_in_any_zone(zone: str, tmp_path: Path) -> None:
    repo = _stale(tmp_path / "corpus")
    found = census("detect", str(repo / SESSION), "--gate", "manifest", zone=zone)
    assert "newest capture turn (2026-07-10T16:24:00Z)" in found.stdout, found.stdout
    out = tmp_path / "out"
    assert census("crawl", str(repo.parent), "--out", str(out), zone=zone).returncode == 0
    assert census("check", "--out", str(out), "--gate", "manifest", zone=zone).returncode == 0
    con = duckdb.connect(str(out / "census.duckdb"), read_only=True)
    stored = con.execute(
        "SELECT message FROM rule_results WHERE rule_id = 'BS-COMPOSE-02' AND status = 'fail'"
    ).fetchall()
    assert stored and all("2026-07-10T16:24:00Z" in m for (m,) in stored), stored


def test_a_points_date_is_utc_in_any_zone(tmp_path: Path) -> None:
    repo = _stale(tmp_path / "corpus")
    out = tmp_path / "out"
    zone = "Pacific/Kiritimati"  # UTC+14: the date differs from UTC's for ten hours a day
    assert census("crawl", str(repo.parent), "--out", str(out), zone=zone).returncode == 0
    assert census("check", "--out", str(out), zone=zone).returncode == 0
    con = duckdb.connect(str(out / "census.duckdb"), read_only=True)
    con.execute("SET TimeZone = 'UTC'")
    (started,) = con.execute("SELECT strftime(started_at, '%Y-%m-%d %H:%M') FROM runs").fetchone()
    shown = census("stats", "--out", str(out), zone=zone).stdout
    assert f"({started}Z)" in shown, shown
    page = tmp_path / "r.html"
    assert census("report", "--out", str(out), "--html", str(page), zone=zone).returncode == 0
    assert f"of {started} UTC" in page.read_text()
