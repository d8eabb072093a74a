"""census.md §3.1 and §5 BS-LEDGER-01: an entry amended twice carries two annotations, and
every one counts. Two `Reversed by` bullets, or the phrase `(Reversed by D3)` in the heading
plus a `- Reversed by: D4` bullet, or two `Reverses:` bullets, name every D# they list; the
rule fails only when a named D# is no entry (or a value names none), and each finding names
the line that says that D#. An empty Decision, Why or How to apply is named at its own line.

Each case edits a copy of the healthy open base session (fixtures/cases/base) on disk and
runs `census detect`; one also crawls and checks the copies and reads `rule_results`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pipeline.detect import detect
from tests.conftest import checked_rows
from tests.test_ledger_ids import _session

D1 = "## D1 — Digests fold only low-urgency notifications"
RESOLVES = "- Resolves: F3\n"  # D1's last field, line 7 of the base ledger
WHY_2 = "- Why: silence is the failure mode"  # D2's Why, line 11 (its heading is line 9)


def _entry(n: int, *fields: str) -> str:
    extra = "".join(f"- {f}\n" for f in fields)
    return f"\n## D{n} — t{n}\n- Decision: d{n}\n- Why: w{n}\n- How to apply: h{n}\n{extra}"


D3, D4 = _entry(3, "Reverses: D1"), _entry(4, "Reverses: D1")


def _findings(session: Path) -> tuple[str, list[tuple[int, str]]]:
    outcome = next(o for o in detect(str(session), "session").outcomes if o.rule == "BS-LEDGER-01")
    return outcome.status, [(int(f["line"]), str(f["message"])) for f in outcome.findings]


def _twice(t: str) -> str:
    return t.replace(RESOLVES, RESOLVES + "- Reversed by: D3\n- Reversed by: D4\n") + D3 + D4


def _heading_and_bullet(t: str) -> str:
    t = t.replace(D1, D1 + " (Reversed by D3)")
    return t.replace(RESOLVES, RESOLVES + "- Reversed by: D4\n") + D3 + D4


def _two_reverses(t: str) -> str:
    return t + _entry(3, "Reverses: D1", "Reverses: D2")


@pytest.mark.parametrize("edit", [_twice, _heading_and_bullet, _two_reverses])
def test_every_annotation_of_an_entry_counts(tmp_path: Path, edit: Callable[[str], str]) -> None:
    """Every D# named exists: nothing fails, and no second annotation is 'not read'."""
    status, findings = _findings(_session(tmp_path, edit, "r"))
    assert (status, findings) == ("pass", [])


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        # The second bullet (line 9) names an entry that does not exist.
        (
            lambda t: (
                t.replace(RESOLVES, RESOLVES + "- Reversed by: D3\n- Reversed by: D99\n") + D3
            ),
            (9, "D1 is reversed by D99, which is not a ledger entry"),
        ),
        # The heading names D3 (line 3), the bullet D99 (line 8).
        (
            lambda t: (
                t.replace(D1, D1 + " (Reversed by D3)").replace(
                    RESOLVES, RESOLVES + "- Reversed by: D99\n"
                )
                + D3
            ),
            (8, "D1 is reversed by D99, which is not a ledger entry"),
        ),
        # D3's second Reverses (line 19) names no entry.
        (lambda t: t + _entry(3, "Reverses: D1", "Reverses: D98"), (19, "D3 reverses D98")),
    ],
)
def test_a_later_annotation_that_names_no_entry_fails_at_its_line(
    tmp_path: Path, edit: Callable[[str], str], expected: tuple[int, str]
) -> None:
    status, findings = _findings(_session(tmp_path, edit, "r"))
    assert status == "fail"
    line, message = expected
    assert [n for n, m in findings if m.startswith(message)] == [line], findings


# The phrase as the page shows it: a zero-width character inside it, or its ID typed in
# fullwidth as a CJK input method types it, still names D9, which is no entry. It was not read
# as the phrase, and BS-LEDGER-01 passed (found by a hunt).
@pytest.mark.parametrize(
    "phrase",
    [
        "Reversed by \u200bD9",
        "Reversed\u200b by D9",
        "Reversed by \u2060D9",
        "Reversed by Ｄ9",
        "Reversed by Ｄ９",
        "Ｒｅｖｅｒｓｅｄ ｂｙ D9",
        # The words hyphenated, the ID in parentheses, behind a #, in lower case or with a
        # hyphen, or a space as a character reference: each was prose (found by a hunt).
        "Reversed-by D9",
        "Reversed by (D9)",
        "Reversed by #D9",
        "reversed by d9",
        "Reversed by D-9",
        "Reversed&nbsp;by D9",
        # A space or another mark inside the ID, or words between the phrase and its ID:
        # each was prose with no note, and BS-LEDGER-01 passed (found by a hunt).
        "Reversed by D 9",
        "Reversed by D\u20139",
        "Reversed by D\u20119",
        "Reversed by D#9",
        "Reversed by D_9",
        "Reversed by decision D9",
        "Reversed by Decision 9",
        "Reversed by ledger entry D9",
        "Reversed by [decision D9](ledger.md#d9)",
        "Reversed by the later D9",
        "Reversed by \u201cD9\u201d",
        'Reversed by "D9"',
    ],
)
def test_the_phrase_as_the_page_shows_it_is_read(tmp_path: Path, phrase: str) -> None:
    status, findings = _findings(
        _session(tmp_path, lambda t: t.replace(D1, f"{D1}\n{phrase}"), "r")
    )
    assert status == "fail"
    assert [n for n, m in findings if "D1 is reversed by D9" in m] == [4], findings


# The phrase on a line of its own, as an annotation, that names no entry: the reversal
# cannot be checked, so BS-LEDGER-01 fails with the line named (until 2026-12-05 it was prose
# with no note, and the rule passed; found by a hunt).
@pytest.mark.parametrize(
    "phrase",
    [
        "Reversed by the review",
        "- Reversed by the review",
        "_Reversed by_ a later decision",
        "(Reversed by the review.)",
        "- Note: Reversed by the review",
        "Kept as the record (Reversed by the review).",
    ],
)
def test_the_phrase_naming_no_entry_fails(tmp_path: Path, phrase: str) -> None:
    status, findings = _findings(
        _session(tmp_path, lambda t: t.replace(D1, f"{D1}\n\n{phrase}\n"), "r")
    )
    assert status == "fail"
    assert [n for n, m in findings if "names no D#" in m] == [5], findings


# The words in a sentence are prose: `reversed by the user` says who may undo a setting.
@pytest.mark.parametrize(
    "prose",
    [
        "- Note: the default is reversed by the user in settings.",
        "The digest is easily reversed by the user.",
        "- Note: the old rule was\n  reversed by the team in July.",
        "The old rule was\nreversed by the team in July.",
    ],
)
def test_the_words_in_prose_are_no_annotation(tmp_path: Path, prose: str) -> None:
    status, findings = _findings(
        _session(tmp_path, lambda t: t.replace(D1, f"{D1}\n\n{prose}\n"), "r")
    )
    assert (status, findings) == ("pass", [])


def test_a_second_annotation_that_names_no_id_still_fails(tmp_path: Path) -> None:
    def edit(t: str) -> str:
        return t.replace(RESOLVES, RESOLVES + "- Reversed by: D3\n- Reversed by: the review\n") + D3

    status, findings = _findings(_session(tmp_path, edit, "r"))
    assert status == "fail"
    assert any(n == 9 and "names no D#" in m for n, m in findings), findings


def _phrase_names_a_missing_entry(t: str) -> str:
    # Line 8 names D3 (an entry), line 9 names D9 (none).
    note = "- Reversed by: D3\n- Note: partly; Reversed by D9 later\n"
    return t.replace(RESOLVES, RESOLVES + note) + D3


def _empty_why(t: str) -> str:
    return t.replace(WHY_2, "- Why:\n- Note: silence is the failure mode")


def test_crawl_and_check_name_the_line_that_says_it(tmp_path: Path) -> None:
    """A reversal names the line with the missing D#, not the first annotation's; an empty
    Why names its own line, not the heading's; in detect and in `rule_results` alike."""
    cases = {
        "phrase": (
            _phrase_names_a_missing_entry,
            9,
            "D1 is reversed by D9, which is not a ledger entry",
        ),
        "why": (_empty_why, 11, "D2 has an empty 'Why:'"),
    }
    for name, (edit, line, message) in cases.items():
        status, findings = _findings(_session(tmp_path, edit, name))
        assert (status, findings) == ("fail", [(line, message)]), name
    rows = checked_rows(
        tmp_path / "corpus",
        tmp_path / "out",
        "SELECT r.line, r.message FROM rule_results r "
        "WHERE r.rule_id = 'BS-LEDGER-01' AND r.status = 'fail' AND r.gate = 'session' "
        "ORDER BY r.line",
    )
    assert rows == [(9, cases["phrase"][2]), (11, cases["why"][2])]
