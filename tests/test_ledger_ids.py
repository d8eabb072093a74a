"""census.md §3.1, IDs are found as words: every D# a `Reversed by` or `Reverses` names
counts, not only the first, and the phrase `Reversed by D#` counts however emphasis wraps
its words. A D# that is no ledger entry fails BS-LEDGER-01, naming it.

Each case edits a copy of a healthy base session (fixtures/cases/base) on disk, runs
`census detect` on it, and one case also crawls and checks the copy.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

import duckdb
import pytest

from pipeline.check import check
from pipeline.crawl import crawl
from pipeline.detect import Detection, detect
from tests.conftest import FIXTURES, copy_tree

SESSION = "docs/research/demo-brainstorm"
D1 = "## D1 — Digests fold only low-urgency notifications\n"


def _session(tmp_path: Path, edit: Callable[[str], str], name: str = "r") -> Path:
    """A copy of the open base session with ledger.md edited, as repository `name` under
    tmp_path/corpus; returns the session folder."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "corpus" / name)
    path = repo / SESSION / "ledger.md"
    text = path.read_text(encoding="utf-8")
    edited = edit(text)
    assert edited != text, "the edit changed nothing"
    path.write_text(edited, encoding="utf-8")
    return repo / SESSION


def _ledger_01(found: Detection) -> tuple[str, list[str]]:
    outcome = next(o for o in found.outcomes if o.rule == "BS-LEDGER-01")
    return outcome.status, [f["message"] for f in outcome.findings]


def test_the_base_session_passes(tmp_path: Path) -> None:
    status, _ = _ledger_01(detect(str(_session(tmp_path, lambda t: t + "\n")), "session"))
    assert status == "pass"


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda t: t + "- Reversed by: D2, D99\n", "D2 is reversed by D99"),
        (lambda t: t + "- Reversed by: [D1](#d1) and [D99](#d99)\n", "D2 is reversed by D99"),
        (lambda t: t + "- Reverses: D1, D99\n", "D2 reverses D99"),
        (lambda t: t + "- Reverses: D1; D99\n", "D2 reverses D99"),
        (lambda t: t.replace(D1, D1 + "_Reversed by_ D99\n\n"), "D1 is reversed by D99"),
        (lambda t: t.replace(D1, D1 + "**Reversed by** D2, D99\n\n"), "D1 is reversed by D99"),
        (lambda t: t + "\nReversed by D1 and D99.\n", "D2 is reversed by D99"),
        (lambda t: t + "\nReversed by D1, D2 and D99.\n", "D2 is reversed by D99"),
        # Emphasis on one word of the phrase, as a page shows it: the reversal was dropped.
        (lambda t: t + "- **Reversed** by D99\n", "D2 is reversed by D99"),
        (lambda t: t + "- *Reversed* by: D99\n", "D2 is reversed by D99"),
        (lambda t: t + "- Reversed **by** D99\n", "D2 is reversed by D99"),
        (lambda t: t.replace(D1, D1[:-1] + " (**reversed** by D99)\n"), "D1 is reversed by D99"),
    ],
)
def test_every_id_a_reversal_names_must_be_an_entry(
    tmp_path: Path, edit: Callable[[str], str], expected: str
) -> None:
    status, messages = _ledger_01(detect(str(_session(tmp_path, edit)), "session"))
    assert status == "fail", messages
    assert f"{expected}, which is not a ledger entry" in messages


def test_a_later_phrase_in_the_entry_counts(tmp_path: Path) -> None:
    def edit(text: str) -> str:
        text = text.replace(D1, D1 + "Reversed by D2.\n\n")
        return text.replace("- Resolves: F3", "- Resolves: F3\n\nLater reversed by D99.")

    status, messages = _ledger_01(detect(str(_session(tmp_path, edit)), "session"))
    assert status == "fail"
    assert any("D1 is reversed by D99, which is not a ledger entry" in m for m in messages)


def test_reversals_that_name_only_entries_pass(tmp_path: Path) -> None:
    def edit(text: str) -> str:
        return text.replace(D1, D1 + "_Reversed by_ D2\n\n") + "- Reverses: D1 and [D1](#d1)\n"

    status, messages = _ledger_01(detect(str(_session(tmp_path, edit)), "session"))
    assert status == "pass", messages


def test_a_crawl_and_check_fail_on_the_second_id(tmp_path: Path) -> None:
    session = _session(tmp_path, lambda t: t + "- Reversed by: D2, D99\n- Reverses: D1, D98\n")
    assert _ledger_01(detect(str(session), "session"))[0] == "fail"
    out = tmp_path / "out"
    crawl([str(tmp_path / "corpus")], str(out), workers=1)
    check(str(out))
    with duckdb.connect(str(out / "census.duckdb"), read_only=True) as con:
        con.execute(f"SET file_search_path = '{out}'")
        ledger = con.execute(
            "SELECT reversed_by, reversed_by_ids, reverses, reverses_ids FROM ledger "
            "WHERE decision_id = 'D2'"
        ).fetchall()
        status = con.execute(
            "SELECT status FROM statuses WHERE rule_id = 'BS-LEDGER-01'"
        ).fetchall()
    assert ledger == [("D2", ["D2", "D99"], "D1", ["D1", "D98"])]
    assert status == [("fail",)]


@pytest.mark.parametrize(
    "line",
    [
        "- Resolved: F2",
        "- Resolves forks: F2",
        "- Resolve F2",
        "- **Resolved**: F1, F2",
        # The noun, and the forms above as a plain line of their own, which §3.1 makes a
        # field as a bullet is: each vanished with no note (found by a hunt).
        "- Resolution: F2",
        "- Resolutions: F1, F2",
        "\nResolved: F2",
        "\nResolve F2",
        "\n**Resolution**: F2",
        # A fork closed under a name the schema does not use: it vanished with no note, and
        # BS-FORK-02 passed with F2 still open (found by a hunt).
        "- Closes: F2",
        "\nCloses: F2",
        "- Fixes: F2",
        "- **Settles**: F2",
        "\nSettles F2",
        "- Answers: F2",
        "- Closed: F1, F2",
        # The ID behind a mark or a word, as the Resolves field itself reads it: the line
        # vanished with no note (found by a hunt).
        "- Resolved: #F2",
        "- Resolved: (F2)",
        "- Closes: fork F2",
        "\nResolved #F2",
        # The colon inside the emphasis, as §3.1 writes `**Status:**` (found by a hunt).
        "- **Resolved:** F2",
        "- **Closes:** F2",
        # As the page shows it: a struck ID names nothing, a `<br>` breaks the line (found by
        # a hunt: both vanished).
        "- Closes: ~~F4~~ F2",
        "- Resolved:<br>F2",
        # The name behind a word that qualifies it: the field reader matched names whole,
        # and the line vanished with no note (until 2026-12-07).
        "- Also resolves: F2",
        "- Partially resolves: F2",
        "- **Also resolves:** F2",
        "\nAlso resolves: F2",
        # The noun first, a plural in brackets, two names, or another verb: the line vanished
        # with no note (found by a hunt, until 2026-12-07).
        "- Forks resolved: F2",
        "- Fork closed: F2",
        "- Resolves fork(s): F2",
        "- Resolves/closes: F2",
        "- Decides: F2",
        "- Addresses: F2",
    ],
)
def test_another_form_of_resolves_is_read_and_noted(tmp_path: Path, line: str) -> None:
    """`Resolved: F2` or `Resolves forks: F2` was no field at all: dropped without a word,
    so BS-FORK-02 passed with F2 still listed open. It is taken as Resolves, with a note
    that fails the rule; `- Resolving F2 needs data` stays prose."""
    found = detect(str(_session(tmp_path, lambda t: t + line + "\n")), "session")
    outcome = next(o for o in found.outcomes if o.rule == "BS-FORK-02")
    messages = [f["message"] for f in outcome.findings]
    assert outcome.status == "fail", messages
    assert any("is meant as a 'Resolves:' field" in m for m in messages), messages
    assert any("F2 is still listed [open] but D2 resolves it" in m for m in messages), messages
    for n, said in enumerate(["- Resolving F2 needs data", "\nResolving F2 needs data"]):
        prose = detect(str(_session(tmp_path / f"p{n}", partial(_appended, said))))
        assert next(o for o in prose.outcomes if o.rule == "BS-FORK-02").status == "pass"


# A pointer to a fork is no closing of it: these stay prose, with no note.
@pytest.mark.parametrize(
    "line",
    [
        "- See also: F2",
        "\nRelated: F2",
        "- Context: F2",
        "- Closes when F2 is settled, D2 holds",
        "- Fixtures: F2 samples",
        "- Also see: F2",
        "\nNow resolving F2 needs data",
        "- Addresses the timing concern in F2",
        "- Forks: F2",
    ],
)
def test_a_pointer_to_a_fork_stays_prose(tmp_path: Path, line: str) -> None:
    found = detect(str(_session(tmp_path, lambda t: t + line + "\n")), "session")
    outcome = next(o for o in found.outcomes if o.rule == "BS-FORK-02")
    assert outcome.status == "pass", [f["message"] for f in outcome.findings]
    assert not [n for n in found.notes if n["code"] == "malformed-field"], found.notes


D2 = "## D2 — Turning digests off falls back to immediate sends"


# A fork closed in words in the entry's heading, or in brackets in its prose: it vanished,
# and BS-FORK-02 passed with F2 still listed open (found by a hunt).
@pytest.mark.parametrize(
    "heading",
    [
        f"{D2} (resolves F2)",
        f"{D2} — resolves F2",
        f"{D2} [closes F2]",
        f"{D2} (settled F1 and F2)",
        f"{D2}\nOpt-out is settled here (resolves F2).",
    ],
)
def test_a_fork_closed_in_the_heading_or_a_bracket_is_read_and_noted(
    tmp_path: Path, heading: str
) -> None:
    found = detect(str(_session(tmp_path, lambda t: t.replace(D2, heading))), "session")
    outcome = next(o for o in found.outcomes if o.rule == "BS-FORK-02")
    messages = [f["message"] for f in outcome.findings]
    assert any("is meant as a 'Resolves:' field" in m for m in messages), messages
    assert any("F2 is still listed [open] but D2 resolves it" in m for m in messages), messages


# The field written with its colon in the heading or in brackets (`(Resolves: F2)`, `·
# Reverses: D9`): the phrase needed a space after the verb, so it vanished with no note and
# the rule passed (until 2026-12-07).
@pytest.mark.parametrize(
    ("heading", "rule", "said"),
    [
        (f"{D2} (Resolves: F2)", "BS-FORK-02", "F2 is still listed [open] but D2 resolves it"),
        (f"{D2} · **Resolves:** F2", "BS-FORK-02", "F2 is still listed [open] but D2 resolves it"),
        (f"{D2}\nOpt-out is settled [resolves:F2].", "BS-FORK-02", "D2 resolves it"),
        (f"{D2} (Reverses: D9)", "BS-LEDGER-01", "D2 reverses D9, which is not a ledger entry"),
    ],
)
def test_a_field_with_its_colon_in_the_heading_or_a_bracket_is_read_and_noted(
    tmp_path: Path, heading: str, rule: str, said: str
) -> None:
    found = detect(str(_session(tmp_path, lambda t: t.replace(D2, heading))), "session")
    outcome = next(o for o in found.outcomes if o.rule == rule)
    messages = [f["message"] for f in outcome.findings]
    assert any("is written in a heading or brackets, not as a field" in m for m in messages)
    assert any(said in m for m in messages), messages


@pytest.mark.parametrize(
    "edit",
    [
        # The heading repeats the entry's own Resolves field: no note.
        lambda t: t.replace(
            "## D1 — Digests fold only low-urgency notifications",
            "## D1 — Digests fold (resolves F3)",
        ),
        # Running prose, and a condition, stay prose.
        lambda t: t.replace(D2, f"{D2}\nThe sender now resolves F2 faster."),
        lambda t: t.replace(D2, f"{D2} (closes when F2 lands)"),
    ],
)
def test_a_heading_that_repeats_resolves_or_prose_is_no_issue(
    tmp_path: Path, edit: Callable[[str], str]
) -> None:
    found = detect(str(_session(tmp_path, edit)), "session")
    outcome = next(o for o in found.outcomes if o.rule == "BS-FORK-02")
    assert outcome.status == "pass", [f["message"] for f in outcome.findings]
    assert not [n for n in found.notes if n["code"] == "malformed-field"], found.notes


# An entry reversed in words in the heading or in brackets: it vanished, and BS-LEDGER-01
# passed on a reversal of no entry (found by a hunt).
@pytest.mark.parametrize(
    "heading", [f"{D2} (reverses D9)", f"{D2} — reverts D9", f"{D2}\n(reverses D9)"]
)
def test_an_entry_reversed_in_words_is_read_and_noted(tmp_path: Path, heading: str) -> None:
    status, messages = _ledger_01(
        detect(str(_session(tmp_path, lambda t: t.replace(D2, heading))), "session")
    )
    assert status == "fail"
    assert "D2 reverses D9, which is not a ledger entry" in messages, messages
    assert any("is meant as a 'Reverses:' field" in m for m in messages), messages


@pytest.mark.parametrize(
    "edit",
    [
        lambda t: t.replace(D2, f"{D2} (reverses D1)\n- Reverses: D1"),
        lambda t: t.replace(D2, f"{D2}\nThis reverses D1's default."),
    ],
)
def test_a_reversal_in_words_beside_its_field_or_in_prose_is_no_issue(
    tmp_path: Path, edit: Callable[[str], str]
) -> None:
    status, messages = _ledger_01(detect(str(_session(tmp_path, edit)), "session"))
    assert status == "pass", messages


def _appended(line: str, text: str) -> str:
    return text + line + "\n"


# Another form of Reverses or Reversed by, as a bullet or a plain line: `Reversed: D9`, the
# noun `Reversal of: D9`, `Reverts: D9`, `Reverted by: D9`. Each but the first bullet vanished
# with no note, and BS-LEDGER-01 passed a reversal naming no entry (found by a hunt).
@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("\nReversed: D9", "D2 is reversed by D9"),
        ("- Reversal of: D9", "D2 reverses D9"),
        ("\nReversal of: D9", "D2 reverses D9"),
        ("- Reverts: D9", "D2 reverses D9"),
        ("- Reverted by: D9", "D2 is reversed by D9"),
        ("\nReverted by D9", "D2 is reversed by D9"),
        # A reversal under a name the schema does not use: read as the field it means, noted,
        # where BS-LEDGER-01 passed with no word (found by a hunt).
        ("- Superseded by: D9", "D2 is reversed by D9"),
        ("\n**Superseded by**: D9", "D2 is reversed by D9"),
        ("- Undone by: D9", "D2 is reversed by D9"),
        ("\nUndone by D9", "D2 is reversed by D9"),
        ("- Overridden by: D9", "D2 is reversed by D9"),
        ("- Replaced by: D9", "D2 is reversed by D9"),
        ("- Supersedes: D9", "D2 reverses D9"),
        ("\nSupersedes: D9", "D2 reverses D9"),
        ("- **Replaces**: D9", "D2 reverses D9"),
        ("\nReplaces D9", "D2 reverses D9"),
        ("- Overrides: D9", "D2 reverses D9"),
        ("- Undoes: D9", "D2 reverses D9"),
        # Revoked: until 2026-12-07 it vanished with no note (found by a hunt).
        ("- Revoked by: D9", "D2 is reversed by D9"),
        ("\nRevoked by D9.", "D2 is reversed by D9"),
        ("- Revokes: D9", "D2 reverses D9"),
        ("- Reverts: #D9", "D2 reverses D9"),
        ("- Superseded by: (D9)", "D2 is reversed by D9"),
        ("- **Superseded by:** D9", "D2 is reversed by D9"),
        ("\n**Reverts:** D9", "D2 reverses D9"),
        # The name behind a word that qualifies it (until 2026-12-07 it vanished).
        ("- Also reverses: D9", "D2 reverses D9"),
        ("- Partially reverses: D9", "D2 reverses D9"),
    ],
)
def test_another_form_of_a_reversal_is_read_and_noted(tmp_path: Path, line: str, said: str) -> None:
    found = detect(str(_session(tmp_path, lambda t: t + line + "\n")), "session")
    outcome = next(o for o in found.outcomes if o.rule == "BS-LEDGER-01")
    messages = [f["message"] for f in outcome.findings]
    assert outcome.status == "fail", messages
    assert any(m.startswith(said) for m in messages), messages
    assert any("is meant as a" in m for m in messages), messages


# Prose that begins with such a word and goes on is no field: the base session still passes.
@pytest.mark.parametrize(
    "line",
    [
        "\nReplaces the old flow that D1 described.",
        "- Overrides in D1 stay as they are",
        "\nSupersedes nothing.",
        "- Undone by hand when support asks",
        # A word that only begins like one of them is another word.
        "- Undocumented: D1 in the runbook",
    ],
)
def test_prose_that_begins_with_a_reversal_word_passes(tmp_path: Path, line: str) -> None:
    found = detect(str(_session(tmp_path, lambda t: t + line + "\n")), "session")
    status, messages = _ledger_01(found)
    assert status == "pass", messages


D2 = "## D2 — Turning digests off falls back to immediate sends"


# A reversal under another word written as prose or in the heading, the ID right after `by`:
# no field, so it vanished with no note and BS-LEDGER-01 passed (found by a hunt). It is read
# as `Reversed by D9` (which counts anywhere in an entry, its heading included) and noted.
@pytest.mark.parametrize(
    ("edit", "line"),
    [
        (partial(_appended, "\nSuperseded by D9."), 14),
        (partial(_appended, "\nIt was replaced by D9 after the review."), 14),
        (partial(_appended, "\nThe toggle (overridden by D9) stays."), 14),
        (partial(_appended, "- Note: undone by **D9** in July"), 13),
        (partial(_appended, "\nThis was reverted by D9, then kept."), 14),
        (lambda t: t.replace(D2, D2 + " (superseded by D9)"), 9),
        (lambda t: t.replace(D2, D2 + " — replaced by [D9](#d9)"), 9),
    ],
)
def test_a_reversal_under_another_word_in_prose_is_read_and_noted(
    tmp_path: Path, edit: Callable[[str], str], line: int
) -> None:
    found = detect(str(_session(tmp_path, edit)), "session")
    status, messages = _ledger_01(found)
    assert status == "fail", messages
    assert "D2 is reversed by D9, which is not a ledger entry" in messages, messages
    (note,) = [n for n in found.notes if n["code"] == "malformed-field"]
    assert note["line"] == line and "is meant as a 'Reversed by' annotation" in note["message"]


def test_a_reversal_under_another_word_naming_an_entry_still_fails(tmp_path: Path) -> None:
    """D1 exists, but `Superseded by D1.` is not how the schema writes it: noted, and the
    rule fails on that note alone."""
    found = detect(str(_session(tmp_path, partial(_appended, "\nSuperseded by D1."))))
    status, messages = _ledger_01(found)
    assert status == "fail" and len(messages) == 1, messages
    assert "'Superseded by D1' is meant as a 'Reversed by' annotation" in messages[0]


@pytest.mark.parametrize(
    "line",
    [
        "\nThis supersedes D1 in part.",
        "\nIt replaces D1's wording.",
        "\nReplaced by hand when D1 was written.",
        "- Overridden by the user per account; see D1",
    ],
)
def test_a_reversal_word_not_followed_by_an_id_stays_prose(tmp_path: Path, line: str) -> None:
    found = detect(str(_session(tmp_path, partial(_appended, line))), "session")
    status, messages = _ledger_01(found)
    assert status == "pass", messages
    assert not [n for n in found.notes if n["code"] == "malformed-field"], found.notes


def _fork_02(found: Detection) -> tuple[str, list[str]]:
    outcome = next(o for o in found.outcomes if o.rule == "BS-FORK-02")
    return outcome.status, [f["message"] for f in outcome.findings]


@pytest.mark.parametrize("written", ["F3–F5", "F3-F5", "F3 .. F5", "F3 to F5", "F3–5"])
def test_a_range_of_forks_resolved_fails_with_its_line(tmp_path: Path, written: str) -> None:
    """`Resolves: F3–F5` read F3 and F5 only (IDs are words, §3.1): parked F4 between them
    stayed in forks.md and BS-FORK-02 passed (found by a hunt). The range is noted on its line
    and fails the rule; the same forks named one by one pass."""
    listed = _session(tmp_path, lambda t: t.replace("- Resolves: F3", "- Resolves: F3, F5"), "a")
    assert _fork_02(detect(str(listed), "session"))[0] == "pass"
    ranged = _session(tmp_path, lambda t: t.replace("- Resolves: F3", f"- Resolves: {written}"))
    found = detect(str(ranged), "session")
    status, messages = _fork_02(found)
    assert status == "fail", messages
    assert any("a range: only the forks it names are read" in m for m in messages), messages
    assert any(n["code"] == "malformed-field" and n["file"] == "ledger.md" for n in found.notes)


def _issues(found: Detection, rule: str) -> list[tuple[str, int, str]]:
    outcome = next(o for o in found.outcomes if o.rule == rule)
    return [(f["file"], f["line"], f["message"]) for f in outcome.findings]


@pytest.mark.parametrize("spelled", ["F-4", "f4", "F#4", "F 4", "F.4", "Fork 4", "fork #4"])
def test_a_misspelt_id_beside_others_in_resolves_fails_fork_02(
    tmp_path: Path, spelled: str
) -> None:
    """`Resolves: F3, F-4` was read as F3 alone: F4, parked, went unread and BS-FORK-02
    passed, clean, with no note (spec §3.1, fail closed). The misspelt ID is a parse issue
    that names it, and the rule that needs the field fails."""
    edit = lambda t: t.replace("- Resolves: F3", f"- Resolves: F3, {spelled}", 1)  # noqa: E731
    found = detect(str(_session(tmp_path, edit)), "session")
    assert [o.status for o in found.outcomes if o.rule == "BS-FORK-02"] == ["fail"]
    message = f"D1 Resolves '{spelled}', which is no F#: F4 is not read (write F4)"
    assert ("ledger.md", 7, f"could not read: {message}") in _issues(found, "BS-FORK-02")


@pytest.mark.parametrize(
    "value",
    [
        "[F3](forks.md#f3)",
        '<a href="forks.md#f3">F3</a>',
        "F3 (the f-stop question, v2 of the plan)",
        "F3 and F3",
    ],
)
def test_ids_in_links_and_commentary_without_a_misspelt_id_pass(tmp_path: Path, value: str) -> None:
    edit = lambda t: t.replace("- Resolves: F3", f"- Resolves: {value}", 1)  # noqa: E731
    found = detect(str(_session(tmp_path, edit)), "session")
    assert [o.status for o in found.outcomes if o.rule == "BS-FORK-02"] == ["pass"], value
    assert found.notes == [], value


@pytest.mark.parametrize("field", ["Reverses", "Reversed by"])
def test_a_misspelt_id_beside_others_in_a_reversal_fails_ledger_01(
    tmp_path: Path, field: str
) -> None:
    found = detect(str(_session(tmp_path, lambda t: t + f"- {field}: D1, D-9\n")), "session")
    status, messages = _ledger_01(found)
    assert status == "fail", messages
    assert f"could not read: D2 {field} 'D-9', which is no D#: D9 is not read (write D9)" in (
        messages
    )


@pytest.mark.parametrize(
    ("phrase", "spelled"),
    [("Reversed by D1 and D 9.", "D 9"), ("_Reversed by_ D1, decision 9", "decision 9")],
)
def test_a_misspelt_id_after_the_phrase_in_prose_fails_ledger_01(
    tmp_path: Path, phrase: str, spelled: str
) -> None:
    """`Reversed by D1 and D 9` in prose was read as D1 alone: D9, no entry, went unread and
    BS-LEDGER-01 passed with no note. The misspelt ID in the phrase's clause is a parse issue
    that names it."""
    found = detect(str(_session(tmp_path, lambda t: t + f"\n{phrase}\n")), "session")
    status, messages = _ledger_01(found)
    assert status == "fail", messages
    message = (
        f"could not read: D2 Reversed by '{spelled}', which is no D#: D9 is not read (write D9)"
    )
    assert message in messages


def test_a_misspelt_id_past_the_phrase_s_clause_is_prose(tmp_path: Path) -> None:
    text = "\nReversed by D1 (the fork 4 question); the D 9 draft stood.\n"
    status, messages = _ledger_01(detect(str(_session(tmp_path, lambda t: t + text)), "session"))
    assert status == "pass", messages
