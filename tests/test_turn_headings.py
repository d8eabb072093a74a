"""census.md §3.1 (fail closed) and §5 BS-COMPOSE-02 on a capture turn heading that does
not begin with its ID (`### 2026-07-10T16:10Z · T9`): it is a turn all the same, read
with a note when its one ID and one timestamp are plain, and a failure of BS-COMPOSE-02
when they are not. It was skipped, so a compose older than that turn passed as fresh.

Each case edits a copy of the converging base session (Last compose 2026-07-10T16:05Z,
newest turn T9 at 15:52Z) on disk and runs `census detect`, or crawl and check.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from tests.conftest import FIXTURES, copy_tree
from tests.test_entry_reading import detect, statuses

runner = CliRunner()
SESSION = Path("docs/research/demo-brainstorm")
T9 = "### T9 · 2026-07-10T15:52Z"


def session(tmp_path: Path, heading: str) -> Path:
    """The converging base session with its T9 heading replaced; the session folder."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "converging" / "repo", tmp_path / "repo")
    path = repo / SESSION / "ops" / "capture.md"
    text = path.read_text(encoding="utf-8")
    assert T9 in text
    path.write_text(text.replace(T9, heading), encoding="utf-8")
    return repo / SESSION


def line_of(folder: Path, heading: str) -> int:
    lines = (folder / "ops" / "capture.md").read_text(encoding="utf-8").splitlines()
    return lines.index(heading) + 1


def issues(found: dict[str, Any]) -> set[tuple[str, int]]:
    """(code, line) of each note on ops/capture.md."""
    return {(n["code"], n["line"]) for n in found["notes"] if n["file"] == "ops/capture.md"}


def findings(found: dict[str, Any], rule: str) -> set[tuple[str, int]]:
    """(file, line) of each finding of a rule."""
    (entry,) = [r for r in found["rules"] if r["rule"] == rule]
    return {(f["file"], f["line"]) for f in entry["findings"]}


def test_a_later_turn_with_its_timestamp_first_makes_the_compose_stale(tmp_path: Path) -> None:
    heading = "### 2026-07-10T16:10Z · T9"
    folder = session(tmp_path, heading)
    found = detect(folder, "manifest")
    assert statuses(found)["BS-COMPOSE-02"] == "fail"
    assert issues(found) == {("turn-id-not-first", line_of(folder, heading))}
    # The stale compose is the finding: the turn was read, not left unread.
    assert ("state.md", 6) in findings(found, "BS-COMPOSE-02")
    # The ID first, as the schema writes it, fails the same way and with no note.
    fine = detect(session(tmp_path / "fine", "### T9 · 2026-07-10T16:10Z"), "manifest")
    assert statuses(fine)["BS-COMPOSE-02"] == "fail"
    assert issues(fine) == set()


def test_the_turn_is_read_with_its_id_and_timestamp(tmp_path: Path) -> None:
    heading = "### At 2026-07-10T15:52Z — **T9**"
    folder = session(tmp_path, heading)
    assert statuses(detect(folder, "manifest"))["BS-COMPOSE-02"] == "pass"
    out = tmp_path / "out"
    crawled = runner.invoke(app, ["crawl", str(tmp_path / "repo"), "--out", str(out)])
    assert crawled.exit_code == 0, crawled.output
    assert runner.invoke(app, ["check", "--out", str(out)]).exit_code == 0
    query = "SELECT turn_id, turn_num, line, at_raw FROM turns WHERE turn_num = 9"
    result = runner.invoke(app, ["sql", query, "--out", str(out), "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert rows == [
        {
            "turn_id": "T9",
            "turn_num": 9,
            "line": line_of(folder, heading),
            "at_raw": "2026-07-10T15:52Z",
        }
    ]
    query = "SELECT code FROM parse_issues WHERE file = 'ops/capture.md'"
    result = runner.invoke(app, ["sql", query, "--out", str(out), "--format", "json"])
    assert json.loads(result.stdout) == [{"code": "turn-id-not-first"}]


def test_two_ids_or_timestamps_fail_rather_than_guess_and_no_id_is_no_turn(tmp_path: Path) -> None:
    for name, heading in (
        ("ids", "### 2026-07-10T15:52Z · T9 (answers T8)"),
        ("stamps", "### 2026-07-10T15:52Z to 2026-07-10T15:58Z · T9"),
        ("misspelt", "### 2026-07-10T15:52Z · t9"),
    ):
        folder = session(tmp_path / name, heading)
        found = detect(folder, "manifest")
        assert statuses(found)["BS-COMPOSE-02"] == "fail", heading
        line = line_of(folder, heading)
        assert issues(found) == {("bad-turn-heading", line)}, heading
        assert findings(found, "BS-COMPOSE-02") == {("ops/capture.md", line)}, heading

    # A date in a level-3 heading, the turn's level, with no T# (or one only inside a word)
    # is a turn without its ID: noted, and its time counts (test_reading_pass3); at another
    # level it is a section heading, no turn, whose time counts with a note (stop 56).
    for name, heading in (
        ("none", "### Notes from 2026-07-10T16:10Z"),
        ("word", "### Draft T9x from 2026-07-10T16:10Z"),
    ):
        folder = session(tmp_path / name, heading)
        found = detect(folder, "manifest")
        assert statuses(found)["BS-COMPOSE-02"] == "fail", heading
        assert issues(found) == {("bad-turn-heading", line_of(folder, heading))}, heading
    heading = "#### Notes from 2026-07-10T16:10Z"  # after Last compose (16:05Z)
    folder = session(tmp_path / "level4", heading)
    found = detect(folder, "manifest")
    assert statuses(found)["BS-COMPOSE-02"] == "fail"
    assert issues(found) == {("stamped-section", line_of(folder, heading))}


def test_a_turn_written_timestamp_first_as_a_line_or_with_no_id_fails(tmp_path: Path) -> None:
    """A turn as a list item or bold line with its timestamp first, and a turn heading of a
    timestamp alone, were read as nothing: a compose older than them passed as fresh."""
    for name, heading, code in (
        ("item", "- 2026-07-10T16:10Z · T9", "entry-not-heading"),
        ("bold", "**2026-07-10T16:10Z** — T9", "entry-not-heading"),
        ("no-id", "### 2026-07-10T16:10Z", "bad-turn-heading"),
    ):
        folder = session(tmp_path / name, heading)
        found = detect(folder, "manifest")
        assert statuses(found)["BS-COMPOSE-02"] == "fail", heading
        line = line_of(folder, heading)
        assert (code, line) in issues(found), (heading, issues(found))
        # A heading with no T# counts as a turn at its time: the compose is stale, a finding
        # on Last compose's line (state.md:6); the lines meant as turns are not read.
        where = ("state.md", 6) if name == "no-id" else ("ops/capture.md", line)
        assert where in findings(found, "BS-COMPOSE-02"), heading

    # A line of the talk that mentions a time and a turn is no turn.
    found = detect(
        session(tmp_path / "talk", "user: at 2026-07-10T16:10Z we settled T9"), "manifest"
    )
    assert "entry-not-heading" not in {code for code, _ in issues(found)}


def test_a_line_of_the_talk_above_the_turn_separator_is_no_turn(tmp_path: Path) -> None:
    """The schema writes `---` before each turn, so the last line of the turn above, written
    right over it, is a setext heading to CommonMark. It was read as a turn: one naming a
    turn and a later date became that turn at that date (a healthy session's compose stale,
    and a phantom row in turns), and one beginning with its time a turn with no ID (found by
    a hunt). A turn is a heading that begins with `T{n}` (spec §3.1); that line is talk."""
    body = "facilitator: coverage read-back: batching, timing, opt-out all have decisions. "
    body += "localisation parked."
    for name, line in (
        ("phantom", "facilitator: the T3 cut-over moves to 2026-07-20T09:00Z."),
        ("no-id", "2026-07-10T15:49Z facilitator: coverage read-back done."),
    ):
        folder = session(tmp_path / name, T9)
        capture = folder / "ops" / "capture.md"
        text = capture.read_text(encoding="utf-8")
        assert f"{body}\n---\n{T9}" in text
        capture.write_text(text.replace(body, line), encoding="utf-8")
        found = detect(folder, "manifest")
        assert statuses(found)["BS-COMPOSE-02"] == "pass", (name, found)
        assert issues(found) == set(), name
    # A line over the separator that begins with its turn ID is a turn, as the spec says,
    # unless talk follows the ID and it holds no time (found by a hunt: `T3 still holds` was
    # a turn with no timestamp, and a healthy session failed); with a time it is weighed as
    # a turn still, fail closed.
    for name, line, result in (
        ("turn", "T8 · 2026-07-10T16:10Z", "fail"),
        ("talk", "T3 still holds: opt-out is not silence.", "pass"),
        ("bold-talk", "**T3** still holds.", "pass"),
        ("talk-with-time", "T3 reopens on 2026-07-11T09:00Z if support pushes back.", "fail"),
    ):
        folder = session(tmp_path / name, T9)
        capture = folder / "ops" / "capture.md"
        text = capture.read_text(encoding="utf-8")
        capture.write_text(text.replace(body, line), encoding="utf-8")
        assert statuses(detect(folder, "manifest"))["BS-COMPOSE-02"] == result, name


def test_a_line_of_the_talk_that_begins_with_its_time_and_names_a_turn_is_no_turn(
    tmp_path: Path,
) -> None:
    """A body line that begins with a timestamp and names one turn anywhere after it was
    taken for a turn written as a line, so a healthy session failed BS-COMPOSE-02 at the
    manifest gate (found by a hunt). Only a line whose ID follows its timestamp (who spoke
    may stand between when nothing follows the ID) is meant as a turn."""
    for name, line in (
        ("said", "2026-07-10T15:53Z user: ok, T3 holds."),
        ("spoke", "- 2026-07-10T15:53Z user: T3 holds"),
    ):
        folder = session(tmp_path / name, f"{T9}\n{line}")
        found = detect(folder, "manifest")
        assert statuses(found)["BS-COMPOSE-02"] == "pass", (name, found)
        assert issues(found) == set(), name
    for name, line in (
        ("turn", "- 2026-07-10T16:10Z · T10"),
        ("speaker", "2026-07-10T16:10Z · user · T10"),
    ):
        folder = session(tmp_path / name, f"{T9}\n\n{line}")
        found = detect(folder, "manifest")
        assert statuses(found)["BS-COMPOSE-02"] == "fail", name
        assert ("entry-not-heading", line_of(folder, line)) in issues(found), name


def test_a_turn_line_with_who_spoke_and_a_summary_after_its_id_fails(tmp_path: Path) -> None:
    """A turn written as a list item or line with its timestamp first, who spoke, its ID as
    a field of its own and a summary after it (`- 2026-…Z · user · T10 · asks …`) was read
    as nothing and noted nowhere, so a compose older than it passed BS-COMPOSE-02 (found by
    a hunt). It is meant as a turn but not a heading: noted, and the rule fails. The ID as
    a word of the talk after who spoke (`user: T3 holds`) stays talk."""
    for name, line in (
        ("item", "- 2026-07-10T16:10Z · user · T10 · asks whether T3 still holds"),
        ("line", "2026-07-10T16:10Z | facilitator | **T10** | reads back the aspects"),
        ("dash", "- 2026-07-10T16:10Z — twin — T10: compose done"),
    ):
        folder = session(tmp_path / name, f"{T9}\n\n{line}")
        found = detect(folder, "manifest")
        assert statuses(found)["BS-COMPOSE-02"] == "fail", name
        assert ("entry-not-heading", line_of(folder, line)) in issues(found), name
    for name, line in (
        ("talk", "- 2026-07-10T15:53Z user T3 holds, T4 too"),
        ("colon", "- 2026-07-10T15:53Z user: T3 holds · fine"),
    ):
        folder = session(tmp_path / name, f"{T9}\n\n{line}")
        found = detect(folder, "manifest")
        assert statuses(found)["BS-COMPOSE-02"] == "pass", (name, found)
        assert issues(found) == set(), name


def test_a_turn_without_its_id_above_the_turn_separator_fails(tmp_path: Path) -> None:
    """A writer who drops the `###` of `### 8 · 2026-…` leaves the line right over the next
    `---`, a setext heading: it holds only a number or who spoke and a timestamp, so it is a
    turn heading without its ID, as the ATX form is, never a line of the talk. Since the
    line over a `---` is read as talk it vanished, and a turn after Last compose passed
    BS-COMPOSE-02 (found by a hunt). A line of the talk that says more stays talk."""
    body = "facilitator: coverage read-back: batching, timing, opt-out all have decisions. "
    body += "localisation parked."
    for name, line, fails in (
        ("number", "9 · 2026-07-10T16:20Z", True),
        ("speaker", "user · 2026-07-10T16:20Z", True),
        ("stamp", "2026-07-10T16:20Z — user", True),
        ("talk", "user: 2026-07-20T09:00Z works for the cut-over.", False),
    ):
        folder = session(tmp_path / name, T9)
        capture = folder / "ops" / "capture.md"
        text = capture.read_text(encoding="utf-8")
        capture.write_text(text.replace(body, line), encoding="utf-8")
        found = detect(folder, "manifest")
        expected = {("bad-turn-heading", line_of(folder, line))} if fails else set()
        assert issues(found) == expected, name
        assert statuses(found)["BS-COMPOSE-02"] == ("fail" if fails else "pass"), name


# A turn heading typed with fullwidth letters or digits, as a CJK input method types them
# (`### Ｔ9 · …`), or with a zero-width space after its ID: the page shows T9, yet the heading
# was read as no turn and no note, so a compose older than it passed as fresh (found by a
# hunt). It is read as the turn it shows.
@pytest.mark.parametrize(
    "heading",
    [
        "### Ｔ9 · 2026-07-10T16:10Z",
        "### T９ · 2026-07-10T16:10Z",
        "### Ｔ９ · ２０２６-０７-１０Ｔ１６:１０Ｚ",
        "### T9\u200b · 2026-07-10T16:10Z",
    ],
)
def test_a_turn_heading_typed_fullwidth_is_the_turn_it_shows(tmp_path: Path, heading: str) -> None:
    found = detect(session(tmp_path, heading), "manifest")
    assert statuses(found)["BS-COMPOSE-02"] == "fail"
    assert ("state.md", 6) in findings(found, "BS-COMPOSE-02")
    fresh = detect(
        session(tmp_path / "fresh", heading.replace("16", "15").replace("１６", "１５")), "manifest"
    )
    assert statuses(fresh)["BS-COMPOSE-02"] == "pass"


def test_a_turn_line_typed_fullwidth_is_meant_as_a_turn(tmp_path: Path) -> None:
    """`- Ｔ9 · …` is `- T9 · …` as the page shows it: meant as a turn and not one, it fails
    BS-COMPOSE-02 as that line does (it was read as talk, found by a hunt)."""
    line = "- Ｔ9 · 2026-07-10T15:52Z"
    folder = session(tmp_path, line)
    found = detect(folder, "manifest")
    assert statuses(found)["BS-COMPOSE-02"] == "fail"
    assert issues(found) == {("entry-not-heading", line_of(folder, line))}


def test_a_turn_heading_indented_four_spaces_is_code_and_noted(tmp_path: Path) -> None:
    """A heading indented four spaces is an indented code block: never a turn (spec §3.1),
    and a writer may quote the format so (the generator does), so it fails nothing; but it
    was no note either, so `clean` hid a line written as a turn (found by a hunt). It is an
    entry-in-code note. A turn heading quoted in a fence is code written as such: no note."""
    heading = "    ### T9 · 2026-07-10T16:10Z"
    folder = session(tmp_path, "talk.\n\n" + heading)
    found = detect(folder, "manifest")
    assert statuses(found)["BS-COMPOSE-02"] == "pass"
    assert issues(found) == {("entry-in-code", line_of(folder, heading))}
    fenced = session(tmp_path / "fenced", T9 + "\n\n```\n### T10 · 2026-07-10T16:10Z\n```")
    found = detect(fenced, "manifest")
    assert statuses(found)["BS-COMPOSE-02"] == "pass"
    assert issues(found) == set()


def test_a_section_heading_whose_time_cannot_be_read_fails_compose_freshness(
    tmp_path: Path,
) -> None:
    """A section heading with a date and time counts as the capture's (stop 56); one whose
    time has no zone, or is not ISO 8601, vanished with no note and BS-COMPOSE-02 passed,
    though the same heading with `Z` fails it (spec §3.1, fail closed)."""
    for name, heading in (
        ("no-zone", "## Late note · 2026-07-10T16:10"),
        ("basic", "#### Notes from 20260710T1610Z"),
        ("hour", "## Late note · 2026-07-10T25:10Z"),
    ):
        folder = session(tmp_path / name, heading)
        found = detect(folder, "manifest")
        line = line_of(folder, heading)
        assert statuses(found)["BS-COMPOSE-02"] == "fail", heading
        assert issues(found) == {("bad-timestamp", line)}, heading
        assert findings(found, "BS-COMPOSE-02") == {("ops/capture.md", line)}, heading
