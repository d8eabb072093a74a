"""forks.md: one fork per level-2 heading `F{n} — {title} [{marker}]`, with its fields."""

from __future__ import annotations

import re
from typing import Any

from pipeline.parse.blocks import Heading, parse
from pipeline.parse.lexical import ARROW_RE, bare, ids, token
from pipeline.parse.reading import as_fields, entry_id, fields, number, repeated
from pipeline.parse.records import Records
from pipeline.schema import FORKS, blank_row

FILE = "forks.md"
_FIELDS = {"raised by": "raised_by", "closes when": "closes_when"}
_RAISERS = ("user", "twin", "probe", "harvest")
_BRACKET_RE = re.compile(r"[\[\]]")
# What may stand between an ID and its title: spaces, a dash, a colon, emphasis marks.
_SEPARATORS = " \t—–-:*_`"
_BLANK = blank_row(FORKS, "file", "line")


def parse_forks(lines: list[str], rec: Records) -> None:
    fork: dict[str, Any] | None = None
    for block in parse(lines).blocks:
        block = as_fields(block, _FIELDS)
        if isinstance(block, Heading):
            entry, digits, rest = entry_id(block.text, "F")
            if entry:
                fork = _heading(block, digits, rest, rec)
                if block.level != 2:
                    # Meant as a fork, at the wrong level: counted, and BS-FORK-01 fails.
                    message = f"fork heading is level {block.level}; a fork is `## F# — title`"
                    rec.issue(FILE, block.line, "entry-heading-level", message, "BS-FORK-01")
            elif block.level <= 2:
                fork = None  # a section heading ends the entry; a subheading is inside it
            continue
        if fork is None:
            continue
        for key, value, line in fields(block, _FIELDS):
            if fork[key] is not None:
                repeated(rec, FILE, line, *_needs(key, fork[key], value))
            elif key == "raised_by":
                _raised_by(fork, value, line, rec)
            else:
                fork["closes_when"], fork["closes_when_line"] = value, line


def _needs(key: str, first: str, second: str) -> tuple[str, str, str, str | None]:
    """(name, first, second, the rule that needs the field) for a field given twice: Closes
    when is BS-FORK-01's; Raised by is BS-SYNC-02's when either value may be the twin's."""
    if key == "closes_when":
        return "Closes when", first, second, "BS-FORK-01"
    both = f"{first} {second}"
    twin = "twin" in both.lower() or bool(ids(both, "S"))
    return "Raised by", first, second, "BS-SYNC-02" if twin else None


def _heading(block: Heading, digits: str | None, rest: str, rec: Records) -> dict[str, Any]:
    fork = dict(_BLANK)
    line = block.line
    if digits is not None:
        fork["fork_id"] = f"F{digits}"
        fork["fork_num"] = number(rec, FILE, line, digits, "fork")
    else:
        rec.issue(FILE, line, "bad-fork-heading", f"fork heading has no F# ID: {block.text[:120]}")
    text = rest.lstrip(_SEPARATORS)
    marker = _marker(text)
    if marker is None:
        fork["title"] = bare(text)
        rec.issue(
            FILE, line, "bad-fork-heading", f"fork heading has no [marker]: {block.text[:120]}"
        )
    else:
        start, raw = marker
        fork["title"], fork["marker_raw"] = bare(text[:start]), raw
        _read_marker(fork, raw, line, rec)
    fork["heading_ok"] = digits is not None and marker is not None
    return rec.add("forks", file=FILE, line=line, **fork)


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
    pairs: list[tuple[int, int]] = []
    opened: list[int] = []
    for m in _BRACKET_RE.finditer(text):
        if m[0] == "[":
            opened.append(m.start())
        elif opened:
            pairs.append((opened.pop(), m.start()))
    pairs = [(a, b) for a, b in pairs if text[b + 1 : b + 2] != "("]
    if not pairs:
        return None
    pairs.sort()
    for start, end in reversed(pairs):
        if bare(text[start + 1 : end]).lower().startswith(("open", "parked")):
            return start, text[start + 1 : end]
    start, end = pairs[-1]
    return start, text[start + 1 : end]


def _read_marker(fork: dict[str, Any], raw: str, line: int, rec: Records) -> None:
    text = bare(raw)
    if token(text, ("open", "parked")) == "open":
        fork["marker"] = "open"
        return
    arrow = ARROW_RE.search(text)
    if token(text[: arrow.start()] if arrow else text, ("parked", "open")) == "parked":
        fork["marker"] = "parked"
        fork["destination"] = bare(text[arrow.end() :]) if arrow else ""
        return
    rec.issue(FILE, line, "unknown-marker", f"marker '[{raw[:80]}]' is neither open nor parked")


def _raised_by(fork: dict[str, Any], value: str, line: int, rec: Records) -> None:
    fork["raised_by"], fork["raised_by_line"] = value, line
    kind = token(value, _RAISERS) or token(value, ("twin",), fold=True)
    syncs = ids(value, "S")
    fork["raised_by_syncs"] = syncs
    fork["raised_by_sync"] = syncs[0] if syncs else None
    if kind is None:
        fork["raised_by_kind"] = "other"
        # A raiser that names a sync may be the twin's: BS-SYNC-02 cannot be shown to hold.
        rule = "BS-SYNC-02" if syncs else None
        message = f"Raised by '{value[:80]}' is not user, twin (S#), probe or harvest"
        rec.issue(FILE, line, "unknown-raiser", message, rule)
        return
    fork["raised_by_kind"] = kind
    if kind == "twin" and not syncs:
        rec.issue(
            FILE,
            line,
            "twin-without-sync",
            f"{fork['fork_id'] or 'fork'} is raised by '{value[:80]}', which cites no sync "
            "(expected twin (S#))",
            "BS-SYNC-02",
        )
