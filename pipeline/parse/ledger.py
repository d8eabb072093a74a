"""ledger.md: one entry per '## D{n} — {title}' heading, with its bullets and annotations."""

from __future__ import annotations

import re
from typing import Any

from pipeline.parse.lexical import DASH, MAX_LINE_CHARS, field, int32
from pipeline.parse.records import Records
from pipeline.schema import LEDGER, blank_row

FILE = "ledger.md"
# The title ends at its last non-space (not lazily before `\s*`, which is quadratic).
_HEADING_RE = re.compile(rf"^##\s+D(\d+){DASH}((?:.*\S)?)\s*$")
_LOOSE_ID_RE = re.compile(r"^##\s+D(\d+)\b")
_REVERSED_BY_RE = re.compile(r"Reversed by:?\s*(D\d+)")
_FIELDS = {"Decision": "decision", "Why": "why", "How to apply": "how_to_apply"}


def parse_ledger(lines: list[str], rec: Records) -> None:
    entry: dict[str, Any] | None = None
    position = 0
    # The field an indented continuation line extends, so a rewrite there is seen too.
    continuing: str | None = None
    # Its continuation lines, joined once it ends (joining line by line is quadratic).
    more: list[str] = []
    for number, line in enumerate(lines, 1):
        if line.startswith(("## ", "# ")):
            _extend(entry, continuing, more)
            entry, continuing = None, None
            if line.startswith("## D"):
                position += 1
                entry = _heading(line, number, position, rec)
            continue
        if entry is None or len(line) > MAX_LINE_CHARS:
            continue
        stripped = line.strip()
        if continuing and line[:1].isspace() and stripped and not stripped.startswith(("- ", "* ")):
            more.append(stripped)
            continue
        _extend(entry, continuing, more)
        continuing = None
        parsed = field(line)
        name, value = parsed if parsed else ("", "")
        if name in _FIELDS and entry[_FIELDS[name]] is None:
            entry[_FIELDS[name]] = value
            continuing = _FIELDS[name]
        elif name == "Resolves" and entry["resolves_raw"] is None:
            entry["resolves_raw"] = value
            for fork_id in filter(None, (part.strip() for part in value.split(","))):
                rec.add(
                    "ledger_resolves",
                    file=FILE,
                    line=number,
                    decision_id=entry["decision_id"],
                    fork_id=fork_id,
                )
        elif name == "Reverses" and entry["reverses"] is None:
            entry["reverses"] = value
        if entry["reversed_by"] is None:
            reversed_by = _REVERSED_BY_RE.search(line)
            if reversed_by:
                entry["reversed_by"], entry["reversed_by_line"] = reversed_by[1], number
    _extend(entry, continuing, more)


def _extend(entry: dict[str, Any] | None, key: str | None, more: list[str]) -> None:
    """Append the continuation lines in `more` to entry[key], space-separated; empty `more`."""
    if entry is not None and key is not None and more:
        entry[key] = " ".join(filter(None, (entry[key], *more)))
    more.clear()


def _heading(line: str, number: int, position: int, rec: Records) -> dict[str, Any]:
    entry = blank_row(LEDGER, "file", "line", "position")
    m = _HEADING_RE.match(line) if len(line) <= MAX_LINE_CHARS else None
    loose = m or _LOOSE_ID_RE.match(line)
    if loose:
        entry.update(decision_num=int32(loose[1]), decision_id=f"D{loose[1]}")
    if m:
        entry["title"] = m[2].strip()
    else:
        rec.issue(
            FILE, number, "bad-ledger-heading", f"ledger heading does not parse: {line[:120]}"
        )
    entry["heading_ok"] = m is not None
    return rec.add("ledger", file=FILE, line=number, position=position, **entry)
