"""Session text made safe to show on a line: what a terminal or a browser would act on rather
than show, written out as an escape.

C0 and C1 controls (but the tab) and DEL can clear a terminal, recolour it or set its title,
and a newline splits one finding over two lines; the bidi controls (U+202A–U+202E,
U+2066–U+2069, and the marks U+200E, U+200F, U+061C) reorder the rest of the line, so a
quoted title could reverse the census's own words after it. `--json` and the tables keep the
text as read.
"""

from __future__ import annotations

import re

_UNSHOWN_RE = re.compile(
    "[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


def _escape(match: re.Match[str]) -> str:
    code = ord(match[0])
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """`text` with each control character written as `\\xNN` or `\\uNNNN`."""
    return _UNSHOWN_RE.sub(_escape, text)
