"""census.md §3.1 on an entry heading's ID as the page shows it: typed fullwidth as a CJK
input method types it (`## Ｄ3`, `## F１`), or with a character that shows nothing inside
or after it (`## D3\u200b — …`). The page shows `D3`: the heading is that entry. A ledger
heading so written vanished with no note, so an entry with no Decision, Why or How to apply
passed BS-LEDGER-01; a fork heading failed as one with no ID, and BS-ASPECT-01 then said
the fork was missing (found by a hunt).

Each case edits a copy of the healthy open base session (fixtures/cases/base) on disk and
runs `census detect`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.detect import Detection, detect
from tests.conftest import FIXTURES, copy_tree

SESSION = "docs/research/demo-brainstorm"
F1 = "## F1 — Do security"  # forks.md, line 3


def _session(tmp_path: Path, file: str, old: str, new: str) -> Path:
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "r")
    path = repo / SESSION / file
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new) if old else text + new, encoding="utf-8")
    return repo / SESSION


def _findings(found: Detection, rule: str) -> tuple[str, list[tuple[int, str]]]:
    outcome = next(o for o in found.outcomes if o.rule == rule)
    return outcome.status, [(int(f["line"]), str(f["message"])) for f in outcome.findings]


WIDE = ["Ｄ3", "D３", "Ｄ３", "D3\u200b", "D\u200b3", "D3\u2060", "**Ｄ3**"]


@pytest.mark.parametrize("written", WIDE)
def test_a_ledger_heading_typed_wide_is_its_entry(tmp_path: Path, written: str) -> None:
    found = detect(str(_session(tmp_path, "ledger.md", "", f"\n## {written} — Later\n")), "session")
    status, findings = _findings(found, "BS-LEDGER-01")
    assert status == "fail"
    assert [m for n, m in findings if n == 14] == [
        "D3 has no 'Decision:'",
        "D3 has no 'How to apply:'",
        "D3 has no 'Why:'",
    ], findings


@pytest.mark.parametrize(
    "written",
    [w.replace("D", "F").replace("Ｄ", "Ｆ").replace("3", "1").replace("３", "１") for w in WIDE],
)
def test_a_fork_heading_typed_wide_reads_its_number(tmp_path: Path, written: str) -> None:
    found = detect(str(_session(tmp_path, "forks.md", F1, F1.replace("F1", written))), "session")
    assert _findings(found, "BS-FORK-01") == ("pass", [])
    assert _findings(found, "BS-ASPECT-01") == ("pass", [])
    assert found.notes == []


# A line meant as a fork but no heading, its ID's digit typed fullwidth: it vanished, so an
# open fork passed BS-FORK-03 at the manifest gate (found by a hunt; `- F5 — … [open]` and
# `- Ｆ5 — … [open]` were already caught).
@pytest.mark.parametrize(
    "line", ["- F５ — New q [open]", "F５ — New q [open]", "**F５ — q [open]**"]
)
def test_a_fork_line_typed_wide_fails_the_manifest_gate(tmp_path: Path, line: str) -> None:
    repo = copy_tree(FIXTURES / "cases" / "base" / "converging" / "repo", tmp_path / "r")
    path = repo / SESSION / "forks.md"
    path.write_text(path.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")
    found = detect(str(repo / SESSION), "manifest")
    assert _findings(found, "BS-FORK-03")[0] == "fail"
    assert [n["line"] for n in found.notes if n["code"] == "entry-not-heading"] == [9]


def test_a_note_that_begins_with_a_wide_id_is_no_fork(tmp_path: Path) -> None:
    repo = copy_tree(FIXTURES / "cases" / "base" / "converging" / "repo", tmp_path / "r")
    path = repo / SESSION / "forks.md"
    text = path.read_text(encoding="utf-8") + "\n- F４ — a note on timing\n"
    path.write_text(text, encoding="utf-8")
    assert detect(str(repo / SESSION), "manifest").result == "clean"
