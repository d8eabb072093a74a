"""A file's block structure as CommonMark and GFM tables define it, read in one pass.

Every reader of a session file stands on this module: it sees headings, list items
(their continuation lines, later paragraphs and sub-items folded in), paragraph lines
outside list items, and tables; lines inside fenced, indented or HTML blocks are none of
these. The structure is the one markdown-it-py builds (CommonMark with its GFM table
rule), which tests/test_properties.py checks on generated Markdown. It keeps the
container-stack strategy of the CommonMark spec's appendix, one pass over the lines,
because markdown-it-py itself costs several times what a whole session's reading may.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Iterator

# Lines from which a file counts as large (the collector is paused while it is parsed).
_LARGE = 5_000
# Containers past this depth are not opened (their markers read as text), so that a line
# of 50,000 `- ` costs one pass, not one per open container on every later line.
MAX_DEPTH = 16

# First characters that may open something other than a paragraph line.
_SPECIAL = frozenset(" \t#`~>-*+_=|<0123456789")
# What CommonMark (and markdown-it) trims from a table line and its cells.
TRIM = (
    "\t\n\x0b\x0c\r \xa0\u1680"
    + "".join(map(chr, range(0x2000, 0x200B)))
    + ("\u2028\u2029\u202f\u205f\u3000")
)
_HASHES = tuple("#" * n for n in range(9))
# Indentation, quote markers and list markers (each followed by a space or tab).
PREFIX_RE = re.compile(r"(?:[ \t]|>|[-*+](?=[ \t])|\d{1,9}[.)](?=[ \t]))*+")
_FENCE_RE = re.compile(r"(`{3,}+|~{3,}+)(.*)")
_ORDERED_RE = re.compile(r"\d{1,9}[.)]")
_DELIMITER_RE = re.compile(r"[|:-][-|: \t]*+")
_DELIMITER_CELL_RE = re.compile(r":?-++:?")
_HTML_NAMES = (
    "address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|"
    "details|dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|"
    "h1|h2|h3|h4|h5|h6|head|header|hr|html|iframe|legend|li|link|main|menu|menuitem|nav|"
    "noframes|ol|optgroup|option|p|param|search|section|summary|table|tbody|td|tfoot|th|"
    "thead|title|tr|track|ul"
)
# Possessive throughout: an attribute list that never closes is one pass, not a search.
_ATTRIBUTE = (
    r"(?:\s++[a-zA-Z_:][a-zA-Z0-9_.:-]*+"
    r"(?:\s*+=\s*+(?:[^\"'=<>`\x00-\x20]++|'[^']*+'|\"[^\"]*+\"))?+)"
)
# HTML block kinds 1-7: (start, end or None for "ends before a blank line", whether it
# may end a paragraph).
_HTML_KINDS: tuple[tuple[re.Pattern[str], re.Pattern[str] | None, bool], ...] = (
    (
        re.compile(r"<(?:script|pre|style|textarea)(?=\s|>|$)", re.I | re.A),
        re.compile(r"</(?:script|pre|style|textarea)>", re.I | re.A),
        True,
    ),
    (re.compile("<!--"), re.compile("-->"), True),
    (re.compile(r"<\?"), re.compile(r"\?>"), True),
    (re.compile("<![A-Za-z]"), re.compile(">"), True),
    (re.compile(r"<!\[CDATA\["), re.compile(r"\]\]>"), True),
    (re.compile(rf"</?(?:{_HTML_NAMES})(?=\s|/?>|$)", re.I | re.A), None, True),
    (
        re.compile(
            rf"(?:<[A-Za-z][A-Za-z0-9-]*+{_ATTRIBUTE}*+\s*+/?>"
            r"|</[A-Za-z][A-Za-z0-9-]*+\s*+>)\s*+$"
        ),
        None,
        False,
    ),
)


class Heading:
    """An ATX or setext heading: level, first line, text (closing #s and spaces trimmed);
    a setext heading keeps the lines it underlines (a reader may find them meant as fields
    or sync lines above a `---` break, not as a title)."""

    __slots__ = ("level", "line", "text", "underlined")

    def __init__(
        self, line: int, level: int, text: str, underlined: list[Line] | None = None
    ) -> None:
        self.line, self.level, self.text = line, level, text
        self.underlined = underlined


Line = tuple[int, str]  # (1-based line number, its text trimmed)
# Shared by every item that holds nothing after its first paragraph; never appended to.
_NO_PARTS: list[list[Line] | Item] = []


class Item:
    """A list item: the lines of its first paragraph, then its later paragraphs (their
    lines) and its sub-items in order; `last` is its last non-blank line."""

    __slots__ = ("depth", "last", "line", "lines", "marker", "parts")

    def __init__(self, line: int, depth: int, marker: str, lines: list[Line] | None = None) -> None:
        self.line, self.depth, self.marker = line, depth, marker
        self.lines: list[Line] = [] if lines is None else lines
        # A list of its own only once something is added (most items hold nothing more).
        self.parts: list[list[Line] | Item] = _NO_PARTS
        self.last = line

    def add(self, part: list[Line] | Item) -> None:
        """Add a later paragraph or a sub-item."""
        if self.parts is _NO_PARTS:
            self.parts = []
        self.parts.append(part)

    @property
    def text(self) -> str:
        """The first paragraph, its lines joined by a space."""
        lines = self.lines
        if len(lines) == 1:
            return lines[0][1]
        return " ".join(t for _, t in lines)

    def rest(self) -> str:
        """What follows the first paragraph (sub-items included) as one line of text."""
        return " ".join(
            " ".join(t for _, t in p) if isinstance(p, list) else p.full() for p in self.parts
        )

    def full(self) -> str:
        """The whole item as one line of text."""
        return " ".join(filter(None, (self.text, self.rest())))

    def all_lines(self) -> list[Line]:
        """Every paragraph line the item holds, its sub-items' included, in file order."""
        found = list(self.lines)
        for part in self.parts:
            found += part if isinstance(part, list) else part.all_lines()
        return found


class Paragraph:
    """A paragraph that is not inside a list item: its lines, made from the file's lines
    only when a reader asks (most readers of a long file never do)."""

    __slots__ = ("_lines", "end", "source", "start")

    def __init__(
        self, lines: list[Line] | None, source: list[str] | None = None, start: int = 0
    ) -> None:
        self._lines = lines
        self.source, self.start, self.end = source, start, start

    @property
    def lines(self) -> list[Line]:
        if self._lines is None:
            source = self.source or []
            self._lines = [(i + 1, source[i].rstrip(" \t")) for i in range(self.start, self.end)]
        return self._lines


class Table:
    """A GFM table: header cells and body rows (line, cells); an escaped `\\|` stays a
    pipe in its cell."""

    __slots__ = ("header", "last", "line", "rows")

    def __init__(self, line: int, header: list[str]) -> None:
        self.line, self.header = line, header
        self.rows: list[tuple[int, list[str]]] = []
        self.last = line + 1


Block = Heading | Item | Paragraph | Table


class Document:
    """One parse: the blocks readers walk, and every item, code and HTML block."""

    __slots__ = ("_items", "blocks", "code", "html", "too_deep", "unclosed_fence", "unclosed_html")

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self._items: list[Item] | None = None
        # (first line, last non-blank line) of each fenced or indented code block.
        self.code: list[tuple[int, int]] = []
        self.html: list[tuple[int, int]] = []
        # The line of a code fence still open at the end of the file, when lines follow it:
        # a reader cannot tell whether they were meant as code.
        self.unclosed_fence: int | None = None
        # Likewise (line, kind) of an HTML block with an end condition (`-->`, `?>`, …) still
        # open at the end of the file, when lines follow it.
        self.unclosed_html: tuple[int, int] | None = None
        # The first line where a quote or list marker past MAX_DEPTH containers was read as
        # text: what it holds (an entry, a field) cannot be read as the page shows it.
        self.too_deep: int | None = None

    @property
    def items(self) -> list[Item]:
        """Every list item in file order, sub-items included."""
        if self._items is None:
            found: list[Item] = []
            stack = [b for b in reversed(self.blocks) if isinstance(b, Item)]
            while stack:
                item = stack.pop()
                found.append(item)
                stack += [p for p in reversed(item.parts) if isinstance(p, Item)]
            self._items = found
        return self._items


class _Box:
    """An open container: a block quote ('>') or a list item ('i'), with the columns its
    content is indented by (relative to its marker's container) and starts at."""

    __slots__ = ("col", "empty", "item", "kind", "width")

    def __init__(self, kind: str, col: int, width: int = 0, item: Item | None = None) -> None:
        self.kind, self.col, self.width, self.item = kind, col, width, item
        self.empty = False


def parse_full(lines: list[str]) -> Document:
    """The same structure as parse(), always by the general parser (tests compare the
    two readings)."""
    return _uncommented(_unticked(_Parser(lines).run()), lines)


def parse(lines: list[str]) -> Document:
    """The block structure of a file given as its lines (line ends removed)."""
    if len(lines) < _LARGE or not gc.isenabled():
        return _uncommented(_unticked(_flat(lines) or _Parser(lines).run()), lines)
    # The parse makes no reference cycles, so a collection during it would only walk again
    # what it has just made: on a large file that doubles its time.
    gc.disable()
    try:
        return _uncommented(_unticked(_flat(lines) or _Parser(lines).run()), lines)
    finally:
        gc.enable()


def _uncommented(doc: Document, lines: list[str]) -> Document:
    """A comment opened inside a paragraph runs over its lines to the `-->` that closes it
    (CommonMark's inline HTML): the page shows none of it, so the blocks hold none of it
    either (found by a hunt: a `Result: pass`, a `Status:` or a sync result inside such a
    comment was read, and its rule passed). A `<!--` no later line closes is text."""
    if not any("<!--" in line for line in lines):
        return doc
    stack: list[Block | Item] = list(doc.blocks)
    while stack:
        block = stack.pop()
        if isinstance(block, Paragraph):
            if block.end - block.start > 1 or block._lines is not None:
                shown = _comments_hidden(block.lines)
                if shown is not None:
                    block._lines = shown
        elif isinstance(block, Item):
            shown = _comments_hidden(block.lines)
            if shown is not None:
                block.lines = shown
            for part in block.parts:
                if isinstance(part, Item):
                    stack.append(part)
                elif (shown := _comments_hidden(part)) is not None:
                    part[:] = shown
    return doc


def _comments_hidden(lines: list[Line]) -> list[Line] | None:
    """A paragraph's lines without the comments that span them; None when none does."""
    if len(lines) < 2:
        return None
    out: list[Line] | None = None
    at = 0
    while at < len(lines) - 1:
        opened = _open_comment(lines[at][1])
        after = at
        if opened >= 0:
            after = next((k for k in range(at + 1, len(lines)) if "-->" in lines[k][1]), -1)
        if after < 0:
            break  # no later line closes it, nor any comment opened further down
        if opened < 0:
            at += 1
            continue
        out = list(lines) if out is None else out
        close = out[after][1].find("-->")
        out[at] = (out[at][0], out[at][1][:opened].rstrip(" \t"))
        out[after] = (out[after][0], out[after][1][close + 3 :].lstrip(" \t"))
        for k in range(at + 1, after):
            out[k] = (out[k][0], "")
        lines, at = out, after
    if out is None:
        return None
    # A line the comment hid entirely is no line of the paragraph's.
    return [(n, t) for i, (n, t) in enumerate(out) if t or i == 0]


def _open_comment(text: str) -> int:
    """Where a `<!--` that its own line does not close starts, outside code spans; -1 if none."""
    at = 0
    while (start := text.find("<!--", at)) >= 0:
        end = text.find("-->", start + 4)
        if end < 0:
            if "`" in text and _in_code(text, start):
                at = start + 4
                continue
            return start
        at = end + 3
    return -1


def _in_code(text: str, at: int) -> bool:
    from pipeline.parse.lexical import code_spans

    return any(start <= at < end for start, end in code_spans(text))


# A GFM task list item's checkbox, opening its first line before the item's text.
_TASK_BOX_RE = re.compile(r"\[[ xX]\][ \t]++(?=\S)")


def _unticked(doc: Document) -> Document:
    """GFM shows a task item's `[ ]` or `[x]` as a checkbox, not as text: `- [x] Resolves:
    F4` is the field `Resolves: F4` (it was read as no field at all, and its rule passed)."""
    stack = [b for b in doc.blocks if isinstance(b, Item)]
    while stack:
        item = stack.pop()
        if item.lines and item.lines[0][1][:1] == "[":
            line, text = item.lines[0]
            box = _TASK_BOX_RE.match(text)
            if box is not None:
                item.lines[0] = (line, text[box.end() :])
        if item.parts:
            stack += [p for p in item.parts if isinstance(p, Item)]
    return doc


def _flat(lines: list[str]) -> Document | None:
    """A file of empty lines, ATX headings, breaks, setext underlines, plain paragraphs, tables
    and plain top-level `- ` items, read in one tight loop; None for any other file."""
    doc = Document()
    blocks = doc.blocks
    para: Paragraph | None = None  # the open top-level paragraph
    item: Item | None = None  # the open top-level item
    in_item = False  # whether the item's first paragraph is open (takes lazy lines)
    last = 0  # the last non-empty line before this one
    special = _SPECIAL
    rows = enumerate(lines)
    for index, s in rows:
        if not s:
            if para is not None:
                para.end, para = index, None
            in_item = False
            continue
        c = s[0]
        if "|" in s and index + 1 < len(lines) and lines[index + 1][:1] in ("|", ":", "-"):
            table = None if in_item or c in " \t" else _flat_table(lines, index, rows)
            if table is None:
                return None
            para, item = _ended(para, index), _closed(item, last)
            blocks.append(table)
            last = table.last
            continue
        if c not in special or (c in "_*" and _emphasis(s)):
            if in_item:
                item.lines.append((index + 1, s.rstrip(" \t")))  # type: ignore[union-attr]
            elif para is None:
                item, para = _closed(item, last), Paragraph(None, lines, index)
                blocks.append(para)
        elif c == "#":
            heading = _flat_heading(s, index)
            if heading is None:
                return None
            para, item, in_item = _ended(para, index), _closed(item, last), False
            blocks.append(heading)
        elif s == "---" and para is None:  # the most common break
            item, in_item = _closed(item, last), False
        elif c == "-" and s[1:2] == " " and ((s[2:3] or " ") not in special or _plain_item(s)):
            para = _ended(para, index)
            _closed(item, last)
            item, in_item = Item(index + 1, 0, "-", [(index + 1, s[2:].strip(" \t"))]), True
            blocks.append(item)
        elif c == " " and in_item and s[:2] == "  " and (s[2:3] or " ") not in special:
            # A continuation line indented under the item's text (lazy ones are above).
            item.lines.append((index + 1, s.strip(" \t")))  # type: ignore[union-attr]
        elif c in "-=*_" and not s.rstrip(" \t").strip(c):
            if not _rule(blocks, s, index, para):
                return None
            if item is not None and not (para is not None and c in "-="):
                item.last, item, in_item = last, None, False
            para = None
        else:
            return None
        last = index + 1
    _ended(para, len(lines))
    _closed(item, last)
    return doc


def _ended(para: Paragraph | None, index: int) -> Paragraph | None:
    """Close the open paragraph (if any) before line `index`: None, the caller's new one."""
    if para is not None:
        para.end = index
    return None


def _closed(item: Item | None, last: int) -> Item | None:
    """Close the open item (if any) at line `last`: None, the caller's new one."""
    if item is not None:
        item.last = last
    return None


def _flat_heading(s: str, index: int) -> Heading | None:
    """Line `index`, which starts with #: its ATX heading, or None when it is none."""
    level = s.find(" ", 1, 7)  # most headings: their #s, then a space
    if level < 0 or not s.startswith(_HASHES[level]):
        level = heading_level(s, 0)
        if not level:
            return None
    text = s[level:].strip(" \t\xa0")
    if text[-1:] == "#":
        text = heading_text(s, level)
    return Heading(index + 1, level, text)


def _rule(blocks: list[Block], s: str, index: int, para: Paragraph | None) -> bool:
    """Line `index`, one repeated `-`, `=`, `*` or `_`: it underlines the open paragraph
    (a setext heading) or is a thematic break; False when it is neither (the flat
    reading gives up)."""
    c = s[0]
    if para is not None and c in "-=":
        para.end = index
        level = 1 if c == "=" else 2
        blocks[-1] = Heading(para.start + 1, level, _joined(para.lines), para.lines)
        return True
    if c == "=" or len(s.rstrip(" \t")) < 3:
        return False
    if para is not None:
        para.end = index
    return True


def _emphasis(s: str) -> bool:
    """Whether a line that starts with `_` or `*` is plain text (emphasis), not a thematic
    break or a `* ` list item."""
    return s[1:2] not in ("", " ", "\t") and not _is_break(s, 0)


def _flat_table(lines: list[str], index: int, rows: Iterator[tuple[int, str]]) -> Table | None:
    """A table whose header is line `index` and whose delimiter row follows, its body rows
    taken from `rows` up to an empty line; None when the lines are no table or hold a row
    the flat reading does not take (the general parser reads the file)."""
    header = split_cells(lines[index])
    if delimiter_columns(lines[index + 1]) != len(header) or not header:
        return None
    table = Table(index + 1, header)
    next(rows)
    for number, s in rows:
        if not s:
            return table
        if s[0] != "|" and (s[0] in _SPECIAL or not s.strip(TRIM)):
            return None
        table.rows.append((number + 1, split_cells(s)))
        table.last = number + 1
    return table


def _plain_item(s: str) -> bool:
    """Whether a `- ` line is an item whose text starts plainly (no nested container,
    fence, heading or HTML, and the line is not a break)."""
    c = s[2:3]
    if not c or c in " \t<>#`~+":
        return False
    if c in "-*_":
        # `- ___` is an item holding a thematic break, not an item whose text is `___`.
        return s[3:4] not in ("", " ", "\t") and not _is_break(s, 0) and not _is_break(s, 2)
    return not ("0" <= c <= "9" and _ORDERED_RE.match(s, 2))


def _joined(lines: list[Line]) -> str:
    return " ".join(t for _, t in lines).strip(TRIM)


def split_cells(text: str) -> list[str]:
    """A table line's cells: split at pipes not escaped by a backslash (`\\|` stays a `|`
    in its cell), without the empty cell before a leading or after a trailing pipe."""
    parts = text.strip(TRIM).split("|")
    cells: list[str] = []
    held = ""
    last = len(parts) - 1
    for i, part in enumerate(parts):
        if i < last and part.endswith("\\"):
            held += part[:-1] + "|"
        else:
            cells.append(held + part)
            held = ""
    if cells and cells[0] == "":
        cells.pop(0)
    if cells and cells[-1] == "":
        cells.pop()
    return [cell.strip(TRIM) for cell in cells]


def delimiter_columns(text: str) -> int:
    """How many columns a table's delimiter row (given from its first non-space) has;
    0 when it is not one."""
    if len(text) < 2 or text[0] not in "|-:" or text[1] not in "|-: \t":
        return 0
    if (text[0] == "-" and text[1] in " \t") or not _DELIMITER_RE.fullmatch(text):
        return 0
    columns = text.split("|")
    count = 0
    for i, column in enumerate(columns):
        column = column.strip(TRIM)
        if not column:
            if 0 < i < len(columns) - 1:
                return 0
            continue
        if not _DELIMITER_CELL_RE.fullmatch(column):
            return 0
        count += 1
    return count


def heading_level(s: str, at: int) -> int:
    """The level of an ATX heading whose #s start at offset `at`; 0 when it is not one."""
    level = len(s) - at - len(s[at : at + 8].lstrip("#")) - len(s[at + 8 :])
    if level > 6 or s[at + level : at + level + 1] not in ("", " ", "\t"):
        return 0
    return level


def heading_text(s: str, after: int) -> str:
    """An ATX heading's text from after its #s: trimmed, a closing run of #s dropped."""
    text = s[after:].strip(" \t\xa0")
    if text[-1:] == "#":
        bare = text.rstrip("#")
        if not bare:
            return ""
        if bare[-1] in " \t":
            return bare.rstrip(" \t")
    return text


def expand_indent(s: str) -> str:
    """The line with the tabs in its structural prefix (indentation, `>` and list
    markers, and the spaces after them) expanded to the next multiple of four columns,
    so that offsets there are columns; the text after the prefix keeps its tabs."""
    end = PREFIX_RE.match(s).end()  # type: ignore[union-attr]
    return s[:end].expandtabs(4) + s[end:]


def html_kind(s: str, at: int) -> int:
    """Which of the seven HTML block kinds starts at offset `at`; -1 for none."""
    for kind, (start, _, _) in enumerate(_HTML_KINDS):
        if start.match(s, at):
            return kind
    return -1


def html_tail(s: str, kind: int, at: int) -> str:
    """What follows the end of an HTML block of a kind that ends at a marker (`-->`, `?>`)
    on its last line `s`, searched from offset `at`: CommonMark passes it through with the
    block, so the page shows it (`<!-- note --> Resolves: F1` shows "Resolves: F1")."""
    end = _HTML_KINDS[kind][1]
    found = end.search(s, at) if end is not None else None
    return s[found.end() :] if found is not None else ""


class _Parser:
    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.doc = Document()
        self.stack: list[_Box] = []
        # The open leaf: '' none, 'p' paragraph, 'f' fence, 'c' indented code,
        # 'h' HTML block, 't' table.
        self.leaf = ""
        self.para: list[tuple[int, str]] = []
        self.para_owner: Item | None = None
        self.fence = ""
        self.html_end: re.Pattern[str] | None = None
        self.html_kind = -1
        self.table: Table | None = None
        self.leaf_start = self.leaf_last = 0
        self.last_nonblank = 0
        # The line being read (tabs in its indentation expanded) and the cursor in it.
        self.number = 0
        self.s = ""
        self.pos = 0

    def run(self) -> Document:
        stack = self.stack
        for index, s in enumerate(self.lines):
            number = index + 1
            if len(stack) <= 1 and self.leaf in ("", "p") and self._fast(number, s):
                if s:
                    self.last_nonblank = number
                continue
            self.number, self.pos = number, 0
            self.s = expand_indent(s) if "\t" in s else s
            self._line()
            if s.strip(" \t"):
                self.last_nonblank = number
        if self.leaf == "f" and self.last_nonblank > self.leaf_start:
            self.doc.unclosed_fence = self.leaf_start
        opened = self.leaf == "h" and self.html_end is not None
        if opened and self.last_nonblank > self.leaf_start:
            self.doc.unclosed_html = (self.leaf_start, self.html_kind)
        self._close_boxes(0, self.last_nonblank)
        self._close_leaf()
        return self.doc

    # ───────────────────────── the common lines ─────────────────────────

    def _fast(self, number: int, s: str) -> bool:
        """Read the most common lines (blank, plain, heading, break, `- ` item, a line
        inside a top-level item) while at most one top-level item is open; whether this
        line was one. Anything else goes the general way."""
        box = self.stack[0] if self.stack else None
        if box is not None and (box.kind != "i" or box.empty):
            return False
        if not s:
            if self.leaf:
                self._close_leaf()
            return True
        c = s[0]
        if c not in _SPECIAL:
            if "|" in s:
                return False
            if box is not None and not self.leaf:
                self._close_boxes(0, self.last_nonblank)
            if not self.leaf:
                self.leaf, self.para, self.para_owner = "p", [], None
            self.para.append((number, s.strip(" \t")))
            return True
        if c == "#":
            level = heading_level(s, 0)
            if not level or "|" in s:
                return False
            self._close_boxes(0, self.last_nonblank)
            self._close_leaf()
            self.doc.blocks.append(Heading(number, level, heading_text(s, level)))
            return True
        if c == "-":
            return self._fast_dash(number, s, box)
        if c == " " and box is not None:
            return self._fast_inside(number, s, box)
        return False

    def _fast_dash(self, number: int, s: str, box: _Box | None) -> bool:
        """A line of dashes (a setext underline or a break), or a `- ` item whose text
        starts plainly."""
        bare = s.rstrip(" \t")
        if not bare.strip("-"):
            if box is None and self.leaf == "p":
                self._setext(2)
                return True
            if len(bare) < 3:
                return False
            self._close_boxes(0, self.last_nonblank)
            self._close_leaf()
            return True
        after = s[2:3]
        if s[1:2] != " " or not after or "|" in s or (box is not None and box.item is None):
            return False
        if box is not None and box.item is not None and box.item.marker != "-":
            return False
        if after in _SPECIAL and not (
            after in "*_" and s[3:4] not in ("", " ", "\t") and not _is_break(s, 2)
        ):
            return False
        self._close_boxes(0, self.last_nonblank)
        self._close_leaf()
        item = Item(number, 0, "-")
        self.stack.append(_Box("i", 2, 2, item))
        self.doc.blocks.append(item)
        self.leaf, self.para, self.para_owner = "p", [(number, s[2:].strip(" \t"))], item
        return True

    def _fast_inside(self, number: int, s: str, box: _Box) -> bool:
        """A plain line indented into the open top-level item."""
        width = box.width
        first = s[width : width + 1]
        if s[:width].strip(" ") or not first or first in _SPECIAL or "|" in s:
            return False
        if not self.leaf:
            self.leaf, self.para, self.para_owner = "p", [], box.item
        self.para.append((number, s[width:].strip(" \t")))
        return True

    def _indent(self) -> tuple[int, int]:
        """(offset of the next non-space, spaces before it) from the cursor."""
        s, pos = self.s, self.pos
        end = len(s) - len(s[pos:].lstrip(" "))
        return end, end - pos

    # ───────────────────────── one line ─────────────────────────

    def _line(self) -> None:
        matched = self._match()
        nonspace, indent = self._indent()
        blank = nonspace >= len(self.s)
        leaf = self.leaf
        all_matched = matched == len(self.stack)
        if leaf and leaf != "p" and all_matched and self._leaf_goes_on(nonspace, indent, blank):
            return
        if leaf == "p" and not blank and self._para_goes_on(matched, nonspace, indent):
            return
        if blank:
            if self.leaf in ("p", "t") or (self.leaf == "h" and self.html_end is None):
                self._close_leaf()
            self._close_boxes(matched, self.last_nonblank)
            return
        self._starts(matched)

    def _match(self) -> int:
        """How many open containers the line continues; the cursor moves past their
        markers and indentation."""
        matched = 0
        s = self.s
        for box in self.stack:
            nonspace, indent = self._indent()
            if box.kind == ">":
                if indent > 3 or s[nonspace : nonspace + 1] != ">":
                    break
                self.pos = nonspace + (2 if s[nonspace + 1 : nonspace + 2] == " " else 1)
            elif nonspace >= len(s):
                # An item that began with a blank line ends at a second one.
                if box.empty:
                    break
                self.pos = nonspace
            elif indent >= box.width:
                self.pos += box.width
                box.empty = False
            else:
                break
            matched += 1
        return matched

    # ───────────────────────── leaves that go on ─────────────────────────

    def _leaf_goes_on(self, nonspace: int, indent: int, blank: bool) -> bool:
        """Whether a line in every open container belongs to the open fence, indented
        code, HTML block or table."""
        leaf = self.leaf
        if leaf == "f":
            if not blank:
                self.leaf_last = self.number
                if indent <= 3 and self._closes_fence(nonspace):
                    self._close_leaf()
            return True
        if leaf == "c":
            if blank or indent >= 4:
                self.leaf_last = self.number if not blank else self.leaf_last
                return True
            self._close_leaf()
            return False
        if leaf == "h":
            return self._html_goes_on(blank)
        return self._row(nonspace, indent, blank)

    def _html_goes_on(self, blank: bool) -> bool:
        end = self.html_end
        if end is None:
            if blank:
                return False
            self.leaf_last = self.number
            return True
        if not blank:
            self.leaf_last = self.number
        if end.search(self.s, self.pos):
            self._close_leaf()
        return True

    def _closes_fence(self, nonspace: int) -> bool:
        s, fence = self.s, self.fence
        if not s.startswith(fence, nonspace):
            return False
        end = nonspace + len(fence)
        while end < len(s) and s[end] == fence[0]:
            end += 1
        return not s[end:].strip(" \t")

    def _row(self, nonspace: int, indent: int, blank: bool) -> bool:
        table = self.table
        assert table is not None
        if self.number == table.line + 1:
            table.last = self.number
            return True  # the delimiter row, checked when the table opened
        text = self.s[nonspace:]
        if blank or indent >= 4 or not text.strip(TRIM) or self._ends_block(nonspace, True):
            self._close_leaf()
            return False
        table.rows.append((self.number, split_cells(text)))
        table.last = self.number
        return True

    def _para_goes_on(self, matched: int, nonspace: int, indent: int) -> bool:
        """Whether a non-blank line continues the open paragraph (lazily, when it is not in
        every container) or underlines it as a setext heading."""
        lazy = matched < len(self.stack)
        if indent >= 4 and (not lazy or self.stack[-1].kind == ">"):
            self._para_line(nonspace)
            return True
        s = self.s
        c = s[nonspace]
        if not lazy and c in "=-" and not s[nonspace:].rstrip(" \t").strip(c):
            self._setext(1 if c == "=" else 2)
            return True
        if c in _SPECIAL and self._ends_para(nonspace, lazy):
            return False
        if "|" in s and self._table_ahead(self.number, s, nonspace, len(self.stack)):
            return False
        self._para_line(nonspace)
        return True

    def _ends_para(self, nonspace: int, lazy: bool) -> bool:
        """Whether a block that may interrupt a paragraph starts at `nonspace`."""
        s = self.s
        c = s[nonspace]
        if c in "-*_" and _is_break(s, nonspace):
            return True
        if c in "-*+" or "0" <= c <= "9":
            marker = _list_marker(s, nonspace)
            if marker is None or lazy:
                return marker is not None and not self._nested_code()
            after, ordered = marker
            if ordered and s[nonspace : after - 1].lstrip("0") != "1":
                return False
            return bool(s[after:].strip(" \t"))
        return self._ends_block(nonspace, False)

    def _nested_code(self) -> bool:
        """Whether a lazy line sits four columns past the indentation of the list that
        holds the innermost item: markdown-it reads it as text, not a new block."""
        stack = self.stack
        if stack[-1].kind != "i":
            return False
        outer = stack[-2].col if len(stack) > 1 else 0
        return self._indent()[0] - outer >= 4

    def _ends_block(self, nonspace: int, in_table: bool) -> bool:
        """Whether a fence, quote, break, list item (in a table), HTML block of kinds 1-6
        or heading starts at `nonspace`."""
        s = self.s
        c = s[nonspace]
        if c in "`~":
            return _fence_at(s, nonspace) is not None
        if c == ">":
            return True
        if c in "-*+_" or "0" <= c <= "9":
            return _is_break(s, nonspace) or (
                in_table and c != "_" and _list_marker(s, nonspace) is not None
            )
        if c == "<":
            kind = html_kind(s, nonspace)
            return kind >= 0 and _HTML_KINDS[kind][2]
        if c == "#":
            return heading_level(s, nonspace) > 0
        return False

    def _para_line(self, nonspace: int) -> None:
        self.para.append((self.number, self.s[nonspace:].strip(" \t")))

    # ───────────────────────── block starts ─────────────────────────

    def _starts(self, matched: int) -> None:
        """Open the containers and the leaf that begin on this (non-blank) line."""
        # The next item of a list whose item this line ends comes before a table.
        follows = matched < len(self.stack) and self.stack[matched].item is not None
        while True:
            nonspace, indent = self._indent()
            s = self.s
            if nonspace >= len(s):
                self._close_boxes(matched, self.last_nonblank)
                box = self.stack[-1] if self.stack else None
                if box is not None and box.item is not None:
                    box.empty = box.item.line == self.number
                return
            if indent >= 4:
                self._open_leaf(matched, "c", nonspace)
                return
            c = s[nonspace]
            if follows and self._next_item(matched, nonspace):
                matched = self._open_item(matched, nonspace, _list_end(s, nonspace))
                follows = False
                continue
            follows = False
            if "|" in s and self._table_ahead(self.number, s, nonspace, matched):
                self._open_table(matched, nonspace)
                return
            if c in "`~" and _fence_at(s, nonspace) is not None:
                self._open_leaf(matched, "f", nonspace)
                return
            if c == ">" and len(self.stack) < MAX_DEPTH:
                self.pos = nonspace + (2 if s[nonspace + 1 : nonspace + 2] == " " else 1)
                matched = self._open_box(matched, _Box(">", self.pos))
                continue
            if c == ">" and self.doc.too_deep is None:
                self.doc.too_deep = self.number
            if c in "*-_" and _is_break(s, nonspace):
                self._open_leaf(matched, "", nonspace)
                return
            listed = c in "-*+" or "0" <= c <= "9"
            if listed and len(self.stack) < MAX_DEPTH:
                marker = _list_marker(s, nonspace)
                if marker is not None:
                    matched = self._open_item(matched, nonspace, marker[0])
                    continue
            elif listed and self.doc.too_deep is None and _list_marker(s, nonspace) is not None:
                self.doc.too_deep = self.number
            self._open_other(matched, c, nonspace)
            return

    def _next_item(self, matched: int, nonspace: int) -> bool:
        """Whether the line starts the next item of the list that holds the open item it
        ends: a marker of the same kind (bullet character, or `.` or `)`)."""
        item = self.stack[matched].item
        s = self.s
        marker = _list_marker(s, nonspace) if s[nonspace] in "-*+0123456789" else None
        if item is None or marker is None or _is_break(s, nonspace):
            return False
        return s[marker[0] - 1] == item.marker[-1] and marker[1] == (item.marker[0] not in "-*+")

    def _open_other(self, matched: int, c: str, nonspace: int) -> None:
        """An HTML block, an ATX heading or a paragraph line."""
        s = self.s
        kind = html_kind(s, nonspace) if c == "<" else -1
        level = heading_level(s, nonspace) if c == "#" else 0
        if kind >= 0 and (kind < 6 or self.leaf != "p"):
            self._open_leaf(matched, "h", nonspace)
            self.html_end, self.html_kind = _HTML_KINDS[kind][1], kind
            if self.html_end is not None and self.html_end.search(s, nonspace):
                self._close_leaf()
        elif level:
            self._open_leaf(matched, "", nonspace)
            self.doc.blocks.append(Heading(self.number, level, heading_text(s, nonspace + level)))
        else:
            self._close_boxes(matched, self.last_nonblank)
            if self.leaf != "p":
                self._close_leaf()
                self.leaf, self.para, self.para_owner = "p", [], self._owner()
            self._para_line(nonspace)

    def _open_leaf(self, matched: int, leaf: str, nonspace: int) -> None:
        """Close what this line does not continue, then open a leaf ('' for one that
        is this line alone)."""
        self._close_boxes(matched, self.last_nonblank)
        self._close_leaf()
        self.leaf = leaf
        self.leaf_start = self.leaf_last = self.number
        if leaf == "f":
            self.fence = _fence_at(self.s, nonspace) or "```"

    def _owner(self) -> Item | None:
        for box in reversed(self.stack):
            if box.item is not None:
                return box.item
        return None

    def _open_box(self, matched: int, box: _Box) -> int:
        self._close_boxes(matched, self.last_nonblank)
        self._close_leaf()
        self.stack.append(box)
        return len(self.stack)

    def _open_item(self, matched: int, nonspace: int, after: int) -> int:
        s = self.s
        owner = None
        depth = 0
        for box in self.stack[:matched]:
            if box.item is not None:
                owner, depth = box.item, depth + 1
        item = Item(self.number, depth, s[nonspace:after])
        content = len(s) - len(s[after:].lstrip(" "))
        blank = content >= len(s)
        spaces = content - after
        padding = 1 if blank or spaces >= 5 else spaces
        width = nonspace - self.pos + after - nonspace + padding
        matched = self._open_box(matched, _Box("i", self.pos + width, width, item))
        if owner is None:
            self.doc.blocks.append(item)
        else:
            owner.add(item)
        self.pos = min(after + padding, len(s))
        return matched

    def _open_table(self, matched: int, nonspace: int) -> None:
        self._open_leaf(matched, "t", nonspace)
        self.table = Table(self.number, split_cells(self.s[nonspace:]))
        self.doc.blocks.append(self.table)

    def _setext(self, level: int) -> None:
        first = self.para[0][0]
        text = " ".join(t for _, t in self.para).strip(TRIM)
        underlined, self.para = self.para, []
        self.leaf = ""
        self.doc.blocks.append(Heading(first, level, text, underlined))

    def _table_ahead(self, number: int, s: str, nonspace: int, depth: int) -> bool:
        """Whether this line is a table's header: the next line, inside the first `depth`
        containers, is a delimiter row with as many columns as this line has cells."""
        lines = self.lines
        if number >= len(lines):
            return False
        nxt = lines[number]
        if not _DELIMITER_RE.match(nxt.lstrip(" \t>")):
            return False
        inside = self._inside(expand_indent(nxt) if "\t" in nxt else nxt, depth)
        if inside is None:
            return False
        columns = delimiter_columns(inside)
        return columns > 0 and columns == len(split_cells(s[nonspace:]))

    def _inside(self, line: str, depth: int) -> str | None:
        """A line's text inside the first `depth` open containers (from its first
        non-space); None when it leaves them or is indented code there."""
        pos = 0
        for box in self.stack[:depth]:
            first = len(line) - len(line[pos:].lstrip(" "))
            if box.kind == ">":
                if first - pos > 3 or line[first : first + 1] != ">":
                    return None
                pos = first + (2 if line[first + 1 : first + 2] == " " else 1)
            elif first - pos < box.width:
                return None
            else:
                pos += box.width
        first = len(line) - len(line[pos:].lstrip(" "))
        return None if first - pos >= 4 else line[first:]

    # ───────────────────────── closing ─────────────────────────

    def _close_boxes(self, keep: int, last: int) -> None:
        """Close every open container past the first `keep` (and the leaf in them)."""
        if keep >= len(self.stack):
            return
        self._close_leaf()
        for box in self.stack[keep:]:
            if box.item is not None:
                box.item.last = max(box.item.line, last)
        del self.stack[keep:]

    def _close_leaf(self) -> None:
        leaf = self.leaf
        self.leaf = ""
        if leaf == "p":
            self._flush_para()
        elif leaf in ("f", "c"):
            self.doc.code.append((self.leaf_start, self.leaf_last))
        elif leaf == "h":
            self.doc.html.append((self.leaf_start, self.leaf_last))
        elif leaf == "t":
            self.table = None

    def _flush_para(self) -> None:
        owner, lines = self.para_owner, self.para
        self.para = []
        if not lines:
            return
        if owner is None:
            self.doc.blocks.append(Paragraph(lines))
        elif not owner.lines and not owner.parts:
            owner.lines = lines
        else:
            owner.add(lines)


def _fence_at(s: str, at: int) -> str | None:
    """The opening run of a code fence that starts at offset `at`, or None."""
    m = _FENCE_RE.match(s, at)
    if m is None or (m[1][0] == "`" and "`" in m[2]):
        return None
    return m[1]


def _is_break(s: str, at: int) -> bool:
    """Whether a thematic break (three or more `*`, `-` or `_`, spaces between) starts
    at offset `at`."""
    c = s[at]
    rest = s[at:]
    return c in "*-_" and rest.count(c) >= 3 and not rest.replace(c, "").strip(" \t")


def _list_end(s: str, at: int) -> int:
    found = _list_marker(s, at)
    assert found is not None
    return found[0]


def _list_marker(s: str, at: int) -> tuple[int, bool] | None:
    """(offset after the marker, ordered) when a list marker starts at offset `at`."""
    if s[at] in "-*+":
        after, ordered = at + 1, False
    else:
        m = _ORDERED_RE.match(s, at)
        if m is None:
            return None
        after, ordered = m.end(), True
    if after < len(s) and s[after] not in " \t":
        return None
    return after, ordered
