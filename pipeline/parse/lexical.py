"""The schema's shared lexical rules: decoding, dashes, arrows, field bullets, timestamps."""

from __future__ import annotations

import html
import re
import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from operator import methodcaller

from pipeline.parse.records import Records

MAX_FILE_BYTES = 8 * 1024 * 1024
# The names of Markdown documents (BS-HARVEST-01 reads every one for links into a session).
# MDX is Markdown with JSX: its links read as Markdown links (and a JSX <a href> as HTML).
MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx", ".mdown", ".mkd", ".mkdn", ".mdwn")


def is_markdown(path: str) -> bool:
    return path.lower().endswith(MARKDOWN_SUFFIXES)


# Lines longer than this are not matched against the field patterns (they are prose).
MAX_LINE_CHARS = 20_000

# An ID, then an em dash, an en dash or a spaced hyphen, then a title. Atomic: the
# alternatives never overlap, and giving back its trailing spaces to the title that
# follows could only repeat work (quadratic in the spaces when the heading fails).
DASH = r"(?>\s*[—–]\s*|\s+-\s+)"
# The arrow alone; split_arrow trims the spaces around it (a pattern with a leading
# `\s*` retried at every start of a long run of spaces is quadratic).
ARROW_RE = re.compile(r"→|->")
MAX_FIELD_NAME = 60
# The largest number the tables' int32 columns (fork_num, turn_num, edits, …) hold.
INT32_MAX = 2**31 - 1

# Spaces, and the emphasis and code-span marks stripped around names and tokens.
# A no-break space (pasted from a rendered page) is a space here too.
_MARKS = " \t\xa0*_`"
# A value's first word; emphasis closing right after it (`_stopping_ (since S3)`) ends it.
_WORD_RE = re.compile(r"[A-Za-z]++(?=[*_]*+(?![\w-]))")
# An ID as a whole word: no letter or digit on either side, so emphasis (`_F4_`, `**F4**`)
# wraps it as any other mark does (`\b` would count `_` as part of the word).
WHOLE_ID = r"(?<![A-Za-z0-9]){}\d+(?![A-Za-z0-9])"
_ID_RES = {letter: re.compile(WHOLE_ID.format(letter)) for letter in "FDST"}
# An ID misspelt but recognisable, as a whole word: a mark or a space between the letter and
# the number (`F-4`, `F#4`, `F 4`), the letter in lower case (`f4`), or the entry's word
# (`Fork 4`, `decision #2`, `sync 4`).
_ENTRY_WORDS = {"F": "fork", "D": "decision", "S": "sync"}
# An `s` after an apostrophe ends a possessive (`the twin's 3 forks`), not a sync's ID.
_POSSESSIVE = "'\u2019"
_MISSPELT_ID_RES = {
    letter: re.compile(
        rf"(?<![A-Za-z0-9{_POSSESSIVE if letter == 'S' else ''}])"
        rf"(?:(?i:{letter})(?:[ \t]*+[-#._][ \t]*+|[ \t]++)|{letter.lower()}"
        rf"|(?i:{word})[ \t]*+#?[ \t]*+)[0-9]++(?![A-Za-z0-9])"
    )
    for letter, word in _ENTRY_WORDS.items()
}
# A timestamp-shaped run anywhere in a line; parse_timestamp decides whether it is one. What
# is glued to an offset is kept with it, so `12:00-12:30Z` (a range) is no time at -12:30.
_TS_FIND_RE = re.compile(
    r"(?<!\d)\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d++)?+)?+"
    r"(?:[ \t]*+(?:[Zz]|[+\u2212-]\d{2}(?::?\d{2})?+[-:0-9A-Za-z]*+))?+"
)
_TS_RE = re.compile(
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?"
    r"[ \t]*(?:[Zz]|[+\u2212-]\d{2}(?::?\d{2})?)"
)
_DATE_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_DATE_AT_RE = re.compile(r"\d{4}-\d{2}-\d{2}(?![\d:T])")
# The offsets of the world's zones (UTC-12:00 to UTC+14:00).
_LEAST_OFFSET, _MOST_OFFSET = timedelta(hours=-12), timedelta(hours=14)


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
        message = "file holds NUL bytes: not UTF-8 text (UTF-16?); the rules that read it fail"
        rec.issue(file, where, "binary", message)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.split("\n")


def _line_at(data: bytes, offset: int) -> int:
    """The 1-based line (LF, CRLF or CR ends) that holds byte `offset`."""
    head = data[:offset]
    return head.count(b"\n") + head.count(b"\r") - head.count(b"\r\n") + 1


# Characters that show nothing (zero-width space and joiners, word joiner, a BOM inside the
# file, a soft hyphen, the direction marks and isolates, a form feed or vertical tab): before
# `## F3` they make the line a paragraph to CommonMark, and the entry vanished.
INVISIBLE = (
    "\u200b\u200c\u200d\u2060\ufeff\u00ad\u200e\u200f\u061c\u2066\u2067\u2068\u2069"
    "\u202a\u202b\u202c\u202d\u202e\x0b\x0c"
)
# Unicode space separators other than the plain space: a page shows each as a space.
UNICODE_SPACES = "\u00a0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u202f\u205f\u3000"
# Characters that render as nothing though Unicode counts them as letters or symbols: the
# Hangul fillers and the blank Braille pattern.
FILLERS = "\u115f\u1160\u2800\u3164\uffa0"
_SPACES_RE = re.compile(f"[{UNICODE_SPACES}]")
# What may make a field name differ from the text a page shows for it; a first look.
_ODD_NAME_RE = re.compile(f"[{INVISIBLE}{UNICODE_SPACES}\uff1a<&\\\\]")
# Inline HTML a name may be wrapped in, shown as its text: emphasis, and the tags that only
# style it (`<u>`, `<mark>`, `<span class=…>`, `<code>`, `<kbd>`, `<sub>`, `<small>`).
_INLINE_TAGS = (
    r"(?i:b|strong|em|i|u|mark|span|ins|kbd|code|small|cite|var|samp|abbr|sub|sup|big|tt|font)"
)
# A name, its colon (fullwidth as a CJK input method types it, or `\\:`, an escaped one the
# page shows as a colon), and an inline tag closing right after it (`<b>Name:</b>`).
_SHOWN_NAME_RE = re.compile(
    r"((?:[^:\uff1a\\]|\\[^:\uff1a])*+)\\?[:\uff1a]"
    rf"((?:[ \t]*+</{_INLINE_TAGS}>)?+)"
)
_EMPHASIS_TAG_RE = re.compile(rf"</?{_INLINE_TAGS}(?:[ \t][^<>]*+)?>")
# A backslash before ASCII punctuation: CommonMark shows the punctuation alone.
ESCAPED_RE = re.compile(r"\\([!-/:-@\[-`{-~])")
# A list marker (spaces before it allowed) and the space or tab after it.
LIST_MARKER_RE = re.compile(r"[ \t]*+(?:[-*+]|[0-9]{1,9}[.)])[ \t]++")


def shown_name(text: str) -> str:
    """A line with its field name as a rendered page shows it (spec §3.1, names are
    lenient): characters that show nothing dropped (and a list marker a BOM or zero-width
    space kept CommonMark from taking as one), Unicode spaces read as spaces, a fullwidth
    or backslash-escaped colon as the colon, character references decoded (`&#58;` is the
    colon, `&nbsp;` a space), and `<b>`, `<strong>`, `<em>`, `<i>` tags as emphasis marks.
    The value after the colon is left as written. A line with no colon (`Resolves F1`, a
    field written without one) has its first words so read, as far as a name reaches.
    Most lines hold none of these characters and come back as they are."""
    head = text[: MAX_FIELD_NAME + 16]
    odd = "<" in head or "\\" in head or "&" in head or "\x0b" in head or "\x0c" in head
    if head.isascii() and not odd:
        return text  # the common case, told by a few scans in C
    if _ODD_NAME_RE.search(head) is None:
        return text
    if "&" in head:
        text = _decoded_name(text)
    m = _SHOWN_NAME_RE.match(text, 0, MAX_FIELD_NAME + 40)
    if m is None:
        end = MAX_FIELD_NAME + 16
        return _shown_words(text[:end], text[0] in INVISIBLE) + text[end:]
    name = _shown_words(m[1], text[0] in INVISIBLE)
    return f"{name}:{'*' if m[2] else ''}{text[m.end() :]}"


def _shown_words(name: str, invisible_first: bool) -> str:
    """A field name's words as the page shows them (see shown_name)."""
    if invisible_first:
        name = name.lstrip(INVISIBLE)
        name = past_list_marker(name)
    name = name.translate(_DROPPED)
    name = _SPACES_RE.sub(" ", name)
    if "<" in name:
        name = _EMPHASIS_TAG_RE.sub("*", name)
    if "\\" in name:
        name = ESCAPED_RE.sub(r"\1", name)
    return name


def _decoded_name(text: str) -> str:
    """A line with the character references of its field name decoded, up to the first
    colon, written or referenced (`Resolves&#58; F1`, `Raised&nbsp;by: x`); the value after
    it stays as written. A name in a code span shows its references as written."""
    end = MAX_FIELD_NAME + 40
    colon = text.find(":", 0, end)
    stop = colon if colon >= 0 else end
    if "`" in text[:stop]:
        return text
    out: list[str] = []
    at = 0
    for m in _CHAR_REF_RE.finditer(text, 0, stop):
        char = _char(m)
        out += [text[at : m.start()], char]
        at = m.end()
        if char in ":\uff1a":
            break  # the colon: what follows is the value
    return "".join(out) + text[at:] if out else text


_DROPPED = dict.fromkeys(map(ord, INVISIBLE))
# Characters that show nothing dropped, and fullwidth ASCII (`Ｄ９`, as a CJK input method
# types it) as the characters it shows.
_SEEN: dict[int, int | None] = {**_DROPPED, **{c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)}}


def seen_chars(text: str) -> str:
    """Text with each character as a reader sees it: `Reversed by \u200bD9` and `Reversed by
    Ｄ9` read `Reversed by D9`."""
    return text.translate(_SEEN)


# An anchor and a footnote mark, each with its text up to its closing tag; an attempt stops at
# the next tag of its kind, so a run of tags left open is not rescanned from each of them.
_ANCHOR_RE = re.compile(
    r"""<a[ \t][^<>]*?href=["']([^"'<>]*)["'][^<>]*>((?:[^<\n]|<(?!/?a[\s>]))*+)</a>""",
    re.IGNORECASE,
)
_NOTE_MARK_RE = re.compile(
    r"<(sup|sub)(?:[ \t][^<>]*+)?>(?:[^<\n]|<(?!/?su[bp][\s>]))*+</\1>", re.IGNORECASE
)


def inline_text(text: str) -> str:
    """Text with its inline HTML as the page shows it: `<a href="x.md">x</a>` is the link
    `[x](x.md)`, a footnote mark (`<sup>1</sup>`) is dropped, the tags that only style their
    text (`<code>`, `<b>`, `<span …>`) are dropped around it, and so are characters that show
    nothing. `<br>` stays: it separates."""
    if "<" in text:
        text = _ANCHOR_RE.sub(lambda m: f"[{m[2]}]({m[1]})", text)
        text = _EMPHASIS_TAG_RE.sub("", _NOTE_MARK_RE.sub("", text))
    return text.translate(_DROPPED)


def unbroken(texts: list[str]) -> list[str]:
    """A paragraph's lines as the page shows them: a backslash ending a line but the last is
    a hard line break (CommonMark), shown as a break, not as a backslash."""
    return [
        text[:-1].rstrip(" \t")
        if at < len(texts) - 1 and text.endswith("\\") and (len(text) - len(text.rstrip("\\"))) % 2
        else text
        for at, text in enumerate(texts)
    ]


def past_list_marker(text: str) -> str:
    """The text after a list marker it begins with (a line CommonMark took for no item)."""
    marker = LIST_MARKER_RE.match(text)
    return text[marker.end() :] if marker else text


def field(text: str) -> tuple[str, str] | None:
    """`Name: value` as (the name in lower case, the value), both trimmed; None when the
    text has no colon or the name is longer than a field name.

    The name is lenient (§3.1): emphasis around it is dropped, so `**Status:** open`,
    `_Current as of:_ x` and `**Closes when**: x` all name their field; the caller has
    already removed a list marker. So is what the page shows of it (shown_name).
    """
    first = text[:1]
    if first and first in _BULLET_CHARS and text[1:2] in _ODD_BULLETS[first]:
        # A bullet CommonMark takes for no list marker (`• Resolves: F4`, `-` and a no-break
        # space): the line is still the field it shows, not a line of prose.
        text = text[2:].lstrip(" \t\xa0")
    elif first > "\x7f" and (mark := SYMBOL_LEAD_RE.match(text)) is not None:
        # So is a symbol before the name (`✅ Resolves: F2`, `→ Resolves: F2`): a mark on the
        # line, not a word of it (found by a hunt: the field vanished, and BS-FORK-02 passed).
        text = text[mark.end() :]
    colon = text.find(":", 0, MAX_FIELD_NAME + 8)
    if (
        colon < 1
        and text.find("\uff1a", 0, MAX_FIELD_NAME + 8) < 0
        and text.find("&", 0, MAX_FIELD_NAME + 8) < 0  # `Resolves&#58; F1`
    ):
        return None  # most lines of prose: no colon at all
    text = shown_name(text)
    colon = text.find(":", 0, MAX_FIELD_NAME + 8)
    if colon < 1:
        return None
    name = inner_marks_dropped(text[:colon].strip(_MARKS).lower())
    if "  " in name or "\t" in name or "\xa0" in name:
        name = " ".join(name.split())  # `Raised  by`, `Raised\tby`: the same name, spaced
    if not name or len(name) > MAX_FIELD_NAME:
        return None
    value = text[colon + 1 :]
    # `**Status:** open`: the marks right after the colon close the name's emphasis.
    if value[:1] in ("*", "_"):
        value = value.lstrip("*_")
    return name, shown(value.strip(" \t\xa0"))


# Emphasis on a word inside a name (`**Last** compose`, `_Current_ as of`): the marks next to
# a space between its words, which the page does not show.
# After a letter or digit, not an underscore: inside a run of underscores no match may start,
# else each position scanned the rest of the run again (quadratic, found by the bounded-time
# tests).
_INNER_MARKS_RE = re.compile(r"(?<=[^\W_])[*_`]++(?=[ \t])|(?<=[ \t])[*_`]++(?=\w)")


def inner_marks_dropped(name: str) -> str:
    """A name with the emphasis on its words dropped, as the page shows it (a hunt found
    `## What *changed*` and `- **Last** compose:` read as no such name)."""
    return _INNER_MARKS_RE.sub("", name) if "*" in name or "_" in name or "`" in name else name


# A bullet character that is no list marker to CommonMark, and the spaces after it that
# make it one to a reader: a typographic bullet and any space (an en or em dash too, as an
# editor's smart dashes turn a typed `- `), or `-*+` and a no-break one.
_ODD_BULLETS = {b: " \t\xa0\u202f" for b in "•◦‣▪–—"} | {b: "\xa0\u202f" for b in "-*+"}
_BULLET_CHARS = "".join(_ODD_BULLETS)  # a string: `in` on it is the cheapest test per field
# A symbol or emoji (Unicode's S categories, as the page shows them with their variation
# selectors and joiners), then spaces: a mark before a field's name.
SYMBOL_LEAD_RE = re.compile(
    r"(?:[\u2190-\u2bff\u2713-\u2714\U0001f000-\U0001faff\u00a9\u00ae\u2122]"
    r"[\ufe0f\u200d\U0001f3fb-\U0001f3ff\U0001f000-\U0001faff]*+)++[ \t\xa0]++"
)


def shown(text: str) -> str:
    """Text as a rendered page shows it: without the HTML comments inside it (`stopping
    <!-- since S3 -->`: not part of a value, and its `-->` is no arrow) and without
    struck-through text (`~~D2~~ D3`, `<del>F4</del>`: GFM shows it deleted, so it names
    nothing), and the spaces before each; a comment or a strike ends on its line. Found
    with `find` or a pattern whose every attempt stops at the next delimiter: a pattern
    tried from every `<!--` of a line with no `-->` rescans the rest of the line
    (quadratic)."""
    if "<" not in text and "~" not in text:
        return text
    seen = "\n".join(map(_shown_line, text.split("\n")))
    return text if seen == text else seen.strip(" \t\xa0")


def _shown_line(line: str) -> str:
    out: list[str] = []
    pos = 0
    while (start := line.find("<!--", pos)) >= 0 and (end := line.find("-->", start + 4)) >= 0:
        out.append(line[pos:start].rstrip(" \t"))
        pos = end + 3
    out.append(line[pos:])
    line = "".join(out)
    if "~" not in line and "<" not in line:
        return line
    out, pos, at = [], 0, 0
    code = code_spans(line) if "`" in line else []
    while (m := _STRUCK_RE.search(line, at)) is not None:
        if not _strikes(line, m, code):
            at = m.start() + 1  # its opening run is text; a later one may still strike
            continue
        out.append(line[pos : m.start()].rstrip(" \t"))
        pos = at = m.end()
    out.append(line[pos:])
    return "".join(out)


def _strikes(line: str, m: re.Match[str], code: list[tuple[int, int]]) -> bool:
    """Whether a match of _STRUCK_RE is struck-through text as GFM reads it: neither end
    in a code span (which shows its text as written: `~~x~~` there stays; a strike may
    hold a code span whole), and tildes that open left-flanking and close right-flanking,
    CommonMark's rule for a delimiter run (`(~T2), F4 (~T5)` strikes nothing: its second
    tilde follows a parenthesis and comes before a letter). `code`: the line's code spans."""
    start, end = m.span()
    for at in (start, end - 1):
        i = bisect_right(code, (at, len(line))) - 1
        if i >= 0 and code[i][1] > at:
            return False
    if m[1] is None:
        return True  # a <del>, <s> or <strike> element
    run = len(m[1])
    before, after = line[start - 1 : start] or " ", line[end : end + 1] or " "
    opens = not _punct(line[start + run]) or before.isspace() or _punct(before)
    closes = not _punct(line[end - run - 1]) or after.isspace() or _punct(after)
    return opens and closes


def _punct(char: str) -> bool:
    """A punctuation character as CommonMark counts them (Unicode P or S categories)."""
    return unicodedata.category(char)[0] in "PS"


# Struck-through text as GFM and GitHub show it: one or two tildes opening before a
# non-space and the same run closing after one (`~~~` is a fence, `~2 or ~5` no strike;
# each attempt stops at the next tilde), or a `<del>`, `<s>` or `<strike>` element (each
# attempt stops at the next such tag).
_STRUCK_RE = re.compile(
    r"(?<!~)(~~?+)(?![~\s])[^~]*?(?<!\s)\1(?!~)"
    r"|(?i:<(del|s|strike)(?:[ \t][^<>]*+)?+>(?:[^<]|<(?!/?(?:del|s|strike)[\s>]))*+</\2[ \t]*+>)"
)


# A CommonMark entity or numeric character reference (`&rarr;`, `&#8594;`, `&#x2192;`),
# not after a backslash (`\&rarr;` shows as written); and a code span, in which none is one.
_CHAR_REF_RE = re.compile(
    r"(?<!\\)&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{0,31});"
)
_TICKS_RE = re.compile(r"`++")


def code_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each code span in text: a run of backticks, through the next run of
    the same length (CommonMark; a run with none is text). Found over the runs alone, each
    matched by a search among the runs of its length: a regex tried from every run rescans
    the rest of the text when the runs' lengths all differ."""
    runs = [m.span() for m in _TICKS_RE.finditer(text)]
    of_length: dict[int, list[int]] = {}
    for index, (start, end) in enumerate(runs):
        of_length.setdefault(end - start, []).append(index)
    spans, index = [], 0
    while index < len(runs):
        start, end = runs[index]
        same = of_length[end - start]
        after = bisect_right(same, index)
        if after < len(same):
            closing = same[after]
            spans.append((start, runs[closing][1]))
            index = closing + 1
        else:
            index += 1
    return spans


def decoded(text: str) -> str:
    """Text with its character references decoded outside code spans, as a rendered page
    shows them (`&rarr;` is `→`): what is no reference stays as written."""
    if "&" not in text:
        return text
    if "`" not in text:
        return _CHAR_REF_RE.sub(_char, text)
    parts, at = [], 0
    for start, end in code_spans(text):
        parts += [_CHAR_REF_RE.sub(_char, text[at:start]), text[start:end]]
        at = end
    return "".join([*parts, _CHAR_REF_RE.sub(_char, text[at:])])


def unescaped(text: str) -> str:
    """Text with its backslash escapes undone outside code spans, as a rendered page shows
    it (`send\\_window` is `send_window`, `\\#` is `#`); a code span keeps its backslashes."""
    if "\\" not in text:
        return text
    if "`" not in text:
        return ESCAPED_RE.sub(r"\1", text)
    parts, at = [], 0
    for start, end in code_spans(text):
        parts += [ESCAPED_RE.sub(r"\1", text[at:start]), text[start:end]]
        at = end
    return "".join([*parts, ESCAPED_RE.sub(r"\1", text[at:])])


def _char(m: re.Match[str]) -> str:
    return html.unescape(m[0])


# What a page may show between an entry's ID and its title (a dash, a colon, a middle dot,
# a bar), besides spaces, when a character reference writes it.
_SEPARATOR_CHARS = "—–-:·|"


def decoded_separator(text: str) -> str:
    """Text with the character references it begins with (spaces between allowed) decoded
    while each shows a separator or a space (read as a plain one): `&mdash; Title` is
    `— Title`, as the page shows it. What follows, a title copied into the tables as
    written, stays as written."""
    out: list[str] = []
    at = done = 0
    while True:
        while text[at : at + 1] in (" ", "\t"):
            at += 1
        m = _CHAR_REF_RE.match(text, at) if text[at : at + 1] == "&" else None
        char = _char(m) if m is not None else ""
        if m is None or not (char in _SEPARATOR_CHARS or char.isspace()):
            break
        out += [text[done : m.start()], " " if char.isspace() else char]
        at = done = m.end()
    return "".join(out) + text[done:] if out else text


def says_nothing(value: str | None) -> bool:
    """A field value that is empty to a reader: nothing, emphasis marks, a dash or an
    ellipsis alone (`**`, `—`, `-`, `…`), quotes or brackets around nothing (`""`, `()`), a
    hidden comment (`<!-- fill in -->`), what shows as blank (Unicode spaces, characters
    that show nothing, `&nbsp;`, `<br>`, a lone `\\`), or the schema's placeholder left as
    it is (`{destination}`). One definition for every value the schema requires non-empty
    (Closes when; Decision, Why, How to apply; a parked fork's destination)."""
    if value is None:
        return True
    text = BREAK_RE.sub(" ", decoded(shown(value)))
    if "<" in text or "[" in text:
        # Tags show nothing of their own (`<b></b>`, `<span> </span>`), nor does a link or an
        # image with no text (`[]()`, `![](x.png)`).
        text = _EMPTY_LINK_RE.sub("", _ANY_TAG_RE.sub("", text))
    text = text.translate(_DROP_BLANK_ASCII)
    if not text.isascii():
        text = "".join(
            c for c in text if c not in _BLANK and unicodedata.category(c) not in _UNSEEN
        )
    return not text or _PLACEHOLDER_RE.fullmatch(text) is not None


def heading_shown(text: str) -> str:
    """A section's or turn's heading text as the page shows it: no comment or struck text,
    and no inline HTML tag, its text kept (`<a id="claim"></a>Claim`, `<span …>Argument</span>`
    show `Claim`, `Argument`; until 2026-12-06 such a section was not found, found by a
    hunt). Entry headings do not use it: a title keeps its tags, which the report escapes."""
    if "<" not in text and "~" not in text:
        return text
    text = shown(text)
    return _ANY_TAG_RE.sub("", text) if "<" in text else text


def left_to_fill(value: str | None) -> bool:
    """A value the schema requires that is not filled in: one that says nothing, or a word
    left to fill it in later (`TBD`, `TODO`, `?`, `to be decided`, `N/A`), the schema's
    `{placeholder}` in a person's words or brackets (`[condition]`). Closes when, the
    ledger's Why, Decision and How to apply, and a parked fork's destination read it."""
    if value is None or says_nothing(value):
        return True
    return written_alone(value, _TO_FILL_RE) or written_alone(value, _BRACKETED_RE)


def words_alone(words: str) -> re.Pattern[str]:
    """A value that is one of `words` (an alternation) alone, in any case, with emphasis and
    code marks, brackets and closing punctuation around it (`**TBD**`, `(none yet).`)."""
    return re.compile(rf"(?i)[\s*_`(\[]*+(?:{words})[\s*_`)\].!:]*+")


def written_alone(value: str, words: re.Pattern[str]) -> bool:
    """Whether the value, as the page shows it, is one of words_alone's `words` alone."""
    return words.fullmatch(decoded(shown(value))) is not None


# What says_nothing reads as blank: marks, dashes, dots, a backslash, quotes and brackets
# (around nothing they show nothing: `""`, `()`, an unticked box `[ ]`, until 2026-12-07 a
# Closes when, found by a hunt), the fillers and the blank Braille pattern that render as
# nothing; any space or line separator, format or control character.
_BLANK = frozenset(_MARKS + "—–‐-….\\" + "\"'“”‘’„«»()[]" + FILLERS)
_UNSEEN = frozenset(("Zs", "Zl", "Zp", "Cf", "Cc"))
# The ASCII part of that test as one table, so a plain value is decided without a per-character
# category lookup (under cProfile that lookup was 7% of a crawl).
_DROP_BLANK_ASCII = {
    code: None
    for code in range(128)
    if chr(code) in _BLANK or unicodedata.category(chr(code)) in _UNSEEN
}
_ANY_TAG_RE = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*+(?:[ \t][^<>]*+)?/?>")
_EMPTY_LINK_RE = re.compile(r"!?\[[ \t]*+\]\([^()]*+\)")
# (Public: the ledger reads `Reversed by<br>D9` as the page shows it, a break between words.)
BREAK_RE = re.compile(r"<br[ \t]*+/?>", re.IGNORECASE)
_PLACEHOLDER_RE = re.compile(r"\{[\w -]*\}")
# Words that hold a value's place until it is written, alone, with marks around them; in
# words too (`to be decided`, `N/A`, `pending`, `not yet known`) and a person's own
# bracketed placeholder (`[condition]`; found by a hunt).
_TO_FILL = (
    r"tbd|tba|tbc|to ?do|fixme|\?++|n/?a|pending|unknown|not (?:yet )?(?:known|decided|set)"
    r"|to be (?:decided|determined|defined|confirmed|written|filled(?: in)?)"
)
# One such word, or several with marks between (`TBD?`, `TBD TBD` from two sub-bullets, `—?`):
# until stop 67 only one alone was, and these passed as filled in (found by a hunt).
_TO_FILL_RE = re.compile(
    rf"(?i)[\s*_`(\[—–-]*+(?:{_TO_FILL})(?:[\s*_`()\[\].!:?,;/—–-]++(?:{_TO_FILL}))*+"
    r"[\s*_`)\].!:?]*+"
)
_BRACKETED_RE = re.compile(r"[ \t]*+\[[A-Za-z][A-Za-z -]*+\][ \t]*+")


# Text with the emphasis and code-span marks around it (and spaces) removed; a method
# caller, because readers call it on every token.
bare: Callable[[str], str] = methodcaller("strip", _MARKS)


def _bare_value(value: str) -> str:
    """A value as bare text, its inline emphasis tags dropped too: `<b>pass</b>` shows as
    `**pass**` does (spec §3.1), and a struck `<del>` or `<s>` tag stays, so it is no token."""
    return bare(_EMPHASIS_TAG_RE.sub("", value) if "<" in value else value)


def token(value: str, tokens: tuple[str, ...], fold: bool = False) -> str | None:
    """The schema token a value starts with, emphasis around it dropped (`**pass**` is
    `pass`; what follows is commentary); None when it starts with none of them, or when
    the text after it names another of them, in any case (`pass | fail` is an unfilled
    template). With `fold`, the tokens match in any case."""
    text = _bare_value(value)
    m = _WORD_RE.match(text)
    if m is None:
        return None
    word = m[0].lower() if fold else m[0]
    if word not in tokens:
        return None
    # Another value named in commentary is named in any case (`pass — FAIL`): the value
    # itself must be spelled exactly, so neither spelling is read as the first value.
    rest = text[m.end() :].lower()
    if rest and any(_names(rest, other.lower()) for other in tokens if other != word):
        return None
    return word


def _names(text: str, word: str) -> bool:
    """Whether `word` stands in text as a word of its own (a hyphen joins words)."""
    start = text.find(word)
    while start >= 0:
        end = start + len(word)
        if not _joins(text[start - 1 : start]) and not _joins(text[end : end + 1]):
            return True
        start = text.find(word, end)
    return False


def _joins(char: str) -> bool:
    """Whether a character next to a word makes it part of a longer word."""
    return bool(char) and (char.isalnum() or char in "_-")


def canonical_id(letter: str, digits: str) -> str:
    """An ID as the census names it: its letter and its number, leading zeros dropped (the
    schema's IDs are `F{n}`, so `F04` in a heading and `F4` in a ref are one fork). Digits of
    another script, which `\\d` finds too (`F１`, fullwidth), are the digits they show."""
    if not digits.isascii():
        digits = "".join(str(unicodedata.decimal(c, c)) for c in digits)
    return letter + (digits.lstrip("0") or "0")


def ids(text: str, letter: str) -> list[str]:
    """Every `{letter}{n}` that stands as a whole word in text, in order, once each (as
    canonical_id names it), each as the page shows it (`F\u200b4`, `F\u00ad4`, `Ｆ4` are F4;
    found by a hunt)."""
    if not text.isascii():
        text = seen_chars(text)
    if letter not in text:
        return []
    found = [canonical_id(letter, f[1:]) for f in _ID_RES[letter].findall(text)]
    return list(dict.fromkeys(found)) if len(found) > 1 else found


# Where a list of IDs says nothing of its own: a link's destination (`[F2](forks.md#f2)`) and
# the tags and autolinks in angle brackets.
_DESTINATIONS_RE = re.compile(r"\]\([^()\n]*+\)|<[^<>\n]*+>")


def misspelt_ids(text: str, letter: str) -> list[tuple[str, str]]:
    """The IDs a list of IDs names misspelt (`Resolves: F3, F-4`): each as written, and the ID
    it means. Read as F3 only, F4 went unread and its rule passed (spec §3.1, fail closed)."""
    if "(" in text or "<" in text:
        text = _DESTINATIONS_RE.sub(" ", text)
    found = _MISSPELT_ID_RES[letter].finditer(text)
    return [(m[0], canonical_id(letter, re.sub(r"\D", "", m[0]))) for m in found]


def find_timestamp(text: str) -> str | None:
    """The first ISO 8601 date-and-time anywhere in text, as written; None when none."""
    m = _TS_FIND_RE.search(text)
    return m[0] if m else None


def split_arrow(text: str) -> tuple[str, str] | None:
    """Split at the last arrow (`→` or `->`) outside parentheses and code spans, the spaces
    around it dropped: (before, after); None when there is no arrow. An arrow in the
    commentary after an aspect's refs (`→ none yet (D1 -> D3 next)`) is the remark's, not
    the one that begins the refs (found by a hunt)."""
    arrows = arrows_in(text)
    if not arrows:
        return None
    last = arrows[-1]
    return text[: last.start()].rstrip(), text[last.end() :].lstrip()


def arrows_in(text: str) -> list[re.Match[str]]:
    """The arrows (`→` or `->`) of text outside parentheses and code spans, in order; all of
    them when every one is inside."""
    arrows = list(_ARROW_RE.finditer(text))
    if arrows and ("(" in text or "`" in text):
        hidden = Spans([*code_spans(text), *remarks_in(text)])
        outside = [m for m in arrows if m.start() not in hidden]
        return outside or arrows[-1:]
    return arrows


class Spans:
    """Half-open spans [start, end) of offsets or lines, joined where they overlap: whether a
    point or a range falls in one is a bisect, not a scan of every span, so a file of
    thousands of both stays linear (each scan was quadratic, found by the bounded-time
    tests and a review)."""

    def __init__(self, spans: Iterable[tuple[int, int]]) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        for start, end in sorted(s for s in spans if s[0] < s[1]):
            if self.ends and start <= self.ends[-1]:
                self.ends[-1] = max(end, self.ends[-1])
            else:
                self.starts.append(start)
                self.ends.append(end)

    def __contains__(self, at: int) -> bool:
        i = bisect_right(self.starts, at) - 1
        return i >= 0 and at < self.ends[i]

    def meets(self, start: int, end: int) -> bool:
        """Whether [start, end) shares a point with a span."""
        i = bisect_right(self.starts, end - 1) - 1
        return start < end and i >= 0 and self.ends[i] > start


class Rows:
    """The row of each offset in a text (how many line breaks come before it), by a bisect
    over its breaks: counting them from the start for every match was quadratic in a long
    entry or HTML block (found by a review)."""

    def __init__(self, text: str) -> None:
        self.breaks = [m.start() for m in _NEWLINE_RE.finditer(text)]

    def of(self, at: int) -> int:
        return bisect_left(self.breaks, at)


_NEWLINE_RE = re.compile("\n")
_ARROW_RE = re.compile(r"→|->")


def paired(text: str, opening: str, closing: str) -> list[tuple[int, int]]:
    """The offsets (of the opening, of the closing character) of each balanced pair in text,
    in the order they close; a closing character with none open is text, as is an opening
    one never closed."""
    pairs: list[tuple[int, int]] = []
    opened: list[int] = []
    for m in re.finditer(f"[{re.escape(opening + closing)}]", text):
        if m[0] == opening:
            opened.append(m.start())
        elif opened:
            pairs.append((opened.pop(), m.start()))
    return pairs


def remarks_in(text: str) -> list[tuple[int, int]]:
    """The spans of the outermost balanced parentheses in text, in order: what they hold is a
    remark (a Destination cell's, an aspect's after its refs). A `(` never closed leaves the
    pairs after it outermost."""
    closed = [(start, end + 1) for start, end in paired(text, "(", ")")]
    spans: list[tuple[int, int]] = []
    for start, end in sorted(closed):  # pairs nest or stand apart
        if not spans or start >= spans[-1][1]:
            spans.append((start, end))
    return spans


def parse_timestamp(raw: str) -> datetime | None:
    """An ISO 8601 instant (minutes, seconds or fractions; Z or an offset) as UTC; else
    None. The pattern decides the shape; the standard library reads the values."""
    text = raw
    if _TS_RE.fullmatch(text) is None:
        text = raw.strip()
        if _TS_RE.fullmatch(text) is None:
            return None
    if text[-1] == "z":
        text = text[:-1] + "Z"
    # ISO 8601's own minus sign before an offset (U+2212), for which `-` stands in.
    text = text.replace("\u2212", "-")
    if text.find(" ", 11) >= 0 or "\t" in text:
        text = text[:11] + "".join(text[11:].split())  # spaces before the zone
    return utc_instant(text)


def utc_instant(text: str) -> datetime | None:
    """A timestamp whose shape a pattern has checked, as a UTC instant; None when its values
    are out of range. The standard library reads the values."""
    try:
        value = datetime.fromisoformat(text)
        offset = value.utcoffset()
        # No zone is further from UTC than -12:00 or +14:00: `16:10-16:20` is a time range,
        # not 16:10 at -16:20 (read so, a compose looked 16 hours later than it was).
        if offset is not None and not _LEAST_OFFSET <= offset <= _MOST_OFFSET:
            return None
        return value if text[-1] == "Z" else value.astimezone(UTC)
    except (ValueError, OverflowError):  # out of range, or moved before year 1 by its offset
        return None


def parse_date_or_timestamp(raw: str) -> datetime | None:
    m = _DATE_RE.match(raw.strip())
    if m is None:
        return parse_timestamp(raw)
    try:
        return datetime(int(m[1]), int(m[2]), int(m[3]), tzinfo=UTC)
    except ValueError:
        return None


def read_stamp(raw: str) -> datetime | str | None:
    """A stamp's value as read: its instant, `never`, or None when it is neither."""
    instant, never = stamp(raw)
    return "never" if never else instant


def stamp(raw: str | None, date: bool = False) -> tuple[datetime | None, bool]:
    """A stamp that may be `never`: (instant or None, is_never).

    The stamp is the value's first token, emphasis (marks or tags) dropped: `never` (spelled
    so: a value token, spec §3.1, so `Never` is unreadable) or a timestamp (with `date`, a
    date alone too); what follows is commentary, unless it names another value
    (`2026-07-08T14:30Z | never` is an unfilled template).
    """
    if raw is None:
        return None, False
    instant = parse_timestamp(raw)
    if instant is not None:
        return instant, False
    text = _bare_value(raw)
    if token(text, ("never",)):
        return None, _TS_FIND_RE.search(text) is None
    m = _TS_FIND_RE.match(text) or (_DATE_AT_RE.match(text) if date else None)
    if m is None:
        return None, False
    rest = text[m.end() :]
    if rest and (_names(rest.lower(), "never") or _TS_FIND_RE.search(rest)):
        return None, False
    if len(m[0]) == 10:
        return parse_date_or_timestamp(m[0]), False
    return parse_timestamp(m[0]), False


def stamp_hint(raw: str) -> str:
    """What to add to the note of a stamp not read: `Never` is the token in another case."""
    word = _WORD_RE.match(bare(raw))
    return " (the token is `never`, in lower case)" if word and word[0].lower() == "never" else ""


def id_number(text: str | None, prefix: str) -> int | None:
    if text is None or not text.startswith(prefix) or not text[1:].isdecimal():
        return None
    return int32(text[1:])


def int32(digits: str) -> int | None:
    """Decimal digits (as `\\d+` matches them) as an int32; None when larger.

    An 11-digit ID made the crawl fail writing its int32 column, and past 4,300 digits
    int() itself raises.
    """
    if len(digits) < 10:
        return int(digits)
    if len(digits.lstrip("0")) > len(str(INT32_MAX)):
        return None
    value = int(digits)
    return value if value <= INT32_MAX else None
