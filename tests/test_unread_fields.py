"""census.md §3.1, fail closed: a field written where the reader cannot take it as one never
just disappears. A sub-item or an indented or lazy continuation line belongs to the item
above (its value), a line right under a table is one of the table's rows, a row after a
blank line below a table is a paragraph, and an HTML block holds no Markdown. A field (or
a routing row) written there is a parse issue on its line, and the rule that needs it
fails. A sub-item that is no field (a condition under `Closes when:`) stays part of the
value, with no note.

Each case edits a copy of a healthy base session (fixtures/cases/base) on disk and runs
`census detect`; one also crawls and checks the copy and reads the tables with SQL.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from pipeline.check import check
from pipeline.crawl import crawl
from pipeline.detect import Detection, detect
from tests.conftest import FIXTURES, copy_tree

SESSION = "docs/research/demo-brainstorm"
CLOSES = "- Closes when: the translation budget for notification templates is known\n"
HOW = "email first, digest second.\n"  # the end of D2's How to apply (D2 resolves nothing)
GAPS = "- Gaps: none\n"


def _session(tmp_path: Path, base: str, file: str, old: str, new: str) -> Path:
    """A copy of a base session with one piece of `file` replaced."""
    repo = copy_tree(FIXTURES / "cases" / "base" / base / "repo", tmp_path / "corpus" / "r")
    path = repo / SESSION / file
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")
    return repo / SESSION


def _status(found: Detection, rule: str) -> str:
    return next(o.status for o in found.outcomes if o.rule == rule)


def _notes(found: Detection) -> list[tuple[str, int, str]]:
    return [(n["file"], n["line"], n["code"]) for n in found.notes]


def _line(folder: Path, file: str, text: str) -> int:
    return (folder / file).read_text(encoding="utf-8").split("\n").index(text) + 1


# (base, file, old, new, the line that is not read, its code, the rule that fails, gate)
CASES = {
    "raised-by-as-a-sub-item-of-closes-when": (
        "converging",
        "forks.md",
        "- Raised by: probe\n" + CLOSES,
        CLOSES + "  - Raised by: twin (S9)\n",
        "  - Raised by: twin (S9)",
        "nested-field",
        "BS-SYNC-02",
        "session",
    ),
    "raised-by-as-a-lazy-continuation": (
        "converging",
        "forks.md",
        "- Raised by: probe\n" + CLOSES,
        CLOSES + "Raised by: twin (S9)\n",
        "Raised by: twin (S9)",
        "nested-field",
        "BS-SYNC-02",
        "session",
    ),
    "resolves-as-a-sub-item-of-how-to-apply": (
        "open",
        "ledger.md",
        HOW,
        HOW + "  - Resolves: F1\n",
        "  - Resolves: F1",
        "nested-field",
        "BS-FORK-02",
        "session",
    ),
    "reverses-as-a-lazy-continuation": (
        "open",
        "ledger.md",
        HOW,
        HOW + "Reverses: D9\n",
        "Reverses: D9",
        "nested-field",
        "BS-LEDGER-01",
        "session",
    ),
    "status-as-a-sub-item-in-state": (
        "converging",
        "state.md",
        "- Status: stopping\n",
        "- Posture: stopping\n  - Status: stopping\n",
        "  - Status: stopping",
        "nested-field",
        "BS-STATE-01",
        "session",
    ),
    "stamp-as-a-lazy-continuation-in-thesis": (
        "converging",
        "thesis.md",
        "Current as of:",
        "- Note: see below\nCurrent as of:",
        None,
        "nested-field",
        "BS-COMPOSE-01",
        "session",
    ),
    "a-new-round-lazily-under-gaps": (
        "applied",
        "ops/manifest.md",
        GAPS,
        GAPS + "Round: 2\nStatus: proposed\n",
        "Round: 2",
        "nested-field",
        "CENSUS-MOVE-01",
        "move",
    ),
    "status-right-under-the-table": (
        "applied",
        "ops/manifest.md",
        "| append |\n\n",
        "| append |\nStatus: proposed\n\n",
        "Status: proposed",
        "unread-field",
        "CENSUS-MOVE-01",
        "move",
    ),
    "a-routing-row-after-a-blank-line": (
        "applied",
        "ops/manifest.md",
        "| append |\n\n",
        "| append |\n\n| 4 | digest page | thesis + ledger | docs/features/demo.md | create |\n\n",
        "| 4 | digest page | thesis + ledger | docs/features/demo.md | create |",
        "row-outside-table",
        "BS-HARVEST-01",
        "move",
    ),
    "a-routing-row-right-under-a-list-item": (
        "applied",
        "ops/manifest.md",
        "| append |\n\n",
        "| append |\n\n- added after approval:\n"
        "| 4 | digest page | thesis + ledger | docs/features/demo.md | create |\n\n",
        "| 4 | digest page | thesis + ledger | docs/features/demo.md | create |",
        "row-outside-table",
        "BS-HARVEST-01",
        "move",
    ),
    "raised-by-in-details": (
        "converging",
        "forks.md",
        "- Raised by: probe\n" + CLOSES,
        CLOSES + "<details><summary>provenance</summary>\n- Raised by: twin (S9)\n</details>\n",
        "- Raised by: twin (S9)",
        "unread-field",
        "BS-SYNC-02",
        "session",
    ),
    "resolves-in-details": (
        "open",
        "ledger.md",
        HOW,
        HOW + "<details>\n<summary>closes</summary>\n- Resolves: F1\n</details>\n",
        "- Resolves: F1",
        "unread-field",
        "BS-FORK-02",
        "session",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_field_the_reader_cannot_take_is_noted_and_fails_its_rule(
    tmp_path: Path, case: str
) -> None:
    base, file, old, new, unread, code, rule, gate = CASES[case]
    healthy = detect(str(_session(tmp_path / "before", base, file, old, old)), gate)
    assert _status(healthy, rule) == "pass" and healthy.result == "clean"
    folder = _session(tmp_path / "after", base, file, old, new)
    found = detect(str(folder), gate)
    line = _line(folder, file, unread) if unread else None
    noted = [n for n in _notes(found) if n[2] == code]
    assert noted and all(f == file for f, _, _ in noted), _notes(found)
    if line is not None:
        assert (file, line, code) in noted
    assert _status(found, rule) == "fail"
    assert found.result == "failing"


def test_a_condition_under_closes_when_is_its_value_and_no_note(tmp_path: Path) -> None:
    new = CLOSES + "  - Decision: the budget owner signs off\n  - or: the locale count drops\n"
    folder = _session(tmp_path, "converging", "forks.md", CLOSES, new)
    found = detect(str(folder), "session")
    assert found.result == "clean" and _notes(found) == []


def test_crawl_and_check_fail_the_rule_and_keep_the_value(tmp_path: Path) -> None:
    base, file, old, new, unread, code, rule, _ = CASES["a-new-round-lazily-under-gaps"]
    folder = _session(tmp_path, base, file, old, new)
    out = tmp_path / "out"
    crawl([str(tmp_path / "corpus")], str(out), workers=1)
    check(str(out))
    line = _line(folder, file, unread)
    with duckdb.connect(str(out / "census.duckdb"), read_only=True) as con:
        # The lazy lines are part of Gaps' value, as §3.1 reads them; the round is not read.
        assert con.execute("select rounds, status, gaps from manifests").fetchall() == [
            (1, "applied", "none Round: 2 Status: proposed")
        ]
        failed = con.execute(
            "select r.status from parse_issues i join rule_results r"
            " using (snapshot_id, rule_id, file, line) where i.code = ? and i.line = ?"
            " and i.rule_id = ?",
            [code, line, rule],
        ).fetchall()
    assert failed == [("fail",)]


def test_reversed_by_inside_an_item_is_the_phrase_and_no_note(tmp_path: Path) -> None:
    # D2 is reversed by D4 in a line under How to apply: the phrase counts anywhere.
    folder = _session(tmp_path, "open", "ledger.md", HOW, HOW + "  - Reversed by: D4\n")
    found = detect(str(folder), "session")
    assert [n for n in _notes(found) if n[2] == "nested-field"] == []


def test_the_routing_row_is_noted_once_and_fails_the_routes_too(tmp_path: Path) -> None:
    base, file, old, new, unread, code, _, gate = CASES["a-routing-row-after-a-blank-line"]
    folder = _session(tmp_path, base, file, old, new)
    found = detect(str(folder), gate)
    assert _notes(found) == [(file, _line(folder, file, unread), code)]
    assert _status(found, "BS-MANIFEST-01") == "fail"


def test_the_routing_table_inside_a_list_item_is_read(tmp_path: Path) -> None:
    # Indented under `- Routes:` past a blank line, the table is the item's and still read.
    folder = _session(tmp_path, "applied", "ops/manifest.md", "Round: 1", "Round: 1")
    path = folder / "ops/manifest.md"
    lines = path.read_text().splitlines()
    at = next(i for i, text in enumerate(lines) if text.startswith("|"))
    lines[at:] = [f"  {t}" if t.startswith("|") else t for t in lines[at:]]
    path.write_text("\n".join([*lines[:at], "- Routes:", "", *lines[at:]]) + "\n")
    found = detect(str(folder), "move")
    assert found.result == "clean" and _notes(found) == []


def test_a_table_further_down_is_no_stray_row(tmp_path: Path) -> None:
    # A second table (its own delimiter row) below the routing table is a table, not rows.
    other = "| Path | Why |\n|---|---|\n| docs/a.md | context |\n\n"
    folder = _session(
        tmp_path, "applied", "ops/manifest.md", "| append |\n\n", "| append |\n\n" + other
    )
    found = detect(str(folder), "move")
    assert found.result == "clean" and _notes(found) == []


@pytest.mark.parametrize(
    ("base", "file", "old", "new", "rule", "gate"),
    [
        (
            "converging",
            "state.md",
            "- Status: stopping",
            "- Status — stopping",
            "BS-STATE-01",
            "session",
        ),
        (
            "converging",
            "state.md",
            "- Status: stopping",
            "- Status = stopping",
            "BS-STATE-01",
            "session",
        ),
        (
            "converging",
            "thesis.md",
            "Current as of:",
            "Current as of —",
            "BS-COMPOSE-01",
            "session",
        ),
        (
            "applied",
            "ops/manifest.md",
            "- Result: pass",
            "- Result — pass",
            "BS-USELESS-01",
            "move",
        ),
        # A second Status after the applied one, not read: the move rule may not pass on it.
        (
            "applied",
            "ops/manifest.md",
            "Status: applied\n",
            "Status: applied\n- Status — proposed\n",
            "CENSUS-MOVE-01",
            "move",
        ),
    ],
)
def test_a_malformed_field_in_state_thesis_or_manifest_names_its_line(
    tmp_path: Path, base: str, file: str, old: str, new: str, rule: str, gate: str
) -> None:
    folder = _session(tmp_path, base, file, old, new)
    found = detect(str(folder), gate)
    written = new.strip().split("\n")[-1]
    lines = (folder / file).read_text(encoding="utf-8").split("\n")
    line = next(i for i, text in enumerate(lines, 1) if text.startswith(written))
    assert (file, line, "malformed-field") in _notes(found)
    outcome = next(o for o in found.outcomes if o.rule == rule)
    assert outcome.status == "fail" and any(f["line"] == line for f in outcome.findings)


@pytest.mark.parametrize(
    ("base", "file", "old", "new", "rule"),
    [
        ("open", "ledger.md", HOW, HOW + "- <!-- added at S3 --> Resolves: F1\n", "BS-FORK-02"),
        ("open", "ledger.md", HOW, HOW + "\n<!--\nadded at S3\n--> Resolves: F1\n", "BS-FORK-02"),
        ("open", "ledger.md", HOW, HOW + "- <?note?> Resolves: F1\n", "BS-FORK-02"),
        (
            "converging",
            "forks.md",
            "- Raised by: probe\n" + CLOSES,
            CLOSES + "- <!-- from the probe --> Raised by: twin (S9)\n",
            "BS-SYNC-02",
        ),
        (
            "converging",
            "state.md",
            "- Status: stopping\n",
            "- Status: stopping\n- <!-- hand edit --> Status: harvested\n",
            "BS-STATE-01",
        ),
    ],
)
def test_a_field_after_a_comment_on_its_line_is_noted_and_fails_its_rule(
    tmp_path: Path, base: str, file: str, old: str, new: str, rule: str
) -> None:
    """A line that begins with an HTML comment is an HTML block to CommonMark, which passes
    the text after `-->` through, so the page shows `- <!-- x --> Resolves: F1` as
    "Resolves: F1". Before, the whole block was taken as hidden: the field was neither read
    nor noted and the session was clean (found by a hunt)."""
    folder = _session(tmp_path, base, file, old, new)
    found = detect(str(folder), "session")
    lines = (folder / file).read_text(encoding="utf-8").split("\n")
    line = next(i for i, text in enumerate(lines, 1) if "--> " in text or "?> " in text)
    assert (file, line, "unread-field") in _notes(found), _notes(found)
    assert _status(found, rule) == "fail" and found.result == "failing"


def test_a_fork_heading_after_a_comment_is_noted_and_fails(tmp_path: Path) -> None:
    """`<!-- x --> ## F9 — … [open]` shows as the text "## F9 — … [open]", a fork not written
    as a heading. Before, it was neither counted nor noted, and the manifest gate passed with
    it open (found by a hunt)."""
    heading = "<!-- moved from the backlog --> ## F9 — Do digests skip weekends? [open]"
    folder = _session(tmp_path, "converging", "forks.md", CLOSES, CLOSES + "\n" + heading + "\n")
    found = detect(str(folder), "manifest")
    line = _line(folder, "forks.md", heading)
    assert ("forks.md", line, "entry-not-heading") in _notes(found), _notes(found)
    assert _status(found, "BS-FORK-01") == "fail" and _status(found, "BS-FORK-03") == "fail"


@pytest.mark.parametrize(
    ("base", "file", "old", "new", "rule"),
    [
        ("open", "ledger.md", HOW, HOW.rstrip("\n") + "<br>Resolves: F1\n", "BS-FORK-02"),
        ("open", "ledger.md", HOW, HOW.rstrip("\n") + " <br/> Resolves: F1\n", "BS-FORK-02"),
        (
            "converging",
            "forks.md",
            "- Raised by: probe\n" + CLOSES,
            CLOSES.rstrip("\n") + "<BR>Raised by: twin (S9)\n",
            "BS-SYNC-02",
        ),
        # A field after another on its line: until 2026-12-07 read as the first's text.
        ("open", "ledger.md", "- Resolves: F3\n", "- Resolves: F3; Reverses: D9\n", "BS-LEDGER-01"),
        ("open", "ledger.md", HOW, HOW.rstrip("\n") + " · Resolves: F1\n", "BS-FORK-02"),
        # A lone backtick opens no code span (CommonMark): the field after it is shown.
        ("open", "ledger.md", HOW, HOW.rstrip("\n") + " (`x); Resolves: F1\n", "BS-FORK-02"),
        (
            "open",
            "ledger.md",
            "- Resolves: F3\n",
            "\nResolves: F3. **Reverses:** D9\n",
            "BS-LEDGER-01",
        ),
        (
            "converging",
            "forks.md",
            "- Raised by: probe\n" + CLOSES,
            CLOSES.rstrip("\n") + " | _Raised by:_ twin (S9)\n",
            "BS-SYNC-02",
        ),
    ],
)
def test_a_field_after_a_br_or_another_field_is_noted_and_fails_its_rule(
    tmp_path: Path, base: str, file: str, old: str, new: str, rule: str
) -> None:
    """`- How to apply: …<br>Resolves: F1` shows "Resolves: F1" on a line of its own, as a
    hard line break does, yet it is more of the item's text. Before, a hard break was noted
    but a `<br>` was not: the field was neither read nor noted and the session was clean
    (found by a hunt). Likewise `- Resolves: F3; Reverses: D9` is one field whose value
    runs to the line's end: D9, no entry, passed BS-LEDGER-01 with no note."""
    healthy = detect(str(_session(tmp_path / "before", base, file, old, old)), "session")
    assert _status(healthy, rule) == "pass"
    folder = _session(tmp_path / "after", base, file, old, new)
    found = detect(str(folder), "session")
    lines = (folder / file).read_text(encoding="utf-8").split("\n")
    written = new.strip("\n").split("\n")[-1]
    line = next(i for i, text in enumerate(lines, 1) if text.endswith(written))
    assert (file, line, "nested-field") in _notes(found), _notes(found)
    assert _status(found, rule) == "fail" and found.result == "failing"


@pytest.mark.parametrize(
    "new",
    [
        HOW.rstrip("\n") + " (write `F1; Resolves: F2` for both)\n",
        HOW.rstrip("\n") + " See https://example.org/a;resolves:f1 for the spec.\n",
        HOW.rstrip("\n") + "; resolves the question of who sends first.\n",
    ],
)
def test_a_field_name_in_code_a_url_or_prose_after_a_field_is_no_field(
    tmp_path: Path, new: str
) -> None:
    """A field name inside a code span or a URL, or as a verb with no colon, is the first
    field's text: the session stays clean."""
    found = detect(str(_session(tmp_path, "open", "ledger.md", HOW, new)), "session")
    assert found.notes == [] and found.result == "clean", _notes(found)


@pytest.mark.parametrize(
    ("base", "file", "old", "new", "rule"),
    [
        (
            "open",
            "ledger.md",
            HOW,
            HOW + "\n| Resolves | Reversed by |\n|---|---|\n| F1 | — |\n",
            "BS-FORK-02",
        ),
        (
            "open",
            "ledger.md",
            HOW,
            HOW + "\n| Reversed by | Date |\n| --- | --- |\n| D9 | 07-12 |\n",
            "BS-LEDGER-01",
        ),
        (
            "converging",
            "forks.md",
            "- Raised by: probe\n" + CLOSES,
            CLOSES + "\n| Raised by |\n|:--|\n| twin (S9) |\n",
            "BS-SYNC-02",
        ),
    ],
)
def test_fields_written_as_a_table_s_columns_are_noted_and_fail_their_rule(
    tmp_path: Path, base: str, file: str, old: str, new: str, rule: str
) -> None:
    """An entry's fields written as a one-row table whose header names them (`| Resolves |
    Reversed by |` over `| F1 | D9 |`) show as those fields. Before, only a row or header
    row that names a field was noted: the column form was neither read nor noted and the
    session was clean with D2 resolving the open F1 (found by a hunt)."""
    healthy = detect(str(_session(tmp_path / "before", base, file, old, old)), "session")
    assert _status(healthy, rule) == "pass"
    folder = _session(tmp_path / "after", base, file, old, new)
    found = detect(str(folder), "session")
    lines = (folder / file).read_text(encoding="utf-8").split("\n")
    line = next(i for i, text in enumerate(lines, 1) if text.startswith("|")) + 2
    assert (file, line, "unread-field") in _notes(found), _notes(found)
    assert _status(found, rule) == "fail" and found.result == "failing"


def test_a_table_of_many_rows_under_a_field_name_is_no_field(tmp_path: Path) -> None:
    """A table of something else whose header happens to name a field (`| Status | Owner |`
    over several rows) stays a table: only a one-row table is an entry's fields."""
    table = "\n| Status | Owner |\n|---|---|\n| open | Ann |\n| stopping | Bo |\n\n"
    last = "- Last compose: 2026-07-08T14:30Z\n"
    folder = _session(tmp_path, "open", "state.md", last, last + table)
    found = detect(str(folder), "session")
    assert found.result == "clean" and _notes(found) == []


def test_a_column_of_a_field_over_several_rows_is_noted_and_fails_its_rule(
    tmp_path: Path,
) -> None:
    """A table whose every header cell names a field holds those fields however many rows it
    has: a `| Resolves |` column listing F1, then F2, under D2. Only a one-row table was
    read so, and with a second row the forks D2 resolves vanished: the session was clean
    with D2 resolving the open F1 and F2 (found by a hunt)."""
    table = "\n| Resolves |\n|---|\n| F1 |\n| F2 |\n"
    folder = _session(tmp_path, "open", "ledger.md", HOW, HOW + table)
    found = detect(str(folder), "session")
    first = _line(folder, "ledger.md", "| F1 |")
    noted = [n for n in _notes(found) if n[2] == "unread-field"]
    assert noted == [("ledger.md", first, "unread-field"), ("ledger.md", first + 1, "unread-field")]
    assert _status(found, "BS-FORK-02") == "fail" and found.result == "failing"


@pytest.mark.parametrize(
    ("file", "old", "table"),
    [
        (
            "state.md",
            "- Last compose: 2026-07-08T14:30Z\n",
            "\n| Aspect | Status |\n|---|---|\n| quiet-hours | open |\n\n",
        ),
        (
            "thesis.md",
            "Current as of: 2026-07-08T14:30Z\n",
            "\n| Metric | Current as of |\n|---|---|\n| digests sent | 2026-07-01T00:00Z |\n\n",
        ),
    ],
)
def test_a_one_row_table_about_something_else_is_no_field(
    tmp_path: Path, file: str, old: str, table: str
) -> None:
    """A one-row table whose first column names what the row is about (`| Aspect | Status |`
    over `| quiet-hours | open |`) gives that thing's status, not the session's. It was
    taken for the Status field written as a column: a healthy state.md failed BS-STATE-01
    (thesis.md BS-COMPOSE-01), though the same table with two rows passed (found by a hunt)."""
    folder = _session(tmp_path, "open", file, old, old + table)
    found = detect(str(folder), "session")
    assert found.result == "clean" and _notes(found) == [], _notes(found)


@pytest.mark.parametrize(
    "marker",
    [
        "[Parked → docs/architecture/open-questions.md]",
        "(parked → docs/architecture/open-questions.md)",
        "[deferred → docs/architecture/open-questions.md]",
        "",
    ],
)
def test_a_fork_whose_marker_is_unread_needs_a_route_as_a_parked_one_does(
    tmp_path: Path, marker: str
) -> None:
    """A marker the census cannot read may say parked: BS-MANIFEST-01 asks a manifest row
    for that fork too (it passed, found by a hunt), as BS-FORK-03 counts it as maybe open."""
    parked = "[parked → docs/architecture/open-questions.md]"
    folder = _session(tmp_path, "converging", "forks.md", f" {parked}", f" {marker}".rstrip())
    routed = detect(str(folder), "manifest")
    assert _status(routed, "BS-MANIFEST-01") == "pass", routed.outcomes
    manifest = folder / "ops" / "manifest.md"
    rows = manifest.read_text(encoding="utf-8").split("\n")
    manifest.write_text("\n".join(r for r in rows if "parked fork F4" not in r), encoding="utf-8")
    found = detect(str(folder), "manifest")
    outcome = next(o for o in found.outcomes if o.rule == "BS-MANIFEST-01")
    assert outcome.status == "fail", found.outcomes
    assert any("F4 (forks.md:3)" in f["message"] for f in outcome.findings), outcome
