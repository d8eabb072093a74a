"""ops/sync-log.md: dispatch lines and result lines of twin syncs, as plain lines, list
items, headings or lines inside code and HTML blocks alike; any other line is a parse
issue that fails BS-SYNC-01, as is a code block holding any line (spec §3.1: no entry is
read in one; its lines are read all the same, so none is lost)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from pipeline.parse.blocks import (
    PREFIX_RE,
    Document,
    Heading,
    Item,
    Paragraph,
    Table,
    heading_level,
    heading_text,
    html_kind,
    parse,
)
from pipeline.parse.lexical import (
    ARROW_RE,
    BREAK_RE,
    MAX_LINE_CHARS,
    bare,
    canonical_id,
    decoded,
    field,
    shown,
    stamp,
    token,
)
from pipeline.parse.reading import HIDDEN_HTML, number, shown_tail, unclosed_comment, untagged
from pipeline.parse.records import Records

FILE = "ops/sync-log.md"
RULE = "BS-SYNC-01"
_ID_RE = re.compile(r"S(\d+)")
# The schema's own spelling, read in one match (the general reading gives the same
# result for it). Each value runs from its first to its last non-space, possessively,
# so that no run of spaces is scanned twice.
_CELL = r"((?:[^|]*[^|\s])?)"
_REST = r"((?:.*\S)?)"
_DISPATCH_RE = re.compile(
    rf"S(\d+)\s*\|\s*gate:\s*+{_CELL}\s*\|\s*dispatched:\s*+{_CELL}\s*\|"
    rf"\s*scope:\s*+{_REST}\s*"
)
_RESULT_RE = re.compile(
    rf"S(\d+)\s*(?:→|->)\s*(reconciled|failed)\s*\|\s*+{_CELL}\s*(?:\|\s*+{_REST})?\s*"
)
_DISPATCH = ("gate", "dispatched", "scope")
_OUTCOMES = ("reconciled", "failed")
# A line that begins like a sync line (`S3 | …`, `**S3** → …`).
_SYNC_START_RE = re.compile(r"[ \t*_`]*+S\d")
# A line meant as a sync line of its own though it does not begin like one (`s3 | gate: …`,
# `S 3 → failed …`, a table row with no table `| S3 | on-demand | …`, a result in words near
# the line's start, `Result S3: reconciled …`): never the wrapped end of the line above,
# where it would vanish.
# A dispatch in words (`Dispatched S4 at …`, `… S4 dispatched (…)`) is such a line too (found
# by a hunt: it vanished into the result above, and an unanswered dispatch passed).
_MEANT_AS_SYNC_RE = re.compile(
    r"(?i)^[ \t*_`]*+s[ \t]*+\d|^[ \t]*+\|[ \t*_`]*+s[ \t]*+\d++[ \t*_`]*+\|"
    r"|\|[ \t*_`]*+(?:gate|dispatched|scope)[ \t*_`]*+:"
    r"|(?:→|->|&rarr;)[ \t*_`]*+(?:reconciled|failed)\b"
    r"|^[^|]{0,30}?(?<![A-Za-z0-9])S\d++(?![A-Za-z0-9])[^|]{0,12}?\b(?:reconciled|failed|dispatched)\b"
    r"|^[^|]{0,30}?\bdispatch(?:ed)?+\b[^|]{0,12}?(?<![A-Za-z0-9])S\d++(?![A-Za-z0-9])"
)
# What a sync line holds and a section title naming a sync does not: a field's or an outcome's
# word, or a time.
_SYNC_WORDS_RE = re.compile(
    r"(?i)(?<![A-Za-z])(?:gate|dispatched|scope|reconciled|failed)(?![A-Za-z])|\d{4}-\d\d-\d\dT\d"
)
# Indentation, quote markers and list markers before a line's text inside a block.
# Fence lines (of the block or of one nested in it) and breaks or setext underlines.
_FENCE_LINE_RE = re.compile(r"`{3,}+[^`]*+|~{3,}+.*+")
_RULE_LINE_RE = re.compile(r"=++|-++|(?:\*[ \t]*+){3,}+|(?:_[ \t]*+){3,}+|(?:-[ \t]*+){3,}+")
# What parse_sync_log reads: (line, text, strict), or text None for a table line.
Read = tuple[int, str | None, bool]
# A count as written, thousands grouped with commas or not (`1,200 edits` is 1200, never 200),
# and no part of a decimal (`1.5 edits` counts nothing).
# Emphasis may wrap the number (`**2**`, `__2__` new forks), but a number joined to a word
# (`v2`, `x_2`) is none; a word joined on by a hyphen is another word (`2 open-ended
# questions` are no open forks).
_COUNT = r"(?<![^\W_])(?<![.,])(?<![^\W_]_)(\d{1,3}(?:,\d{3})++|\d++)(?![.,]?\d)[*_]{0,2}"
_WORD_END = r"\b(?![-‐])"
_EDITS_RE = re.compile(rf"{_COUNT}\s+edits?{_WORD_END}")
_NEW_FORKS_RE = re.compile(rf"{_COUNT}\s+new\s+forks?{_WORD_END}")
_OPEN_RE = re.compile(rf"{_COUNT}\s+open{_WORD_END}")


def parse_sync_log(lines: list[str], rec: Records) -> None:
    doc = parse(lines)
    # A comment never closed hides the rest of the log (spec §3.1: fail closed).
    unclosed_comment(doc, rec, FILE, RULE)
    reads: Iterator[Read] = _block_reads(doc)
    inner = list(_inner_reads(doc, lines)) if doc.code or doc.html else []
    if inner:
        # Lines in code and HTML blocks are read too, all in file order.
        reads = iter(sorted([*reads, *inner], key=lambda r: r[0]))
    for first, last in doc.code:
        if any(first <= read[0] <= last for read in inner):
            # CommonMark reads no entry in a code block (spec §3.1), and the log holds sync
            # lines alone: its lines are read, so none is lost, and BS-SYNC-01 fails on the
            # block (until 2026-12-07 a log copied fence and all from the schema passed).
            message = (
                "sync lines inside a code block (a fence, or lines indented four spaces) are "
                "code to CommonMark, not sync lines: write them outside it"
            )
            rec.issue(FILE, first, "code-block", message, RULE)
    shared = 0  # the line of the last sync line read, when another shares it
    previous = None
    for line, text, strict in reads:
        if text is None:
            rec.issue(FILE, line, "bad-sync-line", "a table row is no sync line", RULE)
            continue
        if line == previous and line != shared:
            # `S3 | …<br>S4 | …`: the page shows two lines, but rules and pairs order sync
            # lines by their line, which the two share (found by a hunt: an unpaired
            # dispatch before the newest passed).
            shared = line
            message = "two sync lines on one line (joined by <br>, or one written on after the "
            message += "other): their order cannot be read; write each on a line of its own"
            rec.issue(FILE, line, "shared-line", message, RULE)
        previous = line
        _line(text, line, rec, strict)


def _block_reads(doc: Document) -> Iterator[Read]:
    """The lines of the blocks a page renders, each with its head as shown (_shown_head)."""
    for line, text, strict in _rendered_reads(doc):
        yield line, _shown_head(text) if text else text, strict


def _rendered_reads(doc: Document) -> Iterator[Read]:
    for block in doc.blocks:
        if isinstance(block, Paragraph):
            for line, text in _wrapped(block.lines, after_sync=True):
                yield line, text, True
        elif isinstance(block, Item):
            # Its sub-items and later paragraphs are part of its value (spec §3.1): a line of
            # them that is no sync line continues the one above, as a wrapped line does.
            for line, text in _wrapped(block.all_lines() if block.parts else block.lines):
                yield line, text, True
        elif isinstance(block, Heading) and block.underlined and len(block.underlined) > 1:
            # Lines above a `---` are the lines they are, each read (a section title is one).
            for line, text in _wrapped(block.underlined, after_sync=True):
                yield line, text, True
        elif isinstance(block, Heading):
            # Decoded once, by _block_reads; strictness is read from the arrow shown.
            yield block.line, block.text, _names_sync(_shown_head(block.text))
        elif isinstance(block, Table):
            for line in (block.line, *(n for n, _ in block.rows)):
                yield line, None, False


def _shown_head(text: str) -> str:
    """A sync line with its head (the ID, the arrow and the outcome, up to the first `|`)
    as a rendered page shows it: `S1 &rarr; reconciled` and `S1 -&gt; reconciled` hold
    their arrows. The cells after it, copied into the tables, stay as written (their field
    names are read as shown by `field`)."""
    if "&" not in text:
        return text
    bar = text.find("|")
    return decoded(text) if bar < 0 else decoded(text[:bar]) + text[bar:]


def _names_sync(heading: str) -> bool:
    """Whether a heading is meant as a sync line, read strictly: it begins like one and
    holds a field separator or an arrow (`## S3 | gate: …`, `### S4 → reconciled …`). One
    with neither (`## S1`, `## S1 — intake`) is a section title over its sync's lines. One
    misspelt (`## s3 | gate: …`, `S 3 → failed …`) is meant as a sync line as well, so that
    it fails BS-SYNC-01 as the same line in a paragraph does rather than vanish."""
    if _SYNC_START_RE.match(heading) is None and _MEANT_AS_SYNC_RE.search(heading) is None:
        return False
    # So is one holding a sync line's words or a time (`## S4 · gate: stop · dispatched: …`,
    # `S3 failed: timed out` over `---`): a title names a sync, never its fields (until
    # 2026-12-07 such a heading vanished as a title, found by a hunt).
    return (
        "|" in heading
        or ARROW_RE.search(heading) is not None
        or _SYNC_WORDS_RE.search(heading) is not None
    )


def _wrapped(lines: list[tuple[int, str]], after_sync: bool = False) -> list[tuple[int, str]]:
    """A list item's or a paragraph's own lines, a line that does not begin like a sync line
    continuing the one above: the line wrapped, and the page shows one item or paragraph
    (spec §3.1: CommonMark joins consecutive lines). One that begins like a sync line is its
    own. `after_sync`: only a sync line is continued (in a paragraph, each line of prose
    stays a line of its own, each a parse issue). A line meant as a sync line of its own
    (`s3 | gate: …`) is never a continuation: read on its own, it is a sync line or an issue."""
    parts: list[tuple[int, list[str]]] = []
    for line, text in ((n, piece) for n, whole in lines for piece in _broken(whole)):
        continues = parts and (not after_sync or _SYNC_START_RE.match(parts[-1][1][0]))
        if continues and not _own_line(text, after_sync):
            parts[-1][1].append(text.strip())
        else:
            parts.append((line, [text.rstrip()]))
    return [(line, " ".join(texts)) for line, texts in parts]


def _own_line(text: str, after_sync: bool) -> bool:
    """Whether a line is read on its own, never as the end of the one above: it begins like
    a sync line (`S3 …`) or is meant as one (`s3 | gate: …`); in a list item only with a
    field separator or an arrow, as a sync heading needs, so that `S1 left sharing as it was`
    under S1's result is a note of that item (spec §3.1: a sub-item belongs to the item)."""
    if not after_sync and "|" not in text and not ARROW_RE.search(text) and "&rarr;" not in text:
        return False
    if _SYNC_START_RE.match(text) is not None:
        return True
    # A field cell that begins the line (`| scope: …`) is the wrapped end of the dispatch
    # above (found by a hunt: it was a line of its own, and a whole log failed BS-SYNC-01).
    return _FIELD_CELL_RE.match(text) is None and _MEANT_AS_SYNC_RE.search(text) is not None


_FIELD_CELL_RE = re.compile(r"(?i)[ \t]*+\|[ \t*_`]*+(?:gate|dispatched|scope)[ \t*_`]*+:")


# A sync line begun inside another's scope or summary (`… | untouched: noneS4 | gate: …`, as
# a writer appending to a log with no final newline leaves it, glued to the word before): a
# dispatch's `S# | gate:` or a result's `S# → reconciled|failed`.
_JOINED_SYNC_RE = re.compile(
    r"(?<![0-9])S[0-9]++[ \t]*+(?:\|[ \t]*+(?i:gate)[ \t]*+:"
    r"|(?:→|->|&rarr;)[ \t]*+(?i:reconciled|failed)(?![A-Za-z]))"
)


def _joined(text: str) -> list[str]:
    """A line cut where a sync line begins after another's fields: each is read on its own,
    sharing the line, which fails BS-SYNC-01 (found by a hunt: the second vanished into the
    first's summary, and an unanswered dispatch before the newest passed)."""
    bar = text.find("|")  # a sync line's fields come before the one glued on
    cuts = [m.start() for m in _JOINED_SYNC_RE.finditer(text, bar + 1)] if bar >= 0 else []
    if not cuts:
        return [text]
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


def _broken(text: str) -> list[str]:
    """A line cut at each `<br>` that a sync line follows (`… | 0 open<br>S3 | gate: …`):
    the page shows that sync line on a line of its own, so it is read as one, never as the
    summary of the line before. Other text after a `<br>` stays with the text before it
    (`S2 touched the map`, with neither a field separator nor an arrow, is none). A sync line
    glued to the one before it is cut off too (_joined)."""
    if "S" in text and "|" in text:
        return [piece for part in _at_breaks(text) for piece in _joined(part)]
    return _at_breaks(text)


def _at_breaks(text: str) -> list[str]:
    if "<" not in text:
        return [text]
    first, *rest = BREAK_RE.split(text)
    pieces = [first]
    for segment in rest:
        if _own_line(segment.strip(), after_sync=False):
            pieces.append(segment)
        else:
            pieces[-1] += "<br>" + segment
    return [piece for piece in pieces if piece.strip()]


def _inner_reads(doc: Document, lines: list[str]) -> Iterator[Read]:
    """The lines inside fenced, indented and HTML blocks, read as if they stood outside
    (models copy the schema's fenced example fence and all); the fences, the tags around
    a line and hidden HTML (a comment) are not read, the text after a comment's end is."""
    for first, last in doc.code:
        for at in range(first, last + 1):
            read = _inner(lines[at - 1], at)
            if read is not None:
                yield read
    for first, last in doc.html:
        kind = html_kind(_bare_line(lines[first - 1]), 0)
        if kind in HIDDEN_HTML:
            # The text after a comment's end on its last line is shown (`<!-- x --> S3 | …`),
            # so it is read as a line of the log, not hidden with the comment.
            tail = shown_tail(_bare_line(lines[last - 1]), kind, 0)
            read = _inner(tail, last) if tail else None
            if read is not None:
                yield read[0], _shown_head(read[1]) if read[1] else read[1], read[2]
            continue
        for at in range(first, last + 1):
            read = _inner(untagged(_bare_line(lines[at - 1])), at)
            if read is not None:
                # A browser decodes references in HTML; a code block shows them as written.
                yield read[0], _shown_head(read[1]) if read[1] else read[1], read[2]


def _bare_line(raw: str) -> str:
    """A line without its indentation, quote and list markers, and trailing spaces."""
    return raw[PREFIX_RE.match(raw).end() :].rstrip(" \t")  # type: ignore[union-attr]


def _inner(raw: str, at: int) -> Read | None:
    """What a line inside a block is read as: a sync line, a heading (strict when it
    begins like a sync line) or nothing (blank, a fence, a break)."""
    text = _bare_line(raw)
    if not text or _FENCE_LINE_RE.fullmatch(text) or _RULE_LINE_RE.fullmatch(text):
        return None
    level = heading_level(text, 0) if text[0] == "#" else 0
    if level:
        text = heading_text(text, level)
        return at, text, _names_sync(text)
    return at, text, True


def _line(text: str, line: int, rec: Records, strict: bool) -> None:
    # As the page shows it: struck-through text (`→ ~~failed~~ reconciled`) says nothing,
    # and a line struck through whole is no line, as one in a comment is not.
    if "~" in text or "<" in text:
        text = shown(text)
        if not text:
            return
    if text[:1] == "S" and len(text) <= MAX_LINE_CHARS:
        m = _DISPATCH_RE.fullmatch(text)
        if m is not None:
            num, gate, at_raw, scope = m.groups()
            _event(rec, line, num, "dispatch", at_raw, gate=gate, scope=scope)
            return
        m = _RESULT_RE.fullmatch(text)
        if m is not None and not _template(m[2], m[3]):
            _result(m[1], m[2], m[3], m[4] or "", line, rec)
            return
    if text.lstrip(" \t*_`")[:1] != "S":
        if strict:
            message = f"neither a dispatch nor a result: {text[:120]}"
            rec.issue(FILE, line, "bad-sync-line", message, RULE)
        return
    cells = text.split("|")
    head = bare(cells[0])
    arrow = ARROW_RE.search(head)
    m = _ID_RE.fullmatch(bare(head[: arrow.start()]) if arrow else head)
    if m is not None and arrow is None and len(cells) >= 4 and _dispatch(m[1], cells, line, rec):
        return
    if m is not None and arrow is not None and len(cells) >= 2:
        outcome = token(head[arrow.end() :], _OUTCOMES)
        if outcome is not None and not _template(outcome, cells[1]):
            summary = "|".join(cells[2:]).strip()
            _result(m[1], outcome, cells[1], summary, line, rec)
            return
        if strict:
            message = f"neither a dispatch nor a result: {text[:120]}"
            if outcome is not None:
                message = f"an unfilled template, reconciled and failed both named: {text[:120]}"
            rec.issue(FILE, line, "bad-sync-line", message, RULE)
            # Still a result line of its sync, whose outcome is unread: not one in flight.
            _event(rec, line, m[1], "result", cells[1].strip() if outcome is None else "", False)
            return
    if strict:
        message = f"neither a dispatch nor a result: {text[:120]}"
        rec.issue(FILE, line, "bad-sync-line", message, RULE)


def _template(outcome: str, cell: str) -> bool:
    """Whether the cell after a result's outcome names the other outcome: the schema's
    `reconciled | failed` copied unfilled, not a timestamp."""
    return token(cell, _OUTCOMES) not in (None, outcome)


def _dispatch(num: str, cells: list[str], line: int, rec: Records) -> bool:
    """A dispatch line `S{n} | gate: … | dispatched: … | scope: …` (names in any case);
    the scope runs to the end of the line."""
    found: dict[str, str] = {}
    for index, cell in enumerate(cells[1:], 1):
        parsed = field(cell)
        if parsed is None or parsed[0] not in _DISPATCH or parsed[0] in found:
            return False
        if parsed[0] == "scope":
            found["scope"] = field("|".join(cells[index:]))[1]  # type: ignore[index]
            break
        found[parsed[0]] = parsed[1]
    if len(found) < 3:
        return False
    gate, scope = found["gate"], found["scope"]
    _event(rec, line, num, "dispatch", found["dispatched"], gate=gate, scope=scope)
    return True


def _result(num: str, outcome: str, at_raw: str, summary: str, line: int, rec: Records) -> None:
    counts = _counts(summary, line, rec) if outcome == "reconciled" else (None, None, None)
    _event(
        rec,
        line,
        num,
        "result",
        at_raw.strip(),
        result=outcome,
        summary=summary,
        edits=counts[0],
        new_forks=counts[1],
        open_forks=counts[2],
    )


def _event(
    rec: Records, line: int, num: str, kind: str, at_raw: str, timed: bool = True, **fields: object
) -> None:
    """A sync_events row; `timed`: a time that cannot be read is an issue of its own (not for a
    line already noted as unread)."""
    at = stamp(at_raw)[0]
    if at is None and timed:
        # A sync line whose time cannot be read is not fully read: the log's rule fails.
        message = f"S{num} timestamp '{at_raw[:80]}' is not ISO 8601"
        rec.issue(FILE, line, "bad-timestamp", message, RULE)
    row = {
        "file": FILE,
        "line": line,
        "sync_id": canonical_id("S", num),
        "sync_num": int(num) if len(num) < 10 else number(rec, FILE, line, num, "sync"),
        "kind": kind,
        "at_raw": at_raw,
        "at": at,
        "gate": None,
        "scope": None,
        "result": None,
        "summary": None,
        "edits": None,
        "new_forks": None,
        "open_forks": None,
    }
    row.update(fields)
    rec.add("sync_events", **row)


def _counts(summary: str, line: int, rec: Records) -> tuple[int | None, ...]:
    return tuple(
        number(rec, FILE, line, m[1].replace(",", ""), "count")
        if (m := pattern.search(summary))
        else None
        for pattern in (_EDITS_RE, _NEW_FORKS_RE, _OPEN_RE)
    )
