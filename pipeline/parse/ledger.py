"""ledger.md: one entry per level-2 heading `D{n} — {title}`, with its fields and the
`Reversed by D{n}` annotation anywhere in it."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from pipeline.parse.blocks import Block, Document, Heading, Item, Paragraph, Table, parse
from pipeline.parse.lexical import (
    BREAK_RE,
    Rows,
    Spans,
    bare,
    canonical_id,
    decoded,
    decoded_separator,
    ids,
    inline_text,
    left_to_fill,
    misspelt_ids,
    seen_chars,
    shown,
)
from pipeline.parse.reading import (
    ENTRY_SEPARATORS,
    NearField,
    as_fields,
    code_value,
    entries_in_tables_only,
    entry_id,
    entry_line,
    fields,
    first_line,
    hidden_entries,
    html_text,
    late_entry_id,
    line_below,
    linked_entries,
    meant_entry,
    near_fields,
    not_an_entry_heading,
    note_coded_entries,
    note_heading_field,
    note_html_fields,
    note_near,
    note_nested,
    note_table_fields,
    number,
    outside_entry,
    own_lines,
    passed,
    repeated,
    seen_heading,
    split_rows,
    stray_table,
    table_rows,
    taken_below,
    titled_entry,
    unclosed_block,
)
from pipeline.parse.records import Records
from pipeline.schema import LEDGER, blank_row

FILE = "ledger.md"
RULE = "BS-LEDGER-01"
_FIELDS = {
    "decision": "decision",
    "why": "why",
    "how to apply": "how_to_apply",
    "resolves": "resolves",
    "reversed by": "reversed_by",
    "reverses": "reverses",
}
_TEXT = ("decision", "why", "how_to_apply")
# A heading that names the IDs of one of these fields (`### Resolves: F2`) is meant as the
# field; any other (`### Why: background`) is a section heading (note_heading_field).
_IN_HEADING: dict[str, Callable[[str], bool]] = {
    "resolves": lambda value: bool(ids(value, "F")),
    "reverses": lambda value: bool(ids(value, "D")),
}
# A table's header row that gives one of these fields an ID (`| Reverses | D9 |`) is meant as
# the field (reading.table_fields); a header `| Decision | Why |` heads a table.
_IN_TABLE_HEADER = {**_IN_HEADING, "reversed_by": lambda value: bool(ids(value, "D"))}
# The fields a line inside another item or a heading hides: `Reversed by: D5` there is
# still the phrase, which counts anywhere in an entry.
_NESTED = {name: key for name, key in _FIELDS.items() if key != "reversed_by"}
_BLANK = blank_row(LEDGER, "file", "line", "position")
# Across a soft line break too, with the ID in a link's text (`[D5](ledger.md#d5)`), and
# emphasis around or between the words (`_Reversed by_ D5`, `**Reversed** by D5`), as the
# page shows them; then every ID listed after the first
# (`D5, D7`, `D5 and D7`, `[D5](…) and [D7](…)`).
# The words may be hyphenated (`Reversed-by D5`), and the ID in parentheses, behind a `#`,
# in lower case or with a hyphen (`(D5)`, `#D5`, `d5`, `D-5`): the phrase as written.
_ID_AFTER = r"(?:\]\([^()\s]*+\))?+[\s*_`)]*+(?:[,;&/]|(?i:and|or)(?![A-Za-z0-9]))?+[\s*_`\[(#]*+"
_PHRASE_ID = r"[Dd]-?\d+"
_REVERSED_BY_RE = re.compile(
    r"(?<![A-Za-z0-9])(?i:reversed)[*_`~]*+(?:\s++|-)[*_`~]*+(?i:by)(?![A-Za-z0-9])"
    r"[\s:*_`~\[(#]*+"
    rf"({_PHRASE_ID}(?:{_ID_AFTER}{_PHRASE_ID}(?![A-Za-z0-9]))*+)(?![A-Za-z0-9])"
)
_PHRASE_ID_RE = re.compile(r"(?<![A-Za-z0-9])[Dd]-?(\d+)")
# The phrase under a word the schema does not use, as prose or in the heading (`Superseded
# by D9.`, `… was replaced by D9 …`, `(overridden by D9)`): meant as the annotation, so read
# as it and noted. Only with the ID right after `by` (`supersedes D3` stays prose).
_OTHER_PHRASE_RE = re.compile(
    r"(?<![A-Za-z0-9])(?i:superseded|replaced|overrid+en|undone|reverted|revoked)[*_`~]*+(?:\s++|-)"
    r"[*_`~]*+(?i:by)(?![A-Za-z0-9])[\s:*_`~\[(#]*+"
    rf"({_PHRASE_ID}(?:{_ID_AFTER}{_PHRASE_ID}(?![A-Za-z0-9]))*+)(?![A-Za-z0-9])"
)
# A fork closed in words, the ID right after the verb (`(resolves F2)`, `— closes F2`), in an
# entry's heading or brackets: meant as Resolves (`The sender now resolves F1 faster` in
# running prose stays prose).
_FORK_ID = r"[Ff]-?\d+"
# The verb's end: a space, or the field's colon (`(Resolves: F2)`, `· Reverses: D1`, in the
# heading or brackets, where no field is read: until 2026-12-07 it vanished with no note).
_VERB_END = r"[*_`~]*+(?:[ \t]*+[:\uff1a][*_`~]*+[ \t]*+|[ \t]++)"
_RESOLVE_PHRASE_RE = re.compile(
    r"(?<![A-Za-z0-9])(?i:resolves|resolved|closes|closed|settles|settled)"
    + _VERB_END
    + r"[*_`~\[#]*+"
    rf"({_FORK_ID}(?:{_ID_AFTER}{_FORK_ID}(?![A-Za-z0-9]))*+)(?![A-Za-z0-9])"
)
_FORK_ID_RE = re.compile(r"(?<![A-Za-z0-9])[Ff]-?(\d+)")
# Likewise an entry reversed in words (`(reverses D9)`, `— reverts D9`): meant as Reverses.
_REVERSE_PHRASE_RE = re.compile(
    r"(?<![A-Za-z0-9])(?i:reverses|reverts)" + _VERB_END + r"[*_`~\[#]*+"
    rf"({_PHRASE_ID}(?:{_ID_AFTER}{_PHRASE_ID}(?![A-Za-z0-9]))*+)(?![A-Za-z0-9])"
)
# The phrase's words alone, and what may name its entry in the clause after them when it is
# not written `D9` right after: a mark or a space inside the ID (`D 9`, `D–9`, `D#9`), or
# words before it (`decision D9`, `Decision 9`, `the later D9`, `"D9"`).
_PHRASE_WORDS_RE = re.compile(
    r"(?<![A-Za-z0-9])(?i:reversed)[*_`~]*+(?:\s++|-)[*_`~]*+(?i:by)(?![A-Za-z0-9])"
)
_LOOSE_ID_RE = re.compile(
    r"(?<![A-Za-z0-9])(?:[Dd][ \t\-\u2010\u2011\u2013_#]?+|(?i:decision|entry)[ \t]++#?+)"
    r"(\d+)(?![A-Za-z0-9])"
)
_CLAUSE_END_RE = re.compile(r"[.;!?](?=\s|$)|[|)]|\n[ \t]*+\n")
_CLAUSE_CHARS = 200
# What may stand before the phrase when it begins its line, sentence, clause, bracket or table
# cell (an annotation, not prose): quote and list marks, emphasis, an opening bracket.
_LEAD_RE = re.compile(
    r"(?:^|[.!?|;:][ \t]|\n|[(\[])[\s>*_`~(\[+-]*+(?:\d{1,9}[.)][ \t]++)?+[*_`~(\[]*+$"
)
# The phrase written as a field (`Reversed by: …`, `Reversed by — …`, `**Reversed by** …`,
# a table cell of its own): its field reading notes a value that names no D#.
_AS_FIELD_RE = re.compile(r"[*_]++(?=\s|$)|[*_`~ \t]*+(?:[:=|\u2014\u2013\u2192]|->|-(?:\s|$))")
_FIELD_COLON_RE = re.compile(r"[*_`~ \t]*+[:\uff1a]")
# The phrase as the schema writes it, its words apart and the ID right after: `- Reversed-by:
# D5` or `- Reversed by — D5` is read as the phrase and is still a malformed field.
_SPACED_PHRASE_RE = re.compile(
    r"(?<![A-Za-z0-9])(?i:reversed)[*_`~]*+\s++[*_`~]*+(?i:by)(?![A-Za-z0-9])[\s:*_`~\[]*+D\d"
)
# The fields a space alone may separate from their value when the value names an ID
# (`- Resolves F1`, not `- Resolves the tension in F1`), a space or a mark inside it too
# (`- Resolves F 1`, `- Reverses D-9`: meant as the field, whose value then names no ID);
# `Reversed by D5` is the phrase, read wherever it stands.
_SPACED = {
    "resolves": re.compile(r"[*_`\[(]*+F[ \t#-]?+\d+(?![A-Za-z0-9])").match,
    "reverses": re.compile(r"[*_`\[(]*+D[ \t#-]?+\d+(?![A-Za-z0-9])").match,
}
# Resolves values that say, on purpose, that an entry closes no fork.
_NOTHING = {"", "none", "nothing", "n/a", "-", "—", "–"}
# `none` with commentary after it (`none.`, `(none)`, `None — a policy decision`): text after a
# value is commentary (§3.1), so these close no fork on purpose, as `none` does.
_NOTHING_RE = re.compile(r"(?i)[(\[]?(?:none|nothing|n/a)(?![\w/])")


def _says_nothing(value: str) -> bool:
    said = bare(value).lower()
    return said in _NOTHING or _NOTHING_RE.match(said) is not None


# A range of fork IDs (`F3–F5`, `F3..F5`, `F3 to F5`, `F3-5`): IDs are read as words, so only
# its two ends would be, and a fork between them left open would pass BS-FORK-02.
_FORK_RANGE_RE = re.compile(
    r"(?<![A-Za-z0-9])F[ \t#-]?\d+[ \t]*+(?:[‒–—-]|\.\.\.?|…|(?i:to|through|thru)(?=[ \t]))[ \t]*+"
    r"(?:F[ \t#-]?\d+(?![A-Za-z0-9])|\d{1,3}(?![\d\-:/.A-Za-z]))"
)


def parse_ledger(lines: list[str], rec: Records) -> None:
    entry: dict[str, Any] | None = None
    resolved: set[str] = set()  # the forks the entry's Resolves lines named so far
    position = 0
    doc = parse(lines)
    unclosed_block(doc, rec, FILE, RULE)
    blocks = split_rows(doc.blocks)
    # Entries in HTML blocks are not read: each is a parse issue and ends the entry above.
    ends = hidden_entries(doc, lines, rec, FILE, "D", RULE, _weigh) if doc.html else []
    note_coded_entries(doc, lines, rec, FILE, "D")
    note_html_fields(rec, FILE, doc, lines, _FIELDS, _rule_of, ends)
    untaken: list[tuple[int, str]] = []  # table rows that name an entry, maybe meant as one
    linked: list[tuple[int, str]] = []  # table-of-contents lines naming an entry
    shown_html = _HtmlPhrases(doc, lines, ends, rec)
    titled: list[tuple[dict[str, Any], int, str]] = []  # each entry with its heading
    for index, block in enumerate(blocks):
        shown_html.read(entry, first_line(block))
        if ends and passed(ends, block):
            entry = None
        block = stray_table(as_fields(block, _FIELDS))
        if isinstance(block, Table):
            entry = _table(block, blocks, index, entry, rec, untaken)
            continue
        if isinstance(block, Heading):
            below = line_below(blocks, index, _FIELDS)
            note_heading_field(rec, FILE, block, _NESTED, _IN_HEADING, _rule_of, below)
            meant = _meant(block := seen_heading(block))  # `## Ｄ3 — …` is entry D3
            if meant is not None:
                position += 1
                entry, resolved = _heading(block, *meant, position, rec), set()
            elif block.level <= 2:
                entry = None  # a section heading ends the entry; a subheading is inside it
            if entry is not None:
                _phrase(entry, [(block.line, block.text)], rec)
                titled.append((entry, block.line, block.text))
            continue
        meant_line = entry_line(block, "D")
        linked += linked_entries(block, "D")
        above = None
        if meant_line is not None and _weigh(meant_line, blocks, index):
            above, entry = _ends(entry, meant_line, rec), None
        note_nested(rec, FILE, block, _NESTED, _rule_of)
        if entry is None:
            outside_entry(rec, FILE, fields(block, _FIELDS), "D", _rule_of, above)
            continue
        for key, value, line in _entry_fields(blocks, index, block, rec, doc, lines):
            _field(entry, key, value, line, rec, resolved)
        # The phrase anywhere in the block too: every annotation counts (a field it repeats
        # adds nothing).
        _phrase(entry, _lines(block), rec)
    shown_html.read(entry, len(lines) + 1)
    for named_entry, line, text in titled:
        # Read once the entry's own Resolves fields are: a heading that repeats one is no issue.
        _resolve_phrases(named_entry, [(line, text)], shown(text), rec, heading=True)
    if untaken or linked:
        ids = {row["decision_id"] for row in rec.of("ledger")}
        entries_in_tables_only(rec, FILE, untaken, ids, "D", RULE, linked)


def _table(
    block: Table,
    blocks: list[Block],
    index: int,
    entry: dict[str, Any] | None,
    rec: Records,
    untaken: list[tuple[int, str]],
) -> dict[str, Any] | None:
    """Read a table: its cells' fields are noted, the phrase counts in its cells, and rows
    meant as entries end the entry above (None)."""
    note_table_fields(rec, FILE, block, _FIELDS, _rule_of, _IN_TABLE_HEADER)
    if entry is not None:
        # `Reversed by D5` counts anywhere in an entry, a table's cell too.
        rows = [(block.line, block.header), *block.rows]
        _phrase(entry, [(line, " | ".join(cells)) for line, cells in rows], rec)
    if table_rows(block, blocks, index, rec, FILE, "D", RULE, _weigh, _FIELDS, _rule_of, untaken):
        return None
    return entry


def _entry_fields(
    blocks: list[Block], index: int, block: Block, rec: Records, doc: Document, lines: list[str]
) -> list[tuple[str, str, int]]:
    """(key, value, line) of each field of an entry's block (blocks[index], as read), a text
    field with nothing after its name taking the code block inside its item (a fence under
    `- Why:`)."""
    found = fields(block, _FIELDS) + _near(block, rec, line_below(blocks, index, _FIELDS))
    read = []
    for key, value, line in found:
        # A Resolves naming an F# (most of them) is written: no look below it.
        empty = (key in _TEXT or (key == "resolves" and "F" not in value)) and left_to_fill(value)
        if empty:
            value = code_value(doc, lines, block, line) or value
        if empty and key == "resolves" and left_to_fill(value):
            names = ("Resolves", _FIELDS)
            below = taken_below(rec, FILE, blocks, index, line, names, "BS-FORK-02", _names_fork)
            value = below or value
        read.append((key, value, line))
    return read


def _ends(
    entry: dict[str, Any] | None, meant: tuple[int, str, str, bool], rec: Records
) -> tuple[str, int] | None:
    """A line meant as an entry but no heading: not read, it ends the entry above (its
    fields are not that entry's), and BS-LEDGER-01 fails. The entry it ends, and its line."""
    not_an_entry_heading(rec, FILE, meant[0], meant[1], "D", RULE)
    return None if entry is None else (entry["decision_id"] or "the entry above", meant[0])


def _names_fork(value: str) -> bool:
    return bool(ids(value, "F") or misspelt_ids(value, "F"))


def _near(block: Block, rec: Records, after: str) -> list[tuple[str, str, int]]:
    """(key, value, line) of each line meant as a field but not written `Name: value`
    (`- Resolves F1`, `- Reverses — D3`, `- Resolved: F2`): read, and a parse issue that
    fails the rule that reads the field."""
    found = []
    misnamed = _misnamed(block)
    for near in [*near_fields(block, _FIELDS, _SPACED, after), *misnamed]:
        if near.key == "reversed_by" and _SPACED_PHRASE_RE.search(near.text):
            continue  # the phrase `Reversed by D#`, which counts anywhere in an entry
        note_near(rec, FILE, near, _rule_of(near.key, near.value))
        found.append((near.key, near.value, near.line))
    return found


# A list item or a plain line named by another form of Resolves or Reverses (`Resolved: F2`,
# `Resolves forks: F2`, `Resolve F2`, `Resolution: F2`, `Reversal of: D1`, `Reverts: D1`,
# `Reverted by: D9`), or by a word the schema does not use for them (`Closes: F1`, `Fixes:
# F1`, `Settles: F1`, `Answers: F1`; `Supersedes: D9`, `Replaces: D9`, `Overrides: D9`,
# `Superseded by: D9`, `Undone by: D9`) before the ID that field takes: meant as that field,
# which a reader would otherwise drop without a word (spec §3.1, fail closed). Without a
# separator only IDs may follow (`Resolving F2 needs data` is prose); a pointer (`See also:
# F1`, `Related: F1`) is no such word.
_RESOLVE_WORDS = ("resol", "clos", "fix", "settl", "answer", "decide", "address", "fork")
_OTHER_NAME = (
    r"(?:(?i:resolv|resolu|revers|revert)[A-Za-z]*+"
    # The words the schema does not use, whole (`Undocumented` is not `Undo`).
    r"|(?i:close[sd]?|closing|fix(?:e[sd])?|settle[sd]?|answer(?:s|ed)?|supersede[sd]?"
    r"|replace[sd]?|overrid(?:e[sn]?|den)|overrode|undo(?:es|ne)?|undid|revoke[sd]?"
    r"|decide[sd]|address(?:es|ed))(?![A-Za-z])"
    # The noun first (`Forks resolved: F1`, `Fork closed: F1`).
    r"|(?i:forks?)[ \t]++(?i:resolved|closed|settled|answered|decided|addressed)(?![A-Za-z]))"
    # Two names for one field (`Resolves/closes: F1`).
    r"(?:/(?i:resolv|clos|settl|answer|revers|revert)[A-Za-z]*+)?+"
    r"(?:[ \t]++(?i:forks?|decisions?|entr(?:y|ies)|of|in|by)(?:\((?i:s|ies)\))?+)?+"
)
# The names among them that say which entry reversed this one (`Reversed: D5`, `Undone by:
# D9`): the `Reversed by` annotation; the others say which entry this one reverses.
_REVERSED_BY_NAME_RE = re.compile(
    r"(?:reversed|reverted|superseded|replaced|overridden|undone|revoked)(?: by)?|.* by"
)
# The ID may stand behind a mark or a word, as the field's own value is read (`#F2`, `(F2)`,
# `"F2"`, `fork F2`); the separator inside the name's emphasis too (`**Resolved:** F2`).
# A word before the name that qualifies it (`Also resolves: F2`, `Partially reverses: D1`): the
# field all the same, which the field reader, matching names whole, dropped without a word.
_QUALIFIER = r"(?i:also|partly|partially|additionally|further|now)[ \t]++"
_QUALIFIER_RE = re.compile(_QUALIFIER)
_MISNAMED_RE = re.compile(
    rf"[*_`]*+(?P<name>(?:{_QUALIFIER})?+(?:{_OTHER_NAME}))[*_`]*+"
    r"[ \t]*+(?P<sep>[:=\u2014\u2013-]?)[*_`]*+[ \t]*+"
    r"(?P<value>[*_`\[(#\"'\u201c\u2018]*+(?:(?i:forks?|decisions?)[ \t]++)?+"
    r"(?P<letter>[FD])\d+.*)"
)
_IDS_ONLY_RE = re.compile(
    r"(?:[*_`\[\](#\"'\u201c\u2018]*+[FD]\d+[*_`\])\"'\u201d\u2019]*+"
    r"(?:[ \t]*+(?:,|&|and)[ \t]*+)?)++"
)


def _misnamed(block: Block) -> list[NearField]:
    """Each line meant as Resolves, Reverses or Reversed by under another form of its name:
    a list item's first line, or a paragraph's line whose name is capitalised."""
    found = []
    for line, text in own_lines(block):
        # As the page shows it: `~~F4~~ F2` names F2, `Resolved:<br>F2` breaks before it.
        seen = BREAK_RE.sub(" ", shown(text)) if "~" in text or "<" in text else text
        m = _MISNAMED_RE.fullmatch(seen.strip())
        if m is None or (isinstance(block, Paragraph) and not m["name"][0].isupper()):
            continue
        key = _misnamed_key(m, text)
        if key is not None:
            found.append(NearField(key, m["value"], line, text, "mark"))
    return found


def _misnamed_key(m: re.Match[str], text: str) -> str | None:
    """The field a line _MISNAMED_RE matched is meant as; None when it is none."""
    name = " ".join(m["name"].lower().split())
    qualified = _QUALIFIER_RE.match(name)
    if qualified is not None:
        name = name[qualified.end() :]
    # `Reversed by D5` is the phrase, read wherever it stands; `Reversed: D5` lacks its `by`.
    if (name in _FIELDS and qualified is None) or _SPACED_PHRASE_RE.match(text.strip(" \t*_`")):
        return None
    if not m["sep"] and not _IDS_ONLY_RE.fullmatch(m["value"].strip()):
        return None
    key = "resolves" if name.startswith(_RESOLVE_WORDS) else "reverses"
    if key == "reverses" and _REVERSED_BY_NAME_RE.fullmatch(name):
        key = "reversed_by"  # `Reversed: D5` says which entry reversed this one
    return key if m["letter"] == ("F" if key == "resolves" else "D") else None


def _rule_of(key: str, _value: str) -> str:
    """The rule a ledger field is read for: Resolves closes forks (BS-FORK-02)."""
    return "BS-FORK-02" if key == "resolves" else RULE


def _weigh(meant: tuple[int, str, str, bool], blocks: list[Block], index: int) -> bool:
    """Whether a line that may be meant as an entry (entry_line's reading of blocks[index])
    is one: its shape says so, or a dash begins its title and the entry's fields follow."""
    return meant[3] or titled_entry(meant[2], blocks, index, _FIELDS)


def _meant(block: Heading) -> tuple[str | None, str, bool] | None:
    """(digits, rest, whether the ID is written as one) of the entry a heading begins, None
    when it begins none."""
    found, digits, rest = entry_id(block.text, "D")
    if found:
        return digits, rest, True
    meant = meant_entry(block.text, "D", heading=True)
    if meant is None:
        late = late_entry_id(block.text, "D")  # `## Decision D2 — …`
        return None if late is None else (late[0], late[1], False)
    return meant[0], meant[1], False


def _heading(
    block: Heading, digits: str | None, rest: str, written: bool, position: int, rec: Records
) -> dict[str, Any]:
    entry = dict(_BLANK)
    line = block.line
    if digits is not None:
        entry["decision_id"] = canonical_id("D", digits)
        # Ascending order cannot be checked without the number: BS-LEDGER-01 fails.
        entry["decision_num"] = number(rec, FILE, line, digits, "ledger entry", RULE)
    else:
        message = f"ledger heading has no D# ID: {block.text[:120]}"
        rec.issue(FILE, line, "bad-ledger-heading", message)
    entry["title"] = bare(decoded_separator(rest).lstrip(ENTRY_SEPARATORS))
    entry["heading_ok"] = digits is not None
    if not written:
        # `## [D5] — …` or `## D5a — …`: meant as an entry, counted, and the rule fails.
        not_an_entry_heading(rec, FILE, line, block.text, "D", RULE)
    elif block.level != 2:
        # Meant as an entry, at the wrong level: counted, and BS-LEDGER-01 fails.
        message = f"ledger heading is level {block.level}; an entry is `## D# — title`"
        rec.issue(FILE, line, "entry-heading-level", message, RULE)
    return rec.add("ledger", file=FILE, line=line, position=position, **entry)


def _field(
    entry: dict[str, Any], key: str, value: str, line: int, rec: Records, resolved: set[str]
) -> None:
    name = entry["decision_id"] or "entry"
    if key in _TEXT:
        if entry[key] is None:
            entry[key] = "" if left_to_fill(value) else value  # as an empty Closes when
            entry[f"{key}_line"] = line
        else:
            label = key.replace("_", " ").capitalize()
            repeated(rec, FILE, line, label, entry[key], value, "BS-LEDGER-01")
    elif key == "resolves":
        # Every Resolves line of an entry counts: a second one adds its forks.
        raw = entry["resolves_raw"]
        entry["resolves_raw"] = value if raw is None else f"{raw}; {value}"
        forks = [f for f in ids(value, "F") if f not in resolved]
        resolved.update(forks)
        for fork_id in forks:
            rec.add(
                "ledger_resolves",
                file=FILE,
                line=line,
                decision_id=entry["decision_id"],
                fork_id=fork_id,
            )
        if not forks and not _says_nothing(value):
            message = f"{name} Resolves '{value[:80]}' names no F#"
            rec.issue(FILE, line, "no-fork-id", message, "BS-FORK-02")
            return
        _misspelt(rec, line, f"{name} Resolves", value, "F", "BS-FORK-02")
        if span := _FORK_RANGE_RE.search(value):
            message = (
                f"{name} Resolves '{span[0]}', a range: only the forks it names are read, not "
                "those between (name each: Resolves: F3, F4, F5)"
            )
            rec.issue(FILE, line, "malformed-field", message, "BS-FORK-02")
    else:
        # Reverses or Reversed by: every field counts (an entry amended twice carries two
        # annotations), and every D# each names must be an entry (BS-LEDGER-01).
        found = ids(value, "D")
        label = "Reverses" if key == "reverses" else "Reversed by"
        if found:
            _annotation(entry, key, found, line)
            _misspelt(rec, line, f"{name} {label}", value, "D", "BS-LEDGER-01")
        else:
            message = f"{name} {label} '{value[:80]}' names no D#"
            rec.issue(FILE, line, "no-decision-id", message, "BS-LEDGER-01")


def _misspelt(rec: Records, line: int, field: str, value: str, letter: str, rule: str) -> None:
    """A parse issue for each ID a field's list names misspelt: the IDs beside it are read,
    that one is not, and the rule that needs the field fails."""
    for written, meant in misspelt_ids(value, letter):
        message = f"{field} '{written}', which is no {letter}#: {meant} is not read (write {meant})"
        rec.issue(FILE, line, "malformed-field", message, rule)


def _phrase(entry: dict[str, Any], lines: list[tuple[int, str]], rec: Records) -> None:
    """`Reversed by D{n}` anywhere in the entry (a field or prose): every D# each phrase
    lists counts, with the line its phrase begins on. The lines are read as one text, so a
    phrase may wrap onto the next line, and as the page shows them (`~~D5~~` names no
    entry). A phrase that begins its line or sentence and names no D# is a parse issue."""
    if not lines:
        return
    text = shown(lines[0][1]) if len(lines) == 1 else shown("\n".join(t for _, t in lines))
    if "<" in text:
        # Inline HTML as the page shows it: `Reversed by <a href="#d9">D9</a>`, `<code>D9`.
        text = inline_text(BREAK_RE.sub(" ", text))
    if "&" in text and (seen := decoded(text)).count("\n") == text.count("\n"):
        text = seen  # `Reversed&nbsp;by D9`, as the page shows it (lines kept where they are)
    # A zero-width space inside the phrase, or its ID typed fullwidth, shows the phrase.
    text = seen_chars(text)
    if " by" in text or " BY" in text or " By" in text or "-by" in text or "-By" in text:
        _other_phrases(entry, lines, text, rec)
    if "lose" in text or "esolve" in text or "ettle" in text or "evers" in text or "evert" in text:
        _resolve_phrases(entry, lines, text, rec)
    if "versed" in text or "VERSED" in text:
        row, counted = 0, 0  # lines before the match, counted once across all matches
        for m in _PHRASE_WORDS_RE.finditer(text):
            row += text.count("\n", counted, m.start())
            counted = m.start()
            found, listed_to = _phrase_ids(text, m)
            if found:
                _annotation(entry, "reversed_by", found, lines[row][0])
                if listed_to is not None:
                    _misspelt_after(entry, text, m, listed_to, lines[row][0], rec)
            elif _leads(text, m):
                name = entry["decision_id"] or "entry"
                said = text[m.start() : m.start() + 80].split("\n", 1)[0]
                message = f"{name} '{said}' names no D#: a reversal is `Reversed by D#`"
                rec.issue(FILE, lines[row][0], "no-decision-id", message, RULE)


_LINK_TARGET_RE = re.compile(r"\]\([^()\n]*+\)")


def _misspelt_after(
    entry: dict[str, Any], text: str, words: re.Match[str], listed_to: int, line: int, rec: Records
) -> None:
    """A parse issue for each D# misspelt in the rest of the phrase's clause, past the IDs it
    lists, which end at `listed_to` (`Reversed by D5 and D 9`: D9 is not read). The field
    `Reversed by: …` is read as a field, whose reading notes its own value."""
    if _FIELD_COLON_RE.match(text, words.end()):
        return
    # From the character before the clause: a link's target is not shown (`Reversed by
    # [D3](#d3)`: `d3` is no misspelt ID; found by a hunt), and the clause begins after its `]`.
    start = max(listed_to - 1, 0)
    window = text[start : listed_to + _CLAUSE_CHARS]
    if "](" in window:
        window = _LINK_TARGET_RE.sub(lambda m: "]" + " " * (len(m[0]) - 1), window)
    clause = window[listed_to - start :]
    if (end := _CLAUSE_END_RE.search(clause)) is not None:
        clause = clause[: end.start()]
    _misspelt(rec, line, f"{entry['decision_id'] or 'entry'} Reversed by", clause, "D", RULE)


def _other_phrases(
    entry: dict[str, Any], lines: list[tuple[int, str]], text: str, rec: Records
) -> None:
    """The phrase under another word (`Superseded by D9`) in `text`, the lines' text as the
    page shows it: read as `Reversed by`, with a malformed-field note on the line it begins
    on, unless that line's field reading already noted it (`- Superseded by: D9`)."""
    rows = Rows(text)
    for m in _OTHER_PHRASE_RE.finditer(text):
        line = lines[rows.of(m.start())][0]
        found = ids(_PHRASE_ID_RE.sub(r"D\1", m[1]), "D")
        _annotation(entry, "reversed_by", found, line)
        noted = rec.of("parse_issues")
        if any(i["line"] == line and i["file"] == FILE for i in noted[-8:]):
            continue
        said = m[0][:80]
        message = (
            f"'{said}' is meant as a 'Reversed by' annotation but is not written "
            f"'Reversed by D#' (taken as '{', '.join(found)}')"
        )
        rec.issue(FILE, line, "malformed-field", message, RULE)


def _resolve_phrases(
    entry: dict[str, Any],
    lines: list[tuple[int, str]],
    text: str,
    rec: Records,
    heading: bool = False,
) -> None:
    """A fork closed in words (`resolves F2`) in the entry's heading, or in brackets in its
    prose (`(resolves F2)`): read as Resolves, with a malformed-field note that fails
    BS-FORK-02, unless a Resolves field of the entry already names the fork."""
    if lines[0][0] == entry["line"] and not heading:
        return  # the heading is read after the entry's fields (parse_ledger)
    _reverse_phrases(entry, lines, text, rec, heading)
    for line, phrase, named in _in_words(
        _RESOLVE_PHRASE_RE, _FORK_ID_RE, "F", lines, text, heading
    ):
        known = set(ids(entry["resolves_raw"] or "", "F"))
        if not set(named) - known:
            continue
        _field(entry, "resolves", ", ".join(named), line, rec, known)
        message = _meant_as(phrase, "Resolves", "F", named)
        rec.issue(FILE, line, "malformed-field", message, "BS-FORK-02")


def _reverse_phrases(
    entry: dict[str, Any], lines: list[tuple[int, str]], text: str, rec: Records, heading: bool
) -> None:
    """An entry reversed in words (`reverses D9`) in the heading or in brackets: read as
    Reverses, with a malformed-field note that fails BS-LEDGER-01, unless a Reverses field
    of the entry already names it (found by a hunt: it passed naming no entry)."""
    for line, phrase, named in _in_words(
        _REVERSE_PHRASE_RE, _PHRASE_ID_RE, "D", lines, text, heading
    ):
        if not set(named) - set(entry["reverses_ids"] or ()):
            continue
        _annotation(entry, "reverses", named, line)
        rec.issue(FILE, line, "malformed-field", _meant_as(phrase, "Reverses", "D", named), RULE)


def _in_words(
    phrase: re.Pattern[str],
    id_re: re.Pattern[str],
    letter: str,
    lines: list[tuple[int, str]],
    text: str,
    heading: bool,
) -> Iterator[tuple[int, str, list[str]]]:
    """(line, words, IDs named) of each phrase (`resolves F2`) written in the heading, or in
    brackets in the prose: running prose (`the sender now resolves F1 faster`) stays prose."""
    rows = Rows(text)
    for m in phrase.finditer(text):
        if not heading and not _bracketed(text, m.start()):
            continue
        line = lines[rows.of(m.start())][0]
        yield line, m[0], ids(id_re.sub(letter + r"\1", m[1]), letter)


def _bracketed(text: str, at: int) -> bool:
    """Whether `(` or `[` comes before offset at, spaces and emphasis between (looked back
    from at, not stripped from a copy of all before it: a long entry stays linear)."""
    while at > 0 and text[at - 1] in " \t*_`~":
        at -= 1
    return at > 0 and text[at - 1] in "(["


def _meant_as(words: str, field: str, letter: str, named: list[str]) -> str:
    if ":" in words or "\uff1a" in words:
        return (
            f"'{words[:80]}' is written in a heading or brackets, not as a field of its own "
            f"line (taken as '{', '.join(named)}')"
        )
    return (
        f"'{words[:80]}' is meant as a '{field}:' field but is not written "
        f"'{field}: {letter}#' (taken as '{', '.join(named)}')"
    )


def _leads(text: str, words: re.Match[str]) -> bool:
    """Whether the phrase is written as an annotation: capitalised at the start of its line,
    sentence or cell (a wrapped line of prose may begin `reversed by the team`), and not as a
    field, whose reading notes its value."""
    start = words.start()
    if text[start] != "R" or _AS_FIELD_RE.match(text, words.end()):
        return False
    # A lead match is the marks right before the phrase and the character before them:
    # searching from the text's start for every phrase was quadratic (found by a review).
    at = start
    while at > 0 and _after_lead(text[at - 1]):
        at -= 1
    return _LEAD_RE.search(text, max(0, at - 1), start) is not None


def _after_lead(char: str) -> bool:
    r"""Whether char may stand between a lead and the phrase in _LEAD_RE (`\s` and `\d` are
    Unicode's there, as str.isspace and str.isdecimal)."""
    return char.isspace() or char.isdecimal() or char in ">*_`~([+-.)"


def _phrase_ids(text: str, words: re.Match[str]) -> tuple[list[str], int | None]:
    """The D#s the phrase whose words `words` matched names: the IDs right after it (and
    where their list ends), or else those written loosely in the rest of its clause (None)."""
    strict = _REVERSED_BY_RE.match(text, words.start())
    if strict is not None:
        return ids(_PHRASE_ID_RE.sub(r"D\1", strict[1]), "D"), strict.end()
    start = words.end()
    clause = text[start : start + _CLAUSE_CHARS]
    if (end := _CLAUSE_END_RE.search(clause)) is not None:
        clause = clause[: end.start()]
    return list(dict.fromkeys(canonical_id("D", d) for d in _LOOSE_ID_RE.findall(clause))), None


class _HtmlPhrases:
    """The shown HTML blocks of the file (`<p>Reversed by D9</p>`), whose text the page shows:
    the phrase counts anywhere in an entry, so each block's is read into the entry it stands
    in. A block that hides an entry heading is that entry's, which is not read."""

    def __init__(self, doc: Any, lines: list[str], hidden: list[int], rec: Records) -> None:
        self.rec = rec
        inner = html_text(doc, lines) if doc.html else None
        self.inner = inner or []
        headings = Spans((line, line + 1) for line in hidden)
        self.blocks = [
            (first, last)
            for first, last in (doc.html if inner else [])
            if not headings.meets(first, last + 1)
        ]

    def read(self, entry: dict[str, Any] | None, before: int) -> None:
        """Read the blocks that begin before line `before` into `entry` (None: no entry)."""
        while self.blocks and self.blocks[0][0] < before:
            first, last = self.blocks.pop(0)
            if entry is not None:
                _phrase(entry, [(n, self.inner[n - 1]) for n in range(first, last + 1)], self.rec)


def _annotation(entry: dict[str, Any], key: str, found: list[str], line: int) -> None:
    """Add the D#s a `Reversed by` or `Reverses` annotation names (key `reversed_by` or
    `reverses`) to the entry's, each with the line that names it first; the first
    annotation gives the scalar columns (its first D#, its line)."""
    listed, lines = entry[f"{key}_ids"], entry[f"{key}_lines"]
    if listed is None:
        entry[key], entry[f"{key}_line"] = found[0], line
        entry[f"{key}_ids"], entry[f"{key}_lines"] = listed, lines = [], []
    for decision_id in found:
        if decision_id not in listed:
            listed.append(decision_id)
            lines.append(line)


def _lines(block: Block) -> list[tuple[int, str]]:
    if isinstance(block, Item):
        return block.all_lines() if block.parts else block.lines
    if isinstance(block, Paragraph):
        return block.lines
    return []
