"""ops/capture.md: one turn per heading that begins with `T{n}`; its timestamp is the
first ISO 8601 timestamp anywhere on the heading line. A heading that holds one `T{n}`
and one timestamp in another order (`### 2026-07-10T16:10Z · T9`) is a turn too."""

from __future__ import annotations

import re
from datetime import datetime

from pipeline.parse.blocks import Block, Heading, Paragraph, Table, parse
from pipeline.parse.lexical import (
    canonical_id,
    find_timestamp,
    heading_shown,
    parse_timestamp,
    seen_chars,
    utc_instant,
)
from pipeline.parse.reading import (
    entry_id,
    entry_line,
    hidden_entries,
    meant_entry,
    not_an_entry_heading,
    note_coded_entries,
    number,
    row_runs,
    stray_table,
    table_rows,
    text_lines,
    unclosed_block,
)
from pipeline.parse.records import Records

FILE = "ops/capture.md"
# Compose freshness is checked against the turns: a turn that cannot be read fails it.
RULE = "BS-COMPOSE-02"
# A turn heading in the schema's spelling, read in one match (the general reading below
# gives the same result for it).
_TURN_RE = re.compile(
    r"T([0-9]{1,9})[ \t]*+[·—–|:-]?[ \t]*+"
    r"([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,9})?)?"
    r"(?:Z|[+-][0-9]{2}:[0-9]{2}))"
)
# A turn ID standing as a word anywhere in a heading (the T inside a timestamp, `10T16`,
# has a digit before it).
_LATE_ID_RE = re.compile(r"(?<![A-Za-z0-9])T([0-9]++)(?![A-Za-z0-9])")
# The same ID misspelt (`t9`, `T-9`, `Turn 9`, `turn #9`): meant as a turn, not readable.
_LATE_MEANT_RE = re.compile(
    r"(?<![A-Za-z0-9])(?i:turn[ \t]*+#?[ \t]*+|t[ \t]*+[-#._]?[ \t]*+)[0-9]++(?![A-Za-z0-9])"
)


def _schema_turn(text: str) -> tuple[str, str, datetime] | None:
    """(number, timestamp as written, instant) of a turn heading in the schema's spelling
    whose timestamp holds; None for any other heading, which the general reading takes."""
    m = _TURN_RE.fullmatch(text)
    if m is None:
        return None
    raw = m[2]
    at = utc_instant(raw)  # the pattern has checked the shape
    return None if at is None else (m[1], raw, at)


def parse_capture(lines: list[str], rec: Records) -> None:
    doc = parse(lines)
    unclosed_block(doc, rec, FILE, RULE)
    note_coded_entries(doc, lines, rec, FILE, "T")
    if doc.html:
        # Turns in HTML blocks are not read: each is a parse issue.
        hidden_entries(doc, lines, rec, FILE, "T", RULE, _weigh)
    for index, block in enumerate(doc.blocks):
        if (
            isinstance(block, Heading)
            and block.underlined
            and block.level == 2
            and not _begins_like_a_turn(block)
        ):
            # The schema's `---` before each turn underlines the last line of the turn above:
            # a setext heading nobody wrote, so it is that line of the talk (spec §3.1: a turn
            # is a heading that begins with `T{n}`), never a turn without its ID or with it late.
            # One underlined with `===` was written as a heading (found by a hunt: a stamped
            # section so written lost its time, and a stale compose passed BS-COMPOSE-02).
            _bare_turn(block, rec)
            block = Paragraph(block.underlined)
        if not isinstance(block, Heading):
            for part in row_runs(block):
                _no_heading(stray_table(part), doc.blocks, index, rec)
            continue
        if not block.text.isascii():
            # As the page shows it: `Ｔ9 · …` typed fullwidth, `T9\u200b · …`, is turn T9.
            block = Heading(block.line, block.level, seen_chars(block.text), block.underlined)
        # A first look: a turn heading begins with a T (`T3`, or misspelt `t3`, `Turn 3`),
        # or holds one later (`2026-07-10T16:10Z · T9`), or a date (`### 10 · 2026-07-10
        # 16:10Z`, a time with a space for its T; found by a hunt).
        lettered = "t" in block.text[:8].lower() or "T" in block.text
        if not lettered and _DATE_SEEN_RE.search(block.text) is None:
            continue
        if "~" in block.text or "<" in block.text:
            # A struck or commented time is no time the page shows (`~~09:58Z~~ 11:00Z`), nor
            # is a tag (`<a id="t10"></a>T10 · …`).
            block = Heading(block.line, block.level, heading_shown(block.text), block.underlined)
        fast = _schema_turn(block.text)
        if fast is None:
            _turn(block, rec)
            continue
        num, raw, instant = fast
        line, turn_id = block.line, canonical_id("T", num)
        rec.add(
            "turns",
            file=FILE,
            line=line,
            turn_id=turn_id,
            turn_num=int(num),
            at_raw=raw,
            at=instant,
        )


def _no_heading(block: Block, blocks: list[Block], index: int, rec: Records) -> None:
    """A block that is no heading: a table row, or a line meant as a turn, is noted and
    fails BS-COMPOSE-02 (not read); anything else is the talk."""
    if isinstance(block, Table):
        table_rows(block, blocks, index, rec, FILE, "T", RULE, _weigh)
        return
    meant = entry_line(block, "T")
    if meant is None or not _weigh(meant, blocks, index):
        meant = _stamp_first(block)
    if meant is not None:
        # Meant as a turn but no heading: not read, and BS-COMPOSE-02 fails.
        not_an_entry_heading(rec, FILE, meant[0], meant[1], "T", RULE)


# What may stand around a turn heading's timestamp: emphasis, spaces and separators.
_AROUND_STAMP = " \t*_`·—–|:-"
# What may stand before the timestamp of a turn heading whose T# is missing: a number,
# perhaps behind a letter or two (`7`, `S7`, `No 7`), or who spoke.
_LABEL_RE = re.compile(r"(?i)(?:[a-z]{1,2}\.?[ \t]*+)?[0-9]{1,9}|user|facilitator|twin")
# Who spoke, as a turn line may name it between its timestamp and its ID.
_SPEAKER_RE = re.compile(r"(?i)(?:user|facilitator|twin)(?![A-Za-z0-9])")
# A line that begins with a timestamp (emphasis and brackets aside): `- 2026-07-10T16:10Z · T9`.
_STAMP_FIRST_RE = re.compile(r"[*_`\[ \t]*+[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]")
# A date, the sign that a heading with no T in it may still be a turn's.
_DATE_SEEN_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
# A date and time ISO 8601 does not take as the census reads it (basic format, `20260710T1610Z`,
# or a time with no colon or a dot, `2026-07-10T1610Z`): in a heading with no turn ID, still
# a turn's stamp that cannot be read, never nothing.
_STAMP_LIKE_RE = re.compile(
    r"(?<![0-9])[0-9]{4}-?[0-9]{2}-?[0-9]{2}[T ][0-9]{2}[:.]?[0-9]{2}(?:[:.]?[0-9]{2})?"
    r"(?:[.,][0-9]+)?(?:[ \t]*(?:[Zz]|[+-][0-9]{2}(?::?[0-9]{2})?))?(?![0-9])"
)
# The end of a turn line's ID field: the line's end or a separator before what follows
# (`… · user · T8 · asks …`), not a word of the talk (`… user: T3 holds`).
_ID_FIELD_END_RE = re.compile(r"[*_`)\]]*+[ \t]*+(?:[·—–|:]|-[ \t]|$)")


# Talk that names a turn first: its ID, a space, then a word (`T3 still holds: …`).
_TALK_AFTER_ID_RE = re.compile(r"[*_`]*+[ \t]++[A-Za-z]")


def _begins_like_a_turn(block: Heading) -> bool:
    """Whether a line above a `---` (a setext heading) begins as a turn's heading does: with
    its ID, unless talk follows the ID and no timestamp stands anywhere in it (`T3 still holds:
    opt-out is not silence.`, the last line of a turn above the next turn's `---`, failed
    BS-COMPOSE-02 as a turn with no timestamp; found by a hunt). One with a time is weighed
    as a turn still: the census cannot tell it from a turn's heading (fail closed)."""
    meant, digits, rest = entry_id(block.text, "T")
    if not meant:
        return False
    talk = digits is not None and _TALK_AFTER_ID_RE.match(rest) is not None
    return not talk or find_timestamp(block.text) is not None


def _bare_turn(block: Heading, rec: Records) -> None:
    """A line above a `---` that holds only a timestamp and a number or who spoke, no turn
    ID (`8 · 2026-…`, `user · 2026-…`, `2026-… — user`): no line of the talk but a turn
    heading without its ID, as `### 8 · …` is, so it fails BS-COMPOSE-02 (spec §3.1: it
    never just disappears). A line of the talk says more (`user: 2026-…Z works`)."""
    text = block.text
    raw = find_timestamp(text)
    if raw is None or len(block.underlined or ()) != 1 or _LATE_ID_RE.search(text):
        return
    after = text[text.find(raw) + len(raw) :].strip(_AROUND_STAMP + "()[].")
    if _no_id(text, raw) and (not after or _SPEAKER_RE.fullmatch(after) is not None):
        _unnumbered(rec, block.line, text, raw)


def _stamp_first(block: Block) -> tuple[int, str, str, bool] | None:
    """A paragraph or list item line written as a turn with its timestamp first and one turn
    ID right after it (as entry_line gives a line): meant as a turn, as such a heading is.
    Who spoke may stand between them when the ID is a field of its own, ending the line or
    a separator (`… · user · T9`, `… · user · T8 · asks …`); words after it make it a line
    of the talk (`2026-…Z user: ok, T3 holds.`)."""
    for line, text in text_lines(block) or ():
        if not _STAMP_FIRST_RE.match(text):
            continue
        raw = find_timestamp(text) or ""
        after = text[text.find(raw) + len(raw) :].lstrip(_AROUND_STAMP + "[]()")
        speaker = _SPEAKER_RE.match(after)
        if speaker is not None:
            after = after[speaker.end() :].lstrip(_AROUND_STAMP + "[]()")
        found = _LATE_ID_RE.match(after)
        if found is None:
            continue
        # An ID field of its own is the turn's whatever IDs its summary names after it.
        alone = speaker is None and len(_LATE_ID_RE.findall(text)) == 1
        if alone or _ID_FIELD_END_RE.match(after, found.end()):
            return line, text, text, True
    return None


def _weigh(meant: tuple[int, str, str, bool], blocks: list[Block], index: int) -> bool:
    """Whether a line that may be meant as a turn is one: its shape says so, or a
    timestamp follows the ID."""
    return meant[3] or find_timestamp(meant[2]) is not None


def _turn(block: Heading, rec: Records) -> None:
    """A heading that begins with `T` read the general way: its number, then the first
    timestamp anywhere after it; what cannot be read fails BS-COMPOSE-02."""
    found, digits, rest = entry_id(block.text, "T")
    line = block.line
    if not found:
        meant = meant_entry(block.text, "T", heading=True)
        if meant is None:
            _late_turn(block, rec)  # a word that starts with T, or an ID further on
            return
        # `### [T10] · …`: meant as a turn, read, and BS-COMPOSE-02 fails.
        not_an_entry_heading(rec, FILE, line, block.text, "T", RULE)
        digits, rest = meant[0], meant[1]
    _turn_row(line, block.text, digits, rest, rec)


def _late_turn(block: Heading, rec: Records) -> None:
    """A heading that holds a turn ID and a timestamp but does not begin with the ID
    (`### 2026-07-10T16:10Z · T9`): meant as a turn, so it never just disappears (spec
    §3.1). One ID and one timestamp are read, with a note that the schema writes the ID
    first; more of either, or an ID misspelt (`t9`, `Turn 9`), cannot be read: no turn
    is read, and BS-COMPOSE-02 fails."""
    text, line = block.text, block.line
    raw = find_timestamp(text)
    if raw is None and (like := _STAMP_LIKE_RE.search(text)) is not None:
        raw = like[0]
    if raw is None:
        return
    ids = _LATE_ID_RE.findall(text)
    if not ids:
        if _LATE_MEANT_RE.search(text) is not None:
            # An ID misspelt (`t9`, `Turn 9`) is meant but not readable, as `### t9 · …` is.
            message = f"turn heading has no T# number: {text[:120]}"
            rec.issue(FILE, line, "bad-turn-heading", message, RULE)
        elif block.level == 3 or _no_id(text, raw):
            # A level-3 heading, the schema's turn level, with a timestamp is a turn whatever
            # its label (`### Late note · 2026-…`); so is one of another level labelled only
            # by a number or who spoke (`## user · 2026-…`).
            _unnumbered(rec, line, text, raw)
        else:
            _stamped_section(rec, line, text, raw)
        return
    if len(ids) > 1 or find_timestamp(text[text.find(raw) + len(raw) :]) is not None:
        message = f"more than one turn ID or timestamp, no turn read: {text[:120]}"
        rec.issue(FILE, line, "bad-turn-heading", message, RULE)
        return
    message = f"turn T{ids[0]} heading does not begin with its ID (`### T# · timestamp`)"
    rec.issue(FILE, line, "turn-id-not-first", message)
    _turn_row(line, text, ids[0], text, rec)


def _unnumbered(rec: Records, line: int, text: str, raw: str) -> None:
    """A turn heading with no T# (`### user · 2026-…`, `### Late note · 2026-…`): a turn that
    cannot be fully read, so it fails BS-COMPOSE-02 whatever its time (§3.1, fail closed;
    until stop 55 `### Late note · …` was a section title and the rule passed, found by a
    hunt). Its timestamp still counts among the turns' (content_time, compose lag)."""
    at = parse_timestamp(raw)
    if at is None:
        message = f"turn heading has no T# number and its timestamp '{raw[:60]}' is not ISO 8601"
        rec.issue(FILE, line, "bad-turn-heading", message, RULE)
        return
    message = f"turn heading has no T# number (counted as a turn at {raw[:60]}): {text[:120]}"
    rec.issue(FILE, line, "bad-turn-heading", message, RULE)
    rec.snapshot.setdefault("stamped_times", []).append(at)


def _stamped_section(rec: Records, line: int, text: str, raw: str) -> None:
    """A section heading of another level than a turn's with a date and time in it (`## Late
    note · 2026-…`, `#### Notes from 2026-…`): no turn, yet the capture holds something at
    that time, so its time counts as a turn's for BS-COMPOSE-02 (a compose before it is
    stale) and for content_time; a note says so. Until stop 56 the time was dropped and the
    rule passed over a section written after the compose (§3.1, fail closed). One whose time
    cannot be read fails BS-COMPOSE-02."""
    at = parse_timestamp(raw)
    if at is None:
        # Its time may be later than Last compose: freshness cannot be shown (fail closed; a
        # time with no zone, `## Late note · 2026-07-09T10:00`, vanished and the rule passed).
        message = (
            f"a section heading with a timestamp and no T# ('{text[:80]}'): its time "
            f"'{raw[:60]}' is not ISO 8601, so Last compose cannot be shown to be later"
        )
        rec.issue(FILE, line, "bad-timestamp", message, RULE)
        return
    message = (
        f"a section heading with a timestamp and no T# ('{text[:80]}'): no turn, but its time "
        f"({raw[:60]}) counts as the capture's, which Last compose must be later than"
    )
    rec.issue(FILE, line, "stamped-section", message)
    rec.snapshot.setdefault("stamped_times", []).append(at)


def _no_id(text: str, raw: str) -> bool:
    """Whether a heading with a timestamp and no turn ID is a turn without its ID: the
    timestamp begins it (`### 2026-07-10T16:10Z`, `### 2026-07-10T16:10Z — user`), or only
    a number or who spoke stands before it (`### 7 · …`, `### #7 · …`, `### user · …`);
    a section's words before it (`### Notes from 2026-…`) make it no turn."""
    before = text[: text.find(raw)].strip(_AROUND_STAMP + "#№()[].")
    return not before or _LABEL_RE.fullmatch(before) is not None


def _turn_row(line: int, heading: str, digits: str | None, rest: str, rec: Records) -> None:
    """The turn a heading (or a line meant as one) names: its number, then the first
    timestamp anywhere after it; what cannot be read fails BS-COMPOSE-02."""
    if digits is None:
        message = f"turn heading has no T# number: {heading[:120]}"
        rec.issue(FILE, line, "bad-turn-heading", message, RULE)
        return
    raw = find_timestamp(rest)
    at = parse_timestamp(raw) if raw is not None else None
    if raw is None:
        message = f"turn T{digits} heading has no timestamp: {heading[:120]}"
        rec.issue(FILE, line, "bad-turn-heading", message, RULE)
    elif at is None:
        message = f"turn T{digits} timestamp '{raw[:80]}' is not ISO 8601"
        rec.issue(FILE, line, "bad-timestamp", message, RULE)
    rec.add(
        "turns",
        file=FILE,
        line=line,
        turn_id=canonical_id("T", digits),
        turn_num=int(digits) if len(digits) < 10 else number(rec, FILE, line, digits, "turn"),
        at_raw=raw if raw is not None else rest.strip(" \t·—–-:|")[:200],
        at=at,
    )
