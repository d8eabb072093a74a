"""ops/sync-log.md: dispatch lines and result lines of twin syncs, as plain lines, list
items or headings alike; any other line is a parse issue that fails BS-SYNC-01."""

from __future__ import annotations

import re

from pipeline.parse.blocks import Heading, Item, Paragraph, Table, parse
from pipeline.parse.lexical import ARROW_RE, MAX_LINE_CHARS, bare, field, stamp, token
from pipeline.parse.reading import number
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
_EDITS_RE = re.compile(r"\b(\d+)\s+edits?\b")
_NEW_FORKS_RE = re.compile(r"\b(\d+)\s+new\s+forks?\b")
_OPEN_RE = re.compile(r"\b(\d+)\s+open\b")


def parse_sync_log(lines: list[str], rec: Records) -> None:
    for block in parse(lines).blocks:
        if isinstance(block, Paragraph):
            for line, text in block.lines:
                _line(text, line, rec, True)
        elif isinstance(block, Item):
            for line, text in block.all_lines() if block.parts else block.lines:
                _line(text, line, rec, True)
        elif isinstance(block, Heading) and block.underlined and len(block.underlined) > 1:
            # Lines above a `---` are the lines they are, each read (a section title is one).
            for line, text in block.underlined:
                _line(text, line, rec, True)
        elif isinstance(block, Heading):
            # A heading is a section, unless it holds a sync line (one underlined by `---`).
            _line(block.text, block.line, rec, False)
        elif isinstance(block, Table):
            for line in (block.line, *(n for n, _ in block.rows)):
                rec.issue(FILE, line, "bad-sync-line", "a table row is no sync line", RULE)


def _line(text: str, line: int, rec: Records, strict: bool) -> None:
    if text[:1] == "S" and len(text) <= MAX_LINE_CHARS:
        m = _DISPATCH_RE.fullmatch(text)
        if m is not None:
            num, gate, at_raw, scope = m.groups()
            _event(rec, line, num, "dispatch", at_raw, gate=gate, scope=scope)
            return
        m = _RESULT_RE.fullmatch(text)
        if m is not None:
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
        outcome = token(head[arrow.end() :], ("reconciled", "failed"))
        if outcome is not None:
            summary = "|".join(cells[2:]).strip()
            _result(m[1], outcome, cells[1], summary, line, rec)
            return
    if strict:
        message = f"neither a dispatch nor a result: {text[:120]}"
        rec.issue(FILE, line, "bad-sync-line", message, RULE)


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


def _event(rec: Records, line: int, num: str, kind: str, at_raw: str, **fields: object) -> None:
    at = stamp(at_raw)[0]
    if at is None:
        rec.issue(FILE, line, "bad-timestamp", f"S{num} timestamp '{at_raw[:80]}' is not ISO 8601")
    row = {
        "file": FILE,
        "line": line,
        "sync_id": f"S{num}",
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
        number(rec, FILE, line, m[1], "count") if (m := pattern.search(summary)) else None
        for pattern in (_EDITS_RE, _NEW_FORKS_RE, _OPEN_RE)
    )
