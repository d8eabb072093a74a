"""ops/capture.md: one turn per '### T{n} · {timestamp}' heading."""

from __future__ import annotations

import re

from pipeline.parse.lexical import MAX_LINE_CHARS, int32, parse_timestamp
from pipeline.parse.records import Records

FILE = "ops/capture.md"
# The stamp runs to its last non-space (not lazily before `\s*$`, which is quadratic).
_TURN_RE = re.compile(r"^###\s+T(\d+)\s*(?:·|\s-\s)\s*(\S(?:.*\S)?)\s*$")


def parse_capture(lines: list[str], rec: Records) -> None:
    for number, line in enumerate(lines, 1):
        if not line.startswith("### T"):
            continue
        m = _TURN_RE.match(line) if len(line) <= MAX_LINE_CHARS else None
        if m is None:
            rec.issue(
                FILE, number, "bad-turn-heading", f"turn heading does not parse: {line[:120]}"
            )
            continue
        at = parse_timestamp(m[2])
        if at is None:
            rec.issue(
                FILE, number, "bad-timestamp", f"turn T{m[1]} timestamp '{m[2]}' is not ISO 8601"
            )
        rec.add(
            "turns",
            file=FILE,
            line=number,
            turn_id=f"T{m[1]}",
            turn_num=int32(m[1]),
            at_raw=m[2],
            at=at,
        )
