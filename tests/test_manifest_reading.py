"""ops/manifest.md read as written (census.md §3, §3.1): a field given twice in a round, a
round written as a heading, fields in any order in a round's preamble, and a long
Destination cell read in linear time (§12: never a hang).

Each case writes the manifest of the applied fixture session on disk and runs
`census detect --gate move` on it, or reads the text with parse_manifest.
"""

from __future__ import annotations

import random
import re
import shutil
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.parse.lexical import decode
from pipeline.parse.manifest import destinations, parse_manifest
from pipeline.parse.records import Records

REPO = Path(__file__).resolve().parent.parent / "fixtures" / "cases" / "base" / "applied" / "repo"
SESSION = "docs/research/demo-brainstorm"
HEAD = "# Harvest manifest — demo\nRound: 1\nStatus: applied\n"
TABLE = """
| # | What | Source | Destination | Action |
|---|------|--------|-------------|--------|
| 1 | consolidated source of truth | thesis + ledger | {cell} | create |
| 2 | send window section | fragment:send-window | docs/features/demo.md | append |
| 3 | parked fork F4 | forks.md | docs/architecture/open-questions.md | append |
"""
USELESS = """
## Uselessness test
- Result: {result}
- Cold-reader allowed paths: docs/features/demo.md, docs/architecture/open-questions.md
- Gaps: none
"""
CELL = "docs/features/demo.md"
# The patterns the reader used before: the oracle for what a link is on short cells.
OLD_LINK_RE = re.compile(r"!?\[[^\]]*+\]\(\s*+<?([^)>\s]*+)>?[^)]*+\)")
OLD_SPLIT_RE = re.compile(r"<br\s*/?>|[,;]|\s+and\s+", re.I)


def manifest(head: str = HEAD, cell: str = CELL, result: str = "pass", tail: str = "") -> str:
    return head + TABLE.format(cell=cell) + USELESS.format(result=result) + tail


def detect(tmp_path: Path, text: str) -> tuple[dict[str, str], list[str], str]:
    """(each rule's status line, the note lines, the verdict) of `census detect --gate move`
    on the fixture session with this manifest."""
    repo = tmp_path / "repo"
    shutil.copytree(REPO, repo)
    (repo / SESSION / "ops" / "manifest.md").write_text(text, encoding="utf-8")
    result = CliRunner().invoke(app, ["detect", str(repo / SESSION), "--gate", "move"])
    assert result.exit_code in (0, 1), result.output
    lines = result.stdout.splitlines()
    rules = {line.split()[0]: line for line in lines if line[:3] in ("BS-", "CEN")}
    notes = [line for line in lines if line.startswith("note ")]
    return rules, notes, lines[-1]


def read(text: str) -> Records:
    rec = Records("sid")
    parse_manifest(decode(text.encode("utf-8"), "ops/manifest.md", rec), rec)
    return rec


def status(rules: dict[str, str], rule: str) -> str:
    return rules[rule].split()[1]


def test_the_fixture_manifest_is_clean(tmp_path: Path) -> None:
    rules, notes, verdict = detect(tmp_path, manifest())
    assert verdict == "clean" and notes == [], rules


@pytest.mark.parametrize(
    "text",
    [
        # A round written as a heading starts no round: its Status is round 1's second.
        manifest(tail="\n## Round 2\nStatus: proposed\n"),
        manifest(head=HEAD + "Status: proposed\n"),
        manifest(head=HEAD.replace("Status: applied", "- Status: applied\n- Status: proposed")),
    ],
    ids=["round-heading", "consecutive", "bullets"],
)
def test_a_second_status_that_differs_fails_the_rules_that_need_it(
    tmp_path: Path, text: str
) -> None:
    rules, notes, verdict = detect(tmp_path, text)
    assert verdict == "failing"
    assert status(rules, "BS-MANIFEST-01") == "fail", rules
    assert status(rules, "CENSUS-MOVE-01") == "fail", rules
    assert any("second 'Status:' says 'proposed'" in note for note in notes), notes


def test_a_second_status_that_is_applied_after_proposed_fails_too(tmp_path: Path) -> None:
    text = manifest(head=HEAD.replace("applied", "proposed") + "Status: applied\n")
    rules, _, _ = detect(tmp_path, text)
    assert status(rules, "BS-MANIFEST-01") == "fail", rules
    assert status(rules, "CENSUS-MOVE-01") == "fail", rules


def test_a_second_status_that_says_the_same_is_a_note(tmp_path: Path) -> None:
    rules, notes, verdict = detect(tmp_path, manifest(head=HEAD + "**Status:** applied\n"))
    assert verdict == "clean", rules
    assert notes == ["note ops/manifest.md:4 second 'Status:' ignored (the same value)"]


def test_a_round_heading_is_a_parse_issue_unless_a_round_line_follows() -> None:
    rec = read(manifest(tail="\n## Round 2\n\n| a | b |\n|---|---|\n"))
    issues = [(i["line"], i["code"], i["rule_id"]) for i in rec.of("parse_issues")]
    # It names a later round than the one read: each rule reading the current round fails.
    assert issues == [
        (16, "round-heading", rule)
        for rule in ("BS-MANIFEST-01", "CENSUS-MOVE-01", "BS-USELESS-01")
    ]
    assert rec.of("manifests")[0]["round"] == 1
    rec = read(manifest(tail="\n## Round 2\nRound: 2\nStatus: proposed\n"))
    assert rec.of("parse_issues") == []
    row = rec.of("manifests")[0]
    assert (row["round"], row["rounds"], row["status"], row["table_rows"]) == (2, 2, "proposed", 0)


def test_a_second_result_that_differs_fails_the_uselessness_rule(tmp_path: Path) -> None:
    rules, notes, verdict = detect(tmp_path, manifest(result="fail\n- Result: pass"))
    assert verdict == "failing"
    assert status(rules, "BS-USELESS-01") == "fail", rules
    assert status(rules, "BS-MANIFEST-01") == "pass", rules
    assert notes == [
        "note ops/manifest.md:13 second 'Result:' says 'pass', the first 'fail'; "
        "only the first is read"
    ]
    rules, notes, verdict = detect(tmp_path / "same", manifest(result="pass\n- Result: **pass**"))
    assert verdict == "clean" and len(notes) == 1, rules


def test_a_status_above_the_first_round_is_the_first_rounds(tmp_path: Path) -> None:
    head = "# Harvest manifest — demo\nStatus: applied\n\nRound: 1\n"
    rules, notes, verdict = detect(tmp_path, manifest(head=head))
    assert verdict == "clean" and notes == [], rules
    rec = read("Status: applied\n" + TABLE.format(cell=CELL) + "\nRound: 1\n")
    row = rec.of("manifests")[0]
    assert (row["round"], row["status"], row["status_line"], row["table_rows"]) == (
        1,
        "applied",
        1,
        3,
    )
    assert {r["round"] for r in rec.of("manifest_rows")} == {1}


def test_a_status_just_above_a_later_round_line_is_that_rounds() -> None:
    rec = read(manifest(tail="\nStatus: proposed\nRound: 2\n"))
    assert rec.of("parse_issues") == []
    row = rec.of("manifests")[0]
    assert (row["round"], row["status"], row["status_line"]) == (2, "proposed", 16)


# The newest round written first, as a log written newest-on-top: read in file order, Round 1
# (applied) was the current state and the move rule passed though Round 2 was only proposed
# (found by a hunt). A round that does not come after the one above it fails the rules that
# read the current round.
@pytest.mark.parametrize(
    "head",
    [
        "# Harvest manifest — demo\nRound: 2\nStatus: proposed\n\n" + HEAD.split("\n", 1)[1],
        "# Harvest manifest — demo\nRound: 1\nStatus: proposed\n\n" + HEAD.split("\n", 1)[1],
    ],
    ids=["descending", "repeated"],
)
def test_a_round_that_does_not_follow_the_one_above_fails(tmp_path: Path, head: str) -> None:
    rules, notes, verdict = detect(tmp_path, manifest(head=head))
    assert verdict == "failing", rules
    for rule in ("BS-MANIFEST-01", "CENSUS-MOVE-01", "BS-USELESS-01"):
        assert status(rules, rule) == "fail", rules
    assert any("does not come after Round" in note for note in notes), notes


def test_rounds_that_ascend_are_no_issue() -> None:
    rec = read(manifest(tail="\nRound: 2\nStatus: proposed\n\nRound: 3\nStatus: applied\n"))
    assert rec.of("parse_issues") == []


def test_a_long_destination_cell_reads_in_linear_time(tmp_path: Path) -> None:
    """About 400 KB of `[a](` on one line: the old pattern rescanned the rest of the cell
    from every `[`, minutes of work; a linear reading takes well under a second."""
    started = time.perf_counter()
    rules, _, verdict = detect(tmp_path, manifest(cell="[a](" * 100_000))
    assert time.perf_counter() - started < 5, "the Destination cell is read in quadratic time"
    assert verdict == "clean", rules


@pytest.mark.parametrize(
    "cell",
    ["[a](" * 100_000, "[" * 400_000 + "](x)", "a" + " " * 400_000 + "b", "[[a](b)" * 60_000],
    ids=["open-links", "brackets", "spaces", "nested"],
)
def test_destinations_of_a_long_cell_are_found_in_linear_time(cell: str) -> None:
    started = time.perf_counter()
    destinations(cell)
    assert time.perf_counter() - started < 2, "quadratic in the cell's length"


def _split_outside_remarks(cell: str) -> list[str]:
    """OLD_SPLIT_RE's split, but at no separator inside balanced parentheses: the innermost
    pairs masked out until none is left (each `)` pairs with the nearest `(` before it)."""
    masked = cell
    while (m := re.search(r"\([^()]*\)", masked)) is not None:
        masked = masked[: m.start()] + "\0" * (m.end() - m.start()) + masked[m.end() :]
    pieces, at = [], 0
    for m in OLD_SPLIT_RE.finditer(cell):
        if masked[m.start()] != "\0":
            pieces.append(cell[at : m.start()])
            at = m.end()
    return [*pieces, cell[at:]]


def test_links_are_read_as_the_old_pattern_read_them() -> None:
    """The linear reading replaces the same links by the same targets on short cells of
    link marks (nested `[` included), and splits on the same separators, but for those
    inside a parenthesised remark (`docs/a.md (new, small)` is one destination)."""
    from pipeline.parse.manifest import _Links, _piece, _unlink

    rnd = random.Random(7)
    marks = ["[", "]", "(", ")", "!", "<", ">", " ", "\t", "a", "/", " and ", ",", "<br>"]
    for _ in range(20_000):
        cell = "".join(rnd.choice(marks) for _ in range(rnd.randint(1, 12)))
        assert _unlink(cell) == OLD_LINK_RE.sub(lambda m: f" {m[1]} ", cell), cell
        pieces = [piece.strip() for piece in _split_outside_remarks(cell) if piece.strip()]
        if "](" not in cell and "][" not in cell:  # links and reference links read as links
            # Each piece, split as before, then read (a piece may name several paths).
            read = [written for piece in pieces for written, _, _ in _piece(piece, _Links())]
            assert [written for written, _ in destinations(cell)] == read, cell


@pytest.mark.parametrize(
    "source",
    [
        "thesis + fragments",
        "Thesis + Fragments",
        "FRAGMENTS",
        # The folder by a path to it (found by a hunt: a false failure).
        "../fragments/",
        "./fragments/",
        "docs/research/demo-brainstorm/fragments/",
        # A backslash escape the page does not show (`fragment:send\_window` likewise).
        "fragment:send\\-window",
    ],
)
def test_a_source_holding_the_word_fragments_routes_them_all_in_any_case(
    tmp_path: Path, source: str
) -> None:
    # Spec BS-MANIFEST-01: a row whose Source holds the word `fragments` routes every fragment.
    text = manifest().replace("| fragment:send-window |", f"| {source} |")
    rules, notes, verdict = detect(tmp_path, text)
    assert status(rules, "BS-MANIFEST-01") == "pass" and verdict == "clean" and notes == [], rules


@pytest.mark.parametrize("source", ["basis/fragments", "../fragments/x.md", "x-fragments"])
def test_a_path_that_is_not_the_fragments_folder_routes_none(tmp_path: Path, source: str) -> None:
    text = manifest().replace("| fragment:send-window |", f"| {source} |")
    rules, _, verdict = detect(tmp_path, text)
    assert status(rules, "BS-MANIFEST-01") == "fail" and verdict == "failing", rules


def test_a_header_cell_with_a_backslash_escape_is_read_as_shown(tmp_path: Path) -> None:
    """`| \\# | What | …`: GFM shows `#`. The table was not read as the routing table, and
    BS-MANIFEST-01 and BS-HARVEST-01 failed (found by a hunt: a false failure)."""
    text = manifest().replace("| # | What |", "| \\# | What |")
    rules, notes, verdict = detect(tmp_path, text)
    assert verdict == "clean" and notes == [], (rules, notes)


def test_a_routing_table_naming_a_column_twice_fails_both_rules(tmp_path: Path) -> None:
    """Two Destination columns: only the first was read, and a link into the folder from the
    second's document passed BS-HARVEST-01 (found by a hunt)."""
    text = manifest().replace("| Action |", "| Action | Destination |")
    text = text.replace("|--------|\n", "|--------|---|\n", 1)
    text = text.replace("| create |", "| create | docs/architecture/overview.md |")
    rules, notes, verdict = detect(tmp_path, text)
    assert verdict == "failing" and any("twice" in note for note in notes), (rules, notes)
    for rule in ("BS-MANIFEST-01", "BS-HARVEST-01"):
        assert status(rules, rule) == "fail", rules


# The routing table's header over a delimiter row of another number of cells, or over no
# delimiter row at all: GFM reads no table, only a paragraph. Its rows vanished with no note:
# BS-MANIFEST-01 failed for want of a table, but BS-HARVEST-01 passed though no destination's
# links were read (found by a hunt).
@pytest.mark.parametrize(
    ("header", "delimiter"),
    [
        (
            "| # | What | Source | Destination | Action | Notes |",
            "|---|------|--------|-------------|--------|",
        ),
        (
            "| What | Source | Destination | Action |",
            "|---|------|--------|-------------|--------|",
        ),
        ("| # | What | Source | Destination | Action |", ""),
    ],
)
def test_a_routing_header_that_makes_no_table_fails_the_harvest_rule(
    tmp_path: Path, header: str, delimiter: str
) -> None:
    table = "\n".join(TABLE.strip("\n").split("\n")[:2]) + "\n"
    text = manifest().replace(table, header + "\n" + (delimiter + "\n" if delimiter else ""))
    rules, notes, _ = detect(tmp_path, text)
    assert status(rules, "BS-HARVEST-01") == "fail", rules
    assert status(rules, "BS-MANIFEST-01") == "fail", rules
    assert [n for n in notes if "ops/manifest.md:5 " in n and "routing table's header" in n]


@pytest.mark.parametrize(
    "header",
    [
        "| # | Item | From | To | Action |",
        "| No. | Thing | Origin | Target | Op |",
        "| Item | From | To |",
    ],
)
def test_a_routing_table_under_other_column_names_fails_the_harvest_rule(
    tmp_path: Path, header: str
) -> None:
    """A routing table whose columns are named in other words (`Item`, `From`, `To`) was no
    routing table at all: BS-MANIFEST-01 failed for want of one, but BS-HARVEST-01 passed
    on no destinations, its rows never read (found by a hunt). It is the routing table not
    read: both rules fail on its header line."""
    cells = header.strip("|").count("|") + 1
    table = "\n".join(TABLE.strip("\n").split("\n")[:2]) + "\n"
    text = manifest().replace(table, header + "\n" + "|---" * cells + "|\n")
    rules, notes, _ = detect(tmp_path, text)
    assert status(rules, "BS-HARVEST-01") == "fail", rules
    assert status(rules, "BS-MANIFEST-01") == "fail", rules
    assert [n for n in notes if "is not read as the routing table" in n], notes


def test_a_table_of_something_else_that_makes_no_table_is_left_alone() -> None:
    text = manifest(tail="\n| Reader | Answered |\n|---|---|---|\n| cold | 5 |\n")
    assert [i for i in read(text).of("parse_issues") if i["code"] == "unread-table"] == []


HTML_TABLE = """
<table>
<tr><th>#</th><th>What</th><th>Source</th><th>Destination</th><th>Action</th></tr>
<tr><td>1</td><td>consolidated</td><td>thesis + ledger</td>
<td>docs/features/demo.md</td><td>create</td></tr>
</table>
"""


@pytest.mark.parametrize(
    "table",
    [
        HTML_TABLE,
        "\n<details>" + TABLE.format(cell=CELL) + "</details>\n",
        TABLE.format(cell=CELL) + HTML_TABLE,
    ],
)
def test_a_routing_table_inside_html_fails_the_harvest_check(tmp_path: Path, table: str) -> None:
    """A routing table written as `<table>`, or GFM rows an HTML block swallows: CommonMark
    reads no table there, so its destinations were never read and BS-HARVEST-01 passed over
    one linking into the session folder (found by a hunt). Both rules that need the rows
    fail, on the line that holds the table's header."""
    repo = tmp_path / "repo"
    shutil.copytree(REPO, repo)
    (repo / SESSION / "ops" / "manifest.md").write_text(
        HEAD + table + USELESS.format(result="pass"), encoding="utf-8"
    )
    demo = repo / "docs" / "features" / "demo.md"
    demo.write_text(
        demo.read_text(encoding="utf-8") + "\nSee [it](../research/demo-brainstorm/thesis.md).\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(app, ["detect", str(repo / SESSION), "--gate", "move"])
    lines = result.stdout.splitlines()
    harvest = [line for line in lines if line.startswith("BS-HARVEST-01 ")]
    assert harvest and harvest[0].startswith("BS-HARVEST-01 fail ops/manifest.md:"), lines
    assert any("written inside an HTML block" in line for line in harvest), lines
    assert any(line.startswith("note ops/manifest.md:") for line in lines), lines


LISTED = """
## Routing
- 1. consolidated source of truth: thesis + ledger → docs/features/demo.md (create)
- 2. send window section: fragment:send-window → [demo](../../../features/demo.md) (append)
- 3. parked fork F4: forks.md → `docs/architecture/open-questions.md` (append)
"""


def test_routes_written_as_a_list_fail_the_harvest_rule(tmp_path: Path) -> None:
    """Routes written as a list, not as the routing table, were never read: BS-MANIFEST-01
    failed for want of a table, but BS-HARVEST-01 passed on no destinations (left open at
    stop 55). Each listed route is noted and fails both rules."""
    text = manifest().replace(TABLE.format(cell=CELL), LISTED)
    rules, notes, _ = detect(tmp_path, text)
    assert status(rules, "BS-HARVEST-01") == "fail", rules
    assert status(rules, "BS-MANIFEST-01") == "fail", rules
    listed = [n for n in notes if "routes are read only from the routing table" in n]
    assert [n.split()[1] for n in listed] == [f"ops/manifest.md:{n}" for n in (6, 7, 8)], notes


def test_list_lines_beside_a_routing_table_or_naming_no_document_are_left_alone() -> None:
    """Guard: a note naming a document under a read routing table, a list naming only
    session files, and the uselessness test's allowed paths are no routes."""
    beside = manifest(tail="\n## Notes\n- see also docs/features/other.md\n")
    plain = (
        HEAD + "\n## Notes\n- forks.md and ledger.md were read\n" + USELESS.format(result="pass")
    )
    for text in (beside, plain):
        codes = [i["code"] for i in read(text).of("parse_issues")]
        assert "unread-routes" not in codes, text


GAP_ROW = "| 4 | gap fix | thesis | docs/features/demo.md | append |"


# A later round written without its `Round:` line: under a subheading of the uselessness
# test, or as a line that names the round. Its rows or status joined the applied round, and
# the move gate passed (found by a hunt).
@pytest.mark.parametrize(
    "tail",
    [
        f"\n### Round 2 — gap fixes\n{TABLE.split(chr(10), 3)[1]}\n{TABLE.split(chr(10), 3)[2]}\n"
        f"{GAP_ROW}\n",
        "\nRound 2: proposed\n",
        "\n**Round 2** — status: proposed\n",
        "\n- Round 2 (gap fixes): proposed\n",
        "\nRound 2\uff1aproposed\n",
    ],
    ids=["subheading", "line", "bold", "item", "fullwidth-colon"],
)
def test_a_round_meant_but_not_written_round_fails(tmp_path: Path, tail: str) -> None:
    rules, notes, verdict = detect(tmp_path, manifest(tail=tail))
    assert verdict == "failing", rules
    assert status(rules, "BS-MANIFEST-01") == "fail", rules
    assert any("Round 2" in note for note in notes), notes
    # Its uselessness test is not the one read (found by a hunt: round 1's passed).
    assert status(rules, "BS-USELESS-01") == "fail", rules


def test_a_round_hidden_under_gaps_fails_the_uselessness_rule(tmp_path: Path) -> None:
    rules, _, verdict = detect(tmp_path, manifest(tail="Round: 2\nStatus: applied\n"))
    assert verdict == "failing", rules
    for rule in ("BS-MANIFEST-01", "CENSUS-MOVE-01", "BS-USELESS-01"):
        assert status(rules, rule) == "fail", (rule, rules)


@pytest.mark.parametrize(
    "tail",
    ["\n### Round 1\n- Result: pass\n", "\nRound 1 went fine; no gaps.\n"],
    ids=["subheading-of-this-round", "prose"],
)
def test_this_round_under_the_test_or_prose_about_a_round_is_no_issue(tail: str) -> None:
    rec = read(manifest(tail=tail))
    assert [i["code"] for i in rec.of("parse_issues")] in ([], ["duplicate-field"])
    assert rec.of("manifests")[0]["round"] == 1


ROW_3 = "| 3 | parked fork F4 | forks.md | docs/architecture/open-questions.md | append |"


@pytest.mark.parametrize(
    "row",
    [
        # Wrapped onto the next line: GFM reads a row with no Destination, then another.
        "| 3 | parked fork F4 | forks.md |\ndocs/architecture/open-questions.md | append |",
        "| 3 | parked fork F4 | forks.md |\n| docs/architecture/open-questions.md | append |",
        # A cell too many: GFM drops the last, and the Destination is another cell.
        ROW_3.replace("forks.md |", "forks.md | forks.md |"),
    ],
    ids=["wrapped", "wrapped-piped", "extra-cell"],
)
def test_a_route_whose_cells_are_not_where_the_header_says_fails_both_rules(
    tmp_path: Path, row: str
) -> None:
    """Its Destination was read empty or as another cell, with no note: a link into the
    session folder from the document it named passed BS-HARVEST-01 (found by a hunt)."""
    rules, notes, _ = detect(tmp_path, manifest().replace(ROW_3, row))
    assert status(rules, "BS-MANIFEST-01") == "fail" and status(rules, "BS-HARVEST-01") == "fail"
    assert notes and all("the routing row" in note for note in notes), notes


def test_a_route_without_its_action_cell_is_read(tmp_path: Path) -> None:
    """No rule reads Action: a row that leaves it out routes as written."""
    rules, notes, verdict = detect(tmp_path, manifest().replace(ROW_3, ROW_3[: -len(" append |")]))
    assert verdict == "clean" and notes == [], rules
