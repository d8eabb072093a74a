"""census.md §3.1 "Names are lenient": a section heading whose name is wrapped in any
emphasis (`_x_`, `__x__`, `*x*`, `**x**`, a code span, `**_x_**`) and followed by text
(`## _Claim_ (one sentence)`) is that section; a longer word (`## Claimant`) is not.
The underscore forms were missed, so thesis.md had no Claim, the manifest no
uselessness test, and state.md's aspects lay outside any map.

Each case edits a copy of a healthy base session (fixtures/cases/base) on disk and runs
`census detect`, or crawl and check.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.parse.session import SessionInput, parse_session
from tests.conftest import FIXTURES, copy_tree
from tests.test_entry_reading import detect, failing, statuses

runner = CliRunner()
SESSION = Path("docs/research/demo-brainstorm")
EMPHASES = ("_{}_", "__{}__", "*{}*", "**{}**", "`{}`", "**_{}_**", "_**{}**_")


def session(tmp_path: Path, base: str, file: str, old: str, new: str) -> Path:
    """A copy of a base session with one line of a file replaced; the session folder."""
    repo = copy_tree(FIXTURES / "cases" / "base" / base / "repo", tmp_path / "repo")
    path = repo / SESSION / file
    text = path.read_text(encoding="utf-8")
    assert f"\n{old}\n" in text
    path.write_text(text.replace(f"\n{old}\n", f"\n{new}\n"), encoding="utf-8")
    return repo / SESSION


def test_the_claim_in_any_emphasis_with_text_after_it(tmp_path: Path) -> None:
    for at, form in enumerate(EMPHASES):
        heading = "## " + form.format("Claim") + " (one sentence)"
        folder = session(tmp_path / str(at), "open", "thesis.md", "## Claim", heading)
        found = detect(folder, "session")
        assert statuses(found)["BS-THESIS-01"] == "pass", heading
        assert found["notes"] == [], heading
    # The name going on as a word is another heading, emphasis or not.
    for at, heading in enumerate(("## Claimant", "## Claims and more", "## _Claims_ (x)")):
        folder = session(tmp_path / f"no{at}", "open", "thesis.md", "## Claim", heading)
        assert statuses(detect(folder, "session"))["BS-THESIS-01"] == "fail", heading


def test_the_uselessness_test_in_underscores_with_text_after_it(tmp_path: Path) -> None:
    for at, form in enumerate(("_{}_", "__{}__")):
        heading = "## " + form.format("Uselessness test") + " (round 1)"
        folder = session(
            tmp_path / str(at), "applied", "ops/manifest.md", "## Uselessness test", heading
        )
        assert statuses(detect(folder, "move"))["BS-USELESS-01"] == "pass", heading


def test_the_aspect_map_in_underscores_holds_the_aspects(tmp_path: Path) -> None:
    heading = "## __Aspect map__ (derived from basis)"
    folder = session(tmp_path, "open", "state.md", "## Aspect map", heading)
    found = detect(folder, "session")
    assert statuses(found)["BS-ASPECT-01"] == "pass"
    assert found["notes"] == []
    out = tmp_path / "out"
    crawled = runner.invoke(app, ["crawl", str(tmp_path / "repo"), "--out", str(out)])
    assert crawled.exit_code == 0, crawled.output
    assert runner.invoke(app, ["check", "--out", str(out)]).exit_code == 0
    query = (
        "SELECT s.aspect_map_line, (SELECT count(*) FROM aspects a "
        "WHERE a.snapshot_id = s.snapshot_id) AS aspects FROM snapshots s"
    )
    result = runner.invoke(app, ["sql", query, "--out", str(out), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [{"aspect_map_line": 8, "aspects": 3}]


def test_a_section_heading_behind_a_number_or_an_article_is_noted(tmp_path: Path) -> None:
    """`## 1. Claim` or `## The claim` is no `## Claim` (§3.1 allows text after the name,
    not before it), so BS-THESIS-01 failed as if the section were missing, and no note named
    the heading written (found by a hunt). It still fails, with a note on that line saying
    why it is not the section; a numbered heading of another name is no note."""
    cases = [
        ("## Claim", "## 1. Claim"),
        ("## Claim", "## The claim"),
        ("## Claim", "## **1) Claim**"),
        ("## Argument", "## II. Argument"),
        ("## What changed", "## 3 What changed"),
    ]
    for at, (old, heading) in enumerate(cases):
        folder = session(tmp_path / str(at), "open", "thesis.md", old, heading)
        found = detect(folder, "session")
        assert statuses(found)["BS-THESIS-01"] == "fail", heading
        (note,) = found["notes"]
        assert note["code"] == "section-heading-name", note
        assert heading[3:] in note["message"] and old in note["message"], note
        line = (folder / "thesis.md").read_text().split("\n").index(heading) + 1
        assert note["line"] == line, note
    # Beside the section, or with another name, a numbered heading is nothing to say.
    for at, (old, heading) in enumerate(
        [
            ("## Claim", "## Claim\n\n## 1. Claim, restated"),
            ("## Argument", "## Argument\n## 4. Risks"),
        ]
    ):
        folder = session(tmp_path / f"ok{at}", "open", "thesis.md", old, heading)
        found = detect(folder, "session")
        assert statuses(found)["BS-THESIS-01"] == "pass", heading
        assert found["notes"] == [], heading


def test_a_section_heading_not_written_as_one_is_noted(tmp_path: Path) -> None:
    """A line meant as a section heading that CommonMark does not read as one (`＃＃ Claim`
    typed fullwidth, `##Claim` with no space, a no-break space before or after the #s, a
    bold line), or a heading that names the section with a word before it or in the plural
    (`## Our claim`, `## Claims`, `## What has changed`), failed BS-THESIS-01 with no line
    named (found by a hunt). It still fails, with a note on that line."""
    cases = [
        ("## Claim", "＃＃ Claim"),
        ("## Claim", "##Claim"),
        ("## Claim", "\u00a0## Claim"),
        ("## Claim", "##\u00a0Claim"),
        ("## Argument", "**Argument**"),
        ("## Claim", "## Our claim"),
        ("## Claim", "## Main claim:"),
        ("## Claim", "## Claims"),
        ("## What changed", "## What has changed"),
        ("## What changed", "## What’s changed since S1"),
    ]
    for at, (old, heading) in enumerate(cases):
        folder = session(tmp_path / str(at), "open", "thesis.md", old, heading)
        found = detect(folder, "session")
        assert statuses(found)["BS-THESIS-01"] == "fail", heading
        (note,) = found["notes"]
        assert note["code"] == "section-heading-name", note
        assert old in note["message"], note
        line = (folder / "thesis.md").read_text().split("\n").index(heading) + 1
        assert note["line"] == line, note
    # Prose that begins with the word, and a heading of another name, are nothing to say.
    for at, (old, heading) in enumerate(
        [
            ("## Claim", "## Claim\nClaims like this one need data."),
            ("## Argument", "## Argument\n## Our risks"),
        ]
    ):
        folder = session(tmp_path / f"ok{at}", "open", "thesis.md", old, heading)
        found = detect(folder, "session")
        assert statuses(found)["BS-THESIS-01"] == "pass", heading
        assert found["notes"] == [], heading


# Forms the page shows as the name, which failed as no section or no stamp (found by a
# hunt): a heading that is a link, an emoji or a symbol before the name, and inline HTML
# that only styles a field.
def test_a_section_heading_that_is_a_link_or_behind_an_emoji_is_that_section(
    tmp_path: Path,
) -> None:
    cases = [
        ("thesis.md", "## Claim", "## [Claim](#claim)", "BS-THESIS-01"),
        ("thesis.md", "## Claim", "## [Claim][claim] (one sentence)", "BS-THESIS-01"),
        ("thesis.md", "## Argument", "## ✅ Argument", "BS-THESIS-01"),
        ("state.md", "## Aspect map", "## 🗺 Aspect map", "BS-ASPECT-02"),
        ("state.md", "## Aspect map", "## 🗺️ Aspect map", "BS-ASPECT-02"),
        ("state.md", "## Aspect map", "## 👩\u200d💻  Aspect map", "BS-ASPECT-02"),
        ("ops/manifest.md", "## Uselessness test", "## 🧪 Uselessness test", "BS-USELESS-01"),
    ]
    for at, (file, old, new, rule) in enumerate(cases):
        folder = session(tmp_path / str(at), "applied", file, old, new)
        found = detect(folder, "move")
        assert statuses(found)[rule] == "pass", (new, found)
        assert found["notes"] == [], (new, found["notes"])
    # A symbol before another word, or a soft hyphen inside the name, names no section.
    for at, heading in enumerate(("## 🗺 Claimant", "## Clai\u00adm", "## [Claims](#c)")):
        folder = session(tmp_path / f"no{at}", "applied", "thesis.md", "## Claim", heading)
        assert statuses(detect(folder, "move"))["BS-THESIS-01"] == "fail", heading


def test_a_stamp_in_inline_html_that_only_styles_it_is_read(tmp_path: Path) -> None:
    stamp = "Current as of: 2026-07-10T16:05Z"
    for at, line in enumerate(
        (
            f"<sub>{stamp}</sub>",
            f"<small>{stamp}</small>",
            f"<sup>{stamp}</sup>",
            "<sub>Current as of:</sub> 2026-07-10T16:05Z",
        )
    ):
        folder = session(tmp_path / str(at), "applied", "thesis.md", stamp, line)
        found = detect(folder, "move")
        assert statuses(found)["BS-THESIS-01"] == "pass", (line, found)
        assert statuses(found)["BS-COMPOSE-01"] == "pass", (line, found)
        assert found["notes"] == [], (line, found["notes"])


# An entry's ID behind what shows nothing but the ID: an anchor for links to the entry, a tag
# that styles it, a link on it (§3.1: the page shows `F1 — …`, CommonMark's reading).
SHOWN_AS_THE_ID = (
    '<a id="{a}"></a>{id}',
    "<b>{id}</b>",
    '<span id="{a}">{id}</span>',
    "[{id}](#{a})",
    '**<a id="{a}"></a>{id}**',
)
ENTRY_HEADINGS = (
    ("forks.md", "## {} — Do security alerts ever ride in a digest? [open]", "F1"),
    ("ledger.md", "## {} — Digests fold only low-urgency notifications", "D1"),
    ("ops/capture.md", "### {} · 2026-07-08T14:18Z", "T5"),
)


def test_an_entry_id_behind_inline_tags_or_a_link_is_the_entry(tmp_path: Path) -> None:
    for file, heading, entry_id in ENTRY_HEADINGS:
        for at, form in enumerate(SHOWN_AS_THE_ID):
            written = heading.format(form.format(id=entry_id, a=entry_id.lower()))
            folder = session(
                tmp_path / f"{entry_id}-{at}", "open", file, heading.format(entry_id), written
            )
            found = detect(folder, "session")
            assert failing(found) == set(), written
            assert found["notes"] == [], written


def test_an_id_going_on_or_bracketed_behind_tags_is_still_no_entry(tmp_path: Path) -> None:
    old = "## F1 — Do security alerts ever ride in a digest? [open]"
    for at, lead in enumerate(("<b>F1x</b>", "[F1]", '<a id="f1"></a>F-1')):
        folder = session(tmp_path / str(at), "open", "forks.md", old, old.replace("F1", lead, 1))
        assert "BS-FORK-01" in failing(detect(folder, "session")), lead


def test_an_entry_title_behind_an_anchor_is_the_title_as_written() -> None:
    headings = {
        '## <a id="f1"></a>F1 — Keep <script>x</script> prices? [open]': (
            "F1",
            "Keep <script>x</script> prices?",
        ),
        "## [F2](#f2) — Which clock? [open]": ("F2", "Which clock?"),
        "## <b>F3</b>: Whose window? [open]": ("F3", "Whose window?"),
    }
    for heading, (fork_id, title) in headings.items():
        text = f"{heading}\n- Raised by: user\n- Closes when: someone answers\n"
        inp = SessionInput("research", "demo", str(SESSION), files={"forks.md": text.encode()})
        forks = parse_session(inp).rows["forks"]
        assert [(f["fork_id"], f["title"]) for f in forks] == [(fork_id, title)], heading
