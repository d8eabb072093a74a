"""Destination cells read as written (spec §3.1 Destinations, BS-HARVEST-01): a link target
with `%20`-style escapes or in angle brackets with spaces, a path followed by commentary
after a colon, and a cell that names no path, which fails the rule rather than vanishing.

Each case writes the applied fixture session on disk, points its manifest's first row at a
destination document that links into the session folder, and runs `census detect`.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest

from pipeline.check import check
from pipeline.crawl import crawl
from pipeline.detect import detect
from pipeline.parse.lexical import decode
from pipeline.parse.manifest import destinations, parse_manifest
from pipeline.parse.records import Records
from tests.conftest import FIXTURES, copy_tree

SESSION = "docs/research/demo-brainstorm"
SPACED = "docs/features/digest notes.md"
DEMO = "docs/features/demo.md"
UNDERSCORED = "docs/features/digest_notes.md"
LINK = "\nSee [the brainstorm](../research/demo-brainstorm/thesis.md).\n"
ROW_1 = "| 1 | consolidated source of truth | thesis + ledger | docs/features/demo.md |"
ROW_2 = "| 2 | send window section | fragment:send-window | docs/features/demo.md |"
# Row 2 moved elsewhere, so only row 1's cell can name the linking document.
OTHER_2 = "| 2 | send window section | fragment:send-window | docs/architecture/overview.md |"


def _repo(tmp_path: Path, document: str, cell: str, link: bool = True) -> Path:
    """The applied fixture repository, with row 1's Destination cell written as `cell`
    and `document` linking into the session folder (or not)."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "applied" / "repo", tmp_path / "corpus" / "repo")
    target = repo / document
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(repo / DEMO, target)
    if link:
        target.write_text(target.read_text(encoding="utf-8") + LINK, encoding="utf-8")
    manifest = repo / SESSION / "ops" / "manifest.md"
    text = manifest.read_text(encoding="utf-8")
    assert ROW_1 in text and ROW_2 in text
    text = text.replace(ROW_1, f"| 1 | consolidated source of truth | thesis + ledger | {cell} |")
    manifest.write_text(text.replace(ROW_2, OTHER_2), encoding="utf-8")
    return repo


def _harvest(repo: Path) -> tuple[str, list[str], list[str]]:
    """BS-HARVEST-01's status and findings at the move gate, and the notes' codes."""
    detection = detect(str(repo / SESSION), "move")
    outcome = next(o for o in detection.outcomes if o.rule == "BS-HARVEST-01")
    findings = [f"{f['file']} {f['message']}" for f in outcome.findings]
    return outcome.status, findings, [n["code"] for n in detection.notes]


LINKED_CELLS = [
    (SPACED, "[digest notes](docs/features/digest%20notes.md)"),
    (SPACED, "[digest notes](<docs/features/digest notes.md>)"),
    (SPACED, '[digest notes](<docs/features/digest notes.md> "the digest")'),
    (SPACED, "`docs/features/digest notes.md`: new page"),
    (SPACED, "docs/features/digest notes.md"),  # a bare name with a space, no commentary
    (DEMO, "docs/features/demo.md: new page"),
    (DEMO, "**docs/features/demo.md**: new page"),
    (DEMO, "docs/features/demo.md(new)"),
    (DEMO, "docs/features/demo.md — new page"),
    (DEMO, "[demo](<docs/features/demo.md>): new page"),
    # Relative to the manifest's folder (ops/), as the rendered link goes.
    (DEMO, "[demo](../../../features/demo.md)"),
    (DEMO, "../../../features/demo.md"),
    # A backslash escape shows the punctuation alone (CommonMark), as a model often writes `_`.
    (UNDERSCORED, "docs/features/digest\\_notes.md"),
    (UNDERSCORED, "[notes](docs/features/digest\\_notes.md)"),
    # A character reference is the character it shows; `\` is Windows' `/` (found by a hunt).
    (DEMO, "docs&#47;features&#47;demo.md"),
    (DEMO, "docs/features/demo.md&nbsp;(new)"),
    (DEMO, "docs/features/demo.md&#x200B;"),
    (DEMO, "docs\\features\\demo.md"),
    (DEMO, "docs/features\\demo.md (new)"),
    (DEMO, "docs/features/demo.md[^1]"),
    (DEMO, "docs/features/demo.md\u00b9"),
    # A folder: each document in it is a destination (until 2026-12-07 none was).
    (DEMO, "docs/features/"),
    (SPACED, "[features](docs/features)"),
    ("docs/features/digest.md", "docs/features/ (new guide)"),
    # A link target may hold balanced parentheses (until stop 67 it was cut at the first `)`).
    ("docs/features/digest(v2).md", "[digest](docs/features/digest(v2).md)"),
    ("docs/features/digest(v2).md", "[digest [F4]](docs/features/digest(v2).md) append"),
    # A pattern: each document it matches is a destination (until 2026-12-07 none was).
    (DEMO, "docs/features/*.md"),
    (SPACED, "`docs/*/digest*.md`"),
]


@pytest.mark.parametrize(("document", "cell"), LINKED_CELLS)
def test_a_destination_that_links_into_the_session_fails(
    document: str, cell: str, tmp_path: Path
) -> None:
    status, findings, notes = _harvest(_repo(tmp_path, document, cell))
    assert status == "fail", cell
    assert any(f.startswith(f"/{document} ") and "links into" in f for f in findings), findings
    assert notes == []


@pytest.mark.parametrize(("document", "cell"), LINKED_CELLS)
def test_the_same_destination_without_the_link_passes(
    document: str, cell: str, tmp_path: Path
) -> None:
    assert _harvest(_repo(tmp_path, document, cell, link=False)) == ("pass", [], [])


@pytest.mark.parametrize(
    ("cell", "definition"),
    [
        ("[demo][d]", "[d]: docs/features/demo.md"),
        ("[docs/features/demo.md][]", "[DOCS/features/demo.md]: <docs/features/demo.md>"),
        ("[demo][page]", "[page]: ../../../features/demo.md"),
        # The first definition of a label wins, and one in a fence is text (CommonMark):
        # until stop 67 the last won, and the destination read was another document.
        ("[demo][d]", "[d]: docs/features/demo.md\n[d]: docs/architecture/overview.md"),
        ("[demo][d]", "```\n[d]: docs/architecture/overview.md\n```\n[d]: docs/features/demo.md"),
    ],
)
def test_a_reference_link_reads_its_definition(cell: str, definition: str, tmp_path: Path) -> None:
    repo = _repo(tmp_path, DEMO, cell)
    manifest = repo / SESSION / "ops" / "manifest.md"
    manifest.write_text(manifest.read_text(encoding="utf-8") + f"\n{definition}\n")
    status, findings, notes = _harvest(repo)
    assert (status, notes) == ("fail", []), (cell, findings, notes)
    assert any(f.startswith(f"/{DEMO} ") and "links into" in f for f in findings), findings


def test_a_reference_link_with_no_definition_fails_with_a_note(tmp_path: Path) -> None:
    status, findings, notes = _harvest(_repo(tmp_path, DEMO, "[demo][nowhere]", link=False))
    assert status == "fail"
    assert findings == [
        "ops/manifest.md could not read: Destination '[demo][nowhere]' names no repository path"
    ]
    assert notes == ["unreadable-destination"]


HARVEST_RESULTS = "SELECT status, file FROM rule_results WHERE rule_id = 'BS-HARVEST-01'"


def _crawled(tmp_path: Path, out: str, query: str = HARVEST_RESULTS) -> list[tuple[Any, ...]]:
    """Crawl tmp_path/corpus into a new OUT, check it, and run `query` on its census.duckdb."""
    where = tmp_path / out
    crawl([str(tmp_path / "corpus")], str(where), workers=1)
    check(str(where))
    with duckdb.connect(str(where / "census.duckdb"), read_only=True) as con:
        con.execute(f"SET file_search_path = '{where}'")
        return con.execute(query).fetchall()


def test_an_angled_reference_definition_keeps_its_spaces(tmp_path: Path) -> None:
    repo = _repo(tmp_path, SPACED, "[digest notes][n]")
    manifest = repo / SESSION / "ops" / "manifest.md"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(text + "\n[n]: <docs/features/digest notes.md>\n", encoding="utf-8")
    status, findings, notes = _harvest(repo)
    assert (status, notes) == ("fail", []), findings
    assert any(f.startswith(f"/{SPACED} ") and "links into" in f for f in findings), findings


def test_the_crawl_and_check_read_an_angled_target_with_spaces(tmp_path: Path) -> None:
    _repo(tmp_path, SPACED, "[digest notes](<docs/features/digest notes.md>)")
    assert _crawled(tmp_path, "out") == [("fail", f"/{SPACED}")]


def test_the_crawl_and_check_read_each_document_of_a_folder_destination(tmp_path: Path) -> None:
    """`docs/features/` routes the row into that folder: a document below it that links into
    the session fails BS-HARVEST-01 in the census's SQL too, and no document beside the
    folder counts (docs/architecture/ is row 2's own destination)."""
    nested = "docs/features/guides/digest.md"
    repo = _repo(tmp_path, DEMO, "docs/features/", link=False)
    (repo / "docs" / "features" / "guides").mkdir()
    linking = "See [it](/docs/research/demo-brainstorm/thesis.md).\n"
    (repo / nested).write_text(linking, encoding="utf-8")
    (repo / "docs" / "other.md").write_text(linking, encoding="utf-8")
    assert _crawled(tmp_path, "out") == [("fail", f"/{nested}")]
    exists = _crawled(
        tmp_path,
        "out2",
        "SELECT destination_path, destination_exists FROM manifest_destinations "
        "WHERE destination_path LIKE 'docs/features%'",
    )
    assert exists == [("docs/features", True)]
    # A pattern that matches it, read by the check's SQL too.
    manifest = repo / SESSION / "ops" / "manifest.md"
    text = manifest.read_text(encoding="utf-8").replace("docs/features/ |", "docs/*/guides/*.md |")
    manifest.write_text(text, encoding="utf-8")
    assert _crawled(tmp_path, "again") == [("fail", f"/{nested}")]


@pytest.mark.parametrize(
    "cell", ["the feature page", "TBD", "[digest notes]()", "(new page)", "README: new"]
)
def test_a_cell_that_names_no_path_fails_with_a_note(cell: str, tmp_path: Path) -> None:
    status, findings, notes = _harvest(_repo(tmp_path, DEMO, cell))
    assert status == "fail", cell
    assert findings == [
        f"ops/manifest.md could not read: Destination '{cell}' names no repository path"
    ]
    assert notes == ["unreadable-destination"]


@pytest.mark.parametrize(
    "cell", ["—", "-", "none", "https://wiki.example.com/digests", "C:/docs/x.md", "../x.md"]
)
def test_placeholders_urls_and_paths_outside_the_repository_are_no_issue(
    cell: str, tmp_path: Path
) -> None:
    """None of these is a repository document, as before: nothing is read, nothing noted."""
    assert _harvest(_repo(tmp_path, DEMO, cell)) == ("pass", [], [])


@pytest.mark.parametrize(
    "cell",
    [
        "[demo](../../../../../repo/docs/features/demo.md)",
        "../../../../../repo/docs/features/demo.md",
    ],
)
def test_a_destination_that_climbs_out_of_the_repository_and_back_in_is_read(
    cell: str, tmp_path: Path
) -> None:
    """A Destination going from ops/ above the repository root and back in through its name
    (`../../../../../repo/docs/features/demo.md`) names docs/features/demo.md, as the disk
    opens it; it was taken for a path outside the repository and never read, so its link
    into the folder passed BS-HARVEST-01 (found by a hunt)."""
    repo = _repo(tmp_path, DEMO, cell)
    status, findings, notes = _harvest(repo)
    assert (status, notes) == ("fail", []), findings
    assert [f.split(" ", 1)[0] for f in findings] == [f"/{DEMO}"], findings
    rows = _crawled(tmp_path, "out", f"{HARVEST_RESULTS} AND gate = 'move'")
    assert rows == [("fail", f"/{DEMO}")], rows


def test_an_unread_cell_of_an_earlier_round_fails_too(tmp_path: Path) -> None:
    """Every round's destinations are BS-HARVEST-01's documents (spec §5: the manifest
    rows'), so a cell of round 1 that names no path hides one as much as round 2's would."""
    repo = _repo(tmp_path, DEMO, "docs/features/demo.md", link=False)
    manifest = repo / SESSION / "ops" / "manifest.md"
    earlier = (
        "# Harvest manifest — demo\nRound: 1\nStatus: proposed\n\n"
        "| # | What | Source | Destination | Action |\n|---|---|---|---|---|\n"
        "| 1 | x | thesis | the feature page | create |\n\n"
    )
    text = manifest.read_text(encoding="utf-8").replace("Round: 1", "Round: 2")
    manifest.write_text(earlier + text.split("\n", 1)[1], encoding="utf-8")
    status, findings, notes = _harvest(repo)
    assert (status, notes) == ("fail", ["unreadable-destination"]), findings


@pytest.mark.parametrize(
    ("cell", "paths"),
    [
        ("[d](docs/a%20b.md)", ["docs/a b.md"]),
        ("[d](<docs/a b.md>)", ["docs/a b.md"]),
        ("[d](<docs/a%20b.md>)", ["docs/a b.md"]),
        ("[d](<docs/a (b).md>)", ["docs/a (b).md"]),
        ("[d](docs/a(b).md)", ["docs/a(b).md"]),
        ("[d](docs/a(b).md) [e](docs/e.md)", ["docs/a(b).md", "docs/e.md"]),
        ("![d](<docs/a b.png>)", ["docs/a b.png"]),
        ("docs/a%20b.md", ["docs/a b.md"]),
        ("docs/a.md: new page", ["docs/a.md"]),
        ("docs/a.md:12", ["docs/a.md"]),
        ("docs/a.md(new)", ["docs/a.md"]),
        ("docs/a(b).md", ["docs/a(b).md"]),
        ("docs/x/(new)", ["docs/x"]),
        ("docs/a.md - new", ["docs/a.md"]),
        ("`docs/a b.md`: new", ["docs/a b.md"]),
        ("docs/a b.md", ["docs/a b.md"]),
        ("docs/a.md & docs/b.md", ["docs/a.md", "docs/b.md"]),
        ("docs/a.md + docs/b.md", ["docs/a.md", "docs/b.md"]),
        ("docs/a+b.md", ["docs/a+b.md"]),
        ("docs/a&b.md", ["docs/a&b.md"]),
        ("docs/features/release notes.md", ["docs/features/release notes.md"]),
        ("docs/x/ new folder", ["docs/x"]),
        ("docs/guide then prose", ["docs/guide"]),
        ("docs/a.md: new, docs/b.md: too", ["docs/a.md", "docs/b.md"]),
        # Links side by side are one destination each (the second was dropped).
        ("[a](docs/a.md) [b](docs/b.md)", ["docs/a.md", "docs/b.md"]),
        ("docs/a.md (new) [b](docs/b.md)", ["docs/a.md", "docs/b.md"]),
        ("docs/a\\_b.md", ["docs/a_b.md"]),
        # Commentary glued on with no space, by a mark no name goes on with (found by a hunt:
        # read as a document that does not exist, whose links were never read).
        ("docs/a.md—new page", ["docs/a.md"]),
        ("docs/a.md→create", ["docs/a.md"]),
        ("docs/a.md\uff08new\uff09", ["docs/a.md"]),
        ("\u00abdocs/a.md\u00bb", ["docs/a.md"]),
        ("docs/a.md\uff0cdocs/b.md", ["docs/a.md", "docs/b.md"]),
        ("docs/a.md\u3001docs/b.md", ["docs/a.md", "docs/b.md"]),
        ("docs/a.mdx", ["docs/a.mdx"]),
        ("docs/a.md.orig", ["docs/a.md.orig"]),
        ("`docs/a\\_b.md`", ["docs/a\\_b.md"]),  # a code span keeps its backslashes
        # A footnote's mark is no part of the path (until 2026-12-07 it was, naming no file).
        ("docs/a.md[^1]", ["docs/a.md"]),
        ("[a](docs/a.md)[^note], docs/b.md", ["docs/a.md", "docs/b.md"]),
        ("docs/a.md\u00b9 (new)", ["docs/a.md"]),
        ("docs/a\u00b2.md", ["docs/a\u00b2.md"]),
        ("https://wiki.example.com/x", [None]),
        ("<https://wiki.example.com/x>", [None]),
        ("mailto:team@example.com", [None]),
        ("C:/docs/a.md", [None]),
        ("C:\\docs\\a.md", [None]),
        ("//host/docs/a.md", [None]),
        ("%2e%2e/a.md", [None]),
        ("—", [None]),
        ("(new page)", [None]),
        ("[d]()", [None]),
    ],
)
def test_a_destination_cell_reads_as_these_paths(cell: str, paths: list[str | None]) -> None:
    assert [path for _, path in destinations(cell)] == paths


@pytest.mark.parametrize(
    ("cell", "issue"),
    [
        ("docs/a.md: new page", False),
        ("https://wiki.example.com/x", False),
        ("—", False),
        ("LICENSE", False),  # a file of that name exists
        ("the feature page", True),
        ("(new page)", True),
        ("[d]()", True),
        ("docs/a.md, TBD", True),
    ],
)
def test_a_cell_that_names_no_path_is_a_parse_issue(cell: str, issue: bool) -> None:
    text = (
        "Round: 1\nStatus: applied\n\n| # | What | Source | Destination | Action |\n"
        f"|---|---|---|---|---|\n| 1 | x | thesis | {cell} | create |\n"
    )
    rec = Records("sid")
    parse_manifest(decode(text.encode(), "ops/manifest.md", rec), rec, {"LICENSE"}.__contains__)
    found = [(i["line"], i["code"], i["rule_id"]) for i in rec.of("parse_issues")]
    assert found == ([(6, "unreadable-destination", "BS-HARVEST-01")] if issue else [])


def test_a_link_with_a_backslash_escape_is_read(tmp_path: Path) -> None:
    """`demo\\-brainstorm` is `demo-brainstorm` to CommonMark: the document was never parsed,
    since its raw text did not name the folder, and BS-HARVEST-01 passed."""
    repo = _repo(tmp_path, DEMO, "docs/features/demo.md", link=False)
    document = repo / DEMO
    escaped = "\nSee [the brainstorm](../research/demo\\-brainstorm/thesis.md).\n"
    document.write_text(document.read_text(encoding="utf-8") + escaped, encoding="utf-8")
    status, findings, _ = _harvest(repo)
    assert status == "fail" and any("links into" in f for f in findings), findings


def _package_session(repo: Path, package: str) -> None:
    """Another team's open session under `package`/docs/research/, which makes `package` a
    repository root of its own (spec §2) inside the repository."""
    folder = repo / package / "docs" / "research" / "x-brainstorm"
    folder.mkdir(parents=True)
    (folder / "state.md").write_text("# State\n- Status: open\n", encoding="utf-8")


def test_a_package_with_sessions_of_its_own_keeps_its_documents_in_the_repository(
    tmp_path: Path,
) -> None:
    """A monorepo's pkg/ with a docs/research/ session of its own claimed every file under it,
    so the Destination pkg/README.md, which exists and links into the session, was not read:
    BS-HARVEST-01 passed and the folder read clean. A pkg/ with a .git of its own is another
    repository, whose files stay its own."""
    repo = _repo(tmp_path, DEMO, "pkg/README.md", link=False)
    (repo / "pkg").mkdir()
    (repo / "pkg" / "README.md").write_text(
        "[notes](../docs/research/demo-brainstorm/)\n", encoding="utf-8"
    )
    _package_session(repo, "pkg")
    status, findings, _ = _harvest(repo)
    assert status == "fail" and findings[0].startswith("/pkg/README.md "), findings
    crawl([str(repo.parent)], str(tmp_path / "out"), workers=1)
    check(str(tmp_path / "out"))
    query = (
        "SELECT path, status FROM statuses WHERE rule_id = 'BS-HARVEST-01' AND status <> 'skipped'"
    )
    con = duckdb.connect(str(tmp_path / "out" / "census.duckdb"), read_only=True)
    assert con.execute(query).fetchall() == [(SESSION, "fail")]
    (repo / "pkg" / ".git").mkdir()
    status, findings, _ = _harvest(repo)
    assert status == "pass", findings


def test_a_package_with_sessions_of_its_own_is_read_for_a_harvested_session(
    tmp_path: Path,
) -> None:
    """History: every Markdown document of the repository counts, a package's README too."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "harvested" / "repo", tmp_path / "repo")
    (repo / "pkg").mkdir()
    (repo / "pkg" / "README.md").write_text(
        "[why](../docs/history/brainstorms/demo/thesis.md)\n", encoding="utf-8"
    )
    _package_session(repo, "pkg")
    detection = detect(str(repo / "docs" / "history" / "brainstorms" / "demo"), "move")
    outcome = next(o for o in detection.outcomes if o.rule == "BS-HARVEST-01")
    assert outcome.status == "fail"
    assert [f["file"] for f in outcome.findings] == ["/pkg/README.md"]


def _document_says(tmp_path: Path, text: str) -> tuple[str, list[str], list[str]]:
    """BS-HARVEST-01 at the move gate when the destination document docs/features/demo.md
    holds `text` after its own (and no other link into the session folder)."""
    repo = _repo(tmp_path, DEMO, DEMO, link=False)
    (repo / DEMO).write_text((repo / DEMO).read_text(encoding="utf-8") + text, encoding="utf-8")
    return _harvest(repo)


def test_a_link_after_a_deeply_nested_list_is_found_or_the_document_is_unread(
    tmp_path: Path,
) -> None:
    """A list nested ten deep stopped the Markdown parser, which dropped the rest of the
    document without a word: a link into the folder after it was no link, and BS-HARVEST-01
    passed (found by a hunt). Ten levels are read now; a document nested past the parser's
    limit is a document not read (`too-deep`), which fails the rule."""
    nested = "".join(f"{'  ' * i}- level {i}\n" for i in range(10))
    status, findings, _ = _document_says(tmp_path / "ten", f"\n{nested}{LINK}")
    assert status == "fail" and any("thesis.md" in f for f in findings), findings
    deeper = "".join(f"{'  ' * i}- level {i}\n" for i in range(60))
    status, findings, codes = _document_says(tmp_path / "sixty", f"\n{deeper}{LINK}")
    assert status == "fail" and "too-deep" in codes, (findings, codes)


def test_a_table_cell_is_read_on_its_own(tmp_path: Path) -> None:
    """GitHub splits a table row at its pipes before reading a cell: a backtick alone in one
    cell opens no code span, so the link in the next cell is a link (it was hidden, and the
    folder passed BS-HARVEST-01; found by a hunt)."""
    table = (
        "\n| character | meaning | see |\n|---|---|---|\n"
        "| ` | command substitution | [notes](../research/demo-brainstorm/thesis.md) |\n"
        "| `x` | quoted | - |\n"
    )
    status, findings, _ = _document_says(tmp_path, table)
    assert status == "fail" and any("thesis.md" in f for f in findings), findings


def test_a_second_definition_of_a_label_is_a_link_too(tmp_path: Path) -> None:
    """Every reference-style definition is a link (spec §3.1), a label's second one too,
    though its uses lead to the first (it passed: the parser kept only the first)."""
    text = "\n[n]: ../architecture/overview.md\n[n]: ../research/demo-brainstorm/thesis.md\n"
    status, findings, _ = _document_says(tmp_path, text)
    assert status == "fail" and any("thesis.md" in f for f in findings), findings


@pytest.mark.parametrize("cell", [f"{DEMO}—new page", f"{DEMO}→create", f"{DEMO}\uff08new\uff09"])
def test_a_destination_with_commentary_glued_on_is_read(cell: str, tmp_path: Path) -> None:
    """A Destination with commentary glued to its name by a mark no name goes on with was
    read as a document that does not exist: the real one's link into the folder was never
    read, and BS-HARVEST-01 passed (found by a hunt)."""
    status, findings, _ = _harvest(_repo(tmp_path, DEMO, cell))
    assert status == "fail" and any("thesis.md" in f for f in findings), findings


@pytest.mark.parametrize("gate", ["session", "manifest", "move"])
def test_a_one_word_destination_naming_a_file_is_no_note_at_any_gate(
    gate: str, tmp_path: Path
) -> None:
    """`CHANGELOG`, a file at the repository root: below the move gate detect lists no
    repository, and noted that the cell named no path, which the crawl and the move gate
    did not (found by a hunt)."""
    repo = _repo(tmp_path, DEMO, DEMO, link=False)
    (repo / "CHANGELOG").write_text("# changes\n", encoding="utf-8")
    manifest = repo / SESSION / "ops" / "manifest.md"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(
        text.replace(OTHER_2, OTHER_2.replace("docs/architecture/overview.md", "CHANGELOG")),
        encoding="utf-8",
    )
    assert "| CHANGELOG |" in manifest.read_text(encoding="utf-8")
    detection = detect(str(repo / SESSION), gate)
    assert detection.notes == [], detection.notes
