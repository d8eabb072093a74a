"""thesis.md: title, 'Current as of:' stamp, and the three mandatory headings."""

from __future__ import annotations

from pipeline.parse.lexical import stamp
from pipeline.parse.records import Records

FILE = "thesis.md"
_HEADINGS = {
    "Claim": "thesis_has_claim",
    "Argument": "thesis_has_argument",
    "What changed": "thesis_has_what_changed",
}


def parse_thesis(lines: list[str], rec: Records) -> None:
    snap = rec.snapshot
    for key in _HEADINGS.values():
        snap[key] = False
    for number, line in enumerate(lines, 1):
        if line.startswith("# ") and "thesis_title" not in snap:
            snap["thesis_title"] = line[2:].strip()
        elif line.startswith("## "):
            heading = _HEADINGS.get(line[3:].strip())
            if heading:
                snap[heading] = True
        elif "thesis_stamp_raw" not in snap:
            text = line.strip().removeprefix("- ").strip()
            if text.startswith("Current as of:"):
                raw = text[len("Current as of:") :].strip()
                instant, never = stamp(raw)
                snap["thesis_stamp_raw"] = raw
                snap["thesis_stamp"], snap["thesis_stamp_never"] = instant, never
                snap["thesis_stamp_line"] = number
                if instant is None and not never:
                    rec.issue(FILE, number, "bad-timestamp", f"stamp '{raw}' is not a timestamp")
