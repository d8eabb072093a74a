"""The report's figures, read out of the rendered HTML and checked against hand-worked values.

The browser test (tests/test_report.py) checks structure; this one reads what a person reads:
the rate table's counts, rates and intervals, the summary tiles, the stage table, the worst
sessions in their order, the fork-lifetime table and sync health. The expected values come
from tests/mixed_corpus.py (counted by hand from the spec) and from the hand-worked history
of tests/test_stats.py (whose durations and latencies are spelled out there).
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest

from pipeline.check import check
from pipeline.crawl import crawl
from pipeline.report import build
from tests.conftest import FIXTURES
from tests.mixed_corpus import CLEAN, RATES, SESSIONS, STAGES, WORST, build_mixed
from tests.test_stats import (
    SESSION,
    history,  # noqa: F401  (the hand-worked four-run history)
)


@dataclass
class Table:
    headers: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)

    def column(self, name: str) -> int:
        assert name in self.headers, f"no column {name!r} in {self.headers}"
        return self.headers.index(name)

    def row(self, key: str) -> dict[str, str]:
        found = [r for r in self.rows if r and r[0] == key]
        assert len(found) == 1, f"{key!r}: {len(found)} rows"
        return dict(zip(self.headers, found[0], strict=False))


@dataclass
class Section:
    tables: list[Table] = field(default_factory=list)
    items: list[tuple[dict[str, str], str]] = field(default_factory=list)  # <li> attrs, text
    cards: list[str] = field(default_factory=list)


class Page(HTMLParser):
    """Sections by id, each with its tables (header and cell texts), list items and cards."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.sections: dict[str, Section] = {}
        self._section: Section | None = None
        self._cell: list[str] | None = None
        self._row: list[str] | None = None
        self._item: tuple[dict[str, str], list[str]] | None = None
        self._card: list[str] | None = None
        self._in_head = False
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = {k: v or "" for k, v in attrs}
        if tag == "section":
            self._section = self.sections.setdefault(named.get("id", ""), Section())
        elif self._section is None:
            return
        elif tag == "table":
            self._section.tables.append(Table())
        elif tag == "thead":
            self._in_head = True
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "li":
            self._item = (named, [])
        elif tag == "div" and "card" in named.get("class", "").split():
            self._card = []

    def handle_endtag(self, tag: str) -> None:
        if self._section is None:
            return
        if tag == "section":
            self._section = None
        elif tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None and self._section.tables:
            table = self._section.tables[-1]
            (table.headers.extend if self._in_head else table.rows.append)(self._row)
            self._row = None
        elif tag == "thead":
            self._in_head = False
        elif tag == "li" and self._item is not None:
            self._section.items.append((self._item[0], " ".join("".join(self._item[1]).split())))
            self._item = None
        elif tag == "div" and self._card is not None:
            # The figure is bold and its name follows it: one space between them.
            self._section.cards.append(" ".join(" ".join(self._card).split()))
            self._card = None

    def handle_data(self, data: str) -> None:
        for sink in (self._cell, self._item[1] if self._item else None, self._card):
            if sink is not None:
                sink.append(data)


@pytest.fixture(scope="module")
def mixed_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("report-values")
    corpus = build_mixed(base / "corpus")
    out = base / "out"
    crawl([str(corpus)], str(out), workers=1)
    check(str(out))
    return out


@pytest.fixture(scope="module")
def page(mixed_out: Path) -> Page:
    return Page(build(str(mixed_out)).path.read_text())


def test_rate_table_shows_every_hand_counted_rate(page: Page) -> None:
    table = page.sections["rates"].tables[0]
    shown = {
        r["rule"]: (r["gate"], *(int(r[k]) for k in ("evaluated", "failed", "info", "skipped")))
        for r in (table.row(rule) for rule in RATES)
    }
    assert shown == RATES
    assert len(table.rows) == len(RATES)
    # Rates and 95% Wilson intervals as a person reads them (worked by hand, see test_numbers).
    expected = {
        "BS-SYNC-02": ("20.0%", "5.7% – 51.0%"),
        "BS-FORK-01": ("7.7%", "1.4% – 33.3%"),
        "BS-FORK-03": ("12.5%", "2.2% – 47.1%"),
        "BS-USELESS-01": ("50.0%", "9.5% – 90.5%"),
        "BS-OPS-02": ("100.0%", "34.2% – 100.0%"),
        "BS-LEDGER-01": ("0.0%", "0.0% – 22.8%"),
    }
    for rule, (rate, interval) in expected.items():
        row = table.row(rule)
        assert (row["rate"], row["95% interval"]) == (rate, interval), rule


def test_summary_tiles_and_stage_table(page: Page) -> None:
    cards = page.sections["run"].cards
    assert f"{len(SESSIONS)} sessions" in cards
    assert f"{100 * CLEAN / len(SESSIONS):.1f}% clean at their own gate" in cards  # 6/13
    assert f"{len(SESSIONS) - CLEAN} failing a rule" in cards
    stages = page.sections["stages"].tables[0]
    assert {r[0]: int(r[1]) for r in stages.rows} == STAGES


def test_worst_sessions_are_listed_worst_first(page: Page) -> None:
    items = page.sections["worst"].items
    listed = [(attrs, text) for attrs, text in items if "data-failing" in attrs]
    got = [
        (next(f for f in SESSIONS if f"{f} /" in text), int(a["data-failing"]))
        for a, text in listed
    ]
    assert got == WORST
    first = listed[0][1]
    assert first.startswith("3 failing rules — open-worst /")
    for rule in ("BS-FORK-01", "BS-OPS-01", "BS-SYNC-02"):
        assert rule in first


def test_worst_n_keeps_the_worst(mixed_out: Path, tmp_path: Path) -> None:
    html = build(str(mixed_out), html=str(tmp_path / "r.html"), worst_n=2).path.read_text()
    listed = [a for a, _ in Page(html).sections["worst"].items if "data-failing" in a]
    assert [int(a["data-failing"]) for a in listed] == [3, 2]


def test_lifetime_and_sync_tables_show_the_hand_worked_history(
    history: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    # tests/test_stats.py: durations 24, 25 and 72.5 h closed, 48 h censored, two forks with no
    # raise time; S(24) = 3/4, S(25) = 3/4 · 2/3 = 1/2 (the median), S(72.5) = 0.
    html = build(str(history), html=str(tmp_path / "r.html")).path.read_text()
    sections = Page(html).sections
    forks = sections["forks"].tables[0].row("all forks")
    assert (forks["forks"], forks["closes"], forks["censored"], forks["unknown"]) == (
        "6",
        "3",
        "1",
        "2",
    )
    assert forks["median (95% CI), hours"].startswith("25.0 (")
    assert (forks["p25"], forks["p75"]) == ("24.0", "72.5")
    assert (forks["open at 1 d"], forks["7 d"], forks["30 d"]) == ("75%", "0%", "0%")
    # Syncs at the last point: S1 300 s, S2 600, S3 600, S4 1200 (reconciled), S5 300 (failed),
    # S6 in flight. Latencies 300, 300, 600, 600, 1200: p50 600, p90 600 + 0.6 · 600 = 960.
    sync = sections["sync"].tables[0].row("all")
    assert (sync["sessions"], sync["syncs"], sync["reconciled"], sync["failed"]) == (
        "1",
        "6",
        "4",
        "1",
    )
    assert (sync["in flight"], sync["unpaired"]) == ("1", "0")
    assert (sync["latency p50, s"], sync["p90, s"], sync["max, s"]) == ("600", "960", "1,200")


def test_a_fork_listed_open_and_resolved_is_not_closed_again_every_night(tmp_path: Path) -> None:
    """What changed between two points reads a fork as the lifetimes do: listed [open] but
    resolved by the ledger is resolved at both points, so identical content closes nothing;
    parking the other fork the next night closes it."""
    from pipeline.engine import connect, fetch_dicts
    from pipeline.report import _query
    from pipeline.store import Out

    root = tmp_path / "corpus"
    shutil.copytree(Path(__file__).parent.parent / "fixtures" / "example" / "lumen-docs", root)
    forks = root / "docs/research/search-relevance-brainstorm/forks.md"
    out = str(tmp_path / "out")
    crawl([str(root)], out, {"night": "1"}, workers=1, point="n1")
    crawl([str(root)], out, {"night": "2"}, workers=1, point="n2")
    text = forks.read_text()
    forks.write_text(text.replace("ranking? [open]", "ranking? [parked → docs/later.md]"))
    crawl([str(root)], out, {"night": "3"}, workers=1, point="n3")
    check(out)
    con = connect(Out(out))
    changes = fetch_dicts(con, _query("fork_changes"), {"point": "n2", "previous": "n1"})
    assert changes == []
    changes = fetch_dicts(con, _query("fork_changes"), {"point": "n3", "previous": "n2"})
    assert [(c["change"], c["fork_id"]) for c in changes] == [("closed", "F1")]


def test_a_fork_gone_from_forks_md_unresolved_is_vanished_not_closed(tmp_path: Path) -> None:
    """A fork deleted from forks.md with no ledger entry resolving it is censored in the
    lifetimes (never a close): "what changed" lists it as vanished, and counts no close, while
    one deleted with a resolving entry is closed (one definition of a close)."""
    from pipeline.engine import connect, fetch_dicts
    from pipeline.report import _query
    from pipeline.store import Out

    root = tmp_path / "corpus"
    shutil.copytree(FIXTURES / "cases" / "base" / "open" / "repo", root / "repo")
    session = root / "repo" / "docs" / "research" / "demo-brainstorm"
    out = str(tmp_path / "out")
    crawl([str(root)], out, workers=1, point="n1")
    forks = (session / "forks.md").read_text()
    # F1 and F2 leave forks.md; only F2 with a ledger entry resolving it.
    (session / "forks.md").write_text(
        forks.split("## F1", 1)[0] + "## F4" + forks.split("## F4")[1]
    )
    with open(session / "ledger.md", "a") as ledger:
        ledger.write(
            "\n## D3 — The recipient's clock decides\n- Decision: their time zone.\n"
            "- Why: mail at 3 am is noise.\n- How to apply: store a zone.\n- Resolves: F2\n"
        )
    crawl([str(root)], out, workers=1, point="n2")
    check(out)
    con = connect(Out(out))
    changes = fetch_dicts(con, _query("fork_changes"), {"point": "n2", "previous": "n1"})
    assert [(c["change"], c["fork_id"]) for c in changes] == [("closed", "F2"), ("vanished", "F1")]
    lifetimes = dict(
        con.execute(
            "SELECT fork_id, close_kind FROM fork_lifetimes WHERE fork_id IN ('F1', 'F2')"
        ).fetchall()
    )
    assert lifetimes == {"F1": None, "F2": "resolved"}


def test_a_fork_raised_and_closed_within_a_night_is_raised_and_closed(tmp_path: Path) -> None:
    """A fork raised in one commit of the night and resolved in a later one (--git-history) is
    a close in the lifetimes, which read every snapshot; "what changed" compared the two
    points' working trees only and listed it neither raised nor closed (found by a hunt)."""
    from pipeline.engine import connect, fetch_dicts
    from pipeline.report import _query
    from pipeline.store import Out
    from tests.conftest import git, make_git_repo

    repo = tmp_path / "corpus" / "repo"
    shutil.copytree(FIXTURES / "cases" / "base" / "open" / "repo", repo)
    make_git_repo(repo)
    out = str(tmp_path / "out")
    crawl([str(repo.parent)], out, workers=1, git_history=True, point="n1")
    session = repo / "docs" / "research" / "demo-brainstorm"
    forks, ledger = session / "forks.md", session / "ledger.md"
    before = forks.read_text()
    forks.write_text(before + "\n## F9 — Batch by team? [open]\n- Raised by: user\n")
    git(repo, "commit", "-qam", "raise F9", env={"GIT_COMMITTER_DATE": "2026-07-02T09:00Z"})
    forks.write_text(before)
    ledger.write_text(
        ledger.read_text() + "\n## D9 — No\n- Decision: d.\n- Why: w.\n- How to apply: h.\n"
        "- Resolves: F9\n"
    )
    git(repo, "commit", "-qam", "resolve F9", env={"GIT_COMMITTER_DATE": "2026-07-02T12:00Z"})
    crawl([str(repo.parent)], out, workers=1, git_history=True, point="n2")
    check(out)
    con = connect(Out(out))
    changes = fetch_dicts(con, _query("fork_changes"), {"point": "n2", "previous": "n1"})
    found = [(c["change"], c["fork_id"], c["title"]) for c in changes]
    assert found == [("closed", "F9", "Batch by team?"), ("raised", "F9", "Batch by team?")]
    closed = con.execute("SELECT close_kind FROM fork_lifetimes WHERE fork_id = 'F9'").fetchall()
    assert closed == [("resolved",)]
    # The next night, with nothing new, raises and closes nothing.
    crawl([str(repo.parent)], out, workers=1, git_history=True, point="n3")
    check(out)
    con = connect(Out(out))
    assert fetch_dicts(con, _query("fork_changes"), {"point": "n3", "previous": "n2"}) == []


def test_a_fork_raised_and_closed_within_a_night_has_its_last_title_by_ancestry(
    tmp_path: Path,
) -> None:
    """F9 raised in a commit dated 2030 by a clock running ahead, reworded in its child and
    resolved in the next: "what changed" took its title from the night's latest-dated commit
    listing it open, the 2030 ancestor's old wording. The night's commits stand by ancestry."""
    from pipeline.engine import connect, fetch_dicts
    from pipeline.report import _query
    from pipeline.store import Out
    from tests.conftest import git, make_git_repo

    repo = tmp_path / "corpus" / "repo"
    shutil.copytree(FIXTURES / "cases" / "base" / "open" / "repo", repo)
    make_git_repo(repo)
    out = str(tmp_path / "out")
    crawl([str(repo.parent)], out, workers=1, git_history=True, point="n1")
    session = repo / "docs" / "research" / "demo-brainstorm"
    forks, ledger = session / "forks.md", session / "ledger.md"
    before = forks.read_text()
    forks.write_text(before + "\n## F9 — Batch by team? [open]\n- Raised by: user\n")
    git(repo, "commit", "-qam", "raise F9", env={"GIT_COMMITTER_DATE": "2030-01-01T09:00Z"})
    forks.write_text(before + "\n## F9 — Batch by project? [open]\n- Raised by: user\n")
    git(repo, "commit", "-qam", "reword F9")
    forks.write_text(before)
    ledger.write_text(
        ledger.read_text() + "\n## D9 — No\n- Decision: d.\n- Why: w.\n- How to apply: h.\n"
        "- Resolves: F9\n"
    )
    git(repo, "commit", "-qam", "resolve F9")
    crawl([str(repo.parent)], out, workers=1, git_history=True, point="n2")
    check(out)
    con = connect(Out(out))
    changes = fetch_dicts(con, _query("fork_changes"), {"point": "n2", "previous": "n1"})
    found = [(c["change"], c["fork_id"], c["title"]) for c in changes]
    assert found == [("closed", "F9", "Batch by project?"), ("raised", "F9", "Batch by project?")]


def _two_nights(tmp_path: Path, fork: str, labels: bool = False) -> str:
    """OUT over the healthy open base session: n1 as it is, n2 with `fork` appended to its
    forks.md; both checked. Labels night=1 and night=2 when asked."""
    root = tmp_path / "corpus"
    shutil.copytree(FIXTURES / "cases" / "base" / "open" / "repo", root / "repo")
    out = str(tmp_path / "out")
    crawl([str(root)], out, {"night": "1"} if labels else None, workers=1, point="n1")
    forks = root / "repo" / "docs" / "research" / "demo-brainstorm" / "forks.md"
    forks.write_text(forks.read_text() + fork)
    crawl([str(root)], out, {"night": "2"} if labels else None, workers=1, point="n2")
    check(out)
    return out


def test_what_changed_reads_the_lifetimes_states(tmp_path: Path) -> None:
    """ "What changed" and the lifetimes read one definition of a fork's state
    (fork_states_in): a fork listed with a marker the census cannot read counts as open in
    both, so it is raised. The report's own copy required `[open]` and left it out."""
    from pipeline.engine import connect, fetch_dicts
    from pipeline.report import _query
    from pipeline.store import Out

    out = _two_nights(tmp_path, "\n## F9 — Do digests batch by team? [closed]\n- Raised by: user\n")
    con = connect(Out(out))
    changes = fetch_dicts(con, _query("fork_changes"), {"point": "n2", "previous": "n1"})
    assert [(c["change"], c["fork_id"]) for c in changes] == [("raised", "F9")]
    lifetime = con.execute(
        "SELECT censored, vanished FROM fork_lifetimes WHERE fork_id = 'F9'"
    ).fetchall()
    assert lifetime == [(True, False)]  # open in the latest snapshot


def test_one_newly_failing_session_is_named_in_the_singular(tmp_path: Path) -> None:
    """One session that was clean and fails now reads "The 1 session that was clean … and
    fails now", not "that were … fail"."""
    out = _two_nights(tmp_path, "\n## F9 — Is this fork ever closed? [open]\n- Raised by: user\n")
    html = build(out, str(tmp_path / "report.html")).path.read_text()
    text = " ".join(html.split())
    assert (
        "The 1 session that was clean (or not there) at <code><bdi>n1</bdi></code> and fails now"
        in text
    )


def test_the_page_points_at_its_own_point_and_says_what_it_was_asked(tmp_path: Path) -> None:
    """A report of an earlier point names that point in the queries it prints (without
    `--run`, `census sql` answered for the latest); `--worst 0` lists none without saying no
    session fails; the alarm footnote's check command watches what the page watched; a point
    chosen by labels is "the first with" them, not the first in OUT."""
    from typer.testing import CliRunner

    from pipeline.cli import app

    out = _two_nights(tmp_path, "\n## F9 — Never closed? [open]\n- Raised by: user\n", True)

    def page(*options: str) -> str:
        html = tmp_path / "report.html"
        result = CliRunner().invoke(app, ["report", "--out", out, "--html", str(html), *options])
        assert result.exit_code in (0, 1), result.output
        return " ".join(html.read_text().split())

    earlier = page("--run", "n1", "--worst", "0", "--fail-on-regression", "clean-share")
    assert f"--out {out} --run <bdi>n1</bdi></pre>" in earlier
    assert "None listed (<code>--worst 0</code>)." in earlier
    assert "No session fails a rule" not in earlier
    assert "census check --fail-on-regression clean-share</code>, watching 1 metric" in earlier
    latest = page("--fail-on-regression", "rules,clean-share")
    assert "census check --fail-on-regression rules,clean-share</code>" in latest
    assert f"--out {out} --run <bdi>n2</bdi></pre>" in latest
    labelled = page("--label", "night=2")
    assert "this is the first census point with night=2 in OUT" in labelled


def test_a_replays_arms_in_two_folders_are_matched_as_compare_matches_them(
    tmp_path: Path,
) -> None:
    """The candidate, crawled from its own folder, holds the baseline's sessions under another
    root: compare matches them by session_key, and "What changed" matched by root, so
    identical arms read as every session opened and gone, every fork raised. A session the
    candidate broke is newly failing, with the rule it did not fail before."""
    from pipeline.engine import connect, fetch_dicts
    from pipeline.report import _query
    from pipeline.store import Out

    out = str(tmp_path / "out")
    for arm in ("baseline", "candidate"):
        root = tmp_path / arm
        shutil.copytree(FIXTURES / "cases" / "base" / "open" / "repo", root / "repo")
        if arm == "candidate":
            (root / "repo" / "docs" / "research" / "demo-brainstorm" / "thesis.md").unlink()
        crawl([str(root)], out, {"arm": arm}, workers=1, point=arm)
    check(out)
    con = connect(Out(out))
    at = {"point": "candidate", "previous": "baseline"}
    changes = fetch_dicts(con, _query("session_changes"), at)
    assert [c["change"] for c in changes] == ["newly failing"]
    assert fetch_dicts(con, _query("fork_changes"), at) == []
    newly = fetch_dicts(con, _query("newly_failing"), {**at, "limit": 5})
    assert "BS-THESIS-01" in {f["rule_id"] for f in newly}
    assert all(f["new_rule"] for f in newly), "the baseline failed none of them"


def test_the_page_names_its_two_points_so_they_never_read_alike() -> None:
    """The page's sentences named a point by its label values alone ("No alarm at 4.") and by
    its date, so two nights of one day read "What changed since Dec 3?" on Dec 3. A point is
    now its --point name, else its labels as k=v, else its date; a time, then its position,
    where the two would read alike."""
    from datetime import UTC, datetime

    from pipeline.charts import point_phrases
    from pipeline.select import Point

    def point(name: str, hour: int, labels: dict[str, str], position: int) -> Point:
        when = datetime(2026, 12, 3, hour, 0, tzinfo=UTC)
        return Point(name, position, when, ("20261203T100000.000000Z-aaaaaa",), labels)

    named = point("2026-11-29", 9, {"team": "platform"}, 1)
    assert point_phrases([named]) == {"2026-11-29": "Nov 29"}
    first = point("20261203T090000.000000Z-aaaaaa", 9, {"night": "4"}, 1)
    assert point_phrases([first])[first.name] == "night=4"
    bare = point("20261203T090000.000000Z-bbbbbb", 9, {}, 1)
    later = point("20261203T150000.000000Z-cccccc", 15, {"shard": "1-of-2"}, 2)
    assert point_phrases([later, bare]) == {
        later.name: "Dec 3 15:00",
        bare.name: "Dec 3 09:00",
    }


def test_a_stage_emptied_keeps_its_row_and_the_printed_query_runs_as_pasted(
    tmp_path: Path,
) -> None:
    """The stage table listed the stages the point has sessions in, so a stage emptied since
    the previous point lost its row and its count there (the column summed to less than the
    point had); and the census sql line the page prints put an OUT with a space unquoted."""
    import re
    import shlex
    import subprocess
    import sys
    from html import unescape

    root = tmp_path / "corpus"
    shutil.copytree(FIXTURES / "example" / "orbit-api", root / "orbit-api")
    out = str(tmp_path / "my out")
    crawl([str(root)], out, workers=1, point="n1")
    shutil.rmtree(root / "orbit-api" / "docs" / "history" / "brainstorms" / "api-versioning")
    crawl([str(root)], out, workers=1, point="n2")
    check(out)
    html = build(out, str(tmp_path / "report.html")).path.read_text()
    text = " ".join(html.split())
    assert '<td>harvested</td><td class="num">0</td><td class="num">1</td>' in text
    printed = re.search(r"<pre>(census sql .*?)</pre>", html, re.S)
    assert printed is not None
    # As pasted: the text, without the <bdi> that isolates the point's name.
    words = shlex.split(unescape(re.sub("<[^>]+>", "", printed[1])))
    assert words[words.index("--out") + 1] == out
    census = [sys.executable, "-m", "pipeline.cli", *words[1:]]
    assert subprocess.run(census, capture_output=True, check=False).returncode == 0


def _median_arm(root: Path, compose: list[str], resolved: bool) -> None:
    """Ten copies of the open base session under `root`, one fork each (F1, raised by the
    user), each composed at its time in `compose`; F1 resolved by a ledger entry or open."""
    for i, at in enumerate(compose):
        folder = root / "repo" / "docs" / "research" / f"t{i}-brainstorm"
        if not folder.exists():
            shutil.copytree(FIXTURES / "cases" / "base" / "open" / "repo" / SESSION, folder)
        for name, field_ in (("state.md", "- Last compose:"), ("thesis.md", "Current as of:")):
            lines = (folder / name).read_text().splitlines()
            lines = [f"{field_} {at}" if ln.startswith(field_) else ln for ln in lines]
            (folder / name).write_text("\n".join(lines) + "\n")
        fork = "## F1 — Is it done? [open]\n- Raised by: user\n- Closes when: it is\n"
        (folder / "forks.md").write_text("# Forks\n\n" + ("" if resolved else fork))
        ledger = "## D9 — Done\n- Decision: a\n- Why: b\n- How to apply: c\n- Resolves: F1\n"
        (folder / "ledger.md").write_text("# Ledger\n\n" + (ledger if resolved else ""))


def test_what_changed_shows_a_median_not_reached_as_not_reached(tmp_path: Path) -> None:
    """A fork median the curve never reaches read "–" in "What changed" (as if there were no
    data), while the compare section, `census compare` and the alarm read "not reached"
    (spec §7). Baseline forks close after 1…10 h (median 5 h); the candidate's stay open 100 h."""
    from datetime import datetime, timedelta

    def at(hours: int) -> str:
        return (datetime(2026, 7, 10) + timedelta(hours=hours)).strftime("%Y-%m-%dT%H:%MZ")

    out = str(tmp_path / "out")
    later = {"base": [at(1 + i) for i in range(10)], "cand": [at(100)] * 10}
    for night in (1, 2):
        for arm in ("base", "cand"):
            compose = [at(0)] * 10 if night == 1 else later[arm]
            _median_arm(tmp_path / arm, compose, resolved=night == 2 and arm == "base")
            crawl([str(tmp_path / arm)], out, workers=1, point=f"{arm}{night}")
    check(out)
    html = build(out, str(tmp_path / "r.html")).path.read_text()
    since = Page(html).sections["since"].tables[0].row("fork-median-hours")
    assert (since["before"], since["now"]) == ("5.0 h", "not reached")
    assert (since["change"], since["interval"]) == ("▲ worse", "+90.0 h … +∞")


def test_one_repository_under_two_roots_is_two_sessions_needing_attention(tmp_path: Path) -> None:
    """One repository checked out under two roots is two sessions, as every view counts it
    (session_key, root). "Which sessions need attention first?" grouped findings by session
    key and path, so the two checkouts were one entry, "The 1 of 2", with each finding twice,
    and the second session unlisted (found by a hunt). Each is now its own entry, named with
    its root, with its own finding once and its own anchor."""
    out = str(tmp_path / "out")
    roots = [tmp_path / "r1", tmp_path / "r2"]
    for root in roots:
        shutil.copytree(FIXTURES / "cases" / "base" / "open" / "repo", root / "repo")
    crawl([str(r) for r in roots], out, workers=1, point="n1")
    for root in roots:
        (root / "repo" / "docs" / "research" / "demo-brainstorm" / "thesis.md").unlink()
    crawl([str(r) for r in roots], out, workers=1, point="n2")
    check(out)
    html = build(out, str(tmp_path / "report.html")).path.read_text()
    text = " ".join(html.split())
    assert "The 2 sessions that were clean (or not there) at <code><bdi>n1</bdi></code>" in text
    entries = [(a, t) for a, t in Page(html).sections["worst"].items if "data-failing" in a]
    assert len(entries) == 4, "two newly failing, the same two with the most failing rules"
    for _, text in entries:
        assert text.count("BS-THESIS-01") == 2, f"the rule once in the summary, once below: {text}"
        assert sum(f"under {root}" in text for root in roots) == 1, text
    named = [next(str(r) for r in roots if f"under {r}" in t) for _, t in entries]
    assert named == [str(roots[0]), str(roots[1])] * 2
    ids = [a["id"] for a, _ in entries if "id" in a]
    assert len(ids) == len(set(ids)) == 2
    links = re.findall(r'<a class="where" href="#(s-[0-9a-f]+)"', html)
    assert sorted(links) == sorted(ids), "each newly failing session links to its own entry"


def _empty_and_failing_nights(tmp_path: Path, empty_first: bool) -> str:
    """OUT with two checked nights, n1 and n2: one that saw no session (an empty root), and one
    that saw a session failing BS-THESIS-01, in the order asked."""
    empty, root = tmp_path / "empty", tmp_path / "corpus"
    empty.mkdir()
    shutil.copytree(FIXTURES / "cases" / "base" / "open" / "repo", root / "repo")
    (root / "repo" / "docs" / "research" / "demo-brainstorm" / "thesis.md").unlink()
    out = str(tmp_path / "out")
    nights = [empty, root] if empty_first else [root, empty]
    for n, night in enumerate(nights, 1):
        crawl([str(night)], out, workers=1, point=f"n{n}")
    check(out)
    return out


def test_tiles_change_from_zero_after_a_point_that_saw_no_session(tmp_path: Path) -> None:
    """A point that saw no session has no row in the summary query, and the tiles read it as
    no previous point: after an empty night, "sessions" and "failing a rule" showed no change
    at all, where the reverse showed "−1" (found by a hunt). It counts as zeros: "+1"."""
    out = _empty_and_failing_nights(tmp_path, empty_first=True)
    cards = Page(build(out, str(tmp_path / "r.html")).path.read_text()).sections["run"].cards
    assert "1 sessions +1" in cards and "1 failing a rule +1" in cards, cards
    assert "0.0% clean at their own gate" in cards, "no share at n1: nothing to change from"


def test_a_later_point_not_checked_yet_is_named_on_the_page(tmp_path: Path) -> None:
    """Tonight crawled but not checked: the page shows last night, the latest checked, and
    said nothing of tonight (only stderr did), so a published page read as tonight's (found by
    a hunt). It names the point not checked, as the CLI's note does."""
    out = _two_nights(tmp_path, "\n## F9 — Never closed? [open]\n- Raised by: user\n")
    root = tmp_path / "corpus"
    crawl([str(root)], out, workers=1, point="n3")
    text = " ".join(build(out, str(tmp_path / "r.html")).path.read_text().split())
    assert "Census point <code><bdi>n3</bdi></code> is not checked yet" in text
    assert "this page shows <code><bdi>n2</bdi></code>, the latest checked" in text
    check(out)
    text = " ".join(build(out, str(tmp_path / "r.html")).path.read_text().split())
    assert "not checked yet" not in text


def test_the_rate_table_does_not_difference_two_measures(tmp_path: Path) -> None:
    """The previous point checked under another rule set: "What changed" says its rates are
    not compared, yet the rate table's "since" column showed BS-OPS-01 "-100.0%", the step of
    the rule's own change read as the rule's rate moving, and the tiles read the clean share
    "+100.0 pts" and failing sessions "−1", in green (found by a hunt). The column and those
    tiles say "other rules" there, as the section and the rules-moved tile do."""
    import os
    import subprocess
    import sys

    root = tmp_path / "corpus"
    shutil.copytree(FIXTURES / "cases" / "base" / "open" / "repo", root / "repo")
    out = str(tmp_path / "out")
    crawl([str(root)], out, workers=1, point="n1")
    # n1 checked by a census whose BS-OPS-01 fails every session it reads.
    census = tmp_path / "census"
    for part in ("pipeline", "queries"):
        shutil.copytree(Path(__file__).resolve().parent.parent / part, census / part)
    rule = census / "queries" / "rules" / "BS-OPS-01.sql"
    rule.write_text(rule.read_text().replace("where not coalesce(gitignore_star, false)", ""))
    subprocess.run(
        [sys.executable, "-m", "pipeline.cli", "check", "--out", out],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(census)},
        capture_output=True,
        check=True,
    )
    crawl([str(root)], out, workers=1, point="n2")
    check(out)
    page = Page(build(out, str(tmp_path / "r.html")).path.read_text())
    rates = page.sections["rates"].tables[0]
    assert rates.row("BS-OPS-01")["since n1"] == "other rules"
    assert rates.row("BS-FORK-01")["since n1"] == "other rules"
    cards = page.sections["run"].cards
    assert "not compared rules moved other rules or readers" in cards, cards
    assert "100.0% clean at their own gate other rules" in cards, "not +100.0 pts"
    assert "0 failing a rule other rules" in cards, "not −1"


def test_a_night_that_saw_no_session_is_no_fix(tmp_path: Path) -> None:
    """A night whose crawl found no session (an empty or missing root) read "failing a rule 0
    −1" in green, as if the failing session had been fixed; it vanished (found by a hunt). The
    tile says no session was seen, as an alarm: the emptied night check alarms on."""
    out = _empty_and_failing_nights(tmp_path, empty_first=False)
    html = build(out, str(tmp_path / "r.html")).path.read_text()
    card = re.search(
        r"<b>[^<]*</b><span>failing a rule</span><i class=\"([^\"]*)\">([^<]*)</i>", html
    )
    assert card is not None, html
    assert card.groups() == ("delta bad", "no session seen"), card.group(0)


@pytest.mark.parametrize("shards", [False, True])
def test_a_rerun_of_the_night_replaces_its_roots_issues(tmp_path: Path, shards: bool) -> None:
    """A root's parse issues are the latest run's of the night that crawled it (per shard, as
    shards divide them): a damaged archive crawled three times into one point was three
    `bad-archive` issues, and a folder renamed right between two runs stayed misnamed on the
    page although the night read it (found by a hunt)."""
    import tarfile

    from pipeline.compare import Selector
    from pipeline.report import gather
    from tests.conftest import base_corpus

    root = base_corpus(tmp_path / "root", 2)
    whole = tmp_path / "whole.tar.gz"
    with tarfile.open(whole, "w:gz") as tar:
        tar.add(root, arcname="root")
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(whole.read_bytes()[:3000])
    misnamed = root / "repo-00" / "docs" / "research" / "demo0_brainstorm"
    (root / "repo-00" / "docs" / "research" / "demo0-brainstorm").rename(misnamed)
    out = tmp_path / "out"
    for run in range(3):
        if run == 2:  # the night's last look finds the folder named right
            misnamed.rename(misnamed.with_name("demo0-brainstorm"))
        for shard in [(1, 2), (2, 2)] if shards else [None]:
            crawl([str(cut), str(root)], str(out), workers=1, point="night", shard=shard)
    check(str(out))
    issues = {g["code"]: g["count"] for g in gather(str(out), Selector("night")).issues}
    assert issues.get("bad-archive") == 1, issues
    assert "misnamed-folder" not in issues, issues


def test_labels_with_markup_or_control_characters_are_shown_as_text(tmp_path: Path) -> None:
    """A label is the user's text: `model=[v2]` lost its value in `census stats` (rich read it
    as markup), and a control character in a label made vl-convert panic, aborting `census
    report` with no page written (found by a hunt). Both are shown, the control escaped."""
    from typer.testing import CliRunner

    from pipeline.cli import app
    from tests.conftest import base_corpus

    root = base_corpus(tmp_path / "root", 2)
    out = str(tmp_path / "out")
    crawl([str(root)], out, {"model": "[v2]"}, workers=1, point="n1")
    crawl([str(root)], out, {"model": "m\x1b[31m1"}, workers=1, point="n2")
    check(out)
    runner = CliRunner()
    stats = runner.invoke(app, ["stats", "--out", out, "--run", "n1"])
    assert stats.exit_code == 0 and "Census point n1 (model=[v2], " in stats.stdout, stats.output
    shown = runner.invoke(app, ["stats", "--out", out])
    assert shown.exit_code == 0 and "\x1b" not in shown.stdout and "\\x1b" in shown.stdout
    page = tmp_path / "report.html"
    done = runner.invoke(app, ["report", "--out", out, "--html", str(page)])
    assert done.exit_code == 0, done.output
    assert "m\\x1b[31m1" in page.read_text(), "the trend chart's axis names the point"
