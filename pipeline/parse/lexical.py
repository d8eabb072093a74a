"""The schema's shared lexical rules: decoding, dashes, arrows, field bullets, timestamps."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from pipeline.parse.records import Records

MAX_FILE_BYTES = 8 * 1024 * 1024
# Lines longer than this are not matched against the field patterns (they are prose).
MAX_LINE_CHARS = 20_000

# An ID, then an em dash, an en dash or a spaced hyphen, then a title. Atomic: the
# alternatives never overlap, and giving back its trailing spaces to the title that
# follows could only repeat work (quadratic in the spaces when the heading fails).
DASH = r"(?>\s*[—–]\s*|\s+-\s+)"
# The arrow alone; split_arrow trims the spaces around it (a pattern with a leading
# `\s*` retried at every start of a long run of spaces is quadratic).
ARROW_RE = re.compile(r"→|->")
# `- Name: value` with every quantifier possessive (no backtracking at all): the name's
# length limit and trailing spaces are checked in field(), not by backtracking.
FIELD_RE = re.compile(r"^\s*+[-*](\s++)([^:\n]*+):(.*)$")
MAX_FIELD_NAME = 60
# The largest number the tables' int32 columns (fork_num, turn_num, edits, …) hold.
INT32_MAX = 2**31 - 1

_TS_RE = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?"
    r"\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$"
)
_DATE_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")


def decode(data: bytes, file: str, rec: Records) -> list[str]:
    """Bytes → lines: BOM dropped, CRLF and CR read as LF, invalid UTF-8 replaced and noted."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        text = data.decode("utf-8", errors="replace")
        where = _line_at(data, err.start)
        rec.issue(file, where, "invalid-utf8", f"invalid UTF-8 at byte {err.start}; replaced")
    if "\x00" in text:
        where = _line_at(data, data.find(b"\x00"))
        rec.issue(file, where, "binary", "file holds NUL bytes; read as text anyway")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.split("\n")


def _line_at(data: bytes, offset: int) -> int:
    """The 1-based line (LF, CRLF or CR ends) that holds byte `offset`."""
    head = data[:offset]
    return head.count(b"\n") + head.count(b"\r") - head.count(b"\r\n") + 1


def field(line: str) -> tuple[str, str] | None:
    """A `- Name: value` bullet as (name, value), both trimmed; else None."""
    if len(line) > MAX_LINE_CHARS or not line.lstrip().startswith(("-", "*")):
        return None
    m = FIELD_RE.match(line)
    if m is None:
        return None
    gap, name, value = m.groups()
    name = name.rstrip()
    # A blank name still needs a space of its own besides the one after the bullet.
    if len(name) > MAX_FIELD_NAME or (not name and len(gap) < 2):
        return None
    return name, value.strip()


def split_arrow(text: str) -> tuple[str, str] | None:
    """Split at the last arrow: (before, after); None when there is no arrow."""
    matches = list(ARROW_RE.finditer(text))
    if not matches:
        return None
    last = matches[-1]
    # The spaces around the arrow go with it, except those the previous arrow took.
    between = text[matches[-2].end() : last.start()] if len(matches) > 1 else "-"
    start = last.start() if not between.strip() else len(text[: last.start()].rstrip())
    return text[:start], text[last.end() :].lstrip()


def parse_timestamp(raw: str) -> datetime | None:
    """An ISO 8601 instant (minutes, seconds or fractions; Z or offset) as UTC; else None."""
    m = _TS_RE.match(raw.strip())
    if m is None:
        return None
    year, month, day, hour, minute, second, frac, zone = m.groups()
    try:
        value = datetime(
            int(year),
            int(month),
            int(day),
            int(hour),
            int(minute),
            int(second or 0),
            int((frac or "0")[:6].ljust(6, "0")),
            tzinfo=UTC,
        )
    except ValueError:
        return None
    if zone and zone not in ("Z", "z"):
        sign = 1 if zone[0] == "+" else -1
        digits = zone[1:].replace(":", "")
        offset = timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or 0))
        try:
            value -= sign * offset
        except OverflowError:  # 0001-01-01T00:00+01:00 is before year 1 in UTC
            return None
    return value


def parse_date_or_timestamp(raw: str) -> datetime | None:
    m = _DATE_RE.match(raw.strip())
    if m is None:
        return parse_timestamp(raw)
    try:
        return datetime(int(m[1]), int(m[2]), int(m[3]), tzinfo=UTC)
    except ValueError:
        return None


def stamp(raw: str | None) -> tuple[datetime | None, bool]:
    """A stamp that may be `never`: (instant or None, is_never)."""
    if raw is None:
        return None, False
    if raw.strip() == "never":
        return None, True
    return parse_timestamp(raw), False


def id_number(text: str | None, prefix: str) -> int | None:
    if text is None or not text.startswith(prefix) or not text[1:].isdecimal():
        return None
    return int32(text[1:])


def int32(digits: str) -> int | None:
    """Decimal digits (as `\\d+` matches them) as an int32; None when larger.

    An 11-digit ID made the crawl fail writing its int32 column, and past 4,300 digits
    int() itself raises.
    """
    if len(digits.lstrip("0")) > len(str(INT32_MAX)):
        return None
    value = int(digits)
    return value if value <= INT32_MAX else None
