"""What every reader does above the block structure (spec §3.1), defined once.

Fields are a list item whose first line is `Name: value` (its continuation lines, later
paragraphs and sub-items are part of the value) or a paragraph line of its own (the
paragraph's following lines that are no field continue it); names match leniently.
Sections and entries are headings; an entry begins with its ID.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import groupby
from typing import NamedTuple, TypeVar, cast

from pipeline.parse.blocks import (
    MAX_DEPTH,
    PREFIX_RE,
    Block,
    Document,
    Heading,
    Item,
    Line,
    Paragraph,
    Table,
    heading_level,
    heading_text,
    html_kind,
    html_tail,
    parse,
    split_cells,
)
from pipeline.parse.lexical import (
    BREAK_RE,
    FILLERS,
    INVISIBLE,
    LIST_MARKER_RE,
    MAX_FIELD_NAME,
    SYMBOL_LEAD_RE,
    UNICODE_SPACES,
    Spans,
    bare,
    canonical_id,
    code_spans,
    decoded,
    decoded_separator,
    field,
    heading_shown,
    inner_marks_dropped,
    int32,
    past_list_marker,
    says_nothing,
    seen_chars,
    shown,
    shown_name,
    unbroken,
    unescaped,
)
from pipeline.parse.records import Records

# An inline HTML tag, which shows nothing itself (`<a id="f4"></a>`, `<b>`, `</span>`).
_INLINE_TAG = r"</?[A-Za-z][A-Za-z0-9-]*+(?:[ \t][^<>\n]*+)?/?>"
# What may stand before an entry's ID and show nothing but the ID: emphasis and code marks,
# inline HTML tags (an anchor for links to the entry: `## <a id="f4"></a>F4 — …`), and the
# bracket of a link on the ID (`## [F4](#f4) — …`). The page shows `F4 — …`, which §3.1's
# CommonMark reading takes as the entry; until 2026-12-07 such a heading failed its rule.
_ENTRY_LEAD = rf"(?:[ \t*_`\[]++|{_INLINE_TAG})*+"
# After the ID: the tags closing around it, or the rest of its link (`](#f4)`).
_AFTER_ID_RE = re.compile(rf"(?:{_INLINE_TAG}|\]\([^()\s]*+\))++")
# An entry heading: its lead, the ID's letter, its digits, and the character after.
_ENTRY_RES = {letter: re.compile(rf"{_ENTRY_LEAD}{letter}([0-9]*+)(.?)", re.S) for letter in "FDT"}
# An ID misspelt but recognisable: the letter in lower case, a mark between the letter and
# the number (`F-5`, `F#5`, `f5`), or the word for the entry (`Fork 5`, `Turn #3`); the
# number, then the character after it.
_WORDS = {"F": "fork", "D": "decision", "T": "turn"}
_MISSPELT_RES = {
    letter: re.compile(
        rf"{_ENTRY_LEAD}(?i:{letter}[ \t]*+[-#._]?|{word}[ \t]*+#?)[ \t]*+([0-9]++)(.?)", re.S
    )
    for letter, word in _WORDS.items()
}
# An ID left as a placeholder (`F?`, `F#`, `D…`, `TX`, `Fn`): recognisably meant as an
# entry whose ID is not written. Symbols may be followed by anything but a word; the letters
# X and N only by a dash, colon or middle dot (or nothing), so that `## FX rates` stays a
# section heading.
_PLACEHOLDER_RES = {
    letter: re.compile(
        rf"{_ENTRY_LEAD}{letter}(?:[?#…]++(?![A-Za-z0-9])"
        r"|(?:[Xx]{1,3}+|[Nn])(?=[*_`]*+(?:[ \t\xa0]*+(?:[—–:·]|-[ \t])|[ \t]*+$)))"
    )
    for letter in "FDT"
}

# Spaces a writer's editor may put after a heading's #s that CommonMark does not take as
# spaces (no-break, narrow no-break, the fixed-width ones, ideographic): `##\u00a0F1 — …`
# is a paragraph to it, and was read as nothing at all.
_ODD_SPACES = "\u00a0\u202f\u3000\u2000-\u200a"
# The #s as a CJK input method types them (fullwidth `＃`), and what may follow the #s that
# CommonMark takes for no space: an odd space, or a character that shows nothing
# (`##\u200b F1 — …`). Either makes the line a paragraph, which was read as nothing at all.
_HASHES = "#\uff03"
# A byte that is not UTF-8 there reads as U+FFFD, and hid the line the same way (`##\xff F2`:
# an open fork passed BS-FORK-03; found by a hunt).
_UNREADABLE = "\ufffd"
_ODD_SPACE_RE = re.compile(rf"[{_HASHES}]++([{_ODD_SPACES}{INVISIBLE}{_UNREADABLE}])")
# A line meant as an entry though not written as its heading (`##F5 — …`, `- F5 — …`,
# `**F5 — …**`, `[F5] — …`, `F5a — …`): #s, emphasis or a bracket, the ID's letter, its
# digits and anything glued to them, the marks that close it, then a separator.
# A turn may stand in parentheses too (`(T2 · 2026-…) user: …`: found by a hunt); an entry's
# ID in parentheses opens prose (`(F2 — see above)`).
_OPENERS = {"F": "[", "D": "[", "T": "[("}
_MEANT_RES = {
    letter: re.compile(
        rf"([{_HASHES}]*+)[ \t{_ODD_SPACES}{INVISIBLE}{_UNREADABLE}]*+"
        rf"([*_`{re.escape(_OPENERS[letter])}]*+){letter}([0-9]++)([A-Za-z0-9_]*+)"
        r"([\])*_`]*+)([ \t]*+)"
        r"([—–:·|]|-(?=[ \t])|$)?"
    )
    for letter in "FDT"
}
_WHAT = {"F": "a fork entry `## F# — title [marker]`", "D": "a ledger entry `## D# — title`"}
_WHAT["T"] = "a capture turn `### T# · timestamp`"
# What a line may begin with that the page shows as blank but that keeps CommonMark from
# seeing a heading or a list marker there: characters that show nothing, and Unicode spaces,
# line and paragraph separators, controls and fillers (`\u00a0### T2 · …`), not a plain space.
_BLANK_LEAD = (
    INVISIBLE
    + UNICODE_SPACES
    + FILLERS
    + "\x1c\x1d\x1e\x1f\x85\u034f\u180e\u2028\u2029\u2061\u2062\u2063\u2064"
)
# The ID's letter typed fullwidth (`Ｔ10 · …`, as a CJK input method types it) is read as
# the letter it shows.
_WIDE = {letter: chr(ord(letter) + 0xFEE0) for letter in "FDT"}
_STARTS = {
    letter: frozenset(_HASHES + "*_`" + _OPENERS[letter] + letter + _WIDE[letter] + _BLANK_LEAD)
    for letter in "FDT"
}


# HTML block kinds (blocks.html_kind) not shown: comments, processing instructions,
# declarations and CDATA; what a writer hides there is a matter of its own, not read here.
HIDDEN_HTML = frozenset((1, 2, 3, 4))
_QUOTES_RE = re.compile(r"[ \t>]*+")
_LEADING_TAGS_RE = re.compile(r"(?:[ \t]*+</?[A-Za-z][^<>]*+>)++[ \t]*+")
_TAG_RE = re.compile(r"</?[A-Za-z][^<>]*+>")
IN_HTML = " (inside an HTML block, where CommonMark reads no Markdown)"
IN_TABLE = " (a table row)"
IN_LINK = " (a link to an entry heading the file does not have)"
IN_HEADING = " (a heading; a field is a bullet or a line of its own)"
# Whether a line meant as an entry (line, text, text after the ID, shape says so) found
# in blocks[index] is one: each reader's own weighing.
Weigh = Callable[[tuple[int, str, str, bool], list[Block], int], bool]
# The rule that needs a field (its key and value), None when none does (a note).
RuleOf = Callable[[str, str], str | None]

# Spacing inside a field name other than one space (`Raised  by`, a tab, a no-break space).
_ODD_SPACE = re.compile(r"\s\s|[\t\xa0]")


def fields(block: Block, known: Mapping[str, str]) -> list[tuple[str, str, int]]:
    """(key, value, line) of each field of `known` (lower-case name → key) in a block."""
    if isinstance(block, Item):
        if not block.lines:
            return []
        line, text = block.lines[0]
        text = shown_name(text)  # `<b>Resolves:</b>`, `Resolves：`: the name the page shows
        if text[:1] > "\x7f" and (mark := SYMBOL_LEAD_RE.match(text)) is not None:
            text = text[mark.end() :]  # `✅ Closes when: …`: a mark before the name
        # Most items are no field this reader knows: look the name up before the value.
        colon = text.find(":", 0, MAX_FIELD_NAME + 8)
        if colon < 1:
            return []
        name = inner_marks_dropped(text[:colon].strip(" \t*_`").lower())
        if name not in known and not (_ODD_SPACE.search(name) and " ".join(name.split()) in known):
            return []
        parsed = field(text)
        if parsed is None or parsed[0] not in known:
            return []
        if block.parts or len(block.lines) > 1:
            return [(known[parsed[0]], shown(item_value(block, parsed[1])), line)]
        return [(known[parsed[0]], parsed[1], line)]
    if not isinstance(block, Paragraph):
        return []
    found: list[tuple[str, str, int]] = []
    key = ""
    values: list[str] = []
    first = 0
    every = block.lines
    shown_lines = unbroken([text for _, text in every]) if len(every) > 1 else None
    for index, (line, text) in enumerate(every):
        if shown_lines is not None:
            text = shown_lines[index]
        # `\\- Resolves: F1`: a list marker escaped, so CommonMark takes no item; the page
        # shows `- Resolves: F1`, a field on a line of its own (it vanished; found by a hunt).
        escaped = _ESCAPED_MARKER_RE.match(text) if "\\" in text[:12] else None
        parsed = field(text[escaped.end() :] if escaped else text)
        # `\t* Resolves: F1` under prose is more of the paragraph (a nested field), not one.
        if parsed is not None and parsed[0] in known and not (index and LIST_MARKER_RE.match(text)):
            if key:
                found.append((key, shown(" ".join(values)), first))
            key, first = known[parsed[0]], line
            values = [parsed[1]] if parsed[1] else []
        elif key:
            values.append(text)
    if key:
        found.append((key, shown(" ".join(values)), first))
    return found


def nested_fields(block: Block, known: Mapping[str, str]) -> list[tuple[str, str, str, int]]:
    """(key, name, value, line) of each line inside a list item, past its first, that is itself
    a field of `known`: a sub-item or continuation line belongs to the item above (spec
    §3.1), so `fields` reads it as part of that item's value and not as a field. So does a
    paragraph's line past its first that is a field behind a list marker (`\\t- Resolves:
    F1` indented under prose, `2) Resolves: F1`): CommonMark starts no list there, and the
    line is more of the paragraph's text."""
    if isinstance(block, Paragraph):
        lines = block.lines[1:] if block.source is None or block.end - block.start > 1 else []
        lines = [(line, text) for line, text in lines if LIST_MARKER_RE.match(text)]
    elif isinstance(block, Item) and (len(block.lines) > 1 or block.parts):
        lines = block.all_lines()[1:]
    else:
        return []
    found = []
    for line, text in lines:
        parsed = field(past_list_marker(text))
        if parsed is not None and parsed[0] in known:
            found.append((known[parsed[0]], parsed[0], parsed[1], line))
    return found


def note_nested(
    rec: Records, file: str, block: Block, known: Mapping[str, str], rule: RuleOf
) -> list[tuple[str, str, str, int]]:
    """A parse issue for each field written inside another item (a sub-item, an indented
    or lazy continuation line) or paragraph (a marked line continuing it): the reader
    takes it as part of the text above, so the field it was meant as is not read, and the
    rule that needs it fails (§3.1, fail closed; `rule`: key, value → that rule). The
    fields, as nested_fields gives them."""
    found = nested_fields(block, known)
    where = (
        "the list item on line {} (a sub-item or continuation line), so it is read as part of "
        "that item's text"
        if isinstance(block, Item)
        else "the paragraph on line {} (a list marker indented under prose, or a number other "
        "than 1, starts no list there), so it is read as more of that paragraph's text"
    )
    for key, name, value, line in found:
        message = (
            f"'{name.capitalize()}: {value[:60]}' is written inside "
            f"{where.format(first_line(block))}, not as a field; give it a line of its own"
        )
        rec.issue(file, line, "nested-field", message, rule(key, value))
    for key, name, value, line in shared_fields(block, known):
        message = (
            f"'{name.capitalize()}: {value[:60]}' shares line {line} with the field before it, "
            "so it is read as part of that field's value, not as a field; give it a line of "
            "its own"
        )
        rec.issue(file, line, "nested-field", message, rule(key, value))
    broken = broken_fields(block, known)
    for key, name, value, line in broken:
        message = (
            f"'{name.capitalize()}: {value[:60]}' is written after a <br> on line {line}, so "
            "it is read as part of that line's text, not as a field; give it a line of its own"
        )
        rec.issue(file, line, "nested-field", message, rule(key, value))
    return found + broken


def broken_fields(block: Block, known: Mapping[str, str]) -> list[tuple[str, str, str, int]]:
    """(key, name, value, line) of each field of `known` written after a `<br>` in a list
    item or paragraph (`- How to apply: …<br>Resolves: F1`): the page shows it on a line of
    its own, as after a hard line break, yet it is more of the line's text."""
    if isinstance(block, Item):
        lines = block.all_lines() if block.parts else block.lines
    elif isinstance(block, Paragraph):
        lines = block.lines
    else:
        return []
    found = []
    for line, piece in after_breaks(lines):
        parsed = field(piece)
        if parsed is not None and parsed[0] in known:
            found.append((known[parsed[0]], parsed[0], parsed[1], line))
    return found


def shared_fields(block: Block, known: Mapping[str, str]) -> list[tuple[str, str, str, int]]:
    """(key, name, value, line) of each field of `known` written after another on that field's
    line (`- Resolves: F3; Reverses: D9`, `Status: open · Sitting: multi`): the line is one
    field, whose value runs to its end, so the second would vanish unread (§3.1, fail
    closed). A name inside a code span (`` `Resolves: F1` ``) is an example, not a field."""
    if isinstance(block, Item):
        lines = block.lines[:1]
    elif isinstance(block, Paragraph):
        lines = block.lines
    else:
        return []
    found = []
    for line, text in lines:
        # A second field needs a colon of its own in the value, which is left as written:
        # with one colon in the line, written plainly, that colon is the first field's.
        colons = text.count(":")
        if colons == 0 or (colons == 1 and not _OTHER_COLON_RE.search(text)):
            continue
        parsed = field(past_list_marker(text))
        if parsed is None or parsed[0] not in known or ":" not in parsed[1]:
            continue
        value = parsed[1]
        code = Spans(code_spans(value))
        for m in _shared_re(known).finditer(value):
            if m.start() in code:
                continue
            name = " ".join(m["name"].lower().split())
            rest = _SHARED_END_RE.search(value, m.end())
            end = len(value) if rest is None else rest.start()
            found.append((known[name], name, value[m.end() : end].strip(), line))
    return found


# A colon a field's name may end with other than `:` (fullwidth, a reference, escaped).
_OTHER_COLON_RE = re.compile(r"[\uff1a&\\]")
# A field after another on its line stands behind a separator: `;`, `,` or a sentence's end
# with a space after (not inside a URL), `|`, `·`, `•` or a dash; its value runs to the next
# such field or the line's end.
_SHARED_LEAD = r"(?:[;,.](?=[\s*_])|[|\u00b7\u2022\u2014\u2013]|(?<=\s)-(?=\s))[\s*_]*+"
_SHARED_END_RE = re.compile(_SHARED_LEAD + r"[A-Za-z][A-Za-z \t]{0,30}[*_]*+\s*+:")


def _shared_re(known: Mapping[str, str]) -> re.Pattern[str]:
    return _by_mapping(known, _shared_pattern)


def _shared_pattern(known: Mapping[str, str]) -> re.Pattern[str]:
    names = "|".join(
        r"[ \t]++".join(map(re.escape, name.split())) for name in sorted(known, key=len)[::-1]
    )
    return re.compile(
        _SHARED_LEAD + rf"(?P<name>(?i:{names}))[*_]*+[ \t]*+[*_]*+:(?!//)[*_]*+[ \t]*+"
    )


def after_breaks(lines: Iterable[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """(line, text) of each piece of a line after a `<br>`, which the page shows on a line of
    its own, as after a hard line break."""
    for line, text in lines:
        if "<" in text:
            for piece in BREAK_RE.split(text)[1:]:
                if piece.strip(" \t"):
                    yield line, piece.strip(" \t")


def table_fields(
    table: Table, known: Mapping[str, str], taken: Mapping[str, Callable[[str], bool]] | None = None
) -> list[tuple[str, str, str, int]]:
    """(key, name, value, line) of each field of `known` a table holds as a row: written on
    a line right under it (`Status: proposed` below the routing table, a row whose first cell
    alone holds text), or as a row of its own (`| Resolves | F2 |` under `| Field | Value |`)
    whose first cell is the field's name and whose next cell holds its value. Also the
    header row (`| Round | 2 |` over `|---|---|`) when its value is one the field takes
    (`taken`, key → test): `| Status | Owner |` heads a table of something else."""
    found = []
    header = _named_row(table.header)
    if header is not None and header[0] in known:
        key = known[header[0]]
        if taken and key in taken and taken[key](header[1]):
            found.append((key, header[0], header[1], table.line))
    for line, cells in table.rows:
        parsed = field(cells[0]) if cells and not any(cells[1:]) else _named_row(cells)
        if parsed is not None and parsed[0] in known:
            found.append((known[parsed[0]], parsed[0], parsed[1], line))
    return found + _column_fields(table, known, taken)


# A cell that begins with an entry's ID: its row is an entry's or about one (table_rows).
_ID_CELL_RE = re.compile(r"[ \t*_`\[]*+[A-Z]\d+(?![A-Za-z0-9])")


def _column_fields(
    table: Table, known: Mapping[str, str], taken: Mapping[str, Callable[[str], bool]] | None
) -> list[tuple[str, str, str, int]]:
    """The fields of a table whose header names them (`| Resolves | Reversed by |` over
    `| F1 | D9 |`): the entry's fields written as columns. When every header cell names a
    field, every row's cells count (a `| Resolves |` column listing F1, then F2). Else, of a
    one-row table, a cell whose value is one the field takes (`taken`), so that `| Status |
    Owner |` over `| open | Ann |` counts; but not when the row's first cell, under a column
    naming no field, names what the row is about (an ID, or `persistence` under `| Aspect |
    Status |`): its cells are about that, as another row's would be."""
    columns = header_fields(table, known)
    every = len(columns) == sum(1 for cell in table.header if cell.strip())
    if not columns or (not every and len(table.rows) != 1):
        return []
    found = []
    for line, cells in table.rows:
        first = cells[0] if cells and 0 not in columns else ""
        if _ID_CELL_RE.match(first) or (not every and not says_nothing(first)):
            continue
        for column, (key, name) in sorted(columns.items()):
            value = cells[column].strip() if column < len(cells) else ""
            if not says_nothing(value) and (
                every or (taken and key in taken and taken[key](value))
            ):
                found.append((key, name, value, line))
    return found


def _named_row(cells: list[str]) -> tuple[str, str] | None:
    """(name, value) of a row `| Name | value |`, its name as the page shows it."""
    if len(cells) < 2 or says_nothing(cells[1]):
        return None
    name = " ".join(bare(bare(shown_name(cells[0])).rstrip(":")).lower().split())
    return name, cells[1].strip()


def note_table_fields(
    rec: Records,
    file: str,
    table: Table,
    known: Mapping[str, str],
    rule: RuleOf,
    taken: Mapping[str, Callable[[str], bool]] | None = None,
) -> list[tuple[str, str, str, int]]:
    """A parse issue for each field of `known` a table took as a row (its header too, as
    table_fields reads it with `taken`): it is no field, so the rule that needs it fails
    (spec §3.1, fail closed). The fields, as table_fields gives them."""
    found = table_fields(table, known, taken)
    for key, name, value, line in found:
        _unread_field(rec, file, line, f"{name.capitalize()}: {value}", IN_TABLE, rule(key, value))
    return found


def note_html_fields(
    rec: Records,
    file: str,
    doc: Document,
    lines: list[str],
    known: Mapping[str, str],
    rule: RuleOf,
    entries: Iterable[int] = (),
) -> list[tuple[str, str, int]]:
    """A parse issue for each field of `known` inside a shown HTML block (`<details>` with
    no blank line around its fields): CommonMark reads no Markdown there, so it is no
    field, and the rule that needs it fails (spec §3.1, fail closed). A block that holds
    one of `entries` (the lines of entries already noted as hidden there) gets no more:
    its fields are that entry's, not read with it. The fields noted, in file order."""
    inner = html_text(doc, lines) if doc.html else None
    if inner is None:
        return []
    held = Spans((e, e + 1) for e in entries)
    noted = Spans((first, last + 1) for first, last in doc.html if held.meets(first, last + 1))
    found: list[tuple[str, str, int]] = []
    for block in parse(inner).blocks:
        for key, value, line in fields(block, known):
            if line not in noted:
                _unread_field(rec, file, line, inner[line - 1], IN_HTML, rule(key, value))
                found.append((key, value, line))
    return found


def _unread_field(
    rec: Records, file: str, line: int, text: str, where: str, rule: str | None
) -> None:
    shown = text.strip(" \t")[:80]
    message = f"'{shown}' is meant as a field but is not read as one{where}"
    rec.issue(file, line, "unread-field", message, rule)


class NearField(NamedTuple):
    """A line meant as a field of `known` but not written `Name: value` (`- Resolves F1`,
    `- Raised by — twin (S2)`, `- **Raised by** twin (S2)`, `- Raised-by: user`): its key,
    the value after the name, its line and text, and what separated the two: "mark" (a
    separator or emphasis closed around the name), "space" (spaces alone) or "alone" (the
    name ends its line, its value below)."""

    key: str
    value: str
    line: int
    text: str
    how: str


# What separates a near-miss field's name from its value: a colon after a misspelt name, an
# equals sign, a dash or an arrow.
_NEAR_SEPARATOR = r"(:|;|=|—|–|->|→|-(?=[ \t]|$))?"
# A remark in parentheses between a field's name and its separator (`Resolves (forks): F1`,
# `Last compose (UTC): …`): the name is still the field's, with a remark the schema does not
# write, so the line is meant as that field (never a field of another name, nor prose).
_NEAR_REMARK = r"(?:\([^()\n]*+\)[ \t\xa0]*+(?=[:;=—–→]|->|-(?:[ \t]|$)))?+"
_NEAR_RES: dict[tuple[str, ...], tuple[re.Pattern[str], frozenset[str]]] = {}
# What else a line meant as a field may begin with that the page does not show as written:
# an invisible character, an HTML emphasis tag, a character reference (lexical.shown_name).
_SHOWN_STARTS = frozenset(INVISIBLE + "<&")
# What a line may begin with that the page shows otherwise: a backslash escape (`\\## F3 …`
# shows `## F3 …`), an inline tag (`<span id="f3"></span>F3 — …`), a character reference.
_SHOWN_OTHERWISE = "\\<&"
# A list marker escaped so that CommonMark takes no item (`\\- F3 — …`, `1\\. Resolves: F1`).
_ESCAPED_MARKER_RE = re.compile(r"[ \t]*+(?:\\[-+*]|[0-9]{1,9}\\[.)])[ \t]++")
# What is derived from a mapping of field names, looked up by the mapping's identity: readers
# pass the same module-level mapping for every block, and deriving it again per block cost a
# tenth of a reader's time. An entry keeps its mapping alive, so an id is never reused while
# it is here (bounded: readers pass a handful of module-level mappings).
_BY_MAPPING: dict[tuple[str, int], tuple[Mapping[str, str], object]] = {}
_Derived = TypeVar("_Derived")


def _by_mapping(
    known: Mapping[str, str], derive: Callable[[Mapping[str, str]], _Derived]
) -> _Derived:
    """`derive(known)`, computed once per mapping."""
    key = (derive.__name__, id(known))
    mine = _BY_MAPPING.get(key)
    if mine is not None and mine[0] is known:
        return cast(_Derived, mine[1])
    value = derive(known)
    if len(_BY_MAPPING) < 128:
        _BY_MAPPING[key] = (known, value)
    return value


def _near_re(known: Mapping[str, str]) -> tuple[re.Pattern[str], frozenset[str]]:
    """The pattern of a line that begins with one of `known`'s names, its words joined by
    spaces, hyphens or underscores or run together, with emphasis around it, then a
    separator or a space; and the characters such a line begins with (a first look that
    costs nothing)."""
    return _by_mapping(known, _near_pattern)


def _near_pattern(known: Mapping[str, str]) -> tuple[re.Pattern[str], frozenset[str]]:
    names = tuple(sorted(known, key=len, reverse=True))
    found = _NEAR_RES.get(names)
    if found is None:
        # Words joined by spaces, hyphens or underscores, or run together (`RaisedBy`).
        spelt = "|".join(r"[ \t\xa0_-]*+".join(map(re.escape, n.split())) for n in names)
        pattern = re.compile(
            rf"([*_`]*+)((?i:{spelt}))(?![A-Za-z0-9])([*_`]*+)[ \t\xa0]*+"
            rf"{_NEAR_REMARK}{_NEAR_SEPARATOR}"
        )
        starts = "*_`" + "".join(n[:1] + n[:1].upper() for n in names)
        found = _NEAR_RES[names] = (pattern, frozenset(starts))
    return found


def _names_of(known: Mapping[str, str]) -> dict[str, str]:
    """Each key of `known` → the first name that gives it (for messages)."""
    return _by_mapping(known, _first_names)


def _first_names(known: Mapping[str, str]) -> dict[str, str]:
    return {key: name for name, key in reversed(list(known.items()))}


def near_fields(
    block: Block,
    known: Mapping[str, str],
    spaced: Mapping[str, Callable[[str], object]],
    beyond: str = "",
) -> list[NearField]:
    """Each line of a block meant as a field of `known` that `fields` does not read (spec
    §3.1: such a line never just disappears): a list item's first line, or a paragraph line
    whose name is capitalised (so that wrapped prose is no field). A space alone separates a
    name from its value only for a key in `spaced` whose test the value passes (`Resolves F1`
    but not `Resolves the question`). A name alone on its line with its value on the next
    behind a colon (a definition list's term) is such a line too. `beyond`: the first line of
    the block after this one (line_below), where the value of a name that ends the block goes
    on past a blank line."""
    if isinstance(block, Item):
        if not block.lines:
            return []
        every = block.lines
        lines, capital = every[:1], False
    elif isinstance(block, Paragraph):
        every = block.lines
        lines, capital = every, True
    else:
        return []
    pattern, starts = _near_re(known)
    found: list[NearField] = []
    # A line that ends in a hard line break (`- **Raised by**\\` over `twin (S9)`) shows no
    # backslash: its name ends the line.
    broken = unbroken([text for _, text in every]) if len(every) > 1 else None
    for index, (line, text) in enumerate(lines):
        if broken is not None:
            text = broken[index]
        seen = text.lstrip(" \t")
        if seen[:1] not in starts and seen[:1] not in _SHOWN_STARTS:
            continue
        # The name as the page shows it: `\u200bResolves F1`, `Resolves\u202fF1`.
        seen = shown_name(seen)
        after = every[index + 1][1] if index + 1 < len(every) else ""
        defined = _defined(seen, after, pattern, known, capital)
        if defined is not None:
            found.append(NearField(*defined, line, f"{seen.rstrip()} {after.strip()}", "mark"))
            continue
        near = _near_field(seen, pattern, known, spaced, capital)
        if near is not None:
            last = isinstance(block, Item) or index + 1 == len(every)
            value = near[1] or _value_below(block, every, index, known) or (beyond if last else "")
            if near[2] != "alone" or _taken_below(near[0], value, spaced):
                found.append(NearField(near[0], value, line, text, near[2]))
    return found


def _taken_below(key: str, value: str, spaced: Mapping[str, Callable[[str], object]]) -> bool:
    """Whether the value below a name that stands alone on its line (`Raised by` over `twin
    (S9)`) is the field's: there is one, and a field a space may separate from its value
    takes it as such (`Resolves` over `F1`, not over `the tension in F1`)."""
    return bool(value) and (key not in spaced or bool(spaced[key](value)))


def _value_below(block: Block, every: list[Line], index: int, known: Mapping[str, str]) -> str:
    """The value of a near field whose name ends its line (`- **Raised by**` over `  twin
    (S9)`): the item's other lines and sub-items, or the paragraph's next line unless it is
    a field of its own, as a field's value goes on there."""
    if isinstance(block, Item):
        return (
            shown(item_value(block, "")).strip(" \t\xa0") if block.parts or len(every) > 1 else ""
        )
    if index + 1 >= len(every):
        return ""
    below = every[index + 1][1]
    parsed = field(below)
    return "" if parsed is not None and parsed[0] in known else shown(below).strip(" \t\xa0")


def _defined(
    text: str, after: str, pattern: re.Pattern[str], known: Mapping[str, str], capital: bool
) -> tuple[str, str] | None:
    """(key, value) of a name alone on its line whose value follows on the next line behind
    a colon, as a definition list writes a term and its definition (`Resolves` then `: F4`):
    CommonMark reads both as one line of text, so the field is meant but not written."""
    if after.lstrip(" \t")[:1] != ":":
        return None
    m = pattern.match(text)
    if m is None or m[4] or text[m.end() :].strip(" \t\xa0*_`") or (capital and m[2].islower()):
        return None
    key = _key_named(known, m[2])
    return key, shown(after.lstrip(" \t")[1:].strip(" \t\xa0"))


def _key_named(known: Mapping[str, str], name: str) -> str:
    """The key of `known` a name matched by _near_pattern spells, however its words are
    joined (`Raised-by`, `raised_by`, `RaisedBy`)."""
    return _by_mapping(known, _run_together)[_SPELT_APART_RE.sub("", name.lower())]


_SPELT_APART_RE = re.compile(r"[ \t\xa0_-]+")


def _run_together(known: Mapping[str, str]) -> dict[str, str]:
    return {_SPELT_APART_RE.sub("", name): key for name, key in known.items()}


def _near_field(
    text: str,
    pattern: re.Pattern[str],
    known: Mapping[str, str],
    spaced: Mapping[str, Callable[[str], object]],
    capital: bool,
) -> tuple[str, str, str] | None:
    """(key, value, how) of a line meant as a field but not written as one; None otherwise."""
    m = pattern.match(text)
    if m is None:
        return None
    opening, name, closing, separator = m.groups()
    if capital and not name[0].isupper():
        return None
    parsed = field(text)
    if parsed is not None and parsed[0] in known:
        return None  # a field `fields` reads
    key = _key_named(known, name)
    value = shown(text[m.end() :].lstrip("*_").strip(" \t\xa0"))
    if separator or (opening and closing):
        return key, value, "mark"
    after = text[m.end(3) : m.end(3) + 1]
    if after in (" ", "\t", "\xa0") and key in spaced and spaced[key](value):
        return key, value, "space"
    if not text[m.end() :].strip(" \t\xa0*_`"):
        # The name alone on its line: meant as the field when its value goes on below.
        return key, "", "alone"
    return None


def note_near(rec: Records, file: str, near: NearField, rule: str | None) -> None:
    """The parse issue for a line meant as a field but not written `Name: value`: its value
    is read, and `rule` (the rule that reads the field) fails (spec §3.1, fail closed)."""
    name = near.key.replace("_", " ").capitalize()
    message = (
        f"'{near.text[:80]}' is meant as a '{name}:' field but is not written "
        f"'{name}: value' (taken as '{near.value[:60]}')"
    )
    rec.issue(file, near.line, "malformed-field", message, rule)


def note_unread_near(
    rec: Records,
    file: str,
    block: Block,
    known: Mapping[str, str],
    rule: RuleOf,
    spaced: Mapping[str, Callable[[str], object]] | None = None,
) -> list[NearField]:
    """A parse issue for each line meant as a field of `known` but not written `Name:
    value` (`- Status — stopping`, `Current as of = …`) in a file whose reader reads no such
    line (state.md, thesis.md, the manifest): the field stays unread, and the issue names
    the line and fails the rule that needs it, which the missing field alone left nameless;
    the lines, for a reader with more to say. `spaced`: as near_fields takes it."""
    found = near_fields(block, known, spaced or {})
    names = _names_of(known) if found else {}
    for near in found:
        name = names[near.key].capitalize()
        message = (
            f"'{near.text[:80]}' is meant as a '{name}:' field but is not written "
            f"'{name}: value', so it is not read"
        )
        rec.issue(file, near.line, "malformed-field", message, rule(near.key, near.value))
    return found


def note_unread(
    rec: Records,
    file: str,
    block: Block,
    known: Mapping[str, str],
    rule: RuleOf,
    taken: Mapping[str, Callable[[str], bool]] | None = None,
    spaced: Mapping[str, Callable[[str], object]] | None = None,
) -> list[tuple[str, str, str, int, str]]:
    """Every field of `known` a block holds but does not give as a field (a table's row, a
    sub-item, a line not written `Name: value`), each noted and failing its rule, as
    (key, name, value, line, issue code): for a reader whose other rules need the value too
    (`taken`: as note_table_fields takes it; `spaced`: as note_unread_near)."""
    if isinstance(block, Table):
        rows = note_table_fields(rec, file, block, known, rule, taken)
        return [(*row, "unread-field") for row in rows]
    nested = [(*f, "nested-field") for f in note_nested(rec, file, block, known, rule)]
    near = note_unread_near(rec, file, block, known, rule, spaced)
    if not near:
        return nested
    names = _names_of(known)
    return nested + [(n.key, names[n.key], n.value, n.line, "malformed-field") for n in near]


def as_fields(block: Block, known: Mapping[str, str]) -> Block:
    """A setext heading whose underlined lines hold a field of `known` is the paragraph it
    underlines: `Why: …` above a `---` is meant as a field and a break, not as a title
    (spec §3.1: a line recognisably meant as a field never just disappears)."""
    if isinstance(block, Heading) and block.underlined:
        paragraph = Paragraph(block.underlined)
        if fields(paragraph, known):
            return paragraph
    return block


def note_heading_field(
    rec: Records,
    file: str,
    block: Block,
    known: Mapping[str, str],
    meant: Mapping[str, Callable[[str], bool]],
    rule: RuleOf,
    below: str = "",
) -> tuple[str, str, int] | None:
    """A parse issue for an ATX heading whose text is a field of `known` with a value the
    field takes (`## Status: stopping`, `### Result: fail`: `meant[key]` says so): a field
    is a bullet or a line of its own (spec §3.1), so the heading is not read as one, and
    the rule that needs the field fails rather than the field vanishing (a setext heading
    over a field is that field: as_fields). So is a heading of the name alone whose value
    is `below` it (`#### Raised by` over `twin (S9)`: line_below), and one written as a
    field without its colon (`### Resolves F1`, `### Raised by — twin (S9)`). A heading whose text
    only begins with a field's name (`### Why: background`, `## Status: history of the
    posture`) is a section heading, as §3.1 allows trailing text after a heading's name.
    The field (key, value, line), None for any other block."""
    if not isinstance(block, Heading) or block.underlined is not None:
        return None
    parsed = field(block.text) or _near_heading(block.text, known)
    if parsed is None or parsed[0] not in known:
        return None
    key, value = known[parsed[0]], parsed[1]
    written = f"{'#' * block.level} {block.text}"
    if not value.strip(" \t\xa0*_`") and below:
        value, written = below, f"{written}' over '{below}"
    if key not in meant or not meant[key](value):
        return None
    _unread_field(rec, file, block.line, written, IN_HEADING, rule(key, value))
    return key, value, block.line


def _near_heading(text: str, known: Mapping[str, str]) -> tuple[str, str] | None:
    """(name, value) of a heading's text written as a field of `known` without its colon
    (`Resolves F1`, `Raised by — twin (S9)`), or of the name alone (value ''); None else."""
    seen = shown_name(text)
    name = " ".join(bare(seen).lower().split())
    if name in known:
        return name, ""
    m = _near_re(known)[0].match(seen)
    if m is None:
        return None
    name = " ".join(m[2].lower().replace("-", " ").replace("_", " ").split())
    return name, shown(seen[m.end() :].lstrip("*_").strip(" \t\xa0"))


def line_below(blocks: list[Block], index: int, known: Mapping[str, str]) -> str:
    """The first line of the paragraph or list item after blocks[index], as a field's value
    may stand below a heading of its name or past a blank line; '' when another block
    follows or the line is a field of `known` of its own."""
    after = blocks[index + 1] if index + 1 < len(blocks) else None
    if not isinstance(after, Item | Paragraph) or not after.lines:
        return ""
    text = after.lines[0][1]
    parsed = field(text)
    return "" if parsed is not None and parsed[0] in known else shown(text).strip(" \t\xa0")


def taken_below(
    rec: Records,
    file: str,
    blocks: list[Block],
    index: int,
    line: int,
    names: tuple[str, Mapping[str, str]],
    rule: str | None,
    meant: Callable[[str], bool],
) -> str:
    """The value of a field whose name ends its paragraph or item with nothing after it, when
    the next paragraph or item holds it (`**Resolves:**`, a blank line, `F2`): taken, with a
    note that fails `rule`, as the same name written without its colon already was (found by
    a hunt: read as empty, F2 went unread and BS-FORK-02 passed). `names`: the field's name
    as the schema writes it, and the fields of the file; `meant`: whether a value below is
    one the field takes (prose below an empty field is no value of it). '' when none is."""
    block = blocks[index]
    if isinstance(block, Item):
        ends = block.last
    elif isinstance(block, Paragraph) and block.lines:
        ends = block.lines[-1][0]
    else:
        return ""
    if ends != line:
        return ""
    value = line_below(blocks, index, names[1])
    if value and meant(value):
        message = (
            f"'{names[0]}:' has its value below it, past a blank line (taken as "
            f"'{value[:60]}'); write '{names[0]}: {value[:40]}'"
        )
        rec.issue(file, line, "malformed-field", message, rule)
        return value
    return ""


_FENCE_RE = re.compile(r"`{3,}+[^`]*+|~{3,}+.*+")


def code_value(doc: Document, lines: list[str], block: Block, line: int) -> str:
    """The text of the code blocks inside a list item (a fence under `- Closes when:`), its
    fences dropped, as one line: CommonMark makes them part of the item, so they are part of
    its value as its other lines are (spec §3.1), though never a field or an entry. A field
    on line `line` that ends its item or paragraph takes the fenced block right below it (no
    blank line between: `Decision:` over a fence at the margin, which ends the paragraph).
    '' for another block or none."""
    if not doc.code or not isinstance(block, Item | Paragraph):
        return ""
    if isinstance(block, Item):
        inside = [(f, last) for f, last in doc.code if block.line < f <= block.last]
        if inside or block.last != line:
            return _code_text(lines, inside)
    elif block.lines[-1][0] != line:
        return ""
    return _code_text(lines, [(f, last) for f, last in doc.code if f == line + 1])


def _code_text(lines: list[str], spans: list[tuple[int, int]]) -> str:
    found = []
    for first, last in spans:
        texts = (lines[at - 1].strip(" \t") for at in range(first, last + 1))
        found += [text for text in texts if text and not _FENCE_RE.fullmatch(text)]
    return " ".join(found)


def item_value(item: Item, first: str) -> str:
    """A field item's value: what follows the colon, then everything else the item holds."""
    if len(item.lines) == 1 and not item.parts:
        return first
    paragraph = unbroken([first, *(text for _, text in item.lines[1:])])
    return " ".join(filter(None, (*paragraph, item.rest())))


def repeated(
    rec: Records,
    file: str,
    line: int,
    name: str,
    first: str,
    value: str,
    rule: str | None,
    read: Callable[[str], object] | None = None,
) -> bool:
    """A field given a second time: the first counts. A second that says the same is a note;
    one that says something else is a line that was not read, so `rule` (the rule that needs
    the field) fails (spec §3.1, fail closed). `read`: the value as the field reads it (an
    instant, a token; None when unreadable): a second that reads the same says the same
    (`16:05Z` and `16:05:00Z`, `stopping` and `stopping (pipeline running)`; until 2026-12-07
    they failed as two values, found by a hunt). Whether it said the same."""
    same = bare(value).lower() == bare(first).lower()
    if not same and read is not None:
        read_first = read(first)
        same = read_first is not None and read_first == read(value)
    if same:
        rec.issue(file, line, "duplicate-field", f"second '{name}:' ignored (the same value)")
        return True
    message = (
        f"second '{name}:' says '{value[:60]}', the first '{first[:60]}'; only the first is read"
    )
    rec.issue(file, line, "duplicate-field", message, rule)
    return False


# A heading that is a link (`[Claim](#claim)`, `[Claim][c]`): the page shows its text.
_LINKED_NAME_RE = re.compile(r"[ \t]*+\[([^\[\]]++)\](?:\([^()]*+\)|\[[^\[\]]*+\])")
# What an emoji or a symbol before a name is made of (`🗺️`, `✅`, `👩‍💻`): symbols, the
# variation selectors and joiners inside one, and the spaces after it.
_SYMBOL_CATEGORIES = ("So", "Sk", "Sm", "Cf", "Mn", "Me")


def _heading_shown(text: str) -> str:
    """A heading's text with its name as the page shows it: a link's text (`[Claim](#claim)`
    is the Claim section), and no emoji or symbol before it (`🗺 Aspect map` is the map;
    until stop 55 both failed as no section, found by a hunt)."""
    if "[" in text[:4] and (m := _LINKED_NAME_RE.match(text)) is not None:
        text = m[1] + text[m.end() :]
    end, symbols = 0, 0
    while end < len(text) and (text[end] in " \t" or not text[end].isascii()):
        if text[end] not in UNICODE_SPACES and text[end] not in " \t":
            if unicodedata.category(text[end]) not in _SYMBOL_CATEGORIES:
                break
            symbols += 1
        end += 1
    return text[end:] if symbols else text


def section(text: str, names: tuple[str, ...]) -> str | None:
    """Which of the section names a heading's text begins with (any case, emphasis
    dropped, trailing text after the name allowed: `Aspect map (derived from basis)`,
    `_Claim_ (one sentence)`); a name that goes on as a word (`Claimant`) is none."""
    text = heading_shown(text)
    if not text.isascii() or "[" in text[:4]:
        text = _heading_shown(text)
    lowered = inner_marks_dropped(bare(text).lower())
    if "  " in lowered or "\t" in lowered:
        lowered = " ".join(lowered.split())  # `Aspect  map` is the name too
    # Marks after the name close its emphasis only when marks opened it (`Claim_x` is a word).
    opened = text.lstrip(" \t\xa0")[:1] in ("*", "_", "`")
    for name in names:
        if lowered.startswith(name):
            after = lowered[len(name) :]
            if opened:
                after = after.lstrip("*_`")
            if not (after[:1].isalnum() or after[:1] == "_"):
                return name
    return None


# The start of a heading up to its ID's last digit: emphasis or a bracket, the letter (maybe
# fullwidth), then digits of any script and characters that show nothing.
_ID_LEAD_RE = re.compile(
    rf"[ \t*_`\[{INVISIBLE}]*+[A-Za-z\uff21-\uff3a\uff41-\uff5a][\d{INVISIBLE}]*+"
)


def seen_heading(block: Heading) -> Heading:
    """A heading with its ID as the page shows it: `## Ｄ3`, `## F１` (typed fullwidth, as a
    CJK input method types them) and `## D3\u200b — …` are entry D3 or fork F1 (spec §3.1:
    an entry heading begins with the ID). The rest of the heading is left as written: a
    title keeps its tags, which the report shows escaped."""
    if block.text.isascii():
        return block
    text = seen_id(block.text)
    return block if text is block.text else Heading(block.line, block.level, text, block.underlined)


def seen_id(text: str) -> str:
    """Text with the ID it begins with as the page shows it (`Ｄ3`, `F１`, `D3\u200b` read
    D3); the text itself when that changes nothing."""
    m = _ID_LEAD_RE.match(text)
    if m is None or m[0].isascii():
        return text
    lead = "".join(str(unicodedata.decimal(c)) if c.isdecimal() else c for c in seen_chars(m[0]))
    return lead + text[m.end() :]


def entry_id(text: str, letter: str) -> tuple[bool, str | None, str]:
    """Whether a level-2 heading's text is an entry, its ID's digits (None when it has
    none), and the text after the ID.

    An entry begins with `{letter}{n}` standing as a word. Recognisably meant as an entry
    whose ID could not be read: the letter alone before a dash, colon or space (not a
    hyphen: `F-layer`), a misspelt ID before a number (`F-5`, `F#5`, `f5`, `Fork 5`,
    `Turn 3`), or a placeholder for the ID (`F? — …`, `FX — …`; found by a hunt). Anything
    else (`Forks still open`) is a section heading.
    """
    m = _ENTRY_RES[letter].match(text)
    rest = _past_closing(text, m.end(1)) if m is not None and m[1] else ""
    if m is not None and m[1] and not _word_goes_on(rest[:1]):
        if "&" in rest:
            rest = decoded_separator(rest)  # `F1&mdash;title`: the dash the page shows
        if letter != "T" and _SECOND_ID_RES[letter].match(rest):
            # `## F5 & F6 — …`: two entries under one heading, read as F5 alone, and F6 vanished
            # (found by a hunt); as `F5/F6` and `F5, F6`, meant as an entry but not one.
            return False, None, ""
        if letter == "T" or rest[:1] in _AFTER_ID:
            return True, m[1], rest
        # `## F4. title`, `## D2) title`: §3.1 takes a dash, colon, space or the end after
        # the ID; meant as an entry, the reader's own weighing counts it, and its rule fails.
        return False, None, ""
    misspelt = _MISSPELT_RES[letter].match(text)
    if misspelt is not None and not _word_goes_on(misspelt[2]):
        return True, None, text[misspelt.end(1) :]
    placeholder = _PLACEHOLDER_RES[letter].match(text)
    if placeholder is not None:
        return True, None, text[placeholder.end() :]
    if m is not None and not m[1] and (not m[2] or m[2] in " \t—–:"):
        return True, None, text[m.end(1) :]
    return False, None, ""


# A second ID joined to the first after a space (`F5 & F6`, `F5 and F6`, `F5 + F6`, `F5 / F6`).
_SECOND_ID_RES = {
    letter: re.compile(
        rf"[ \t]++(?:&(?:amp;)?|\+|/|,|(?i:and|or))[ \t]*+[*_`]*+{letter}[0-9]++(?![A-Za-z0-9])"
    )
    for letter in "FD"
}


def _past_closing(text: str, at: int) -> str:
    """The text after an entry's ID at `at`, past the tags and link syntax that close
    around the ID and show nothing (`<b>F4</b> — …`, `[F4](#f4) — …`)."""
    if text[at : at + 1] not in ("<", "]"):
        return text[at:]
    closing = _AFTER_ID_RE.match(text, at)
    return text[closing.end() if closing is not None else at :]


# What may follow a fork's or ledger entry's ID in its heading (spec §3.1: a dash, colon,
# space or the end), emphasis closing around the ID (`**F4** — …`) included: the title
# begins after them.
ENTRY_SEPARATORS = " \t\xa0—–-:*_`"
_AFTER_ID = frozenset(["", *ENTRY_SEPARATORS])


def _word_goes_on(char: str) -> bool:
    """Whether the character after an ID's digits makes them part of a longer word."""
    return char.isalnum() or char == "_"


def number(
    rec: Records, file: str, line: int, digits: str, what: str, rule: str | None = None
) -> int | None:
    """Digits as an int32; a number too large for the tables is a parse issue, not a
    silent null."""
    if len(digits) < 10:
        return int(digits)
    value = int32(digits)
    if value is None:
        rec.issue(
            file,
            line,
            "number-too-large",
            f"{what} number {digits[:40]}{'…' if len(digits) > 40 else ''} is too large",
            rule,
        )
    return value


# An entry's ID standing as a word anywhere in a heading, and the words that, right before
# it, say the heading is that entry (`## Fork F1 — …`, `## Open: F1 — …`, `## Decision D2`).
_LATE_ID_RES = {
    letter: re.compile(rf"(?<![A-Za-z0-9_]){letter}([0-9]++)(?![A-Za-z0-9_])") for letter in "FD"
}
_NAMED_RES = {
    "F": re.compile(r"(?i)(?<![a-z])(?:fork|open|parked)[ \t:#*_`\[(]*+F[0-9]"),
    "D": re.compile(r"(?i)(?<![a-z])(?:decision|entry|ledger)[ \t:#*_`\[(]*+D[0-9]"),
}


def late_entry_id(text: str, letter: str, sign: bool = False) -> tuple[str, str] | None:
    """A heading that holds an entry's ID further on, not first (`## Fork F1 — … [open]`,
    `## [open] F1 — …`, `## Decision D2 — …`): recognisably meant as that entry when the
    word for it stands right before the ID, or `sign` (its reader's: a fork's marker in it)
    says so (spec §3.1: it never just disappears). The ID's digits and the text after it, when
    the heading holds exactly one ID; None otherwise (a section heading naming F3 and F4)."""
    found = list(_LATE_ID_RES[letter].finditer(text))
    if len(found) != 1 or not (sign or _NAMED_RES[letter].search(text)):
        return None
    return found[0][1], text[found[0].end() :]


_STAMP_AFTER_RE = re.compile(r"(?:[(\[@,][ \t]*+)?+\d")
# A fork's marker as a line meant as a fork may write it (`[open]`, `(open)`, `[Parked → x]`):
# after an ID and a space it makes the line a fork's, as a dash or a colon would.
MEANT_MARKER_RE = re.compile(r"[\[(][ \t*_`]*+(?i:open|parked)(?![A-Za-z0-9_])")


def meant_entry(
    text: str, letter: str, heading: bool = False
) -> tuple[str | None, str, bool] | None:
    """A line recognisably meant as an entry that the entry reading does not take (spec
    §3.1): its ID's digits (None when letters are glued to them), the text after the ID,
    and whether its shape alone says so (#s, a bracket, or emphasis around the whole
    line); None for any other line. In a heading, a space separates the ID too, and in a
    fork's line one with a marker after it."""
    m = _MEANT_RES[letter].match(text)
    if m is None:
        return None
    hashes, opening, digits, glued, _, space, separator = m.groups()
    # A space alone separates a whole ID in a heading (`## D2x notes` is a section), or
    # an ID from a turn's timestamp.
    # Or a bracket, `@` or comma before the timestamp (`T10 (2026-…)`, `T10, 2026-…`): until
    # 2026-12-07 such a late turn vanished and a stale compose passed (found by a hunt).
    after = _STAMP_AFTER_RE.match(text, m.end()) if letter == "T" else None
    timestamp = after is not None and (bool(space) or after[0][0] in "([@,")
    # `## D2) title`, `## F4. title`: a numbered-list habit, which §3.1's entry does not take.
    numbered = heading and not glued and not space and text[m.end() : m.end() + 1] in ".)"
    # `- F5 should digests batch? [open]`: a space and a marker later on (found by a hunt).
    marked = letter == "F" and space and not glued and MEANT_MARKER_RE.search(text, m.end())
    if (
        separator is None
        and not (space and ((heading and not glued) or marked))
        and not timestamp
        and not numbered
    ):
        return None
    strong = heading or bool(hashes) or "[" in opening
    strong = strong or (bool(opening) and text.rstrip(" \t").endswith(opening[0]))
    return (None if glued else digits), text[m.end(5) :], strong


def entry_line(block: Block, letter: str) -> tuple[int, str, str, bool] | None:
    """The first line of a paragraph or list item that may be meant as an entry: (line,
    text, the text after the ID, whether its shape alone says so); the reader weighs the
    rest. None when there is none."""
    lines = text_lines(block)
    return None if lines is None else next(_meant_lines(_broken_lines(lines), letter), None)


def _broken_lines(lines: Iterable[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """Each line, then each piece of it after a `<br>` (`- Closes when: …<br>F5 — … [open]`)."""
    for line, text in lines:
        yield line, text
        yield from after_breaks([(line, text)])


def text_lines(block: Block) -> Iterable[tuple[int, str]] | None:
    """(line, text) of a paragraph's or list item's lines (an item's without its marker);
    None for any other block."""
    if isinstance(block, Item):
        return block.all_lines() if block.parts else block.lines
    if isinstance(block, Paragraph) and block.source is not None:
        # A paragraph not yet split into lines: read its lines where they are.
        return enumerate(block.source[block.start : block.end], block.start + 1)
    if isinstance(block, Paragraph):
        return block.lines
    return None


# A line that is only a link to a heading of the page (a table of contents' `[F1 — title
# \[open\]](#f1--title-open)`) or a link reference definition (`[D1]: #d1`, never shown):
# it points at an entry and is not meant as one.
# Link text may hold balanced brackets (CommonMark), as a fork's marker: `[F1 — … [open]]`.
_LINK_TEXT = r"\[((?:[^\[\]\\]|\\.|\[(?:[^\[\]\\]|\\.)*+\])++)\]"
_REFERENCE_RE = re.compile(
    rf"{_LINK_TEXT}\(#[^()\s]*+\)"
    rf"|{_LINK_TEXT}:[ \t]*+(?:<[^<>]*+>|\S++)(?:[ \t]++(?:\"[^\"]*+\"|'[^']*+'|\([^()]*+\)))?+"
)
_ESCAPE_RE = re.compile(r"\\(.)")


def as_shown_start(text: str) -> str:
    """A line's start as the page shows it, where that differs from the text (escaped
    marks, leading inline tags, character references, and symbols such as a status emoji
    before an entry's ID): `\\## F3 — …` and `🟢 F3 — …` show an entry's line, which the
    reading of the file does not take, so it must not vanish (spec §3.1; found by a hunt)."""
    if text[:1] == "<":
        tags = _LEADING_TAGS_RE.match(text)
        text = text[tags.end() :] if tags else text
    if "&" in text[:1]:
        text = decoded(text)
    if text[:1] == "\\":
        marker = _ESCAPED_MARKER_RE.match(text)
        text = text[marker.end() :] if marker else unescaped(text)
    lead = 0
    while lead < len(text) and (text[lead] in " \t" or _symbol(text[lead])):
        lead += 1
    return text[lead:]


def _symbol(char: str) -> bool:
    return char >= "\x80" and unicodedata.category(char) in _SYMBOL_CATEGORIES


def _meant_lines(
    lines: Iterable[tuple[int, str]], letter: str
) -> Iterator[tuple[int, str, str, bool]]:
    """Each line that may be meant as an entry, as entry_line gives it."""
    starts = _STARTS[letter]
    for line, written in lines:
        # A first look: the line begins with a mark or the ID's letter.
        text = written
        if text[:1] not in starts:
            if not text or (text[0] not in _SHOWN_OTHERWISE and not _symbol(text[0])):
                continue
            text = as_shown_start(text)
            if text[:1] not in starts:
                continue
        seen = past_list_marker(text.lstrip(_BLANK_LEAD)) if text[0] in _BLANK_LEAD else text
        if _WIDE[letter] in seen[:2]:
            seen = seen_chars(seen)
        shaped = seen  # its ID's digits typed fullwidth (`F５ — …`) say nothing of its shape
        if not seen.isascii():
            seen = seen_id(seen)
        if text[0] == "[" and _REFERENCE_RE.fullmatch(seen.strip(" \t")):
            continue
        found = meant_entry(seen.rstrip(" \t"), letter)
        if found is not None:
            # Invisible characters first: its shape is a heading's, so it is meant as one.
            strong = found[2] or shaped is not written
            yield line, written.rstrip(" \t"), found[1], strong


def linked_entries(block: Block, letter: str) -> list[tuple[int, str]]:
    """(line, link text) of each line of a paragraph or list item that is only a link to a
    heading of the page and is written as an entry (`- [F5 — … \\[open\\]](#f5)`): a table of
    contents, no entry where the file has that entry's heading, but the only trace of the
    entry where it has none (entries_in_tables_only notes it, IN_LINK)."""
    found = []
    for line, text in text_lines(block) or ():
        seen = past_list_marker(text.lstrip(_BLANK_LEAD)) if text[:1] in _BLANK_LEAD else text
        link = _REFERENCE_RE.fullmatch(seen.strip(" \t")) if text[:1] == "[" else None
        if link is not None and link[1] is not None:
            title = _ESCAPE_RE.sub(r"\1", link[1]).strip(" \t")
            if meant_entry(title, letter) is not None:
                found.append((line, title))
    return found


def table_entries(table: Table, letter: str) -> list[tuple[int, str, str, bool]]:
    """Each row of a table (its header too) that may be meant as an entry, read as the
    line its cells make (`F5 — title | [open]`), as entry_line gives it."""
    rows = [(table.line, table.header), *table.rows]
    return list(_meant_lines([(line, " | ".join(cells)) for line, cells in rows], letter))


def html_entries(
    doc: Document, lines: list[str], letter: str, weigh: Weigh
) -> list[tuple[int, str]]:
    """(line, text) of each line inside a shown HTML block that is meant as an entry: a
    heading there is no heading to CommonMark (no blank line ends the block before it), so
    the block's lines, their tags dropped, are read as Markdown and weighed as the reader
    weighs lines outside (spec §3.1: such an entry never just disappears)."""
    inner = html_text(doc, lines)
    if inner is None:
        return []
    found: list[tuple[int, str]] = []
    blocks = parse(inner).blocks
    for index, block in enumerate(blocks):
        if isinstance(block, Heading):
            entry = entry_id(block.text, letter)[0]
            if entry or meant_entry(block.text, letter, heading=True) is not None:
                found.append((block.line, inner[block.line - 1].strip(" \t")))
            continue
        meant = entry_line(block, letter)
        if meant is not None and (meant[3] or weigh(meant, blocks, index)):
            found.append((meant[0], meant[1]))
    return found


def html_text(doc: Document, lines: list[str]) -> list[str] | None:
    """The file with every line blank but those of shown HTML blocks, which keep their
    text without quote markers and the tags that open or close them; None when the file
    has no shown HTML block."""
    inner: list[str] | None = None
    for first, last in doc.html:
        opening = lines[first - 1]
        at = PREFIX_RE.match(opening).end()  # type: ignore[union-attr]
        kind = html_kind(opening, at)
        if kind in HIDDEN_HTML:
            # The text after a comment's end on its last line is shown, and read as such.
            tail = shown_tail(lines[last - 1], kind, at if first == last else 0)
            if tail:
                inner = inner or [""] * len(lines)
                inner[last - 1] = tail
            continue
        if inner is None:
            inner = [""] * len(lines)
        for at in range(first, last + 1):
            text = lines[at - 1]
            inner[at - 1] = untagged(text[_QUOTES_RE.match(text).end() :])  # type: ignore[union-attr]
    return inner


_INLINE_COMMENT_RE = re.compile(r"<!--.*?-->|<!--.*")


def shown_tail(text: str, kind: int, at: int) -> str:
    """The text a hidden HTML block's last line shows after the block's end (`<!-- x -->
    Resolves: F1`), its further comments and the tags around it dropped; '' for none."""
    tail = _INLINE_COMMENT_RE.sub("", html_tail(text, kind, at))
    return untagged(tail).strip(" \t")


def untagged(text: str) -> str:
    """A line of an HTML block without the tags that open or close it (`<pre>S1 | …`,
    `… [open]</summary>`); the closing ones are read back from the end by position, so a
    line of many tags costs one pass."""
    tags = _LEADING_TAGS_RE.match(text)
    if tags is not None:
        text = text[tags.end() :]
    end = len(text.rstrip(" \t"))
    while end and text[end - 1] == ">":
        start = text.rfind("<", 0, end)
        if start < 0 or _TAG_RE.fullmatch(text, start, end) is None:
            break
        end = start
        while end and text[end - 1] in " \t":
            end -= 1
    return text[:end]


def not_an_entry_heading(
    rec: Records, file: str, line: int, text: str, letter: str, rule: str, where: str = ""
) -> None:
    """A parse issue for a line meant as an entry that is not written as one; `where`
    says what kept it from being read, when the line alone does not show it."""
    message = f"'{text[:120]}' is meant as {_WHAT[letter]} but is not one{where}"
    if text[:1] in INVISIBLE:
        message += f" (an invisible U+{ord(text[0]):04X} begins the line)"
    elif text[:1] in _BLANK_LEAD:
        message += f" (a U+{ord(text[0]):04X}, not a plain space, begins the line)"
    elif text[:1] == "\uff03":
        message += " (fullwidth ＃ signs, not #, begin the line)"
    odd = _ODD_SPACE_RE.match(text)
    if odd is not None and odd[1] == _UNREADABLE:
        message += " (a byte that is not UTF-8 follows the #s)"
    elif odd is not None and odd[1] in INVISIBLE:
        message += f" (an invisible U+{ord(odd[1]):04X} follows the #s)"
    elif odd is not None:
        message += f" (a U+{ord(odd[1]):04X} space, not a plain one, follows the #s)"
    rec.issue(file, line, "entry-not-heading", message, rule)


def outside_entry(
    rec: Records,
    file: str,
    found: list[tuple[str, str, int]],
    letter: str,
    rule: RuleOf,
    above: tuple[str, int] | None = None,
) -> None:
    """A parse issue for each entry field that stands under no entry (before the first, or
    under a section heading such as `## Decisions`): it belongs to nothing, so it is not
    read, and the rule that needs it fails (`rule`: key, value → that rule). `above`: the
    entry that a line meant as an entry (its line) ended, whose field a line up to it is."""
    for key, value, line in found:
        label = key.replace("_", " ").capitalize()
        if above is not None and line <= above[1]:
            # `- Resolves: F1<br>D5 — …`: the page shows the field under the entry above.
            shown_value = BREAK_RE.split(value)[0].strip(" \t")
            message = (
                f"'{label}: {shown_value[:60]}' belongs to {above[0]}, but it is written in "
                f"the block of the entry not written as a heading on line {above[1]}, which "
                f"ends {above[0]}, so it is not read (give that entry its own heading)"
            )
        else:
            message = f"'{label}: {value[:60]}' stands under no entry heading, so it is not read"
            message += f" ({_WHAT[letter]} begins one)"
        rec.issue(file, line, "field-outside-entry", message, rule(key, value))


def fields_follow(blocks: list[Block], index: int, known: Mapping[str, str]) -> bool:
    """Whether block `index` or one of the two blocks after it (before a heading) holds a
    field of `known`: the body of an entry follows."""
    for block in blocks[index : index + 3]:
        if isinstance(block, Heading):
            return False
        if fields(block, known):
            return True
    return False


def titled_entry(rest: str, blocks: list[Block], index: int, known: Mapping[str, str]) -> bool:
    """Whether the text after an ID in a plain line or list item reads as an entry's title:
    a dash begins it and the entry's fields follow."""
    return rest.lstrip(" \t")[:1] in ("—", "–", "-") and fields_follow(blocks, index, known)


def unclosed_block(doc: Document, rec: Records, file: str, rule: str) -> None:
    """A code fence or an HTML comment (or another hidden HTML block) never closed hides
    every later line from the reader: a parse issue that fails `rule`, the rule that reads
    the file (spec §3.1, fail closed)."""
    if doc.unclosed_fence is not None:
        message = "code fence never closed; the rest of the file is read as code"
        rec.issue(file, doc.unclosed_fence, "unclosed-fence", message, rule)
    if doc.too_deep is not None:
        # An entry 17 quotes or lists deep vanished with no word (found by a hunt).
        message = f"quotes or lists nested more than {MAX_DEPTH} deep; what they hold is not read"
        rec.issue(file, doc.too_deep, "too-deep", message, rule)
    unclosed_comment(doc, rec, file, rule)


def unclosed_comment(doc: Document, rec: Records, file: str, rule: str) -> None:
    """The HTML half of unclosed_block, for a reader that reads the lines in code blocks."""
    if doc.unclosed_html is not None and doc.unclosed_html[1] in HIDDEN_HTML:
        message = "HTML comment (or <?, <!…>) never closed; the rest of the file is hidden"
        rec.issue(file, doc.unclosed_html[0], "unclosed-comment", message, rule)


def hidden_entries(
    doc: Document, lines: list[str], rec: Records, file: str, letter: str, rule: str, weigh: Weigh
) -> list[int]:
    """A parse issue that fails `rule` for each entry inside an HTML block; their lines, in
    file order (each ends the entry above it, as a line outside does)."""
    found = html_entries(doc, lines, letter, weigh)
    for line, text in found:
        not_an_entry_heading(rec, file, line, text, letter, rule, IN_HTML)
    return [line for line, _ in found]


def note_coded_entries(
    doc: Document, lines: list[str], rec: Records, file: str, letter: str
) -> None:
    """A note (failing no rule) for each line of an indented code block written as an entry's
    heading (`    ### T6 · …`): spec §3.1 makes it code, never an entry or a turn, and a
    writer may quote the format so, but it is shown, so that `clean` never hides it."""
    if not doc.code:
        return
    for line, text in coded_entries(doc, lines, letter):
        message = (
            f"'{text[:120]}' is written as {_WHAT[letter]} but indented four spaces or more: "
            "an indented code block, which is never read as one (indent it three spaces at most)"
        )
        rec.issue(file, line, "entry-in-code", message)


def coded_entries(doc: Document, lines: list[str], letter: str) -> list[tuple[int, str]]:
    """(line, text) of each line of an indented code block written as an entry's heading
    (`    ### T6 · …`); a fenced block is code written as such, and is not looked at."""
    found = []
    for first, last in doc.code:
        if _FENCE_RE.fullmatch(lines[first - 1].strip(" \t")):
            continue
        for at in range(first, last + 1):
            text = lines[at - 1].strip(" \t")
            level = heading_level(text, 0) if text[:1] == "#" else 0
            if level and entry_id(heading_text(text, level), letter)[0]:
                found.append((at, text))
    return found


def stray_table(block: Block) -> Block:
    """A paragraph whose every line is written as a table row (`| T9 | 2026-…Z | … |`), as
    the table it was meant for: GFM reads such lines as a paragraph when no delimiter row
    follows the first (a row appended after a blank line below a table), yet each is the row
    it shows, so an entry or turn written there is weighed as in a table (table_rows), never
    dropped (spec §3.1). Any other block as it is."""
    if not isinstance(block, Paragraph) or block.lines[:1] == []:
        return block
    if not all(_is_row(text) for _, text in block.lines):
        return block
    rows = [(line, split_cells(text.strip(" \t"))) for line, text in block.lines]
    # No header: each line is a row, as under the table it was appended to.
    table = Table(rows[0][0], [])
    table.rows, table.last = rows, rows[-1][0]
    return table


def split_rows(blocks: list[Block]) -> list[Block]:
    """The blocks, each paragraph that mixes prose and lines written as table rows split
    into its runs (`late:` then `| T9 | 2026-…Z | … |`, no blank line between), and each
    list item whose lazy continuation lines begin such rows ended before them: GFM reads one
    paragraph, yet each row is the row it shows, so stray_table weighs it as a table's
    rather than the prose hiding it (spec §3.1). Other blocks as they are."""
    if not any(_mixed_rows(block) for block in blocks):
        return blocks
    found: list[Block] = []
    for block in blocks:
        found += row_runs(block)
    return found


def row_runs(block: Block) -> list[Block]:
    """A paragraph that mixes prose and table rows as one paragraph per run of either, a
    list item with such rows in its lazy continuation as the item up to the first row, then
    those runs; any other block alone."""
    if not _mixed_rows(block):
        return [block]
    if isinstance(block, Item):
        first = next(i for i, (_, text) in enumerate(block.lines) if _is_row(text))
        item = Item(block.line, block.depth, block.marker, block.lines[:first])
        item.last = block.lines[first - 1][0]
        return [item, *_runs(block.lines[first:])]
    return _runs(block.lines) if isinstance(block, Paragraph) else [block]


def _runs(lines: list[tuple[int, str]]) -> list[Block]:
    """Lines as one paragraph per run of table rows or of other lines."""
    return [Paragraph(list(run)) for _, run in groupby(lines, key=lambda line: _is_row(line[1]))]


def _is_row(text: str) -> bool:
    """Whether a line is written as a table row: it begins with a `|`."""
    return text.lstrip(" \t")[:1] == "|"


def _mixed_rows(block: Block) -> bool:
    """Whether a paragraph holds both lines written as table rows and other lines, or a list
    item with nothing after its first paragraph holds such rows after its first line."""
    if isinstance(block, Item):
        return not block.parts and any(_is_row(text) for _, text in block.lines[1:])
    if not isinstance(block, Paragraph):
        return False
    rows = [_is_row(text) for _, text in text_lines(block) or ()]
    return any(rows) and not all(rows)


def table_rows(
    table: Table,
    blocks: list[Block],
    index: int,
    rec: Records,
    file: str,
    letter: str,
    rule: str,
    weigh: Weigh,
    known: Mapping[str, str] | None = None,
    rule_of: RuleOf | None = None,
    untaken: list[tuple[int, str]] | None = None,
) -> bool:
    """A parse issue that fails `rule` for each row of a table meant as an entry: its shape
    says so, a dash begins the title after its ID (no fields can follow a row, so the title
    alone tells an entry from a row that mentions an ID), the header names two or more of
    the entry's fields (`known`: `| ID | Decision | Why | … |` is the ledger written as a
    table), or the reader's weighing says so; whether there was one. Such a row's cells
    under a field another rule reads (`rule_of`: Resolves, BS-FORK-02) are no field either:
    each is an unread-field issue that fails that rule too (spec §3.1, fail closed).
    `untaken` gets the other rows that may be meant as entries, in a table whose header names
    one of the entry's fields or with a cell holding a marker (`| F4 | … | open |`): the
    caller notes those whose ID is no entry of the file (entries_in_tables_only)."""
    columns = header_fields(table, known) if known else {}
    cells = dict(table.rows) if len(columns) > 1 else {}
    rows = dict(table.rows)
    found = False
    for meant in table_entries(table, letter):
        titled = meant[2].lstrip(" \t")[:1] in ("—", "–", "-")
        row = cells.get(meant[0])
        if meant[3] or titled or row is not None or weigh(meant, blocks, index):
            found = True
            not_an_entry_heading(rec, file, meant[0], meant[1], letter, rule, IN_TABLE)
            if row is not None and rule_of is not None:
                _unread_cells(rec, file, meant[0], row, columns, rule, rule_of)
        elif untaken is not None and (columns or _marker_cell(rows.get(meant[0], []))):
            untaken.append((meant[0], meant[1]))
    return found


def _marker_cell(cells: list[str]) -> bool:
    """Whether a row holds a fork's marker value as a cell of its own (`open`, `parked → x`),
    as a word (`opened last week` is none)."""
    return any(_MARKER_CELL_RE.match(bare(shown(c))) for c in cells[1:])


_MARKER_CELL_RE = re.compile(r"(?i)(?:open|parked)(?![\w-])")


def entries_in_tables_only(
    rec: Records,
    file: str,
    untaken: list[tuple[int, str]],
    ids: set[str],
    letter: str,
    rule: str,
    linked: Iterable[tuple[int, str]] = (),
) -> None:
    """A parse issue for each table row from table_rows' `untaken` whose ID is none of the
    file's entries (`ids`): a fork or decision written only as a table row (`| F4 | Should
    cursors expire? | open |`) is meant as the entry, and was dropped with no note; a row
    naming an entry that has its heading is a summary of it. So with `linked`
    (linked_entries), a table of contents' line naming an entry the file does not have."""
    for where, found in ((IN_TABLE, untaken), (IN_LINK, linked)):
        for line, text in found:
            digits = entry_id(text, letter)[1]
            if digits is not None and canonical_id(letter, digits) not in ids:
                not_an_entry_heading(rec, file, line, text, letter, rule, where)


def header_fields(table: Table, known: Mapping[str, str]) -> dict[int, tuple[str, str]]:
    """Column → (key, name) of each header cell of a table that names a field of `known`."""
    found = {}
    for column, cell in enumerate(table.header):
        name = " ".join(bare(cell).lower().split())
        if name in known:
            found[column] = known[name], name
    return found


def _unread_cells(
    rec: Records,
    file: str,
    line: int,
    row: list[str],
    columns: Mapping[int, tuple[str, str]],
    rule: str,
    rule_of: RuleOf,
) -> None:
    """An unread-field issue for each cell of a row meant as an entry that holds a field
    read for a rule other than `rule` (which the row already fails)."""
    for column, (key, name) in columns.items():
        value = row[column].strip() if column < len(row) else ""
        needs = rule_of(key, value)
        if not says_nothing(value) and needs not in (None, rule):
            _unread_field(rec, file, line, f"{name.capitalize()}: {value}", IN_TABLE, needs)


def passed(ends: list[int], block: Block) -> bool:
    """Whether one of `ends` (ascending lines, consumed) lies before the block: an entry
    the reader did not take stood there and ended the entry above."""
    if not ends:
        return False
    first = first_line(block)
    gone = 0
    while gone < len(ends) and ends[gone] < first:
        gone += 1
    del ends[:gone]
    return gone > 0


def first_line(block: Block) -> int:
    """The line a block begins on."""
    if isinstance(block, Paragraph):
        return block.start + 1 if block.source is not None else block.lines[0][0]
    return block.line


def own_lines(block: Block) -> list[tuple[int, str]]:
    """The lines of a block a field may stand on by itself, as a line meant as one under
    another form of its name is sought: a list item's first line, a paragraph's every line."""
    if isinstance(block, Item):
        return block.lines[:1]
    if isinstance(block, Paragraph):
        return block.lines
    return []
