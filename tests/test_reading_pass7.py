"""census.md §3.1 and §5: values and names as a page shows them, found by a hunt.

- A value the page shows as blank is empty: `Closes when:`, `Why:` or `How to apply:` holding
  only a Unicode space (U+2003, U+3000), a zero-width character, `&nbsp;`, `<br>` or a lone
  backslash passed as filled in, and so did the schema's placeholder left as it is.
- `[parked → —]`, `[parked → …]` and `[parked → {destination}]` are parked with no
  destination, as `[parked → ]` already was; so is one whose destination is a word saying
  where is not decided (`[parked → TBD]`, `none`, `n/a`, `?`; found by a hunt, 2026-12-06).
- A required value that is a word holding its place (`Closes when: TBD`, `Why: TODO`, `?`)
  is empty, as the schema's `{placeholder}` left as it is already was.
- A direction mark (LRM, RLM, ALM, an isolate), a soft hyphen, a form feed or a vertical tab
  before `## F4 …` or a field name hid the line with no note, as a zero-width space did before.
- A field name in `<u>`, `<mark>`, `<span …>` or `<code>` is read as it is in `<b>`.
- Commentary after a marker that names the other value (`[parked → x] (was open until S1)`)
  makes the marker unreadable, as `Status: stopping (was open)` is (§3.1, values are tokens).
- A token or stamp in an inline HTML emphasis tag (`Result: <b>pass</b>`, `Status:
  <strong>applied</strong>`, `Last compose: <b>2026-…</b>`) was not read, and failed its rule
  in a healthy folder: the page shows it as `**pass**`, which §3.1 reads as `pass`.

Each case edits a copy of a healthy base session and runs `census detect`; one case also
crawls and checks, which must agree.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.parse.lexical import _BLANK, _PLACEHOLDER_RE, _UNSEEN, says_nothing
from tests.conftest import checked_rows
from tests.test_entry_reading import detect, failing, findings, session
from tests.test_reading_pass6 import _replaced

CLOSES_F1 = (
    "- Closes when: a yes/no per alert class, with the list of classes that always send at once"
)
WHY_D1 = "- Why: users asked for fewer emails"
F4 = (
    "## F4 — Should digests be localised per recipient? "
    "[parked → docs/architecture/open-questions.md]"
)
F2_TWIN = "- Raised by: twin (S2)"


BLANKS = ["\u2003", "\u3000", "\u200b", "&nbsp;", "&emsp;", "&#8203;", "<br>", "\\", "…"]
# Also blank to a reader, and read as filled in until a hunt found them: an empty element, a
# link or image with no text, a filler or the blank Braille pattern, a line separator.
BLANKS += ["<b></b>", "<span> </span>", "<p></p>", "[]()", "![]()", "\u3164", "\u2800", "\u2028"]


@pytest.mark.parametrize("blank", BLANKS)
def test_a_value_the_page_shows_blank_is_empty(tmp_path: Path, blank: str) -> None:
    folder = session(tmp_path, "open", "forks.md", _replaced(CLOSES_F1, f"- Closes when: {blank}"))
    assert findings(detect(folder, "session"), "BS-FORK-01") == [
        ("forks.md", 7, "F1 has an empty 'Closes when:'")
    ]


@pytest.mark.parametrize(
    "word",
    [
        *("TBD", "TODO", "?", "**tbd**", "(TBC)", "FIXME", "To do."),
        # In words, or a person's bracketed placeholder (found by a hunt).
        *("(to be decided)", "to be filled in", "N/A", "not yet known", "pending"),
        "[condition]",
        # An unticked box: until 2026-12-07 it was a condition written (found by a hunt).
        *("[ ]", "[]"),
        # Several, or one with a question mark (until stop 67 filled in; found by a hunt).
        *("TBD?", "TBD TBD", "—?", "? ?", "tbd, tbd"),
    ],
)
def test_a_value_left_to_fill_is_empty(tmp_path: Path, word: str) -> None:
    """A word that holds the value's place (`Closes when: TBD`) is the schema's `{condition}`
    in a person's words: the value is not written (found by a hunt, 2026-12-06)."""
    folder = session(tmp_path, "open", "forks.md", _replaced(CLOSES_F1, f"- Closes when: {word}"))
    assert findings(detect(folder, "session"), "BS-FORK-01") == [
        ("forks.md", 7, "F1 has an empty 'Closes when:'")
    ]
    edit = _replaced(WHY_D1, f"- Why: {word}\n- Note: users asked for fewer emails")
    folder = session(tmp_path / "ledger", "open", "ledger.md", edit)
    assert [m for _, _, m in findings(detect(folder, "session"), "BS-LEDGER-01")] == [
        "D1 has an empty 'Why:'"
    ]


@pytest.mark.parametrize(
    "value",
    [
        *("TBD list is empty", "todo items are shown", "? marks go"),
        *("n/a answers are counted", "pending alerts drain", "[F1](forks.md) closes"),
    ],
)
def test_a_value_that_begins_with_such_a_word_is_written(tmp_path: Path, value: str) -> None:
    folder = session(tmp_path, "open", "forks.md", _replaced(CLOSES_F1, f"- Closes when: {value}"))
    assert findings(detect(folder, "session"), "BS-FORK-01") == []


def test_a_ledger_value_shown_blank_fails_ledger_01_in_detect_and_crawl(tmp_path: Path) -> None:
    edit = _replaced(WHY_D1, "- Why: &nbsp;\n- Note: users asked for fewer emails")
    folder = session(tmp_path, "open", "ledger.md", edit)
    found = detect(folder, "session")
    assert [m for _, _, m in findings(found, "BS-LEDGER-01")] == ["D1 has an empty 'Why:'"]
    rows = checked_rows(
        tmp_path / "repo",
        tmp_path / "out",
        "SELECT message FROM findings WHERE rule_id = 'BS-LEDGER-01'",
    )
    assert rows == [("D1 has an empty 'Why:'",)]


@pytest.mark.parametrize(
    ("value", "empty"),
    [
        ("{condition}", True),
        ("{ destination }", True),
        ("—", True),
        ("a {placeholder} in a sentence", False),
        ("N/A", False),
        ("- 3 -", False),
        ("`{x}` is set", False),
        ("a <b>bold</b> word", False),
        ("[the page](x.md)", False),
        ("<code>0</code>", False),
        # Quotes or brackets around nothing show nothing (found by a hunt).
        ('""', True),
        ("“ ”", True),
        ("''", True),
        ("()", True),
        ('"0"', False),
        ("(new page)", False),
    ],
)
def test_says_nothing(value: str, empty: bool) -> None:
    assert says_nothing(value) is empty


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(' \t\xa0*_`—-….\\"“”()\u200b\u2003\u3164\x0c{}ab0Ｆé'), max_size=8
    )
)
def test_says_nothing_decides_plain_text_as_it_decides_every_character(value: str) -> None:
    """The ASCII fast path drops exactly what the per-character test drops."""
    shown = "".join(c for c in value if c not in _BLANK and unicodedata.category(c) not in _UNSEEN)
    assert says_nothing(value) is (not shown or _PLACEHOLDER_RE.fullmatch(shown) is not None)


@pytest.mark.parametrize(
    "destination", ["—", "-", "…", "{destination}", "&nbsp;", "<b></b>", '""', "“”", "()"]
)
def test_a_parked_destination_that_says_nothing_is_none(tmp_path: Path, destination: str) -> None:
    heading = F4.replace("docs/architecture/open-questions.md", destination)
    folder = session(tmp_path, "open", "forks.md", _replaced(F4, heading))
    assert [m for _, _, m in findings(detect(folder, "session"), "BS-FORK-01")] == [
        "F4 is parked with no destination; write [parked → where]"
    ]


@pytest.mark.parametrize(
    "destination",
    ["TBD", "none", "n/a", "?", "(none yet)", "Unknown", "*TODO*", "tba.", "TBD?", "TBD, TBD"],
)
def test_a_parked_destination_that_names_no_place_is_none(tmp_path: Path, destination: str) -> None:
    """A word that says where is not decided (`[parked → TBD]`) routes the fork nowhere: it
    fails BS-FORK-01 as `[parked → —]` does, where it passed as a destination named TBD."""
    heading = F4.replace("docs/architecture/open-questions.md", destination)
    folder = session(tmp_path, "open", "forks.md", _replaced(F4, heading))
    assert [m for _, _, m in findings(detect(folder, "session"), "BS-FORK-01")] == [
        "F4 is parked with no destination; write [parked → where]"
    ]


@pytest.mark.parametrize("destination", ["docs/tbd.md", "TBD.md", "the roadmap", "later/"])
def test_a_parked_destination_that_names_a_place_passes(tmp_path: Path, destination: str) -> None:
    heading = F4.replace("docs/architecture/open-questions.md", destination)
    folder = session(tmp_path, "open", "forks.md", _replaced(F4, heading))
    assert findings(detect(folder, "session"), "BS-FORK-01") == []


@pytest.mark.parametrize(
    "mark", ["\u200e", "\u200f", "\u061c", "\u2066", "\u00ad", "\x0c", "\x0b", "\u202e"]
)
def test_an_invisible_character_before_a_heading_or_a_field_is_noted(
    tmp_path: Path, mark: str
) -> None:
    def edit(text: str) -> str:
        text = text.replace(F2_TWIN, f"- {mark}Raised by: twin (S9)", 1)
        return text + f"\n{mark}## F5 — Should cursors expire? [open]\n- Closes when: x\n"

    folder = session(tmp_path, "open", "forks.md", edit)
    found = detect(folder, "manifest")
    assert {"BS-FORK-01", "BS-SYNC-02"} <= failing(found), found
    written = (folder / "forks.md").read_text(encoding="utf-8").split("\n")
    heading = next(n for n, line in enumerate(written, 1) if "## F5" in line)
    assert ("forks.md", heading) in {(n["file"], n["line"]) for n in found["notes"]}


@pytest.mark.parametrize(
    "name",
    [
        "<u>Raised by:</u>",
        "<mark>Raised by:</mark>",
        '<span class="field">Raised by:</span>',
        "<code>Raised by</code>:",
        "<U>Raised by</U>:",
    ],
)
def test_a_field_name_in_an_inline_tag_is_read(tmp_path: Path, name: str) -> None:
    edit = _replaced(F2_TWIN, f"- {name} twin (S9)")
    found = detect(session(tmp_path, "open", "forks.md", edit), "session")
    assert findings(found, "BS-SYNC-02") == [
        ("forks.md", 12, "F2 is raised by twin (S9), but S9 is not in ops/sync-log.md")
    ], found


@pytest.mark.parametrize(
    "heading",
    [
        F4 + " (was open until S1)",
        F4 + " — Open?",
        "## F4 — Should digests be localised per recipient? [open] (to be parked later)",
    ],
)
def test_commentary_after_the_marker_that_names_the_other_value_fails(
    tmp_path: Path, heading: str
) -> None:
    found = detect(session(tmp_path, "open", "forks.md", _replaced(F4, heading)), "session")
    messages = [m for _, _, m in findings(found, "BS-FORK-01")]
    assert any("the commentary after the marker names" in m for m in messages), messages


@pytest.mark.parametrize(
    "heading",
    [
        "## F4 — Should digests be localised per recipient? [parked → open]",
        "## F4 — Should digests be localised per recipient? [parked → **open** again]",
        "## F4 — Should digests be localised per recipient? [parked → back to open]",
        F4 + " [reopened]",
        F4 + " [un-parked]",
    ],
)
def test_a_parked_marker_that_says_the_fork_is_open_again_fails(
    tmp_path: Path, heading: str
) -> None:
    """A parked fork whose destination or a bracket after it says it is open again says two
    things, as `Status: open → stopping` does (§3.1): it passed the manifest gate parked, and
    its lifetime closed at the park (found by a hunt)."""
    found = detect(session(tmp_path, "open", "forks.md", _replaced(F4, heading)), "manifest")
    assert {"BS-FORK-01", "BS-FORK-03"} <= failing(found), found
    assert ("forks.md", 15, "contradicting-markers") in {
        (n["file"], n["line"], n["code"]) for n in found["notes"]
    }, found["notes"]


def test_a_status_line_saying_reopened_under_a_parked_marker_fails(tmp_path: Path) -> None:
    edit = _replaced(F4, F4 + "\n- Status: reopened in S4")
    found = detect(session(tmp_path, "open", "forks.md", edit), "manifest")
    assert {"BS-FORK-01", "BS-FORK-03"} <= failing(found), found


@pytest.mark.parametrize(
    "heading",
    [
        F4 + " (see open-questions.md)",
        F4 + " (reopened once)",
        "## F4 — Should digests be localised per recipient? [open] (raised T4)",
    ],
)
def test_commentary_that_names_no_other_value_is_commentary(tmp_path: Path, heading: str) -> None:
    found = detect(session(tmp_path, "open", "forks.md", _replaced(F4, heading)), "session")
    assert "BS-FORK-01" not in failing(found), found


# ──────────────────────────── fields and entries in tables ────────────────────────────

FIELD_TABLE = "\n| Field | Value |\n|---|---|\n{rows}\n"


def test_fields_written_as_table_rows_are_noted_and_fail_their_rules(tmp_path: Path) -> None:
    """`| Resolves | F2 |` under `| Field | Value |` is the field written as a table row: it was
    dropped with no note, so a resolved fork still listed, a Reverses naming no entry and a
    twin's raise citing no sync all passed. `Reversed by D9` in a cell is inside the entry."""

    def forks(text: str) -> str:
        return text.replace(F2_TWIN, FIELD_TABLE.format(rows="| Raised by | twin (S9) |"), 1)

    def ledger(text: str) -> str:
        title, rest = text.split("\n## D2", 1)
        rows = "| Resolves | F1 |\n| Reverses | D9 |\n| Note | Reversed by D8 |"
        return title + FIELD_TABLE.format(rows=rows) + "\n## D2" + rest

    folder = session(tmp_path, "open", "forks.md", forks)
    (folder / "ledger.md").write_text(ledger((folder / "ledger.md").read_text()))
    found = detect(folder, "session")
    codes = {(n["file"], n["code"]) for n in found["notes"]}
    assert codes >= {("forks.md", "unread-field"), ("ledger.md", "unread-field")}, codes
    assert {"BS-SYNC-02", "BS-FORK-02", "BS-LEDGER-01"} <= failing(found)
    messages = [m for _, _, m in findings(found, "BS-LEDGER-01")]
    assert "D1 is reversed by D8, which is not a ledger entry" in messages, messages


@pytest.mark.parametrize(
    ("rows", "noted"),
    [
        ("| F9 | Should cursors expire? | open |", True),
        ("| F9 | Should cursors expire? | parked → docs/later.md |", True),
        ("| F1 | Do security alerts ever ride in a digest? | open |", False),  # a summary
        ("| F9 | see D1 | 3 days |", False),  # no marker, no field named in the header
        ("| F9 | Should cursors expire? | opened last week |", False),  # no marker as a word
    ],
)
def test_a_fork_written_only_as_a_table_row_is_noted(
    tmp_path: Path, rows: str, noted: bool
) -> None:
    """A fork whose only writing is a status table's row was dropped with no note, so an open
    fork passed BS-FORK-03 at the manifest gate; a row summarising a fork with a heading is
    no entry."""
    table = f"\n| ID | Question | Status |\n|---|---|---|\n{rows}\n"
    folder = session(tmp_path, "open", "forks.md", lambda text: text + table)
    found = detect(folder, "session")
    unread = [n for n in found["notes"] if n["code"] == "entry-not-heading"]
    assert bool(unread) is noted, found["notes"]
    assert ("BS-FORK-01" in failing(found)) is noted


# ──────────────────────────── the ops/ layer ────────────────────────────

OPEN_QUESTIONS = "docs/architecture/open-questions.md"


@pytest.mark.parametrize(
    "cell",
    [
        f"<code>{OPEN_QUESTIONS}</code>",
        f"<b>{OPEN_QUESTIONS}</b>",
        f'<span class="path">{OPEN_QUESTIONS}</span>',
        f"<kbd>{OPEN_QUESTIONS}</kbd>",
        f'<a href="{OPEN_QUESTIONS}">the open questions</a>',
        f"{OPEN_QUESTIONS}<sup>1</sup>",
        f"{OPEN_QUESTIONS}\u200b",
        f"\u2060{OPEN_QUESTIONS}",
    ],
)
def test_a_destination_in_inline_html_or_beside_an_invisible_character_is_its_path(
    cell: str,
) -> None:
    """The tags and the invisible character stayed in the path (`code>docs/…</code`), which
    named no file, so the destination linking into the session went unread and BS-HARVEST-01
    passed with no note (found by a hunt)."""
    from pipeline.parse.manifest import destinations

    assert [path for _, path in destinations(cell)] == [OPEN_QUESTIONS]


def test_a_struck_turn_time_is_no_time_of_the_turn() -> None:
    """`### T2 · ~~09:58Z~~ 11:00Z` was read as 09:58, before the compose, so a stale compose
    passed BS-COMPOSE-02 (found by a hunt); the page shows 11:00."""
    from pipeline.parse.capture import parse_capture
    from pipeline.parse.lexical import decode
    from pipeline.parse.records import Records

    text = (
        "# Capture\n\n### T1 · 2026-07-09T09:51:30Z\nuser\n\n"
        "### T2 · ~~2026-07-09T09:58:00Z~~ 2026-07-09T11:00:00Z\ntwin\n\n"
        "### T3 · <!-- 2026-07-09T09:59:00Z --> 2026-07-09T11:05:00Z\ntwin\n"
    )
    rec = Records("sid")
    parse_capture(decode(text.encode(), "ops/capture.md", rec), rec)
    assert [(t["turn_id"], t["at_raw"]) for t in rec.of("turns")] == [
        ("T1", "2026-07-09T09:51:30Z"),
        ("T2", "2026-07-09T11:00:00Z"),
        ("T3", "2026-07-09T11:05:00Z"),
    ]


# ──────────────────────────── the aspect map ────────────────────────────

STATE_HEAD = "# State\n- Status: open\n- Posture: p\n- Started: 2026-07-06\n- Sitting: single\n"


def _aspects(rows: str) -> dict[str, object]:
    from pipeline.parse.lexical import decode
    from pipeline.parse.records import Records
    from pipeline.parse.state import parse_state

    rec = Records("sid")
    parse_state(decode((STATE_HEAD + rows).encode(), "state.md", rec), rec)
    return {
        "refs": [(r["aspect"], r["ref"], r["kind"]) for r in rec.of("aspect_refs")],
        "issues": [(i["line"], i["code"], i["rule_id"]) for i in rec.of("parse_issues")],
    }


def test_a_sub_bullets_refs_are_the_aspects_as_a_continuation_lines_are() -> None:
    """§3.1: a sub-bullet is part of the item's value. `  - email preview → none yet` under an
    aspect with refs was dropped, so an open gap passed BS-ASPECT-02 (and `→ F99` there passed
    BS-ASPECT-01); an arrow in the sub-bullet alone gave "no refs" (found by a hunt)."""
    found = _aspects("\n## Aspect map\n- sharing — a cart → F1\n  - email preview → none yet\n")
    assert found["refs"] == [("sharing", "F1", "fork"), ("sharing", "none yet", "none_yet")]
    found = _aspects("\n## Aspect map\n- sharing — a cart\n  - → none yet\n")
    assert found["refs"] == [("sharing", "none yet", "none_yet")]


@pytest.mark.parametrize(
    "written",
    [
        "- Aspect map:\n  - persistence — how long → F1\n  - risks — failure modes → F99\n",
        "- **Aspect map**\n  - persistence — how long → F1\n  - risks — failure modes → F99\n",
        "- ## Aspect map\n  - persistence — how long → F1\n  - risks — failure modes → F99\n",
        "Aspect map:\npersistence — how long → F1\nrisks — failure modes → F99\n",
    ],
)
def test_an_aspect_map_written_as_a_list_item_or_lines_is_noted(written: str) -> None:
    """The map written as a list item with its aspects as sub-bullets, or as plain lines under
    `Aspect map:`, was dropped with no note: BS-ASPECT-01 passed on an aspect citing F99, and
    the session read clean (found by a hunt)."""
    found = _aspects("\n" + written)
    assert found["refs"] == []
    issues = found["issues"]
    assert {(line, code) for line, code, _ in issues} == {
        (8, "aspect-outside-map"),
        (9, "aspect-outside-map"),
    }, issues
    assert "BS-ASPECT-01" in {rule for *_, rule in issues}


APPLIED = {
    "ops/manifest.md": [("- Result: pass", "- Result: {}"), ("Status: applied", "Status: {}")],
    "state.md": [("- Last compose: 2026-07-10T16:05Z", "- Last compose: {}")],
}


@pytest.mark.parametrize("tag", ["b", "strong", "em", "i", "code", "span"])
def test_a_value_in_an_emphasis_tag_is_read_as_its_token(tmp_path: Path, tag: str) -> None:
    """Each value of the applied base wrapped in `<tag>…</tag>`: the folder stays clean at the
    move gate, in detect and in crawl and check."""

    def wrapped(file: str) -> Callable[[str], str]:
        def edit(text: str) -> str:
            for line, template in APPLIED[file]:
                value = line.rpartition(" ")[2]
                text = text.replace(line, template.format(f"<{tag}>{value}</{tag}>"), 1)
            return text

        return edit

    folder = session(tmp_path, "applied", "ops/manifest.md", wrapped("ops/manifest.md"))
    state = folder / "state.md"
    state.write_text(wrapped("state.md")(state.read_text(encoding="utf-8")), encoding="utf-8")
    assert f"<{tag}>2026-07-10T16:05Z</{tag}>" in state.read_text(encoding="utf-8")
    found = detect(folder, "move")
    assert found["result"] == "clean", found
    rows = checked_rows(
        tmp_path / "repo", tmp_path / "out", "SELECT count(*) FROM findings WHERE status = 'fail'"
    )
    assert rows == [(0,)]


@pytest.mark.parametrize(
    ("value", "rule"),
    [
        ("<del>pass</del>", "BS-USELESS-01"),
        ("<s>pass</s> fail", "BS-USELESS-01"),
        ("<b>pass</b> | fail", "BS-USELESS-01"),
        ("<b>Pass</b>", "BS-USELESS-01"),
    ],
)
def test_a_tagged_value_that_is_no_token_still_fails(tmp_path: Path, value: str, rule: str) -> None:
    edit = _replaced("- Result: pass", f"- Result: {value}")
    found = detect(session(tmp_path, "applied", "ops/manifest.md", edit), "move")
    assert rule in failing(found), found


@pytest.mark.parametrize("word", ["—", "TBD"])
def test_a_value_left_to_fill_takes_the_code_block_below_in_forks_and_ledger_alike(
    tmp_path: Path, word: str
) -> None:
    """A field left to fill with a fenced block under it holds that block (`code_value`):
    forks.md and ledger.md decide it with one definition (ledger once used says_nothing)."""
    fence = "\n  ```\n  users asked for fewer emails\n  ```"
    edit = _replaced(CLOSES_F1, f"- Closes when: {word}{fence}")
    folder = session(tmp_path, "open", "forks.md", edit)
    assert findings(detect(folder, "session"), "BS-FORK-01") == []
    folder = session(
        tmp_path / "ledger", "open", "ledger.md", _replaced(WHY_D1, f"- Why: {word}{fence}")
    )
    assert findings(detect(folder, "session"), "BS-LEDGER-01") == []


@pytest.mark.parametrize(
    "destination",
    ["docs/x.md | open", "docs/x.md|open", "docs/x.md / open", "docs/x.md or open", "x, **open**"],
)
def test_a_parked_destination_that_offers_open_fails(tmp_path: Path, destination: str) -> None:
    """`[parked → docs/x.md | open]` is the schema's two values offered side by side, left
    as they are: it passed as parked to a place named `docs/x.md | open`, while `[parked →
    x] | open` failed (found by a hunt)."""
    heading = F4.replace("docs/architecture/open-questions.md", destination)
    found = detect(session(tmp_path, "open", "forks.md", _replaced(F4, heading)), "session")
    messages = [m for _, _, m in findings(found, "BS-FORK-01")]
    assert any("open beside parked" in m for m in messages), messages
    assert "BS-FORK-01" in failing(found)


@pytest.mark.parametrize(
    "destination", ["docs/open/x.md", "docs/open questions.md", "open-questions.md", "x | openings"]
)
def test_a_parked_destination_with_open_in_its_name_passes(
    tmp_path: Path, destination: str
) -> None:
    heading = F4.replace("docs/architecture/open-questions.md", destination)
    found = detect(session(tmp_path, "open", "forks.md", _replaced(F4, heading)), "session")
    assert findings(found, "BS-FORK-01") == [], found
