"""census.md §3.1 at reader level: each variant the issue names and each principle, read
in both directions — the realistic spelling is read, the broken form still is not (and
becomes a parse issue naming the rule it fails where a line could not be read).

Every test reads a small Markdown text written here through `decode` and one reader,
as the crawl does; fixtures/parse/ holds the whole-file cases of test_parse.py.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from pipeline.parse import READER_VERSION
from pipeline.parse.capture import parse_capture
from pipeline.parse.forks import parse_forks
from pipeline.parse.ledger import parse_ledger
from pipeline.parse.lexical import decode
from pipeline.parse.manifest import destinations, parse_manifest
from pipeline.parse.records import Records
from pipeline.parse.session import SessionInput, parse_session
from pipeline.parse.state import parse_state
from pipeline.parse.synclog import parse_sync_log
from pipeline.parse.thesis import parse_thesis

Reader = Callable[[list[str], Records], None]
READERS: dict[str, tuple[Reader, str]] = {
    "state": (parse_state, "state.md"),
    "thesis": (parse_thesis, "thesis.md"),
    "forks": (parse_forks, "forks.md"),
    "ledger": (parse_ledger, "ledger.md"),
    "capture": (parse_capture, "ops/capture.md"),
    "sync-log": (parse_sync_log, "ops/sync-log.md"),
    "manifest": (parse_manifest, "ops/manifest.md"),
}
AT = datetime(2026, 7, 8, 15, 0, tzinfo=UTC)


def read(kind: str, text: str) -> Records:
    reader, name = READERS[kind]
    rec = Records("sid")
    reader(decode(text.encode("utf-8"), name, rec), rec)
    return rec


def pick(rows: list[dict[str, Any]], *columns: str) -> list[tuple[Any, ...]]:
    return [tuple(row[c] for c in columns) for row in rows]


def issues(rec: Records) -> list[tuple[int | None, str, str | None]]:
    return pick(rec.of("parse_issues"), "line", "code", "rule_id")


def forks(text: str, *columns: str) -> list[tuple[Any, ...]]:
    return pick(read("forks", text).of("forks"), *columns)


FORK = "- Raised by: user\n- Closes when: a pick is made\n"


# ───────────────────────────── structure: headings ─────────────────────────────


@pytest.mark.parametrize(
    "heading",
    [
        "## F1 — Title [open]",
        "##  F1 — Title [open]",  # two spaces after the #s
        "##\tF1 — Title [open]",  # a tab
        "   ## F1 — Title [open]",  # indented three spaces
        "## F1 — Title [open] ##",  # a closing run of #s
        "## F1 — Title [open] #####   ",
    ],
)
def test_an_atx_heading_is_read_however_it_is_spaced(heading: str) -> None:
    got = forks(f"# Forks\n\n{heading}\n{FORK}", "fork_id", "title", "marker", "closes_when")
    assert got == [("F1", "Title", "open", "a pick is made")]


@pytest.mark.parametrize(
    "heading",
    [
        "##F1 — Title [open]",  # no space after the #s: a paragraph
        "    ## F1 — Title [open]",  # four spaces: indented code
        "####### F1 — Title [open]",  # seven #s: a paragraph
    ],
)
def test_what_is_no_heading_is_no_fork(heading: str) -> None:
    assert forks(f"# Forks\n\n{heading}\n{FORK}", "fork_id") == []


@pytest.mark.parametrize(
    ("kind", "text", "rule"),
    [
        ("forks", f"# Forks\n\n### F1 — Title [open]\n{FORK}", "BS-FORK-01"),
        ("forks", f"# Forks\n\n# F1 — Title [open]\n{FORK}", "BS-FORK-01"),
        ("ledger", "# Ledger\n\n### D1 — Title\n- Decision: a\n", "BS-LEDGER-01"),
    ],
)
def test_an_entry_heading_at_another_level_is_an_entry_and_fails_its_rule(
    kind: str, text: str, rule: str
) -> None:
    """Meant as an entry, at the wrong level: counted (so `[open]` still counts as open at
    the stop) and never silently dropped."""
    rec = read(kind, text)
    table, column = ("forks", "fork_id") if kind == "forks" else ("ledger", "decision_id")
    assert [r[column] for r in rec.of(table)] == [("F1" if kind == "forks" else "D1")]
    assert issues(rec) == [(3, "entry-heading-level", rule)]


def test_a_heading_underlined_with_dashes_is_a_level_2_heading() -> None:
    assert forks(f"F2 — Setext [open]\n---\n{FORK}", "line", "fork_id") == [(1, "F2")]


def test_turn_heading_with_any_separator_before_its_timestamp() -> None:
    text = "\n".join(
        [
            "### T1 · 2026-07-08T15:00Z",
            "### T2 — 2026-07-08T15:00Z",  # an em dash: the issue's missed stale compose
            "### T3 - 2026-07-08T15:00Z",
            "### T4 | 2026-07-08T15:00Z",
            "### T5: 2026-07-08T15:00Z",
            "### T6 (2026-07-08T16:00+01:00, after lunch)",
            "#### T7 · 2026-07-08T15:00Z",  # any level
            "### **T8** · 2026-07-08T15:00Z",
        ]
    )
    rec = read("capture", text)
    assert pick(rec.of("turns"), "line", "turn_id", "at") == [(n, f"T{n}", AT) for n in range(1, 9)]
    assert issues(rec) == []


def test_turn_heading_without_a_timestamp_fails_compose_freshness() -> None:
    rec = read("capture", "### T1 · 2026-07-08T15:00Z\n### T2 · after lunch\n### T — x\n")
    assert pick(rec.of("turns"), "turn_id", "at") == [("T1", AT), ("T2", None)]
    assert issues(rec) == [
        (2, "bad-turn-heading", "BS-COMPOSE-02"),
        (3, "bad-turn-heading", "BS-COMPOSE-02"),
    ]


@pytest.mark.parametrize(
    "stamp",
    [
        "2026-07-08T15:00",
        "2026-07-08",
        "2026-02-30T15:00Z",
        "2026-07-08T25:00Z",
        "2026-07-08T15:00-15:40",  # a range of times, not an offset no zone has
    ],
)
def test_turn_timestamp_that_is_no_utc_instant_fails_compose_freshness(stamp: str) -> None:
    rec = read("capture", f"### T1 · {stamp}\n")
    assert pick(rec.of("turns"), "turn_id", "at") in ([("T1", None)], [])
    assert [(code, rule) for _, code, rule in issues(rec)] in (
        [("bad-timestamp", "BS-COMPOSE-02")],
        [("bad-turn-heading", "BS-COMPOSE-02")],
    )


def test_words_that_start_with_t_are_no_turns() -> None:
    rec = read("capture", "# Capture\n### Turn notes\n### T-shirt sizes\n### Tuesday\n")
    assert rec.of("turns") == [] and issues(rec) == []


# ───────────────────────────── structure: list items ─────────────────────────────


@pytest.mark.parametrize("marker", ["-", "*", "+", "1.", "1)"])
def test_fields_as_any_kind_of_list_item(marker: str) -> None:
    got = forks(
        f"## F1 — T [open]\n{marker} Raised by: probe\n{marker} Closes when: done\n",
        "raised_by_kind",
        "closes_when",
    )
    assert got == [("probe", "done")]


def test_an_aspect_sub_bullet_is_part_of_the_aspect_not_an_aspect() -> None:
    rec = read(
        "state",
        "## Aspect map\n- timing — when → F1\n  - note: the clock question\n- risks → D2\n",
    )
    assert pick(rec.of("aspects"), "line", "name", "ref_count") == [
        (2, "timing", 1),
        (4, "risks", 1),
    ]


def test_an_aspect_without_an_arrow_still_has_no_refs() -> None:
    rec = read("state", "## Aspect map\n- timing — when\n  - F1 covers it\n")
    assert pick(rec.of("aspects"), "name", "has_arrow", "ref_count") == [("timing", False, 0)]


def test_aspect_refs_held_in_sub_bullets_under_an_empty_arrow() -> None:
    rec = read("state", "## Aspect map\n- timing — when →\n  - F1\n  - D3\n")
    assert pick(rec.of("aspect_refs"), "ref", "kind") == [("F1", "fork"), ("D3", "decision")]


@pytest.mark.parametrize(
    "closes_when",
    [
        "- Closes when:\n  a pick between two clocks",  # text on the next, indented line
        "- Closes when:\n  - a pick between two clocks",  # in a sub-bullet
        "- Closes when: a pick between\n  two clocks",
        # In a code block inside the item: it read as empty and BS-FORK-01 failed a fork that
        # has its condition (found by a hunt).
        "- Closes when:\n  ```\n  a pick between two clocks\n  ```",
        "- Closes when:\n  ~~~text\n  a pick between\n\n  two clocks\n  ~~~",
        "- Closes when:\n\n      a pick between two clocks",
    ],
)
def test_closes_when_with_its_text_below_is_not_empty(closes_when: str) -> None:
    got = forks(f"## F1 — T [open]\n- Raised by: user\n{closes_when}\n", "closes_when")
    assert got[0][0] and "two clocks" in got[0][0]


@pytest.mark.parametrize("field", ["Decision", "Why", "How to apply"])
def test_a_ledger_text_field_in_a_code_block_under_its_item_is_not_empty(field: str) -> None:
    body = {"Decision": "d", "Why": "w", "How to apply": "h"}
    body[field] = "\n  ```\n  the `urgency` column gates it\n  ```"
    text = "## D1 — T\n" + "".join(f"- {name}: {value}\n" for name, value in body.items())
    key = field.lower().replace(" ", "_")
    assert pick(read("ledger", text).of("ledger"), key) == [("the `urgency` column gates it",)]


def test_a_code_block_after_an_item_is_not_its_value() -> None:
    got = forks(
        "## F1 — T [open]\n- Raised by: user\n- Closes when:\n\n```\nx\n```\n", "closes_when"
    )
    assert got == [("",)]


# A field that ends its paragraph or item with the fence right below it at the margin: the
# fence ends the paragraph (CommonMark), but the page shows the code under the field's name.
# It read as empty, and BS-LEDGER-01 or BS-FORK-01 failed an entry that has its text (found
# by a hunt).
@pytest.mark.parametrize("lead", ["", "- "])
@pytest.mark.parametrize("field", ["Decision", "Why", "How to apply"])
def test_a_ledger_field_over_a_fence_at_the_margin_is_not_empty(lead: str, field: str) -> None:
    body = {"Decision": "d", "Why": "w", "How to apply": "h"}
    body[field] = "\n```\nthe `urgency` column gates it\n```"
    lines = [f"{name}: {value}" for name, value in body.items()]
    text = "## D1 — T\n\n" + "\n\n".join(f"{lead}{line}" for line in lines) + "\n"
    key = field.lower().replace(" ", "_")
    assert pick(read("ledger", text).of("ledger"), key) == [("the `urgency` column gates it",)]


def test_a_closes_when_over_a_fence_at_the_margin_is_not_empty() -> None:
    got = forks("## F1 — T [open]\n- Raised by: user\n\nCloses when:\n~~~\nx\n~~~\n", "closes_when")
    assert got == [("x",)]
    got = forks("## F1 — T [open]\n- Raised by: user\n- Closes when:\n```\nx\n```\n", "closes_when")
    assert got == [("x",)]


def test_a_fence_under_a_paragraph_that_goes_on_is_not_a_field_value() -> None:
    got = forks(
        "## F1 — T [open]\n- Raised by: user\n\nCloses when:\nlater\n```\nx\n```\n", "closes_when"
    )
    assert got == [("later",)]


# A backslash ending a line is a hard line break (CommonMark): the page shows the value on
# the next line, with no backslash. It was read into the value ('\\ twin (S2)', an unknown
# raiser; found by a hunt).
@pytest.mark.parametrize(
    "raised",
    [
        "- Raised by:\\\n  twin (S2)",
        "- Raised by: twin\\\n  (S2)",
        "\nRaised by:\\\ntwin (S2)\n",
        "\n**Raised by:**\\\ntwin (S2)\n",
        # The name alone before the break, no colon: read as '\\' (an unknown raiser, a note
        # that failed nothing) or not at all, so BS-SYNC-02 passed an S# that is no sync.
        "- **Raised by**\\\n  twin (S2)",
        "- Raised by \\\n  twin (S2)",
    ],
)
def test_a_hard_line_break_after_a_field_is_no_part_of_its_value(raised: str) -> None:
    got = forks(f"## F1 — T [open]\n- Closes when: x\n{raised}\n", "raised_by", "raised_by_sync")
    assert got == [("twin (S2)", "S2")]


def test_a_backslash_that_breaks_no_line_stays() -> None:
    got = forks("## F1 — T [open]\n- Raised by: user\n- Closes when: a \\\\\n  b\n", "closes_when")
    assert got == [("a \\\\ b",)]  # an escaped backslash, then a soft break


def test_a_lazy_line_under_an_item_belongs_to_it_not_a_field_of_its_own() -> None:
    got = forks("## F1 — T [open]\n- Raised by: user\nCloses when: done\n", "closes_when")
    assert got == [(None,)]
    got = forks("## F1 — T [open]\n- Raised by: user\n\nCloses when: done\n", "closes_when")
    assert got == [("done",)]  # after a blank line: a plain line of its own


def test_why_followed_by_sub_bullets_has_text_and_an_empty_why_has_none() -> None:
    rec = read(
        "ledger",
        "## D1 — x\n- Decision: a\n- Why:\n  - users asked\n  - support agreed\n"
        "- How to apply: b\n## D2 — y\n- Decision: a\n- Why:\n- How to apply: b\n",
    )
    assert pick(rec.of("ledger"), "decision_id", "why") == [
        ("D1", "users asked support agreed"),
        ("D2", ""),
    ]


# ───────────────────────────── structure: code blocks ─────────────────────────────


@pytest.mark.parametrize("fence", ["```", "~~~", "```markdown", "````"])
def test_lines_in_a_fenced_block_are_never_entries_fields_or_turns(fence: str) -> None:
    close = fence.split("m")[0]
    example = f"{fence}\n## F9 — example [open]\n{FORK}{close}\n"
    text = f"# Forks\nExample:\n{example}## F1 — real [open]\n{FORK}"
    assert forks(text, "fork_id") == [("F1",)]
    capture = read("capture", f"{fence}\n### T9 · 2026-07-09T15:00Z\n{close}\n")
    assert capture.of("turns") == []
    state = read(
        "state", f"{fence}\n- Status: open | stopping | harvested\n{close}\n- Status: open\n"
    )
    assert state.snapshot["status"] == "open" and issues(state) == []


def test_an_unclosed_fence_runs_to_the_end() -> None:
    assert forks(f"```\n## F1 — T [open]\n{FORK}", "fork_id") == []


def test_lines_in_an_indented_code_block_are_never_turns() -> None:
    rec = read("capture", "### T1 · 2026-07-08T15:00Z\n\n    ### T2 · 2026-07-08T16:30Z\n")
    assert pick(rec.of("turns"), "turn_id") == [("T1",)]


# ───────────────────────────── structure: tables ─────────────────────────────

MANIFEST = "Round: 1\nStatus: proposed\n\n{table}\n"
HEADER = "| # | What | Source | Destination | Action |"
ROW = "| 1 | F4 | forks.md | docs/a.md | append |"


@pytest.mark.parametrize(
    "table",
    [
        f"{HEADER}\n|---|---|---|---|---|\n{ROW}",
        f"{HEADER}\n|:-:|:--|--:|---|---|\n{ROW}",  # alignment colons
        # Without outer pipes (the header keeps one: a line starting `# ` is a heading).
        f"| # | What | Source | Destination | Action\n--|---|---|---|---\n{ROW.strip('| ')}",
        f"| **#** | **What** | Source | DESTINATION | action |\n|---|---|---|---|---|\n{ROW}",
    ],
)
def test_a_table_with_alignment_colons_or_without_outer_pipes_is_read(table: str) -> None:
    rec = read("manifest", MANIFEST.format(table=table))
    assert rec.of("manifests")[0]["has_table"] is True
    assert pick(rec.of("manifest_rows"), "line", "what", "destination_path") == [
        (6, "F4", "docs/a.md")
    ]


def test_pipe_lines_without_a_delimiter_row_are_no_table() -> None:
    rec = read(
        "manifest",
        MANIFEST.format(table=f"{HEADER}\n{ROW}"),
    )
    assert rec.of("manifests")[0]["has_table"] is False and rec.of("manifest_rows") == []


def test_an_escaped_pipe_stays_in_its_cell() -> None:
    table = f"{HEADER}\n|---|---|---|---|---|\n| 1 | a \\| b | s | d.md | x |"
    rec = read("manifest", MANIFEST.format(table=table))
    assert pick(rec.of("manifest_rows"), "what") == [("a | b",)]


# ───────────────────────────── names are lenient ─────────────────────────────


@pytest.mark.parametrize(
    "line",
    [
        "- Status: stopping",
        "- **Status:** stopping",
        "- **Status**: stopping",
        "- _Status:_ stopping",
        "- status: stopping",
        "- STATUS: stopping",
        "Status: stopping",  # a plain line of its own
    ],
)
def test_field_names_are_lenient(line: str) -> None:
    rec = read("state", f"# State\n{line}\n")
    assert (rec.snapshot["status"], rec.snapshot["status_line"]) == ("stopping", 2)


def test_closes_when_and_raised_by_with_emphasised_names() -> None:
    got = forks(
        "## F1 — T [open]\n- **Raised by:** twin (S9)\n- **Closes when**: done\n",
        "raised_by_kind",
        "raised_by_sync",
        "closes_when",
    )
    assert got == [("twin", "S9", "done")]


def test_thesis_stamp_and_section_headings_are_lenient() -> None:
    rec = read(
        "thesis",
        "# T\n_Current as of:_ 2026-07-08T15:00Z\n"
        "## Claim:\n## ARGUMENT (short)\n## What changed since S3\n",
    )
    snap = rec.snapshot
    assert snap["thesis_stamp"] == AT
    assert snap["thesis_has_claim"] and snap["thesis_has_argument"]
    assert snap["thesis_has_what_changed"]


def test_a_section_name_with_more_space_between_its_words_is_the_name() -> None:
    rec = read("state", "## Aspect  map\n- a — b → F2\n")
    assert pick(rec.of("aspect_refs"), "ref") == [("F2",)]
    assert read("thesis", "# T\n\n## What\tchanged\nx\n").snapshot["thesis_has_what_changed"]


def test_a_no_break_space_around_a_value_is_a_space() -> None:
    rec = read("state", "- Status:\xa0stopping\xa0\n- **Sitting:**\xa0single\n")
    assert (rec.snapshot["status"], rec.snapshot["sitting"]) == ("stopping", "single")
    assert issues(rec) == []


def test_a_longer_word_is_not_the_section_name() -> None:
    rec = read("thesis", "# T\n## Claims\n## Argumentation\n")
    assert not rec.snapshot["thesis_has_claim"] and not rec.snapshot["thesis_has_argument"]


def test_aspect_map_heading_with_trailing_text() -> None:
    rec = read("state", "## Aspect map (derived from basis)\n- timing — when → F1\n")
    assert pick(rec.of("aspects"), "name") == [("timing",)]
    assert read("state", "## Aspect mapping\n- timing — when → F1\n").of("aspects") == []


@pytest.mark.parametrize(
    "heading", ["## Aspects", "**Aspect map**", "## Aspect mapping", "## Coverage", ""]
)
def test_aspect_bullets_with_no_map_fail_closed(heading: str) -> None:
    """Bullets written as aspects (name, dash, arrow) in a state.md with no aspect map are
    not read as aspects: without an issue BS-ASPECT-01 would pass on no aspects. Beside a
    map they are notes (fixtures/parse/state/never.md)."""
    text = f"- Status: open\n{heading}\n- timing — when it sends → F1\n- copy — wording\n"
    rec = read("state", text)
    assert rec.of("aspects") == []
    assert issues(rec) == [
        (3, "aspect-outside-map", "BS-ASPECT-01"),
        (3, "aspect-outside-map", "BS-ASPECT-02"),
    ]


def test_a_level_one_aspect_map_is_the_map() -> None:
    rec = read("state", "# State\n- Status: open\n# Aspect map\n- timing — when → F1\n")
    assert pick(rec.of("aspects"), "name", "ref_count") == [("timing", 1)]
    assert issues(rec) == []


def test_bullets_with_arrows_that_are_no_aspects_are_left_alone() -> None:
    """A field's value or a bullet without a name and dash is no aspect (no issue)."""
    text = "- Status: open\n- Posture: probing → sync layer\n## Notes\n- moved → F2\n"
    rec = read("state", text)
    assert issues(rec) == []


# ───────────────────────────── values are tokens ─────────────────────────────


@pytest.mark.parametrize(
    ("value", "status"),
    [
        ("open", "open"),
        ("**open**", "open"),
        ("open (since T3)", "open"),
        ("open | stopping | harvested", "open | stopping | harvested"),  # a template
        ("open → stopping", "open → stopping"),
        ("open → Stopping", "open → Stopping"),
        ("Open", "Open"),  # tokens stay as the schema spells them
    ],
)
def test_status_is_a_token_and_commentary_after_it_is_allowed(value: str, status: str) -> None:
    assert read("state", f"- Status: {value}\n").snapshot["status"] == status


@pytest.mark.parametrize(
    ("value", "result"),
    [
        ("pass", "pass"),
        ("**pass**", "pass"),
        ("pass (cold reader answered all five)", "pass"),
        ("pass | fail", "pass | fail"),
        # Another value named in any case is named: the value itself must be spelled as the
        # schema spells it, so neither spelling reads as a pass.
        ("pass — FAIL", "pass — FAIL"),
        ("pass (Fail on the second reader)", "pass (Fail on the second reader)"),
        ("pass (fail-safe paths read too)", "pass"),
        ("fail", "fail"),
    ],
)
def test_uselessness_result_is_a_token(value: str, result: str) -> None:
    rec = read("manifest", f"Round: 1\nStatus: applied\n## Uselessness test\n- Result: {value}\n")
    assert rec.of("manifests")[0]["useless_result"] == result


@pytest.mark.parametrize(
    ("marker", "read_as"),
    [
        ("[open]", ("open", None)),
        ("[open] (raised T4)", ("open", None)),
        ("**[open]**", ("open", None)),
        ("[parked → docs/later.md]", ("parked", "docs/later.md")),
        ("[parked -> [later](docs/later.md)]", ("parked", "[later](docs/later.md)")),
        ("[open | parked → x]", (None, None)),  # a template
        ("[Open]", (None, None)),
    ],
)
def test_fork_markers_are_tokens(marker: str, read_as: tuple[Any, Any]) -> None:
    got = forks(f"## F1 — Title [draft] {marker}\n{FORK}", "marker", "destination")
    assert got == [read_as]


@pytest.mark.parametrize(
    ("value", "kind", "sync"),
    [
        ("twin (S9)", "twin", "S9"),
        ("Twin (S9)", "twin", "S9"),
        ("TWIN(S9)", "twin", "S9"),
        ("twin (S9, T14)", "twin", "S9"),
        ("user", "user", None),
        ("user (in T3)", "user", None),
    ],
)
def test_raised_by_reads_twin_in_any_case_and_its_sync_as_a_word(
    value: str, kind: str, sync: str | None
) -> None:
    rec = read("forks", f"## F1 — T [open]\n- Raised by: {value}\n- Closes when: x\n")
    assert pick(rec.of("forks"), "raised_by_kind", "raised_by_sync") == [(kind, sync)]
    assert issues(rec) == []


def test_raised_by_twin_without_a_sync_fails_sync_02() -> None:
    rec = read("forks", "## F1 — T [open]\n- Raised by: twin\n- Closes when: x\n")
    assert pick(rec.of("forks"), "raised_by_kind", "raised_by_sync") == [("twin", None)]
    assert issues(rec) == [(2, "twin-without-sync", "BS-SYNC-02")]


def test_raised_by_that_is_no_raiser_is_noted_and_fails_sync_02_when_it_names_a_sync() -> None:
    rec = read("forks", "## F1 — T [open]\n- Raised by: a bot in S9\n- Closes when: x\n")
    assert issues(rec) == [(2, "unknown-raiser", "BS-SYNC-02")]
    rec = read("forks", "## F1 — T [open]\n- Raised by: User\n- Closes when: x\n")
    assert issues(rec) == [(2, "unknown-raiser", None)]
    # The twin named in words is the twin, held to its sync by BS-SYNC-02 (since 2026-12-07).
    rec = read("forks", "## F1 — T [open]\n- Raised by: the twin in S9\n- Closes when: x\n")
    assert issues(rec) == []
    assert pick(rec.of("forks"), "raised_by_kind", "raised_by_sync") == [("twin", "S9")]


def test_keyword_refs_in_any_case() -> None:
    rec = read("state", "## Aspect map\n- a → Thesis\n- b → None yet\n- c → NONE YET\n")
    assert pick(rec.of("aspect_refs"), "kind") == [("thesis",), ("none_yet",), ("none_yet",)]


# ───────────────────────────── IDs are found as words ─────────────────────────────


@pytest.mark.parametrize(
    "resolves",
    [
        "- Resolves: F2, F3",
        "- Resolves: F2 and F3",
        "- Resolves: F3; F2",
        "- Resolves: F2 (wait vs stale), F3",
        "- Resolves: [F2](forks.md#f2), [F3](forks.md#f3)",
        "- **Resolves:** F2, F3",
        "- resolves: F2 F3",
        "\nResolves: F2, F3",  # a plain line of its own (not the item's lazy continuation)
    ],
)
def test_resolves_finds_every_fork_id_as_a_word(resolves: str) -> None:
    rec = read("ledger", f"## D1 — x\n- Decision: a\n- Why: b\n- How to apply: c\n{resolves}\n")
    assert sorted(r["fork_id"] for r in rec.of("ledger_resolves")) == ["F2", "F3"]
    assert issues(rec) == []


def test_ids_wrapped_in_underscore_emphasis_are_words() -> None:
    rec = read("ledger", "## D1 — x\n- Resolves: _F2_, __F3__\n\n_Reversed by D4_\n")
    assert sorted(r["fork_id"] for r in rec.of("ledger_resolves")) == ["F2", "F3"]
    assert pick(rec.of("ledger"), "reversed_by") == [("D4",)]
    refs = read("state", "## Aspect map\n- a → _D1_, *F2*\n").of("aspect_refs")
    assert pick(refs, "ref", "kind") == [("D1", "decision"), ("F2", "fork")]
    # A letter or digit against the ID still makes another word.
    assert read("ledger", "## D1 — x\n- Resolves: F2a, aF3, F4_x\n").of("ledger_resolves") == [
        {"file": "ledger.md", "line": 2, "decision_id": "D1", "fork_id": "F4", "snapshot_id": "sid"}
    ]


def test_every_resolves_line_of_an_entry_counts() -> None:
    rec = read(
        "ledger", "## D1 — x\n- Resolves: F2\n- Resolves: F4, F2\n## D2 — y\n- Resolves: F2\n"
    )
    assert pick(rec.of("ledger_resolves"), "decision_id", "fork_id", "line") == [
        ("D1", "F2", 2),
        ("D1", "F4", 3),
        ("D2", "F2", 5),
    ]
    assert pick(rec.of("ledger"), "resolves_raw") == [("F2; F4, F2",), ("F2",)]
    assert issues(rec) == []


@pytest.mark.parametrize(
    ("kind", "text", "line", "rule"),
    [
        ("state", "- Status: stopping\n- Status: open\n", 2, "BS-STATE-01"),
        ("state", "- Last compose: never\n- Last compose: 2026-07-08T15:00Z\n", 2, "BS-COMPOSE-01"),
        ("state", "- Posture: calm\n- Posture: busy\n", 2, None),  # no rule reads it
        ("thesis", "Current as of: never\nCurrent as of: 2026-07-08T15:00Z\n", 2, "BS-COMPOSE-01"),
        ("forks", f"## F1 — t [open]\n{FORK}- Raised by: twin (S9)\n", 4, "BS-SYNC-02"),
        ("forks", f"## F1 — t [open]\n{FORK}- Closes when:\n", 4, "BS-FORK-01"),
        ("ledger", "## D1 — t\n- Decision: a\n- Decision: b\n", 3, "BS-LEDGER-01"),
    ],
)
def test_a_field_given_again_differently_fails_the_rule_that_needs_it(
    kind: str, text: str, line: int, rule: str | None
) -> None:
    """Only the first value is read; a second that says otherwise is a line that was not,
    so the rule that needs the field fails (a second that says the same is only a note)."""
    assert issues(read(kind, text)) == [(line, "duplicate-field", rule)]


def test_every_reversal_annotation_counts_with_its_own_line() -> None:
    """An entry amended twice has two annotations: each D# is read with the line that names
    it (spec §3.1); none is a duplicate field."""
    rec = read("ledger", "## D1 — t (Reversed by D2)\nReversed by: D2\n\nReversed by: D9\n")
    assert pick(rec.of("ledger"), "reversed_by", "reversed_by_ids", "reversed_by_lines") == [
        ("D2", ["D2", "D9"], [1, 4])
    ]
    rec = read("ledger", "## D1 — t\n- Reverses: D0\n- Reverses: D9, D0\n")
    assert pick(rec.of("ledger"), "reverses", "reverses_ids", "reverses_lines") == [
        ("D0", ["D0", "D9"], [2, 3])
    ]
    assert issues(rec) == []


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        ("state", "- Status: open\n- **Status:** open\n"),
        # The same value in other words (found by a hunt: each failed as two values).
        ("state", "- Status: stopping\n- Status: stopping (stop pipeline running)\n"),
        ("state", "- Last compose: 2026-07-10T16:05Z\n- Last compose: 2026-07-10T16:05:00Z\n"),
        ("state", "- Last compose: 2026-07-10T16:05Z\n- Last compose: 2026-07-10T18:05+02:00\n"),
        ("thesis", "Current as of: 2026-07-10T16:05Z\nCurrent as of: 2026-07-10T18:05+02:00\n"),
    ],
)
def test_a_field_given_again_the_same_is_a_note(kind: str, text: str) -> None:
    assert [i for i in issues(read(kind, text)) if i[1] == "duplicate-field"] == [
        (2, "duplicate-field", None)
    ]


def test_resolves_that_names_no_fork_fails_fork_02_and_none_is_no_issue() -> None:
    rec = read("ledger", "## D1 — x\n- Resolves: the send-window fork\n")
    assert rec.of("ledger_resolves") == [] and issues(rec) == [(2, "no-fork-id", "BS-FORK-02")]
    assert issues(read("ledger", "## D1 — x\n- Resolves: none\n")) == []
    # F2x or xF2 is no ID.
    assert (
        read("ledger", "## D1 — x\n- Resolves: F2x, xF2, F2\n").of("ledger_resolves")[0]["fork_id"]
        == "F2"
    )


@pytest.mark.parametrize(
    "text",
    [
        "## D1 — x\n- Reversed by: D3\n",
        "## D1 — x\n- **Reversed by:** [D3](#d3)\n",
        "## D1 — x\n- REVERSED BY: D3\n",
        "## D1 — x\nThis was reversed by D3 after the review.\n",
        "## D1 — x (Reversed by D3)\n",  # in its heading
        "## D1 — x\n- Why: a\n  - reversed by D3 since\n",  # in a sub-bullet
        "## D1 — x\nThis was reversed by [D3](ledger.md#d3) later.\n",  # a link's text
        "## D1 — x\nThis was reversed\nby D3 after the review.\n",  # a soft line break
        "## D1 — x\nThis was reversed by\n**D3** after the review.\n",
    ],
)
def test_reversed_by_counts_anywhere_in_the_entry(text: str) -> None:
    assert pick(read("ledger", text).of("ledger"), "reversed_by") == [("D3",)]


def test_a_wrapped_reversed_by_names_the_line_it_begins_on() -> None:
    rec = read("ledger", "## D1 — x\nFirst line.\nThis was reversed\nby D3.\n")
    assert pick(rec.of("ledger"), "reversed_by", "reversed_by_line") == [("D3", 3)]


def test_reverses_names_an_entry_and_a_reverses_without_one_fails_ledger_01() -> None:
    rec = read("ledger", "## D1 — x\n## D2 — y\n- Reverses: [D1](#d1) (the old rule)\n")
    assert pick(rec.of("ledger"), "decision_id", "reverses", "reverses_line") == [
        ("D1", None, None),
        ("D2", "D1", 3),
    ]
    rec = read("ledger", "## D2 — y\n- Reverses: the old rule\n")
    assert issues(rec) == [(2, "no-decision-id", "BS-LEDGER-01")]


def test_aspect_refs_as_words() -> None:
    rec = read(
        "state",
        "## Aspect map\n- a → F2 (wait vs stale), [D3](ledger.md#d3); thesis\n"
        "- b → fragment:api.md, someday\n",
    )
    assert pick(rec.of("aspect_refs"), "ref", "kind", "target") == [
        ("F2", "fork", "F2"),
        ("D3", "decision", "D3"),
        ("thesis", "thesis", None),
        ("fragment:api.md", "fragment", "api"),
        ("someday", "unknown", None),
    ]
    # The target is the fragment's name (spec §3.1: fragment:api.md and fragment:api name the
    # same fragment), so it joins fragments.name; another ending names that file.
    rec = read("state", "## Aspect map\n- b → fragment:API.MD, fragment:notes.txt\n")
    assert pick(rec.of("aspect_refs"), "target") == [("API",), ("notes.txt",)]


def test_an_arrow_on_a_continuation_line_keeps_the_first_lines_refs() -> None:
    rec = read("state", "## Aspect map\n- timing — when it sends → F2\n  and on whose clock → F3\n")
    assert pick(rec.of("aspects"), "name", "description", "ref_count") == [
        ("timing", "when it sends", 2)
    ]
    assert pick(rec.of("aspect_refs"), "ref") == [("F2",), ("F3",)]
    # Refs that wrap onto the next line are still the aspect's refs.
    rec = read("state", "## Aspect map\n- timing — when it sends → F2,\n  D3\n")
    assert pick(rec.of("aspect_refs"), "ref") == [("F2",), ("D3",)]
    # With no arrow on its own line, the arrow may come on the next one.
    rec = read("state", "## Aspect map\n- timing — when it sends\n  → F2\n")
    assert pick(rec.of("aspect_refs"), "ref") == [("F2",)]


def test_a_comma_inside_an_aspects_commentary_is_no_ref_part() -> None:
    rec = read("state", "## Aspect map\n- a — b → F2 (wait, then stale), D3 [see notes; later]\n")
    assert pick(rec.of("aspect_refs"), "ref", "kind") == [("F2", "fork"), ("D3", "decision")]
    # An unclosed bracket keeps what follows in its part; a stray `)` closes nothing.
    rec = read("state", "## Aspect map\n- a — b → F2), someday\n")
    assert pick(rec.of("aspect_refs"), "ref", "kind") == [("F2", "fork"), ("someday", "unknown")]


# ───────────────────────────── entries ─────────────────────────────


@pytest.mark.parametrize("heading", ["## D1 — t", "## D1: t", "## D1 t", "## D1", "## **D1** — t"])
def test_a_ledger_entry_begins_with_its_id(heading: str) -> None:
    rec = read("ledger", f"{heading}\n- Decision: a\n")
    assert pick(rec.of("ledger"), "decision_id", "heading_ok", "decision") == [("D1", True, "a")]
    assert issues(rec) == []


def test_a_heading_that_does_not_begin_with_an_id_is_a_section() -> None:
    rec = read(
        "ledger", "## D1 — t\n- Decision: a\n## Decisions\n- Decision: b\n## D2x notes\n- Why: c\n"
    )
    assert pick(rec.of("ledger"), "decision_id", "decision", "why") == [("D1", "a", None)]
    # The fields under the sections belong to no entry: not read, so the rule fails (§3.1).
    assert issues(rec) == [
        (4, "field-outside-entry", "BS-LEDGER-01"),
        (6, "field-outside-entry", "BS-LEDGER-01"),
    ]
    assert forks("## Forks still open\n- Closes when: x\n## F-layer\n", "fork_id") == []


def test_a_heading_meant_as_an_entry_without_its_number_is_an_entry_and_an_issue() -> None:
    rec = read("forks", f"## F — Title [open]\n{FORK}")
    assert pick(rec.of("forks"), "fork_id", "marker", "heading_ok") == [(None, "open", False)]
    assert issues(rec) == [(1, "bad-fork-heading", None)]


@pytest.mark.parametrize("heading", ["F-5", "f5", "F#5", "F_5", "Fork 5", "fork #5", "F 5"])
def test_a_misspelt_fork_id_is_an_entry_without_an_id_and_an_issue(heading: str) -> None:
    rec = read("forks", f"## {heading} — Title [open]\n{FORK}")
    assert pick(rec.of("forks"), "fork_id", "title", "marker") == [(None, "Title", "open")]
    assert issues(rec) == [(1, "bad-fork-heading", None)]  # BS-FORK-01 fails on the null ID


@pytest.mark.parametrize("heading", ["d3 — Title", "D-3 — Title", "Decision 3 — Title"])
def test_a_misspelt_ledger_id_is_an_entry_without_an_id(heading: str) -> None:
    rec = read("ledger", f"## {heading}\n- Decision: a\n")
    assert pick(rec.of("ledger"), "decision_id", "decision") == [(None, "a")]


@pytest.mark.parametrize("heading", ["t3", "Turn 3", "T-3", "turn #3"])
def test_a_misspelt_turn_heading_fails_compose_freshness(heading: str) -> None:
    rec = read("capture", f"# Capture\n\n### {heading} · 2026-07-10T17:00Z\nx\n")
    assert issues(rec) == [(3, "bad-turn-heading", "BS-COMPOSE-02")]


def test_words_and_sections_stay_sections_beside_misspelt_ids() -> None:
    text = "## Forks still open\n## F-layer\n## Fortnight 2 review\n## FAQ\n"
    assert forks(text, "fork_id") == []
    rec = read("capture", "### Today 5 things\n#### Topics 2026-07-10T17:00Z\n")
    # At level 4 a heading with a date and time is a section, no turn: its time counts, with
    # a note (stop 56).
    assert rec.of("turns") == [] and issues(rec) == [(2, "stamped-section", None)]
    # At level 3, the turn's level, a heading with a timestamp is a turn without its ID (the
    # lead's decision at stop 55): it fails BS-COMPOSE-02 (not fully read), its time counted,
    # no turn row.
    rec = read("capture", "### Topics 2026-07-10T17:00Z\n")
    assert rec.of("turns") == [] and issues(rec) == [(1, "bad-turn-heading", "BS-COMPOSE-02")]
    assert [t.isoformat() for t in rec.snapshot["stamped_times"]] == ["2026-07-10T17:00:00+00:00"]


def test_a_number_too_large_for_the_tables_is_an_issue_not_a_silent_null() -> None:
    rec = read("forks", f"## F99999999999 — big [open]\n{FORK}")
    assert pick(rec.of("forks"), "fork_id", "fork_num") == [("F99999999999", None)]
    assert issues(rec) == [(1, "number-too-large", None)]
    rec = read("ledger", "## D99999999999 — big\n")
    assert issues(rec) == [(1, "number-too-large", "BS-LEDGER-01")]


# ───────────────────────────── sync log ─────────────────────────────

DISPATCH = "S4 | gate: on-demand | dispatched: 2026-07-08T15:00Z | scope: full"
RESULT = "S4 → reconciled | 2026-07-08T15:00Z | 4 edits · 2 new forks · 6 open"


@pytest.mark.parametrize(
    "text",
    [
        f"{DISPATCH}\n{RESULT}\n",
        f"- {DISPATCH}\n- {RESULT}\n",
        f"## Gate syncs\n{DISPATCH}\n\n## Results\n* {RESULT}\n",
        f"**S4** | Gate: on-demand | Dispatched: 2026-07-08T15:00Z | Scope: full\n{RESULT}\n",
    ],
)
def test_sync_lines_as_list_items_or_under_headings_read_the_same(text: str) -> None:
    rec = read("sync-log", text)
    assert pick(rec.of("sync_events"), "sync_id", "kind", "gate", "result", "at") == [
        ("S4", "dispatch", "on-demand", None, AT),
        ("S4", "result", None, "reconciled", AT),
    ]
    assert issues(rec) == []


def test_sync_lines_above_a_dashed_line_are_each_read() -> None:
    """`---` under a paragraph underlines it (a setext heading): the sync lines in it are
    still each a line of the log, never one title. (Prose first: below a sync line, in the
    same paragraph, it would continue that line.)"""
    rec = read("sync-log", f"not a sync line\n{DISPATCH}\n{RESULT}\n---\n")
    assert pick(rec.of("sync_events"), "sync_id", "kind") == [("S4", "dispatch"), ("S4", "result")]
    assert issues(rec) == [(1, "bad-sync-line", "BS-SYNC-01")]


def test_fields_above_a_dashed_line_are_fields() -> None:
    rec = read("ledger", "## D1 — t\nDecision: a\nWhy: b\nHow to apply: c\n---\n## D2 — u\n")
    assert pick(rec.of("ledger"), "decision_id", "decision", "why", "how_to_apply") == [
        ("D1", "a", "b", "c"),
        ("D2", None, None, None),
    ]
    rec = read("forks", "## F1 — t [open]\nRaised by: user\nCloses when: x\n---\n")
    assert pick(rec.of("forks"), "raised_by", "closes_when") == [("user", "x")]
    # In state.md a Status over `---` is a setext heading, read as `## Status: stopping` is
    # (the lead's decision at stop 55): not read, each field line named.
    state = read("state", "Status: stopping\nSitting: single\n---\n")
    assert "status" not in state.snapshot and "sitting" not in state.snapshot
    assert issues(state) == [(1, "unread-field", "BS-STATE-01"), (2, "unread-field", None)]
    state = read("state", "Sitting: single\n---\n")
    assert state.snapshot["sitting"] == "single"


def test_a_line_that_is_no_sync_line_fails_sync_01() -> None:
    """A paragraph of its own (a line directly below a sync line continues it, §3.1)."""
    rec = read("sync-log", f"{DISPATCH}\n\nthe twin was slow today\nS5 → done | x\n")
    assert issues(rec) == [(3, "bad-sync-line", "BS-SYNC-01"), (4, "bad-sync-line", "BS-SYNC-01")]


# ───────────────────────────── destinations ─────────────────────────────


@pytest.mark.parametrize(
    ("cell", "paths"),
    [
        ("docs/a.md", ["docs/a.md"]),
        ("`docs/a.md#part`", ["docs/a.md"]),
        ("[the feature](docs/a.md)", ["docs/a.md"]),
        ("docs/a.md (new)", ["docs/a.md"]),
        ("docs/a.md, docs/b.md", ["docs/a.md", "docs/b.md"]),
        ("docs/a.md; docs/b.md", ["docs/a.md", "docs/b.md"]),
        ("docs/a.md<br>docs/b.md", ["docs/a.md", "docs/b.md"]),
        ("docs/a.md and [b](docs/b.md)", ["docs/a.md", "docs/b.md"]),
        ("https://wiki.example.com/x", [None]),
        ("../outside.md", [None]),
    ],
)
def test_a_destination_cell_names_each_of_its_paths(cell: str, paths: list[str | None]) -> None:
    assert [path for _, path in destinations(cell)] == paths


def test_every_destination_of_a_row_is_a_manifest_destination() -> None:
    table = (
        "| # | What | Source | Destination | Action |\n|---|---|---|---|---|\n"
        "| 1 | x | thesis | [a](docs/a.md), docs/b.md (new) | create |"
    )
    rec = Records("sid")
    parse_manifest(
        decode(MANIFEST.format(table=table).encode(), "ops/manifest.md", rec),
        rec,
        {"docs/b.md"}.__contains__,
    )
    assert pick(
        rec.of("manifest_destinations"), "position", "destination_path", "destination_exists"
    ) == [(1, "docs/a.md", False), (2, "docs/b.md", True)]


# ───────────────────────────── fragments and the session ─────────────────────────────


def test_dotfiles_are_no_fragments_and_issues_are_counted() -> None:
    files = {
        "fragments/api.md": b"x",
        "fragments/.gitkeep": b"",
        "ops/capture.md": b"### T1 \xc2\xb7 later\n",
    }
    inp = SessionInput("research", "demo", "docs/research/demo-brainstorm", has_ops_dir=True)
    inp.files.update(files)
    inp.sizes.update({name: len(data) for name, data in files.items()})
    rec = parse_session(inp)
    assert pick(rec.of("fragments"), "name") == [("api",)]
    assert rec.snapshot["parse_issues"] == 1


def test_a_session_file_that_cannot_be_read_fails_the_rule_that_needs_it() -> None:
    inp = SessionInput("research", "demo", "docs/research/demo-brainstorm", has_ops_dir=True)
    for name in ("forks.md", "ops/capture.md", "state.md"):
        inp.unreadable.append((name, "too-large", "over 8 MiB; not read"))
        inp.sizes[name] = 9 << 20
    rules = {i["file"]: i["rule_id"] for i in parse_session(inp).of("parse_issues")}
    # state.md's rule fails already: its Status stays null.
    assert rules == {"forks.md": "BS-FORK-01", "ops/capture.md": "BS-COMPOSE-02", "state.md": None}


def test_the_reader_version_is_part_of_the_snapshot_id(monkeypatch: pytest.MonkeyPatch) -> None:
    import pipeline.parse.session as session

    inp = SessionInput("research", "demo", "docs/research/demo-brainstorm")
    inp.files["state.md"] = b"- Status: open\n"
    before = inp.snapshot_id()
    monkeypatch.setattr(session, "READER_VERSION", "next")
    assert inp.snapshot_id() != before


def test_a_reader_change_reads_everything_once_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pipeline.crawl
    import pipeline.parse.session as session
    from pipeline.crawl import crawl
    from tests.conftest import base_corpus

    corpus, out = base_corpus(tmp_path / "corpus", 4), str(tmp_path / "out")
    first = crawl([str(corpus)], out, workers=1)
    assert (first.new_snapshots, first.previous_reader) == (4, None)
    # A new release of the readers: the snapshot ids and the runs' stamp both change.
    for module in (session, pipeline.crawl):
        monkeypatch.setattr(module, "READER_VERSION", "next")
    upgraded = crawl([str(corpus)], out, workers=1)
    assert upgraded.previous_reader == READER_VERSION, "the crawl says the readers changed"
    assert (upgraded.read, upgraded.parsed, upgraded.new_snapshots) == (4, 4, 4)
    again = crawl([str(corpus)], out, workers=1)
    assert (again.previous_reader, again.read, again.new_snapshots) == (None, 0, 0)


@pytest.mark.parametrize("space", ["  ", "\t", "\xa0", " \xa0 "])
def test_a_field_name_spaced_otherwise_is_the_same_name(space: str) -> None:
    """`Raised  by`, `Raised<tab>by`, `Raised<no-break space>by` are Raised by, as headings'
    names are however spaced; read as no field, a twin's S9 vanished and the session passed."""
    text = f"## F1 — Title [open]\n- Raised{space}by: twin (S9)\n- Closes when: a pick is made\n"
    assert forks(text, "raised_by", "raised_by_sync") == [("twin (S9)", "S9")]
    ledger = read(
        "ledger",
        f"## D1 — Title\n- Decision: d\n- Why: w\n- How to apply: h\n- Reversed{space}by: D9\n",
    )
    assert pick(ledger.of("ledger"), "reversed_by") == [("D9",)]
