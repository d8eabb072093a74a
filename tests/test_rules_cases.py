"""Every rule on hand-written cases (fixtures/cases): exact statuses at every gate.

Each case is a healthy base session with hand-written edits; cases.toml states the
rules that fail, are info and are skipped at each gate (the rest pass). The same
cases run through `census detect` (one folder) and `census crawl` + `census check`
(all cases in one corpus) and both must agree with the expectation. Cases that
fail closed (census.md §3.1) also name the file:line their finding and detect's
`note` line must point at.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pipeline.check import check
from pipeline.cli import app
from pipeline.crawl import crawl
from pipeline.detect import detect
from pipeline.store import Out
from pipeline.truth import observed_statuses
from pipeline.vocabulary import GATES
from tests.conftest import FIXTURES, copy_tree
from tests.mixed_corpus import build_case as build_repo

CASES_DIR = FIXTURES / "cases"
CASES: list[dict[str, Any]] = tomllib.loads((CASES_DIR / "cases.toml").read_text())["case"]
BY_NAME = {case["name"]: case for case in CASES}


def build_case(case: dict[str, Any], where: Path) -> Path:
    """Materialise a case's repository under `where`; returns the session folder."""
    repo = build_repo(case, where / "repo")
    sessions = (
        [p for p in (repo / "docs" / "research").glob("*-brainstorm")]
        if (repo / "docs" / "research").is_dir()
        else []
    )
    sessions += (
        list((repo / "docs" / "history" / "brainstorms").glob("*"))
        if (repo / "docs" / "history" / "brainstorms").is_dir()
        else []
    )
    assert len(sessions) == 1, f"{case['name']}: expected one session folder, found {sessions}"
    return sessions[0]


def expected(case: dict[str, Any], gate: str) -> dict[str, set[str]]:
    want = case["expect"][gate]
    return {status: set(want.get(status, [])) for status in ("fail", "info", "skipped")}


def observed(statuses: dict[str, str]) -> dict[str, set[str]]:
    return {
        s: {rule for rule, status in statuses.items() if status == s}
        for s in ("fail", "info", "skipped")
    }


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_detect_matches_case(case: dict[str, Any], tmp_path: Path) -> None:
    session = build_case(case, tmp_path)
    for gate in GATES:
        found = detect(str(session), gate)
        got = observed({o.rule: o.status for o in found.outcomes})
        assert got == expected(case, gate), f"{case['name']} at {gate}: {found.as_json()}"
        for rule, reason in case.get("skip_reasons", {}).items():
            outcome = next((o for o in found.outcomes if o.rule == rule), None)
            if outcome is not None and outcome.status == "skipped":
                assert outcome.reason == reason
        for rule, places in case.get("findings", {}).items():
            outcome = next((o for o in found.outcomes if o.rule == rule), None)
            if outcome is not None:
                named = {f"{f['file']}:{f['line']}" for f in outcome.findings}
                assert set(places) <= named, f"{case['name']} {rule} at {gate}: {named}"


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.get("notes")], ids=[c["name"] for c in CASES if c.get("notes")]
)
def test_detect_prints_each_parse_issue_as_a_note(case: dict[str, Any], tmp_path: Path) -> None:
    session = build_case(case, tmp_path)
    result = CliRunner().invoke(app, ["detect", str(session)])
    notes = [line for line in result.output.splitlines() if line.startswith("note")]
    for place in case["notes"]:
        # `clean` must never hide a line that could not be read (census.md §3.1).
        pattern = re.compile(rf"(?<![\w.]){re.escape(place)}(?!\d)")
        assert any(pattern.search(line) for line in notes), f"{place} not in {notes}"


@pytest.mark.parametrize("name", ["healthy-applied", "harvest-01-inline-link-fails"])
def test_detect_out_of_layout_skips_harvest(name: str, tmp_path: Path) -> None:
    """A folder outside docs/research/ or docs/history/brainstorms/ reads no repository
    documents: BS-HARVEST-01 is skipped, never pass or fail; the other rules are unchanged."""
    case = BY_NAME[name]
    session = build_case(case, tmp_path / "in")
    loose = copy_tree(session, tmp_path / "loose" / session.name)
    found = detect(str(loose), "move")
    statuses = {o.rule: o.status for o in found.outcomes}
    harvest = next(o for o in found.outcomes if o.rule == "BS-HARVEST-01")
    assert (harvest.status, harvest.reason) == ("skipped", "no repository layout")
    want = {s: rules - {"BS-HARVEST-01"} for s, rules in expected(case, "move").items()}
    got = {s: rules - {"BS-HARVEST-01"} for s, rules in observed(statuses).items()}
    assert got == want, found.as_json()


def test_check_matches_every_case(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    sessions = {}
    for case in CASES:
        session = build_case(case, corpus / case["name"])
        sessions[case["name"]] = session
    out = Out(tmp_path / "out")
    crawl([str(corpus)], str(out.root), workers=1)
    check(str(out.root))
    found = observed_statuses(out)
    got: dict[tuple[str, str], dict[str, str]] = {}
    for (repo_path, _), gates in found.items():
        for gate, statuses in gates.items():
            got[(repo_path.split("/")[0], gate)] = statuses
    for case in CASES:
        for gate in GATES:
            assert observed(got[(case["name"], gate)]) == expected(case, gate), (
                f"{case['name']} at {gate}"
            )
