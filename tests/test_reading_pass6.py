"""census.md §3.1: struck-through text, fields written as headings, and two messages that did
not say what the census read.

- Struck-through text (`~~D2~~`, `~D2~`, `<del>D2</del>`, `<s>D2</s>`, `<strike>…</strike>`)
  shows on a GFM page as deleted: it names nothing. It was read as live in every value that
  names IDs (aspect refs, Resolves, Raised by, Reverses, Reversed by), in a fork's marker and
  in sync lines: `- aspect → ~~D2~~` was `clean` (an aspect whose only ref is crossed out),
  `[parked → ~~docs/x.md~~]` was parked somewhere, `twin (~~S2~~)` cited S2; and
  `Resolves: ~~F4~~ F1`, `twin (~~S9~~ S2)`, `→ ~~none yet~~ D2` failed falsely.
- A field written as an ATX heading (`### Result: fail` under `## Uselessness test` beside
  `- Result: pass`, `## Status: stopping`) was dropped without a word: a field is a bullet or
  a line of its own (§3.1), so it is now an `unread-field` issue naming the heading line, and
  the rule that needs the field fails.
- BS-COMPOSE-02 printed a turn at `16:05:00.5Z` as `16:05:00Z`, beside a Last compose of
  `16:05Z`: two times that look equal, and a failure. It now prints the fraction.
- `[parked: docs/x.md]` failed BS-FORK-01 as "parked with no destination": it has one, not
  written after an arrow, and the message now says so.

Each case edits a copy of a healthy base session (fixtures/cases/base) and runs `census
detect`; one runs crawl and check, which must agree.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pipeline.parse.lexical import shown
from tests.conftest import checked_rows
from tests.test_entry_reading import detect, failing, findings, session
from tests.test_late_ids import notes

# ───────────────────────────── struck-through text ─────────────────────────────

# The applied base's aspect whose refs are D2 and thesis, and the open base's twin raiser.
OPT_OUT = "→ D2, thesis"
TWIN_S2 = "- Raised by: twin (S2)"


def _replaced(old: str, new: str) -> Callable[[str], str]:
    def edit(text: str) -> str:
        assert old in text, old
        return text.replace(old, new, 1)

    return edit


@pytest.mark.parametrize(
    "refs",
    [
        "→ ~~D2, thesis~~",
        "→ ~~D2~~, ~~thesis~~",
        "→ ~D2~, <del>thesis</del>",
        "→ <s>D2</s>, <strike>thesis</strike>",
        "→ <DEL>D2, thesis</DEL>",
    ],
)
def test_an_aspect_whose_refs_are_all_struck_has_none(tmp_path: Path, refs: str) -> None:
    """The fail-open case: the page shows an aspect with every ref crossed out."""
    folder = session(tmp_path, "applied", "state.md", _replaced(OPT_OUT, refs))
    found = detect(folder, "session")
    assert [m for _, _, m in findings(found, "BS-ASPECT-01")] == [
        "aspect 'opt-out' has no refs; add → F#, D#, thesis, fragment:{name} or none yet"
    ], found


@pytest.mark.parametrize(
    "refs", ["→ ~~none yet~~ D2, thesis", "→ D2, <del>F9</del> thesis", "→ D2, thesis ~~D9~~"]
)
def test_a_struck_ref_beside_live_ones_is_no_ref(tmp_path: Path, refs: str) -> None:
    folder = session(tmp_path, "applied", "state.md", _replaced(OPT_OUT, refs))
    found = detect(folder, "session")
    assert failing(found) == set(), found
    assert findings(found, "BS-ASPECT-01") == [], found  # no `none yet` info either


@pytest.mark.parametrize("resolves", ["- Resolves: ~~F4~~ F1", "- Resolves: <del>F4</del>, F1"])
def test_a_struck_fork_in_resolves_is_not_resolved(tmp_path: Path, resolves: str) -> None:
    """F4 is parked in forks.md: a live `Resolves: F4` fails BS-FORK-02, a struck one not."""
    folder = session(tmp_path, "applied", "ledger.md", _replaced("- Resolves: F1", resolves))
    assert failing(detect(folder, "session")) == set()


def test_a_resolves_naming_only_a_struck_fork_resolves_none(tmp_path: Path) -> None:
    """F1 is open in the open base: `Resolves: F1` fails BS-FORK-02; `Resolves: ~~F1~~`
    shows an empty Resolves, which closes no fork (no note, as for `Resolves: none`)."""
    how = "digest second.\n"
    folder = session(tmp_path, "open", "ledger.md", _replaced(how, f"{how}- Resolves: ~~F1~~\n"))
    found = detect(folder, "session")
    assert failing(found) == set() and found["notes"] == [], found


@pytest.mark.parametrize(
    "raiser", ["- Raised by: twin (~~S9~~ S2)", "- Raised by: twin (<s>S9</s>, S2)"]
)
def test_a_struck_sync_in_raised_by_is_not_cited(tmp_path: Path, raiser: str) -> None:
    folder = session(tmp_path, "open", "forks.md", _replaced(TWIN_S2, raiser))
    assert failing(detect(folder, "session")) == set()


def test_a_twin_whose_only_sync_is_struck_cites_none(tmp_path: Path) -> None:
    """The fail-open case: `twin (~~S2~~)` shows a twin that cites no sync (BS-SYNC-02)."""
    folder = session(tmp_path, "open", "forks.md", _replaced(TWIN_S2, "- Raised by: twin (~~S2~~)"))
    found = detect(folder, "session")
    assert "BS-SYNC-02" in failing(found), found
    assert ("forks.md", 12, "twin-without-sync") in notes(found), found["notes"]


# The applied base's last ledger line (D4's How to apply).
LAST_LEDGER_LINE = "- Resolves: F2\n"


@pytest.mark.parametrize(
    "annotation",
    [
        "- Reverses: ~~D9~~ D1",
        "- Reversed by: <del>D9</del> D3",
        "Reversed by ~~D9~~ D3.",
        "- Note: superseded; ~~Reversed by D9~~",
    ],
)
def test_a_struck_decision_in_an_annotation_is_not_named(tmp_path: Path, annotation: str) -> None:
    """D9 is no entry: named live, BS-LEDGER-01 fails; struck, it names nothing."""
    folder = session(
        tmp_path,
        "applied",
        "ledger.md",
        _replaced(LAST_LEDGER_LINE, f"{LAST_LEDGER_LINE}\n{annotation}\n"),
    )
    assert failing(detect(folder, "session")) == set()


# The open base's parked fork F4 and its open fork F1.
PARKED = "[parked → docs/architecture/open-questions.md]"
OPEN_F1 = "Do security alerts ever ride in a digest? [open]"


def test_a_struck_parking_destination_is_no_destination(tmp_path: Path) -> None:
    """The fail-open case: the page shows a parked fork whose destination is crossed out."""
    marker = "[parked → ~~docs/architecture/open-questions.md~~]"
    folder = session(tmp_path, "open", "forks.md", _replaced(PARKED, marker))
    found = detect(folder, "session")
    assert [m for _, _, m in findings(found, "BS-FORK-01")] == [
        "F4 is parked with no destination; write [parked → where]"
    ], found


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (PARKED, "[~~open~~ parked → docs/architecture/open-questions.md]"),
        (PARKED, "[parked → ~~docs/x.md~~ docs/architecture/open-questions.md]"),
        (OPEN_F1, f"{OPEN_F1} ~~[parked → docs/x.md]~~"),
    ],
)
def test_struck_text_in_a_fork_marker_is_not_read(tmp_path: Path, old: str, new: str) -> None:
    folder = session(tmp_path, "open", "forks.md", _replaced(old, new))
    found = detect(folder, "session")
    assert failing(found) == set() and found["notes"] == [], found


def test_a_struck_outcome_in_a_sync_result_is_not_read(tmp_path: Path) -> None:
    result = "S3 → reconciled | 2026-07-10T16:05Z"
    struck = "S3 → ~~failed~~ reconciled | ~~2026-07-10T16:01Z~~ 2026-07-10T16:05Z"
    folder = session(tmp_path, "applied", "ops/sync-log.md", _replaced(result, struck))
    found = detect(folder, "session")
    assert failing(found) == set() and found["notes"] == [], found


def test_a_struck_token_before_the_live_one_is_not_read(tmp_path: Path) -> None:
    """Every field value is read as shown: `Status: ~~open~~ stopping` is stopping."""
    edit = _replaced("- Status: stopping", "- Status: ~~open~~ stopping")
    found = detect(session(tmp_path, "applied", "state.md", edit), "session")
    assert failing(found) == set() and found["notes"] == [], found


@pytest.mark.parametrize(
    "text",
    [
        "~2 weeks or ~5 users",  # a tilde before a word and after a space closes nothing
        "about ~ 5 ~ users",
        "~~~",
        "a ~~ b ~~ c",
        "~/notes.md and ~/x.md",
        "<s>not closed",
        "<del>a</s>",
        "<summary>F2</summary>",
        "`~~D2~~` D3",
        "F1 (~T2), F4 (~T5)",
        "D1 (~T3), D9 (~T4)",
        "(~08:00 local) → D4, fragment:send-window (~1 page)",
        "`~/.relay` → D4, (`~/.relay/tz`)",
        "use `<s>D2</s>` D3",
        "`a ~~b` c~~ D3",
        "~~a `b~~` D3",
    ],
)
def test_what_gfm_does_not_strike_stays(text: str) -> None:
    assert shown(text) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("~~D2~~ D3", "D3"),
        ("D2 ~~D3~~", "D2"),
        ("D2 ~~D3~~, D4", "D2, D4"),
        ("~D2~ D3", "D3"),
        ("<del>D2</del> D3", "D3"),
        ('<s class="x">D2</s> D3', "D3"),
        ("<strike>D2 D4</strike> D3", "D3"),
        ("~~D2 <!-- x --> D4~~ D3", "D3"),
        ("~~D2 `x` D4~~ D3", "D3"),
        ("`x` ~~D2~~ D3", "`x` D3"),
    ],
)
def test_struck_text_is_not_shown(text: str, expected: str) -> None:
    assert shown(text) == expected


@pytest.mark.parametrize(
    "text",
    ["~~a" * 30_000, "~a " * 30_000, "<del>a" * 20_000, "<s>" * 30_000, "`~~a~~` ~b" * 20_000],
)
def test_struck_text_is_read_in_linear_time(text: str) -> None:
    started = time.perf_counter()
    shown(text)
    assert time.perf_counter() - started < 2, "quadratic in the value's length"


# ───────────────────────────── fields written as headings ─────────────────────────────


def test_a_result_written_as_a_heading_is_not_dropped(tmp_path: Path) -> None:
    """`### Result: fail` under `- Result: pass`: two bullets fail BS-USELESS-01 (a
    duplicate field); a heading was dropped, and the move gate came out clean."""
    folder = session(
        tmp_path,
        "applied",
        "ops/manifest.md",
        _replaced("- Result: pass\n", "- Result: pass\n### Result: fail\n"),
    )
    found = detect(folder, "move")
    assert "BS-USELESS-01" in failing(found), found
    assert ("ops/manifest.md", 13, "unread-field") in notes(found), found["notes"]
    (message,) = [m for f, n, m in findings(found, "BS-USELESS-01") if n == 13]
    assert "'### Result: fail' is meant as a field but is not read as one (a heading" in message


def test_a_result_only_as_a_heading_fails_naming_it(tmp_path: Path) -> None:
    folder = session(
        tmp_path, "applied", "ops/manifest.md", _replaced("- Result: pass", "## Result: pass")
    )
    found = detect(folder, "move")
    # The heading ends the test's section, so the fields under it are outside it, and named.
    assert {(f, n) for f, n, _ in findings(found, "BS-USELESS-01")} == {
        ("ops/manifest.md", None),
        ("ops/manifest.md", 12),
        ("ops/manifest.md", 13),
        ("ops/manifest.md", 14),
    }, found


def test_a_status_written_as_a_heading_is_named(tmp_path: Path) -> None:
    folder = session(
        tmp_path, "applied", "state.md", _replaced("- Status: stopping", "## Status: stopping")
    )
    found = detect(folder, "session")
    assert ("state.md", 2, "unread-field") in notes(found), found["notes"]
    lines = {n: m for _, n, m in findings(found, "BS-STATE-01")}
    assert "'## Status: stopping' is meant as a field but is not read as one" in lines[2], found


@pytest.mark.parametrize(
    ("old", "new", "rule", "line"),
    [
        ("- Status: stopping", "Status: stopping\n---", "BS-STATE-01", 2),
        ("- Status: stopping", "Status: stopping\n===", "BS-STATE-01", 2),
        ("- Status: stopping", "**Status:** stopping\n---", "BS-STATE-01", 2),
        (
            "- Last compose: 2026-07-10T16:05Z",
            "\nLast compose: 2026-07-10T16:05Z\n===",
            "BS-COMPOSE-01",
            7,
        ),
    ],
)
def test_a_field_written_as_a_setext_heading_is_read_as_an_atx_one(
    tmp_path: Path, old: str, new: str, rule: str, line: int
) -> None:
    """`Status: stopping` over `---` or `===` was read as the Status field, while `## Status:
    stopping` is a heading the rule fails on: two readings of one heading (found by a hunt).
    Both now are a heading, noted at the field's line, and the rule fails."""
    folder = session(tmp_path, "applied", "state.md", _replaced(old, new))
    found = detect(folder, "session")
    noted = [n for n in found["notes"] if n["code"] == "unread-field"]
    assert noted and noted[0]["line"] == line, found["notes"]
    assert "over '" in noted[0]["message"], noted
    assert rule in failing(found), found


@pytest.mark.parametrize(
    ("new", "fails"),
    [
        ("- Current status: stopping", True),
        ("- Session status: stopping", True),
        ("Stage: converging", True),
        ("- **State:** stopping", True),
        # Beside the Status bullet: a note, failing the rule only when it says otherwise.
        ("- Status: stopping\n- Current status: stopping", False),
        ("- Status: stopping\n- Stage: open", True),
        ("- Status: stopping\n- Status now: harvested", True),
    ],
)
def test_a_status_under_another_name_is_named(tmp_path: Path, new: str, fails: bool) -> None:
    """`Current status: stopping` failed BS-STATE-01 with "no 'Status:' bullet" and no line,
    so the reader could not see which line was meant (found by a hunt): a malformed-field
    note now names it."""
    folder = session(tmp_path, "applied", "state.md", _replaced("- Status: stopping", new))
    found = detect(folder, "session")
    line = 2 + new.count("\n")
    assert ("state.md", line, "malformed-field") in notes(found), found["notes"]
    named = [n for _, n, _ in findings(found, "BS-STATE-01")]
    assert (line in named) == fails, found


@pytest.mark.parametrize(
    ("new", "fails"),
    [
        ("Updated: 2026-07-10T16:05Z", True),
        ("*Last updated:* 2026-07-10T16:05Z", True),
        ("- As of: 2026-07-10T16:05Z", True),
        ("Current as of: 2026-07-10T16:05Z\n\nUpdated: 2026-07-10T16:05Z", False),
    ],
)
def test_a_thesis_stamp_under_another_name_is_named(tmp_path: Path, new: str, fails: bool) -> None:
    """`Updated: 2026-…` failed BS-THESIS-01 and BS-COMPOSE-01 with "no 'Current as of:'
    stamp" and no line (found by a hunt): a malformed-field note names it, failing both
    only when no stamp is read."""
    stamp = "Current as of: 2026-07-10T16:05Z"
    folder = session(tmp_path, "applied", "thesis.md", _replaced(stamp, new))
    found = detect(folder, "session")
    line = 2 + new.count("\n")
    assert ("thesis.md", line, "malformed-field") in notes(found), found["notes"]
    for rule in ("BS-THESIS-01", "BS-COMPOSE-01"):
        assert (line in [n for _, n, _ in findings(found, rule)]) == fails, found


def test_a_status_heading_below_an_applied_round_fails_the_move(tmp_path: Path) -> None:
    """A Status heading below the applied round may be a later one: the move rule fails too,
    as for a Status hidden in a table or an HTML block."""
    folder = session(
        tmp_path, "applied", "ops/manifest.md", lambda t: t + "\n## Status: proposed\n"
    )
    found = detect(folder, "move")
    assert {"BS-MANIFEST-01", "CENSUS-MOVE-01"} <= failing(found), found


@pytest.mark.parametrize(
    ("file", "old", "new", "rule"),
    [
        (
            "state.md",
            "- Last compose: 2026-07-10T16:05Z",
            "# Last compose: 2026-07-10T16:05Z",
            "BS-COMPOSE-01",
        ),
        ("ledger.md", LAST_LEDGER_LINE, f"{LAST_LEDGER_LINE}### Resolves: F4\n", "BS-FORK-02"),
        ("forks.md", "- Raised by: probe", "### Raised by: twin (S9)", "BS-SYNC-02"),
    ],
)
def test_a_field_written_as_a_heading_fails_its_rule(
    tmp_path: Path, file: str, old: str, new: str, rule: str
) -> None:
    folder = session(tmp_path, "applied", file, _replaced(old, new))
    found = detect(folder, "session")
    assert rule in failing(found), found
    assert "unread-field" in {code for _, _, code in notes(found)}, found["notes"]


@pytest.mark.parametrize(
    ("file", "heading"),
    [
        ("state.md", "## Aspect map: derived from basis"),
        ("ops/manifest.md", "## Uselessness test: cold reader"),
        ("ledger.md", "### Reversed by: D1"),  # the phrase, read anywhere in an entry
        ("ledger.md", "### Why: background"),  # beside D-entries' own Why bullets
        ("ledger.md", "## How to apply: reading guide"),
    ],
)
def test_a_section_heading_with_a_colon_is_no_field(
    tmp_path: Path, file: str, heading: str
) -> None:
    """Guard: a heading whose name is no field of its file, or the ledger's phrase."""
    name = heading.split(":")[0]
    old = {"state.md": "## Aspect map", "ops/manifest.md": "## Uselessness test"}.get(file)
    edit = (
        _replaced(old, heading)
        if old
        else _replaced(LAST_LEDGER_LINE, f"{LAST_LEDGER_LINE}{heading}\n")
    )
    folder = session(tmp_path, "applied", file, edit)
    found = detect(folder, "move")
    assert found["notes"] == [], (name, found["notes"])
    assert failing(found) == set(), found


# ───────────────────────────── messages ─────────────────────────────


def test_a_turn_time_is_printed_with_its_fraction(tmp_path: Path) -> None:
    """Last compose is 2026-07-10T16:05Z: a turn half a second later makes it stale."""
    turn = "---\n### T10 · 2026-07-10T16:05:00.5Z\nuser: one more thing\n"
    folder = session(tmp_path, "applied", "ops/capture.md", lambda t: t + turn)
    found = detect(folder, "manifest")
    assert [m for _, _, m in findings(found, "BS-COMPOSE-02")] == [
        "Last compose 2026-07-10T16:05Z is not later than the newest capture turn "
        "(2026-07-10T16:05:00.5Z); the compose is stale"
    ], found


def test_a_destination_not_after_an_arrow_is_named(tmp_path: Path) -> None:
    folder = session(
        tmp_path,
        "open",
        "forks.md",
        _replaced(PARKED, "[parked: docs/architecture/open-questions.md]"),
    )
    found = detect(folder, "session")
    assert [m for _, _, m in findings(found, "BS-FORK-01")] == [
        "F4 is parked, but its destination is not written after an arrow "
        "([parked: docs/architecture/open-questions.md]); write [parked → where]"
    ], found


@pytest.mark.parametrize("marker", ["[parked]", "[parked → ]", "[**parked**:]"])
def test_a_parked_marker_with_nothing_after_it_has_no_destination(
    tmp_path: Path, marker: str
) -> None:
    folder = session(tmp_path, "open", "forks.md", _replaced(PARKED, marker))
    found = detect(folder, "session")
    assert [m for _, _, m in findings(found, "BS-FORK-01")] == [
        "F4 is parked with no destination; write [parked → where]"
    ], found


# ───────────────────────────── crawl and check ─────────────────────────────


def test_crawl_and_check_agree_with_detect(tmp_path: Path) -> None:
    folder = session(tmp_path, "applied", "state.md", _replaced(OPT_OUT, "→ ~~D2~~ <s>thesis</s>"))
    ledger = folder / "ledger.md"
    text = ledger.read_text(encoding="utf-8")
    ledger.write_text(text.replace("- Resolves: F1", "- Resolves: ~~F4~~ F1"), encoding="utf-8")
    manifest = folder / "ops" / "manifest.md"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(text.replace("- Result: pass\n", "- Result: pass\n### Result: fail\n"))
    expected = {r["rule"]: r["status"] for r in detect(folder, "move")["rules"]}
    assert expected["BS-ASPECT-01"] == expected["BS-USELESS-01"] == "fail", expected
    assert expected["BS-FORK-02"] == "pass", expected
    query = "SELECT DISTINCT rule_id, status FROM rule_results"
    rows = checked_rows(tmp_path / "repo", tmp_path / "out", query)
    assert {rule: status for rule, status in rows if rule in expected} == expected


@pytest.mark.parametrize(
    "heading", ["## Status: history of the posture", "## Last compose: how we do it"]
)
def test_a_heading_that_begins_with_a_field_name_but_gives_no_value_is_a_section(
    tmp_path: Path, heading: str
) -> None:
    """§3.1 allows trailing text after a heading's name: a heading whose text is no value
    the field takes is a section heading (a hunt found these failing BS-STATE-01)."""
    folder = session(tmp_path, "applied", "state.md", lambda t: t + f"\n{heading}\n\nText.\n")
    found = detect(folder, "move")
    assert found["notes"] == [] and failing(found) == set(), found


def test_a_free_text_field_written_only_as_a_heading_still_fails(tmp_path: Path) -> None:
    """`### Why: users asked` in place of the bullet is a section heading (free text cannot
    tell a field from a title), and the entry has no Why: BS-LEDGER-01 fails all the same."""
    folder = session(
        tmp_path, "applied", "ledger.md", _replaced("- Why: users asked", "### Why: users asked")
    )
    assert "BS-LEDGER-01" in failing(detect(folder, "session"))


@pytest.mark.parametrize(
    ("file", "old", "new", "rule"),
    [
        # `(~T2), F4 (~T5)` strikes nothing on GitHub: F4 is still named, and still parked.
        ("ledger.md", "- Resolves: F1", "- Resolves: F1 (~T2), F4 (~T5)", "BS-FORK-02"),
    ],
)
def test_tildes_that_strike_nothing_on_the_page_hide_no_id(
    tmp_path: Path, file: str, old: str, new: str, rule: str
) -> None:
    folder = session(tmp_path, "converging", file, _replaced(old, new))
    assert rule in failing(detect(folder, "session"))


LAST_COMPOSE = "- Last compose: 2026-07-10T16:05Z"


@pytest.mark.parametrize(
    ("new", "fails"),
    [
        # Beside the field, another time passed unread (found by a hunt).
        (f"{LAST_COMPOSE}\n- Last composed: 2026-07-11T09:00Z (after S3)", True),
        (f"{LAST_COMPOSE}\n- **Composed at:** 2026-07-10T18:05+02:00", False),
        ("- Last composed: 2026-07-10T16:05Z", True),
    ],
)
def test_a_last_compose_under_another_name_is_named(tmp_path: Path, new: str, fails: bool) -> None:
    folder = session(tmp_path, "applied", "state.md", _replaced(LAST_COMPOSE, new))
    found = detect(folder, "session")
    line = 6 + new.count("\n")
    assert ("state.md", line, "malformed-field") in notes(found), found["notes"]
    named = [n for _, n, _ in findings(found, "BS-COMPOSE-01")]
    assert (line in named) == fails, found
