"""census.md §3.1, read as the rendered page shows it: three kinds of line a reader read
otherwise.

- A parenthesised remark after a Destination (`docs/x.md (new page, 2 sections)`) was split
  at the comma inside it: `2 sections)` was noted as a destination naming no path, and
  BS-HARVEST-01 failed, though the page names one destination with a remark. A separator
  inside balanced parentheses now splits nothing; a path-like word in the remark
  (`(was docs/old.md, moved)`) still names a destination, as any such word in a cell does.
- Character references outside aspects and fork markers: `S1 &rarr; reconciled` in the sync
  log was 'neither a dispatch nor a result' (BS-SYNC-01, and BS-SYNC-02 on a twin fork
  citing it); `## F1&mdash;Title [open]` and `## D2&mdash;Title` were no entry headings,
  and with spaces the title kept the `&mdash;` the page shows as the dash; a field name
  with `&#58;` (the colon) or `&nbsp;` in it (`- Resolves&#58; F1`) was no field and no
  issue, so the fork it resolves stayed silently unresolved.
- A field line with no colon (`- Resolves F1`) is read, with a `malformed-field` issue that
  fails the field's rule; with a zero-width space or BOM before the name, or a Unicode
  space inside it (`- \\u200bResolves F1`, `- Resolves\\u202fF1`), it was nothing at all.

Each case edits a copy of a healthy base session (fixtures/cases/base) on disk and runs
`census detect`; one runs crawl and check, which must agree.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from pipeline.engine import connect
from pipeline.parse.manifest import destinations
from pipeline.store import Out
from tests.conftest import checked_rows
from tests.test_destination_cells import DEMO, _harvest, _repo
from tests.test_entry_reading import detect, failing, findings, session
from tests.test_late_ids import notes
from tests.test_reading_field_names import edited

# ───────────────────────────── remarks in Destination cells ─────────────────────────────

OVERVIEW = "docs/architecture/overview.md"


@pytest.mark.parametrize(
    "remark",
    [
        "(new page, 2 sections)",
        "(new page; see below)",
        "(new page<br>2 sections)",
        "(new page and more)",
        "(new, see (below), later)",  # nested
    ],
)
def test_a_remark_with_a_separator_is_commentary(tmp_path: Path, remark: str) -> None:
    cell = f"{DEMO} {remark}"
    assert [path for _, path in destinations(cell)] == [DEMO]
    assert _harvest(_repo(tmp_path, DEMO, cell, link=False)) == ("pass", [], [])
    status, found, codes = _harvest(_repo(tmp_path / "linked", DEMO, cell))
    assert (status, codes) == ("fail", []), found
    assert any(f"/{DEMO} links into the session folder" in line for line in found), found


def test_a_linked_destination_with_a_remark_is_one_destination() -> None:
    assert [path for _, path in destinations(f"[demo]({DEMO}) (new, small)")] == [DEMO]


@pytest.mark.parametrize(
    "cell",
    [
        f"{OVERVIEW} (was {DEMO}, moved)",  # a path in the remark still names a destination
        f"{OVERVIEW} (new), {DEMO} (new)",  # separators between remarks still split
        f"{OVERVIEW} (new, {DEMO}",  # a `(` never closed is text: the comma splits
        f"{OVERVIEW} new), {DEMO}",  # as is a `)` with none before it
    ],
)
def test_a_path_beside_or_in_a_remark_still_names_its_document(tmp_path: Path, cell: str) -> None:
    assert DEMO in [path for _, path in destinations(cell)], destinations(cell)
    status, found, _ = _harvest(_repo(tmp_path, DEMO, cell))
    assert status == "fail", cell
    assert any(f"/{DEMO} links into the session folder" in line for line in found), found


@pytest.mark.parametrize(
    "cell", ["(" * 40_000 + "a, " * 20_000, "(a, " * 20_000 + ")" * 20_000, "(a) b, " * 20_000]
)
def test_a_cell_of_parentheses_is_read_in_linear_time(cell: str) -> None:
    started = time.perf_counter()
    destinations(cell)
    assert time.perf_counter() - started < 2, "quadratic in the cell's length"


# ───────────────────────────── character references ─────────────────────────────

S2_DONE = "S2 → reconciled | 2026-07-08T14:30Z | 5 edits · 2 new forks · 2 open · untouched: none"
ARROWS = ["&rarr;", "&#8594;", "&#x2192;", "-&gt;"]


def _sync_result(tmp_path: Path, result: str) -> Path:
    """The open base session (F2 raised by twin (S2)) with S2's result line written so."""
    edit = lambda old: old.replace(S2_DONE, result)  # noqa: E731
    return session(tmp_path, "open", "ops/sync-log.md", edit)


@pytest.mark.parametrize("arrow", ARROWS)
@pytest.mark.parametrize("form", ["{}", "- {}", "## {}", "<div>\n{}\n</div>"])
def test_a_referenced_arrow_in_a_sync_result_is_its_arrow(
    tmp_path: Path, arrow: str, form: str
) -> None:
    folder = _sync_result(tmp_path, form.format(S2_DONE.replace("→", arrow)))
    found = detect(folder, "session")
    assert failing(found) == set() and found["notes"] == [], found


@pytest.mark.parametrize("written", ["&amp;rarr;", "`&rarr;`", "\\&rarr;", "&rarr"])
def test_a_reference_the_sync_log_shows_as_written_is_no_arrow(
    tmp_path: Path, written: str
) -> None:
    """Guard: what the page shows as `&rarr;` (or `&rarr` unterminated) is no arrow."""
    found = detect(_sync_result(tmp_path, S2_DONE.replace("→", written)), "session")
    assert [line for _, line, _ in findings(found, "BS-SYNC-01")] == [4], found
    assert "BS-SYNC-02" in failing(found)


def test_a_reference_in_a_fenced_sync_log_shows_as_written(tmp_path: Path) -> None:
    """Guard: the lines of a fence are read as if unfenced (the schema shows the log in
    one), but a code block shows `&rarr;` as written: no arrow (line 5; the fence itself,
    line 1, is a `code-block` finding of its own)."""
    edit = lambda old: f"```\n{old.replace(S2_DONE, S2_DONE.replace('→', '&rarr;'))}```\n"  # noqa: E731
    found = detect(session(tmp_path, "open", "ops/sync-log.md", edit), "session")
    assert [line for _, line, _ in findings(found, "BS-SYNC-01")] == [1, 5], found


def test_a_referenced_colon_in_a_dispatch_cell_is_its_colon(tmp_path: Path) -> None:
    edit = lambda old: old.replace("| dispatched:", "| dispatched&#58;", 1)  # noqa: E731
    found = detect(session(tmp_path, "open", "ops/sync-log.md", edit), "session")
    assert failing(found) == set() and found["notes"] == [], found


@pytest.mark.parametrize(
    ("file", "written", "shown"),
    [
        ("forks.md", "## F1&mdash;Do security", "## F1 — Do security"),
        ("forks.md", "## F1&#8212;Do security", "## F1 — Do security"),
        ("forks.md", "## F1&nbsp;&ndash;&nbsp;Do security", "## F1 — Do security"),
        ("ledger.md", "## D2&mdash;Turning", "## D2 — Turning"),
        ("ledger.md", "## D2&#x2014;Turning", "## D2 — Turning"),
        ("ledger.md", "## D2&#58;Turning", "## D2 — Turning"),
        ("ops/capture.md", "### T5&middot;2026", "### T5 · 2026"),  # guard: read before too
    ],
)
def test_a_referenced_dash_after_an_entry_id_is_its_dash(
    tmp_path: Path, file: str, written: str, shown: str
) -> None:
    folder = session(tmp_path, "open", file, lambda old: old.replace(shown, written, 1))
    found = detect(folder, "session")
    assert failing(found) == set() and found["notes"] == [], found


@pytest.mark.parametrize(
    ("file", "line", "rule"),
    [
        ("ledger.md", "- Resolves&#58; F1", "BS-FORK-02"),
        ("ledger.md", "- Resolves&colon; F1", "BS-FORK-02"),
        ("ledger.md", "- **Resolves&#x3A;** F1", "BS-FORK-02"),
        ("ledger.md", "- Reverses&nbsp;: D9", "BS-LEDGER-01"),
        ("forks.md", "- Raised&nbsp;by: twin (S9)", "BS-SYNC-02"),
        ("forks.md", "- Raised&#32;by&#58; twin (S9)", "BS-SYNC-02"),
    ],
)
def test_a_field_name_written_with_references_is_read(
    tmp_path: Path, file: str, line: str, rule: str
) -> None:
    """Read as the field the page shows, with nothing left unread: the finding is the
    value's (F1 still open, named at its fork entry; D9 no entry and S9 no sync)."""
    folder = session(tmp_path, "open", file, edited(file, line))
    written = (folder / file).read_text(encoding="utf-8").splitlines().index(line) + 1
    found = detect(folder, "session")
    assert failing(found) == {rule}, found
    where = ("forks.md", 3) if rule == "BS-FORK-02" else (file, written)
    assert [(f, n) for f, n, _ in findings(found, rule)] == [where], found
    assert found["notes"] == [], found["notes"]


def test_a_value_keeps_its_references_as_written(tmp_path: Path) -> None:
    """Guard: only the name is decoded; `&#58;` in a value is the value's (a raiser that
    names no sync, as written)."""
    line = "- Raised by: twin&#58; S9"
    found = detect(session(tmp_path, "open", "forks.md", edited("forks.md", line)), "session")
    assert failing(found) == {"BS-SYNC-02"}, found


# ───────────────────────────── fields with no colon ─────────────────────────────


@pytest.mark.parametrize(
    ("file", "line", "rule"),
    [
        ("ledger.md", "- Resolves F1", "BS-FORK-02"),  # the plain spelling, read before too
        ("ledger.md", "- \u200bResolves F1", "BS-FORK-02"),
        ("ledger.md", "- \ufeffResolves F1", "BS-FORK-02"),
        ("ledger.md", "- Re\u200dsolves F1", "BS-FORK-02"),
        ("ledger.md", "- Resolves\u202fF1", "BS-FORK-02"),
        ("ledger.md", "- Resolves\u2002F1", "BS-FORK-02"),
        ("ledger.md", "- Resolves&nbsp;F1", "BS-FORK-02"),
        ("ledger.md", "- &#8203;Resolves F1", "BS-FORK-02"),
        ("ledger.md", "- <b>Resolves</b> F1", "BS-FORK-02"),
        ("ledger.md", "\n\ufeff- Resolves F1", "BS-FORK-02"),  # a paragraph line of its own
        ("forks.md", "- \u200bRaised by twin (S9)", "BS-SYNC-02"),
        ("forks.md", "- Raised\u2002by twin (S9)", "BS-SYNC-02"),
    ],
)
def test_a_field_with_no_colon_is_read_as_its_plain_spelling_is(
    tmp_path: Path, file: str, line: str, rule: str
) -> None:
    """`- Resolves F1` is read (F1 resolved by D2, still listed open) with a
    `malformed-field` issue that fails the field's rule; so is every spelling the page shows
    the same (it was nothing at all, and the rule passed)."""
    folder = session(tmp_path, "open", file, edited(file, line))
    written = (folder / file).read_text(encoding="utf-8").splitlines().index(line.lstrip()) + 1
    found = detect(folder, "session")
    assert failing(found) == {rule}, found
    assert notes(found) == [(file, written, "malformed-field")], found["notes"]
    if rule == "BS-FORK-02":
        assert ("forks.md", 3) in [(f, n) for f, n, _ in findings(found, rule)], found


@pytest.mark.parametrize(
    "line", ["- \u200bResolves the question later", "- \u200bResolved\u202fF1 today", "- \u200b"]
)
def test_other_invisible_lines_stay_prose(tmp_path: Path, line: str) -> None:
    """Guard: a line the page shows as prose (a name that goes on, or nothing) is no field."""
    found = detect(session(tmp_path, "open", "ledger.md", edited("ledger.md", line)), "session")
    assert failing(found) == set() and found["notes"] == [], found


# ───────────────────────────── crawl and check ─────────────────────────────


def test_crawl_and_check_agree_with_detect(tmp_path: Path) -> None:
    folder = _sync_result(tmp_path, S2_DONE.replace("→", "&rarr;"))
    forks = folder / "forks.md"
    text = forks.read_text(encoding="utf-8").replace("## F1 — Do", "## F1&mdash;Do", 1)
    forks.write_text(text, encoding="utf-8")
    ledger = folder / "ledger.md"
    edit = edited("ledger.md", "- Resolves&#58; F1")
    ledger.write_text(edit(ledger.read_text(encoding="utf-8")), encoding="utf-8")
    text = forks.read_text(encoding="utf-8")
    forks.write_text(edited("forks.md", "- \u200bRaised by twin (S9)")(text), encoding="utf-8")
    expected = {r["rule"]: r["status"] for r in detect(folder, "session")["rules"]}
    assert expected["BS-FORK-02"] == expected["BS-SYNC-02"] == "fail", expected
    assert expected["BS-SYNC-01"] == expected["BS-FORK-01"] == "pass", expected
    query = "SELECT DISTINCT rule_id, status FROM rule_results"
    rows = checked_rows(tmp_path / "repo", tmp_path / "out", query)
    assert {rule: status for rule, status in rows if rule in expected} == expected
    # The title is the page's, with no `&mdash;` left in it; S2's result is read.
    con = connect(Out(tmp_path / "out"))
    titles = con.execute("SELECT title FROM forks WHERE fork_id = 'F1'").fetchall()
    assert titles == [("Do security alerts ever ride in a digest?",)], titles
    events = "SELECT kind FROM sync_events WHERE sync_id = 'S2' ORDER BY line"
    assert con.execute(events).fetchall() == [("dispatch",), ("result",)]
