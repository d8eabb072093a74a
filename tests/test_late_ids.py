"""census.md §3.1, fail closed: a fork or ledger heading whose ID is not its first word
(`## Fork F1 — … [open]`, `## [open] F1 — …`, `## Decision D2 — …`), an entry or turn
heading whose #s are followed by a no-break space (`##\u00a0F1`, a paragraph to CommonMark),
and a fork heading with a marker but no ID (`## Should cursors expire? [open]`) were read as
nothing: an open fork vanished and the manifest gate came out clean. Each is now read as
meant, with a parse issue that fails the rule that needs it.

Each case appends to a copy of a healthy base session (fixtures/cases/base) on disk and runs
`census detect`; one runs crawl and check, which must agree.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pipeline.check import check
from pipeline.crawl import crawl
from pipeline.engine import connect
from pipeline.store import Out
from tests.conftest import FIXTURES, copy_tree
from tests.test_entry_reading import detect, failing, findings

SESSION = Path("docs/research/demo-brainstorm")
NBSP = "\u00a0"
BODY = "- Raised by: user\n- Closes when: a yes or no\n"


def notes(found: dict[str, Any]) -> list[tuple[str, int, str]]:
    return [(n["file"], n["line"], n["code"]) for n in found["notes"]]


def appended(tmp_path: Path, base: str, file: str, text: str) -> Path:
    """A copy of a base session with text appended to one of its files; the session folder."""
    repo = copy_tree(FIXTURES / "cases" / "base" / base / "repo", tmp_path / "repo")
    with open(repo / SESSION / file, "a", encoding="utf-8") as handle:
        handle.write(text)
    return repo / SESSION


@pytest.mark.parametrize("heading", ["# Forks [open questions]", "### Notes [open"])
def test_a_heading_with_no_closed_marker_at_another_level_is_no_fork(
    tmp_path: Path, heading: str
) -> None:
    folder = appended(tmp_path, "converging", "forks.md", f"\n{heading}\nprose\n")
    assert failing(detect(folder, "manifest")) == set()


@pytest.mark.parametrize(
    "heading",
    [
        "## Fork F9 — Is there a weekly digest too? [open]",
        "## [open] F9 — Is there a weekly digest too?",
        "## Open: F9 — Is there a weekly digest too?",
        f"##{NBSP}F9 — Is there a weekly digest too? [open]",
        "## Is there a weekly digest too? [open]",  # no ID at all
        # …at another level (found by a hunt: it vanished under `## Open forks`).
        "## Open forks\n\n### Is there a weekly digest too? [open]",
        "# Is there a weekly digest too? [ parked ]",
    ],
)
def test_an_open_fork_under_an_odd_heading_fails_the_manifest_gate(
    tmp_path: Path, heading: str
) -> None:
    folder = appended(tmp_path, "converging", "forks.md", f"\n{heading}\n{BODY}")
    assert (
        failing(detect(appended(tmp_path / "clean", "converging", "forks.md", ""), "manifest"))
        == set()
    )
    found = detect(folder, "manifest")
    assert "BS-FORK-01" in failing(found), heading
    line = 9 + heading.count("\n")  # the heading's own line
    assert ("forks.md", line, "entry-not-heading") in notes(found), found["notes"]


def test_a_ledger_entry_named_decision_d2_is_read_and_fails(tmp_path: Path) -> None:
    folder = appended(
        tmp_path, "open", "ledger.md", "\n## Decision D9 — No weekly digest\n- Decision: none.\n"
    )
    found = detect(folder, "session")
    assert "BS-LEDGER-01" in failing(found)
    assert any("Decision D9" in n["message"] for n in found["notes"]), found["notes"]


@pytest.mark.parametrize(
    ("file", "text", "rule"),
    [
        ("ledger.md", "## No weekly digest\n- Decision: none.\n- Resolves: F9\n", "BS-LEDGER-01"),
        ("ledger.md", "## Decisions\n- Decision: none.\n", "BS-LEDGER-01"),
        ("forks.md", "## Is there a weekly digest too?\n- Closes when: we know\n", "BS-FORK-01"),
        ("forks.md", "## Notes\n- Raised by: twin (S3)\n", "BS-SYNC-02"),
    ],
)
def test_an_entry_field_under_a_section_heading_is_shown_and_fails(
    tmp_path: Path, file: str, text: str, rule: str
) -> None:
    """A heading with no ID is a section (§3.1), and the entry fields under it belong to no
    entry: they vanished, a decision and the fork it resolves with them, and the session was
    clean. Each is now a parse issue that fails the rule that needs the field."""
    found = detect(appended(tmp_path, "open", file, f"\n{text}"), "session")
    assert rule in failing(found), found
    assert any(code == "field-outside-entry" for _, _, code in notes(found)), found["notes"]


def test_a_listed_fork_resolved_by_an_entry_with_no_id_says_so(tmp_path: Path) -> None:
    """BS-FORK-02's message named the resolving entry by its ID alone: with none it was null."""
    entry = "\n## D — Security alerts stay immediate\n- Decision: yes.\n- Resolves: F4\n"
    found = detect(appended(tmp_path, "open", "ledger.md", entry), "session")
    assert [m for _, _, m in findings(found, "BS-FORK-02")] == [
        "F4 is still listed [parked] but an entry with no D# resolves it; delete the entry"
    ]


def test_a_turn_after_a_no_break_space_makes_the_compose_stale(tmp_path: Path) -> None:
    turn = f"\n---\n###{NBSP}T9 · 2030-01-01T00:00Z\nuser: one more thing.\n"
    found = detect(appended(tmp_path, "converging", "ops/capture.md", turn), "manifest")
    assert "BS-COMPOSE-02" in failing(found)
    assert any("U+00A0" in n["message"] for n in found["notes"]), found["notes"]


@pytest.mark.parametrize(
    "heading",
    [
        "## Forks F3 and F4 came later",
        "## Notes on F3",
        "## Decisions D1 and D2 revisited",
        "## Open questions",
        "## Why digests",  # prose under it with no Decision field
    ],
)
def test_section_headings_naming_ids_stay_sections(tmp_path: Path, heading: str) -> None:
    """Guard: a heading naming two IDs, or one with no word or marker saying it is the entry,
    is a section heading, as before."""
    file = "ledger.md" if "Decisions" in heading else "forks.md"
    found = detect(appended(tmp_path, "open", file, f"\n{heading}\nSome prose.\n"), "session")
    assert failing(found) == set() and found["notes"] == [], (heading, found)


def test_crawl_and_check_agree_with_detect(tmp_path: Path) -> None:
    folder = appended(
        tmp_path, "converging", "forks.md", f"\n## Fork F9 — Weekly too? [open]\n{BODY}"
    )
    out = tmp_path / "out"
    crawl([str(tmp_path / "repo")], str(out), workers=1)
    check(str(out))
    rows = (
        connect(Out(out))
        .execute("SELECT rule_id, status FROM statuses WHERE own AND status = 'fail'")
        .fetchall()
    )
    assert {r for r, _ in rows} == failing(detect(folder, "manifest")) >= {"BS-FORK-01"}


@pytest.mark.parametrize(
    ("file", "heading", "rule"),
    [
        (
            "forks.md",
            b"##\xff F9 \xe2\x80\x94 Weekly digest too? [open]\n" + BODY.encode(),
            "BS-FORK-03",
        ),
        (
            "ops/capture.md",
            b"\n---\n###\xff T9 \xc2\xb7 2030-01-01T00:00Z\nuser: x\n",
            "BS-COMPOSE-02",
        ),
    ],
)
def test_a_byte_not_utf8_after_the_hashes_keeps_the_entry_meant(
    tmp_path: Path, file: str, heading: bytes, rule: str
) -> None:
    """A byte that is not UTF-8 right after a heading's #s reads as U+FFFD, which keeps
    CommonMark from seeing a heading, as an invisible U+200B there does: the line was read as
    nothing, so an open fork passed BS-FORK-03 and a turn after the compose BS-COMPOSE-02
    (found by a hunt). It is meant as the entry, and its rule fails."""
    folder = appended(tmp_path, "converging", file, "\n")
    with open(folder / file, "ab") as handle:
        handle.write(heading)
    found = detect(folder, "manifest")
    assert rule in failing(found), found
    assert any(code == "entry-not-heading" for f, _, code in notes(found) if f == file), found


@pytest.mark.parametrize(
    ("file", "text", "rule"),
    [
        (
            "forks.md",
            "\n{q} ## F9 — Weekly digest too? [open]\n{q} - Closes when: x\n",
            "BS-FORK-01",
        ),
        ("ops/capture.md", "\n{q} ### T9 · 2030-01-01T00:00Z\n", "BS-COMPOSE-02"),
        ("forks.md", "\n{items}", "BS-FORK-01"),
    ],
)
def test_an_entry_nested_past_the_readers_depth_fails_its_rule(
    tmp_path: Path, file: str, text: str, rule: str
) -> None:
    """Past 16 quotes or lists the block reader reads the markers as text: a fork or a turn
    there vanished with no word and the manifest gate was clean (found by a hunt). It is a
    `too-deep` parse issue that fails the rule reading the file."""

    def nested(depth: int) -> str:
        items = "".join("  " * i + "- x\n" for i in range(depth))
        return text.format(q=">" * depth, items=items)

    folder = appended(tmp_path, "converging", file, nested(17))
    found = detect(folder, "manifest")
    assert rule in failing(found) or "BS-FORK-01" in failing(found), found
    assert any(code == "too-deep" for f, _, code in notes(found) if f == file), found
    shallow = appended(tmp_path / "shallow", "converging", file, nested(3))
    assert not any(code == "too-deep" for _, _, code in notes(detect(shallow, "manifest")))
