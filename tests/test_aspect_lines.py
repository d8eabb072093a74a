"""census.md §3.1, fail closed, for state.md's aspect map: an aspect written as a plain line
or a table row inside the map, or as a bullet under a later heading that names aspects, was
dropped without a word, so a `none yet` gap passed the manifest gate. Each is now a parse
issue that fails BS-ASPECT-01 and BS-ASPECT-02 (the gap rule had passed over the unread line);
a bullet of that shape under `## Notes` beside a map stays a note, and prose in the map stays
prose. So is an aspect written as a line of the aspect above it (lazily or indented), whose
refs passed for that aspect's; refs alone on that line are the aspect's.

Each case appends to a copy of the healthy converging base (fixtures/cases/base), clean at
the manifest gate, and runs `census detect`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.test_entry_reading import detect, failing, session
from tests.test_late_ids import appended, notes

GAP = "quiet-hours — no sends at night → none yet"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (f"\n{GAP}\n", "aspect-not-bullet"),
        ("\n| aspect | refs |\n|---|---|\n| quiet-hours | none yet |\n", "aspect-not-bullet"),
        (f"\n## Aspects added at stop\n- {GAP}\n", "aspect-outside-map"),
        # A heading with refs after an arrow, no dash (found by a hunt: it vanished).
        ("\n### risks → none yet\n", "aspect-not-bullet"),
        ("\n## risks → none yet\n", "aspect-not-bullet"),
    ],
)
def test_an_aspect_not_read_fails_the_gate(tmp_path: Path, text: str, code: str) -> None:
    found = detect(appended(tmp_path, "converging", "state.md", text), "manifest")
    assert {"BS-ASPECT-01", "BS-ASPECT-02"} <= failing(found), text
    assert [n[2] for n in notes(found)] == [code], found["notes"]


OPT_OUT = "- opt-out — how a user leaves digests without losing alerts → D2, thesis\n"


# An aspect right under one whose line has its arrow, with no `- ` (or indented, or behind a
# bullet CommonMark takes for none): CommonMark reads it as more of the aspect above, so it
# vanished and its refs passed for that aspect's, and an aspect with none of its own passed
# BS-ASPECT-01 (found by a hunt).
@pytest.mark.parametrize("lead", ["", "  ", "• ", "\u200b- ", "-\u00a0"])
def test_an_aspect_written_as_a_line_of_the_one_above_fails_the_gate(
    tmp_path: Path, lead: str
) -> None:
    below = f"{OPT_OUT.split(' → ')[0]} →\n{lead}quiet-hours — no sends at night → D1\n"
    found = detect(
        session(tmp_path, "converging", "state.md", _replaced(OPT_OUT, below)), "session"
    )
    assert "BS-ASPECT-01" in failing(found), found["notes"]
    assert [n[1:3] for n in notes(found)] == [(12, "aspect-not-bullet")], found["notes"]


def test_refs_on_the_line_under_an_aspect_are_its_refs(tmp_path: Path) -> None:
    below = f"{OPT_OUT.split(' → ')[0]} →\n  D2, thesis\n"
    found = detect(
        session(tmp_path, "converging", "state.md", _replaced(OPT_OUT, below)), "manifest"
    )
    assert failing(found) == set() and found["notes"] == [], found


def _replaced(old: str, new: str) -> Callable[[str], str]:
    return lambda text: text.replace(old, new)


def test_the_same_gap_as_a_bullet_is_read(tmp_path: Path) -> None:
    found = detect(appended(tmp_path, "converging", "state.md", f"- {GAP}\n"), "manifest")
    assert failing(found) == {"BS-ASPECT-02"} and found["notes"] == []


@pytest.mark.parametrize(
    "text",
    [
        "\nThe map above is the twin's; the user added none.\n",
        f"\n## Notes\n- {GAP}\n",
    ],
)
def test_prose_in_the_map_and_notes_beside_it_stay_clean(tmp_path: Path, text: str) -> None:
    found = detect(appended(tmp_path, "converging", "state.md", text), "manifest")
    assert failing(found) == set() and found["notes"] == [], found


def test_refs_in_a_paragraph_under_an_aspect_are_its_refs(tmp_path: Path) -> None:
    """A blank line, then an indented `→ none yet`: CommonMark makes it a paragraph of the
    aspect's item, which was not read, so the gap passed BS-ASPECT-02 (found by a hunt), and
    refs written only there left the aspect with none (BS-ASPECT-01 failed)."""
    gap = OPT_OUT.replace("\n", "\n\n  → none yet\n")
    found = detect(session(tmp_path, "converging", "state.md", _replaced(OPT_OUT, gap)), "manifest")
    assert failing(found) == {"BS-ASPECT-02"} and found["notes"] == [], found
    below = f"{OPT_OUT.split(' → ')[0]}\n\n  → D2, thesis\n"
    folder = session(tmp_path / "refs", "converging", "state.md", _replaced(OPT_OUT, below))
    found = detect(folder, "manifest")
    assert failing(found) == set() and found["notes"] == [], found


@pytest.mark.parametrize(
    ("commentary", "fails"),
    [
        ("→ none yet (D1 -> D3 chain to probe)", True),
        ("→ none yet (probe: retries → D3)", True),
        ("→ D2, thesis (settings -> notifications)", False),
        ("→ D2, thesis (`settings -> notifications`)", False),
    ],
)
def test_an_arrow_in_the_commentary_after_refs_is_the_remarks(
    tmp_path: Path, commentary: str, fails: bool
) -> None:
    """The refs begin at the last arrow outside parentheses and code spans: an arrow in the
    remark after them moved the split, so `→ none yet (D1 -> D3 …)` read as refs `D3 …` and
    the gap passed the manifest gate, and a healthy `→ D2, thesis (a -> b)` failed
    BS-ASPECT-01 (found by a hunt)."""
    line = f"- risks — what could go wrong {commentary}\n"
    found = detect(appended(tmp_path, "converging", "state.md", line), "manifest")
    assert ("BS-ASPECT-02" in failing(found)) is fails, notes(found)
    assert "BS-ASPECT-01" not in failing(found), notes(found)


@pytest.mark.parametrize(
    ("refs", "fails"),
    [
        # Refs begin at the first arrow after the name that refs follow (found by a hunt:
        # read from the last arrow, the gap and F9 were the description's, and both passed).
        ("→ none yet; follow-up → thesis", {"BS-ASPECT-02"}),
        ("→ F9; folded into → thesis", {"BS-ASPECT-01"}),
        # An arrow in the description with no ref after it stays the description's.
        ("email → digest order → D2, thesis", set()),
    ],
)
def test_refs_begin_at_the_first_arrow_that_refs_follow(
    tmp_path: Path, refs: str, fails: set[str]
) -> None:
    line = f"- legal — what the digest may hold {refs}\n"
    found = detect(appended(tmp_path, "converging", "state.md", line), "manifest")
    assert failing(found) == fails and found["notes"] == [], found


@pytest.mark.parametrize(
    ("note", "fails"),
    [
        # A sub-bullet is part of the aspect's value (§3.1), as a continuation line is: a gap
        # or an ID in it counts (found by a hunt: only a continuation line's did).
        ("  - none yet for the unsubscribe-link wording\n", {"BS-ASPECT-02"}),
        ("  - the DST edge case is still F9\n", {"BS-ASPECT-01"}),
        # The rest of such a note is commentary: no unknown ref.
        ("  - see the unsubscribe-link notes in D2\n", set()),
        ("  - revisit after the pilot\n", set()),
    ],
)
def test_refs_in_a_note_under_an_aspect_count(tmp_path: Path, note: str, fails: set[str]) -> None:
    found = detect(
        session(tmp_path, "converging", "state.md", _replaced(OPT_OUT, OPT_OUT + note)),
        "manifest",
    )
    assert failing(found) == fails and found["notes"] == [], found
