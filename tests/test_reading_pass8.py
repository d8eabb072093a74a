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
from tests.test_reading_pass6 import _replaced

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
        # A fragment named otherwise than `fragment:{name}`, as in a part of its own (stop 67).
        ("D1 and fragments:dst-edge", "fragments:dst-edge"),
        ("D1 + fragments/dst-edge.md", "fragments/dst-edge.md"),
        ("D1 + [DST notes](fragments/dst-edge.md)", "fragments/dst-edge.md"),
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


@pytest.mark.parametrize(
    "refs",
    [
        "F1; D1",
        "F1 and D1",
        "D1 (the fork F1 asked)",
        "F1, D1 (v2)",
        # A ref written as a link's text: its target is no second ref (found by a hunt: the
        # target read as a misspelt fragment and failed BS-ASPECT-01).
        "[fragment:send-window](fragments/send-window.md)",
        "[F1](forks.md#f1), [fragment:send-window](fragments/send-window)",
        "D1 and [`fragment:send-window`](fragments/send-window.md)",
    ],
)
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


# ─────────────────── forks and ledger fields (found by a hunt, 2026-12-07) ───────────────────

F2_TWIN = "- Raised by: twin (S2)"
D2_HOW = "the sender checks email first, digest second."


@pytest.mark.parametrize(
    "raiser", ["the twin", "our twin", "the twin agent", "[twin](../../agents/twin.md)"]
)
def test_the_twin_named_in_words_without_a_sync_fails_sync_02(tmp_path: Path, raiser: str) -> None:
    """§3.1: `Raised by: twin` with no S# fails BS-SYNC-02; the twin named in words (`the
    twin`) passed as a raiser of another kind."""
    edit = _replaced(F2_TWIN, f"- Raised by: {raiser}")
    assert "BS-SYNC-02" in failing(detect(session(tmp_path, "open", "forks.md", edit), "session"))


@pytest.mark.parametrize("raiser", ["the twin (S2)", "the twin in S2", "our twin, S2"])
def test_the_twin_named_in_words_with_its_sync_passes(tmp_path: Path, raiser: str) -> None:
    edit = _replaced(F2_TWIN, f"- Raised by: {raiser}")
    found = detect(session(tmp_path, "open", "forks.md", edit), "session")
    assert "BS-SYNC-02" not in failing(found), found


@pytest.mark.parametrize("joined", ["&", "and", "+", "/"])
def test_a_heading_of_two_forks_joined_by_a_word_is_no_entry(tmp_path: Path, joined: str) -> None:
    """`## F4 & F5 — …` read as F4 alone, and F5 vanished; `F4/F5` already failed."""
    edit = _replaced("## F4 —", f"## F4 {joined} F5 —")
    found = detect(session(tmp_path, "open", "forks.md", edit), "session")
    messages = [m for _, _, m in findings(found, "BS-FORK-01")]
    assert any("is meant as a fork entry" in m for m in messages), messages


@pytest.mark.parametrize("value", ["none.", "(none)", "None — a policy decision, no fork open"])
def test_resolves_none_with_commentary_closes_no_fork(tmp_path: Path, value: str) -> None:
    edit = _replaced(D2_HOW, f"{D2_HOW}\n- Resolves: {value}")
    found = detect(session(tmp_path, "open", "ledger.md", edit), "session")
    assert "BS-FORK-02" not in failing(found), found


def test_a_raiser_in_a_fence_below_its_name_is_read(tmp_path: Path) -> None:
    edit = _replaced(F2_TWIN, "- Raised by:\n  ```\n  twin (S9)\n  ```")
    found = detect(session(tmp_path, "open", "forks.md", edit), "session")
    messages = [m for _, _, m in findings(found, "BS-SYNC-02")]
    assert any("S9 is not in ops/sync-log.md" in m for m in messages), messages


@pytest.mark.parametrize(
    "written", ["- Resolves:\n  ```\n  F2\n  ```", "\n**Resolves:**\n\nF2", "- Resolves:\n\nF2"]
)
def test_resolves_with_its_value_below_is_read(tmp_path: Path, written: str) -> None:
    """An empty `Resolves:` over its value (in a fence, or past a blank line) read as none on
    purpose: F2, still listed, passed BS-FORK-02 with no note."""
    edit = _replaced(D2_HOW, f"{D2_HOW}\n{written}\n")
    found = detect(session(tmp_path, "open", "ledger.md", edit), "session")
    messages = [m for _, _, m in findings(found, "BS-FORK-02")]
    assert any("F2 is still listed" in m for m in messages), messages


def test_prose_below_an_empty_resolves_is_no_value_of_it(tmp_path: Path) -> None:
    edit = _replaced(D2_HOW, f"{D2_HOW}\n- Resolves:\n\nThe team agreed on a call.\n")
    found = detect(session(tmp_path, "open", "ledger.md", edit), "session")
    assert "BS-FORK-02" not in failing(found), found


@pytest.mark.parametrize("glue", ["", " ", "\t", "; "])
def test_a_sync_line_written_on_after_another_fails_sync_01(tmp_path: Path, glue: str) -> None:
    """A log with no final newline, appended to: S4's dispatch became S3's summary, and an
    unanswered dispatch before the newest passed BS-SYNC-01 (found by a hunt); it is read on
    its own, sharing the line, as a line joined by <br> already was."""

    def edit(text: str) -> str:
        return (
            text.rstrip("\n") + glue + "S4 | gate: on-demand | dispatched: 2026-07-10T16:06Z | "
            "scope: recheck\nS5 | gate: on-demand | dispatched: 2026-07-10T16:08Z | scope: again\n"
            "S5 → reconciled | 2026-07-10T16:09Z | 0 edits · 0 new forks · 0 open\n"
        )

    found = detect(session(tmp_path, "converging", "ops/sync-log.md", edit), "manifest")
    messages = [m for _, _, m in findings(found, "BS-SYNC-01")]
    assert any("S4 has no result" in m for m in messages), messages
    assert any("two sync lines on one line" in m for m in messages), messages


# ──────────────── manifest destinations (found by a hunt, 2026-12-07) ────────────────

ROW_3 = "| 3 | parked fork F4 | forks.md | docs/architecture/open-questions.md | append |"
INTO_SESSION = "\nSee the [brainstorm](../research/demo-brainstorm/thesis.md).\n"


def _routed(tmp_path: Path, cell: str, definitions: str = "") -> dict[str, object]:
    """The applied base with row 3's Destination written `cell`, and its document linking
    into the session, which BS-HARVEST-01 must see."""

    def edit(text: str) -> str:
        return text.replace(ROW_3, f"| 3 | parked fork F4 | forks.md | {cell} | append |") + (
            definitions
        )

    folder = session(tmp_path, "applied", "ops/manifest.md", edit)
    document = folder.parents[2] / "docs" / "architecture" / "open-questions.md"
    document.write_text(document.read_text() + INTO_SESSION)
    return detect(folder, "move")


@pytest.mark.parametrize(
    "cell",
    [
        "[Open questions [F4]](docs/architecture/open-questions.md)",
        "[Open questions \\[F4\\]](docs/architecture/open-questions.md)",
        "[demo](docs/features/demo.md), [Open questions [F4]](docs/architecture/open-questions.md)",
    ],
)
def test_a_destination_link_with_brackets_in_its_text_is_its_target(
    tmp_path: Path, cell: str
) -> None:
    """The outer `[` was forgotten at the inner `]`: the path read as `F4]](docs/…)`, taken
    for a document not created yet, and BS-HARVEST-01 passed on the real one's link."""
    messages = [m for _, _, m in findings(_routed(tmp_path, cell), "BS-HARVEST-01")]
    assert any("open-questions.md" in m for m in messages), messages


def test_a_shortcut_reference_destination_is_read(tmp_path: Path) -> None:
    """`[open questions]` with its label defined in the manifest was unread, a false failure
    (the collapsed `[open questions][]` was read); read, its document's link fails the rule."""
    definition = "\n[open questions]: docs/architecture/open-questions.md\n"
    found = _routed(tmp_path, "[open questions]", definition)
    messages = [m for _, _, m in findings(found, "BS-HARVEST-01")]
    assert messages and all("could not read" not in m for m in messages), messages
    assert any("open-questions.md" in m for m in messages), messages


@pytest.mark.parametrize(
    ("ref", "fails"),
    [
        ("fragment:`send window`", False),
        ('fragment:"send window"', False),
        ("fragment:`send window` (the DST notes)", False),
        ("fragment:`send window rules`", True),  # no such file: `send` is no match for it
    ],
)
def test_a_fragment_name_with_a_space_in_a_code_span_or_quotes_is_whole(
    tmp_path: Path, ref: str, fails: bool
) -> None:
    """A fragment's name is its file name, which may hold a space: in a code span or quotes
    it was cut at the space, so `send window` failed BS-ASPECT-01 and `send window rules`
    passed on a file `send.md` (found by a hunt)."""
    edit = lambda text: text.replace("fragment:send-window", ref)  # noqa: E731
    folder = session(tmp_path, "converging", "state.md", edit)
    fragments = folder / "fragments"
    (fragments / "send-window.md").rename(fragments / "send window.md")
    if "rules" in ref:
        (fragments / "send.md").write_text("# Send\n", encoding="utf-8")
    assert ("BS-ASPECT-01" in failing(detect(folder, "session"))) is fails


@pytest.mark.parametrize(
    ("aspect", "name"),
    [
        ("- read–write split — which store answers → D1", "read–write split"),
        ("- read—write split – which store answers → D1", "read—write split"),
        ("- quiet-hours — no sends at night → D1", "quiet-hours"),
        ("- batching—which notifications fold → D1", "batching"),
    ],
)
def test_an_aspect_name_ends_at_its_spaced_dash(aspect: str, name: str) -> None:
    """`read–write split — …`: the unspaced en dash is the name's own; the name was `read`
    and the rest the description (found by a hunt)."""
    from pipeline.parse.lexical import decode
    from pipeline.parse.records import Records
    from pipeline.parse.state import parse_state

    rec = Records("sid")
    text = f"# State\n- Status: open\n\n## Aspect map\n{aspect}\n"
    parse_state(decode(text.encode(), "state.md", rec), rec)
    assert [row["name"] for row in rec.of("aspects")] == [name]


# A comment opened inside a paragraph runs over its lines to `-->` (CommonMark's inline HTML):
# the page shows none of it. Until stop 67 the lines inside were read, so a field the page
# hides passed its rule (found by a hunt).
HIDDEN_BY_A_COMMENT = [
    (
        "state.md",
        "- Status: stopping\n- Posture: stop pipeline running, manifest approved, waiting on apply",
        "Posture: converging <!-- the old one\nStatus: stopping -->",
        "Posture: converging <!-- the old one -->\nStatus: stopping",
        "BS-STATE-01",
    ),
    (
        "ops/sync-log.md",
        "compose\nS1 → reconciled | 2026-07-06T10:15Z | 6 edits · 2 new forks · 2 open · "
        "untouched: opt-out",
        "compose <!-- the twin never answered\nS1 → reconciled | 2026-07-06T10:15Z | 6 edits "
        "· 2 new forks · 2 open · untouched: opt-out -->",
        "compose <!-- the twin answered -->\nS1 → reconciled | 2026-07-06T10:15Z | 6 edits "
        "· 2 new forks · 2 open · untouched: opt-out",
        "BS-SYNC-01",
    ),
]


@pytest.mark.parametrize(("file", "old", "hidden", "shown", "rule"), HIDDEN_BY_A_COMMENT)
def test_a_field_inside_a_comment_spanning_lines_is_not_read(
    tmp_path: Path, file: str, old: str, hidden: str, shown: str, rule: str
) -> None:
    edit = lambda t: t.replace(old, hidden, 1)  # noqa: E731
    assert rule in failing(detect(session(tmp_path, "converging", file, edit), "session"))
    edit = lambda t: t.replace(old, shown, 1)  # noqa: E731
    folder = session(tmp_path / "shown", "converging", file, edit)
    assert rule not in failing(detect(folder, "session"))


def test_a_comment_no_later_line_closes_is_text() -> None:
    from pipeline.parse.blocks import Paragraph, parse

    (block,) = parse(["a <!-- b", "Status: x"]).blocks
    assert isinstance(block, Paragraph)
    assert block.lines == [(1, "a <!-- b"), (2, "Status: x")]
    (block,) = parse(["a <!-- b", "Status: x -->", "c"]).blocks
    assert isinstance(block, Paragraph) and block.lines == [(1, "a"), (3, "c")]


@pytest.mark.parametrize("mark", ["✅ ", "✔️ ", "→ ", "🔒 "])
def test_a_symbol_before_a_field_name_is_a_mark_and_the_field_is_read(
    tmp_path: Path, mark: str
) -> None:
    """`- ✅ Resolves: F2` resolving a fork still listed open: the name behind the symbol was
    no field's, the line vanished, and BS-FORK-02 passed (found by a hunt)."""
    fork = "\n## F2 — Whose clock decides? [open]\n- Raised by: user\n- Closes when: a pick\n"
    folder = session(
        tmp_path,
        "converging",
        "ledger.md",
        lambda t: t.replace("- Resolves: F2", f"- {mark}Resolves: F2"),
    )
    with open(folder / "forks.md", "a", encoding="utf-8") as handle:
        handle.write(fork)
    assert "BS-FORK-02" in failing(detect(folder, "session"))
    edit = lambda t: t.replace("- Closes when:", f"- {mark}Closes when:")  # noqa: E731
    assert (
        failing(detect(session(tmp_path / "f", "converging", "forks.md", edit), "manifest"))
        == set()
    )


@pytest.mark.parametrize(
    "line",
    [
        "- F6 — Should weekly stats leave the digest? **open**",
        "- F6 — Should weekly stats leave the digest? — open",
        "- F6 — Should weekly stats leave the digest? (still open)",
        "- F6: Should weekly stats leave the digest? parked → docs/architecture/open-questions.md",
        "F6 — Should weekly stats leave the digest? *open*",
    ],
)
def test_a_fork_written_as_a_line_with_a_bare_marker_fails(tmp_path: Path, line: str) -> None:
    """A fork as a list item or line, its marker with no brackets: it vanished, and an open
    fork passed the manifest gate clean (found by a hunt)."""
    edit = lambda t: t + f"\n## Still open\n{line}\n"  # noqa: E731
    found = detect(session(tmp_path, "converging", "forks.md", edit), "manifest")
    assert {"BS-FORK-01", "BS-FORK-03"} <= failing(found), found


@pytest.mark.parametrize(
    "line", ["- F4 stays parked until the budget is known.", "- F2 — Should the API stay open?"]
)
def test_prose_naming_a_fork_and_a_marker_word_stays_prose(tmp_path: Path, line: str) -> None:
    edit = lambda t: t + f"\n## Notes\n{line}\n"  # noqa: E731
    assert failing(detect(session(tmp_path, "converging", "forks.md", edit), "manifest")) == set()
