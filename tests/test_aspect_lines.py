"""census.md §3.1, fail closed, for state.md's aspect map: an aspect written as a plain line
or a table row inside the map, or as a bullet under a later heading that names aspects, was
dropped without a word, so a `none yet` gap passed the manifest gate. Each is now a parse
issue that fails BS-ASPECT-01 and BS-ASPECT-02 (the gap rule had passed over the unread line);
a bullet of that shape under `## Notes` beside a map stays a note, and prose in the map stays
prose.

Each case appends to a copy of the healthy converging base (fixtures/cases/base), clean at
the manifest gate, and runs `census detect`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_entry_reading import detect, failing
from tests.test_late_ids import appended, notes

GAP = "quiet-hours — no sends at night → none yet"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (f"\n{GAP}\n", "aspect-not-bullet"),
        ("\n| aspect | refs |\n|---|---|\n| quiet-hours | none yet |\n", "aspect-not-bullet"),
        (f"\n## Aspects added at stop\n- {GAP}\n", "aspect-outside-map"),
    ],
)
def test_an_aspect_not_read_fails_the_gate(tmp_path: Path, text: str, code: str) -> None:
    found = detect(appended(tmp_path, "converging", "state.md", text), "manifest")
    assert {"BS-ASPECT-01", "BS-ASPECT-02"} <= failing(found), text
    assert [n[2] for n in notes(found)] == [code], found["notes"]


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
