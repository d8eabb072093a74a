"""forks.md: one fork per level-2 heading `F{n} — {title} [{marker}]`, with its fields."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pipeline.parse.blocks import Block, Document, Heading, Item, Paragraph, Table, parse
from pipeline.parse.lexical import (
    ARROW_RE,
    bare,
    canonical_id,
    decoded,
    decoded_separator,
    field,
    ids,
    left_to_fill,
    misspelt_ids,
    paired,
    shown,
    token,
    words_alone,
    written_alone,
)
from pipeline.parse.reading import (
    ENTRY_SEPARATORS,
    MEANT_MARKER_RE,
    NearField,
    as_fields,
    code_value,
    entries_in_tables_only,
    entry_id,
    entry_line,
    fields,
    hidden_entries,
    late_entry_id,
    line_below,
    linked_entries,
    meant_entry,
    near_fields,
    not_an_entry_heading,
    note_coded_entries,
    note_heading_field,
    note_html_fields,
    note_near,
    note_nested,
    note_table_fields,
    number,
    outside_entry,
    own_lines,
    passed,
    repeated,
    seen_heading,
    split_rows,
    stray_table,
    table_rows,
    taken_below,
    titled_entry,
    unclosed_block,
)
from pipeline.parse.records import Records
from pipeline.schema import FORKS, blank_row

FILE = "forks.md"
_FIELDS = {"raised by": "raised_by", "closes when": "closes_when"}
_RAISERS = ("user", "twin", "probe", "harvest")
# A raiser named as a word of its own anywhere in a value.
_RAISER_RE = re.compile(rf"(?<![A-Za-z0-9])(?i:{'|'.join(_RAISERS)})(?![A-Za-z0-9])")
# A heading that names a raiser (`### Raised by: twin (S2)`) is meant as the field; any
# other is a section heading (reading.note_heading_field).
_IN_HEADING: dict[str, Callable[[str], bool]] = {
    "raised_by": lambda value: _RAISER_RE.search(value) is not None or bool(ids(value, "S")),
}
_BLANK = blank_row(FORKS, "file", "line")
RULE = "BS-FORK-01"
# A marker anywhere in a line: the sign that a line not written as a heading is a fork.
_MARKER_AT_RE = re.compile(r"\[[ \t*_`]*+(?:open|parked)(?![A-Za-z0-9_])")
# A marker with no brackets that ends the line (`— open`, `**open**`, `(still open)`) or a
# parking arrow (`parked → docs/x.md`): after an ID and a title, a fork written as a line
# (found by a hunt: `- F6 — … **open**` vanished and the manifest gate was clean).
_BARE_MARKER_RE = re.compile(
    r"(?i)(?<![A-Za-z0-9_])(?:(?:open|parked)[ \t*_`).]*+$|parked[ \t*_`]*+(?:→|->|&rarr;))"
)
# A marker closed as a fork's is (`[open]`, `[parked]`): at a heading of another level than a
# fork's, the sign that it is meant as one (`### Retry policy? [open]`), where `# Forks [open
# questions]` is a title.
_CLOSED_MARKER_RE = re.compile(r"\[[ \t*_`]*+(?i:open|parked)[ \t*_`]*+\]")


def parse_forks(lines: list[str], rec: Records) -> None:
    fork: dict[str, Any] | None = None
    doc = parse(lines)
    unclosed_block(doc, rec, FILE, RULE)
    blocks = split_rows(doc.blocks)
    # Forks in HTML blocks are not read: each is a parse issue and ends the fork above.
    ends = hidden_entries(doc, lines, rec, FILE, "F", RULE, _weigh) if doc.html else []
    note_coded_entries(doc, lines, rec, FILE, "F")
    note_html_fields(rec, FILE, doc, lines, _FIELDS, _rule_of, ends)
    untaken: list[tuple[int, str]] = []  # table rows that name a fork, maybe meant as one
    linked: list[tuple[int, str]] = []  # table-of-contents lines naming an entry
    worded: list[tuple[dict[str, Any], int, str]] = []  # each fork's heading and lines
    for index, block in enumerate(blocks):
        if ends and passed(ends, block):
            fork = None
        block = stray_table(as_fields(block, _FIELDS))
        if isinstance(block, Heading):
            below = line_below(blocks, index, _FIELDS)
            note_heading_field(rec, FILE, block, _FIELDS, _IN_HEADING, _rule_of, below)
            fork = _entry_heading(seen_heading(block), rec, fork)
            if fork is not None and fork["line"] == block.line:
                worded.append((fork, block.line, block.text))
            continue
        if isinstance(block, Table):
            note_table_fields(rec, FILE, block, _FIELDS, _rule_of, _IN_HEADING)
            if table_rows(
                block, blocks, index, rec, FILE, "F", RULE, _weigh, _FIELDS, _rule_of, untaken
            ):
                fork = None
            continue
        meant = entry_line(block, "F")
        linked += linked_entries(block, "F")
        above = None
        if meant is not None and _weigh(meant, blocks, index):
            # Meant as a fork but no heading: not read, it ends the fork above (its fields
            # are not that fork's), and BS-FORK-01 fails.
            if fork is not None:
                above = (fork["fork_id"] or "the fork above", meant[0])
            fork = None
            not_an_entry_heading(rec, FILE, meant[0], meant[1], "F", RULE)
        note_nested(rec, FILE, block, _FIELDS, _rule_of)
        if fork is None:
            outside_entry(rec, FILE, fields(block, _FIELDS), "F", _rule_of, above)
            continue
        _fork_fields(fork, block, (doc, lines, blocks, index), rec)
        _status_lines(block, fork, rec)
        worded += [(fork, line, text) for line, text in own_lines(block)]
    _raised_in_words(worded, rec)
    if untaken or linked:
        ids = {row["fork_id"] for row in rec.of("forks")}
        entries_in_tables_only(rec, FILE, untaken, ids, "F", RULE, linked)


def _fork_fields(
    fork: dict[str, Any],
    block: Block,
    where: tuple[Document, list[str], list[Block], int],
    rec: Records,
) -> None:
    """The fields of a fork's block, as read (`where`: the document, its lines, its blocks
    and the block's index among them): each read once, a second noted."""
    doc, lines, blocks, index = where
    for key, value, line in fields(block, _FIELDS) + _near(block, rec, blocks, index):
        if fork[key] is not None:
            repeated(rec, FILE, line, *_needs(key, fork[key], value))
        elif key == "raised_by":
            # A value in a fence below an empty name is the value (found by a hunt).
            below = code_value(doc, lines, block, line) if left_to_fill(value) else ""
            if left_to_fill(value) and not below:
                names = ("Raised by", _FIELDS)
                below = taken_below(
                    rec, FILE, blocks, index, line, names, "BS-SYNC-02", _names_raiser
                )
            _raised_by(fork, below or value, line, rec)
        else:
            said = "" if left_to_fill(value) else value  # `—`, `TBD`: an empty condition
            said = said or code_value(doc, lines, block, line)  # a fence below
            fork["closes_when"], fork["closes_when_line"] = said, line


_SYNC_FIRST_RE = re.compile(r"[*_`\[(]*+S\d+(?![A-Za-z0-9])")


def _raiser(value: str) -> bool:
    """Whether a value names a raiser (or a sync): `Raised by twin (S2)` is the field."""
    return token(value, _RAISERS, fold=True) is not None or bool(_SYNC_FIRST_RE.match(value))


# Raised by may be separated from its value by a space alone when the value is a raiser.
_SPACED = {"raised_by": _raiser}


def _near(
    block: Block, rec: Records, blocks: list[Block], index: int
) -> list[tuple[str, str, int]]:
    """(key, value, line) of each line meant as a field but not written `Name: value`
    (`- Raised by twin (S2)`, `- Closes when — …`): read, and a parse issue that fails the
    rule that reads the field (Raised by: BS-SYNC-02 when the value may be the twin's)."""
    found = []
    nears = near_fields(block, _FIELDS, _SPACED, line_below(blocks, index, _FIELDS))
    for near in [*nears, *_misnamed(block)]:
        note_near(rec, FILE, near, _rule_of(near.key, near.value))
        found.append((near.key, near.value, near.line))
    return found


# A line named by another form of Raised by (`Raised: twin (S2)`, `Raised in: S2`, `Raiser:
# user`, or another verb, `Opened by: twin (S9)`; found by a hunt) before a raiser or a sync:
# meant as the field, which a reader would otherwise drop without a word (spec §3.1, fail
# closed). Without a separator only a raiser or a sync may follow (`Raised twin concerns` is
# prose). The separator may stand inside the name's emphasis (`**Raised in:** S2`).
_MISNAMED_RE = re.compile(
    r"[*_`]*+(?P<name>(?i:raised|raiser|(?:opened|added|surfaced|created|brought[ \t]++up"
    r"|asked|posed|found|flagged|introduced|spotted|noticed|proposed|suggested|reported)"
    r"[ \t]++by|(?P<noun>source|origin|from|author|by))"
    r"(?:[ \t]++(?i:in|at|from|during|on|via|by))?+(?:/(?i:in|at|by|on))?+)[*_`]*+"
    r"[ \t]*+(?P<sep>[:=\u2014\u2013-]?)[*_`]*+[ \t]*+(?P<value>.+)"
)
# After a noun (`Source: twin (S9)`, `From: S9`), only the twin or a sync says Raised by is
# meant (`Source: user interviews` is a fork's note): found by a hunt, until 2026-12-07.
_TWIN_FIRST_RE = re.compile(r"[*_`]*+(?:(?i:twin)(?![A-Za-z0-9])|S\d)")
_BARE_RAISER_RE = re.compile(
    rf"[*_`]*+(?:(?i:{'|'.join(_RAISERS)})(?:[ \t]*+\([^()]*+\))?+|S\d+)[*_`]*+"
)


# A line named by another form of Closes when (`Close when:`, `Closing condition:`, `Closes
# if:`, `Done when:`) before its condition: meant as the field, which BS-FORK-01 found
# missing with no line named (found by a hunt).
_CLOSES_NAMED_RE = re.compile(
    r"[*_`]*+(?P<name>(?i:(?:clos(?:e|es|ed|ing)|done|resolve[sd]?)[ \t]++(?:when|if|once)"
    r"|(?:close|closing)[ \t]++condition))[*_`]*+[ \t]*+[:=\u2014\u2013][*_`]*+[ \t]*+(?P<value>.+)"
)


def _misnamed(block: Block) -> list[NearField]:
    """Each line meant as Raised by or Closes when under another form of its name: a list
    item's first line, or a paragraph's line whose name is capitalised."""
    found = []
    for line, text in own_lines(block):
        closes = _CLOSES_NAMED_RE.fullmatch(text.strip())
        if closes is not None and " ".join(closes["name"].lower().split()) != "closes when":
            if isinstance(block, Item) or closes["name"][0].isupper():
                found.append(NearField("closes_when", closes["value"].strip(), line, text, "mark"))
            continue
        m = _MISNAMED_RE.fullmatch(text.strip())
        if m is None or " ".join(m["name"].lower().split()) in _FIELDS:
            continue
        if isinstance(block, Paragraph) and not m["name"][0].isupper():
            continue
        value = m["value"].strip()
        if m["noun"] is not None and not (m["sep"] and _TWIN_FIRST_RE.match(value)):
            continue
        if _raiser(value) if m["sep"] else _BARE_RAISER_RE.fullmatch(value) is not None:
            found.append(NearField("raised_by", value, line, text, "mark"))
    return found


def _entry_heading(
    block: Heading, rec: Records, fork: dict[str, Any] | None
) -> dict[str, Any] | None:
    """The fork a heading begins, or the one it leaves open (a subheading), or None (a
    section heading ends the entry)."""
    entry, digits, rest = entry_id(block.text, "F")
    if entry:
        fork = _heading(block.line, block.text, digits, rest, rec)
        if block.level != 2:
            # Meant as a fork, at the wrong level: counted, and BS-FORK-01 fails.
            message = f"fork heading is level {block.level}; a fork is `## F# — title`"
            rec.issue(FILE, block.line, "entry-heading-level", message, RULE)
        return fork
    found = meant_entry(block.text, "F", heading=True)
    meant = found[:2] if found is not None else None
    marked = _MARKER_AT_RE.search(block.text) is not None
    if meant is None:
        meant = late_entry_id(block.text, "F", marked)
    if meant is None and marked and (block.level == 2 or _CLOSED_MARKER_RE.search(block.text)):
        # `## Should cursors expire? [open]`: a fork with no ID, counted (BS-FORK-03 sees it
        # open), and BS-FORK-01 fails on the missing ID; so at another level with its marker
        # closed (found by a hunt: `### Retry policy? [open]` vanished and the gate was clean).
        meant = None, block.text
    if meant is not None:
        # `## [F5] — …`, `## F5a — …` or `## Fork F5 — …`: meant as a fork, counted, and
        # BS-FORK-01 fails.
        fork = _heading(block.line, block.text, meant[0], meant[1], rec)
        not_an_entry_heading(rec, FILE, block.line, block.text, "F", RULE)
        return fork
    return None if block.level <= 2 else fork


def _weigh(meant: tuple[int, str, str, bool], blocks: list[Block], index: int) -> bool:
    """Whether a line that may be meant as a fork (entry_line's reading of blocks[index])
    is one: its shape says so, or the text after its ID reads as a fork's title."""
    return meant[3] or _is_fork(meant[2], blocks, index)


def _is_fork(rest: str, blocks: list[Block], index: int) -> bool:
    """Whether the text after an ID in a plain line or list item reads as a fork's title:
    it holds a marker (`(open)` too: until 2026-12-07 such a line vanished, found by a hunt),
    or a dash begins it and the fork's fields follow."""
    if MEANT_MARKER_RE.search(rest):
        return True
    if "|" not in rest and _BARE_MARKER_RE.search(rest):
        return True  # a table row is weighed by its header and columns, not so
    return titled_entry(rest, blocks, index, _FIELDS)


def _rule_of(key: str, value: str) -> str | None:
    return _needs(key, value, "")[3]


def _needs(key: str, first: str, second: str) -> tuple[str, str, str, str | None]:
    """(name, first, second, the rule that needs the field) for a field given twice: Closes
    when is BS-FORK-01's; Raised by is BS-SYNC-02's when either value may be the twin's."""
    if key == "closes_when":
        return "Closes when", first, second, "BS-FORK-01"
    both = f"{first} {second}"
    twin = "twin" in both.lower() or bool(ids(both, "S"))
    return "Raised by", first, second, "BS-SYNC-02" if twin else None


def _heading(
    line: int, heading: str, digits: str | None, rest: str, rec: Records
) -> dict[str, Any]:
    fork = dict(_BLANK)
    if digits is not None:
        fork["fork_id"] = canonical_id("F", digits)
        fork["fork_num"] = number(rec, FILE, line, digits, "fork")
    else:
        rec.issue(FILE, line, "bad-fork-heading", f"fork heading has no F# ID: {heading[:120]}")
    # `&mdash; title`: the dash shown; struck-through text names no marker or destination
    # (`[open] ~~[parked → x]~~`).
    text = shown(decoded_separator(rest)).lstrip(ENTRY_SEPARATORS)
    marker = _marker(text)
    if marker is None:
        fork["title"] = bare(text)
        rec.issue(FILE, line, "bad-fork-heading", f"fork heading has no [marker]: {heading[:120]}")
    else:
        start, raw = marker
        fork["title"], fork["marker_raw"] = _title(text, start, raw), raw
        _read_marker(fork, raw, line, rec)
        _second_marker(fork, text, start, line, rec)
    fork["heading_ok"] = digits is not None and marker is not None
    return rec.add("forks", file=FILE, line=line, **fork)


def _title(text: str, start: int, raw: str) -> str:
    """The text before the marker, or the question after it when none stands before
    (`F3 — [open] Should reads wait?`), so that BS-FORK-01 sees that question retitled; a
    bracketed remark after a marker alone (`F3 [open] (raised T4)`) stays commentary."""
    before = bare(text[:start])
    if before:
        return before
    after = bare(text[start + len(raw) + 2 :].lstrip(ENTRY_SEPARATORS))
    return "" if after.startswith("(") and after.endswith(")") else after


def _marker(text: str) -> tuple[int, str] | None:
    """(where it starts, what it holds) of the heading's marker: the last bracket pair
    that holds `open` or `parked` (whatever follows it is commentary), else the last
    bracket pair that is no link text; None when there is none."""
    start = text.rfind("[")
    if start < 0:
        return None
    if text.endswith("]") and "]" not in text[start:-1]:
        inner = text[start + 1 : -1]
        # The schema's spelling: the marker closes the heading.
        if inner.startswith(("open", "parked")):
            return start, inner
    pairs = [(a, b) for a, b in paired(text, "[", "]") if text[b + 1 : b + 2] != "("]
    if not pairs:
        return None
    pairs.sort()
    for start, end in reversed(pairs):
        if bare(text[start + 1 : end]).lower().startswith(("open", "parked")):
            return start, text[start + 1 : end]
    start, end = pairs[-1]
    return start, text[start + 1 : end]


def _second_marker(fork: dict[str, Any], text: str, start: int, line: int, rec: Records) -> None:
    """A heading with a second marker that names the other value (`[open] [parked → x]`)
    says two things: neither is read, and BS-FORK-01 fails (spec §3.1, values are tokens)."""
    if fork["marker"] is None:
        return
    for m in _MARKER_AT_RE.finditer(text, 0, start):
        if fork["marker"] not in m[0]:
            end = text.rfind("]")
            fork["marker"], fork["destination"] = None, None
            fork["marker_raw"] = text[m.start() + 1 : end if end > m.start() else len(text)]
            message = f"two markers contradict: [{fork['marker_raw'][:120]}]"
            rec.issue(FILE, line, "contradicting-markers", message, RULE)
            return
    # Commentary after the marker that names the other value (`[parked → x] (was open)`)
    # makes it a template or a contradiction, as `Status: stopping (was open)` is.
    after = text[start + len(fork["marker_raw"] or "") + 2 :]
    other = "parked" if fork["marker"] == "open" else "open"
    # A bracket after a parked marker saying it is open again (`[reopened]`) is a second
    # marker; a remark in parentheses (`(reopened once)`) is the fork's story, commentary.
    reopened = fork["marker"] == "parked" and any(
        _says_reopened(m[1]) for m in re.finditer(r"\[([^\[\]]*+)\]", after)
    )
    if reopened or re.search(rf"(?i)(?<![\w/.-]){other}(?![\w/.-])", shown(after)):
        fork["marker"], fork["destination"] = None, None
        message = f"the commentary after the marker names {other}: {after.strip()[:120]}"
        rec.issue(FILE, line, "contradicting-markers", message, RULE)


# A fork's status written in its body rather than its heading: a field under one of these
# names (`- Status: open`) or a marker on a line of its own (`[open]`, `**[parked → x]**`).
_STATUS_NAMES = ("status", "state", "marker", "fork status")
_MARKER_LINE_RE = re.compile(r"[ \t*_`]*+\[[ \t*_`]*+(?i:open|parked)(?![A-Za-z0-9_])")


def _status_lines(block: Block, fork: dict[str, Any], rec: Records) -> None:
    """A fork's status written outside its heading (`- Status: open`, a line `[open]`): not
    read, and noted. One that names another status than the heading's marker makes the
    fork say two things, so neither is read and BS-FORK-01 fails, as for two markers in the
    heading (spec §3.1, fail closed; found by a hunt)."""
    for line, text in own_lines(block):
        named = field(text)
        if named is not None and named[0] in _STATUS_NAMES:
            value = named[1]
        elif _MARKER_LINE_RE.match(text):
            value = text
        else:
            continue
        shown_value = bare(shown(decoded(value))).lstrip("[ \t")
        said = token(shown_value, ("open", "parked"), fold=True)
        if said is None and _says_reopened(shown_value):
            said = "open"
        if fork["marker"] is not None and said is not None and said != fork["marker"]:
            message = (
                f"{fork['fork_id'] or 'the fork'} is [{fork['marker_raw'][:60]}] in its heading "
                f"but '{text.strip()[:80]}' below it says {said}"
            )
            fork["marker"], fork["destination"] = None, None
            rec.issue(FILE, line, "contradicting-markers", message, RULE)
            continue
        message = (
            f"'{text.strip()[:80]}' is meant as {fork['fork_id'] or 'the fork'}'s status, "
            "which is read only from the [marker] in its heading"
        )
        rec.issue(FILE, line, "malformed-field", message)


# The fork's raiser in words, in its heading's commentary or its prose (`[open] (raised by
# twin, S9)`, `Raised by the twin in S9.`): what follows `raised by` up to the clause's end.
_RAISED_WORDS_RE = re.compile(
    r"(?<![A-Za-z0-9])(?i:raised)[ \t]++(?i:by)[ \t:]++([^().;]*+(?:\([^()]*+\)[^().;]*+)*+)"
)


def _raised_in_words(worded: list[tuple[dict[str, Any], int, str]], rec: Records) -> None:
    """A fork with no Raised by field whose heading or prose says the twin raised it, citing
    a sync or none (`(raised by twin, S9)`): read as its Raised by, with a note that fails
    BS-SYNC-02, which would otherwise pass on a fork it never saw raised (found by a hunt).
    Read once the fork's fields are, so that a Raised by field always wins."""
    for fork, line, text in worded:
        if fork["raised_by"] is not None or "aised" not in text:
            continue
        for m in _RAISED_WORDS_RE.finditer(shown(text)):
            value = bare(m[1])
            if "twin" not in value.lower() and not ids(value, "S"):
                continue
            _raised_by(fork, value, line, rec)
            message = (
                f"'{m[0].strip()[:80]}' is meant as a 'Raised by:' field but is not written "
                f"'Raised by: value' (taken as '{value[:60]}')"
            )
            rec.issue(FILE, line, "malformed-field", message, "BS-SYNC-02")
            break


def _read_marker(fork: dict[str, Any], raw: str, line: int, rec: Records) -> None:
    text = bare(decoded(raw))  # `[parked &rarr; x]` shows as `[parked → x]`
    if token(text, ("open", "parked")) == "open":
        fork["marker"] = "open"
        return
    arrow = ARROW_RE.search(text)
    if token(text[: arrow.start()] if arrow else text, ("parked", "open")) == "parked":
        fork["marker"] = "parked"
        if arrow is not None:
            # `[parked → —]`, `[parked → {destination}]`, `[parked → TBD]`: no destination,
            # as `[parked]`.
            destination = bare(text[arrow.end() :])
            fork["destination"] = "" if _names_no_place(destination) else destination
            if _OPEN_ALTERNATIVE_RE.search(destination) or _says_reopened(destination):
                # `[parked → docs/x.md | open]` offers both values: the fork says two things.
                fork["marker"], fork["destination"] = None, None
                message = f"the marker offers open beside parked: [{raw.strip()[:120]}]"
                rec.issue(FILE, line, "contradicting-markers", message, RULE)
        else:
            # `[parked: docs/x.md]` writes a destination but no arrow before it (null, so
            # BS-FORK-01 names the arrow); `[parked]` writes none ('').
            fork["destination"] = None if text[6:].strip(" \t*_`:;,.-–—") else ""
        return
    rec.issue(FILE, line, "unknown-marker", f"marker '[{raw[:80]}]' is neither open nor parked")


# Words saying a parked fork is open again: `reopened`, `re-opened`, `un-parked`, `open again`.
_REOPENED_RE = re.compile(
    r"(?i)(?<![\w/.-])(?:re-?open(?:ed)?|un-?parked|(?:back|now) to open|open again)(?![\w/.-])"
)


def _says_reopened(text: str) -> bool:
    """Whether a parked fork's destination, a bracket after its marker or a status line below
    it says it is open again (`[parked → open]`, `[parked → x] [reopened]`, `- Status:
    reopened`): the fork says two things, as `Status: open → stopping` does (spec §3.1); until
    2026-12-07 it passed the manifest gate parked (found by a hunt)."""
    shown_text = bare(shown(text).replace("*", "").replace("`", "")).strip(" \t.!")
    return shown_text.lower() == "open" or _REOPENED_RE.search(shown_text) is not None


# `open` as an alternative of its own in a parked fork's destination (`x | open`, `x / open`,
# `x or open`), not a word of a place (`open-questions.md`, `docs/open questions.md`).
_OPEN_ALTERNATIVE_RE = re.compile(
    r"(?i)(?:[|,;]|[ \t]/|(?<![\w-])or)[ \t*_`]*+open[ \t*_`]*+(?:$|[|,;)]|/[ \t])"
)


def _names_no_place(destination: str) -> bool:
    """A parked fork's destination that routes it nowhere: one left to fill in (`—`, `TBD`,
    `?`), or a word saying there is no place yet (`none`, `n/a`, `(none yet)`)."""
    return left_to_fill(destination) or written_alone(destination, _NO_PLACE_RE)


# Words for "no place", alone, in any case, with the marks and brackets around them.
_NO_PLACE_RE = words_alone(r"none(?: yet)?|not (?:yet|decided)|undecided|unknown|nowhere|n/?a")


def _names_raiser(value: str) -> bool:
    return _RAISER_RE.search(value) is not None or bool(ids(value, "S"))


def _raised_by(fork: dict[str, Any], value: str, line: int, rec: Records) -> None:
    fork["raised_by"], fork["raised_by_line"] = value, line
    kind = token(value, _RAISERS) or token(value, ("twin",), fold=True)
    syncs = ids(value, "S")
    fork["raised_by_syncs"] = syncs
    fork["raised_by_sync"] = syncs[0] if syncs else None
    named = {word.lower() for word in _RAISER_RE.findall(value)}
    if len(named) > 1:
        # `twin (S2) | user`: the template's choices left unpicked, or two raisers; neither
        # is the raiser, and if the twin's may be meant BS-SYNC-02 cannot be shown to hold.
        fork["raised_by_kind"] = "other"
        rule = "BS-SYNC-02" if syncs or "twin" in named else None
        listed = ", ".join(sorted(named))
        message = f"Raised by '{value[:80]}' names more than one raiser ({listed}); name one"
        rec.issue(FILE, line, "unknown-raiser", message, rule)
        return
    if kind is None and named == {"twin"}:
        # `the twin (S2)`, `our twin`, `[twin](…)`: the twin named in words is the twin, held
        # to BS-SYNC-02 (found by a hunt: `the twin` with no sync passed, `the twin (S2)` failed).
        kind = "twin"
    if kind is None:
        fork["raised_by_kind"] = "other"
        # A raiser that names a sync may be the twin's: BS-SYNC-02 cannot be shown to hold.
        rule = "BS-SYNC-02" if syncs else None
        message = f"Raised by '{value[:80]}' is not user, twin (S#), probe or harvest"
        rec.issue(FILE, line, "unknown-raiser", message, rule)
        return
    fork["raised_by_kind"] = kind
    if kind == "twin" and syncs:
        # `twin (S3, S-4)`: S4 is not read, and S3 alone could pass BS-SYNC-02.
        for written, meant in misspelt_ids(value, "S"):
            message = (
                f"{fork['fork_id'] or 'fork'} Raised by '{written}', which is no S#: {meant} is "
                f"not read (write {meant})"
            )
            rec.issue(FILE, line, "malformed-field", message, "BS-SYNC-02")
    if kind == "twin" and not syncs:
        rec.issue(
            FILE,
            line,
            "twin-without-sync",
            f"{fork['fork_id'] or 'fork'} is raised by '{value[:80]}', which cites no sync "
            "(expected twin (S#))",
            "BS-SYNC-02",
        )
