"""census.md §3.1 and §5, aspect refs read whole (found by a hunt, 2026-12-07).

- An ID misspelt beside a ref that was read (`→ thesis and D-9`, `→ D1 and fork 9`) vanished:
  the rest of a part that held a ref was commentary, so BS-ASPECT-01 passed on an aspect
  citing a decision that does not exist, where `→ thesis, D-9` failed.
- `none-yet` (or `none_yet`, a no-break hyphen) beside a ref was no gap, so BS-ASPECT-02
  passed the manifest gate on an aspect a reader sees is not covered.

Each case edits the base session's first aspect and runs `census detect`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_entry_reading import detect, failing, findings, session

ASPECT = "- batching — which notifications fold into one digest → F1, D1"


def _refs(refs: str) -> str:
    return ASPECT.rsplit("→", 1)[0] + "→ " + refs


def _edited(tmp_path: Path, refs: str) -> Path:
    return session(tmp_path, "open", "state.md", lambda text: text.replace(ASPECT, _refs(refs)))


@pytest.mark.parametrize(
    ("refs", "written"),
    [
        ("thesis and D-9", "D-9"),
        ("D1 and d9", "d9"),
        ("D1 and F 9", "F 9"),
        ("D1 (and D-9)", "D-9"),
        ("D1 and fork 9", "fork 9"),
        ("F1, D1 plus the F-3 question", "F-3"),
    ],
)
def test_an_id_misspelt_beside_a_ref_is_an_unresolved_ref(
    tmp_path: Path, refs: str, written: str
) -> None:
    found = detect(_edited(tmp_path, refs), "session")
    assert findings(found, "BS-ASPECT-01") == [
        (
            "state.md",
            9,
            f"aspect 'batching' cites {written}, which is not F#, D#, thesis, fragment:{{name}} "
            "or none yet",
        )
    ], found


@pytest.mark.parametrize(
    "refs",
    ["D1 and none-yet", "D1 and none_yet", "D1 + none\u2011yet", "D1 (none-yet for the edge)"],
)
def test_none_yet_hyphenated_beside_a_ref_is_a_gap(tmp_path: Path, refs: str) -> None:
    found = detect(_edited(tmp_path, refs), "manifest")
    assert findings(found, "BS-ASPECT-02") == [
        ("state.md", 9, "aspect 'batching' is still none yet; cover it before the manifest")
    ], found


@pytest.mark.parametrize("refs", ["F1; D1", "F1 and D1", "D1 (the fork F1 asked)", "F1, D1 (v2)"])
def test_refs_without_a_misspelt_id_pass(tmp_path: Path, refs: str) -> None:
    found = detect(_edited(tmp_path, refs), "manifest")
    assert not {"BS-ASPECT-01", "BS-ASPECT-02"} & failing(found), found


@pytest.mark.parametrize(
    ("file", "written", "emphasised"),
    [
        ("thesis.md", "## What changed", "## What *changed*"),
        ("thesis.md", "Current as of:", "_Current_ as of:"),
        ("state.md", "## Aspect map", "## Aspect **map**"),
        ("state.md", "## Aspect map", "## **Aspect** map"),
        ("state.md", "- Last compose:", "- **Last** compose:"),
    ],
)
def test_a_name_with_one_word_emphasised_is_the_name(
    tmp_path: Path, file: str, written: str, emphasised: str
) -> None:
    """§3.1 strips emphasis from names: one word of a name in emphasis is the name the page
    shows, where it failed BS-THESIS-01, BS-ASPECT-01/02 or BS-COMPOSE-01/02 (found by a hunt:
    only emphasis around the whole name was dropped)."""
    folder = session(tmp_path, "open", file, lambda text: text.replace(written, emphasised, 1))
    found = detect(folder, "manifest")
    assert failing(found) == {"BS-FORK-03"}, found  # the base's open forks, as before the edit
