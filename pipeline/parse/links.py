"""Links in a repository's Markdown documents, found by a CommonMark parser.

Inline links, images, reference definitions, autolinks and href/src in inline
HTML count; text in code spans and code blocks never does, which is why this
uses markdown-it rather than a regular expression over the raw text.
"""

from __future__ import annotations

import posixpath
import re
import threading
import unicodedata
from bisect import bisect_left
from collections.abc import Callable
from functools import lru_cache
from html.parser import HTMLParser
from itertools import dropwhile
from typing import Any
from urllib.parse import unquote

_SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")

Link = tuple[int, str, str]  # (1-based line, kind, target as written)


_LINK_TOKENS = ("link_open", "image", "html_inline")


def _recording_start(rule: Any) -> Any:
    """Wrap an inline rule so that the link tokens it makes remember where they start.

    Inline tokens carry no position, and counting line breaks between them is wrong
    after a code span or an image description that spans lines (markdown-it folds
    those line ends away), so each link token keeps its offset in the inline source.
    """

    def rule_with_start(state: Any, silent: bool) -> bool:
        start, before = state.pos, len(state.tokens)
        found = bool(rule(state, silent))
        if found and not silent:
            # A reference link (`[text][label]`, `[label]`) ends at its `]`, an inline one at
            # its `)`: the reference's target is its definition's, a link of its own.
            reference = state.src[state.pos - 1 : state.pos] == "]"
            for token in state.tokens[before:]:
                if token.type in _LINK_TOKENS:
                    token.meta.setdefault("start", start)
                    token.meta.setdefault("reference", reference)
        return found

    return rule_with_start


# How deep blocks may nest (markdown-it's commonmark preset says 20): at the limit the parser
# drops the rest of the document without a word, so a document that reaches it is not read
# (TooDeep), never read as far as it went. A list nested ten deep reached 20.
MAX_NESTING = 100
# Inline nesting (brackets, emphasis) keeps the preset's limit: past it the text is read as
# text, nothing dropped, and a deeper limit costs time on `[[[…` in proportion.
INLINE_NESTING = 20


class TooDeep(Exception):
    """A document nested deeper than MAX_NESTING: the parser read no further."""


def _nesting(limit: int) -> Callable[[Any], None]:
    """A core rule that sets the parser's nesting limit for the rules after it."""

    def set_limit(state: Any) -> None:
        state.md.options["maxNesting"] = limit

    return set_limit


# One parser per thread: its nesting limit changes between the block and inline passes.
_PARSERS = threading.local()


def _parser() -> Any:
    md = getattr(_PARSERS, "md", None)
    if md is None:
        md = _PARSERS.md = _new_parser()
    return md


def _new_parser() -> Any:
    # Imported here so that `census detect` pays for markdown-it only when it reads links.
    from markdown_it import MarkdownIt, rules_inline
    from mdit_py_plugins.footnote import footnote_plugin

    # GitHub's footnotes: a definition's text is Markdown, its links links (spec §3.1, GFM);
    # GitHub's tables, whose cells are split at their pipes before each is read, so a backtick
    # in one cell opens no code span that hides a link in the next.
    # Not Pandoc's inline footnotes, `^[…]`, which GitHub does not have: there `x^[1](path)`
    # is a link, which the plugin's default hid (found by a hunt). Every footnote definition's
    # links are links, as every reference definition is: the plugin's tail would keep only
    # the referenced ones, matched by exact case, the last of a label winning, where GitHub
    # matches any case and the first (found by a hunt: a link in one went unread).
    md = MarkdownIt("commonmark").use(footnote_plugin, inline=False)
    md.core.ruler.disable("footnote_tail")
    md.enable("table")
    md.core.ruler.before("block", "block_nesting", _nesting(MAX_NESTING))
    md.core.ruler.before("inline", "inline_nesting", _nesting(INLINE_NESTING))
    for name in ("link", "image", "autolink", "html_inline"):
        md.inline.ruler.at(name, _recording_start(getattr(rules_inline, name)))
    return md


def extract_links(text: str) -> list[Link]:
    env: dict[str, Any] = {}
    links: list[Link] = []
    tokens = _parser().parse(text, env)
    if any(token.level >= MAX_NESTING - 1 for token in tokens):
        raise TooDeep(
            f"blocks nested past the Markdown parser's {MAX_NESTING} levels (a list level "
            "takes two, a quote one), after which it reads no further; not read"
        )
    for token in tokens:
        if token.type == "html_block" and token.map:
            links += _html_links(token.content, token.map[0] + 1)
        if token.type != "inline" or not token.children or not token.map:
            continue
        breaks: list[int] | None = None
        for child in token.children:
            if child.type not in _LINK_TOKENS or child.meta.get("reference"):
                continue  # a use of a reference: its definition is the link (spec §3)
            # The inline source is the block's text with its line ends kept.
            start = child.meta.get("start", 0)
            breaks = _line_breaks(token.content) if breaks is None else breaks
            line = token.map[0] + 1 + bisect_left(breaks, start)
            if child.type == "link_open":
                kind = "autolink" if child.markup == "autolink" else "inline"
                links.append((line, kind, str(child.attrs.get("href", ""))))
            elif child.type == "image":
                links.append((line, "image", str(child.attrs.get("src", ""))))
            else:
                links += _html_links(child.content, line)
    # Every definition is a link, a label's second one too (the parser keeps it aside: only
    # the first is what the label's uses lead to).
    for ref in [*env.get("references", {}).values(), *env.get("duplicate_refs", [])]:
        ref_map = ref.get("map") or [0]
        links.append((ref_map[0] + 1, "reference", str(ref.get("href", ""))))
    return links


def _html_links(content: str, first_line: int) -> list[Link]:
    """The href and src attributes of HTML's tags (`xlink:href` too), as a browser reads
    them: not in its comments (`<!-- was <a href=…> -->` links nowhere, as `<!-- [old](…)
    -->` does not), its text (`&lt;a href=…&gt;`, `href=x` in a sentence) or another
    attribute's value (until stop 67 each of these failed BS-HARVEST-01; found by hunts)."""
    if "=" not in content:
        return []
    reader = _TagLinks(first_line)
    reader.feed(content)
    reader.close()
    return reader.found


class _TagLinks(HTMLParser):
    """The links of HTML's start tags, with their lines."""

    def __init__(self, first_line: int) -> None:
        super().__init__(convert_charrefs=True)
        self.first_line = first_line
        self.found: list[Link] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        line = self.first_line + self.getpos()[0] - 1
        for name, value in attrs:
            # href or src (SVG's `xlink:href` too), not one that only ends so (`data-src`).
            if value is not None and name.rsplit(":", 1)[-1] in ("href", "src"):
                self.found.append((line, "html", value))

    handle_startendtag = handle_starttag


def _line_breaks(text: str) -> list[int]:
    """Offsets of the line ends in text: the line of an offset is a bisection, where
    counting the line ends before each of many links would be quadratic."""
    return [m.start() for m in re.finditer("\n", text)]


def resolve(document: str, target: str, root: tuple[str, ...] = ()) -> str | None:
    """A link target as a repository-relative path; None for URLs, anchors and escapes.

    `root` names the folders the repository root sits in, outermost first and the root's
    own name last: a path that climbs out of the root comes back into it through them."""
    if _SCHEME_RE.match(target) or target.startswith("//"):
        return None  # a URL, or a scheme-relative one (//host/path)
    path = unquote(target.split("#", 1)[0].split("?", 1)[0]).strip()
    if not path:
        return None
    base = "" if path.startswith("/") else posixpath.dirname(document)
    joined = posixpath.normpath(posixpath.join(base, path.lstrip("/")))
    if joined == ".." or joined.startswith("../"):
        return back_inside(joined.split("/"), root)
    return "" if joined == "." else joined


def back_inside(parts: list[str], root: tuple[str, ...]) -> str | None:
    """The repository path of a normalised path that climbs k folders above the root, when
    it names the k folders it climbed out of on the way back (`../repo/docs/x.md` from the
    root of `repo` is docs/x.md, as the disk opens it); None when it stays outside."""
    climbed = len(parts) - len(list(dropwhile(lambda part: part == "..", parts)))
    back = parts[climbed:]
    if climbed > len(root):
        return None
    # The names climbed back through as the disk compares them: any case, either form.
    named = root[len(root) - climbed :]
    if tuple(map(same_name, back[:climbed])) != tuple(map(same_name, named)):
        return None
    return "/".join(back[climbed:])


def is_inside(path: str, folder: str) -> bool:
    """Whether path is folder itself or below it, on a path-segment boundary, as the disks
    people write harvests on compare names: blind to case and to Unicode form (a name macOS
    wrote decomposed, a link typed composed, `Demo/` for `demo/`)."""
    if path == folder or path.startswith(folder + "/"):
        return True
    path, folder = same_name(path), same_name(folder)
    return path == folder or path.startswith(folder + "/")


@lru_cache(maxsize=1 << 16)
def composed(text: str) -> str:
    """The text in Unicode's composed form (NFC), in which two spellings of a name compare.
    Remembered: a link's path is compared with the folder of every topic of its repository."""
    return unicodedata.normalize("NFC", text)


@lru_cache(maxsize=1 << 16)
def same_name(text: str) -> str:
    """A name as a disk blind to case and to Unicode forms compares it (macOS, Windows)."""
    return composed(composed(text).casefold())
