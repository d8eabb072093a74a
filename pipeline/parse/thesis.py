"""thesis.md: title, `Current as of:` stamp, and the three mandatory headings."""

from __future__ import annotations

from pipeline.parse.blocks import Heading, Paragraph, parse
from pipeline.parse.lexical import stamp
from pipeline.parse.reading import fields, section
from pipeline.parse.records import Records

FILE = "thesis.md"
_HEADINGS = {
    "claim": "thesis_has_claim",
    "argument": "thesis_has_argument",
    "what changed": "thesis_has_what_changed",
}
_NAMES = tuple(_HEADINGS)
_STAMP = {"current as of": "stamp"}


def parse_thesis(lines: list[str], rec: Records) -> None:
    snap = rec.snapshot
    for key in _HEADINGS.values():
        snap[key] = False
    for block in parse(lines).blocks:
        if isinstance(block, Heading):
            if block.level == 1 and "thesis_title" not in snap:
                snap["thesis_title"] = block.text
                continue
            name = section(block.text, _NAMES) if block.level >= 2 else None
            if name is not None:
                snap[_HEADINGS[name]] = True
                continue
            # A stamp underlined by `---` is a setext heading, still recognisably the stamp.
            block = Paragraph([(block.line, block.text)])
        if "thesis_stamp_raw" not in snap:
            for _, raw, line in fields(block, _STAMP):
                _stamp(rec, raw, line)
                break


def _stamp(rec: Records, raw: str, line: int) -> None:
    snap = rec.snapshot
    instant, never = stamp(raw)
    snap["thesis_stamp_raw"] = raw
    snap["thesis_stamp"], snap["thesis_stamp_never"] = instant, never
    snap["thesis_stamp_line"] = line
    if instant is None and not never:
        rec.issue(FILE, line, "bad-timestamp", f"stamp '{raw[:80]}' is not a timestamp")
