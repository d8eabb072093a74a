"""census.md §3 and §3.1 on entries a reader could not take: a line meant as a fork, a
ledger entry or a capture turn that is no entry heading, a code fence never closed, and
a fork heading with two markers. Each is a parse issue naming its line, and the rule
that reads the file fails (fail closed: `clean` never comes from a skipped line).

Each case edits a copy of a healthy base session (fixtures/cases/base) on disk and runs
`census detect` through Typer's CliRunner, as a person would.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.parse.blocks import parse
from pipeline.parse.capture import parse_capture
from pipeline.parse.forks import parse_forks
from pipeline.parse.ledger import parse_ledger
from pipeline.parse.lexical import decode
from pipeline.parse.manifest import parse_manifest
from pipeline.parse.records import Records
from pipeline.parse.state import parse_state
from pipeline.parse.synclog import parse_sync_log
from pipeline.parse.thesis import parse_thesis
from tests.conftest import FIXTURES, copy_tree

runner = CliRunner()
SESSION = Path("docs/research/demo-brainstorm")
BODY = "Some prose.\n- Raised by: user\n- Closes when: we know\n"
LEDGER_BODY = "- Decision: park it\n- Why: no time\n- How to apply: nothing\n- Resolves: F4\n"
TURN_AT = "2026-07-11T10:00Z"  # later than the base's Last compose: the compose is stale


def session(tmp_path: Path, base: str, file: str, edit: Callable[[str], str]) -> Path:
    """A copy of a base session with one file edited; returns the session folder."""
    repo = copy_tree(FIXTURES / "cases" / "base" / base / "repo", tmp_path / "repo")
    path = repo / SESSION / file
    text = path.read_text(encoding="utf-8")
    edited = edit(text)
    assert edited != text, "the edit changed nothing"
    path.write_text(edited, encoding="utf-8")
    return repo / SESSION


def detect(folder: Path, gate: str) -> dict[str, Any]:
    result = runner.invoke(app, ["detect", str(folder), "--gate", gate, "--json"])
    assert result.exit_code in (0, 1), result.output
    parsed: dict[str, Any] = json.loads(result.stdout)
    return parsed


def statuses(found: dict[str, Any]) -> dict[str, str]:
    return {r["rule"]: r["status"] for r in found["rules"]}


def failing(found: dict[str, Any]) -> set[str]:
    return {rule for rule, status in statuses(found).items() if status == "fail"}


def findings(found: dict[str, Any], rule: str) -> list[tuple[str, int, str]]:
    """(file, line, message) of each finding of a rule."""
    (entry,) = [r for r in found["rules"] if r["rule"] == rule]
    return [(f["file"], f["line"], f["message"]) for f in entry["findings"]]


def notes(found: dict[str, Any]) -> str:
    return json.dumps(found, ensure_ascii=False)


def after_title(heading: str, body: str = BODY) -> Callable[[str], str]:
    """An edit that puts an entry right after the file's `# …` title line."""

    def edit(text: str) -> str:
        title, rest = text.split("\n", 1)
        return f"{title}\n\n{heading}\n{body}\n{rest}"

    return edit


def appended(line: str) -> Callable[[str], str]:
    return lambda text: f"{text.rstrip()}\n---\n{line}\nuser: one more thing\n"


# ───────────────────────────── lines meant as entries ─────────────────────────────


@pytest.mark.parametrize(
    "line",
    [
        "##F5 — New question? [open]",  # no space after the #s
        "####### F5 — New question? [open]",  # seven #s
        "- F5 — New question? [open]",  # a list item
        "**F5 — New question? [open]**",  # bold, not a heading
        "## [F5] — New question? [open]",  # the ID in brackets
        "## F5a — Sub-question? [open]",  # letters glued to the number
        "\u200b## F5 — New question? [open]",  # a zero-width space before the #s
        "\ufeff## F5 — New question? [open]",  # a BOM mid-file (pasted text)
        "\u2060- F5 — New question? [open]",  # a word joiner before a list item
        # A no-break, ideographic or other Unicode space, or a control, before the #s: shown
        # as a space, not one to CommonMark, so no heading (found by a hunt).
        "\u00a0## F5 — New question? [open]",
        "\u3000## F5 — New question? [open]",
        "\x85## F5 — New question? [open]",
        "\u180e## F5 — New question? [open]",
        # A character that shows nothing after the #s, or fullwidth #s as a CJK input method
        # types them: a paragraph to CommonMark, and the open fork vanished (found by a hunt).
        "##\u200b F5 — New question? [open]",
        "＃＃ F5 — New question? [open]",
        # The ID left as a placeholder, with no marker: a section heading, and the question
        # vanished (found by a hunt).
        "## F? — New question?",
        "## FX — New question?",
        "## **F?** — New question?",
        "## Fn: New question?",
        # A list line with a space after the ID and a marker later, or the marker in
        # parentheses: it vanished, and BS-FORK-03 passed with the fork open (found by a hunt).
        "- F5 New question? [open]",
        "- F5 (open): New question?",
        "- **F5** (open) New question?",
        "- F5 — New question? (open)",
        "1. F5 — New question? (Parked → docs/x.md)",
    ],
)
def test_a_line_meant_as_a_fork_fails_bs_fork_01(tmp_path: Path, line: str) -> None:
    folder = session(tmp_path, "converging", "forks.md", after_title(line))
    found = detect(folder, "manifest")
    assert "BS-FORK-01" in failing(found), notes(found)
    # The finding names the line meant as a fork (line 3, after the title and a blank).
    assert any(f[:2] == ("forks.md", 3) for f in findings(found, "BS-FORK-01")), notes(found)


@pytest.mark.parametrize(
    "line",
    ["- F5 New question? [open]", "- F5 — New question? (open)", "1. F5 (parked): New question?"],
)
def test_a_fork_line_below_the_last_fork_fails_bs_fork_03(tmp_path: Path, line: str) -> None:
    """Below the last fork's fields, such a line was more of that fork's text: the fork
    vanished, and the manifest gate passed with it open (found by a hunt)."""
    edit = lambda text: f"{text.rstrip()}\n\n{line}\n"  # noqa: E731
    found = detect(session(tmp_path, "converging", "forks.md", edit), "manifest")
    assert {"BS-FORK-01", "BS-FORK-03"} <= failing(found), notes(found)


@pytest.mark.parametrize(
    "line",
    [
        "We still mention F5 — in prose, mid-sentence.",
        "## Forks still open",
        "See F5: it is parked above.",
        "## FX rates we still track",
        "## FAQ — what a fork is",
        "- F5 was an open question, now settled by D2.",
        "- F5 (opened by the probe) moved to the ledger.",
    ],
)
def test_prose_and_section_headings_are_no_forks(tmp_path: Path, line: str) -> None:
    folder = session(tmp_path, "converging", "forks.md", after_title(line, "Some prose.\n"))
    found = detect(folder, "manifest")
    assert failing(found) == set(), notes(found)


@pytest.mark.parametrize(
    "heading",
    [
        "##D0 — Park it",
        "\u200b## D0 — Park it",
        "\u00a0## D0 — Park it",
        "##\u2060 D0 — Park it",
        "＃＃ D0 — Park it",
        "## D? — Park it",
        "## DX — Park it",
    ],
)
def test_a_line_meant_as_a_ledger_entry_fails_bs_ledger_01(tmp_path: Path, heading: str) -> None:
    edit = after_title(heading, LEDGER_BODY)
    found = detect(session(tmp_path, "converging", "ledger.md", edit), "session")
    assert "BS-LEDGER-01" in failing(found), notes(found)
    assert any(f[:2] == ("ledger.md", 3) for f in findings(found, "BS-LEDGER-01")), notes(found)


@pytest.mark.parametrize(
    "line",
    [
        f"###T10 · {TURN_AT}",
        f"### [T10] · {TURN_AT}",
        f"- T10 · {TURN_AT}",
        f"**T10 · {TURN_AT}**",
        f"####### T10 · {TURN_AT}",
        f"\u200b### T10 · {TURN_AT}",
        f"\u00a0### T10 · {TURN_AT}",  # a no-break space: never read, and nothing failed
        f"\u3164### T10 · {TURN_AT}",  # a Hangul filler, which shows nothing
        f"###\u200b T10 · {TURN_AT}",  # a zero-width space after the #s (found by a hunt)
        f"＃＃＃ T10 · {TURN_AT}",  # fullwidth #s (found by a hunt)
        "### T? · late note",  # the number left as a placeholder, no time (found by a hunt)
        # No T# and a time with a space for its T, or in a form not read (found by a hunt).
        "### 10 · 2026-07-11 10:00Z",
        "### user · 2026-07-11 10:00Z",
        "- 2026-07-11 10:00Z · T10",
        "### user · 20260711T100000Z",
        "### 10 · 2026-07-11T1000Z",
        "### TX · late note",
        f"### T? · {TURN_AT}",
        f"### T10 · {TURN_AT}",  # the schema's spelling: read, and the compose is stale
        # The timestamp behind a bracket, `@` or comma: it vanished (found by a hunt).
        f"**T10** ({TURN_AT}): user: one more thing",
        f"- **T10** ({TURN_AT}) user: more",
        f"T10 @ {TURN_AT}",
        f"T10, {TURN_AT}",
        f"T10 [{TURN_AT}]",
    ],
)
def test_a_line_meant_as_a_turn_fails_bs_compose_02(tmp_path: Path, line: str) -> None:
    found = detect(session(tmp_path, "converging", "ops/capture.md", appended(line)), "manifest")
    assert "BS-COMPOSE-02" in failing(found), notes(found)
    assert {"state.md", "ops/capture.md"} & {f[0] for f in findings(found, "BS-COMPOSE-02")}


def test_capture_prose_that_names_a_turn_is_no_turn() -> None:
    text = (
        f"# Capture\n---\n### T1 · {TURN_AT}\nT1 was at {TURN_AT}, said the user.\n\n"
        "T1 (see 2 above) was wrong.\n\nT1, 2 forks later, still holds.\n"
    )
    rec = Records("sid")
    parse_capture(decode(text.encode(), "ops/capture.md", rec), rec)
    assert [t["turn_id"] for t in rec.of("turns")] == ["T1"]
    assert rec.of("parse_issues") == []


# ───────────────────────────── a fence never closed ─────────────────────────────


def test_blocks_know_a_fence_never_closed() -> None:
    assert parse(["# x", "```", "## F1 — t [open]"]).unclosed_fence == 2
    assert parse(["# x", "~~~", "code", "~~~", "## F1 — t [open]"]).unclosed_fence is None
    assert parse(["# x", "```"]).unclosed_fence is None  # nothing after it is hidden


@pytest.mark.parametrize(
    ("file", "edit", "gate", "rule"),
    [
        (
            "forks.md",
            lambda t: t.replace("# Forks\n", "# Forks\n~~~\n", 1),
            "session",
            "BS-FORK-01",
        ),
        (
            "ledger.md",
            lambda t: t.replace("## D3", "```python\n## D3", 1),
            "session",
            "BS-LEDGER-01",
        ),
        (
            "ops/capture.md",
            lambda t: t.replace("### T9", "```\n### T9", 1).replace("07-10T15:52Z", "07-11T15:52Z"),
            "manifest",
            "BS-COMPOSE-02",
        ),
    ],
)
def test_a_fence_never_closed_fails_the_rule_that_reads_the_file(
    tmp_path: Path, file: str, edit: Callable[[str], str], gate: str, rule: str
) -> None:
    found = detect(session(tmp_path, "converging", file, edit), gate)
    assert rule in failing(found), notes(found)
    assert any(f[0] == file and "code fence never closed" in f[2] for f in findings(found, rule)), (
        notes(found)
    )


@pytest.mark.parametrize(
    ("reader", "name", "text", "line", "rule"),
    [
        (parse_forks, "forks.md", "# Forks\n```\n## F1 — t [open]\n", 2, "BS-FORK-01"),
        (parse_ledger, "ledger.md", "# Ledger\n~~~\n## D1 — t\n", 2, "BS-LEDGER-01"),
        (parse_capture, "ops/capture.md", f"# C\n```\n### T1 · {TURN_AT}\n", 2, "BS-COMPOSE-02"),
    ],
)
def test_a_fence_never_closed_is_an_issue_at_its_line(
    reader: Callable[[list[str], Records], None], name: str, text: str, line: int, rule: str
) -> None:
    rec = Records("sid")
    reader(decode(text.encode(), name, rec), rec)
    got = [(i["line"], i["code"], i["rule_id"]) for i in rec.of("parse_issues")]
    assert got == [(line, "unclosed-fence", rule)]


# ──────────────────────────── a comment never closed ────────────────────────────


def test_blocks_know_a_hidden_html_block_never_closed() -> None:
    assert parse(["# x", "<!-- draft", "## F1 — t [open]"]).unclosed_html == (2, 1)
    assert parse(["# x", "<!-- draft -->", "## F1 — t [open]"]).unclosed_html is None
    assert parse(["# x", "<!-- draft"]).unclosed_html is None  # nothing after it is hidden
    assert parse(["# x", "<div>", "", "## F1 — t [open]"]).unclosed_html is None  # ends at a blank


@pytest.mark.parametrize(
    ("name", "text", "rule"),
    [
        ("forks.md", "# Forks\n<!-- draft\n## F1 — t [open]\n", "BS-FORK-01"),
        ("ledger.md", "# Ledger\n<?php\n## D1 — t\n", "BS-LEDGER-01"),
        ("ops/capture.md", f"# C\n<!-- draft\n### T1 · {TURN_AT}\n", "BS-COMPOSE-02"),
        ("state.md", "# State\n- Status: open\n<!DOCTYPE x\n- Started: x\n", "BS-STATE-01"),
        ("thesis.md", "# Thesis\n<![CDATA[\n## Claim\nx\n", "BS-THESIS-01"),
        ("ops/manifest.md", "# Manifest\nRound: 1\n<!-- r2\nRound: 2\n", "BS-MANIFEST-01"),
        ("ops/sync-log.md", "<!-- by hand\nS1 → failed | 2026-07-10T16:05Z | x\n", "BS-SYNC-01"),
    ],
)
def test_a_comment_never_closed_is_an_issue_in_every_file(name: str, text: str, rule: str) -> None:
    """CommonMark hides everything after a `<!--` (or `<?`, `<!X`, `<![CDATA[`) that is never
    closed: lines appended below it vanished with no note, and a stale compose, a failed sync
    or a later round passed unseen."""
    reader = {
        "forks.md": parse_forks,
        "ledger.md": parse_ledger,
        "ops/capture.md": parse_capture,
        "state.md": parse_state,
        "thesis.md": parse_thesis,
        "ops/manifest.md": parse_manifest,
        "ops/sync-log.md": parse_sync_log,
    }
    rec = Records("sid")
    reader[name](decode(text.encode("utf-8"), name, rec), rec)
    got = [(i["code"], i["rule_id"]) for i in rec.of("parse_issues")]
    assert ("unclosed-comment", rule) in got, got


def test_a_turn_below_a_comment_never_closed_fails_the_compose(tmp_path: Path) -> None:
    edit: Callable[[str], str] = lambda t: t + "\n<!-- draft\n### T10 · 2026-07-11T15:52Z\nx\n"  # noqa: E731
    found = detect(session(tmp_path, "converging", "ops/capture.md", edit), "manifest")
    assert "BS-COMPOSE-02" in failing(found), notes(found)
    assert any("HTML comment" in f[2] for f in findings(found, "BS-COMPOSE-02")), notes(found)


# ───────────────────────────── two markers ─────────────────────────────


@pytest.mark.parametrize(
    "markers",
    [
        "[open] [parked → docs/architecture/open-questions.md]",
        "[parked → docs/architecture/open-questions.md] [open]",
    ],
)
def test_two_markers_that_contradict_fail_bs_fork_01(tmp_path: Path, markers: str) -> None:
    edit: Callable[[str], str] = lambda t: t.replace(  # noqa: E731
        "[parked → docs/architecture/open-questions.md]", markers, 1
    )
    found = detect(session(tmp_path, "converging", "forks.md", edit), "manifest")
    assert "BS-FORK-01" in failing(found), notes(found)
    assert any("two markers contradict" in f[2] for f in findings(found, "BS-FORK-01"))


PARKED = "[parked → docs/architecture/open-questions.md]"


@pytest.mark.parametrize(
    "below",
    [
        "- Status: open",
        "- **Status:** [open]",
        "State: open, waiting on the budget",
        "[open]",
        "**[open]**",
        "\n[open] (reopened at T9)",
    ],
)
def test_a_status_below_the_heading_that_says_open_fails(tmp_path: Path, below: str) -> None:
    """A parked fork whose body says it is open says two things (found by a hunt: the
    marker in the heading alone was read and the manifest gate passed)."""
    edit: Callable[[str], str] = lambda t: t.replace(PARKED, f"{PARKED}\n{below}", 1)  # noqa: E731
    found = detect(session(tmp_path, "converging", "forks.md", edit), "manifest")
    assert {"BS-FORK-01", "BS-FORK-03"} <= failing(found), notes(found)
    assert any("below it says open" in f[2] for f in findings(found, "BS-FORK-01"))


@pytest.mark.parametrize(
    "below",
    ["- Status: parked → docs/architecture/open-questions.md", "**Status:** parked", "[parked]"],
)
def test_a_status_below_the_heading_that_agrees_is_a_note(below: str) -> None:
    rec = Records("sid")
    text = f"## F1 — t {PARKED}\n{below}\n- Raised by: user\n- Closes when: x\n"
    parse_forks(decode(text.encode(), "forks.md", rec), rec)
    assert [f["marker"] for f in rec.of("forks")] == ["parked"]
    issues = [(i["line"], i["code"], i["rule_id"]) for i in rec.of("parse_issues")]
    assert issues == [(2, "malformed-field", None)]


def test_prose_that_says_open_below_a_parked_heading_stays_prose() -> None:
    rec = Records("sid")
    text = f"## F1 — t {PARKED}\nThe status stays open: nobody owns it.\n- Closes when: x\n"
    parse_forks(decode(text.encode(), "forks.md", rec), rec)
    assert [f["marker"] for f in rec.of("forks")] == ["parked"]
    assert rec.of("parse_issues") == []


def test_a_marker_with_commentary_is_still_one_marker() -> None:
    rec = Records("sid")
    text = "# Forks\n## F1 — t [open] (raised T4)\n- Closes when: x\n"
    parse_forks(decode(text.encode(), "forks.md", rec), rec)
    assert [(f["fork_id"], f["marker"]) for f in rec.of("forks")] == [("F1", "open")]
    assert rec.of("parse_issues") == []


@pytest.mark.parametrize("value", ["**", "—", "_", "`` ``", "-"])
def test_a_closes_when_of_marks_alone_is_empty(value: str) -> None:
    """`Closes when: **` says no condition: BS-FORK-01 needs a non-empty one."""
    rec = Records("sid")
    text = f"## F1 — Title [open]\n- Raised by: user\n- Closes when: {value}\n"
    parse_forks(decode(text.encode("utf-8"), "forks.md", rec), rec)
    assert [f["closes_when"] for f in rec.of("forks")] == [""]


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("state.md", "# State\n- Status: open\n```\n- Last compose: 2026-07-10T16:05Z\n"),
        ("thesis.md", "# Thesis\n```\n## Claim\nx\n"),
        ("ops/manifest.md", "# Manifest\n~~~\nRound: 1\nStatus: applied\n"),
    ],
)
def test_a_fence_never_closed_is_an_issue_in_every_file(name: str, text: str) -> None:
    reader = {"state.md": parse_state, "thesis.md": parse_thesis, "ops/manifest.md": parse_manifest}
    rec = Records("sid")
    reader[name](decode(text.encode("utf-8"), name, rec), rec)
    assert [i["code"] for i in rec.of("parse_issues")] == ["unclosed-fence"]


@pytest.mark.parametrize("change", ["no bullet", "no state.md"])
def test_a_missing_last_compose_is_a_finding_in_state_md(tmp_path: Path, change: str) -> None:
    """The finding names the file that lacks it, not thesis.md."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "repo")
    state = repo / "docs" / "research" / "demo-brainstorm" / "state.md"
    if change == "no state.md":
        state.unlink()
    else:
        lines = state.read_text().splitlines(keepends=True)
        state.write_text("".join(x for x in lines if "Last compose" not in x))
    result = CliRunner().invoke(app, ["detect", str(state.parent), "--json"])
    rules = {r["rule"]: r for r in json.loads(result.stdout)["rules"]}
    assert [f["file"] for f in rules["BS-COMPOSE-01"]["findings"]] == ["state.md"]


@pytest.mark.parametrize("space", ["\u00a0", " \u00a0", "\u00a0\u00a0"])
def test_a_no_break_space_after_an_id_is_no_part_of_the_title(space: str) -> None:
    """`## F3\u00a0— Title`: the page shows a space and a dash before the title, as it does
    for `## F3 — Title`, so both store the title alone."""
    rec = Records("sid")
    text = f"# Forks\n## F3{space}— Whose clock [open]\n- Raised by: user\n- Closes when: x\n"
    parse_forks(decode(text.encode(), "forks.md", rec), rec)
    ledger = f"# Ledger\n## D2{space}— Turning\n- Decision: a\n- Why: b\n- How to apply: c\n"
    parse_ledger(decode(ledger.encode(), "ledger.md", rec), rec)
    assert [f["title"] for f in rec.of("forks")] == ["Whose clock"]
    assert [e["title"] for e in rec.of("ledger")] == ["Turning"]


TOC = (
    "- [F1 — Do security alerts ever ride in a digest? \\[open\\]]"
    "(#f1--do-security-alerts-ever-ride-in-a-digest-open)\n"
    "- [F2 — Whose clock decides the send window? \\[open\\]](#f2)\n\n"
)


@pytest.mark.parametrize(
    ("file", "edit"),
    [
        ("forks.md", lambda text: text.replace("# Forks\n", "# Forks\n\n" + TOC, 1)),
        (
            "ledger.md",
            lambda text: text.replace(
                "# Ledger\n", "# Ledger\n\n- [D1 — Digests fold only low-urgency](#d1)\n", 1
            ),
        ),
        (
            "ledger.md",
            lambda text: text.replace(
                "- Why: users asked",
                "\n[D1]: #d1-digests\n[D2]: <#d2> 'D2'\n\n- Why: users asked",
                1,
            ),
        ),
    ],
)
def test_a_table_of_contents_or_a_link_definition_is_no_entry(
    tmp_path: Path, file: str, edit: Callable[[str], str]
) -> None:
    """A list of links to the entries' headings (a generated table of contents) points at
    entries, and a link reference definition (`[D1]: #d1`) is never shown. Before, each was
    taken for an entry not written as a heading: a healthy forks.md or ledger.md failed
    BS-FORK-01 or BS-LEDGER-01, and a definition ended the entry above it, so its fields
    stood under no entry (found by a hunt)."""
    found = detect(session(tmp_path, "open", file, edit), "session")
    assert found["result"] == "clean", found["notes"]
    assert found["notes"] == []


@pytest.mark.parametrize(
    ("file", "toc", "rules"),
    [
        (
            "forks.md",
            "- [F4 — Should digests be localised per recipient?](#f4)\n"
            "- [F5 — Should digests skip weekends? \\[open\\]](#f5--should-digests-skip)\n",
            {"BS-FORK-01", "BS-FORK-03"},
        ),
        (
            "ledger.md",
            "- [D1 — Digests fold only low-urgency notifications](#d1)\n"
            "- [D9 — Digests skip weekends](#d9--digests-skip-weekends)\n",
            {"BS-LEDGER-01"},
        ),
    ],
)
def test_a_table_of_contents_line_naming_an_entry_with_no_heading_is_noted(
    tmp_path: Path, file: str, toc: str, rules: set[str]
) -> None:
    """A table of contents points at entries, so its lines are no entries; but a line naming
    an entry the file has no heading for (F5, D9) is that entry's only trace. Before, every
    line that was only a link to a heading was skipped, so an open fork listed only in the
    table of contents vanished with no note and BS-FORK-03 passed (found by a hunt)."""
    title = "# Forks\n" if file == "forks.md" else "# Ledger\n"

    def edit(text: str) -> str:
        return text.replace(title, title + "\n" + toc, 1)

    found = detect(session(tmp_path, "converging", file, edit), "manifest")
    assert rules <= failing(found)
    noted = [n for n in found["notes"] if n["code"] == "entry-not-heading"]
    assert [n["line"] for n in noted] == [4], noted


def test_a_table_of_contents_with_the_marker_in_plain_brackets_is_no_entry(tmp_path: Path) -> None:
    """CommonMark allows balanced brackets in a link's text, so a table of contents may
    copy the fork's marker unescaped: `- [F1 — … [open]](#f1)`. Only escaped brackets were
    taken for a link, so such a healthy forks.md failed BS-FORK-01 (found by a hunt)."""
    toc = (
        "# Forks\n\n"
        "- [F1 — Do security alerts ever ride in a digest? [open]](#f1)\n"
        "- [F4 — Should digests be localised per recipient? "
        "[parked → docs/architecture/open-questions.md]](#f4)\n\n"
    )
    folder = session(tmp_path, "open", "forks.md", lambda text: text.replace("# Forks\n", toc, 1))
    found = detect(folder, "session")
    assert found["result"] == "clean", found["notes"]
    assert found["notes"] == []


@pytest.mark.parametrize(
    ("file", "old", "rules"),
    [
        (
            "forks.md",
            "templates is known\n",
            {"BS-FORK-01", "BS-FORK-03"},
        ),
        ("ops/capture.md", "write it up under docs/features.\n", {"BS-COMPOSE-02"}),
    ],
)
def test_an_entry_or_turn_after_a_br_is_noted_and_fails(
    tmp_path: Path, file: str, old: str, rules: set[str]
) -> None:
    """A `<br>` shows what follows on a line of its own, so a fork (`…<br>F5 — … [open]`) or
    a turn (`…<br>T10 · 2026-…`) written after one is meant as that entry, as the same line
    alone is. Only the text before the `<br>` was looked at: the open fork and the turn after
    Last compose vanished with no note, and the session was clean (found by a hunt)."""
    entry = {
        "forks.md": "F5 — Should digests skip weekends? [open]",
        "ops/capture.md": "T10 · 2026-07-10T16:20Z",
    }[file]

    def edit(text: str) -> str:
        return text.replace(old, old.rstrip("\n") + "<br>" + entry + "\n", 1)

    found = detect(session(tmp_path, "converging", file, edit), "manifest")
    assert rules <= failing(found)
    noted = [n for n in found["notes"] if n["code"] == "entry-not-heading"]
    assert [entry in n["message"] for n in noted] == [True], noted


@pytest.mark.parametrize(
    ("file", "old", "entry", "owner"),
    [
        ("ledger.md", "- Resolves: F3\n", "D9 — Digests keep a week", "D1"),
        (
            "forks.md",
            "- Closes when: the translation budget for notification templates is known\n",
            "F9 — Should digests skip weekends? [open]",
            "F4",
        ),
    ],
)
def test_a_field_right_before_an_entry_after_a_br_is_named_with_its_entry(
    tmp_path: Path, file: str, old: str, entry: str, owner: str
) -> None:
    """A field on the line of an entry written after a `<br>` (`- Resolves: F3<br>D9 — …`)
    is shown under the entry above, but its note said it stood under no entry heading, and
    its value ran on into the next entry's title (found by a hunt). The note names the
    entry the field belongs to, and the value the page shows."""

    def edit(text: str) -> str:
        return text.replace(old, old.rstrip("\n") + "<br>" + entry + "\n", 1)

    found = detect(session(tmp_path, "converging", file, edit), "manifest")
    (note,) = [n for n in found["notes"] if n["code"] == "field-outside-entry"]
    field = old.removeprefix("- ").rstrip("\n")
    assert note["message"].startswith(f"'{field[:40]}"), note
    assert f"' belongs to {owner}, " in note["message"], note
    assert "under no entry" not in note["message"] and entry not in note["message"], note


def _appended_rows_fail(tmp_path: Path, file: str, rows: str, rule: str, down: int) -> None:
    """`rows` appended to the converging case's `file` fail `rule` at the manifest gate, with
    a note on the appended line `down` (0: the first appended line)."""
    found = detect(session(tmp_path, "converging", file, lambda t: t + rows), "manifest")
    assert rule in failing(found), notes(found)
    line = len((FIXTURES / "cases/base/converging/repo" / SESSION / file).read_text().split("\n"))
    assert any(n["file"] == file and n["line"] == line + down for n in found["notes"]), notes(found)


# A row appended below a table after a blank line, or a table with no delimiter row: GFM
# reads a paragraph, not rows.
_STRAY_ROWS = [
    ("ops/capture.md", "\n| T10 | " + TURN_AT + " | user: one more thing |\n", "BS-COMPOSE-02"),
    ("forks.md", "\n| F9 | Should digests skip weekends? | [open] |\n", "BS-FORK-03"),
    ("forks.md", "\n| F9 — Should digests skip weekends? | open |\n", "BS-FORK-03"),
    ("ledger.md", "\n| Resolves | F4 |\n", "BS-FORK-02"),
    ("state.md", "\n| risks | what can fail | none yet |\n", "BS-ASPECT-02"),
]


@pytest.mark.parametrize(("file", "rows", "rule"), _STRAY_ROWS)
def test_a_table_row_outside_a_table_fails_its_rule(
    tmp_path: Path, file: str, rows: str, rule: str
) -> None:
    """A turn, fork or field written as a table row that GFM reads as a paragraph line (the
    table ended at a blank line above it, or it never had a delimiter row) was read as
    nothing: a turn after Last compose passed BS-COMPOSE-02, an open fork BS-FORK-03 at
    the manifest gate, a Resolves of the parked F4 BS-FORK-02, an aspect with no coverage
    BS-ASPECT-02 (found by a hunt). Each is
    read as the table row it shows, noted on its line, and fails the rule, as in a table."""
    _appended_rows_fail(tmp_path, file, rows, rule, down=1)


# The same rows right under a line of prose, no blank line between: GFM reads one paragraph.
_ROWS_UNDER_PROSE = [
    ("ops/capture.md", "user: one more\n| T10 | " + TURN_AT + " | user: later |\n---\n", 2),
    ("ops/capture.md", "late:\n| T10 | " + TURN_AT + " | user: one more thing |\n", 2),
    ("forks.md", "\nCame up late:\n| F9 | Should digests skip weekends? | [open] |\n", 3),
    ("ledger.md", "\nAlso settled here:\n| Resolves | F4 |\n", 3),
    ("state.md", "\nAdded at stop:\n| risks | what can fail | none yet |\n", 3),
]


@pytest.mark.parametrize(("file", "rows", "down"), _ROWS_UNDER_PROSE)
def test_a_table_row_right_under_prose_fails_its_rule(
    tmp_path: Path, file: str, rows: str, down: int
) -> None:
    """A row written directly under a line of prose was still read as nothing, though a row
    alone in its paragraph fails (found by a hunt): the paragraph mixed prose and rows, and
    only a paragraph made all of rows was weighed as a table. The rows are weighed as rows
    whatever stands above them; the prose stays prose."""
    rule = {f: r for f, _, r in _STRAY_ROWS}[file]
    _appended_rows_fail(tmp_path, file, rows, rule, down - 1)


# The same rows right under a file's last bullet: GFM reads them as its lazy continuation.
_ROWS_UNDER_A_BULLET = [
    ("forks.md", "| F9 | Should digests skip weekends? | [open] |\n", "BS-FORK-03"),
    ("ledger.md", "| Resolves | F4 |\n", "BS-FORK-02"),
    ("state.md", "| risks | what can fail | none yet |\n", "BS-ASPECT-02"),
]


@pytest.mark.parametrize(("file", "rows", "rule"), _ROWS_UNDER_A_BULLET)
def test_a_table_row_right_under_a_bullet_fails_its_rule(
    tmp_path: Path, file: str, rows: str, rule: str
) -> None:
    """A row written right under a bullet (`- Closes when: …` then `| F9 | … | [open] |`) was
    read as more of that bullet's text, so an open fork passed BS-FORK-03 with no note, where
    an entry's line so written (`F9 — … [open]`) ends the bullet and is noted (found by a
    hunt). The bullet ends before the row, which is weighed as a row."""
    _appended_rows_fail(tmp_path, file, rows, rule, down=0)


def test_prose_lines_that_begin_with_a_pipe_are_no_entries(tmp_path: Path) -> None:
    """A paragraph of pipe lines that names no entry (a small table missing its delimiter
    row, inside a fork's prose) is nothing to the readers: no note, nothing fails."""
    rows = "\n| option | cost |\n| wait for compose | 2 s |\n"
    found = detect(session(tmp_path, "converging", "forks.md", lambda t: t + rows), "manifest")
    assert failing(found) == set() and found["notes"] == [], notes(found)


# A fork or ledger entry indented four spaces, its fields with it: an indented code block,
# never an entry (spec §3.1), so it fails nothing; but it vanished with no note, so `clean`
# hid a line written as an entry (found by a hunt).
@pytest.mark.parametrize(
    ("file", "entry"),
    [
        ("ledger.md", "## D3 — Another\n" + LEDGER_BODY.replace("F4", "F1")),
        ("forks.md", "## F5 — Another [open]\n" + BODY),
    ],
)
def test_an_entry_indented_four_spaces_is_code_and_noted(
    tmp_path: Path, file: str, entry: str
) -> None:
    indented = "".join(f"    {line}\n" for line in entry.splitlines())
    folder = session(tmp_path, "open", file, lambda t: t + "\nProse.\n\n" + indented)
    found = detect(folder, "session")
    assert failing(found) == set()
    line = (folder / file).read_text().splitlines().index(indented.splitlines()[0]) + 1
    notes = [(n["code"], n["line"]) for n in found["notes"] if n["file"] == file]
    assert notes == [("entry-in-code", line)]


@pytest.mark.parametrize(
    ("base", "file", "old", "new", "gate"),
    [
        ("converging", "thesis.md", "## Claim", '## <a id="claim"></a>Claim', "manifest"),
        ("converging", "thesis.md", "## Argument", '## <span id="a">Argument</span>', "manifest"),
        ("converging", "state.md", "## Aspect map", '## <a id="map"></a>Aspect map', "manifest"),
        ("converging", "ops/capture.md", "### T9 ·", '### <a id="t9"></a>T9 ·', "manifest"),
        (
            "applied",
            "ops/manifest.md",
            "## Uselessness test",
            '## <a id="u"></a>Uselessness test',
            "move",
        ),
    ],
)
def test_a_heading_with_an_inline_tag_is_the_heading_the_page_shows(
    tmp_path: Path, base: str, file: str, old: str, new: str, gate: str
) -> None:
    """An anchor or a span in a heading shows nothing of its own: `## <a id="claim"></a>Claim`
    is the Claim section. A healthy folder so written failed BS-THESIS-01, BS-ASPECT-01 or
    BS-USELESS-01, and a failing re-run under such a uselessness heading went unread (found
    by two hunts). Fork and ledger entries so headed: tests/test_heading_names.py."""
    folder = session(tmp_path, base, file, lambda text: text.replace(old, new, 1))
    found = detect(folder, gate)
    assert failing(found) == set(), notes(found)


@pytest.mark.parametrize("heading", ["## Second cold reader", "## Uselessness-test rerun"])
def test_a_test_field_outside_the_uselessness_section_fails_useless_01(
    tmp_path: Path, heading: str
) -> None:
    """A failing re-run of the uselessness test under a heading that is not the section's:
    its `Result: fail` was not read and BS-USELESS-01 passed, clean (found by a hunt)."""
    edit = appended_text(f"\n{heading}\n- Result: fail\n")
    found = detect(session(tmp_path, "applied", "ops/manifest.md", edit), "move")
    assert "BS-USELESS-01" in failing(found), notes(found)
    assert any(
        "outside the '## Uselessness test' section" in f[2]
        for f in findings(found, "BS-USELESS-01")
    )


@pytest.mark.parametrize(
    "heading",
    [
        "## Uselessness test — Result: fail",
        "## Uselessness test (result: pass)",
        "## **Uselessness test** — Gaps: docs/a.md is missing",
    ],
)
def test_a_test_field_in_the_uselessness_heading_fails_useless_01(
    tmp_path: Path, heading: str
) -> None:
    """`## Uselessness test — Result: fail` over `- Result: pass`: the heading's field was
    not read and the test passed, clean (found by a hunt). A field is a line of its own."""
    edit = lambda text: text.replace("## Uselessness test", heading, 1)  # noqa: E731
    found = detect(session(tmp_path, "applied", "ops/manifest.md", edit), "move")
    assert failing(found) == {"BS-USELESS-01"}, notes(found)
    assert any("in its heading" in f[2] for f in findings(found, "BS-USELESS-01"))


@pytest.mark.parametrize(
    "heading", ["## Uselessness test — results below", "## Uselessness test: round 1"]
)
def test_trailing_words_after_the_uselessness_heading_are_no_field(
    tmp_path: Path, heading: str
) -> None:
    edit = lambda text: text.replace("## Uselessness test", heading, 1)  # noqa: E731
    found = detect(session(tmp_path, "applied", "ops/manifest.md", edit), "move")
    assert failing(found) == set(), notes(found)


def appended_text(more: str) -> Callable[[str], str]:
    return lambda text: text.rstrip("\n") + "\n" + more


@pytest.mark.parametrize("shown_f4", ["F\u200b4", "F\u00ad4", "F\u20604", "\uff264"])
def test_an_id_as_the_page_shows_it_is_read_in_a_list_of_ids(tmp_path: Path, shown_f4: str) -> None:
    """`Resolves: F3, F4` with an invisible character in F4, or a fullwidth F: the page shows
    F4, yet the ID was dropped and D1 resolving the parked F4 passed BS-FORK-02 with no note
    (found by a hunt). Every list of IDs reads them as shown (lexical.ids)."""
    edit = lambda text: text.replace("- Resolves: F3", f"- Resolves: F3, {shown_f4}", 1)  # noqa: E731
    found = detect(session(tmp_path, "converging", "ledger.md", edit), "session")
    assert "BS-FORK-02" in failing(found), notes(found)
