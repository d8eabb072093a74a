"""ops/manifest.md: rounds, status, the routing table and the uselessness test."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from pipeline.parse.blocks import (
    PREFIX_RE,
    Block,
    Document,
    Heading,
    Item,
    Paragraph,
    Table,
    html_kind,
    parse,
    split_cells,
)
from pipeline.parse.lexical import (
    ESCAPED_RE,
    MARKDOWN_SUFFIXES,
    Rows,
    bare,
    decoded,
    inline_text,
    remarks_in,
    shown,
    token,
    unescaped,
)
from pipeline.parse.lexical import field as field_of
from pipeline.parse.links import back_inside
from pipeline.parse.reading import (
    HIDDEN_HTML,
    as_fields,
    fields,
    first_line,
    line_below,
    note_heading_field,
    note_html_fields,
    note_unread,
    number,
    own_lines,
    repeated,
    section,
    table_fields,
    unclosed_block,
    untagged,
)
from pipeline.parse.records import Records

FILE = "ops/manifest.md"
_FIELDS = {
    "round": "round",
    "status": "status",
    "result": "useless_result",
    "cold-reader allowed paths": "cold_reader_paths",
    "gaps": "gaps",
}
_NAMES = {key: name.capitalize() for name, key in _FIELDS.items()}
_NOT_ROUND = {name: key for name, key in _FIELDS.items() if key != "round"}
_STATUSES = ("proposed", "approved", "applied")
# A heading that gives one of these fields a value it takes is meant as the field
# (`### Result: fail`); any other is a section heading (reading.note_heading_field).
_IN_HEADING: dict[str, Callable[[str], bool]] = {
    "status": lambda value: token(value, _STATUSES) is not None,
    "useless_result": lambda value: token(value, ("pass", "fail")) is not None,
}
_ROUND_RE = re.compile(r"(\d+)(?![\w.])")
# A table's header row that gives one of these fields a value it takes (`| Round | 2 |`
# over `|---|---|`) is meant as the field (reading.table_fields).
_IN_TABLE_HEADER: dict[str, Callable[[str], bool]] = {
    **_IN_HEADING,
    "round": lambda value: _ROUND_RE.match(bare(value)) is not None,
}
_USELESS = ("useless_result", "cold_reader_paths", "gaps")
# The rule that cannot be shown to hold when a field is given twice in a round, differently.
_NEEDED_BY = {"status": "BS-MANIFEST-01", "useless_result": "BS-USELESS-01"}
_COLUMNS = ("#", "what", "source", "destination", "action")
# A Markdown link or image, `[text](<target> "title")`, whose text holds no `[`: tried
# only on a cell cut after its last `)`, every attempt stops at the next bracket or ends
# in a match, so no attempt rescans the cell (`[^\]]*+` did, from each `[` of `[[[…`).
# Its target may hold balanced parentheses (`docs/a(v2).md`), as CommonMark's do.
_LINK_RE = re.compile(r"!?\[[^\[\]]*+\]\(\s*+<?((?:[^()>\s]++|\([^()>\s]*+\))*+)>?[^)]*+\)")
# A `[` inside a link's text: the link then starts at the first `[` (found by _scan).
_NESTED_RE = re.compile(r"\[[^\[\]]*+\[")
# What follows a link's `](`, matched only up to the link's `)`.
_TARGET_RE = re.compile(r"\s*+<?((?:[^()>\s]++|\([^()>\s]*+\))*+)")
# ` and ` (or ` & `, ` + `: the same word, spaced) starts only where a run of spaces starts:
# tried at every space of a long run, `\s+and` rescans the rest of the run each time
# (quadratic).
_SPLIT_RE = re.compile(r"<br\s*/?>|[,;，；、]|(?<!\s)\s++(?:and|&|\+)\s+", re.I)
# A Markdown document's name and a mark that no name or path goes on with: commentary glued to
# the name (`docs/a.md—new`); `docs/a.mdx`, `docs/a.md.bak`, `docs/a.md%20x` go on.
_GLUED_RE = re.compile(
    rf"(.+?(?:{'|'.join(re.escape(s) for s in MARKDOWN_SUFFIXES)}))(?=[^\w.%/\\~+-])", re.I
)
# A `)` and spaces before a link's `[text](`: the end of one link (or of commentary), then
# another destination.
_SIDE_BY_SIDE_RE = re.compile(r"\)[ \t]++(?=!?\[[^\[\]]*+\]\()")
# A link target in angle brackets, which CommonMark lets hold spaces and `)`: each `<`
# starts at most one attempt and it stops at the next `<` or `>`, so the cell is read once.
_ANGLED_RE = re.compile(r"(\]\(\s*+<)([^<>\n]*+)>")
# A URL scheme (`https:`, `mailto:`) or a drive (`C:`) with text after its colon: no
# repository path. A path's own `.` or `/` comes before any colon, so `a.md:` is no scheme.
_ELSEWHERE_RE = re.compile(r"[A-Za-z][A-Za-z0-9+-]*+:(?=\S)|//")
# How a path ends (an extension, or a folder's `/`) where commentary may follow.
_PATH_END_RE = re.compile(r"(?:\.[A-Za-z0-9]++|/)\Z")
# A single word (`TBD`, `wiki`, the first word of prose): a path only if it names a file.
_WORD_RE = re.compile(r"[\w-]+")
# Around a word read as a path: brackets and quotes (emphasis and code marks are dropped
# as before), and sentence punctuation after a word's last letter or `/`.
_OPENING = "[{\"'“‘«‹「"
_CLOSING = "]}\"'”’»›」"
_SENTENCE_END_RE = re.compile(r"(?<=[\w/])[.,;!?]++\Z")
_EXTENSION_RE = re.compile(r"\.[A-Za-z0-9]++\Z")
_ALNUM_RE = re.compile(r"[A-Za-z0-9]")
# Cells that say there is no destination (a row whose content is dropped).
_PLACEHOLDERS = {"", "-", "--", "—", "–", "none", "n/a", "(none)"}


@dataclass(frozen=True)
class _Links:
    """What a Destination cell's links resolve against: the session folder (a relative link
    goes from ops/, as a rendered link does) and the file's reference definitions."""

    folder: str = ""
    references: dict[str, str] = field(default_factory=dict)
    # The folders the repository root sits in (links.resolve): a path climbing out comes back.
    root: tuple[str, ...] = ()


# A reference definition, `[label]: target` (up to three spaces in); a target in angle
# brackets may hold spaces.
_DEFINITION_RE = re.compile(r" {0,3}\[([^\]]+)\]:[ \t]*+(?:<([^<>\n]*+)>|([^\s<>]++))")
# A full or collapsed reference link, `[text][label]` or `[text][]`: its text holds no
# bracket, so an attempt from each `[` of a run of them stops at the next one.
# A footnote's mark after a path shows as a superscript number, no part of the path
# (`docs/a.md[^1]`, `docs/a.md¹`): until 2026-12-07 the path read with it named no file, and
# the destination passed as not created yet.
_FOOTNOTE_MARK_RE = re.compile(
    r"\[\^[^\[\]\s]++\]|(?<=\S)[\u00b9\u00b2\u00b3\u2070\u2074-\u2079]++(?![\w./-])"
)
_REFERENCE_RE = re.compile(r"!?\[([^\[\]]*+)\]\[([^\[\]]*+)\]")


_NOWHERE = _Links()


def _definitions(lines: list[str], doc: Document) -> dict[str, str]:
    """The file's reference definitions as CommonMark reads them: the first of a label wins,
    one in a code or HTML block is text, and an angled target keeps its spaces (escaped, as
    destination_path decodes them). Until stop 67 the last won, a fenced one counted and
    `<docs/a b.md>` was cut at its space (found by a hunt)."""
    hidden = {n for first, last in (*doc.code, *doc.html) for n in range(first, last + 1)}
    found: dict[str, str] = {}
    for n, line in enumerate(lines, 1):
        if "]:" in line and n not in hidden and (m := _DEFINITION_RE.match(line)):
            target = m[3] if m[2] is None else m[2].replace(" ", "%20").replace("\t", "%09")
            found.setdefault(_label(m[1]), target)
    return found


def _label(text: str) -> str:
    return " ".join(text.split()).casefold()


def parse_manifest(
    lines: list[str],
    rec: Records,
    exists: Callable[[str], bool] = lambda _: False,
    folder: str = "",
    root: tuple[str, ...] = (),
) -> None:
    """`folder`: the session folder, repository-relative (a link relative to ops/ resolves
    from it); `root`: the folders the repository root sits in, its own name last."""
    current = _new_round(None, None)
    rounds = 0
    useless = 0  # the uselessness test section's heading level; 0 outside it
    round_heading: Heading | None = None  # a `## Round N` heading no `Round:` line followed
    rows: list[dict[str, Any]] = []
    listed: list[tuple[int, str]] = []  # list lines naming a document: routes, if no table is
    tables = 0  # routing tables read
    doc = parse(lines)
    links = _Links(folder, _definitions(lines, doc), root)
    # A fence or a comment never closed hides the rest of the file (spec §3.1: fail closed).
    unclosed_block(doc, rec, FILE, "BS-MANIFEST-01")
    in_html = note_html_fields(rec, FILE, doc, lines, _FIELDS, _unread_rule)
    for index, block in enumerate(doc.blocks):
        in_html = _unread_html(rec, in_html, first_line(block), current)
        block = as_fields(block, _FIELDS)
        if isinstance(block, Heading):
            _unread_heading(rec, block, current, line_below(doc.blocks, index, _FIELDS))
            if _in_test(block, useless, current):
                continue
            _unread_round(rec, round_heading)
            round_heading = block if _names_round(block.text) else None
            useless = _test_heading(rec, block)
            continue
        if isinstance(block, Table):
            _unread(rec, block, current)
            if _table(block, current, rows, links, rec):
                tables += 1
            elif not useless:
                _unread_table(rec, block)
            continue
        _unread(rec, block, current)
        if isinstance(block, Item) and not useless and not fields(block, _FIELDS):
            listed += [(n, text) for n, text in block.all_lines() if _names_document(text)]
        if current["has_table"] and isinstance(block, Paragraph | Item):
            _stray_rows(rec, block)
        elif isinstance(block, Paragraph) and not useless:
            _no_table(rec, block)
        for key, value, line in _preamble_first(block):
            if key == "round":
                rounds += 1
                num = _after(rec, current["round"] if rounds > 1 else None, value, line)
                current = _next_round(current, rows, num, line, rounds)
                useless, round_heading = 0, None
            else:
                _round_field(rec, current, key, value, line, bool(useless))
    _unread_html(rec, in_html, len(lines) + 1, current)
    _unread_round(rec, round_heading)
    _html_tables(rec, doc, lines)
    _listed_routes(rec, listed, tables)
    _write(rec, current, rounds, rows, exists)


def _names_document(text: str) -> bool:
    """Whether a line names a document in a folder (`docs/features/x.md`, or a link to one),
    as a route's destination does; a session file (`forks.md`) names none."""
    if ".md" not in text.lower():
        return False
    targets = [m[1] for m in _LINK_RE.finditer(text)] if "](" in text else []
    words = [word.strip("`*_()[]<>\"'.,;:") for word in text.split()]
    return any("/" in w and w.lower().endswith(".md") for w in [*targets, *words])


def _listed_routes(rec: Records, listed: list[tuple[int, str]], tables: int) -> None:
    """Routes written as a list (`- parked fork F7 → docs/open-questions.md (append)`) in a
    manifest with no routing table: they are not read as rows, so neither the routes
    (BS-MANIFEST-01) nor the destinations' links into the folder (BS-HARVEST-01) can be
    shown to hold (§3.1, fail closed; until stop 56 BS-HARVEST-01 passed on no destinations).
    `tables`: the routing tables read."""
    if tables:
        return  # beside a routing table that is read, such a line is prose about the routes
    for line, text in listed:
        message = (
            f"'{text.strip()[:80]}' names a document as a route would, but routes are read "
            "only from the routing table (`| # | What | Source | Destination | Action |`)"
        )
        _unread_routes(rec, line, message, "unread-routes")


# A row of an HTML table, and the text of each of its cells (a closing tag may be left out).
_HTML_ROW_RE = re.compile(r"<tr\b[^>]*+>(.*?)(?=<tr\b|</table|\Z)", re.I | re.S)
_HTML_CELL_RE = re.compile(r"<t[hd]\b[^>]*+>(.*?)(?=<t[hd]\b|</t[hd]\s*>|</tr|\Z)", re.I | re.S)


def _html_tables(rec: Records, doc: Document, lines: list[str]) -> None:
    """The routing table inside an HTML block: written as `<table>` (`<tr><th>#</th>…`) or as
    GFM rows an HTML block swallows (`<details>` right over `| # | What | …`). The page shows
    its rows, but CommonMark reads no table there, so neither the routes (BS-MANIFEST-01) nor
    the destinations' links into the folder (BS-HARVEST-01) can be shown to hold (§3.1, fail
    closed; until stop 55 BS-HARVEST-01 passed over a destination linking back, found by two
    hunts). One inside a comment is hidden on the page, meant as nothing."""
    for first, last in doc.html:
        opening = lines[first - 1]
        if html_kind(opening, PREFIX_RE.match(opening).end()) in HIDDEN_HTML:  # type: ignore[union-attr]
            continue
        block = lines[first - 1 : last]
        text = "\n".join(block)
        row_of = Rows(text).of
        rows = [
            (row_of(m.start()), _HTML_CELL_RE.findall(m[1])) for m in _HTML_ROW_RE.finditer(text)
        ]
        rows += [(n, split_cells(t)) for n, t in enumerate(block) if t.lstrip(" \t")[:1] == "|"]
        for at, cells in sorted(rows, key=lambda row: row[0]):
            names = [bare(shown(untagged(cell))).strip().lower() for cell in cells]
            if len(names) >= 3 and _routing(names):
                message = (
                    "the routing table is written inside an HTML block, where CommonMark reads "
                    "no table, so its rows are not routes; write it as a GFM table outside HTML"
                )
                _unread_routes(rec, first + at, message)
                break


def _stray_rows(rec: Records, block: Paragraph | Item) -> None:
    """Lines written as routing rows after the table ended (a blank line between, so GFM
    reads a paragraph, not rows; or right under a list item, `- added after approval:`,
    whose text they become): their destinations are not read, so neither the routes
    (BS-MANIFEST-01) nor the destinations' links into the folder (BS-HARVEST-01) can be
    shown to hold (§3.1, fail closed; rows under an item passed, found by a hunt)."""
    for line, text in block.all_lines() if isinstance(block, Item) else block.lines:
        if text.lstrip(" \t").startswith("|") and len(split_cells(text)) >= 3:
            where = (
                "right under a list item, whose text it becomes"
                if isinstance(block, Item)
                else "after the table ended above it (a blank line)"
            )
            message = (
                f"'{text.strip()[:80]}' is written as a routing row, but {where}, so it is "
                "not read; keep the rows together in the table"
            )
            _unread_routes(rec, line, message, "row-outside-table")


def _round_field(
    rec: Records, current: dict[str, Any], key: str, value: str, line: int, in_test: bool
) -> None:
    """A round's Status, or a field of its uselessness test inside that section, is read;
    a test field outside the section is noted (_outside_test)."""
    if key == "status" or in_test:
        _field(rec, current, key, value, line)
    else:
        _outside_test(rec, key, value, line)


def _outside_test(rec: Records, key: str, value: str, line: int) -> None:
    """A field of the uselessness test written outside its section (under `## Second cold
    reader`, `## Uselessness-test rerun`): not read, yet a reader takes it for the test's, so
    it is noted and fails BS-USELESS-01 (§3.1, fail closed; a failing re-run so written
    passed, found by a hunt)."""
    message = (
        f"'{_NAMES[key]}: {value[:60]}' is written outside the '## Uselessness test' "
        "section, where it is not read; move it under that heading"
    )
    rec.issue(FILE, line, "unread-field", message, "BS-USELESS-01")


# A field of the test written into its section's heading, after the name and a separator
# (`## Uselessness test — Result: fail`, `## Uselessness test (Gaps: none)`).
_FIELD_AFTER_NAME_RE = re.compile(
    r"uselessness[ \t]++test\W*+((?:result|gaps|cold-reader allowed paths)[ \t]*+[:\uff1a].*)",
    re.I,
)


def _test_heading(rec: Records, block: Heading) -> int:
    """The level of the uselessness test section's heading, 0 for any other heading; a field
    of the test written into it is noted (_field_in_test_heading)."""
    if section(block.text, ("uselessness test",)) is None:
        return 0
    _field_in_test_heading(rec, block)
    return block.level


def _field_in_test_heading(rec: Records, block: Heading) -> None:
    """A field of the uselessness test given in the section's heading: a field is a bullet or
    a line of its own (spec §3.1), so it is not read, and a reader takes it for the test's;
    it fails BS-USELESS-01 rather than a `Result: pass` below it passing the test the
    heading says failed (found by a hunt)."""
    m = _FIELD_AFTER_NAME_RE.search(bare(block.text))
    parsed = field_of(m[1]) if m else None
    if parsed is None or parsed[0] not in _FIELDS or not parsed[1].strip(" \t\xa0*_`)"):
        return
    written = f"{'#' * block.level} {block.text}"
    message = (
        f"'{written.strip()[:80]}' gives the test's {_NAMES[_FIELDS[parsed[0]]]} in its "
        "heading, where it is not read; write it as a line of its own under the heading"
    )
    rec.issue(FILE, block.line, "unread-field", message, "BS-USELESS-01")


def _unread_rule(key: str, _value: str) -> str:
    return "BS-USELESS-01" if key in _USELESS else "BS-MANIFEST-01"


def _unread(rec: Records, block: Block, current: dict[str, Any]) -> None:
    """Fields the reader does not see (`Round: 2` lazily under `- Gaps: none`, `Status:`
    right under the table, a row to GFM): each fails the rule that needs it, and a Round
    or Status so hidden below an applied round fails the move rule too, which would pass
    on the round it sees."""
    hidden = note_unread(rec, FILE, block, _FIELDS, _unread_rule, _IN_TABLE_HEADER)
    _not_last(rec, hidden + _round_lines(rec, block), current)


# A line that names a round but is no `Round:` line (`Round 2: proposed`, `**Round 2** —
# status: proposed`): the round's number then ends the line or a mark follows it (a
# fullwidth colon too, as field names take it).
_ROUND_LINE_RE = re.compile(
    r"[ \t]*+[*_`]*+Round[*_`]*+[ \t]++#?+(\d+)[*_`]*+(?:[ \t]*+[:\uff1a(\u2014\u2013·|-]|$)"
)


def _round_lines(rec: Records, block: Block) -> list[tuple[str, str, str, int, str]]:
    """Each line meant as a round that is no `Round:` line: it starts no round, so the
    round's lines would join the one above; BS-MANIFEST-01 fails (found by a hunt)."""
    found = []
    for line, text in own_lines(block):
        m = _ROUND_LINE_RE.match(text)
        if m is None or ((named := field_of(text)) is not None and named[0] == "round"):
            continue
        message = f"'{text.strip()[:80]}' is meant as a round but is no 'Round: N' line"
        rec.issue(FILE, line, "malformed-field", message, "BS-MANIFEST-01")
        found.append(("round", "Round", m[1], line, "malformed-field"))
    return found


def _unread_heading(rec: Records, block: Heading, current: dict[str, Any], below: str) -> None:
    """A Status or a uselessness-test field written as a heading (its value in it or on the
    line `below` it) is not read: it fails the rule that needs it, and below an applied
    round the move rule too, as a hidden one does (a Round heading is a `round-heading` of
    its own)."""
    found = note_heading_field(rec, FILE, block, _NOT_ROUND, _IN_HEADING, _unread_rule, below)
    if found is not None:
        key, value, line = found
        _not_last(rec, [(key, _NAMES[key], value, line, "unread-field")], current)


def _unread_html(
    rec: Records, in_html: list[tuple[str, str, int]], before: int, current: dict[str, Any]
) -> list[tuple[str, str, int]]:
    """The fields hidden in an HTML block above line `before` (already noted) fail the move
    rule as a lazily hidden one does, when they stand below an applied round; the rest."""
    gone = sum(1 for _, _, line in in_html if line < before)
    if gone:
        hidden = [(key, _NAMES[key], value, line, "unread-field") for key, value, line in in_html]
        _not_last(rec, hidden[:gone], current)
    return in_html[gone:]


def _not_last(
    rec: Records, hidden: list[tuple[str, str, str, int, str]], current: dict[str, Any]
) -> None:
    """A Round or Status not read below an applied round: the move rule would pass on the
    round it sees, though the manifest may end on a later one."""
    for key, name, value, line, code in hidden:
        if key == "round":
            # The round read may not be the page's current one, nor its test that round's
            # (found by a hunt: a hidden `Round: 2` under `- Gaps: none` passed round 1's).
            message = (
                f"'{name.capitalize()}: {value[:60]}' is not read, so the uselessness test "
                "read may be an earlier round's"
            )
            rec.issue(FILE, line, code, message, "BS-USELESS-01")
    if current["status"] is None:
        # Weighed when the round's Status is read (_field), should it say applied.
        current["unread_status"] += [h for h in hidden if h[0] == "status"]
    if current["status"] != "applied":
        return
    for key, name, value, line, code in hidden:
        if key in ("round", "status"):
            message = (
                f"'{name.capitalize()}: {value[:60]}' is not read, so the manifest may not "
                "end on the applied round the move is checked on"
            )
            rec.issue(FILE, line, code, message, "CENSUS-MOVE-01")


def _preamble_first(block: Block) -> list[tuple[str, str, int]]:
    """A block's fields, the first `Round:` first: the fields written above it in its own
    paragraph are its round's preamble (`Status:` then `Round:` on the next line)."""
    found = fields(block, _FIELDS)
    at = next((i for i, (key, _, _) in enumerate(found) if key == "round"), 0)
    return [found[at], *found[:at], *found[at + 1 :]] if at else found


def _next_round(
    current: dict[str, Any], rows: list[dict[str, Any]], num: int | None, line: int, rounds: int
) -> dict[str, Any]:
    """The round a `Round:` line starts. What came before the first one belongs to it, as
    there is no earlier round (spec §3: a *later* `Round:` line starts a new round)."""
    if rounds > 1:
        return _new_round(num, line)
    current.update(round=num, round_line=line)
    for row in rows:
        row["round"] = num
    return current


def _field(rec: Records, current: dict[str, Any], key: str, value: str, line: int) -> None:
    """A Status, or a field of the uselessness test, of the current round; given twice,
    the first counts and a second that differs fails the rule that needs it (§3.1)."""
    given: dict[str, str] = current["given"]
    if key in given:
        first = given[key]
        repeated(rec, FILE, line, _NAMES[key], first, value, _NEEDED_BY.get(key))
        differs = bare(value).lower() != bare(first).lower()
        if key == "status" and differs and current["status"] == "applied":
            # The move rule would pass on the first of two Statuses that disagree.
            message = f"Status 'applied' is contradicted by a second 'Status: {value[:60]}'"
            rec.issue(FILE, line, "duplicate-field", message, "CENSUS-MOVE-01")
        return
    given[key] = value
    if key == "status":
        current["status"] = token(value, _STATUSES) or bare(value)
        current["status_line"] = line
        _applied_over(rec, current)
    elif key == "useless_result":
        current[key] = token(value, ("pass", "fail")) or bare(value)
        current["useless_result_line"] = line
    else:
        current[key] = value


def _applied_over(rec: Records, current: dict[str, Any]) -> None:
    """A round's Status read as applied after one of the round's Statuses was noted but not
    read (a heading, a sub-item, a malformed line) that says otherwise: the move rule would
    pass on the one read, as on the first of two Statuses, so it fails (§3.1, fail closed)."""
    if current["status"] != "applied":
        return
    for _, name, value, line, code in current["unread_status"]:
        if token(value, _STATUSES) != "applied":
            message = f"Status 'applied' is contradicted by '{name}: {value[:60]}', not read"
            rec.issue(FILE, line, code, message, "CENSUS-MOVE-01")


def _in_test(block: Heading, useless: int, current: dict[str, Any]) -> bool:
    """Whether a heading is a subheading of the uselessness test section (`### Round 1` over
    its Result); one naming another round than the current (`### Round 2 — gap fixes`) is
    meant as a new round and ends the section (found by a hunt: its table joined the
    applied round, and the move gate passed)."""
    if not useless or block.level <= useless:
        return False
    m = _ROUND_RE.search(bare(block.text)) if _names_round(block.text) else None
    return m is None or int(m[1]) == current["round"]


def _names_round(text: str) -> bool:
    """Whether a heading reads as a round (`## Round 2`, `## Round: 2`)."""
    if section(text, ("round",)) is None:
        return False
    return bare(text)[5:].lstrip(" \t:#*_`")[:1].isdigit()


def _unread_round(rec: Records, heading: Heading | None) -> None:
    """A `## Round N` heading with no `Round:` line under it is meant as a round but is a
    heading, not a field (§3.1: a field is a bullet or a line of its own): it starts no
    round, so BS-MANIFEST-01 fails rather than the round's lines silently joining the last."""
    if heading is not None:
        message = f"heading '{heading.text[:80]}' is no 'Round:' line, so it starts no round"
        # The page names a later round than the one read: each rule reading the current
        # round fails, as for a round out of order (its test may be an earlier round's).
        for rule in _CURRENT_ROUND_RULES:
            rec.issue(FILE, heading.line, "round-heading", message, rule)


# The rules that read the manifest's current round, which a round out of order leaves unknown.
_CURRENT_ROUND_RULES = ("BS-MANIFEST-01", "CENSUS-MOVE-01", "BS-USELESS-01")


def _after(rec: Records, above: int | None, value: str, line: int) -> int | None:
    """The number of a `Round:` line; one not greater than the round above it (`Round: 2`
    written above `Round: 1`, newest first) leaves the current round unknown, since the last
    in file order is read as it: each rule that reads it fails (spec §3.1, fail closed)."""
    num = _round(value, line, rec)
    if num is not None and above is not None and num <= above:
        message = (
            f"Round {num} does not come after Round {above} above it; the last round in the "
            "file is read as the manifest's current state, so write rounds oldest first"
        )
        for rule in _CURRENT_ROUND_RULES:
            rec.issue(FILE, line, "round-order", message, rule)
    return num


def _round(value: str, line: int, rec: Records) -> int | None:
    m = _ROUND_RE.match(bare(value))
    if m is None:
        rec.issue(FILE, line, "bad-round", f"Round '{value[:80]}' is not a whole number")
        return None
    return number(rec, FILE, line, m[1], "round")


def _write(
    rec: Records,
    current: dict[str, Any],
    rounds: int,
    rows: list[dict[str, Any]],
    exists: Callable[[str], bool],
) -> None:
    last_round = current["round_key"]
    for row in rows:
        row["current"] = row.pop("round_key") is last_round
        paths = _read_paths(rec, row, row.pop("paths"), exists)
        for position, (written, path) in enumerate(paths, 1):
            rec.add(
                "manifest_destinations",
                file=FILE,
                line=row["line"],
                round=row["round"],
                current=row["current"],
                position=position,
                destination=written,
                destination_path=path,
                destination_exists=path is not None and exists(path),
            )
        first: str | None = next((p for _, p in paths if p), None)
        row["destination_path"] = first
        row["destination_exists"] = first is not None and exists(first)
        rec.add("manifest_rows", file=FILE, **row)
    rec.add(
        "manifests",
        file=FILE,
        line=current["round_line"] or 1,
        round=current["round"],
        rounds=rounds,
        round_line=current["round_line"],
        status=current["status"],
        status_line=current["status_line"],
        has_table=current["has_table"],
        table_rows=sum(1 for row in rows if row["current"]),
        useless_result=current["useless_result"],
        useless_result_line=current["useless_result_line"],
        cold_reader_paths=current["cold_reader_paths"],
        gaps=current["gaps"],
    )


def _read_paths(
    rec: Records,
    row: dict[str, Any],
    found: list[tuple[str, str | None, str]],
    exists: Callable[[str], bool],
) -> list[tuple[str, str | None]]:
    """A row's destinations; one that names no path is a parse issue, so BS-HARVEST-01
    fails rather than passing on a document it never read (spec §3.1, fail closed)."""
    paths: list[tuple[str, str | None]] = []
    for written, path, kind in found:
        # A word that names no file is prose; its path stays, for gather to look it up.
        if kind == "unread" or (kind == "word" and path is not None and not exists(path)):
            message = f"Destination '{written[:80]}' names no repository path"
            rec.issue(FILE, row["line"], "unreadable-destination", message, "BS-HARVEST-01")
        paths.append((written, path))
    return paths


def _new_round(num: int | None, line: int | None) -> dict[str, Any]:
    state: dict[str, Any] = dict.fromkeys(("status", "status_line", "useless_result_line"))
    state.update(dict.fromkeys(_USELESS))
    state.update(round=num, round_line=line, has_table=False, round_key=object(), given={})
    state["unread_status"] = []  # Statuses of the round noted but not read, before one was
    return state


def _header_names(table: Table) -> list[str]:
    """A table's column names as the page shows them (`\\#` is `#`), in lower case."""
    return [bare(unescaped(shown(cell))).lower() for cell in table.header]


def _unread_routes(rec: Records, line: int, message: str, code: str = "unread-table") -> None:
    """Routes that cannot be read: neither what they route (BS-MANIFEST-01) nor where, whose
    links into the folder BS-HARVEST-01 checks, can be shown to hold (§3.1, fail closed)."""
    for rule in ("BS-MANIFEST-01", "BS-HARVEST-01"):
        rec.issue(FILE, line, code, message, rule)


def _unread_table(rec: Records, table: Table) -> None:
    """A table meant as the routing table whose header does not name its five columns
    (`Target` for `Destination`, `No.` for `#`): its rows are not read as routes, so neither
    the routes (BS-MANIFEST-01) nor the destinations' links into the folder (BS-HARVEST-01)
    can be shown to hold (§3.1, fail closed). A table of something else is left alone."""
    names = _header_names(table)
    if not _routing(names):
        return
    missing = ", ".join(f"`{name.capitalize()}`" for name in _COLUMNS if name not in names)
    message = (
        f"a table with the header '{' | '.join(table.header)[:80]}' is not read as the routing "
        f"table: its header lacks {missing}; write `| # | What | Source | Destination | Action |`"
    )
    _unread_routes(rec, table.line, message)


# Other words people name the routing table's columns with: such a table is meant as the
# routing table (and so is not read, and noted), never a table of something else.
_COLUMN_WORDS = {
    "#": ("#", "no", "no.", "nr", "n", "num", "number", "id", "row"),
    "what": ("what", "item", "items", "thing", "content", "artifact", "artefact", "piece"),
    "source": ("source", "sources", "from", "origin", "src"),
    "destination": ("destination", "destinations", "to", "target", "dest", "where", "goes to"),
    "action": ("action", "op", "operation", "verb", "how"),
}


def _routing(names: list[str]) -> bool:
    """Whether a header's cells (bare, lower case) are meant as the routing table's: three of
    its columns by their names or other words for them (`| Item | From | To |`; until stop
    55 such a table was no routing table and BS-HARVEST-01 passed on no destinations, found
    by a hunt), or any column naming destinations."""
    named = sum(any(word in names for word in words) for words in _COLUMN_WORDS.values())
    return named >= 3 or any("destination" in n for n in names)


def _no_table(rec: Records, block: Paragraph) -> None:
    """The routing table's header in a paragraph: over a delimiter row of another number of
    cells, or over none, GFM reads no table, so its rows are not read as routes and neither
    the routes nor the destinations' links into the folder can be shown to hold (§3.1, fail
    closed)."""
    for line, text in block.lines:
        if not text.lstrip(" \t").startswith("|"):
            continue
        cells = split_cells(text)
        if len(cells) >= 3 and _routing([bare(shown(cell)).lower() for cell in cells]):
            message = (
                f"'{text.strip()[:80]}' is written as the routing table's header, but GFM reads "
                "no table here (the line below it must be a delimiter row of as many cells, "
                "`|---|---|…`), so its rows are not read"
            )
            _unread_routes(rec, line, message)
            return


def _table(
    table: Table, current: dict[str, Any], rows: list[dict[str, Any]], links: _Links, rec: Records
) -> bool:
    """The rows of a routing table: one whose header names the five columns (any case,
    any order, emphasis dropped; more columns are allowed). False for another table."""
    names = _header_names(table)
    if not all(name in names for name in _COLUMNS):
        return False
    where = [names.index(name) for name in _COLUMNS]
    current["has_table"] = True
    twice = [name for name in _COLUMNS if names.count(name) > 1]
    if twice:
        # Two Destination columns: the route's cells cannot be told, so neither rule can be
        # shown to hold (found by a hunt: the second column's documents were never read).
        message = (
            f"the routing table's header names {', '.join(f'`{n.capitalize()}`' for n in twice)} "
            "twice: which cell is the route's cannot be read; give each column once"
        )
        _unread_routes(rec, table.line, message)
    # A field written right under the table is a row to GFM (a parse issue), not a route.
    fields_below = {line for *_, line in table_fields(table, _FIELDS)}
    for line, cells in table.rows:
        if line in fields_below:
            continue
        # A cell as the page shows it: an HTML comment in it (`parked fork <!-- F2 -->`)
        # names nothing, as in a field's value.
        num, what, source, destination, action = (
            shown(cells[i]) if i < len(cells) else "" for i in where
        )
        num, what, source, action = map(unescaped, (num, what, source, action))
        _uneven_row(rec, line, cells, table.header, where)
        rows.append(
            {
                "line": line,
                "round": current["round"],
                "round_key": current["round_key"],
                "num": num,
                "what": what,
                "source": source,
                "destination": destination,
                "action": action,
                "paths": _destinations(destination, links),
            }
        )
    return True


def _uneven_row(
    rec: Records, line: int, cells: list[str], header: list[str], where: list[int]
) -> None:
    """A route whose row has fewer cells than its What, Source or Destination needs (a row
    wrapped onto the next line: GFM reads the rest as another row), or more than the header
    (GFM drops those past it, so the Destination may be another cell): what it routes and
    where cannot be read as written, so neither rule can be shown to hold (§3.1, fail
    closed; until 2026-12-07 the route read with an empty Destination, and a link in the
    document it named passed BS-HARVEST-01, found by a hunt)."""
    if len(cells) > len(header):
        problem = f"has {len(cells)} cells where the header has {len(header)}: GFM drops "
        problem += "those past the header's, so its Destination may be another cell"
    elif max(where[:4]) >= len(cells):
        missing = [name for name, at in zip(_COLUMNS[:4], where, strict=False) if at >= len(cells)]
        problem = f"has {len(cells)} cells, none for {', '.join(missing)} (wrapped onto the "
        problem += "next line? a route is one row)"
    else:
        return
    _unread_routes(rec, line, f"the routing row '{' | '.join(cells)[:80]}' {problem}")


def destinations(cell: str) -> list[tuple[str, str | None]]:
    """Each destination a Destination cell names, as written and as a repository-relative
    path (None when it is not one): a Markdown link's target, a path followed by
    commentary, several separated by commas, semicolons, `<br>` or ` and ` (not inside a
    parenthesised remark), and every other word that looks like a path (comments and
    struck-through text dropped first)."""
    return [(written, path) for written, path, _ in _destinations(cell)]


def _destinations(cell: str, links: _Links = _Links()) -> list[tuple[str, str | None, str]]:
    """destinations, each with how it reads: `path`, `word` (a path only if that file
    exists), `elsewhere` (a URL, a placeholder, out of the repository) or `unread`."""
    # What the page does not show names nothing: comments, struck-through text; inline tags
    # and invisible characters around a path are no part of it, and a character reference is
    # the character it shows (`docs&#47;a.md`, `docs/a.md&nbsp;(new)`; found by a hunt).
    cell = inline_text(decoded(shown(cell)))
    if "[^" in cell or not cell.isascii():
        cell = _FOOTNOTE_MARK_RE.sub(" ", cell)
    if "][" in cell:
        resolved = _REFERENCE_RE.sub(lambda m: _referenced(m, links), cell)
        if "\0" in resolved:  # a reference with no definition in the file names nothing known
            return [(cell.strip(), None, "unread")]
        cell = resolved
    if "[" in cell and links.references:
        # A shortcut reference (`[open questions]`, its label defined in the file) is a link
        # too, as a full or collapsed one is (until 2026-12-07 it was unread; found by a hunt).
        cell = _SHORTCUT_RE.sub(lambda m: _shortcut(m, links), cell)
    linked = "](" in cell
    if linked:
        # Links side by side (`[a](x.md) [b](y.md)`) name one destination each.
        cell = _SIDE_BY_SIDE_RE.sub(");", cell)
    # Spaces in an angled target become escapes, decoded with the rest of the path.
    text = _unlink(_ANGLED_RE.sub(_escape_angled, cell)) if linked else cell
    found = []
    for piece in _pieces(text):
        written = piece.strip()
        if written:
            found += _piece(written, links)
    if linked and not found:
        # Links with empty targets (`[page]()`) name something, but no path.
        found.append((cell.strip(), None, "unread"))
    return found


def _pieces(text: str) -> list[str]:
    """The cell split at its separators, except inside a parenthesised remark:
    `docs/a.md (new page, 2 sections)` names one destination with commentary, as the page
    shows it. Only a `(` that a `)` closes makes a remark; what is left unclosed splits as
    before. One pass over the parentheses and one over the separators."""
    if "(" not in text:
        return _SPLIT_RE.split(text)
    remarks = remarks_in(text)
    if not remarks:
        return _SPLIT_RE.split(text)
    pieces: list[str] = []
    at = 0
    spans = iter(remarks)
    start, end = next(spans)
    for m in _SPLIT_RE.finditer(text):
        while end <= m.start():
            start, end = next(spans, (len(text), len(text)))
        if start <= m.start() < end:
            continue  # inside a remark: commentary, not a separator
        pieces.append(text[at : m.start()])
        at = m.end()
    pieces.append(text[at:])
    return pieces


def _escape_angled(m: re.Match[str]) -> str:
    """An angled link target with the characters that would end it early in _unlink
    escaped; destination_path decodes them again."""
    target = m[2].replace(" ", "%20").replace("\t", "%09").replace("(", "%28")
    return m[1] + target.replace(")", "%29") + ">"


# `[label]` with no `(`, `[` or `:` after it: a shortcut reference when the label is defined.
_SHORTCUT_RE = re.compile(r"!?\[([^\[\]]++)\](?![\[(:])")


def _shortcut(m: re.Match[str], links: _Links) -> str:
    target = links.references.get(_label(m[1]))
    return f" {target} " if target is not None else m[0]


def _referenced(m: re.Match[str], links: _Links) -> str:
    """A reference link's target between spaces, as _unlink leaves an inline link's; a NUL
    when the file defines no such label."""
    target = links.references.get(_label(m[2] or m[1]))
    return f" {target} " if target is not None else "\0"


def _piece(written: str, links: _Links) -> list[tuple[str, str | None, str]]:
    """The destinations one piece of a cell names (see _destinations): the path read from
    its start, then each later word that looks like a path (`a.md / docs/b.md`); a start
    that looks like none is prose when such a word follows (`update docs/b.md`,
    `→ docs/b.md`), as is a start that cannot be read (`(docs/b.md)`). `docs/release
    notes.md (new)`, a name with a space then commentary, is read both ways; the name that
    exists is the document (gather checks each)."""
    path, kind, rest = _reading(written, links)
    found = [(written, path, kind)]
    paths = {path}
    head = written.split(None, 1)[0]
    words = rest.split()
    if words and not written.startswith("`"):
        spaced = _spaced(head, words)
        words = words if spaced is None else [spaced, *words]
    named = False  # whether a later word looks like a path (a URL too: `see https://…`)
    for word in [head, *words] if kind == "unread" else words:
        looks, also = _also(word, links)
        named |= looks
        if also is not None and also not in paths:
            paths.add(also)
            found.append((word, also, "path"))
    if named and (kind == "unread" or not _looks_like_path(_cleaned(head))):
        del found[0]
    return found


def _spaced(first: str, words: list[str]) -> str | None:
    """A name with spaces that commentary follows: a first word with a `/` that ends no
    path, and the words up to the first that ends in an extension."""
    first = _cleaned(first)
    if "/" not in first or _PATH_END_RE.search(first):
        return None
    for at, word in enumerate(words):
        if _EXTENSION_RE.search(_cleaned(word, "()")):
            return " ".join([first, *words[:at], _cleaned(word, "()")])
    return None


def _also(word: str, links: _Links) -> tuple[bool, str | None]:
    """Whether a later word of a piece looks like a path, and the repository path it names
    (None for a URL)."""
    word = _cleaned(word, "()")
    if not _looks_like_path(word):
        return False, None
    return True, _reading(word, links)[0]


def _looks_like_path(word: str) -> bool:
    return ("/" in word and _ALNUM_RE.search(word) is not None) or word.lower().endswith(".md")


def _cleaned(word: str, also: str = "") -> str:
    """A word as a path: the brackets and quotes around it, the sentence punctuation after
    it and a `?query` dropped (`[docs/a.md]`, `docs/a.md.`, `docs/a.md?plain=1`); `also`:
    more marks around it to drop (parentheses, which a file name may hold)."""
    word = word.lstrip(_OPENING + also[:1]).rstrip(_CLOSING + also[1:])
    word = _SENTENCE_END_RE.sub("", word)
    return word.split("?", 1)[0] if "?" in word else word


def _reading(written: str, links: _Links = _NOWHERE) -> tuple[str | None, str, str]:
    """The path a destination as written names, how it reads (see _destinations), and the
    text after what it was read from; `links.folder`: the session's, from whose ops/ a `../`
    path goes, as a rendered link does."""
    if bare(written).lower() in _PLACEHOLDERS:
        return None, "elsewhere", ""
    if not written.startswith("`"):
        # `open\_questions.md` renders as open_questions.md (CommonMark backslash escapes,
        # which a code span keeps as written).
        written = ESCAPED_RE.sub(r"\1", written)
    first, rest = _first_path(written)
    first = first.strip("<>")  # `<https://…>` is an autolink
    whole = written.strip("`*_ \t")
    if rest and "/" in first and not _PATH_END_RE.search(first) and _PATH_END_RE.search(whole):
        # `docs/features/release notes.md`: a name with a space, not a path and commentary
        # (whose path would end in an extension or a `/` before the first space).
        first, rest = whole, ""
    if _ELSEWHERE_RE.match(first):
        return None, "elsewhere", rest  # a URL is not a repository path
    # Commentary may follow the path with no space: `docs/a.md: new`, `docs/a.md(new)`;
    # a `(` inside a name (`docs/a(b).md`) is kept, as no extension or `/` ends before it.
    first = first.split(":", 1)[0]
    paren = first.find("(")
    if paren == 0 or (paren > 0 and _PATH_END_RE.search(first, 0, paren)):
        first = first[:paren]
    # So may any mark no name ends in, after a Markdown document's name: `docs/a.md—new`,
    # `docs/a.md→create`, `docs/a.md（new）` (found by a hunt: read as a document that does
    # not exist, whose links were then never read).
    if glued := _GLUED_RE.match(first):
        first = glued[1]
    first = first.strip("`*_")
    if links.folder and first.startswith("../"):
        first = posixpath.join(links.folder, "ops", first)
    path = destination_path(first, links.root)
    if path is None:
        return None, "elsewhere" if _normal(first).startswith("..") else "unread", rest
    return path, "word" if _WORD_RE.fullmatch(path) else "path", rest


def _unlink(cell: str) -> str:
    """The cell with each Markdown link or image replaced by its target between spaces;
    nothing after the cell's last `)` can be part of a link."""
    end = cell.rfind(")") + 1
    if _NESTED_RE.search(cell, 0, end) is None:
        return _LINK_RE.sub(lambda m: f" {m[1]} ", cell[:end]) + cell[end:]
    return _scan(cell)


def _scan(cell: str) -> str:
    """_unlink in one pass where link text may hold brackets: a `]` followed by `(` ends a
    link's text, up to the next `)`, and any other closes the latest open `[` (`[Open questions
    [F4]](docs/x.md)`: until 2026-12-07 the outer `[` was forgotten and the path read as
    `F4]](docs/x.md)`; found by a hunt)."""
    out: list[str] = []
    opened: list[int] = []
    done = at = 0
    while at < len(cell):
        char = cell[at]
        if char == "[":
            opened.append(at)
        elif char == "]" and opened:
            # A `](` ends the link begun at the earliest `[` still open (the link text may
            # hold a `[`); any other `]` closes the latest.
            start = opened[0] if cell.startswith("(", at + 1) else opened.pop()
            if cell.startswith("(", at + 1):
                end = _closing(cell, at + 2)
                if end < 0:
                    break  # no later link can end either
                if start > done and cell[start - 1] == "!":
                    start -= 1
                target = _TARGET_RE.match(cell, at + 2, end)
                out += [cell[done:start], f" {target[1] if target else ''} "]
                done = at = end + 1
                opened.clear()
                continue
        at += 1
    out.append(cell[done:])
    return "".join(out)


def _closing(cell: str, start: int) -> int:
    """Where the `)` that ends a link's `(` before `start` is: its target may hold balanced
    parentheses (`docs/a(v2).md`); -1 when none does."""
    depth = 0
    for at in range(start, len(cell)):
        char = cell[at]
        if char == "(":
            depth += 1
        elif char == ")":
            if not depth:
                return at
            depth -= 1
    return cell.find(")", start)


def _first_path(text: str) -> tuple[str, str]:
    """The code span or word a piece starts with (brackets, quotes and sentence punctuation
    around a word dropped), and the text after it."""
    if text.startswith("`"):
        end = text.find("`", 1)
        return (text[1:end], text[end + 1 :]) if end > 0 else (text[1:], "")
    first, *rest = text.split(None, 1)
    return _cleaned(first.strip("`*_")).strip("`*_"), rest[0] if rest else ""


def destination_path(cell: str, root: tuple[str, ...] = ()) -> str | None:
    """A destination as a repository-relative path (`%20`-style escapes decoded), or None
    when it is not one; one that climbs out of the root comes back as links.resolve says."""
    text = _normal(cell)
    if text.startswith("../"):
        text = back_inside(text.split("/"), root) or ""
    return None if not text or ":" in text or text.startswith("..") or text == "." else text


_WINDOWS_SEPARATOR_RE = re.compile(r"\\(?=[A-Za-z0-9])")


def _normal(cell: str) -> str:
    """The cell's path normalised, `#fragment` dropped and escapes decoded; "" if none."""
    text = cell.strip().strip("`").strip()
    # A path written with Windows' separator (`docs\features\a.md`) names the same file: a
    # backslash before a letter or digit is no Markdown escape, nor part of a name (a hunt).
    text = _WINDOWS_SEPARATOR_RE.sub("/", unquote(text.split("#", 1)[0]).strip())
    return posixpath.normpath(text.lstrip("/")) if text else ""
