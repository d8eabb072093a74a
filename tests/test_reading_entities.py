"""census.md §3 and §3.1: an arrow is `→`, and structure is read as CommonMark renders it.
CommonMark shows the entity and numeric character references `&rarr;`, `&#8594;` and
`&#x2192;` as `→` (and `-&gt;` as `->`), outside code spans: an aspect's arrow or a parked
fork's arrow written so is that arrow, so the page and the census agree. Inside a code span
(or after a backslash) the reference shows as written and is no arrow.

Each case edits a copy of the healthy open base session (fixtures/cases/base) on disk and
runs `census detect`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.detect import Detection, detect
from tests.conftest import FIXTURES, copy_tree

SESSION = "docs/research/demo-brainstorm"
ASPECT = "- opt-out — how a user leaves digests without losing alerts → D2, thesis\n"
PARKED = "[parked → docs/architecture/open-questions.md]"
ARROWS = ["&rarr;", "&#8594;", "&#x2192;", "&#X2192;", "-&gt;"]


def _session(tmp_path: Path, file: str, old: str, new: str) -> Path:
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "r")
    path = repo / SESSION / file
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")
    return repo / SESSION


def _rule(found: Detection, rule: str) -> tuple[str, list[str]]:
    outcome = next(o for o in found.outcomes if o.rule == rule)
    return outcome.status, [str(f["message"]) for f in outcome.findings]


@pytest.mark.parametrize("arrow", ARROWS)
def test_an_entity_arrow_in_an_aspect_is_its_arrow(tmp_path: Path, arrow: str) -> None:
    session = _session(tmp_path, "state.md", ASPECT, ASPECT.replace("→", arrow))
    assert _rule(detect(str(session), "session"), "BS-ASPECT-01") == ("pass", [])
    # Its refs are read and resolved: one that names no entry still fails.
    session = _session(tmp_path / "x", "state.md", ASPECT, ASPECT.replace("→ D2", f"{arrow} D99"))
    status, messages = _rule(detect(str(session), "session"), "BS-ASPECT-01")
    assert status == "fail" and any("D99" in m for m in messages), messages


@pytest.mark.parametrize("arrow", ARROWS)
def test_an_entity_arrow_in_a_parked_marker_is_its_arrow(tmp_path: Path, arrow: str) -> None:
    session = _session(tmp_path, "forks.md", PARKED, PARKED.replace("→", arrow))
    assert _rule(detect(str(session), "session"), "BS-FORK-01") == ("pass", [])


@pytest.mark.parametrize("written", ["`&rarr;`", "\\&rarr;", "&rarr"])
def test_a_reference_the_page_shows_as_written_is_no_arrow(tmp_path: Path, written: str) -> None:
    session = _session(tmp_path, "state.md", ASPECT, ASPECT.replace("→", written))
    status, messages = _rule(detect(str(session), "session"), "BS-ASPECT-01")
    assert status == "fail" and any("has no refs" in m for m in messages), messages
    session = _session(tmp_path / "f", "forks.md", PARKED, PARKED.replace("→", written))
    status, messages = _rule(detect(str(session), "session"), "BS-FORK-01")
    assert status == "fail" and any("not written after an arrow" in m for m in messages), messages
