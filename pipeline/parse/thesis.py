"""thesis.md: title, `Current as of:` stamp, and the three mandatory headings."""

from __future__ import annotations

import re

from pipeline.parse.blocks import Block, Heading, Paragraph, parse
from pipeline.parse.lexical import (
    INVISIBLE,
    UNICODE_SPACES,
    bare,
    find_timestamp,
    read_stamp,
    stamp,
    stamp_hint,
)
from pipeline.parse.reading import (
    as_fields,
    fields,
    note_html_fields,
    note_unread,
    repeated,
    section,
    unclosed_block,
)
from pipeline.parse.records import Records

FILE = "thesis.md"
_HEADINGS = {
    "claim": "thesis_has_claim",
    "argument": "thesis_has_argument",
    "what changed": "thesis_has_what_changed",
}
_NAMES = tuple(_HEADINGS)
_STAMP = {"current as of": "stamp"}
# Other names a line meant as the stamp is written under (`Updated: 2026-…`): not read, but
# named, where the rules failed with no line (found by a hunt).
_OTHER_STAMP = {name: name.capitalize() for name in ("updated", "last updated", "as of")}
# A table's header `| Current as of | 2026-07-09T10:14Z |` is meant as the stamp.
_STAMP_TAKEN = {"stamp": lambda value: stamp(value) != (None, False)}
# What may stand before a section's name in a heading meant as that section (`## 1. Claim`,
# `## II. Argument`, `## The claim`, `## Our main claim`): a number counting the sections,
# an article, a possessive or a word that ranks it.
_BEFORE_NAME_RE = re.compile(
    r"(?i)(?:(?:[0-9]{1,3}[.)]?|[ivx]{1,4}[.)]|[a-z][.)]|the|an?|our|my|main|core|key|central"
    r"|current|overall|revised|updated)[ \t]++)++"
)
# Other forms of a section's name: the plural, and `What has changed` for `What changed`.
_NAME_FORMS = (
    (re.compile(r"(?i)what(?:['’]s|[ \t]++ha(?:s|ve))[ \t]++changed"), "what changed"),
    (re.compile(r"(?i)(claim|argument)s(?![A-Za-z0-9_])"), r"\1"),
)
# A line meant as a section heading that CommonMark reads as text: its #s typed fullwidth,
# with no plain space after them, or behind a character that shows as a space or nothing.
_NOT_HEADING_RE = re.compile(
    rf"[{INVISIBLE}{UNICODE_SPACES} \t]*+[#\uff03]{{1,6}}+[{INVISIBLE}{UNICODE_SPACES} \t]*+(.+)"
)


def parse_thesis(lines: list[str], rec: Records) -> None:
    snap = rec.snapshot
    for key in _HEADINGS.values():
        snap[key] = False
    doc = parse(lines)
    # A fence never closed hides the rest of the file (spec §3.1: fail closed).
    unclosed_block(doc, rec, FILE, "BS-THESIS-01")
    # Each stamp noted but not read, whatever its form: (value, line, issue code).
    hidden = note_html_fields(rec, FILE, doc, lines, _STAMP, _compose)
    unread = [(value, line, "unread-field") for _, value, line in hidden]
    elsewhere: dict[str, Heading] = {}  # a section's name at another level than 2
    near: dict[str, tuple[int, str, str]] = {}  # a section's name not written as its heading
    others: list[tuple[str, str, int]] = []  # the stamp under another name
    for block in doc.blocks:
        if isinstance(block, Heading):
            if block.level == 1 and "thesis_title" not in snap:
                snap["thesis_title"] = block.text
                continue
            name = section(block.text, _NAMES)
            if name is not None and block.level == 2:
                snap[_HEADINGS[name]] = True
                continue
            if name is not None:
                elsewhere.setdefault(name, block)
                continue
            named = _named_late(block.text)
            if named is not None:
                written = f"{'#' * block.level} {block.text}"
                near.setdefault(named, (block.line, written, _BEGINS))
                continue
            # A stamp in a heading, or above a `---` (a setext heading), is still the stamp.
            block = as_fields(block, _STAMP)
            if isinstance(block, Heading):
                block = Paragraph([(block.line, block.text)])
        if isinstance(block, Paragraph):
            _not_headings(block, near)
        unread += _noted(rec, block)
        others += fields(block, _OTHER_STAMP)
        for _, raw, line in fields(block, _STAMP):
            if "thesis_stamp_raw" not in snap:
                _stamp(rec, raw, line)
            else:
                first = snap["thesis_stamp_raw"]
                rule = "BS-COMPOSE-01"
                if not repeated(rec, FILE, line, "Current as of", first, raw, rule, read_stamp):
                    unread += [(raw, line, "duplicate-field")]
    _unread_stamps(rec, unread)
    _other_stamps(rec, others)
    _not_sections(rec, elsewhere, near)


_BEGINS = "a section heading begins with its name"
_NO_HEADING = "CommonMark reads the line as text, not as a heading"


def _named_late(text: str) -> str | None:
    """The section a heading names after a number or an article (`1. Claim`, `The claim`),
    or in another form (`Claims`, `What has changed`); None when it names none so."""
    seen = bare(text).lstrip(" \t")
    m = _BEFORE_NAME_RE.match(seen)
    rest = seen if m is None else seen[m.end() :]
    for pattern, name in _NAME_FORMS:
        if pattern.match(rest):
            return section(pattern.sub(name, rest, count=1), _NAMES)
    return None if m is None else section(rest, _NAMES)


def _not_headings(block: Paragraph, near: dict[str, tuple[int, str, str]]) -> None:
    """Each line of a paragraph meant as a section heading but read as text (`＃＃ Claim`,
    `##Claim`, `\u00a0## Claim`, a bold `**Argument**` alone on its line), into `near`."""
    for line, text in block.lines:
        m = _NOT_HEADING_RE.fullmatch(text)
        name = section(m[1], _NAMES) or _named_late(m[1]) if m else None
        if m is None and text.lstrip(" \t")[:2] in ("**", "__"):
            name = next((n for n in _NAMES if bare(text).strip(" \t").lower() == n), None)
        if name is not None:
            near.setdefault(name, (line, text.strip(" \t"), _NO_HEADING))


def _not_sections(
    rec: Records, elsewhere: dict[str, Heading], near: dict[str, tuple[int, str, str]]
) -> None:
    """A note, failing BS-THESIS-01, on a heading meant as a section the file lacks: its
    name at another level than 2, or behind a number or an article (spec §3.1 allows text
    after a section's name, not before it)."""
    snap = rec.snapshot
    for name, heading in elsewhere.items():
        if not snap[_HEADINGS[name]]:
            # `### Claim 1: …` under another section is no Claim section (spec: `## Claim`).
            message = (
                f"'{'#' * heading.level} {heading.text[:60]}' is a level-{heading.level} "
                f"heading; the section is `## {name.capitalize()}`"
            )
            rec.issue(FILE, heading.line, "section-heading-level", message, "BS-THESIS-01")
    for name, (line, written, why) in near.items():
        if not snap[_HEADINGS[name]] and name not in elsewhere:
            message = f"'{written[:60]}' is not the section `## {name.capitalize()}`: {why}"
            rec.issue(FILE, line, "section-heading-name", message, "BS-THESIS-01")


def _noted(rec: Records, block: Block) -> list[tuple[str, int, str]]:
    """The stamps a block holds that are noted but not read: (value, line, issue code).
    `*Current as of 2026-07-09T10:14Z*`: a space alone before a timestamp is meant too."""
    spaced = {"stamp": find_timestamp}
    found = note_unread(rec, FILE, block, _STAMP, _compose, _STAMP_TAKEN, spaced)
    return [(value, line, code) for _, _, value, line, code in found]


def _unread_stamps(rec: Records, unread: list[tuple[str, int, str]]) -> None:
    """A stamp that was not read (a second one, a table row, a sub-item, …) fails
    BS-COMPOSE-01 where it was noted; when the stamp read parses and this one does not,
    BS-THESIS-01 could not be shown to hold either, so it fails too (§3.1, fail closed)."""
    snap = rec.snapshot
    if snap.get("thesis_stamp") is None and not snap.get("thesis_stamp_never"):
        return  # no stamp read, or one that does not parse: the rule fails already
    for value, line, code in unread:
        if stamp(value) == (None, False):
            message = (
                f"stamp '{snap['thesis_stamp_raw'][:60]}' is contradicted by 'Current as of: "
                f"{value[:60]}', which is not read and is not a timestamp"
            )
            rec.issue(FILE, line, code, message, "BS-THESIS-01")


def _other_stamps(rec: Records, others: list[tuple[str, str, int]]) -> None:
    """Each line meant as the stamp under another name (`Updated: 2026-…`) whose value is a
    timestamp: not read, and noted; with no stamp read it fails the rules that need one,
    naming the line they lacked (else it is a note)."""
    read = "thesis_stamp_raw" in rec.snapshot
    for name, value, line in others:
        if stamp(value) == (None, False):
            continue
        message = (
            f"'{name}: {value[:60]}' is meant as the 'Current as of:' stamp but is not written "
            "'Current as of: value', so it is not read"
        )
        for rule in (None,) if read else ("BS-THESIS-01", "BS-COMPOSE-01"):
            rec.issue(FILE, line, "malformed-field", message, rule)


def _compose(_key: str, _value: str) -> str:
    return "BS-COMPOSE-01"  # the rule that reads the stamp


def _stamp(rec: Records, raw: str, line: int) -> None:
    snap = rec.snapshot
    instant, never = stamp(raw)
    snap["thesis_stamp_raw"] = raw
    snap["thesis_stamp"], snap["thesis_stamp_never"] = instant, never
    snap["thesis_stamp_line"] = line
    if instant is None and not never:
        message = f"stamp '{raw[:80]}' is not a timestamp{stamp_hint(raw)}"
        rec.issue(FILE, line, "bad-timestamp", message)
