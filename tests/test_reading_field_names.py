"""census.md §3.1, fail closed and names lenient: three kinds of line a reader dropped without
a word, so the rules that need them passed.

- A ledger written as a GFM table (`| ID | Decision | Why | How to apply | Resolves |`) was
  read as no entries and no issue: BS-LEDGER-01 passed over an empty Why and IDs out of
  order, and BS-FORK-02 over a row resolving a fork still open in forks.md. Each row is
  now an `entry-not-heading` issue (as forks.md's table rows were), and a Resolves cell an
  `unread-field` issue that fails BS-FORK-02.
- A field name with a character the page does not show or shows as another (a zero-width
  space or BOM before it, a fullwidth colon, a narrow no-break or en space, `<b>…</b>` or
  `<strong>…</strong>` around it, `Resolves\\:`) was no field and no issue: the optional
  fields the rules key on (Resolves, Raised by, Reverses) vanished and their rules passed.
  They are now read as the field the page shows.
- A field bullet indented four columns or a tab right under a prose line (`\\t- Resolves:
  F1`, `    - Raised by: twin (S9)`) is, to CommonMark, more of that paragraph's text, and it
  vanished; the same line under a list item was a `nested-field` issue. It is now one too.

Each case edits a copy of a healthy base session (fixtures/cases/base) on disk and runs
`census detect`; one runs crawl and check, which must agree.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import checked_rows
from tests.test_entry_reading import detect, failing, findings, session
from tests.test_late_ids import notes

# The open base: F1 and F2 are open in forks.md, the ledger holds D1 and D2.
LEDGER_TABLE = (
    "# Ledger\n"
    "\n"
    "| ID | Decision | Why | How to apply | Resolves |\n"
    "|---|---|---|---|---|\n"
    "| D2 | keep saved carts 90 days |  | nightly cleanup | F1 |\n"
    "| D1 | names are plain text | buyers search by name | validate on save | |\n"
)


@pytest.mark.parametrize(
    "table",
    [
        LEDGER_TABLE,
        # No outer pipes, alignment colons: the same table to GFM.
        "# Ledger\n\nID | Decision | Why | How to apply | Resolves\n:--|:--|:--|:--|:--\n"
        "D2 | keep saved carts 90 days | | nightly cleanup | F1\n"
        "D1 | names are plain text | buyers search by name | validate on save |\n",
    ],
)
def test_a_ledger_written_as_a_table_fails_both_ledger_rules(tmp_path: Path, table: str) -> None:
    folder = session(tmp_path, "open", "ledger.md", lambda _old: table)
    found = detect(folder, "session")
    assert {"BS-LEDGER-01", "BS-FORK-02"} <= failing(found), found
    assert ("ledger.md", 5, "entry-not-heading") in notes(found), found["notes"]
    assert ("ledger.md", 6, "entry-not-heading") in notes(found), found["notes"]
    # The row that resolves F1 names its line in BS-FORK-02; the empty D1 Resolves cell
    # says nothing, so it is no second finding.
    assert [(f, n) for f, n, _ in findings(found, "BS-FORK-02")] == [("ledger.md", 5)], found
    (message,) = [m for _, _, m in findings(found, "BS-FORK-02")]
    assert "Resolves: F1" in message, message


def test_a_fork_table_naming_fork_fields_fails_with_its_raiser(tmp_path: Path) -> None:
    """The same mechanism, one definition: forks.md's rows with no marker are entries when
    the header names the fork's fields, and a twin's raiser in one fails BS-SYNC-02."""
    table = (
        "\n| ID | Question | Raised by | Closes when |\n|---|---|---|---|\n"
        "| F5 | Is there a weekly digest too? | twin (S9) | a pick |\n"
    )
    folder = session(tmp_path, "open", "forks.md", lambda old: old + table)
    found = detect(folder, "session")
    assert {"BS-FORK-01", "BS-SYNC-02"} <= failing(found), found
    line = len((folder / "forks.md").read_text(encoding="utf-8").splitlines())
    assert [(f, n) for f, n, _ in findings(found, "BS-SYNC-02")] == [("forks.md", line)], found
    assert ("forks.md", line, "entry-not-heading") in notes(found), found["notes"]


def test_an_index_table_in_the_ledger_is_no_entry(tmp_path: Path) -> None:
    """Guard: a table whose header names at most one ledger field (an index of decisions
    written as headings below) is no entry: no note, nothing fails."""
    index = "\n| ID | Decision |\n|---|---|\n| D1 | digests |\n| D2 | fall back |\n"
    folder = session(tmp_path, "open", "ledger.md", lambda old: old + index)
    found = detect(folder, "session")
    assert failing(found) == set() and found["notes"] == [], found


def test_crawl_and_check_agree_with_detect(tmp_path: Path) -> None:
    folder = session(tmp_path, "open", "ledger.md", lambda _old: LEDGER_TABLE)
    expected = {r["rule"]: r["status"] for r in detect(folder, "session")["rules"]}
    assert expected["BS-FORK-02"] == expected["BS-LEDGER-01"] == "fail", expected
    query = "SELECT DISTINCT rule_id, status FROM rule_results"
    rows = checked_rows(tmp_path / "repo", tmp_path / "out", query)
    assert {rule: status for rule, status in rows if rule in expected} == expected


# The open base: D2's last line, and F1's raiser.
HOW_TO_APPLY_D2 = "second.\n"
RAISED_BY_F1 = "- Raised by: user\n"


def edited(file: str, line: str) -> Callable[[str], str]:
    """F1's raiser replaced by a line (forks.md), or a line after D2's last (ledger.md)."""
    if file == "forks.md":
        return lambda old: old.replace(RAISED_BY_F1, f"{line}\n", 1)
    return lambda old: old.replace(HOW_TO_APPLY_D2, f"{HOW_TO_APPLY_D2}{line}\n", 1)


@pytest.mark.parametrize(
    ("file", "line", "rule"),
    [
        ("ledger.md", "- \u200bResolves: F1", "BS-FORK-02"),
        ("ledger.md", "- Re\u200dsolves: F1", "BS-FORK-02"),
        ("ledger.md", "- Resolves\uff1a F1", "BS-FORK-02"),
        ("ledger.md", "- Resolves\u202f: F1", "BS-FORK-02"),
        ("ledger.md", "- <b>Resolves:</b> F1", "BS-FORK-02"),
        ("ledger.md", "- <B>Resolves</B>: F1", "BS-FORK-02"),
        ("ledger.md", "- Resolves\\: F1", "BS-FORK-02"),
        ("ledger.md", "- Reverses\uff1a D9", "BS-LEDGER-01"),
        ("ledger.md", "- <em>Reverses:</em> D9", "BS-LEDGER-01"),
        ("forks.md", "- \u200bRaised by: twin (S9)", "BS-SYNC-02"),
        ("forks.md", "- Raised\u2002by: twin (S9)", "BS-SYNC-02"),
        ("forks.md", "- Raised by\uff1a twin (S9)", "BS-SYNC-02"),
        ("forks.md", "- <strong>Raised by:</strong> twin (S9)", "BS-SYNC-02"),
        ("forks.md", "- <i>Raised by</i>: twin (S9)", "BS-SYNC-02"),
    ],
)
def test_a_field_name_the_page_shows_plainly_is_read(
    tmp_path: Path, file: str, line: str, rule: str
) -> None:
    folder = session(tmp_path, "open", file, edited(file, line))
    written = (folder / file).read_text(encoding="utf-8").splitlines().index(line) + 1
    found = detect(folder, "session")
    assert failing(found) == {rule}, found
    # Read as the field, with nothing left unread: the finding is the value's (F1 still
    # open, named at its fork entry; D9 no entry and S9 no sync, at the line written).
    where = ("forks.md", 3) if rule == "BS-FORK-02" else (file, written)
    assert [(f, n) for f, n, _ in findings(found, rule)] == [where], found
    assert found["notes"] == [], found["notes"]


@pytest.mark.parametrize(("before", "code"), [("\n", None), ("", "nested-field")])
def test_a_bom_left_inside_the_file_before_a_field(
    tmp_path: Path, before: str, code: str | None
) -> None:
    """`\\ufeff- Resolves: F1` (two files joined): CommonMark takes the BOM line for no list
    item. After a blank line it is a paragraph line of its own, read as the field; right
    under an item it continues that item, a nested field, noted and failed."""
    folder = session(
        tmp_path, "open", "ledger.md", edited("ledger.md", f"{before}\ufeff- Resolves: F1")
    )
    found = detect(folder, "session")
    assert failing(found) == {"BS-FORK-02"}, found
    assert [n[2] for n in notes(found)] == ([code] if code else []), found["notes"]


def test_a_resolves_read_through_a_fullwidth_colon_closes_its_fork(tmp_path: Path) -> None:
    """The value is read too: a ledger row for F1 and no fork F1 left is consistent."""
    folder = session(tmp_path, "open", "ledger.md", edited("ledger.md", "- Resolves\uff1a F1"))
    forks = (folder / "forks.md").read_text(encoding="utf-8")
    start, end = forks.index("## F1"), forks.index("## F2")
    (folder / "forks.md").write_text(forks[:start] + forks[end:], encoding="utf-8")
    found = detect(folder, "session")
    assert failing(found) == set() and found["notes"] == [], found


D2_HEADING = "## D2 — Turning digests off falls back to immediate sends\n"


@pytest.mark.parametrize(
    "line",
    [
        *(f"{indent}{bullet} Resolves: F1" for indent in ("\t", "    ", "  \t") for bullet in "-*"),
        "      2) Resolves: F1",
        "2) Resolves: F1",  # only a list that starts at 1 may interrupt a paragraph
        "3. **Resolves:** F1",
    ],
)
def test_a_resolves_continuing_prose_fails_closed(tmp_path: Path, line: str) -> None:
    body = f"{D2_HEADING}Support asked for this after the Q2 incident.\n{line}\n\n"
    folder = session(tmp_path, "open", "ledger.md", lambda old: old.replace(D2_HEADING, body))
    written = (folder / "ledger.md").read_text(encoding="utf-8").splitlines().index(line) + 1
    found = detect(folder, "session")
    assert failing(found) == {"BS-FORK-02"}, found
    assert notes(found) == [("ledger.md", written, "nested-field")], found["notes"]
    assert [(f, n) for f, n, _ in findings(found, "BS-FORK-02")] == [("ledger.md", written)]


def test_a_raiser_continuing_prose_fails_the_sync_rule(tmp_path: Path) -> None:
    line = "    - Raised by: twin (S9)"
    edit = lambda old: old.replace(RAISED_BY_F1, f"{line}\n{RAISED_BY_F1}", 1)  # noqa: E731
    folder = session(tmp_path, "open", "forks.md", edit)
    written = (folder / "forks.md").read_text(encoding="utf-8").splitlines().index(line) + 1
    found = detect(folder, "session")
    assert failing(found) == {"BS-SYNC-02"}, found
    assert notes(found) == [("forks.md", written, "nested-field")], found["notes"]


def test_other_bullets_continuing_prose_stay_prose(tmp_path: Path) -> None:
    """Guard: an indented bullet under prose that is no field, or names no field of the
    file, is the paragraph's text, with no issue."""
    body = f"{D2_HEADING}Support asked.\n    - see the Q2 notes\n\t- Owner: ops\n\n"
    folder = session(tmp_path, "open", "ledger.md", lambda old: old.replace(D2_HEADING, body))
    found = detect(folder, "session")
    assert failing(found) == set() and found["notes"] == [], found


@pytest.mark.parametrize("digit", ["\uff11", "\u0661", "\u0967"])
def test_an_id_written_in_another_scripts_digits_is_the_id_it_shows(
    tmp_path: Path, digit: str
) -> None:
    """`Resolves: F１` (a fullwidth one, or an Arabic-Indic or Devanagari one) shows F1 on
    the page: it closes F1, which forks.md still lists (BS-FORK-02). It was a fork 'F１' that
    no fork is, and the folder clean."""
    folder = session(tmp_path, "open", "ledger.md", edited("ledger.md", f"- Resolves: F{digit}"))
    found = detect(folder, "session")
    assert failing(found) == {"BS-FORK-02"}, found
    assert [(f, n) for f, n, _ in findings(found, "BS-FORK-02")] == [("forks.md", 3)], found
