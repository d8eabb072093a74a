"""ops/sync-log.md: dispatch lines and result lines of twin syncs."""

from __future__ import annotations

import re

from pipeline.parse.lexical import MAX_LINE_CHARS, int32, parse_timestamp
from pipeline.parse.records import Records

FILE = "ops/sync-log.md"
# Each value runs from its first to its last non-space: `(?:[^|]*[^|\s])?` and
# `(?:.*\S)?` rather than a lazy `*?` before `\s*`, and possessive `\s*+` before a
# value that may be followed by a failing match, so that no run of spaces is rescanned
# (the lazy forms took quadratic, for results cubic, time in a long run of spaces).
_CELL = r"((?:[^|]*[^|\s])?)"
_REST = r"((?:.*\S)?)"
_DISPATCH_RE = re.compile(
    rf"^S(\d+)\s*\|\s*gate:\s*+{_CELL}\s*\|\s*dispatched:\s*+{_CELL}\s*\|"
    rf"\s*scope:\s*+{_REST}\s*$"
)
_RESULT_RE = re.compile(
    rf"^S(\d+)\s*(?:→|->)\s*(reconciled|failed)\s*\|\s*+{_CELL}\s*(?:\|\s*+{_REST})?\s*$"
)
_EDITS_RE = re.compile(r"\b(\d+)\s+edits?\b")
_NEW_FORKS_RE = re.compile(r"\b(\d+)\s+new\s+forks?\b")
_OPEN_RE = re.compile(r"\b(\d+)\s+open\b")


def parse_sync_log(lines: list[str], rec: Records) -> None:
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line:
            continue
        dispatch = _DISPATCH_RE.match(line) if len(line) <= MAX_LINE_CHARS else None
        result = None if dispatch or len(line) > MAX_LINE_CHARS else _RESULT_RE.match(line)
        if dispatch:
            num, gate, at_raw, scope = dispatch.groups()
            _event(rec, number, num, "dispatch", at_raw, gate=gate, scope=scope)
        elif result:
            num, outcome, at_raw, summary = result.groups()
            summary = summary or ""
            counts = _counts(summary) if outcome == "reconciled" else (None, None, None)
            _event(
                rec,
                number,
                num,
                "result",
                at_raw,
                result=outcome,
                summary=summary,
                edits=counts[0],
                new_forks=counts[1],
                open_forks=counts[2],
            )
        else:
            rec.issue(
                FILE, number, "bad-sync-line", f"neither a dispatch nor a result: {line[:120]}"
            )


def _event(rec: Records, line: int, num: str, kind: str, at_raw: str, **fields: object) -> None:
    at = parse_timestamp(at_raw)
    if at is None:
        rec.issue(FILE, line, "bad-timestamp", f"S{num} timestamp '{at_raw}' is not ISO 8601")
    row = dict.fromkeys(("gate", "scope", "result", "summary", "edits", "new_forks", "open_forks"))
    row.update(fields)
    rec.add(
        "sync_events",
        file=FILE,
        line=line,
        sync_id=f"S{num}",
        sync_num=int32(num),
        kind=kind,
        at_raw=at_raw,
        at=at,
        **row,
    )


def _counts(summary: str) -> tuple[int | None, ...]:
    return tuple(
        int32(m[1]) if (m := pattern.search(summary)) else None
        for pattern in (_EDITS_RE, _NEW_FORKS_RE, _OPEN_RE)
    )
