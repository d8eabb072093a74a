"""ops/sync-log.md as people and models write it (census.md §3 and §3.1): sync lines
inside code and HTML blocks (the schema shows them in a fence, so models copy the fence),
headings that hold a malformed sync line, and result lines copied as an unfilled template
are read, or fail BS-SYNC-01, never silently dropped.

Each behaviour is checked at reader level (the text through `decode` and
`parse_sync_log`) and through `census detect` on a real session folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.parse.lexical import decode
from pipeline.parse.records import Records
from pipeline.parse.synclog import parse_sync_log
from tests.conftest import FIXTURES, copy_tree

runner = CliRunner()

S1 = "S1 | gate: intake | dispatched: 2026-07-06T10:11Z | scope: bootstrap"
S1_DONE = "S1 → reconciled | 2026-07-06T10:15Z | 6 edits · 2 new forks · 2 open"
S2 = "S2 | gate: on-demand | dispatched: 2026-07-08T14:24Z | scope: full reconcile"
S2_DONE = "S2 → reconciled | 2026-07-08T14:30Z | 5 edits · 2 new forks · 2 open"
# S1 dispatched and never answered while S2 is newer: BS-SYNC-01 fails.
UNPAIRED = [S1, S2, S2_DONE]


def read(text: str) -> Records:
    rec = Records("sid")
    parse_sync_log(decode(text.encode("utf-8"), "ops/sync-log.md", rec), rec)
    return rec


def events(rec: Records) -> list[tuple[Any, ...]]:
    return [(e["line"], e["sync_id"], e["kind"], e["result"]) for e in rec.of("sync_events")]


def issues(rec: Records) -> list[tuple[Any, ...]]:
    return [(i["line"], i["code"], i["rule_id"]) for i in rec.of("parse_issues")]


def detect(tmp_path: Path, sync_log: str) -> list[str]:
    """`census detect` on a copy of the open base session with this sync log; its lines."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "repo")
    session = repo / "docs" / "research" / "demo-brainstorm"
    (session / "ops" / "sync-log.md").write_text(sync_log, encoding="utf-8")
    result = runner.invoke(app, ["detect", str(session)])
    assert result.exit_code in (0, 1), result.output
    return result.output.strip().splitlines()


def status(output: list[str], rule: str) -> list[str]:
    return [line for line in output if line.startswith(f"{rule} ")]


def unplaced(line: str) -> str:
    """A finding without its file:line."""
    rule, outcome, _, message = line.split(" ", 3)
    return f"{rule} {outcome} {message}"


def wrapped(kind: str, lines: list[str]) -> str:
    """The lines as one block of the given kind, under a title, in the file's text."""
    body = "\n".join(lines)
    indented = "\n".join(f"    {line}" for line in lines)
    in_item = "\n".join(f"  {line}" for line in lines)
    return {
        "plain": f"# Sync log\n\n{body}\n",
        "backticks": f"# Sync log\n\n```\n{body}\n```\n",
        "tildes": f"# Sync log\n\n~~~text\n{body}\n~~~\n",
        "indented": f"# Sync log\n\n{indented}\n",
        "pre": f"# Sync log\n\n<pre>\n{body}\n</pre>\n",
        "fence-in-item": f"# Sync log\n\n- ```\n{in_item}\n  ```\n",
    }[kind]


BLOCKS = ["backticks", "tildes", "indented", "pre", "fence-in-item"]


# ───────────────────────────── code and HTML blocks ─────────────────────────────


# The block's first line: its opening fence, or its first indented line.
CODE_BLOCK = (3, "code-block", "BS-SYNC-01")


@pytest.mark.parametrize("kind", BLOCKS)
def test_sync_lines_inside_a_code_or_html_block_are_read_as_if_unfenced(kind: str) -> None:
    """Read, so that none is lost; a code block (not `<pre>`, an HTML block the spec does not
    name) fails BS-SYNC-01 too: CommonMark reads no entry in one (spec §3.1), and the
    schema's log holds sync lines alone (until 2026-12-07 a log fenced whole passed)."""
    plain = read(wrapped("plain", UNPAIRED))
    rec = read(wrapped(kind, UNPAIRED))
    shift = 0 if kind == "indented" else 1  # the opening fence or tag
    assert [(line - shift, *rest) for line, *rest in events(rec)] == events(plain)
    assert issues(rec) == ([] if kind == "pre" else [CODE_BLOCK])


def test_a_line_inside_a_fence_that_is_no_sync_line_fails_sync_01() -> None:
    rec = read(f"```markdown\n{S1}\nthe twin was slow today\n{S1_DONE}\n```\n")
    assert events(rec) == [(2, "S1", "dispatch", None), (4, "S1", "result", "reconciled")]
    assert issues(rec) == [(1, "code-block", "BS-SYNC-01"), (3, "bad-sync-line", "BS-SYNC-01")]


def test_a_title_and_a_break_inside_a_fence_are_read_as_outside_it() -> None:
    rec = read(f"```\n# Sync log\n\n{S1}\n---\n{S1_DONE}\n## S2 → reconciled\n```\n")
    assert events(rec) == [(4, "S1", "dispatch", None), (6, "S1", "result", "reconciled")]
    assert issues(rec) == [(1, "code-block", "BS-SYNC-01"), (7, "bad-sync-line", "BS-SYNC-01")]


def test_an_empty_fence_is_no_issue() -> None:
    rec = read(f"{S1}\n{S1_DONE}\n\n```\n```\n")
    assert issues(rec) == []


def test_sync_lines_inside_and_outside_blocks_are_read_in_file_order() -> None:
    rec = read(f"{S1}\n\n```\n{S1_DONE}\n```\n\n{S2}\n")
    assert [e[0] for e in events(rec)] == [1, 4, 7]


def test_a_pre_block_with_the_tags_on_the_sync_lines_is_read() -> None:
    rec = read(f"<pre>{S1}\n{S1_DONE}</pre>\n")
    assert events(rec) == [(1, "S1", "dispatch", None), (2, "S1", "result", "reconciled")]
    assert issues(rec) == []


def test_an_html_comment_is_hidden_text_and_not_read() -> None:
    rec = read(f"{S1}\n{S1_DONE}\n\n<!--\n{S2}\n-->\n")
    assert [e[0] for e in events(rec)] == [1, 2]
    assert issues(rec) == []


@pytest.mark.parametrize("kind", BLOCKS)
def test_a_fenced_unpaired_dispatch_fails_sync_01_in_detect_as_unfenced(
    tmp_path: Path, kind: str
) -> None:
    plain = status(detect(tmp_path / "plain", wrapped("plain", UNPAIRED)), "BS-SYNC-01")
    output = detect(tmp_path / kind, wrapped(kind, UNPAIRED))
    # The same finding, its line aside: S1 is unpaired while S2 is the newest dispatch (and,
    # in a code block, the block's own).
    found = [unplaced(line) for line in status(output, "BS-SYNC-01")]
    assert [f for f in found if "code block" not in f] == [unplaced(line) for line in plain]
    assert len(found) == len(plain) + (kind != "pre")
    assert plain[0].startswith("BS-SYNC-01 fail ops/sync-log.md:3 S1 has no result")
    assert output[-1] == "failing"


# ───────────────────────────── headings ─────────────────────────────


@pytest.mark.parametrize(
    "text",
    [
        "### S4 → reconciled 2026-07-10T16:10Z\n",  # no pipes
        "## S3 | gate: stop | dispatched: 2026-07-10T15:58Z\n",  # no scope
        "S4 → reconciled 2026-07-10T16:10Z\n---\n",  # a one-line setext heading
        "## **S4** → reconciled 2026-07-10T16:10Z\n",  # emphasis around the ID
    ],
)
def test_a_heading_that_begins_like_a_sync_line_but_cannot_be_read_fails_sync_01(
    text: str,
) -> None:
    rec = read(f"{S1}\n{S1_DONE}\n\n{text}")
    assert events(rec) == [(1, "S1", "dispatch", None), (2, "S1", "result", "reconciled")]
    assert issues(rec) == [(4, "bad-sync-line", "BS-SYNC-01")]


@pytest.mark.parametrize("title", ["## Syncs\n", "# Sync log\n", "Syncs\n---\n", "## Sprint 4\n"])
def test_a_section_title_stays_a_section(title: str) -> None:
    rec = read(f"{title}\n{S1}\n{S1_DONE}\n")
    assert len(events(rec)) == 2
    assert issues(rec) == []


def test_a_malformed_sync_heading_fails_sync_01_in_detect(tmp_path: Path) -> None:
    output = detect(tmp_path, f"{S1}\n{S1_DONE}\n{S2}\n{S2_DONE}\n### S3 → reconciled 2026-07-10\n")
    assert status(output, "BS-SYNC-01") == [
        "BS-SYNC-01 fail ops/sync-log.md:5 could not read: neither a dispatch nor a result: "
        "S3 → reconciled 2026-07-10"
    ]


# ───────────────────────────── unfilled templates ─────────────────────────────


@pytest.mark.parametrize(
    "result",
    [
        "S2 → reconciled | failed | 2026-07-08T14:30Z",
        "S2 → reconciled | failed | 2026-07-08T14:30Z | 5 edits",
        "S2 -> failed | reconciled | 2026-07-08T14:30Z",
        "S2 → **reconciled** | failed | 2026-07-08T14:30Z",  # general reading, not the fast one
        "- S2 → reconciled | failed | 2026-07-08T14:30Z",
    ],
)
def test_a_result_naming_both_outcomes_is_an_unfilled_template_and_fails_sync_01(
    result: str,
) -> None:
    rec = read(f"{S2}\n{result}\n")
    # Still S2's result line, its outcome unread: S2 is answered, not in flight (sync health).
    assert events(rec) == [(1, "S2", "dispatch", None), (2, "S2", "result", None)]
    assert issues(rec) == [(2, "bad-sync-line", "BS-SYNC-01")]


def test_a_summary_that_names_the_other_outcome_is_commentary() -> None:
    rec = read(f"{S2}\nS2 → failed | 2026-07-08T14:30Z | not reconciled: twin timed out\n")
    assert events(rec) == [(1, "S2", "dispatch", None), (2, "S2", "result", "failed")]
    assert issues(rec) == []


def test_a_template_result_fails_sync_01_and_leaves_its_fork_unreconciled_in_detect(
    tmp_path: Path,
) -> None:
    """The open base session's F2 is raised by twin (S2)."""
    output = detect(
        tmp_path, f"{S1}\n{S1_DONE}\n{S2}\nS2 → reconciled | failed | 2026-07-08T14:30Z\n"
    )
    assert status(output, "BS-SYNC-01") == [
        "BS-SYNC-01 fail ops/sync-log.md:4 could not read: an unfilled template, reconciled "
        "and failed both named: S2 → reconciled | failed | 2026-07-08T14:30Z"
    ]
    assert status(output, "BS-SYNC-02") == [
        "BS-SYNC-02 fail forks.md:12 F2 is raised by twin (S2), but S2 may have a result on "
        "ops/sync-log.md:4, which could not be read"
    ]


@pytest.mark.parametrize("cell", ["| scope: full reconcile", "| dispatched: 2026-07-08T14:24Z"])
def test_a_dispatch_wrapped_before_a_field_cell_is_one_sync_line(cell: str) -> None:
    """`S2 | gate: on-demand | dispatched: …` over `| scope: full reconcile`: the line below
    is the dispatch's wrapped end, not a line of its own (found by a hunt: it failed BS-SYNC-01
    and BS-SYNC-02 on a log the page shows whole)."""
    head = S2[: S2.index(f" {cell[2:].split(':')[0]}:") - 1].rstrip(" |")
    tail = S2[S2.index(cell[2:].split(":")[0] + ":") :]
    text = "\n".join([S1, S1_DONE, head, f"| {tail}", S2_DONE, ""])
    rec = read(text)
    assert issues(rec) == []
    kinds = [(e["line"], e["sync_id"], e["kind"]) for e in rec.of("sync_events")]
    assert kinds == [
        (1, "S1", "dispatch"),
        (2, "S1", "result"),
        (3, "S2", "dispatch"),
        (5, "S2", "result"),
    ]


def test_a_list_item_wrapped_onto_an_indented_line_is_one_sync_line() -> None:
    """A result written as a list item and wrapped is one item on the page (spec §3.1:
    continuation lines belong to the item above); its second line was read as a line of its
    own, 'neither a dispatch nor a result', and the summary lost its '2 open'. A line that
    begins like a sync line stays its own (CommonMark makes it a lazy continuation)."""
    text = "\n".join(
        [
            f"- {S1}",
            f"- {S1_DONE[: S1_DONE.index('2 open')]}",
            "  2 open · untouched: none",
            f"- {S2}",
            S2_DONE,
        ]
    )
    rec = read(text + "\n")
    assert issues(rec) == []
    assert events(rec) == [
        (1, "S1", "dispatch", None),
        (2, "S1", "result", "reconciled"),
        (4, "S2", "dispatch", None),
        (5, "S2", "result", "reconciled"),
    ]
    assert rec.of("sync_events")[1]["open_forks"] == 2


@pytest.mark.parametrize(
    "heading",
    [
        "## s3 | gate: stop | dispatched: 2026-07-08T15:00Z | scope: stop",
        "s3 | gate: stop | dispatched: 2026-07-08T15:00Z | scope: stop\n---",
        "### S 3 -> failed | 2026-07-08T15:05Z | timed out",
    ],
)
def test_a_sync_line_misspelt_as_a_heading_is_an_issue(heading: str, tmp_path: Path) -> None:
    """A misspelt sync line written as a heading, or above a `---` separator (a setext
    heading), was taken for a section title and vanished with no note, where the same line in
    a paragraph fails BS-SYNC-01: the newest dispatch unseen, S2 passed as in flight though
    it was never answered (found by a hunt)."""
    log = "\n".join([S1, S1_DONE, S2, "", heading]) + "\n"
    rec = read(log)
    assert [code for _, code, _ in issues(rec)] == ["bad-sync-line"], issues(rec)
    found = status(detect(tmp_path, log), "BS-SYNC-01")
    assert found and all(" fail " in line for line in found), found
    # A section title over a sync's lines stays one.
    assert issues(read("\n".join(["## S1 — intake", S1, S1_DONE]) + "\n")) == []


def test_a_sub_bullet_under_a_sync_item_is_part_of_its_line() -> None:
    """A sub-bullet under a result item is part of that item's value (spec §3.1: a sub-item
    belongs to the item above), as a wrapped line is: it was read as a line of its own,
    'neither a dispatch nor a result', and a healthy log failed BS-SYNC-01 (found by a hunt).
    A sub-bullet that is a sync line (a result nested under its dispatch) stays its own."""
    text = "\n".join(
        [
            f"- {S1}",
            f"  - {S1_DONE}",
            f"- {S2}",
            f"- {S2_DONE[: S2_DONE.index('2 open')]}",
            "  - 2 open",
            "  - untouched: none",
        ]
    )
    rec = read(text + "\n")
    assert issues(rec) == []
    assert events(rec) == [
        (1, "S1", "dispatch", None),
        (2, "S1", "result", "reconciled"),
        (3, "S2", "dispatch", None),
        (4, "S2", "result", "reconciled"),
    ]
    assert rec.of("sync_events")[3]["open_forks"] == 2


@pytest.mark.parametrize(
    "meant",
    [
        "s3 | gate: on-demand | dispatched: 2026-07-08T14:40Z | scope: full",
        "S 3 | gate: on-demand | dispatched: 2026-07-08T14:40Z | scope: full",
        "sync S3 | gate: on-demand | dispatched: 2026-07-08T14:40Z | scope: full",
        "s3 -> failed | 2026-07-08T14:41Z | timed out",
        # A dispatch written as a table row with no table (found by a hunt).
        "| S3 | on-demand | 2026-07-08T14:40Z | full |",
        "| **S3** | on-demand | 2026-07-08T14:40Z | full |",
        # A result written in words, the S# and its outcome near the line's start: it was
        # read as the wrapped end of S2's summary (found by a hunt).
        "Result S3: reconciled (2026-07-08T14:41Z)",
        "(S3 reconciled at 14:41)",
        "Sync S3 failed: timed out",
        # A dispatch written in words (found by a hunt: S3 was never answered, and passed).
        "Dispatched S3 at 2026-07-08T14:40Z (gate: on-demand, scope: recompose)",
        "2026-07-08T14:40Z S3 dispatched (gate: on-demand)",
        "Dispatch S3 — gate: on-demand — dispatched: 2026-07-08T14:40Z — scope: full",
        "(S3 dispatched at 14:40)",
    ],
)
def test_a_sync_line_misspelt_right_under_another_is_an_issue_never_its_wrapped_end(
    meant: str, tmp_path: Path
) -> None:
    """A line right under a sync line that did not begin like one was read as the wrapped
    end of the line above: a misspelt dispatch vanished into S2's summary with no note, and
    an unpaired dispatch that is not the newest passed BS-SYNC-01 (spec §3.1: any other
    line is a parse issue; clean never hides a skipped line)."""
    text = "\n".join([S1, S1_DONE, S2, S2_DONE, meant, ""])
    rec = read(text)
    assert issues(rec) == [(5, "bad-sync-line", "BS-SYNC-01")]
    assert rec.of("sync_events")[3]["open_forks"] == 2, "S2's summary is as written"
    output = detect(tmp_path, text)
    assert status(output, "BS-SYNC-01")[0].startswith("BS-SYNC-01 fail ops/sync-log.md:5")
    assert output[-1] == "failing"


@pytest.mark.parametrize(
    "hidden",
    [
        f"<!-- appended by the twin --> {S1}",
        f"- <!-- appended by the twin --> {S1}",
        f"<!-- appended\nby the twin --> {S1}",
    ],
)
def test_a_sync_line_after_a_comment_on_its_line_is_read(hidden: str, tmp_path: Path) -> None:
    """CommonMark shows the text after a comment's `-->` on its line, so a dispatch written
    there is a line of the log. It was hidden with the comment: S1 never answered, with S2
    newer, passed BS-SYNC-01 and the folder was clean (found by a hunt)."""
    text = "\n".join([hidden, S2, S2_DONE, ""])
    rec = read(text)
    assert events(rec)[0][1:3] == ("S1", "dispatch")
    output = detect(tmp_path, text)
    assert status(output, "BS-SYNC-01")[0].startswith("BS-SYNC-01 fail ops/sync-log.md:")
    assert output[-1] == "failing"


@pytest.mark.parametrize("br", ["<br>", "<br/>", "<BR />"])
def test_a_sync_line_after_a_br_is_a_line_of_its_own(br: str, tmp_path: Path) -> None:
    """A `<br>` shows what follows on a line of its own, so a dispatch written after one is
    read as a dispatch. It was read as the end of the result line before it: S2 never
    answered, with S3 newer, passed BS-SYNC-01 and the folder was clean (found by a hunt).
    Other text after a `<br>` stays part of the summary. The two sync lines share a line,
    whose order rules cannot read: that is an issue of its own."""
    s3 = "S3 | gate: on-demand | dispatched: 2026-07-08T15:00Z | scope: full"
    text = "\n".join([S1, f"{S1_DONE}{br}untouched: none{br}{S2}", s3, ""])
    rec = read(text)
    assert issues(rec) == [(2, "shared-line", "BS-SYNC-01")]
    assert [e[:3] for e in events(rec)] == [
        (1, "S1", "dispatch"),
        (2, "S1", "result"),
        (2, "S2", "dispatch"),
        (3, "S3", "dispatch"),
    ]
    assert rec.of("sync_events")[1]["open_forks"] == 2
    output = detect(tmp_path, text)
    assert status(output, "BS-SYNC-01")[0].startswith("BS-SYNC-01 fail ops/sync-log.md:2")
    assert output[-1] == "failing"


def test_a_sub_bullet_note_that_begins_with_its_sync_is_part_of_the_item() -> None:
    """A sub-bullet under a result is part of that item's value (spec §3.1), also when it
    begins with the sync's ID: `S1 left the sharing aspect untouched` holds neither a field
    separator nor an arrow, so it is a note of the item, as such a heading is a section
    title. It was read as a line of its own and a healthy log failed BS-SYNC-01 (found by a
    hunt). A sub-bullet shaped as a sync line, misspelt or not, is still its own."""
    text = "\n".join(
        [
            f"- {S1}",
            f"- {S1_DONE}",
            "  - S1 left the sharing aspect untouched on purpose",
            f"- {S2}",
            "  - s2 -> failed | 2026-07-08T14:29Z | timed out",
            f"  - {S2_DONE}",
            "",
        ]
    )
    rec = read(text)
    assert issues(rec) == [(5, "bad-sync-line", "BS-SYNC-01")]
    assert [e[:2] for e in events(rec)] == [(1, "S1"), (2, "S1"), (4, "S2"), (6, "S2")]


def test_text_after_a_br_that_only_begins_with_a_sync_id_stays_in_the_summary() -> None:
    """Only a sync line (a field separator or an arrow after its ID) after a `<br>` is read
    on its own; `S2 touched the aspect map` after one is more of the result's summary, as it
    was before `<br>` began to split lines (found while fixing a hunt's defect)."""
    rec = read(f"{S1}\n{S1_DONE}<br>S1 touched the aspect map\n")
    assert issues(rec) == []
    assert rec.of("sync_events")[1]["summary"].endswith("<br>S1 touched the aspect map")


@pytest.mark.parametrize(
    ("summary", "counts"),
    [
        ("1,200 edits · 2 new forks · 0 open", (1200, 2, 0)),
        ("12,400 edits · 1 new fork · 10,000 open", (12400, 1, 10000)),
        ("1.5 edits · 2 new forks · 3 open", (None, 2, 3)),
        ("6 edits · 2 new forks · 2 open", (6, 2, 2)),
        # A hyphenated word is another word, and emphasis may wrap the number (a hunt).
        ("5 edits · 0 new forks · 2 open-ended questions closed · 0 open", (5, 0, 0)),
        ("**3** edits · **2** new forks · **1** open", (3, 2, 1)),
        ("__3__ edits · _2_ new forks · __1__ open", (3, 2, 1)),
        ("x_3 edits · v2 new forks · 1 open", (None, None, 1)),
    ],
)
def test_a_count_is_read_as_the_number_written(summary: str, counts: tuple[Any, ...]) -> None:
    """`1,200 edits` in a reconciled summary was read as 200 edits, the digits after the
    comma (found by a hunt): a wrong number in sync_events and the sync pairs. A count
    grouped with commas is read whole, and part of a decimal is no count."""
    rec = read(f"{S1}\nS1 → reconciled | 2026-07-06T10:15Z | {summary}\n")
    result = rec.of("sync_events")[1]
    assert (result["edits"], result["new_forks"], result["open_forks"]) == counts
    assert issues(rec) == []


# ───────────────────────────── unreadable times ─────────────────────────────


# A dispatch or result whose time cannot be read is a sync line not fully read: it was a note
# that failed no rule, so the log was clean (spec §3.1, fail closed; found by a hunt).
@pytest.mark.parametrize(
    ("old", "new"),
    [
        (S2, S2.replace("2026-07-08T14:24Z", "yesterday-ish")),
        (S2_DONE, S2_DONE.replace("2026-07-08T14:30Z", "2026-13-45T99:00Z")),
        (S2_DONE, S2_DONE.replace("2026-07-08T14:30Z", "")),
    ],
)
def test_a_sync_line_whose_time_cannot_be_read_fails_sync_01(
    tmp_path: Path, old: str, new: str
) -> None:
    log = "\n".join([S1, S1_DONE, S2, S2_DONE]).replace(old, new) + "\n"
    line = log.splitlines().index(new) + 1
    assert issues(read(log)) == [(line, "bad-timestamp", "BS-SYNC-01")]
    (found,) = status(detect(tmp_path, log), "BS-SYNC-01")
    assert found.startswith(f"BS-SYNC-01 fail ops/sync-log.md:{line} could not read: S2 ")


@pytest.mark.parametrize(
    ("result", "fails"),
    [
        (S2_DONE.replace("14:30Z", "14:00Z"), True),
        (S2_DONE.replace("2026-07-08T14:30Z", "2026-07-08T16:00+02:00"), True),
        (S2_DONE.replace("14:30Z", "14:24Z"), False),
        (S2_DONE.replace("2026-07-08T14:30Z", "2026-07-08T16:25+02:00"), False),
    ],
)
def test_a_result_timestamped_before_its_dispatch_fails_sync_01(
    tmp_path: Path, result: str, fails: bool
) -> None:
    """S2 dispatched at 14:24 and its result, below it, saying 14:00: the pairing is by file
    order, so BS-SYNC-01 passed on a copying error that shows in time only (found by a
    hunt). Its result line fails, naming both times as written; an equal instant passes."""
    log = "\n".join([S1, S1_DONE, S2, result]) + "\n"
    (found,) = status(detect(tmp_path, log), "BS-SYNC-01")
    when = result.split(" | ")[1]
    expected = (
        f"BS-SYNC-01 fail ops/sync-log.md:4 S2's result at {when} is before its dispatch "
        "at 2026-07-08T14:24Z"
    )
    assert found == (expected if fails else "BS-SYNC-01 pass")


@pytest.mark.parametrize(
    ("log", "answered"),
    [
        ([S1, S1_DONE, S2, S2_DONE], True),
        ([S1, S1_DONE, S2_DONE, S2], False),  # the result written above its dispatch
        ([S1, S1_DONE, S2, S2_DONE.replace("14:30Z", "14:00Z")], False),  # stamped before it
        # A time that cannot be read shows no order (found by a hunt: it passed).
        ([S1, S1_DONE, S2, S2_DONE.replace("2026-07-08T14:30Z", "2026-07-07")], None),
        ([S1, S1_DONE, S2.replace("14:24Z", "14:2OZ"), S2_DONE], None),
    ],
)
def test_a_fork_citing_a_sync_answered_before_its_dispatch_fails_sync_02(
    tmp_path: Path, log: list[str], answered: bool | None
) -> None:
    """F2 is raised by twin (S2). A result above S2's dispatch, or stamped before it, is no
    reply to it (BS-SYNC-01 fails it, sync_pairs gives it no latency), yet BS-SYNC-02 took it
    for S2's reconciled result and passed (found by a hunt)."""
    (found,) = status(detect(tmp_path, "\n".join(log) + "\n"), "BS-SYNC-02")
    expected = (
        "BS-SYNC-02 fail forks.md:12 F2 is raised by twin (S2), but S2 has its reconciled "
        "result before its dispatch, so no reply to it"
    )
    if answered is None:
        expected = (
            "BS-SYNC-02 fail forks.md:12 F2 is raised by twin (S2), but S2 has a reconciled "
            "result whose time, or its dispatch's, could not be read"
        )
    assert found == ("BS-SYNC-02 pass" if answered else expected)


# ───────────────────────────── order on the page ─────────────────────────────


@pytest.mark.parametrize(
    "text",
    [
        f"{S1}\n{S1_DONE}\n{S2}<br>{S2_DONE}\n",  # a pair on one line: fine on the page
        f"{S1}<br>{S2}\n{S2_DONE}\n",  # S1 unpaired before the newest
        f"{S1_DONE}<br>{S1}\n",  # a result before its dispatch
    ],
)
def test_sync_lines_sharing_a_line_fail_sync_01(text: str) -> None:
    """Both are read, but rules and pairs order sync lines by their line, which the two share:
    an unpaired dispatch before the newest passed, as did a result before its dispatch, and a
    right pair failed BS-SYNC-02 (found by a hunt). One issue per shared line."""
    rec = read(text)
    shared = [i for i in issues(rec) if i[1] == "shared-line"]
    assert len(shared) == 1 and shared[0][2] == "BS-SYNC-01", issues(rec)
    assert len(events(rec)) == text.count("S1") + text.count("S2")


@pytest.mark.parametrize(
    "heading",
    [
        "## S3 · gate: stop · dispatched: 2026-07-10T15:58Z · scope: stop",
        "### S3 — gate: stop — dispatched: 2026-07-10T15:58Z — scope: stop",
        "### S3 dispatched 2026-07-10T15:58Z (gate: stop)",
        "S3 failed: timed out\n---",
    ],
)
def test_a_heading_holding_a_sync_lines_words_is_read_as_one(heading: str) -> None:
    """A title names a sync; one holding its fields or a time is a sync line written as a
    heading, and fails BS-SYNC-01 as the same line in a paragraph does (it vanished as a
    section title: an unpaired dispatch above it then read as the newest; found by a hunt)."""
    rec = read(f"{S1}\n{S1_DONE}\n\n{heading}\n")
    assert [i[1] for i in issues(rec)] == ["bad-sync-line"], issues(rec)


def test_a_heading_naming_a_sync_is_still_a_title() -> None:
    rec = read(f"## S1 — intake\n\n{S1}\n{S1_DONE}\n")
    assert issues(rec) == [] and len(events(rec)) == 2
