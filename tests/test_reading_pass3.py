"""census.md §3.1, fail closed: four lines meant as an aspect, a turn, a timestamp or a field
were dropped or misread without a word.

- A bullet in the aspect map inside an HTML block (`<details>`, `<div>`: no blank line around
  it, so CommonMark reads no Markdown) was no aspect and no issue: BS-ASPECT-01 and -02
  passed over a hidden `none yet` gap.
- A capture heading with a timestamp but no readable `T#` (`### 7 · …`, `### #7 · …`,
  `### 2026-…Z — user`) was no turn and no issue, so BS-COMPOSE-02 passed over it; only a
  timestamp alone was noted.
- A time range in a turn heading (`2026-07-10T15:55-16:00Z`) was read as 15:55 at offset
  −16:00, its `Z` ignored: a time nobody wrote, with no note.
- `Round: 2` / `Status: proposed` in a `<details>` block below an applied round failed
  BS-MANIFEST-01 but left CENSUS-MOVE-01 passing, though the same lines hidden as a lazy
  continuation failed it.

Each case edits a copy of a healthy base session (fixtures/cases/base) and runs `census detect`;
one runs crawl and check, which must agree.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.check import check
from pipeline.crawl import crawl
from pipeline.engine import connect
from pipeline.parse.lexical import find_timestamp, parse_timestamp, stamp
from pipeline.store import Out
from tests.test_entry_reading import detect, failing, findings, session, statuses
from tests.test_late_ids import appended, notes

GAP = "quotas — per-account limits → none yet"


@pytest.mark.parametrize(
    "html",
    [
        f"\n<details>\n<summary>Later aspects</summary>\n- {GAP}\n</details>\n",
        f"\n<div>\n- {GAP}\n</div>\n",
        f"<details>\n- {GAP}\n</details>\n",  # no blank line before the block
        f"\n<ul>\n<li>{GAP}</li>\n</ul>\n",
    ],
)
def test_an_aspect_in_an_html_block_fails_both_aspect_rules(tmp_path: Path, html: str) -> None:
    found = detect(appended(tmp_path, "converging", "state.md", html), "manifest")
    assert {"BS-ASPECT-01", "BS-ASPECT-02"} <= failing(found), found
    (note,) = notes(found)
    assert note[0] == "state.md" and note[2] == "aspect-in-html", found["notes"]
    for rule in ("BS-ASPECT-01", "BS-ASPECT-02"):
        assert [(f, n) for f, n, _ in findings(found, rule)] == [("state.md", note[1])], rule


def test_an_aspect_in_html_with_blank_lines_is_read(tmp_path: Path) -> None:
    """Guard: with a blank line after `<details>` the bullet is Markdown, an aspect like any."""
    html = f"\n<details>\n\n- {GAP}\n\n</details>\n"
    found = detect(appended(tmp_path, "converging", "state.md", html), "manifest")
    assert failing(found) == {"BS-ASPECT-02"} and found["notes"] == [], found


def test_html_outside_the_aspect_map_holds_no_aspect(tmp_path: Path) -> None:
    """Guard: a bullet in an HTML block under a later section is no aspect and no issue."""
    html = f"\n## Notes\n<details>\n- {GAP}\n</details>\n"
    found = detect(appended(tmp_path, "converging", "state.md", html), "manifest")
    assert failing(found) == set() and found["notes"] == [], found


CAPTURE_AT = "2026-07-11T09:00Z"  # later than the base's Last compose (2026-07-10T16:05Z)
EARLY_AT = "2026-07-10T15:55Z"  # earlier than it, later than the newest turn (T9, 15:52Z)


@pytest.mark.parametrize(
    "heading",
    [
        f"### 7 · {CAPTURE_AT}",
        f"### #7 · {CAPTURE_AT}",
        f"### (7) {CAPTURE_AT}",
        f"### S7 · {CAPTURE_AT}",
        f"### user · {CAPTURE_AT}",
        f"### {CAPTURE_AT} — user",
        f"### {CAPTURE_AT} · T9x draft",
        f"### {CAPTURE_AT}",
    ],
)
def test_a_turn_heading_without_its_id_fails_compose_freshness(
    tmp_path: Path, heading: str
) -> None:
    text = f"---\n{heading}\nuser: one more thing\n"
    found = detect(appended(tmp_path, "converging", "ops/capture.md", text), "manifest")
    assert statuses(found)["BS-COMPOSE-02"] == "fail", heading
    assert ("ops/capture.md", 34, "bad-turn-heading") in notes(found), found["notes"]


@pytest.mark.parametrize(
    "heading",
    [
        f"### user · {EARLY_AT}",
        f"### 7 · {EARLY_AT}",
        f"### {EARLY_AT}",
        f"### Late note · {EARLY_AT}",
        f"## 7 · {EARLY_AT}",
    ],
)
def test_a_turn_heading_without_its_id_fails_even_before_the_compose(
    tmp_path: Path, heading: str
) -> None:
    """A turn heading with no T# is a turn that cannot be fully read: it fails BS-COMPOSE-02
    with its note even when its time is before Last compose (the lead's decision at stop 55:
    `### user · …` and `### Late note · …` agree, and both fail closed)."""
    text = f"---\n{heading}\nuser: one more thing\n"
    found = detect(appended(tmp_path, "converging", "ops/capture.md", text), "manifest")
    assert statuses(found)["BS-COMPOSE-02"] == "fail", heading
    assert notes(found) == [("ops/capture.md", 34, "bad-turn-heading")], found["notes"]


@pytest.mark.parametrize(
    "heading",
    [
        f"### Late note · {CAPTURE_AT}",
        f"### Notes from {CAPTURE_AT}",
        f"### Draft T9x from {CAPTURE_AT}",
    ],
)
def test_a_level_3_capture_heading_with_a_later_timestamp_makes_the_compose_stale(
    tmp_path: Path, heading: str
) -> None:
    """`### Late note · …` (a label that is no T#, number or speaker) was a section title:
    no note, and BS-COMPOSE-02 passed over a turn later than Last compose (found by a hunt).
    A level-3 heading, the turn's level, with a timestamp is a turn without its ID."""
    text = f"---\n{heading}\nuser: one more thing\n"
    found = detect(appended(tmp_path, "converging", "ops/capture.md", text), "manifest")
    assert statuses(found)["BS-COMPOSE-02"] == "fail", heading
    assert notes(found) == [("ops/capture.md", 34, "bad-turn-heading")], found["notes"]


@pytest.mark.parametrize(
    "heading",
    [
        f"## Late note · {CAPTURE_AT}",
        f"#### Notes from {CAPTURE_AT}",
        # Underlined with `===`, written as a heading (until stop 67 read as talk; a hunt).
        f"Late note · {CAPTURE_AT}\n=========================",
    ],
)
def test_a_section_heading_with_a_later_timestamp_makes_the_compose_stale(
    tmp_path: Path, heading: str
) -> None:
    """At a level other than a turn's, a heading with a date and time and section words is
    no turn, but the capture holds something at that time: until stop 56 the time was
    dropped and BS-COMPOSE-02 passed over a section written after the compose."""
    text = f"---\n{heading}\nuser: one more thing\n"
    found = detect(appended(tmp_path, "converging", "ops/capture.md", text), "manifest")
    assert statuses(found)["BS-COMPOSE-02"] == "fail", heading
    assert notes(found) == [("ops/capture.md", 34, "stamped-section")], found["notes"]


@pytest.mark.parametrize("heading", [f"## Late note · {EARLY_AT}", f"#### Notes from {EARLY_AT}"])
def test_a_section_heading_with_an_earlier_timestamp_is_only_noted(
    tmp_path: Path, heading: str
) -> None:
    """Guard: such a section before Last compose leaves the compose fresh; its note stays."""
    text = f"---\n{heading}\nuser: one more thing\n"
    found = detect(appended(tmp_path, "converging", "ops/capture.md", text), "manifest")
    assert failing(found) == set(), heading
    assert notes(found) == [("ops/capture.md", 34, "stamped-section")], found["notes"]


@pytest.mark.parametrize(
    "heading", ["## Day 2 — 2026-07-11", "### Follow-ups", "### 7 things to check"]
)
def test_section_headings_in_capture_stay_clean(tmp_path: Path, heading: str) -> None:
    text = f"---\n{heading}\nuser: one more thing\n"
    found = detect(appended(tmp_path, "converging", "ops/capture.md", text), "manifest")
    assert failing(found) == set() and found["notes"] == [], found


@pytest.mark.parametrize(
    "raw",
    ["2026-07-10T15:55-16:00Z", "2026-07-10T15:55+01:00Z", "2026-07-10T12:00-2026-07-10T12:30Z"],
)
def test_an_offset_with_more_glued_to_it_is_no_timestamp(raw: str) -> None:
    found = find_timestamp(f"T10 · {raw} (call)")
    assert found == raw
    assert parse_timestamp(found) is None and stamp(raw) == (None, False)


@pytest.mark.parametrize(
    "raw", ["2026-07-10T15:55-05:00", "2026-07-10T15:55+0100", "2026-07-10T15:55Z"]
)
def test_plain_offsets_still_read(raw: str) -> None:
    assert find_timestamp(f"T10 · {raw}. more") == raw and parse_timestamp(raw) is not None


def test_a_time_range_in_a_turn_heading_fails_closed(tmp_path: Path) -> None:
    """15:55-16:00Z, read as 15:55 at −16:00, is 2026-07-11T07:55Z: later than the compose,
    so the rule failed on a time nobody wrote; now the turn's time is unreadable."""
    text = "---\n### T10 · 2026-07-10T15:55-16:00Z\nuser: quick follow-up\n"
    found = detect(appended(tmp_path, "converging", "ops/capture.md", text), "manifest")
    assert ("ops/capture.md", 34, "bad-timestamp") in notes(found), found["notes"]
    ((file, line, message),) = findings(found, "BS-COMPOSE-02")
    assert (file, line) == ("ops/capture.md", 34)
    assert message.startswith("could not read:") and "2026-07-10T15:55-16:00Z" in message


HIDDEN_ROUND = "\n<details>\nRound: 2\nStatus: proposed\n</details>\n"


def test_a_round_hidden_in_html_below_an_applied_round_fails_the_move(tmp_path: Path) -> None:
    found = detect(appended(tmp_path, "applied", "ops/manifest.md", HIDDEN_ROUND), "move")
    assert {"BS-MANIFEST-01", "CENSUS-MOVE-01"} <= failing(found), found
    lines = [(file, line) for file, line, _ in findings(found, "CENSUS-MOVE-01")]
    assert lines == [("ops/manifest.md", 17), ("ops/manifest.md", 18)]


def test_a_round_hidden_in_html_above_the_applied_status_leaves_the_move(tmp_path: Path) -> None:
    """Guard: fields hidden before the round is applied cannot hide a later round."""
    folder = appended(tmp_path, "applied", "ops/manifest.md", "")
    path = folder / "ops" / "manifest.md"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("Round: 1\n", "<details>\nGaps: none\n</details>\n\nRound: 1\n"))
    found = detect(folder, "move")
    assert "CENSUS-MOVE-01" not in failing(found), found


def test_crawl_and_check_agree_with_detect(tmp_path: Path) -> None:
    folder = appended(tmp_path, "applied", "ops/manifest.md", HIDDEN_ROUND)
    with open(folder / "state.md", "a", encoding="utf-8") as handle:
        handle.write(f"<details>\n- {GAP}\n</details>\n")
    expected = {r["rule"]: r["status"] for r in detect(folder, "move")["rules"]}
    assert {"BS-ASPECT-01", "BS-ASPECT-02", "CENSUS-MOVE-01"} <= {
        rule for rule, status in expected.items() if status == "fail"
    }
    out = tmp_path / "out"
    crawl([str(tmp_path / "repo")], str(out))
    check(str(out))
    rows = (
        connect(Out(str(out)))
        .execute("SELECT DISTINCT rule_id, status FROM rule_results")
        .fetchall()
    )
    assert {rule: status for rule, status in rows if rule in expected} == expected


@pytest.mark.parametrize(
    "heading", ["<h2>Aspect map</h2>", "<h2 id='map'>Aspect map</h2>", "<p><b>Aspect map</b></p>"]
)
def test_an_aspect_map_under_an_html_heading_fails_both_aspect_rules(
    tmp_path: Path, heading: str
) -> None:
    """`<h2>Aspect map</h2>` right over the bullets: CommonMark reads them as the heading's
    HTML block, so no aspect was read, BS-ASPECT-02 failed on no map, and BS-ASPECT-01 passed
    with no note (found by a hunt). Each bullet is an aspect not read, as in `<details>`."""
    folder = session(
        tmp_path, "converging", "state.md", lambda t: t.replace("## Aspect map", heading)
    )
    found = detect(folder, "manifest")
    assert {"BS-ASPECT-01", "BS-ASPECT-02"} <= failing(found), found
    hidden = [n for n in notes(found) if n[2] == "aspect-in-html"]
    assert [n[1] for n in hidden] == [9, 10, 11], found["notes"]
