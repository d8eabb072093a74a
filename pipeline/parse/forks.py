"""forks.md: one fork per '## F{n} — {title} [{marker}]' heading, with its bullets."""

from __future__ import annotations

import re
from typing import Any

from pipeline.parse.lexical import DASH, MAX_LINE_CHARS, field, int32
from pipeline.parse.records import Records
from pipeline.schema import FORKS, blank_row

FILE = "forks.md"
# The title ends at its last non-space (not lazily before `\s*`, which is quadratic).
_HEADING_RE = re.compile(rf"^##\s+F(\d+){DASH}((?:.*\S)?)\s*\[([^\[\]]*)\]\s*$")
_LOOSE_ID_RE = re.compile(r"^##\s+F(\d+)\b")
_LOOSE_MARKER_RE = re.compile(r"\[([^\[\]]*)\]\s*$")
_TWIN_RE = re.compile(r"^twin\s*\(\s*(S\d+)\s*\)$")
_PARKED_RE = re.compile(r"^parked(?:\s*(?:→|->)\s*(.*))?$")
_RAISERS = {"user", "probe", "harvest"}


def parse_forks(lines: list[str], rec: Records) -> None:
    fork: dict[str, Any] | None = None
    for number, line in enumerate(lines, 1):
        if line.startswith(("## ", "# ")):
            fork = _heading(line, number, rec) if line.startswith("## F") else None
            continue
        if fork is None:
            continue
        parsed = field(line)
        if parsed is None:
            continue
        name, value = parsed
        if name == "Raised by" and fork["raised_by"] is None:
            fork["raised_by"], fork["raised_by_line"] = value, number
            twin = _TWIN_RE.match(value)
            if twin:
                fork["raised_by_kind"], fork["raised_by_sync"] = "twin", twin[1]
            elif value in _RAISERS:
                fork["raised_by_kind"] = value
            else:
                fork["raised_by_kind"] = "other"
                rec.issue(
                    FILE, number, "unknown-raiser", f"Raised by '{value}' is not in the schema"
                )
        elif name == "Closes when" and fork["closes_when"] is None:
            fork["closes_when"], fork["closes_when_line"] = value, number


def _heading(line: str, number: int, rec: Records) -> dict[str, Any]:
    fork = blank_row(FORKS, "file", "line")
    m = _HEADING_RE.match(line) if len(line) <= MAX_LINE_CHARS else None
    if m:
        fork.update(fork_num=int32(m[1]), fork_id=f"F{m[1]}", title=m[2].strip(), marker_raw=m[3])
    else:
        loose = _LOOSE_ID_RE.match(line)
        if loose:
            fork.update(fork_num=int32(loose[1]), fork_id=f"F{loose[1]}")
        marker = _LOOSE_MARKER_RE.search(line[-MAX_LINE_CHARS:])
        fork["marker_raw"] = marker[1] if marker else None
        rec.issue(FILE, number, "bad-fork-heading", f"fork heading does not parse: {line[:120]}")
    raw = (fork["marker_raw"] or "").strip()
    parked = _PARKED_RE.match(raw)
    if raw == "open":
        fork["marker"] = "open"
    elif parked:
        fork["marker"] = "parked"
        fork["destination"] = (parked[1] or "").strip()
    elif m:
        rec.issue(FILE, number, "unknown-marker", f"marker '[{raw}]' is neither open nor parked")
    fork["heading_ok"] = m is not None
    return rec.add("forks", file=FILE, line=number, **fork)
