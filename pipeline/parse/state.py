"""state.md: the anchor fields and the aspect map (spec §3 and §3.1)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from pipeline.parse.blocks import Block, Heading, Item, Line, Paragraph, Table, parse
from pipeline.parse.lexical import (
    WHOLE_ID,
    Spans,
    arrows_in,
    bare,
    canonical_id,
    decoded,
    misspelt_ids,
    read_stamp,
    seen_chars,
    shown,
    split_arrow,
    stamp,
    stamp_hint,
    token,
    unescaped,
)
from pipeline.parse.reading import (
    IN_HEADING,
    IN_HTML,
    as_fields,
    fields,
    html_text,
    line_below,
    note_heading_field,
    note_html_fields,
    note_unread,
    repeated,
    section,
    split_rows,
    stray_table,
    unclosed_block,
)
from pipeline.parse.records import Records

if TYPE_CHECKING:
    from datetime import datetime

FILE = "state.md"
_FIELDS = {
    "status": "status",
    "posture": "posture",
    "started": "started",
    "sitting": "sitting",
    "last compose": "last_compose_raw",
}
# The rule that cannot be shown to hold when a field is given twice, differently.
_NEEDED_BY = {"status": "BS-STATE-01", "last_compose_raw": "BS-COMPOSE-01"}
_STATUSES = ("open", "stopping", "harvested")
# What a field's value reads as, so that a second line saying the same in other words is one.
_READ: dict[str, Callable[[str], object]] = {
    "status": lambda value: token(value, _STATUSES),
    "last_compose_raw": read_stamp,
}
# Other names a line meant as Status is written under (`Current status: stopping`, `Stage:
# converging`): not read, but named, where the rule failed with no line (found by a hunt).
_OTHER_STATUS = {
    "current status": "Current status",
    "session status": "Session status",
    "status now": "Status now",
    "stage": "Stage",
    "state": "State",
}
# Likewise for Last compose (`Last composed: 2026-…`): beside the field, it passed unread
# though it said another time (found by a hunt).
_OTHER_COMPOSE = {
    "last composed": "Last composed",
    "last composition": "Last composition",
    "composed": "Composed",
    "composed at": "Composed at",
}
# Both, looked up at once (every block of the file is asked).
_OTHER = {**_OTHER_STATUS, **_OTHER_COMPOSE}
# A heading that gives one of these fields a value it takes is meant as the field
# (`## Status: stopping`); any other is a section heading (reading.note_heading_field).
_IN_HEADING: dict[str, Callable[[str], bool]] = {
    "status": lambda value: token(value, _STATUSES) is not None,
    "last_compose_raw": lambda value: stamp(value)[0] is not None,
}
_SITTINGS = ("single", "multi")
# The first dash of lexical.DASH: an em or en dash, or a hyphen with a space each side.
# Searched for alone (the spaces around it are trimmed): `^(.*?)` before DASH's `\s*`
# is quadratic in a long run of spaces.
_DASH_AT_RE = re.compile(r"[—–]|(?<=\s)-(?=\s)")
# An em or en dash with space each side: the name's end before any unspaced one, which may be
# the name's own (`read–write split — which …`: until stop 67 the name was `read`).
_SPACED_DASH_RE = re.compile(r"(?<=\s)[—–](?=\s)")
# A fragment's name ends where emphasis closing it does (`_fragment:x_ (notes)` names x); it
# may stand in quotes, a code span or emphasis, or be a link's text (`fragment:"x"`,
# `fragment:[x](fragments/x.md)`), and a full stop may end the sentence after it.
_QUOTES = "\"'\u201c\u201d\u2018\u2019\u201e\u201a\u00ab\u00bb\u2039\u203a"
# A fragment ref's name: a link's text, a code span or double quotes (which may hold spaces,
# as a file name may: until stop 67 `fragment:`send window`` was cut at its space, found by a
# hunt; a code span closing the part has lost its last mark to `bare`), or a word.
_FRAGMENT_RE = re.compile(
    r"(?i:fragment):[ \t]*+(?:\[([^\[\]]++)\]\([^()\s]*+\)"
    r"|`([^`\n]++)(?:`(?![\w`])|$)|[\"\u201c]([^\"\u201c\u201d\n]++)[\"\u201d](?!\w)"
    rf"|[{_QUOTES}`*]*+([^\s,;()\[\]`*]+?)(?=[{_QUOTES}`*_]*+[.!?:]?+(?:[\s,;()\[\]`*]|$)))"
)
# A fragment named otherwise than `fragment:{name}`: `fragments:x`, `fragments/x.md`.
_FRAGMENT_LIKE_RE = re.compile(r"(?<![\w/.-])(?i:fragments?)[ \t]*+[:/][^\s,;()\[\]]*+")
_NAME_MARKS = _QUOTES + "`* \t"
_HYPHENS = str.maketrans("\u2010\u2011", "--")
# A keyword as a word of its own, or wrapped in underscore emphasis (`_thesis_ (claim)`).
_ALONE_BEFORE, _ALONE_AFTER = r"(?:(?<![\w-])|(?<=(?<![\w-])_))", r"(?=_?(?![\w-]))"
_THESIS_RE = re.compile(rf"(?i){_ALONE_BEFORE}thesis{_ALONE_AFTER}")
# `none-yet`, `none_yet` and `none‑yet` (a no-break hyphen) are the gap too (found by a hunt).
_NONE_YET_RE = re.compile(rf"(?i){_ALONE_BEFORE}none[\s_\u2010\u2011-]+yet{_ALONE_AFTER}")
_REF_ID_RE = re.compile(WHOLE_ID.format("[FD]"))
_ASPECTS_RE = re.compile(r"(?i)(?<![a-z])aspects?(?![a-z])")


def parse_state(lines: list[str], rec: Records) -> None:
    snap = rec.snapshot
    given: dict[str, str] = {}  # each field's first value, as written
    map_level = 0  # the open aspect map's heading level; 0 outside it
    spans: list[list[int]] = []  # each aspect map's heading line and the line that ends it
    # Bullets written as aspects outside the map: (line, whether their heading names aspects).
    stray: list[tuple[int, bool]] = []
    aspects_named = False  # whether the current heading names aspects
    ended = False  # whether the map was just ended by a heading (one written as an aspect?)
    doc = parse(lines)
    # A fence never closed hides the rest of the file (spec §3.1: fail closed).
    unclosed_block(doc, rec, FILE, "BS-STATE-01")
    # Each field value noted but not read, whatever its form: (key, value, line, issue code).
    hidden = note_html_fields(rec, FILE, doc, lines, _FIELDS, _needed_by)
    unread = [(key, value, line, "unread-field") for key, value, line in hidden]
    blocks = split_rows(doc.blocks)
    for index, block in enumerate(blocks):
        setext = _setext_fields(rec, block)
        block, unread = (block, unread + setext) if setext else (as_fields(block, _FIELDS), unread)
        if isinstance(block, Heading):
            below = line_below(blocks, index, _FIELDS)
            heading = note_heading_field(rec, FILE, block, _FIELDS, _IN_HEADING, _needed_by, below)
            unread += [(*heading, "unread-field")] if heading else []
            if map_level and block.level > map_level:
                _heading_in_map(block, rec)
                continue  # a subheading inside the map
            # Aspects written as headings at the map's own level end it, one after another.
            ended = bool(map_level or ended) and _aspect_shaped(block.text)
            if ended:
                _heading_in_map(block, rec)
            if map_level:
                spans[-1][1] = block.line
            map_level = 0
            aspects_named = _ASPECTS_RE.search(block.text) is not None
            # `# Aspect map` is the map too: a user who titles it so means nothing else.
            if section(block.text, ("aspect map",)):
                map_level = block.level
                snap.setdefault("aspect_map_line", block.line)
                spans.append([block.line, len(lines) + 1])
            continue
        if map_level:
            unread += _in_map(rec, block)
            if isinstance(block, Item):
                _aspect(block, rec)
            else:
                _not_bullets(stray_table(block), rec)
            continue
        unread += _noted(rec, block)
        found = fields(block, _FIELDS)
        for key, value, line in found:
            _field(rec, key, value, line, given, unread)
        if not found and isinstance(block, Item | Paragraph):
            stray += _stray_aspects(block, aspects_named)
    inner = html_text(doc, lines) if doc.html else None
    _hidden_aspects(rec, inner, spans + _html_map_spans(doc.html, inner))
    _unread_fields(rec, unread)
    _stray_aspects_noted(rec, stray)


def _stray_aspects_noted(rec: Records, stray: list[tuple[int, bool]]) -> None:
    """With no map, aspects under `## Aspects` or `**Aspect map**` would vanish and
    BS-ASPECT-01 pass on none; beside a map, so would those under a heading that names
    aspects (`## Aspects added at stop`): fail closed (§3.1). Under `## Notes` beside a
    map, a bullet of that shape is a note."""
    mapped = "aspect_map_line" in rec.snapshot
    where = "outside the aspect map" if mapped else "with no '## Aspect map' heading"
    for line, named in stray:
        if named or not mapped:
            message = f"an aspect bullet {where}: not read as an aspect"
            _unread_aspect(rec, line, "aspect-outside-map", message)


def _stray_aspects(block: Item | Paragraph, named: bool) -> list[tuple[int, bool]]:
    """(line, whether it is under a name for aspects) of each line outside the map written as
    an aspect: a bullet of the aspect's shape, or the sub-bullets or lines under an item or a
    line that names the map (`- Aspect map:`, `- ## Aspect map`, `Aspect map:`), which no
    reader of the page takes for anything but the map."""
    if isinstance(block, Item):
        text = block.text
        if _meant_as_aspect(text):
            return [(block.line, named)]
        if not block.parts:
            return []
        # An item whose first line is a heading (`- ## Aspect map`) shows no text of its own.
        named = named or not text or _ASPECTS_RE.search(text) is not None
        subs = [p for p in block.parts if isinstance(p, Item)]
        return [(p.line, named) for p in subs if _meant_as_aspect(p.text)]
    lines = block.lines
    if not lines or _ASPECTS_RE.search(lines[0][1]) is None:
        return []
    return [(line, True) for line, text in lines[1:] if _meant_as_aspect(text)]


def _setext_fields(rec: Records, block: Block) -> list[tuple[str, str, int, str]]:
    """A setext heading over a Status or Last compose with a value it takes (`Status:
    stopping` over `---` or `===`) is a heading, read as `## Status: stopping` is: each field
    line in it is noted and not read, and the rule that needs it fails (until stop 55 it was
    read as the field, found by a hunt). The fields noted; none for any other block."""
    if not isinstance(block, Heading) or not block.underlined:
        return []
    found = fields(Paragraph(block.underlined), _FIELDS)
    if not any(key in _IN_HEADING and _IN_HEADING[key](value) for key, value, _ in found):
        return []
    rule = "===" if block.level == 1 else "---"
    texts = dict(block.underlined)
    for key, _, line in found:
        said = texts.get(line, "").strip()[:80]
        message = f"'{said}' over '{rule}' is meant as a field but is not read as one{IN_HEADING}"
        rec.issue(FILE, line, "unread-field", message, _NEEDED_BY.get(key))
    return [(key, value, line, "unread-field") for key, value, line in found]


def _noted(rec: Records, block: Block) -> list[tuple[str, str, int, str]]:
    """The fields a block holds that are noted but not read: (key, value, line, issue code),
    and the lines meant as Status under another name (noted once the Status read is known)."""
    found = note_unread(rec, FILE, block, _FIELDS, _needed_by, _IN_HEADING)
    other = [(key, value, line, "malformed-field") for key, value, line in fields(block, _OTHER)]
    return [(key, value, line, code) for key, _, value, line, code in found] + other


def _in_map(rec: Records, block: Block) -> list[tuple[str, str, int, str]]:
    """A Status or Last compose written in the aspect map (`- Status: stopping` below the
    aspects, no heading between): a bullet there is an aspect, and a plain line no field, so
    it is not read; it is noted and fails the rules that need it (§3.1, fail closed)."""
    unread = []
    for key, value, line in fields(block, _FIELDS):
        if key in _IN_HEADING and _IN_HEADING[key](value):
            name = key.replace("_raw", "").replace("_", " ").capitalize()
            message = (
                f"'{name}: {value[:60]}' is written in the aspect map, where it is not read as "
                "a field; give it a line above the map"
            )
            rec.issue(FILE, line, "unread-field", message, _NEEDED_BY[key])
            unread.append((key, value, line, "unread-field"))
    return unread


def _needed_by(key: str, _value: str) -> str | None:
    return _NEEDED_BY.get(key)


def _not_bullets(block: Block, rec: Records) -> None:
    """Lines in the aspect map that are not bullets: a line written as an aspect
    (`name — description → refs`), or a table's row (`| quiet-hours | none yet |`), is meant
    as one but not read, so it is an issue that fails BS-ASPECT-01, never just dropped."""
    if isinstance(block, Table):
        lines = [(line, " | ".join(cells)) for line, cells in block.rows]
        how = "a table row in the aspect map"
    elif isinstance(block, Paragraph):
        lines = [(n, text) for n, text in block.lines if _aspect_shaped(text)]
        how = "an aspect written as a plain line, not a bullet"
    else:
        return
    for line, text in lines:
        message = f"{how}: not read as an aspect ('{text[:80]}'); write `- name — … → refs`"
        _unread_aspect(rec, line, "aspect-not-bullet", message)


def _heading_in_map(block: Heading, rec: Records) -> None:
    """A subheading of the map groups its bullets (`### Delivery`); one written as an aspect
    (`### quiet hours — … → none yet`, `### risks → none yet`, or at the map's own level
    right after it, which ends the map) is meant as one but is no bullet, so it is not read
    and fails both aspect rules, as a plain line there does (§3.1, fail closed)."""
    if _aspect_shaped(block.text):
        message = (
            f"an aspect written as a heading, not a bullet: not read as an aspect "
            f"('{block.text[:80]}'); write `- name — … → refs`"
        )
        _unread_aspect(rec, block.line, "aspect-not-bullet", message)


def _unread_aspect(rec: Records, line: int, code: str, message: str) -> None:
    """An aspect not read may lack refs (BS-ASPECT-01) or be a `none yet` gap (BS-ASPECT-02):
    both rules fail on it, never one passing over what the census could not read."""
    for rule in ("BS-ASPECT-01", "BS-ASPECT-02"):
        rec.issue(FILE, line, code, message, rule)


def _html_map_spans(html: list[tuple[int, int]], inner: list[str] | None) -> list[list[int]]:
    """The rest of an HTML block after a line of it naming the aspect map (`<h2>Aspect
    map</h2>` right over the bullets): CommonMark reads the bullets as that block's HTML, so
    they are aspects not read, and no map heading is there to make them so (found by a hunt)."""
    if not inner:
        return []
    spans = []
    for first, last in html:
        for line in range(first, last + 1):
            if section(inner[line - 1].strip(), ("aspect map",)):
                spans.append([line, last + 1])
                break
    return spans


def _hidden_aspects(rec: Records, inner: list[str] | None, spans: list[list[int]]) -> None:
    """Bullets (and lines written as aspects) inside an HTML block in the aspect map
    (`<details>` with no blank line around them): CommonMark reads no Markdown there, so no
    aspect is read, and both aspect rules fail rather than pass over a hidden gap (§3.1)."""
    if not inner or not spans:
        return
    maps = Spans((start + 1, end) for start, end in spans)  # the lines strictly inside each
    for block in parse(inner).blocks:
        if isinstance(block, Item):
            found = [(block.line, block.text)]
        elif isinstance(block, Paragraph):
            found = [(line, text) for line, text in block.lines if _meant_as_aspect(text)]
        else:
            continue
        for line, text in found:
            if line in maps:
                message = f"'{text.strip()[:80]}' is meant as an aspect but is not read{IN_HTML}"
                _unread_aspect(rec, line, "aspect-in-html", message)


def _field(
    rec: Records,
    key: str,
    value: str,
    line: int,
    given: dict[str, str],
    unread: list[tuple[str, str, int, str]],
) -> None:
    snap = rec.snapshot
    if key in given:
        name = key.replace("_raw", "").replace("_", " ").capitalize()
        rule, read = _NEEDED_BY.get(key), _READ.get(key)
        if not repeated(rec, FILE, line, name, given[key], value, rule, read):
            unread.append((key, value, line, "duplicate-field"))  # only the first is read
        return
    given[key] = value
    if key == "status":
        snap["status"] = token(value, _STATUSES) or bare(value)
        snap["status_line"] = line
    elif key == "sitting":
        snap["sitting"] = token(value, _SITTINGS) or bare(value)
    elif key == "posture":
        snap["posture"] = value
    elif key == "started":
        snap["started"] = stamp(value, date=True)[0]
        if snap["started"] is None and value:
            rec.issue(FILE, line, "bad-timestamp", f"Started '{value[:80]}' is not a date")
    else:
        snap["last_compose_raw"], snap["last_compose_line"] = value, line
        instant, never = stamp(value)
        snap["last_compose"], snap["last_compose_never"] = instant, never
        if instant is None and not never:
            message = f"Last compose '{value[:80]}' is not a timestamp{stamp_hint(value)}"
            rec.issue(FILE, line, "bad-timestamp", message)


def _unread_fields(rec: Records, unread: list[tuple[str, str, int, str]]) -> None:
    """A Status or Last compose that was not read, in any form (a second value that differs,
    a heading, a table row, a sub-item, an HTML block, a malformed line), fails BS-STATE-01
    or BS-COMPOSE-01 where it was noted; the other rules that need the field fail too when
    their result could differ on it (spec §3.1, fail closed). CENSUS-LOC-01 differs exactly
    when one of the read and the unread Status says harvested, whatever the location;
    BS-COMPOSE-02 is weighed once the capture turns are read (session.py)."""
    snap = rec.snapshot
    read = snap.get("status")
    for key, value, line, code in unread:
        if key == "status" and (token(value, _STATUSES) == "harvested") != (read == "harvested"):
            said = f"'{str(read)[:60]}'" if read else "none"
            message = f"Status {said} is contradicted by 'Status: {value[:60]}', which is not read"
            rec.issue(FILE, line, code, message, "CENSUS-LOC-01")
        elif key == "last_compose_raw":
            compose = (line, value, stamp(value)[0], code)
            snap.setdefault("other_last_compose", []).append(compose)
        elif key in _OTHER_STATUS.values():
            _other_status(rec, key, value, line, read)
        elif key in _OTHER_COMPOSE.values() and (instant := stamp(value)[0]) is not None:
            _other_compose(rec, key, value, line, instant)


def _other_compose(rec: Records, name: str, value: str, line: int, instant: datetime) -> None:
    """A timestamp meant as Last compose under another name (`Last composed: 2026-…`): not
    read, and noted. It fails BS-COMPOSE-01 when no Last compose is read or it gives another
    instant, and is weighed against the capture's turns as any unread Last compose is."""
    snap = rec.snapshot
    fails = snap.get("last_compose") != instant
    message = (
        f"'{name}: {value[:60]}' is meant as the 'Last compose:' field but is not written "
        "'Last compose: value', so it is not read"
    )
    rec.issue(FILE, line, "malformed-field", message, "BS-COMPOSE-01" if fails else None)
    snap.setdefault("other_last_compose", []).append((line, value, instant, "malformed-field"))


def _other_status(rec: Records, name: str, value: str, line: int, read: str | None) -> None:
    """A line meant as Status under another name (`Current status: stopping`): not read, and
    noted. It fails BS-STATE-01 when no Status is read (the issue names the line the rule
    lacks) or when it gives another status than the one read; else it is a note."""
    said = token(value, _STATUSES)
    fails = read is None or (said is not None and said != read)
    message = (
        f"'{name}: {value[:60]}' is meant as the 'Status:' field but is not written "
        "'Status: value', so it is not read"
    )
    rec.issue(FILE, line, "malformed-field", message, "BS-STATE-01" if fails else None)


def _cites(text: str) -> bool:
    """Refs after an arrow (`which notifications fold → F1, D9`, under a `### batching`
    subheading of the map): an aspect's refs on a line of their own, meant as one."""
    arrow = split_arrow(decoded(shown(text)))
    if arrow is None:
        return False
    refs = arrow[1]
    found = (_REF_ID_RE, _THESIS_RE, _NONE_YET_RE, _FRAGMENT_RE)
    return any(pattern.search(refs) is not None for pattern in found)


def _aspect_shaped(text: str) -> bool:
    """A line or heading in the map meant as an aspect: written as one, or refs after an
    arrow, dash or not (`### risks → none yet`: until stop 67 such a heading vanished, found
    by a hunt)."""
    return _meant_as_aspect(text) or _cites(text)


def _meant_as_aspect(text: str) -> bool:
    """`{name} — {description} → {refs}`: a name, a dash, then an arrow."""
    arrow = split_arrow(decoded(shown(text)))
    return arrow is not None and _DASH_AT_RE.search(arrow[0]) is not None


def _aspect(item: Item, rec: Records) -> None:
    """One aspect: `{name} — {description} → {refs}`; its sub-items are part of it, and
    hold its refs when the arrow has nothing after it on the aspect's own line."""
    # A comment's `-->` is no arrow, a struck ref (`~~D2~~`) no ref; `&rarr;` is an arrow,
    # as the page shows it.
    text = decoded(shown(item.text))
    arrow = split_arrow(text)
    first_line = decoded(shown(item.lines[0][1])) if len(item.lines) > 1 else ""
    if len(item.lines) > 1 and (first := split_arrow(first_line)) is not None:
        # The aspect's own line has its arrow: the lines after it continue its refs (an
        # arrow there too must not make the first line's refs part of the description).
        more = decoded(shown(" ".join(t for _, t in item.lines[1:])))
        arrow = first[0], f"{first[1]} {more}"
        _aspects_below(item, rec)
    head, refs_raw = (text, None) if arrow is None else (arrow[0], arrow[1].strip())
    in_notes: list[tuple[str, str, str | None]] = []
    if arrow is not None and not refs_raw and item.parts:
        refs_raw = shown(item.rest())
    elif item.parts:
        # A sub-bullet or a later paragraph is part of the aspect's value (spec §3.1): one with
        # an arrow of its own (`  - email preview → none yet`, or `  → none yet` after a blank
        # line) adds its refs, and gives the aspect its arrow when the aspect's line has none;
        # one without is a note on the aspect, no ref.
        parts = [(p, _part_arrow(p)) for p in item.parts]
        below = [a for _, a in parts if a]
        if below:
            arrow = arrow or below[0]
            refs_raw = ", ".join(filter(None, [refs_raw, *(a[1].strip() for a in below)]))
        notes = [p for p, a in parts if a is None]
        in_notes = _refs_in_notes(notes) if arrow is not None else []
    if arrow is not None:
        head, refs_raw = _refs_from_earlier_arrow(head, refs_raw)
    m = _name_dash(head)
    name = bare(head[: m.start()] if m else head)
    description = head[m.end() :].strip() if m else None
    refs = [*(_refs(refs_raw) if refs_raw else []), *in_notes]
    line = item.line
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
    for ref, kind, target in refs:
        rec.add("aspect_refs", file=FILE, line=line, aspect=name, ref=ref, kind=kind, target=target)


def _aspects_below(item: Item, rec: Records) -> None:
    """Lines under an aspect whose own line has its arrow, written as aspects of their own
    (`quiet-hours — … → none yet` right below it with no `- `, or behind a bullet CommonMark
    takes for none, `• ` or a zero-width space): CommonMark reads them as more of the aspect
    above, so they are no aspects and their refs pass for that aspect's (one with no refs
    passed BS-ASPECT-01); each fails both aspect rules rather than vanishing (§3.1)."""
    for line, text in item.lines[1:]:
        if _meant_as_aspect(text):
            message = (
                "an aspect written as a line of the aspect above, not a bullet: not read as an "
                f"aspect ('{text[:80]}'); write `- name — … → refs`"
            )
            _unread_aspect(rec, line, "aspect-not-bullet", message)


def _name_dash(head: str) -> re.Match[str] | None:
    """The dash that ends an aspect's name: the first spaced em or en dash, else the first."""
    return _SPACED_DASH_RE.search(head) or _DASH_AT_RE.search(head)


def _refs_from_earlier_arrow(head: str, refs_raw: str | None) -> tuple[str, str | None]:
    """(head, refs) with the refs begun at the first arrow after the aspect's name that refs
    follow: `→ none yet; follow-up → thesis` holds a gap that reading from the last arrow
    alone put in the description, and BS-ASPECT-02 passed (found by a hunt). An arrow in the
    description with no ref after it (`email → digest order → F1`) stays the description's."""
    dash = _name_dash(head)
    start = dash.end() if dash is not None else 0
    # The first arrow only: the text after it holds every later one's (one pass, not one per
    # arrow, which the bounded-time tests found quadratic).
    first = next((a for a in arrows_in(head) if a.start() >= start), None)
    if first is None:
        return head, refs_raw
    between = head[first.end() :].strip()
    if not any(kind != "unknown" for _, kind, _ in _refs(between)):
        return head, refs_raw
    return head[: first.start()].rstrip(), f"{between} → {refs_raw}" if refs_raw else between


def _refs_in_notes(notes: list[Item | list[Line]]) -> list[tuple[str, str, str | None]]:
    """The refs named in the sub-bullets and paragraphs under an aspect that have no arrow of
    their own (`  - the DST edge case is still F9`, `  - none yet for the link wording`): part
    of its value (spec §3.1), as the same words on a continuation line are, so a gap or an ID
    there counts; the rest of such a note is commentary, no unknown ref."""
    found: list[tuple[str, str, str | None]] = []
    for part in notes:
        text = part.text if isinstance(part, Item) else " ".join(t for _, t in part)
        found += [r for r in _refs(decoded(shown(text))) if r[1] != "unknown"]
    return found


def _part_arrow(part: Item | list[Line]) -> tuple[str, str] | None:
    """The arrow of a sub-bullet or a paragraph under an aspect, as split_arrow gives it, when
    refs follow it (a paragraph's was not read, and its `none yet` passed BS-ASPECT-02)."""
    text = part.text if isinstance(part, Item) else " ".join(t for _, t in part)
    found = split_arrow(decoded(shown(text)))
    return found if found is not None and found[1].strip() else None


def _refs(raw: str) -> list[tuple[str, str, str | None]]:
    """(ref as written, kind, target) for each ref: every F#, D#, `thesis`,
    `fragment:{name}` and `none yet` in each comma- or semicolon-separated part; a part
    that holds none of them is one unknown ref."""
    found: list[tuple[str, str, str | None]] = []
    for part in _ref_parts(raw):
        # Emphasis around a whole ref is no part of it (`_thesis_`, `*none yet*`); the ref is
        # read as the page shows it (a zero-width space in it, `Ｆ2` typed fullwidth, a
        # backslash escape: `fragment:send\_window` names send_window).
        text = bare(unescaped(seen_chars(part)))
        if not text:
            continue
        simple = _simple_ref(text)
        if simple is not None:
            found.append(simple)
            continue
        hits: list[tuple[int, str, str, str | None]] = []
        for m in _FRAGMENT_RE.finditer(text):
            name = m[1] or m[2] or m[3] or m[4]
            hits.append((m.start(), m[0], "fragment", fragment_name(name)))
        # An ID inside a fragment's name (`fragment:F2-notes`) is part of the name.
        text_ids = _FRAGMENT_RE.sub(lambda m: " " * len(m[0]), text) if hits else text
        seen: set[str] = set()
        for m in _REF_ID_RE.finditer(text_ids):
            target = canonical_id(m[0][0], m[0][1:])
            if target not in seen:
                seen.add(target)
                hits.append((m.start(), m[0], "fork" if m[0][0] == "F" else "decision", target))
        for m in _THESIS_RE.finditer(text_ids):
            hits.append((m.start(), m[0], "thesis", None))
        for m in _NONE_YET_RE.finditer(text_ids):
            hits.append((m.start(), m[0], "none_yet", None))
        if not hits:
            found.append((text, "unknown", None))
        else:
            # An ID misspelt beside a ref read (`thesis and D-9`, `D1 and fork 9`) is a ref
            # that resolves to nothing, as it is in a part of its own (found by a hunt).
            for letter in "FD":
                for written, _ in misspelt_ids(text_ids, letter):
                    hits.append((text_ids.find(written), written, "unknown", None))
            # So is a fragment named in another form than `fragment:{name}` (`fragments:x`,
            # `fragments/x.md`, a link to one), as in a part of its own (found by a hunt: a
            # missing fragment so named beside `D4` passed as commentary).
            targets = _ref_link_targets(text)
            for m in _FRAGMENT_LIKE_RE.finditer(text_ids):
                if not any(start <= m.start() < end for start, end in targets):
                    hits.append((m.start(), m[0], "unknown", None))
        found += [(ref, kind, target) for _, ref, kind, target in sorted(hits, key=_first)]
    return found


# An inline link: its text, and its target's span.
_INLINE_LINK_RE = re.compile(r"\[([^\[\]\n]*+)\]\(([^()\s]*+)\)")


def _ref_link_targets(text: str) -> list[tuple[int, int]]:
    """The spans of the targets of links whose text is a ref read: the page shows the text
    (`[fragment:api](fragments/api.md)` names fragment:api), and its target is no second ref
    (it failed BS-ASPECT-01 as a misspelt one; found by a hunt)."""
    return [
        m.span(2)
        for m in _INLINE_LINK_RE.finditer(text)
        if _FRAGMENT_RE.search(m[1]) or _REF_ID_RE.search(m[1]) or _THESIS_RE.search(m[1])
    ]


def _ref_parts(raw: str) -> list[str]:
    """The comma- or semicolon-separated parts of the refs; a comma inside brackets belongs
    to the commentary there (`F2 (wait, then stale)` is one part, not an unknown `then stale)`)."""
    if "(" not in raw and "[" not in raw:
        return raw.split(",") if ";" not in raw else re.split(r"[,;]", raw)
    parts, start, depth = [], 0, 0
    for at, c in enumerate(raw):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth = max(0, depth - 1)
        elif c in ",;" and depth == 0:
            parts.append(raw[start:at])
            start = at + 1
    parts.append(raw[start:])
    return parts


def fragment_name(cited: str) -> str:
    """The fragment a ref names: `fragment:api.md` and `fragment:api` name the same one (spec
    §3.1), whose name is its file name without extension. Any other ending is kept, so
    `fragment:notes.txt` still resolves to that file. Quotes or code marks around it, a
    typographic hyphen in it and its path under `fragments/` are how it was written."""
    cited = cited.strip(_NAME_MARKS).translate(_HYPHENS)
    if cited[:10].lower() == "fragments/" and len(cited) > 10:
        cited = cited[10:]
    return cited[:-3] if cited.lower().endswith(".md") and len(cited) > 3 else cited


def _simple_ref(text: str) -> tuple[str, str, str | None] | None:
    """A part that is one ref in the schema's spelling, read without searching it."""
    c = text[0]
    if c in "FD" and text[1:].isdigit() and text.isascii():
        return text, "fork" if c == "F" else "decision", canonical_id(c, text[1:])
    if text == "thesis":
        return text, "thesis", None
    if text == "none yet":
        return text, "none_yet", None
    return None


def _first(hit: tuple[int, str, str, str | None]) -> int:
    return hit[0]
