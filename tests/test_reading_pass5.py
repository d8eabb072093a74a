"""census.md §3.1, read as the rendered page shows it: three kinds of line a reader read
otherwise.

- A parenthesised remark after a Destination (`docs/x.md (new page, 2 sections)`) was split
  at the comma inside it: `2 sections)` was noted as a destination naming no path, and
  BS-HARVEST-01 failed, though the page names one destination with a remark. A separator
  inside balanced parentheses now splits nothing; a path-like word in the remark
  (`(was docs/old.md, moved)`) still names a destination, as any such word in a cell does.
- Character references outside aspects and fork markers: `S1 &rarr; reconciled` in the sync
  log was 'neither a dispatch nor a result' (BS-SYNC-01, and BS-SYNC-02 on a twin fork
  citing it); `## F1&mdash;Title [open]` and `## D2&mdash;Title` were no entry headings,
  and with spaces the title kept the `&mdash;` the page shows as the dash; a field name
  with `&#58;` (the colon) or `&nbsp;` in it (`- Resolves&#58; F1`) was no field and no
  issue, so the fork it resolves stayed silently unresolved.
- A field line with no colon (`- Resolves F1`) is read, with a `malformed-field` issue that
  fails the field's rule; with a zero-width space or BOM before the name, or a Unicode
  space inside it (`- \\u200bResolves F1`, `- Resolves\\u202fF1`), it was nothing at all.

Each case edits a copy of a healthy base session (fixtures/cases/base) on disk and runs
`census detect`; one runs crawl and check, which must agree.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from pipeline.parse.manifest import destinations
from tests.test_destination_cells import DEMO, _harvest, _repo

# ───────────────────────────── remarks in Destination cells ─────────────────────────────

OVERVIEW = "docs/architecture/overview.md"


@pytest.mark.parametrize(
    "remark",
    [
        "(new page, 2 sections)",
        "(new page; see below)",
        "(new page<br>2 sections)",
        "(new page and more)",
        "(new, see (below), later)",  # nested
    ],
)
def test_a_remark_with_a_separator_is_commentary(tmp_path: Path, remark: str) -> None:
    cell = f"{DEMO} {remark}"
    assert [path for _, path in destinations(cell)] == [DEMO]
    assert _harvest(_repo(tmp_path, DEMO, cell, link=False)) == ("pass", [], [])
    status, found, codes = _harvest(_repo(tmp_path / "linked", DEMO, cell))
    assert (status, codes) == ("fail", []), found
    assert any(f"/{DEMO} links into the session folder" in line for line in found), found


def test_a_linked_destination_with_a_remark_is_one_destination() -> None:
    assert [path for _, path in destinations(f"[demo]({DEMO}) (new, small)")] == [DEMO]


@pytest.mark.parametrize(
    "cell",
    [
        f"{OVERVIEW} (was {DEMO}, moved)",  # a path in the remark still names a destination
        f"{OVERVIEW} (new), {DEMO} (new)",  # separators between remarks still split
        f"{OVERVIEW} (new, {DEMO}",  # a `(` never closed is text: the comma splits
        f"{OVERVIEW} new), {DEMO}",  # as is a `)` with none before it
    ],
)
def test_a_path_beside_or_in_a_remark_still_names_its_document(tmp_path: Path, cell: str) -> None:
    assert DEMO in [path for _, path in destinations(cell)], destinations(cell)
    status, found, _ = _harvest(_repo(tmp_path, DEMO, cell))
    assert status == "fail", cell
    assert any(f"/{DEMO} links into the session folder" in line for line in found), found


@pytest.mark.parametrize(
    "cell", ["(" * 40_000 + "a, " * 20_000, "(a, " * 20_000 + ")" * 20_000, "(a) b, " * 20_000]
)
def test_a_cell_of_parentheses_is_read_in_linear_time(cell: str) -> None:
    started = time.perf_counter()
    destinations(cell)
    assert time.perf_counter() - started < 2, "quadratic in the cell's length"
