"""census.md §3.1: four ways of writing ops/ files that a reader of the rendered page reads
one way and the census read another.

- A Destination cell that visibly names an existing document (`→ docs/x.md`,
  `update docs/x.md`, `docs/x.md.`, `docs/x.md<!-- new -->`, `[docs/x.md]`,
  `~~old.md~~ docs/x.md`, `a.md / docs/x.md`, `docs/x.md?plain=1`, …) was read as one path
  that does not exist, so BS-HARVEST-01 passed over that document's links into the folder,
  with no note.
- A sync-log result wrapped onto a second plain line is one paragraph in CommonMark; the
  second line was read as a line of its own, 'neither a dispatch nor a result', failing
  BS-SYNC-01 and BS-SYNC-02 (the list-item form was already read as one line).
- A heading naming a sync above its lines (`## S1 — intake`) was read as a bad sync line.
- An HTML comment inside a manifest table cell was read though the page does not show it:
  `parked fork <!-- F4 -->` routed F4 for BS-MANIFEST-01.

Each case edits a copy of a healthy base session (fixtures/cases/base) and runs
`census detect`; one runs crawl and check, which must agree.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from pipeline.crawl import crawl
from pipeline.engine import connect
from pipeline.parse.lexical import shown
from pipeline.store import Out
from tests.conftest import checked_rows
from tests.test_destination_cells import DEMO, _harvest, _repo
from tests.test_entry_reading import detect, failing, findings
from tests.test_late_ids import appended, notes

# ───────────────────────────── sync-log paragraphs and headings ─────────────────────────────

S1 = "S1 | gate: intake | dispatched: 2026-07-06T10:11Z | scope: bootstrap aspect map + compose"
S1_DONE = (
    "S1 → reconciled | 2026-07-06T10:15Z | 6 edits · 2 new forks · 2 open · untouched: opt-out"
)
S2 = "S2 | gate: on-demand | dispatched: 2026-07-08T14:24Z | scope: full reconcile + compose"
S2_DONE = "S2 → reconciled | 2026-07-08T14:30Z | 5 edits · 2 new forks · 2 open · untouched: none"


def _sync_log(tmp_path: Path, text: str) -> Path:
    """The open base session (F2 raised by twin (S2)) with this ops/sync-log.md."""
    folder = appended(tmp_path, "open", "ops/sync-log.md", "")
    (folder / "ops" / "sync-log.md").write_text(text, encoding="utf-8")
    return folder


def _events(out: Path) -> list[tuple[object, ...]]:
    return [
        tuple(row)
        for row in connect(Out(str(out)))
        .execute("SELECT line, sync_id, kind, open_forks FROM sync_events ORDER BY line")
        .fetchall()
    ]


@pytest.mark.parametrize(
    "text",
    [
        # The result wrapped onto a plain line: one paragraph, so one line on the page.
        f"{S1}\n{S1_DONE}\n{S2}\nS2 → reconciled | 2026-07-08T14:30Z | 5 edits · 2 new forks ·\n"
        "2 open · untouched: none\n",
        # The dispatch's scope wrapped too.
        f"{S1}\n{S1_DONE}\nS2 | gate: on-demand | dispatched: 2026-07-08T14:24Z | scope: full\n"
        f"reconcile + compose\n{S2_DONE}\n",
    ],
)
def test_a_sync_line_wrapped_onto_a_plain_line_is_one_line(tmp_path: Path, text: str) -> None:
    found = detect(_sync_log(tmp_path, text), "session")
    assert not {"BS-SYNC-01", "BS-SYNC-02"} & failing(found), found
    assert found["notes"] == [], found["notes"]


def test_a_wrapped_result_keeps_its_counts(tmp_path: Path) -> None:
    """The reconciled summary's `2 open`, on the continuation line, is read (crawl)."""
    text = f"{S1}\n{S1_DONE}\n{S2}\nS2 → reconciled | 2026-07-08T14:30Z | 5 edits ·\n2 open\n"
    _sync_log(tmp_path, text)
    out = tmp_path / "out"
    crawl([str(tmp_path / "repo")], str(out))
    assert _events(out) == [
        (1, "S1", "dispatch", None),
        (2, "S1", "result", 2),
        (3, "S2", "dispatch", None),
        (4, "S2", "result", 2),
    ]


def test_prose_after_a_blank_line_is_still_no_sync_line(tmp_path: Path) -> None:
    """Guard: a plain line of its own paragraph (or a paragraph of prose) is no sync line."""
    text = f"{S1}\n{S1_DONE}\n{S2}\n{S2_DONE}\n\nthe twin was slow today\nand again\n"
    found = detect(_sync_log(tmp_path, text), "session")
    assert "BS-SYNC-01" in failing(found)
    lines = [line for _, line, _ in findings(found, "BS-SYNC-01")]
    assert lines == [6, 7], found


@pytest.mark.parametrize("heading", ["## S1 — intake", "## S1", "### S2: full reconcile", "# S1"])
def test_a_heading_naming_a_sync_is_a_section_title(tmp_path: Path, heading: str) -> None:
    text = f"{heading}\n\n{S1}\n{S1_DONE}\n\n## S2\n\n{S2}\n{S2_DONE}\n"
    found = detect(_sync_log(tmp_path, text), "session")
    assert not {"BS-SYNC-01", "BS-SYNC-02"} & failing(found), found
    assert found["notes"] == [], found["notes"]


@pytest.mark.parametrize(
    "heading",
    ["## S3 | gate: stop | dispatched: 2026-07-10T15:58Z", "### S3 → reconciled 2026-07-10"],
)
def test_a_heading_meant_as_a_sync_line_still_fails(tmp_path: Path, heading: str) -> None:
    """Guard: a heading that holds a field separator or an arrow is read as a sync line."""
    text = f"{S1}\n{S1_DONE}\n{S2}\n{S2_DONE}\n\n{heading}\n"
    found = detect(_sync_log(tmp_path, text), "session")
    assert [line for _, line, _ in findings(found, "BS-SYNC-01")] == [6], found


# ───────────────────────────── manifest table cells ─────────────────────────────

ROW_3 = "| 3 | parked fork F4 | forks.md |"


@pytest.mark.parametrize(
    "row",
    [
        "| 3 | parked fork <!-- F4 --> | forks.md |",
        "| 3 | parked fork | forks.md <!-- F4 --> |",
        "| 3 | parked fork <!--F4--> (total counts) | forks.md |",
    ],
)
def test_a_fork_named_only_in_a_comment_is_not_routed(tmp_path: Path, row: str) -> None:
    folder = appended(tmp_path, "applied", "ops/manifest.md", "")
    path = folder / "ops" / "manifest.md"
    text = path.read_text(encoding="utf-8")
    assert ROW_3 in text
    path.write_text(text.replace(ROW_3, row), encoding="utf-8")
    found = detect(folder, "session")
    assert [m for _, _, m in findings(found, "BS-MANIFEST-01")] == [
        "parked fork F4 (forks.md:3) has no manifest row naming it"
    ], found


def test_a_comment_beside_the_fork_id_leaves_it_routed(tmp_path: Path) -> None:
    """Guard: the ID shown on the page, with a comment beside it, routes the fork."""
    folder = appended(tmp_path, "applied", "ops/manifest.md", "")
    path = folder / "ops" / "manifest.md"
    text = path.read_text(encoding="utf-8").replace(
        ROW_3, "| 3 | parked fork F4<!-- x --> | forks.md |"
    )
    path.write_text(text, encoding="utf-8")
    assert "BS-MANIFEST-01" not in failing(detect(folder, "session"))


@pytest.mark.parametrize("text", ["<!--" * 30_000, "<!-- -->" + "a <!--" * 20_000])
def test_a_cell_of_unclosed_comments_is_read_in_linear_time(text: str) -> None:
    """Every table cell now loses its comments: a pattern tried from every `<!--` of a line
    with no `-->` after it rescanned the rest of the line (half a minute here)."""
    started = time.perf_counter()
    shown(text)
    assert time.perf_counter() - started < 2, "quadratic in the cell's length"


# ───────────────────────────── Destination cells ─────────────────────────────

RELEASE = "docs/features/release notes.md"


@pytest.mark.parametrize(
    ("document", "cell"),
    [
        (DEMO, f"→ {DEMO}"),
        (DEMO, f"update {DEMO}"),
        (DEMO, f"{DEMO}."),
        (DEMO, f"{DEMO}<!-- new page -->"),
        (DEMO, f"[{DEMO}]"),
        (DEMO, f"~~docs/architecture/x.md~~ {DEMO}"),
        (DEMO, f"a.md<br>and {DEMO}"),
        (DEMO, f"a.md / {DEMO}"),
        (DEMO, f"a.md \\| {DEMO}"),
        (DEMO, f"{DEMO}?plain=1"),
        (DEMO, f'"{DEMO}"'),
        (DEMO, f"({DEMO})"),
        (DEMO, f"see {DEMO} (new)"),
        (DEMO, f"docs/architecture/overview.md, then {DEMO}."),
        (RELEASE, f"{RELEASE} (new)"),
        (RELEASE, f"{RELEASE}."),
    ],
)
def test_a_destination_that_visibly_names_a_linking_document_fails_harvest(
    tmp_path: Path, document: str, cell: str
) -> None:
    status, found, _ = _harvest(_repo(tmp_path, document, cell))
    assert status == "fail", cell
    assert any(f"/{document} links into the session folder" in line for line in found), found


@pytest.mark.parametrize(
    "cell",
    [
        f"~~{DEMO}~~ docs/architecture/overview.md",  # struck out: no longer a destination
        f"docs/architecture/overview.md <!-- was {DEMO} -->",
    ],
)
def test_a_struck_or_hidden_destination_is_none(tmp_path: Path, cell: str) -> None:
    status, found, codes = _harvest(_repo(tmp_path, DEMO, cell))
    assert (status, found, codes) == ("pass", [], []), cell


def test_a_prose_word_before_a_path_is_no_unreadable_destination(tmp_path: Path) -> None:
    """Guard: `update docs/x.md` names docs/x.md; the verb is no destination of its own."""
    status, found, codes = _harvest(_repo(tmp_path, DEMO, f"update {DEMO}", link=False))
    assert (status, found, codes) == ("pass", [], []), found


def test_a_word_with_a_full_stop_that_names_no_path_is_noted(tmp_path: Path) -> None:
    status, _, codes = _harvest(_repo(tmp_path, DEMO, "TBD.", link=False))
    assert (status, codes) == ("fail", ["unreadable-destination"])


def test_crawl_and_check_agree_with_detect(tmp_path: Path) -> None:
    repo = _repo(tmp_path, DEMO, f"update {DEMO}.")
    folder = repo / "docs" / "research" / "demo-brainstorm"
    (folder / "ops" / "sync-log.md").write_text(
        f"## S1\n\n{S1}\n{S1_DONE[:40]}\n{S1_DONE[40:]}\n", encoding="utf-8"
    )
    expected = {r["rule"]: r["status"] for r in detect(folder, "move")["rules"]}
    assert expected["BS-HARVEST-01"] == "fail" and expected["BS-SYNC-01"] == "pass", expected
    query = "SELECT DISTINCT rule_id, status FROM rule_results"
    rows = checked_rows(tmp_path / "corpus", tmp_path / "out", query)
    assert {rule: status for rule, status in rows if rule in expected} == expected
    assert notes(detect(folder, "move")) == []
