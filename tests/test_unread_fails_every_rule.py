"""census.md §3.1, fail closed: a line that cannot be read fails the rule that needs it. One
line may be needed by two rules, and each issue was charged to one of them: the other read
the line as absent and passed.

- A fork marker that is neither `[open]` nor `[parked → …]` (`[Open]`, no marker) failed
  BS-FORK-01, but BS-FORK-03 passed the manifest gate though the fork may be open.
- `Resolves: F2` under a heading that begins no entry failed BS-LEDGER-01 only, so
  BS-FORK-02 passed while F2 was still listed.
- A sync-log line the census could not read (`S2 → Failed | …`) failed BS-SYNC-01 only, so
  BS-SYNC-02 passed a fork raised by twin (S2) whose result that line may be.

Each case edits a copy of a healthy base session (fixtures/cases/base) and runs `census detect`;
one runs crawl and check, which must agree.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pipeline.check import check
from pipeline.crawl import crawl
from pipeline.engine import connect
from pipeline.store import Out
from tests.conftest import FIXTURES, copy_tree
from tests.test_entry_reading import detect, failing, findings, statuses

SESSION = Path("docs/research/demo-brainstorm")


def edited(tmp_path: Path, base: str, file: str, old: str, new: str) -> Path:
    """A copy of a base session with one piece of a file replaced; the session folder."""
    repo = copy_tree(FIXTURES / "cases" / "base" / base / "repo", tmp_path / "repo")
    path = repo / SESSION / file
    text = path.read_text(encoding="utf-8")
    assert old in text, (file, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return repo / SESSION


PARKED = "[parked → docs/architecture/open-questions.md]"


@pytest.mark.parametrize("marker", ["[Open]", "[OPEN]", "[open → parked soon]", ""])
def test_a_marker_not_read_may_be_open_at_the_manifest_gate(tmp_path: Path, marker: str) -> None:
    folder = edited(tmp_path, "converging", "forks.md", PARKED, marker)
    found = detect(folder, "manifest")
    assert {"BS-FORK-01", "BS-FORK-03"} <= failing(found), found
    ((file, line, message),) = findings(found, "BS-FORK-03")
    assert (file, line) == ("forks.md", 3) and "F4" in message and "may be open" in message


def test_a_readable_parked_marker_still_passes_the_manifest_gate(tmp_path: Path) -> None:
    folder = edited(tmp_path, "converging", "forks.md", PARKED, PARKED)
    assert "BS-FORK-03" not in failing(detect(folder, "manifest"))


def test_resolves_under_no_entry_fails_the_rule_that_reads_resolves(tmp_path: Path) -> None:
    folder = edited(
        tmp_path, "open", "ledger.md", "\n", "\n## Decision — no totals\n- Resolves: F2\n\n"
    )
    found = detect(folder, "session")
    assert "BS-FORK-02" in failing(found), found
    assert any("Resolves: F2" in m for _, _, m in findings(found, "BS-FORK-02")), found


SYNC_LINE = "S2 → reconciled | 2026-07-08T14:30Z | 5 edits · 2 new forks · 2 open · untouched: none"


@pytest.mark.parametrize(
    "line",
    [
        "S2 → Failed | 2026-07-08T14:31Z | reconcile crashed",
        "**S2** → fail | 2026-07-08T14:31Z | reconcile crashed",
        "S2 → reconciled | failed | 2026-07-08T14:31Z | x",  # an unfilled template
        # Names no sync: it may be any. A paragraph of its own (directly below the result,
        # it would be that line wrapped, §3.1).
        "\nreconcile of the second sync crashed",
    ],
)
def test_an_unread_sync_line_fails_the_forks_raised_by_its_sync(tmp_path: Path, line: str) -> None:
    folder = edited(tmp_path, "open", "ops/sync-log.md", SYNC_LINE, f"{SYNC_LINE}\n{line}")
    found = detect(folder, "session")
    assert {"BS-SYNC-01", "BS-SYNC-02"} <= failing(found), found
    ((file, line_no, message),) = findings(found, "BS-SYNC-02")
    assert (file, line_no) == ("forks.md", 12)
    at = 6 if line.startswith("\n") else 5
    assert message.endswith(
        f"S2 may have a result on ops/sync-log.md:{at}, which could not be read"
    )


def test_an_unread_line_of_another_sync_leaves_the_fork_alone(tmp_path: Path) -> None:
    """Guard: a line that begins with another sync's ID is not this sync's result."""
    bad = "S9 → Failed | 2026-07-08T14:31Z | reconcile crashed"
    folder = edited(tmp_path, "open", "ops/sync-log.md", SYNC_LINE, f"{SYNC_LINE}\n{bad}")
    found = detect(folder, "session")
    assert "BS-SYNC-01" in failing(found) and "BS-SYNC-02" not in failing(found), found


def test_crawl_and_check_agree_with_detect(tmp_path: Path) -> None:
    bad = "S2 → Failed | 2026-07-08T14:31Z | reconcile crashed"
    folder = edited(tmp_path, "open", "ops/sync-log.md", SYNC_LINE, f"{SYNC_LINE}\n{bad}")
    expected = {r["rule"]: r["status"] for r in detect(folder, "session")["rules"]}
    out = tmp_path / "out"
    crawl([str(tmp_path / "repo")], str(out))
    check(str(out))
    rows = (
        connect(Out(str(out)))
        .execute("SELECT DISTINCT rule_id, status FROM rule_results WHERE gate = 'session'")
        .fetchall()
    )
    assert {rule: status for rule, status in rows if rule in expected} == expected


def test_a_stray_file_named_ops_in_a_history_folder_fails_nothing(tmp_path: Path) -> None:
    """A history folder has no ops/ by design, so no rule reads it there: a file named `ops`
    (no folder) is noted, and failed the rules that read ops/manifest.md in a research folder
    (BS-ASPECT-02, BS-FORK-03, BS-HARVEST-01) with 'ops/ could not read' (found by a hunt)."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "harvested" / "repo", tmp_path / "repo")
    folder = repo / "docs" / "history" / "brainstorms" / "demo"
    assert not (folder / "ops").exists()
    (folder / "ops").write_text("")
    found = detect(folder, "move")
    assert failing(found) == set(), found
    assert any("a file, not a folder" in n for n in map(str, found.get("notes", []))), found


def test_a_session_folder_not_read_skips_no_rule_as_if_its_files_were_missing(
    tmp_path: Path,
) -> None:
    """A folder whose name is not UTF-8 is not read: its files are unknown, not absent, so
    BS-MANIFEST-01 and BS-HARVEST-01 fail on the folder's issue. They were skipped as 'no
    manifest' (found by a hunt), which took the session out of their rates."""
    repo = tmp_path / "repo"
    research = repo / "docs" / "research"
    research.mkdir(parents=True)
    healthy = FIXTURES / "cases" / "base" / "applied" / "repo" / SESSION
    folder = Path(os.fsdecode(bytes(research) + b"/caf\xe9-brainstorm"))
    copy_tree(healthy, folder)
    found = detect(folder, "move")
    skipped = {rule for rule, status in statuses(found).items() if status == "skipped"}
    assert skipped == {"BS-OPS-02"}, found  # no git context: known without reading the folder
    assert {"BS-MANIFEST-01", "BS-HARVEST-01"} <= failing(found), found
    out = tmp_path / "out"
    crawl([str(repo)], str(out))
    check(str(out))
    rows = connect(Out(str(out))).execute(
        "SELECT rule_id, status FROM rule_results WHERE gate = 'move' "
        "AND rule_id IN ('BS-MANIFEST-01', 'BS-HARVEST-01')"
    )
    assert sorted(rows.fetchall()) == [("BS-HARVEST-01", "fail"), ("BS-MANIFEST-01", "fail")]
