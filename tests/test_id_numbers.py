"""An ID is its letter and its number (session schema: `F{n}`, `D{n}`, `S{n}`, `T{n}`): a
heading written `## F04` and a ref written `F4` name one fork, wherever either is written
(aspect refs, Resolves, Raised by, Reverses). Read as text they were two: an aspect citing
`F1` of a fork headed `F01` failed BS-ASPECT-01, and `## F1` beside `## F01` passed
BS-FORK-01's "IDs are unique".

Each case edits a copy of the healthy open base session on disk and runs `census detect`;
the last crawls two nights and reads the fork lifetimes.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pipeline.check import check
from pipeline.crawl import crawl
from pipeline.detect import detect
from pipeline.engine import connect
from pipeline.store import Out
from tests.conftest import FIXTURES, copy_tree

SESSION = "docs/research/demo-brainstorm"


def _session(root: Path, edits: dict[str, list[tuple[str, str]]]) -> Path:
    """A copy of the open base session with each (old, new) of each file replaced once."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", root / "repo")
    for file, pairs in edits.items():
        path = repo / SESSION / file
        text = path.read_text(encoding="utf-8")
        for old, new in pairs:
            assert text.count(old) == 1, old
            text = text.replace(old, new)
        path.write_text(text, encoding="utf-8")
    return repo / SESSION


def _failing(session: Path) -> dict[str, list[str]]:
    found = detect(session)
    return {
        o.rule: [str(f["message"]) for f in o.findings]
        for o in found.outcomes
        if o.status == "fail"
    }


PADDED = {
    "forks.md": [("## F1 —", "## F01 —"), ("## F2 —", "## F002 —"), ("twin (S2)", "twin (S02)")],
    "ledger.md": [("## D1 —", "## D01 —"), ("Resolves: F3", "Resolves: F03")],
    "state.md": [("→ F1, D1", "→ F1, D001")],
    "ops/sync-log.md": [("S2 | gate", "S02 | gate")],
}


def test_padded_and_plain_spellings_of_one_id_agree(tmp_path: Path) -> None:
    """The base session with IDs zero-padded in some places and not in others is as clean
    as the base session itself."""
    assert _failing(_session(tmp_path / "base", {})) == {}
    assert _failing(_session(tmp_path / "padded", PADDED)) == {}


def test_one_number_written_twice_is_one_id_used_twice(tmp_path: Path) -> None:
    session = _session(
        tmp_path,
        {
            "forks.md": [("## F2 —", "## F01 —")],
            "ledger.md": [("## D2 —", "## D01 —")],
        },
    )
    failing = _failing(session)
    assert failing["BS-FORK-01"] == [
        "F1 is used again (first at line 3); fork IDs are never reused"
    ], failing
    assert any("D1" in m for m in failing["BS-LEDGER-01"]), failing
    # The F2 the aspect map cites is now gone: read by number, not by spelling.
    assert any("cites F2" in m for m in failing["BS-ASPECT-01"]), failing


def test_a_fork_respelled_between_nights_is_one_fork(tmp_path: Path) -> None:
    """`## F1` one night and `## F01` the next is one fork still open, not one closed and
    one raised."""
    session = _session(tmp_path / "corpus", {})
    out = str(tmp_path / "out")
    crawl([str(tmp_path / "corpus")], out, workers=1, point="n1")
    forks = session / "forks.md"
    forks.write_text(forks.read_text(encoding="utf-8").replace("## F1 —", "## F01 —"))
    crawl([str(tmp_path / "corpus")], out, workers=1, point="n2")
    check(out)
    con = connect(Out(out))
    rows = con.execute(
        "SELECT fork_id, censored, vanished FROM fork_lifetimes ORDER BY fork_id"
    ).fetchall()
    assert rows == [
        ("F1", True, False),
        ("F2", True, False),
        ("F3", False, False),
        ("F4", False, False),
    ]
    assert con.execute("SELECT count(*) FROM series_findings").fetchone() == (0,)


def test_a_manifest_row_names_a_parked_fork_by_its_number(tmp_path: Path) -> None:
    """BS-MANIFEST-01 finds the row routing parked F4 whether the row or the heading pads
    the number; a row naming F40 still routes no F4."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "applied" / "repo", tmp_path / "repo")
    session = repo / SESSION
    forks, manifest = session / "forks.md", session / "ops" / "manifest.md"
    heading, row = forks.read_text(encoding="utf-8"), manifest.read_text(encoding="utf-8")

    def status(fork_heading: str, routed: str) -> str:
        forks.write_text(heading.replace("## F4 —", fork_heading), encoding="utf-8")
        manifest.write_text(row.replace("parked fork F4", routed), encoding="utf-8")
        found = detect(session, "move")
        return next(o.status for o in found.outcomes if o.rule == "BS-MANIFEST-01")

    assert status("## F4 —", "parked fork F4") == "pass"
    assert status("## F4 —", "parked fork F04") == "pass"
    assert status("## F004 —", "parked fork F4") == "pass"
    assert status("## F4 —", "parked fork F40") == "fail"


def _fragment_routing(tmp_path: Path, fragment: str) -> Callable[[str], str]:
    """BS-MANIFEST-01's status at the move gate with another fragment beside send-window.md
    and the row that routes send-window given another Source."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "applied" / "repo", tmp_path / "repo")
    session = repo / SESSION
    (session / "fragments" / fragment).write_text("# Another fragment\n", encoding="utf-8")
    manifest = session / "ops" / "manifest.md"
    text = manifest.read_text(encoding="utf-8")

    def status(source: str) -> str:
        manifest.write_text(text.replace("fragment:send-window", source), encoding="utf-8")
        found = detect(session, "move")
        return next(o.status for o in found.outcomes if o.rule == "BS-MANIFEST-01")

    return status


def test_a_fragment_path_routes_that_fragment_only(tmp_path: Path) -> None:
    """BS-MANIFEST-01: a Source `fragments/send-window.md` names one fragment; only the word
    `fragments` (or the folder, `fragments/`) routes them all. The path's word routed every
    fragment, so one without a row passed."""
    status = _fragment_routing(tmp_path, "error-codes.md")
    assert status("fragments/send-window.md") == "fail"
    assert status("docs/fragments") == "fail"
    assert status("fragments") == "pass"
    assert status("fragments/") == "pass"
    assert status("thesis + Fragments") == "pass"


def test_a_fragment_is_named_by_its_own_name_not_a_longer_dotted_one(tmp_path: Path) -> None:
    """BS-MANIFEST-01: a row naming `fragments/send-window.v2.md` routed `send-window.md` too
    (a dot ended the name's word), so the first draft without a row passed."""
    status = _fragment_routing(tmp_path, "send-window.v2.md")
    assert status("fragments/send-window.v2.md") == "fail"
    assert status("fragment:send-window.v2") == "fail"
    assert status("fragments/send-window.md and fragments/send-window.v2.md") == "pass"
    assert status("fragment:send-window, fragment:send-window.v2") == "pass"
    assert status("send-window. Also send-window.v2.md") == "pass"  # a sentence's last word


def test_a_fragment_is_named_by_a_whole_word_in_any_script(tmp_path: Path) -> None:
    """BS-MANIFEST-01: a row naming `résumé` does not name the fragment `sumé` (the rule's
    word boundary was RE2's ASCII \\w, so `é` ended a word and the unrouted fragment passed;
    found by a hunt)."""
    status = _fragment_routing(tmp_path, "sumé.md")
    assert status("fragment:send-window, fragment:résumé") == "fail"
    assert status("fragment:send-window, fragment:sumé٣") == "fail"  # a digit of another script
    assert status("fragment:send-window, fragment:sumé") == "pass"
    assert status("fragment:send-window, fragments/sumé.md") == "pass"
