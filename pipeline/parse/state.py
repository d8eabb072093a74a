"""state.md: the anchor bullets and the aspect map."""

from __future__ import annotations

import re

from pipeline.parse.lexical import field, parse_date_or_timestamp, split_arrow, stamp
from pipeline.parse.records import Records

FILE = "state.md"
_FIELDS = {
    "Status": "status",
    "Posture": "posture",
    "Started": "started",
    "Sitting": "sitting",
    "Last compose": "last_compose_raw",
}
# The first dash of lexical.DASH: an em or en dash, or a hyphen with a space each side.
# Searched for alone (the spaces around it are trimmed): `^(.*?)` before DASH's `\s*`
# is quadratic in a long run of spaces.
_DASH_AT_RE = re.compile(r"[—–]|(?<=\s)-(?=\s)")
_REF_RE = re.compile(r"^(?:(F|D)(\d+)|fragment:\s*(\S.*))$")


def parse_state(lines: list[str], rec: Records) -> None:
    snap = rec.snapshot
    in_map = False
    for number, line in enumerate(lines, 1):
        if line.startswith("## "):
            in_map = line[3:].strip() == "Aspect map"
            if in_map:
                snap["aspect_map_line"] = number
            continue
        if in_map:
            stripped = line.strip()
            if stripped.startswith(("- ", "* ")):
                _aspect(stripped[2:].strip(), number, rec)
            continue
        parsed = field(line)
        if parsed is None or parsed[0] not in _FIELDS:
            continue
        name, value = parsed
        key = _FIELDS[name]
        if key in snap:
            rec.issue(FILE, number, "duplicate-field", f"second '{name}:' bullet ignored")
            continue
        snap[key] = value
        if key == "status":
            snap["status_line"] = number
        elif key == "started":
            snap["started"] = parse_date_or_timestamp(value)
            if snap["started"] is None and value:
                rec.issue(FILE, number, "bad-timestamp", f"Started '{value}' is not a date")
        elif key == "last_compose_raw":
            snap["last_compose_line"] = number
            instant, never = stamp(value)
            snap["last_compose"], snap["last_compose_never"] = instant, never
            if instant is None and not never:
                rec.issue(
                    FILE, number, "bad-timestamp", f"Last compose '{value}' is not a timestamp"
                )


def _aspect(text: str, line: int, rec: Records) -> None:
    arrow = split_arrow(text)
    head, refs_raw = (text, None) if arrow is None else (arrow[0], arrow[1].strip())
    m = _DASH_AT_RE.search(head)
    name, description = (
        (head[: m.start()].strip(), head[m.end() :].strip()) if m else (head.strip(), None)
    )
    refs = [r.strip() for r in refs_raw.split(",")] if refs_raw else []
    refs = [r for r in refs if r]
    rec.add(
        "aspects",
        file=FILE,
        line=line,
        name=name,
        description=description,
        has_arrow=arrow is not None,
        refs_raw=refs_raw,
        ref_count=len(refs),
    )
    for ref in refs:
        kind, target = _classify(ref)
        rec.add("aspect_refs", file=FILE, line=line, aspect=name, ref=ref, kind=kind, target=target)


def _classify(ref: str) -> tuple[str, str | None]:
    if ref == "thesis":
        return "thesis", None
    if ref.lower() == "none yet":
        return "none_yet", None
    m = _REF_RE.match(ref)
    if m is None:
        return "unknown", None
    if m[1]:
        return ("fork" if m[1] == "F" else "decision"), f"{m[1]}{m[2]}"
    return "fragment", m[3].strip()
