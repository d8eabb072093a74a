"""census.md §3.1, fail closed: a fork, ledger entry or capture turn written inside an HTML
block (no blank line ends the block before it, so CommonMark reads no heading there) or
as a table row is a line meant as an entry the reader cannot take. It is an
`entry-not-heading` parse issue naming its line, and the rule that reads the file fails;
it never just disappears. HTML that only holds prose, a table that only mentions an ID,
and an HTML comment stay as they were.

Each case appends to a copy of a healthy base session (fixtures/cases/base) on disk and
runs `census detect`, or `census crawl` and `census check`, through Typer's CliRunner.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from tests.conftest import FIXTURES, copy_tree

runner = CliRunner()
SESSION = Path("docs/research/demo-brainstorm")
F5 = "## F5 — Does an unread digest suppress the next one? [open]"
F5_BODY = "- Raised by: user\n- Closes when: we measure unread rates\n"
D9 = "## D9 — Batch the digest hourly"
D9_BODY = "- Decision: batch hourly\n- Why: less noise\n- How to apply: the scheduler\n"
TURN = "### T2 · 2026-07-10T16:30Z"  # later than the base's Last compose (16:05Z)


def session(tmp_path: Path, file: str, appended: str) -> Path:
    """A copy of the converging base session with text appended to one file."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "converging" / "repo", tmp_path / "repo")
    path = repo / SESSION / file
    path.write_text(path.read_text(encoding="utf-8") + appended, encoding="utf-8")
    return repo / SESSION


def line_of(folder: Path, file: str, text: str) -> int:
    lines = (folder / file).read_text(encoding="utf-8").split("\n")
    return lines.index(text) + 1


def detect(folder: Path) -> dict[str, Any]:
    result = runner.invoke(app, ["detect", str(folder), "--gate", "manifest", "--json"])
    assert result.exit_code in (0, 1), result.output
    parsed: dict[str, Any] = json.loads(result.stdout)
    return parsed


def failing(found: dict[str, Any]) -> dict[str, list[tuple[str, int]]]:
    """Each failing rule with the (file, line) of its findings."""
    return {
        r["rule"]: [(f["file"], f["line"]) for f in r["findings"]]
        for r in found["rules"]
        if r["status"] == "fail"
    }


def issues(found: dict[str, Any]) -> list[tuple[str, int, str]]:
    return [(n["file"], n["line"], n["code"]) for n in found["notes"]]


CASES = {
    "fork-in-details": (
        "forks.md",
        f"\n<details>\n{F5}\n{F5_BODY}</details>\n",
        F5,
        "BS-FORK-01",
    ),
    "fork-in-summary": (
        "forks.md",
        "\n<details><summary>F5 — Does an unread digest suppress the next one? [open]"
        "</summary>\n\nlater\n</details>\n",
        "<details><summary>F5 — Does an unread digest suppress the next one? [open]</summary>",
        "BS-FORK-01",
    ),
    "fork-in-quoted-div": (
        "forks.md",
        f"\n> <div>\n> {F5}\n> </div>\n",
        f"> {F5}",
        "BS-FORK-01",
    ),
    "fork-table-header": (
        "forks.md",
        "\n| F5 — Does an unread digest suppress the next one? | [open] |\n|---|---|\n",
        "| F5 — Does an unread digest suppress the next one? | [open] |",
        "BS-FORK-01",
    ),
    "fork-table-body": (
        "forks.md",
        "\n| Fork | Marker |\n|---|---|\n| F5 | Does an unread digest suppress it? [open] |\n",
        "| F5 | Does an unread digest suppress it? [open] |",
        "BS-FORK-01",
    ),
    "ledger-in-details": (
        "ledger.md",
        f"\n<details>\n{D9}\n{D9_BODY}</details>\n",
        D9,
        "BS-LEDGER-01",
    ),
    "ledger-table-row": (
        "ledger.md",
        "\n| Entry | Decision |\n|---|---|\n| D9 — Batch the digest hourly | batch |\n",
        "| D9 — Batch the digest hourly | batch |",
        "BS-LEDGER-01",
    ),
    "turn-in-details": (
        "ops/capture.md",
        f"---\n<details>\n{TURN}\nuser: one more thing.\n</details>\n",
        TURN,
        "BS-COMPOSE-02",
    ),
    "turn-table-row": (
        "ops/capture.md",
        "\n| T2 | 2026-07-10T16:30Z | user: one more thing. |\n|---|---|---|\n",
        "| T2 | 2026-07-10T16:30Z | user: one more thing. |",
        "BS-COMPOSE-02",
    ),
}


def test_the_base_is_clean(tmp_path: Path) -> None:
    found = detect(session(tmp_path, "forks.md", "\n"))
    assert failing(found) == {} and issues(found) == []


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_entry_in_html_or_a_table_fails_its_rule(tmp_path: Path, case: str) -> None:
    file, appended, meant, rule = CASES[case]
    folder = session(tmp_path, file, appended)
    line = line_of(folder, file, meant)
    found = detect(folder)
    assert (file, line, "entry-not-heading") in issues(found), issues(found)
    assert (file, line) in failing(found).get(rule, []), failing(found)


def test_a_fork_in_html_ends_the_fork_above(tmp_path: Path) -> None:
    # The Closes when after the block is not F4's (F4 has its own): no second field, but a
    # field of no fork, shown.
    appended = f"\n<details>\n{F5}\n</details>\n\n- Closes when: we measure unread rates\n"
    found = detect(session(tmp_path, "forks.md", appended))
    codes = [code for _, _, code in issues(found)]
    assert codes == ["entry-not-heading", "field-outside-entry"], issues(found)


CLEAN = {
    "prose-in-details": (
        "forks.md",
        "\n<details>\n## Notes from the call\nWe looked at F2 again — see D1.\n</details>\n",
    ),
    "table-mentions-ids": ("forks.md", "\n| Fork | Note |\n|---|---|\n| F2 | see D1 |\n"),
    "ledger-table-mentions-ids": ("ledger.md", "\n| Entry | Fork |\n|---|---|\n| D1 | F2 |\n"),
    "comment": ("forks.md", f"\n<!--\n{F5}\n{F5_BODY}-->\n"),
    "capture-html-prose": ("ops/capture.md", "\n<div>\nuser: T2 was a typo.\n</div>\n"),
}


@pytest.mark.parametrize("case", sorted(CLEAN))
def test_html_and_tables_without_entries_stay_clean(tmp_path: Path, case: str) -> None:
    file, appended = CLEAN[case]
    found = detect(session(tmp_path, file, appended))
    assert failing(found) == {} and issues(found) == []


def test_crawl_and_check_record_the_issue_and_the_failure(tmp_path: Path) -> None:
    folder = session(tmp_path, "forks.md", f"\n<details>\n{F5}\n{F5_BODY}</details>\n")
    line = line_of(folder, "forks.md", F5)
    out = tmp_path / "out"
    crawled = runner.invoke(app, ["crawl", str(tmp_path / "repo"), "--out", str(out)])
    assert crawled.exit_code == 0, crawled.output
    assert runner.invoke(app, ["check", "--out", str(out)]).exit_code == 0
    query = (
        "SELECT i.code, i.line, r.status FROM parse_issues i JOIN rule_results r "
        "ON r.snapshot_id = i.snapshot_id AND r.rule_id = i.rule_id "
        "WHERE i.file = 'forks.md' AND r.rule_id = 'BS-FORK-01'"
    )
    result = runner.invoke(app, ["sql", query, "--out", str(out), "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert {(r["code"], r["line"], r["status"]) for r in rows} == {
        ("entry-not-heading", line, "fail")
    }
