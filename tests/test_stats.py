"""Statistics: the Kaplan–Meier figures (computed in SQL) against lifelines, and fork
lifetimes and sync pairs end to end over a session crawled several times into one OUT while
its files change."""

from __future__ import annotations

import math
import os
import random
import shutil
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from lifelines import KaplanMeierFitter
from lifelines.utils import median_survival_times, qth_survival_times

from pipeline.check import check
from pipeline.crawl import crawl
from pipeline.engine import connect, fetch_dicts, out_view
from pipeline.errors import SelectorError
from pipeline.stats import OPEN_AT_HOURS, compute
from pipeline.stats_text import format_text
from pipeline.store import Out
from pipeline.textout import NOT_REACHED
from pipeline.vocabulary import TAIL95, Z95
from tests.conftest import FIXTURES, copy_tree, make_git_repo, show_lifetimes_unfrozen

SESSION = Path("docs/research/demo-brainstorm")


# --------------------------------------------------------------------------------------------
# (a) Kaplan–Meier (the km_curve and km_summary macros) against lifelines


def _finite(value: float) -> float | None:
    return None if math.isinf(value) else float(value)


def _fit(durations: Sequence[float], events: Sequence[bool]) -> KaplanMeierFitter:
    return KaplanMeierFitter().fit(list(durations), [int(e) for e in events])


def km(
    durations: Sequence[float | None], events: Sequence[bool], competing: Sequence[bool] = ()
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The SQL estimate of one group: its curve rows and its summary row."""
    con = connect(None)
    con.execute(
        "CREATE TEMP TABLE km_in (grp VARCHAR, duration DOUBLE, event BOOLEAN, competing BOOLEAN)"
    )
    other = list(competing) or [False] * len(durations)
    rows = [("g", d, e, c) for d, e, c in zip(durations, events, other, strict=True)]
    if rows:
        con.executemany("INSERT INTO km_in VALUES (?, ?, ?, ?)", rows)
    level = {"z": Z95, "tail": TAIL95}
    curve = fetch_dicts(con, "SELECT * FROM km_curve('km_in', $z, $tail) ORDER BY time", level)
    summary = fetch_dicts(con, "SELECT * FROM km_summary('km_in', $z, $tail)", level)
    return curve, (summary[0] if summary else {})


def _open_at(summary: dict[str, Any]) -> dict[str, float | None]:
    return {k: summary[f"open_{k}"] for k in OPEN_AT_HOURS}


def assert_matches_lifelines(durations: Sequence[float], events: Sequence[bool]) -> None:
    """Every figure of our estimate equals lifelines' on the same data."""
    kmf = _fit(durations, events)
    steps, summary = km(durations, events)
    survival = kmf.survival_function_.iloc[:, 0]
    band = kmf.confidence_interval_.copy()
    table = kmf.event_table
    assert [s["time"] for s in steps] == [float(t) for t in survival.index]
    for before, step in zip([None, *steps], steps, strict=False):
        assert step["survival"] == pytest.approx(survival.loc[step["time"]], abs=1e-12)
        if before is not None and step["survival"] == 0 and step["events"] == step["at_risk"]:
            # Where every fork at risk closes lifelines' band is [0, 0]; ours keeps the exact
            # upper bound for no survivor of Peto's effective n / S(t−), never above the band
            # before it (docs/stats.md), and the median's end with it.
            effective = step["at_risk"] / before["survival"]
            exact = min(before["upper"], 1 - TAIL95 ** (1 / effective))
            band.iloc[band.index.get_loc(step["time"]), 1] = exact
        after = step["at_risk"] - step["events"] - step["censored"]
        if step["survival"] >= 1 and after > 0:
            # Where no fork has closed yet lifelines' band is [1, 1]; ours keeps the exact
            # lower bound for all `after` forks at risk surviving (docs/stats.md).
            band.iloc[band.index.get_loc(step["time"]), 0] = TAIL95 ** (1 / after)
        lower, upper = band.loc[step["time"]]
        assert step["lower"] == pytest.approx(lower, abs=1e-9)
        assert step["upper"] == pytest.approx(upper, abs=1e-9)
        assert step["at_risk"] == table.loc[step["time"], "at_risk"]
        assert step["events"] == table.loc[step["time"], "observed"]
        assert step["censored"] == table.loc[step["time"], "censored"]
    median_ci = median_survival_times(band)
    # lifelines reads a band as never rising; the exact lower bound before the first close
    # can lie below a later Greenwood one, so the lower end is the first time at or below 0.5.
    below = [t for t, low in zip(band.index, band.iloc[:, 0], strict=True) if low <= 0.5 + 1e-9]
    assert summary["median_lower"] == (float(below[0]) if below else None)
    assert summary["median_upper"] == _finite(median_ci.iloc[0, 1])
    for key, q in (("median", 0.5), ("p25", 0.75), ("p75", 0.25)):
        if any(abs(s["survival"] - q) < 1e-9 for s in steps):
            # A step lands exactly on q: lifelines' log-space rounding may put it a hair
            # above and report the next time; the textbook (and we) take this one.
            assert summary[key] == next(s["time"] for s in steps if s["survival"] <= q + 1e-9)
        else:
            assert summary[key] == _finite(qth_survival_times(q, kmf.survival_function_))
    if not any(abs(s["survival"] - 0.5) < 1e-9 for s in steps):
        assert summary["median"] == _finite(kmf.median_survival_time_)
    longest = max(durations)
    for key, hours in OPEN_AT_HOURS.items():
        if hours <= longest or steps[-1]["survival"] == 0.0:
            expected = float(kmf.predict(hours))
            assert _open_at(summary)[key] == pytest.approx(expected, abs=1e-12)
        else:
            assert _open_at(summary)[key] is None  # beyond follow-up: not estimable


# Hours to close, with ties among closes, among censorings and between the two (24 and 48),
# and lifetimes beyond 30 days so that every share-open checkpoint is estimable.
HOURS = [5, 12, 12, 24, 24, 24, 30, 48, 48, 48, 100, 168, 200, 300, 400, 720, 800, 900, 1000]
CLOSED = [1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 0, 1, 1, 0, 1, 1, 0, 1, 0]


def test_km_with_censoring_and_ties_matches_lifelines() -> None:
    events = [bool(e) for e in CLOSED]
    assert_matches_lifelines([float(h) for h in HOURS], events)
    _, summary = km([float(h) for h in HOURS], events)
    assert (summary["forks"], summary["closes"], summary["censored"], summary["unknown"]) == (
        19,
        12,
        7,
        0,
    )
    assert summary["median"] is not None and summary["median_upper"] is not None


def test_km_counts_closes_before_censorings_at_equal_times() -> None:
    # At t=2 one fork closes and two are censored: all five are at risk, so S(2) = 4/5 (were
    # the censorings first, S(2) would be 2/3); at t=3 one of the two left closes.
    durations = [2.0, 2.0, 2.0, 3.0, 3.0]
    events = [True, False, False, True, False]
    steps, _ = km(durations, events)
    got = [(s["time"], s["at_risk"], s["events"], s["censored"]) for s in steps]
    assert got == [(0.0, 5, 0, 0), (2.0, 5, 1, 2), (3.0, 2, 1, 1)]
    assert [s["survival"] for s in steps] == pytest.approx([1.0, 0.8, 0.4])
    assert_matches_lifelines(durations, events)


def test_a_curve_falling_to_zero_keeps_an_upper_end_from_the_exact_bound() -> None:
    """Where every fork still at risk closes, Greenwood's band is [0, 0], so the median of two
    forks closing together had the interval [1 h, 1 h] and two such arms differed "beyond
    noise". The upper end there is the exact bound for no survivor of n: with two forks the
    median's upper end is not reached; with forty it is, at the same step."""
    # Two forks are also too few to bound the lower end (no close yet, see the next test).
    for forks, lower, upper in ((2, 0.0, None), (40, 1.0, 1.0)):
        steps, summary = km([1.0] * forks, [True] * forks)
        assert steps[-1]["upper"] == pytest.approx(1 - TAIL95 ** (1 / forks))
        assert (summary["median"], summary["median_lower"], summary["median_upper"]) == (
            1.0,
            lower,
            upper,
        )
        assert_matches_lifelines([1.0] * forks, [True] * forks)
    # A close that leaves forks at risk keeps Greenwood's band.
    steps, _ = km([1.0, 1.0, 2.0], [True, True, False])
    assert_matches_lifelines([1.0, 1.0, 2.0], [True, True, False])


def test_before_the_first_close_the_lower_end_is_the_exact_bound() -> None:
    """Before any close Greenwood's band is [1, 1], so one fork closing at 50 h put its
    median's lower end at 50 h, and compare called 5 h against it a regression "beyond
    noise". There the lower end is the exact bound for all n forks at risk surviving,
    tail^(1/n): five forks or fewer cannot place a median above 0 at 95%; six can."""
    for forks, lower in ((1, 0.0), (5, 0.0), (6, 50.0)):
        steps, summary = km([50.0] * forks, [True] * forks)
        assert steps[0]["lower"] == pytest.approx(TAIL95 ** (1 / forks))
        assert summary["median"] == 50.0 and summary["median_lower"] == lower, forks
        assert_matches_lifelines([50.0] * forks, [True] * forks)


def test_forks_all_closing_at_zero_hours_keep_the_exact_upper_end(tmp_path: Path) -> None:
    """Where every fork closes at 0 h the step to 0 is the curve's first row, whose exact upper
    bound was taken from lag() over no earlier row: NULL, so the median's upper end read "not
    reached" where forty (or eight) forks closing together reach it (found by a hunt)."""
    for forks in (8, 40):
        steps, summary = km([0.0] * forks, [True] * forks)
        assert steps[0]["upper"] == pytest.approx(1 - TAIL95 ** (1 / forks))
        assert (summary["median"], summary["median_lower"], summary["median_upper"]) == (0, 0, 0)
    # End to end: eight forks parked by hand on night 2 with no new compose live 0 h.
    root, out = tmp_path / "root", tmp_path / "out"
    for night, marker in ((1, "open"), (2, "parked → docs/x.md")):
        for i in range(8):
            folder = root / f"repo{i}" / "docs" / "research" / "t-brainstorm"
            _plain_session(folder, "open", "2026-01-01T10:00Z", marker)
        crawl([str(root)], str(out), point=f"night-{night}", workers=1)
        check(str(out))
    overall = compute(str(out)).as_json()["fork_lifetimes"]["overall"]
    assert (overall["closes"], overall["median"], overall["median_upper"]) == (8, 0.0, 0.0)


def test_km_median_not_reached_is_never_a_number() -> None:
    durations = [10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0]
    events = [True, False, False, True, False, False, False, False]
    assert_matches_lifelines(durations, events)
    _, summary = km(durations, events)
    assert summary["median"] is None and summary["median_upper"] is None
    assert summary["p25"] == 40.0  # S(40) = 7/8 · 4/5 = 0.7
    assert summary["p75"] is None
    assert summary["open_1d"] == pytest.approx(0.875)
    assert summary["open_30d"] is None  # lifelines would carry 0.7 past the last fork


def test_km_every_open_fork_stays_censored() -> None:
    steps, summary = km([5.0, 9.0, None], [False, False, True])
    assert (summary["closes"], summary["censored"], summary["unknown"]) == (0, 2, 1)
    assert summary["median"] is None and summary["p25"] is None
    assert all(point["survival"] == 1.0 for point in steps)


def test_km_competing_closes_are_censored_and_counted_apart() -> None:
    # Cause-specific: a fork that closed the other way leaves the risk set at its close.
    steps, summary = km([1.0, 2.0, 3.0], [True, False, False], [False, True, False])
    assert (summary["closes"], summary["competing"], summary["censored"]) == (1, 1, 1)
    assert [s["survival"] for s in steps] == pytest.approx([1.0, 2 / 3, 2 / 3, 2 / 3])


def test_km_step_to_exactly_one_half_reaches_the_median() -> None:
    # S(2) = 1/2 exactly; lifelines sums logarithms and can land a hair above (documented).
    _, summary = km([1.0, 2.0, 3.0, 4.0], [True, True, True, True])
    assert summary["median"] == 2.0


def test_km_matches_lifelines_on_random_data() -> None:
    rng = random.Random(20260708)
    compared = 0
    for _ in range(80):
        n = rng.randint(1, 30)
        durations = [
            float(rng.choice([rng.randint(0, 40), round(rng.uniform(0, 900), 1)])) for _ in range(n)
        ]
        events = [rng.random() < 0.6 for _ in range(n)]
        steps, _ = km(durations, events)
        assert_matches_lifelines(durations, events)
        compared += not any(abs(s["survival"] - 0.5) < 1e-9 for s in steps)
    assert compared > 50  # most medians are compared with lifelines' directly


# --------------------------------------------------------------------------------------------
# (b) fork lifetimes end to end, (c) sync pairs


class Session:
    """The base open session, rewritten file by file between crawls."""

    def __init__(self, root: Path) -> None:
        self.repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", root / "repo")
        self.folder = self.repo / SESSION
        self.generation = 0

    def write(
        self,
        compose: str,
        turns: list[str],
        syncs: list[str],
        forks: list[tuple[int, str, str]],
        resolves: dict[int, list[int]],
    ) -> None:
        """forks: (number, marker, raised by); resolves: ledger D# → the F#s it resolves.
        content_time is then the latest of `compose`, the last turn and the newest sync line."""
        state = (self.folder / "state.md").read_text().splitlines()
        state = [
            f"- Last compose: {compose}" if ln.startswith("- Last compose:") else ln for ln in state
        ]
        (self.folder / "state.md").write_text("\n".join(state) + "\n")
        thesis = (self.folder / "thesis.md").read_text().splitlines()
        thesis = [
            f"Current as of: {compose}" if ln.startswith("Current as of:") else ln for ln in thesis
        ]
        (self.folder / "thesis.md").write_text("\n".join(thesis) + "\n")
        capture = ["---"]
        for n, at in enumerate(turns, 1):
            capture += [f"### T{n} · {at}", f"user: turn {n}", "---"]
        (self.folder / "ops" / "capture.md").write_text("\n".join(capture) + "\n")
        (self.folder / "ops" / "sync-log.md").write_text("\n".join(syncs) + "\n")
        text = ["# Forks", ""]
        for number, marker, raised_by in forks:
            text += [
                f"## F{number} — Question {number}? [{marker}]",
                f"Why question {number} matters.",
                f"- Raised by: {raised_by}",
                f"- Closes when: question {number} has an answer",
                "",
            ]
        (self.folder / "forks.md").write_text("\n".join(text))
        ledger = ["# Ledger", ""]
        for number in sorted(resolves):
            ledger += [
                f"## D{number} — Decision {number}",
                f"- Decision: choice {number}.",
                f"- Why: reason {number}.",
                f"- How to apply: step {number}.",
            ]
            if resolves[number]:
                ledger.append("- Resolves: " + ", ".join(f"F{f}" for f in resolves[number]))
            ledger.append("")
        (self.folder / "ledger.md").write_text("\n".join(ledger))
        # Distinct file times per generation, so the crawl's metadata shortcut never hides a change.
        self.generation += 1
        stamp = 1_800_000_000 + self.generation * 1000
        for path in self.folder.rglob("*"):
            os.utime(path, (stamp, stamp))


def ts(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


S1 = [
    "S1 | gate: intake | dispatched: 2026-07-10T08:10Z | scope: bootstrap aspect map + compose",
    "S1 → reconciled | 2026-07-10T08:15Z | 3 edits · 2 new forks · 2 open · untouched: none",
    "S2 | gate: on-demand | dispatched: 2026-07-10T09:00Z | scope: full reconcile + compose",
    "S2 → reconciled | 2026-07-10T09:10Z | 2 edits · 1 new fork · 3 open",
]
S2 = [
    *S1,
    "S3 | gate: on-demand | dispatched: 2026-07-10T09:30Z | scope: full reconcile",
    "S3 → reconciled | 2026-07-10T09:40Z | 1 edit · 1 new fork · 4 open",
    "S4 | gate: on-demand | dispatched: 2026-07-11T09:00Z | scope: full reconcile + compose",
    "S4 → reconciled | 2026-07-11T09:20Z | 4 edits · 1 new fork · 2 open",
]
S3 = [
    *S2,
    "S5 | gate: on-demand | dispatched: 2026-07-13T09:00Z | scope: full reconcile",
    "S5 → failed | 2026-07-13T09:05Z | twin timed out",
    "S6 | gate: stop | dispatched: 2026-07-13T09:30Z | scope: full reconcile + compose",
]
TURNS = ["2026-07-10T08:00Z", "2026-07-10T09:50Z", "2026-07-11T08:30Z", "2026-07-13T09:45Z"]


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One session crawled four times into one OUT (the fourth over unchanged content).

    Snapshot A (content_time 2026-07-10T10:00Z, Last compose): F1 open (user), F2 open (twin S2),
    F4 parked from the start, F5 open (twin S3, a sync the log shows only from B on), and D1
    resolving F3, which forks.md never lists.
    Snapshot B (2026-07-11T10:00Z): D3 resolves F1 (its entry deleted), F2 parked, F6 opens.
    Snapshot C (2026-07-13T10:00Z): D4 resolves F5; F6 still open; S5 failed, S6 in flight.
    """
    tmp = tmp_path_factory.mktemp("stats")
    session = Session(tmp / "corpus")
    out = str(tmp / "out")
    session.write(
        "2026-07-10T10:00Z",
        TURNS[:2],
        S1,
        [
            (1, "open", "user"),
            (2, "open", "twin (S2)"),
            (4, "parked → docs/architecture/open-questions.md", "probe"),
            (5, "open", "twin (S3)"),
        ],
        {1: [3], 2: []},
    )
    crawl([str(tmp / "corpus")], out, labels={"phase": "early"}, workers=1)
    session.write(
        "2026-07-11T10:00Z",
        TURNS[:3],
        S2,
        [
            (2, "parked → docs/architecture/open-questions.md", "twin (S2)"),
            (4, "parked → docs/architecture/open-questions.md", "probe"),
            (5, "open", "twin (S3)"),
            (6, "open", "user"),
        ],
        {1: [3], 2: [], 3: [1]},
    )
    crawl([str(tmp / "corpus")], out, labels={"phase": "early"}, workers=1)
    session.write(
        "2026-07-13T10:00Z",
        TURNS,
        S3,
        [
            (2, "parked → docs/architecture/open-questions.md", "twin (S2)"),
            (4, "parked → docs/architecture/open-questions.md", "probe"),
            (6, "open", "user"),
        ],
        {1: [3], 2: [], 3: [1], 4: [5]},
    )
    crawl([str(tmp / "corpus")], out, labels={"phase": "late"}, workers=1)
    crawl([str(tmp / "corpus")], out, labels={"phase": "late"}, workers=1)
    check(out)
    return Path(out)


def _dicts(con: Any, query: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    cursor = con.execute(query, params or [])
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def test_history_has_three_snapshots_over_four_runs(history: Path) -> None:
    con = connect(Out(history))
    assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 4
    content = con.execute(
        "SELECT DISTINCT s.content_time FROM observations o JOIN snapshots s USING (snapshot_id) "
        "ORDER BY 1"
    ).fetchall()
    assert [c[0] for c in content] == [
        ts("2026-07-10T10:00Z"),
        ts("2026-07-11T10:00Z"),
        ts("2026-07-13T10:00Z"),
    ]


def test_fork_lifetimes_follow_the_spec(history: Path) -> None:
    con = connect(Out(history))
    rows = _dicts(
        con,
        "SELECT fork_id, raised_by, raised_at, closed_at, close_kind, censored, hours, syncs, "
        "raise_source, censored_at, vanished, snapshots FROM fork_lifetimes ORDER BY fork_id",
    )
    a, b, c = ts("2026-07-10T10:00Z"), ts("2026-07-11T10:00Z"), ts("2026-07-13T10:00Z")
    expected = [
        # F1: first seen open in A, resolved by D3 in B; S4 is the one sync after its raise.
        ("F1", "user", a, b, "resolved", False, 24.0, 1, "first_open", None),
        # F2: raised at S2's dispatch (09:00), parked in B; S3 and S4 reconciled in between.
        ("F2", "twin", ts("2026-07-10T09:00Z"), b, "parked", False, 25.0, 2, "sync", None),
        # F3: only ever seen resolved: counted, no lifetime.
        ("F3", None, None, a, "resolved", False, None, None, None, None),
        # F4: first seen already parked, not raised by a sync: no lifetime.
        ("F4", "probe", None, a, "parked", False, None, None, None, None),
        # F5: S3 is in the log only from B on, but any snapshot's log counts; resolved in C.
        ("F5", "twin", ts("2026-07-10T09:30Z"), c, "resolved", False, 72.5, 1, "sync", None),
        # F6: opened in B, still open in C: censored at C, never closed (S5 failed, S6 in flight).
        ("F6", "user", b, None, None, True, 48.0, 0, "first_open", c),
    ]
    got = [
        (
            r["fork_id"],
            r["raised_by"],
            r["raised_at"],
            r["closed_at"],
            r["close_kind"],
            r["censored"],
            r["hours"],
            r["syncs"],
            r["raise_source"],
            r["censored_at"],
        )
        for r in rows
    ]
    assert got == expected
    assert all(r["snapshots"] == 3 and r["vanished"] is False for r in rows)


def test_fork_lifetimes_for_a_subset_of_runs(history: Path) -> None:
    con = connect(Out(history))
    early = [
        r[0]
        for r in con.execute(
            "SELECT run_id FROM runs WHERE labels['phase'] = 'early' ORDER BY started_at"
        ).fetchall()
    ]
    rows = {
        r["fork_id"]: r
        for r in _dicts(con, "SELECT * FROM fork_lifetimes_for(?::VARCHAR[])", [early])
    }
    # As of B, F5 and F6 are open: censored at B's content_time.
    assert rows["F5"]["censored"] and rows["F5"]["hours"] == 24.5
    assert rows["F6"]["censored"] and rows["F6"]["hours"] == 0.0
    assert rows["F1"]["close_kind"] == "resolved" and rows["F1"]["hours"] == 24.0


# A session's forks (number, marker, raised by) and its ledger's Resolves (D# → F#s).
Listing = tuple[list[tuple[int, str, str]], dict[int, list[int]]]


def _lifetimes_after_two_crawls(
    tmp_path: Path, first: Listing, second: Listing
) -> dict[str, dict[str, Any]]:
    """fork_lifetimes by fork ID after two crawls of one session: its forks and ledger as
    `first` says at 10:00 (one turn, S1's first two lines), then as `second` says at 16:00."""
    session = Session(tmp_path / "corpus")
    out = str(tmp_path / "out")
    session.write("2026-07-10T10:00Z", TURNS[:1], S1[:2], *first)
    crawl([str(tmp_path / "corpus")], out, workers=1)
    session.write("2026-07-10T16:00Z", TURNS[:2], S1, *second)
    crawl([str(tmp_path / "corpus")], out, workers=1)
    con = connect(Out(out))
    return {r["fork_id"]: r for r in _dicts(con, "SELECT * FROM fork_lifetimes")}


def test_vanished_reopened_and_still_listed_forks(tmp_path: Path) -> None:
    """F1 vanishes without a resolving entry; F3 is parked, then open again in the latest
    snapshot; F4 is resolved by the ledger while forks.md still lists it open."""
    parked = "parked → docs/architecture/open-questions.md"
    rows = _lifetimes_after_two_crawls(
        tmp_path,
        ([(1, "open", "user"), (3, parked, "probe"), (4, "open", "user")], {1: []}),
        ([(2, "open", "user"), (3, "open", "probe"), (4, "open", "user")], {1: [], 2: [4]}),
    )
    fields = ("vanished", "censored", "close_kind", "raised_at", "hours")
    a, b = ts("2026-07-10T10:00Z"), ts("2026-07-10T16:00Z")
    # Vanished: censored where last listed (A), never closed.
    assert tuple(rows["F1"][f] for f in fields) == (True, True, None, a, 0.0)
    assert rows["F1"]["censored_at"] == a
    assert tuple(rows["F2"][f] for f in fields) == (False, True, None, b, 0.0)
    # Open in the latest snapshot: censored there, although it was parked before.
    assert tuple(rows["F3"][f] for f in fields) == (False, True, None, b, 0.0)
    assert rows["F3"]["closed_at"] is None and rows["F3"]["censored_at"] == b
    # The ledger's Resolves is the record: closed at B, 6 hours after A.
    assert tuple(rows["F4"][f] for f in fields) == (False, False, "resolved", a, 6.0)


def test_a_forks_raiser_and_its_raise_time_come_from_one_listing(tmp_path: Path) -> None:
    """F1 is listed `Raised by: user` first and `twin (S2)` later; F2 the other way round.
    The split by Raised by reads the first listing, so the raise time reads it too: F1 raised
    by the user is raised when first seen open, not at S2's dispatch."""
    rows = _lifetimes_after_two_crawls(
        tmp_path,
        ([(1, "open", "user"), (2, "open", "twin (S2)")], {1: []}),
        ([(1, "open", "twin (S2)"), (2, "open", "user")], {1: [1]}),
    )
    fields = ("raised_by", "raised_at", "close_kind", "hours")
    # Snapshot A's content time is its Last compose (10:00); S2 was dispatched at 09:00.
    a, b, s2 = ts("2026-07-10T10:00Z"), ts("2026-07-10T16:00Z"), ts("2026-07-10T09:00Z")
    assert tuple(rows["F1"][f] for f in fields) == ("user", a, "resolved", (b - a).seconds / 3600)
    assert tuple(rows["F2"][f] for f in fields) == ("twin", s2, None, (b - s2).seconds / 3600)


def test_only_the_twins_sync_times_a_forks_raise(tmp_path: Path) -> None:
    """§7 raises a fork at S#'s dispatch when its `Raised by: twin (S#)` names a logged sync.
    A probe or the user citing a sync (`probe (S2)`) did not raise it by that sync: it is
    raised when first seen open, as any fork the twin did not raise."""
    rows = _lifetimes_after_two_crawls(
        tmp_path,
        ([(1, "open", "probe (S2)"), (2, "open", "user (S2)"), (3, "open", "twin (S2)")], {}),
        ([(1, "open", "probe (S2)"), (2, "open", "user (S2)"), (3, "open", "twin (S2)")], {}),
    )
    a, s2 = ts("2026-07-10T10:00Z"), ts("2026-07-10T09:00Z")
    fields = ("raised_by", "raised_at", "raise_source")
    assert tuple(rows["F1"][f] for f in fields) == ("probe", a, "first_open")
    assert tuple(rows["F2"][f] for f in fields) == ("user", a, "first_open")
    assert tuple(rows["F3"][f] for f in fields) == ("twin", s2, "sync")


def test_a_fork_naming_several_syncs_is_raised_at_the_first_dispatched(tmp_path: Path) -> None:
    """Every S# of a Raised by counts (spec §3.1: `twin (S9, T14)`), and §7 raises a fork at
    the dispatch of a sync it names that the log shows dispatched. `twin (S7, S2)` with S7
    never dispatched was timed from its first listing instead, as if it named none."""
    session = Session(tmp_path / "corpus")
    out = str(tmp_path / "out")
    forks = [(1, "open", "twin (S7, S2)"), (2, "open", "twin (S2, S1)"), (3, "open", "twin (S7)")]
    session.write("2026-07-10T12:00Z", TURNS[:1], S1, forks, {1: []})
    crawl([str(tmp_path / "corpus")], out, workers=1)
    session.write("2026-07-11T12:00Z", TURNS[:1], S1, [], {1: [1, 2, 3]})
    crawl([str(tmp_path / "corpus")], out, workers=1)
    con = connect(Out(out))
    rows = {r["fork_id"]: r for r in _dicts(con, "SELECT * FROM fork_lifetimes")}
    closed = ts("2026-07-11T12:00Z")
    # The dispatch times as S1 (the log above) writes them; S7 is in no log, so F3 is raised
    # when first seen open, at its snapshot's Last compose (the latest time it holds).
    expected = {
        "F1": ("S2", ts("2026-07-10T09:00Z")),
        "F2": ("S1", ts("2026-07-10T08:10Z")),  # of two dispatched, the earlier
        "F3": ("S7", ts("2026-07-10T12:00Z")),
    }
    for fork, (sync, raised) in expected.items():
        row = rows[fork]
        assert (row["raised_by_sync"], row["raised_at"]) == (sync, raised), fork
        assert row["hours"] == (closed - raised).total_seconds() / 3600
    assert rows["F3"]["raise_source"] == "first_open"


def test_a_fork_raised_by_a_sync_dispatched_at_an_unread_time_has_no_raise_time(
    tmp_path: Path,
) -> None:
    """§7 raises a twin's fork at its sync's dispatch when the log shows it dispatched: a log
    showing S2 dispatched at a time that cannot be read leaves the raise unknown (counted, not
    estimated). It fell through to the first snapshot showing the fork open, a made-up shorter
    lifetime in the estimate (found by a hunt)."""
    session = Session(tmp_path / "corpus")
    out = str(tmp_path / "out")
    log = [*S1[:2], "S2 | gate: on-demand | dispatched: 2026-07-10 09:00 UTC | scope: full"]
    forks = [(1, "open", "twin (S2)"), (2, "open", "twin (S1)")]
    session.write("2026-07-10T12:00Z", TURNS[:1], log, forks, {1: []})
    crawl([str(tmp_path / "corpus")], out, workers=1)
    session.write("2026-07-11T12:00Z", TURNS[:1], log, [], {1: [1, 2]})
    crawl([str(tmp_path / "corpus")], out, workers=1)
    rows = {r["fork_id"]: r for r in _dicts(connect(Out(out)), "SELECT * FROM fork_lifetimes")}
    fields = ("raised_at", "raise_source", "close_kind", "hours")
    assert tuple(rows["F1"][f] for f in fields) == (None, None, "resolved", None)
    assert rows["F2"]["raise_source"] == "sync", "a sync timed in the log still raises its fork"


def test_an_open_fork_first_committed_without_a_content_time_stays_censored(
    tmp_path: Path,
) -> None:
    """Git never holds ops/, so a commit of a session whose Last compose is `never` has no
    content time. A fork first listed open there had no raise time with --git-history and
    left the estimate, though every open fork must enter it censored (spec §7); it is timed
    by the first snapshot listing it open that has one, as a plain crawl times it."""
    corpus = tmp_path / "corpus"
    repo = copy_tree(FIXTURES / "example" / "orbit-api", corpus / "orbit-api")
    state = repo / "docs" / "research" / "rate-limits-brainstorm" / "state.md"
    text = state.read_text()
    state.write_text(
        "\n".join(
            "- Last compose: never" if line.startswith("- Last compose:") else line
            for line in text.splitlines()
        )
        + "\n"
    )
    make_git_repo(repo)
    query = (
        "SELECT fork_id, raised_at, censored, hours FROM fork_lifetimes "
        "WHERE topic = 'rate-limits' AND censored ORDER BY fork_id"
    )
    found = {}
    for history in (False, True):
        out = tmp_path / f"out-{history}"
        crawl([str(corpus)], str(out), workers=1, git_history=history)
        found[history] = connect(Out(out)).execute(query).fetchall()
    assert found[True] == found[False]
    assert found[True] and all(hours is not None for *_, hours in found[True])


def test_an_open_fork_whose_latest_snapshot_has_no_content_time_stays_censored(
    tmp_path: Path,
) -> None:
    """Every open fork enters the estimate censored (spec §7). F1 is open in a snapshot
    composed at 12:00 and still open in the latest one, whose `Last compose: never` with no
    turn and no sync line gives no content time: it had no lifetime at all (unknown). It is
    censored at the last content time the series holds, where it was known still open, as F2
    (gone from forks.md there) is censored where last listed. F3, first seen there, has no
    raise time and stays unknown."""
    session = Session(tmp_path / "corpus")
    out = str(tmp_path / "out")
    forks = [(1, "open", "user"), (2, "open", "user")]
    session.write("2026-07-10T10:00Z", [], [], forks, {1: []})
    crawl([str(tmp_path / "corpus")], out, workers=1)
    session.write("2026-07-10T12:00Z", [], [], forks, {1: []})
    crawl([str(tmp_path / "corpus")], out, workers=1)
    session.write("never", [], [], [(1, "open", "user"), (3, "open", "user")], {1: []})
    crawl([str(tmp_path / "corpus")], out, workers=1)
    con = connect(Out(out))
    rows = {r["fork_id"]: r for r in _dicts(con, "SELECT * FROM fork_lifetimes")}
    fields = ("censored", "censored_at", "hours")
    noon = ts("2026-07-10T12:00Z")
    assert tuple(rows["F1"][f] for f in fields) == (True, noon, 2.0)
    assert tuple(rows["F2"][f] for f in fields) == (True, noon, 2.0)
    assert tuple(rows["F3"][f] for f in ("censored", "hours")) == (True, None)


def test_the_shares_still_open_after_days_are_of_hours_alone(tmp_path: Path) -> None:
    """lifetime_summaries' open_1d, open_7d and open_30d are hours' (docs/tables.md, §7): the
    syncs rows held the syncs curve read at 24, 168 and 720 syncs, a share that contradicted
    the hours row of the same forks (found by a hunt)."""
    out = str(tmp_path / "out")
    crawl([str(FIXTURES / "example")], out, workers=1)
    check(out)
    query = (
        "SELECT unit, count(*), count(open_1d) + count(open_7d) + count(open_30d) "
        "FROM lifetime_summaries GROUP BY unit ORDER BY unit"
    )
    (hours, shares), (syncs, none) = [
        (unit, read) for unit, _, read in connect(Out(out)).execute(query).fetchall()
    ]
    assert (hours, syncs, none) == ("hours", "syncs", 0) and shares > 0


def test_an_unchanged_night_repeats_the_figures_of_the_night_before(tmp_path: Path) -> None:
    """Nothing changed between nights 2 and 3: check gives night 3 night 2's lifetimes, counts
    and verdicts (copied, not estimated again), and each equals what is counted live."""
    from pipeline.bench import touch_share
    from pipeline.select import resolve
    from pipeline.stats import longest_open
    from tests.conftest import generate_corpus, show_lifetimes_unfrozen

    root = generate_corpus(tmp_path / "corpus", 60, 3, 0.3)
    out = tmp_path / "out"
    for night in (1, 2, 3):
        if night == 2:
            touch_share(root, 0.2, 3)  # a fork raised in a fifth of the sessions
        crawl([str(root)], str(out), point=f"night-{night}", workers=1)
        check(str(out))
    con = connect(Out(out))

    def rows(table: str, night: int) -> list[Any]:
        query = f"SELECT * EXCLUDE (check_id, point) FROM {table} WHERE point = ? ORDER BY ALL"
        return con.execute(query, [f"night-{night}"]).fetchall()

    for table in ("lifetime_summaries", "lifetime_curves", "longest_open"):
        assert rows(table, 3) == rows(table, 2) != [], table
    assert rows("lifetime_summaries", 2) != rows("lifetime_summaries", 1)
    for table in ("rule_counts", "session_verdicts"):
        frozen = f"SELECT * EXCLUDE (check_id, ruleset) FROM {table} ORDER BY ALL"
        counted = f"FROM {table}_live ORDER BY ALL"
        assert con.execute(frozen).fetchall() == con.execute(counted).fetchall(), table
    assert rows("rule_counts", 3) == rows("rule_counts", 2) != rows("rule_counts", 1)
    # The lifetimes and longest-open forks stats reads equal those counted from the history.
    night3 = resolve(con, "night-3")
    frozen_stats = compute(str(out), "night-3", label_keys=set(), con=con)
    frozen_open = longest_open(con, night3)
    live = connect(Out(out))
    show_lifetimes_unfrozen(live)
    live_stats = compute(str(out), "night-3", label_keys=set(), con=live)
    assert frozen_stats.fork_lifetimes == live_stats.fork_lifetimes
    assert frozen_stats.fork_syncs == live_stats.fork_syncs
    assert frozen_open == longest_open(live, night3) != []
    # Two more unchanged nights checked at once: the second repeats what the same check froze
    # for the first, before either is committed.
    for night in (4, 5):
        crawl([str(root)], str(out), point=f"night-{night}", workers=1)
    check(str(out))
    con = connect(Out(out))
    for table in ("lifetime_summaries", "lifetime_curves", "longest_open", "rule_counts"):
        assert rows(table, 5) == rows(table, 4) == rows(table, 2), table


def _as_an_older_estimator_froze(out: Path, point: str) -> None:
    """Rewrite OUT's committed checks and lifetime summaries as a census estimating lifetimes
    another way left them: checks rows with no estimator, and a median of 999 h at `point`."""
    import duckdb

    store = Out(out)
    con = duckdb.connect()
    for table, change in (
        ("checks", None),
        ("lifetime_summaries", f"CASE WHEN point = '{point}' THEN 999.0 ELSE median END"),
    ):
        for rel in store.manifest()[table]:
            path = str(store.tables / rel)
            names = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM '{path}'").fetchall()]
            cols = ", ".join(
                f"{change} AS median" if n == "median" and change else f'"{n}"'
                for n in names
                if n != "estimator"
            )
            con.execute(f"COPY (SELECT {cols} FROM '{path}') TO '{path}.new' (FORMAT parquet)")
            os.replace(f"{path}.new", path)


def test_an_unchanged_night_is_estimated_again_under_a_new_estimator(tmp_path: Path) -> None:
    """A night with nothing changed copied the previous night's frozen lifetimes whatever
    estimator froze them, so a fix to the estimator never reached the unchanged nights of an
    existing OUT: they kept the older figures (found by a hunt). The older night keeps its own."""
    root, out = tmp_path / "root", tmp_path / "out"
    for night, marker in ((1, "open"), (2, "parked → docs/x.md"), (3, "parked → docs/x.md")):
        for i in range(8):
            folder = root / f"repo{i}" / "docs" / "research" / "t-brainstorm"
            _plain_session(folder, "open", f"2026-01-0{min(night, 2)}T10:00Z", marker)
        crawl([str(root)], str(out), point=f"night-{night}", workers=1)
        if night < 3:
            check(str(out))
        if night == 2:
            _as_an_older_estimator_froze(out, "night-2")
    check(str(out))
    con = connect(Out(out))
    night2 = compute(str(out), "night-2", label_keys=set(), con=con).as_json()
    assert night2["fork_lifetimes"]["overall"]["median"] == 999.0
    frozen = compute(str(out), "night-3", label_keys=set(), con=con).as_json()
    live = connect(Out(out))
    show_lifetimes_unfrozen(live)
    counted = compute(str(out), "night-3", label_keys=set(), con=live).as_json()
    assert frozen["fork_lifetimes"] == counted["fork_lifetimes"]
    assert frozen["fork_lifetimes"]["overall"]["median"] == 24.0


def test_sync_pairs_pair_dispatches_with_results(history: Path) -> None:
    con = connect(Out(history))
    rows = _dicts(
        con,
        "SELECT sync_id, gate, dispatched_at, result, result_at, latency_s, edits, new_forks, "
        "open_forks, newest FROM sync_pairs p JOIN snapshots s USING (snapshot_id) "
        "WHERE s.content_time = ? ORDER BY sync_num",
        [ts("2026-07-13T10:00Z")],
    )
    got = [(r["sync_id"], r["result"], r["latency_s"], r["newest"]) for r in rows]
    assert got == [
        ("S1", "reconciled", 300.0, False),
        ("S2", "reconciled", 600.0, False),
        ("S3", "reconciled", 600.0, False),
        ("S4", "reconciled", 1200.0, False),
        ("S5", "failed", 300.0, False),
        ("S6", None, None, True),
    ]
    assert (rows[0]["edits"], rows[0]["new_forks"], rows[0]["open_forks"]) == (3, 2, 2)
    assert (rows[4]["edits"], rows[4]["new_forks"]) == (None, None)
    assert rows[5]["gate"] == "stop" and rows[5]["result_at"] is None
    assert rows[5]["dispatched_at"] == ts("2026-07-13T09:30Z")


def test_a_sync_pair_takes_every_column_from_its_first_lines(tmp_path: Path) -> None:
    """A sync ID with two dispatches and two results (BS-SYNC-01 fails) is paired from the
    first of each in file order (docs/tables.md), every column from that line: the first
    lines' times do not parse, so the pair has no times. DuckDB's arg_min skips NULLs, so
    the times (and the edits) came from the second lines while the rest came from the first."""
    session = Session(tmp_path / "corpus")
    out = str(tmp_path / "out")
    log = [
        "S1 | gate: intake | dispatched: soon | scope: first",
        "S1 | gate: stop | dispatched: 2026-07-06T10:00Z | scope: second",
        "S1 → failed | yesterday | boom",
        "S1 → reconciled | 2026-07-06T10:20Z | 4 edits · 0 new forks · 0 open",
    ]
    session.write("2026-07-06T14:00Z", TURNS[:1], log, [(1, "open", "user")], {1: []})
    crawl([str(tmp_path / "corpus")], out, workers=1)
    (row,) = _dicts(connect(Out(out)), "SELECT * FROM sync_pairs")
    assert (row["gate"], row["scope"], row["dispatch_line"]) == ("intake", "first", 1)
    assert (row["result"], row["summary"], row["result_line"]) == ("failed", "boom", 3)
    assert (row["dispatched_at"], row["result_at"], row["latency_s"]) == (None, None, None)
    assert row["edits"] is None
    assert (row["dispatches"], row["results"]) == (2, 2)


def test_sync_pairs_unpaired_orphaned_and_health(tmp_path: Path) -> None:
    session = Session(tmp_path / "corpus")
    out = str(tmp_path / "out")
    log = [
        "S1 | gate: intake | dispatched: 2026-07-06T10:11Z | scope: bootstrap",
        "S1 → failed | 2026-07-06T10:12:30Z | twin crashed",
        "S2 | gate: on-demand | dispatched: 2026-07-06T11:00Z | scope: full reconcile",
        "S3 → reconciled | 2026-07-06T12:00+02:00 | 1 edit · 0 new forks · 1 open",
        "S4 | gate: on-demand | dispatched: 2026-07-06T13:00Z | scope: full reconcile",
    ]
    session.write("2026-07-06T14:00Z", TURNS[:1], log, [(1, "open", "user")], {1: []})
    crawl([str(tmp_path / "corpus")], out, workers=1)
    con = connect(Out(out))
    rows = _dicts(con, "SELECT * FROM sync_pairs ORDER BY sync_num")
    got = [
        (r["sync_id"], r["result"], r["latency_s"], r["dispatch_line"], r["newest"]) for r in rows
    ]
    assert got == [
        ("S1", "failed", 90.0, 1, False),
        ("S2", None, None, 3, False),
        ("S3", "reconciled", None, None, False),
        ("S4", None, None, 5, True),
    ]
    assert rows[2]["result_at"] == ts("2026-07-06T10:00Z")
    # The macro for some snapshots gives their rows of the view, and nothing for others.
    asked = "SELECT * FROM sync_pairs_of(?::VARCHAR[]) ORDER BY sync_num"
    assert _dicts(con, asked, [[rows[0]["snapshot_id"], "another"]]) == rows
    assert _dicts(con, asked, [["another"]]) == []
    check(out)
    health = compute(out).sync_health[0]
    assert health.gate == "all"
    assert (health.syncs, health.reconciled, health.failed) == (4, 1, 1)
    assert (health.in_flight, health.unpaired, health.orphaned) == (1, 1, 1)
    assert health.failed_share == 0.5 and health.latency_p50_s == 90.0


def test_a_result_line_whose_outcome_is_unread_is_no_sync_in_flight(tmp_path: Path) -> None:
    """`S2 → FAILED | …` is a result line whose outcome cannot be read (BS-SYNC-01 fails on
    it): its sync has a result line, so it is `unread`, neither in flight (the one state the
    schema allows) nor unpaired; until 2026-12-07 it vanished and S2 read as in flight
    (found by a hunt)."""
    session = Session(tmp_path / "corpus")
    out = str(tmp_path / "out")
    log = [
        *S1[:2],
        "S2 | gate: on-demand | dispatched: 2026-07-06T11:00Z | scope: full reconcile",
        "S2 → FAILED | 2026-07-06T11:30Z | timeout",
        "S3 | gate: on-demand | dispatched: 2026-07-06T12:00Z | scope: full reconcile",
        "S3 → reconciled | failed",
    ]
    session.write("2026-07-06T14:00Z", TURNS[:1], log, [(1, "open", "user")], {1: []})
    crawl([str(tmp_path / "corpus")], out, workers=1)
    check(out)
    con = connect(Out(out))
    pairs = "SELECT sync_id, result, result_line FROM sync_pairs ORDER BY sync_num"
    assert con.execute(pairs).fetchall() == [
        ("S1", "reconciled", 2),
        ("S2", None, 4),
        ("S3", None, 6),
    ]
    health = compute(out).sync_health[0]
    assert (health.syncs, health.reconciled, health.unread) == (3, 1, 2)
    assert (health.in_flight, health.unpaired, health.failed) == (0, 0, 0)
    issues = "SELECT line, code FROM parse_issues WHERE file = 'ops/sync-log.md' ORDER BY line"
    assert con.execute(issues).fetchall() == [(4, "bad-sync-line"), (6, "bad-sync-line")]
    failing = "SELECT DISTINCT status FROM statuses WHERE rule_id = 'BS-SYNC-01'"
    assert con.execute(failing).fetchall() == [("fail",)]


def test_sync_health_counts_what_bs_sync_01_fails(tmp_path: Path) -> None:
    """A later `S1 → failed` after its reconciled result, and a result written before its
    dispatch, fail BS-SYNC-01: sync health counted both healthy (failed 0, a latency of the
    misordered pair). Every failed line counts, and both are misfiled."""
    session = Session(tmp_path / "corpus")
    out = str(tmp_path / "out")
    log = [
        "S1 | gate: intake | dispatched: 2026-07-01T09:40Z | scope: bootstrap",
        "S1 → reconciled | 2026-07-01T09:47Z | 9 edits · 2 new forks · 2 open",
        "S2 → reconciled | 2026-07-09T11:20Z | 7 edits · 2 new forks · 3 open",
        "S2 | gate: on-demand | dispatched: 2026-07-09T11:12Z | scope: full reconcile",
        "S1 → failed | 2026-07-09T11:25Z | twin crashed on retry",
    ]
    session.write("2026-07-10T14:00Z", TURNS[:1], log, [(1, "open", "user")], {1: []})
    crawl([str(tmp_path / "corpus")], out, workers=1)
    check(out)
    health = compute(out).sync_health[0]
    assert (health.syncs, health.reconciled, health.failed, health.misfiled) == (2, 1, 1, 2)
    assert (health.in_flight, health.unpaired, health.orphaned) == (0, 0, 0)
    assert health.failed_share == 0.5
    assert health.latency_n == 1 and health.latency_max_s == 420.0, "S2's result is no reply"
    failing = (
        connect(Out(out))
        .execute("SELECT count(*) FROM findings WHERE rule_id = 'BS-SYNC-01'")
        .fetchone()
    )
    assert failing == (2,)


def test_a_result_timestamped_before_its_dispatch_has_no_latency(tmp_path: Path) -> None:
    """A result line after its dispatch in the file but timestamped an hour before it was a
    latency of −3600 s: sync_pairs showed it and sync health counted it in p50, p90 and max
    with misfiled 0. It is no reply to that dispatch: no latency anywhere, and misfiled."""
    session = Session(tmp_path / "corpus")
    out = str(tmp_path / "out")
    log = [
        "S1 | gate: intake | dispatched: 2026-07-06T10:00Z | scope: bootstrap",
        "S1 → reconciled | 2026-07-06T09:00Z | 1 edit · 0 new forks · 1 open",
        "S2 | gate: on-demand | dispatched: 2026-07-06T11:00Z | scope: full reconcile",
        "S2 → reconciled | 2026-07-06T11:00Z | 1 edit · 0 new forks · 1 open",
        "S3 | gate: on-demand | dispatched: 2026-07-06T12:00Z | scope: full reconcile",
        "S3 → reconciled | 2026-07-06T12:30Z | 1 edit · 0 new forks · 1 open",
    ]
    session.write("2026-07-06T14:00Z", TURNS[:1], log, [(1, "open", "user")], {1: []})
    crawl([str(tmp_path / "corpus")], out, workers=1)
    check(out)
    con = connect(Out(out))
    latencies = con.execute("SELECT sync_id, latency_s FROM sync_pairs ORDER BY sync_num")
    assert latencies.fetchall() == [("S1", None), ("S2", 0.0), ("S3", 1800.0)]
    health = compute(out).sync_health[0]
    assert (health.syncs, health.reconciled, health.misfiled) == (3, 3, 1)
    assert (health.latency_n, health.latency_p50_s, health.latency_max_s) == (2, 900.0, 1800.0)
    # BS-SYNC-01 fails the same pair, on its result line: one reading of "no reply".
    failing = con.execute(
        "SELECT line, message FROM findings WHERE rule_id = 'BS-SYNC-01' ORDER BY line"
    ).fetchall()
    assert failing == [
        (2, "S1's result at 2026-07-06T09:00Z is before its dispatch at 2026-07-06T10:00Z")
    ]


def test_a_sync_health_counts_failed_is_no_reconciled_sync_of_a_lifetime(
    tmp_path: Path,
) -> None:
    """`S2 → reconciled` and then `S2 → failed`: sync health counts S2 failed, not reconciled
    (and BS-SYNC-02 fails a fork citing it), but a fork's lifetime in reconciled syncs counted
    it as one. A reconciled sync is one definition: no failed result."""
    session = Session(tmp_path / "corpus")
    out = str(tmp_path / "out")
    log = [
        "S1 | gate: intake | dispatched: 2026-07-06T10:00Z | scope: bootstrap",
        "S1 → reconciled | 2026-07-06T10:05Z | 1 edit · 1 new fork · 1 open",
    ]
    turns = ["2026-07-06T09:00Z"]
    session.write("2026-07-06T11:00Z", turns, log, [(1, "open", "twin (S1)")], {})
    crawl([str(tmp_path / "corpus")], out, workers=1)
    log += [
        "S2 | gate: on-demand | dispatched: 2026-07-07T09:00Z | scope: full reconcile",
        "S2 → reconciled | 2026-07-07T09:05Z | 1 edit · 0 new forks · 1 open",
        "S2 → failed | 2026-07-07T09:06Z | twin crashed on retry",
    ]
    parked = (1, "parked → docs/architecture/open-questions.md", "twin (S1)")
    session.write("2026-07-07T10:00Z", turns, log, [parked], {})
    crawl([str(tmp_path / "corpus")], out, workers=1)
    check(out)
    result = compute(out)
    health = result.sync_health[0]
    assert (health.syncs, health.reconciled, health.failed) == (2, 1, 1)
    con = connect(Out(out))
    fork = con.execute("SELECT close_kind, hours, syncs FROM fork_lifetimes").fetchall()
    assert fork == [("parked", 24.0, 0)]
    assert result.fork_syncs.overall.median == 0.0


def test_stage_flows_match_a_replays_arms_as_the_report_does(tmp_path: Path) -> None:
    """A replay crawls one layout under two roots. Stage flows matched sessions under their
    root, so every session read as gone and new again, while the report's "What changed"
    (and compare) matched them by key: one matching (same_session) serves all three."""
    from pipeline.compare import Selector
    from pipeline.report import gather

    out = str(tmp_path / "out")
    for arm in ("base", "cand"):
        repo = copy_tree(FIXTURES / "example" / "orbit-api", tmp_path / arm / "orbit-api")
        if arm == "cand":
            manifest = repo / "docs/research/pagination-brainstorm/ops/manifest.md"
            manifest.write_text(manifest.read_text().replace("Status: approved", "Status: applied"))
        crawl([str(tmp_path / arm)], out, {"run": arm}, workers=1, point=arm)
    check(out)
    flows = {(f.from_stage, f.to_stage): f.sessions for f in compute(out).stage_flows}
    assert flows == {
        ("open", "open"): 1,
        ("converging", "applied"): 1,
        ("applied", "applied"): 1,
        ("harvested", "harvested"): 1,
    }
    since = gather(out, Selector()).since
    assert since is not None
    moved = {flow: [r["topic"] for r in rows] for flow, rows in since.flows.items() if rows}
    assert moved == {"advanced": ["pagination"]}


def test_a_point_with_no_session_keeps_its_stage_row(tmp_path: Path) -> None:
    """A point crawled from an empty root had no row in "Sessions by stage" (stats text and
    JSON), while the stage flows of the same output named it and the report's stage table
    showed it with zeros: stages.sql counted only the stages a point had sessions in."""
    session = Session(tmp_path / "corpus")
    session.write("2026-07-06T14:00Z", TURNS[:1], [], [(1, "open", "user")], {1: []})
    empty = tmp_path / "empty"
    empty.mkdir()
    out = str(tmp_path / "out")
    for point, root in (("a1", tmp_path / "corpus"), ("a2", empty), ("a3", tmp_path / "corpus")):
        crawl([str(root)], out, workers=1, point=point)
    check(out)
    result = compute(out)
    grid = {(s.point, s.stage): s.sessions for s in result.stages}
    assert grid == {
        (p, stage): int(p != "a2" and stage == "open")
        for p in ("a1", "a2", "a3")
        for stage in ("open", "converging", "applied", "harvested")
    }
    assert [s.stage for s in result.stages[:4]] == ["open", "converging", "applied", "harvested"]
    assert {(f.from_point, f.to_point) for f in result.stage_flows} == {("a1", "a2"), ("a2", "a3")}
    table = format_text(result).split("Sessions by stage")[1].split("Stage flows")[0]
    assert [ln.split() for ln in table.splitlines() if ln.strip().startswith("a")] == [
        ["a1", "1", "0", "0", "0"],
        ["a2", "0", "0", "0", "0"],
        ["a3", "1", "0", "0", "0"],
    ]


def test_the_trend_names_two_points_alike_apart(tmp_path: Path) -> None:
    """Two runs with one label in one minute were two trend columns with the same header
    ("phase=a (… 10:00Z)" twice), so the text did not say which rate was the later one."""
    session = Session(tmp_path / "corpus")
    session.write("2026-07-06T14:00Z", TURNS[:1], [], [(1, "open", "user")], {1: []})
    out = str(tmp_path / "out")
    for _ in range(2):
        crawl([str(tmp_path / "corpus")], out, workers=1, labels={"phase": "a"})
    check(out)
    result = compute(out)
    assert result.history[0].title == result.history[1].title  # the case: alike by title
    trend = format_text(result).split("Failure-rate trend, oldest first")[1]
    header = next(ln for ln in trend.splitlines() if ln.strip().startswith("rule"))
    assert "#1" in header and "#2" in header
    assert header.index("#1") < header.index("#2")


def test_compute_end_to_end(history: Path) -> None:
    result = compute(str(history))
    assert list(result.as_json()) == [
        "out",
        "point",
        "history",
        "rule_rates",
        "fork_lifetimes",
        "fork_syncs",
        "stages",
        "stage_flows",
        "sync_health",
        "compose_lag",
        "idle",
        "trend",
        "unchecked_later",
    ]
    assert result.unchecked_later == []
    assert result.point.labels == {"phase": "late"}
    assert len(result.history) == 4
    overall = result.fork_lifetimes.overall
    # Durations 24, 25, 72.5 (closed) and 48 (censored); F3 and F4 have no lifetime.
    counts = [overall.forks, overall.closes, overall.censored, overall.competing, overall.unknown]
    assert counts == [6, 3, 1, 0, 2]
    assert overall.median == 25.0  # S(25) = 3/4 · 2/3 = 1/2
    assert (overall.p25, overall.p75) == (24.0, 72.5)
    assert overall.open_at == {"1d": 0.75, "7d": 0.0, "30d": 0.0}
    resolved = result.fork_lifetimes.by_close_kind["resolved"]
    assert [resolved.closes, resolved.censored, resolved.competing, resolved.unknown] == [
        2,
        1,
        1,
        2,
    ]
    by_raiser = result.fork_lifetimes.by_raised_by
    assert sorted(by_raiser) == ["probe", "twin", "unknown", "user"]
    assert by_raiser["twin"].closes == 2 and by_raiser["user"].censored == 1
    early = result.fork_lifetimes.by_label["phase=early"]
    assert [early.closes, early.censored, early.unknown] == [2, 2, 2]
    syncs = result.fork_syncs.overall
    assert [syncs.closes, syncs.censored, syncs.unknown] == [3, 1, 2]
    assert syncs.median == 1.0 and syncs.open_at == {}
    assert {(s.stage, s.sessions) for s in result.stages if s.sessions} == {("open", 1)}
    assert len(result.stages) == 4 * 4, "every stage at every point, 0 where none"
    assert [f.sessions for f in result.stage_flows] == [1, 1, 1]
    health = result.sync_health[0]
    assert (health.syncs, health.failed, health.in_flight) == (6, 1, 1)
    lag = result.compose_lag[0]
    assert (lag.measured, lag.stale, lag.lag_max_hours) == (1, 0, -0.25)
    assert result.idle[0].measured == 1
    # One open session: the session-gate rules are evaluated on it, the later gates' on none.
    assert {(r.gate, r.evaluated + r.skipped) for r in result.rule_rates} == {
        ("session", 1),
        ("manifest", 0),
        ("move", 0),
    }
    assert len({t.point for t in result.trend}) == 4
    text = format_text(result)
    assert "Fork lifetime" in text and "Sync health" in text and "25.0" in text
    json_keys = result.as_json()["fork_lifetimes"]["overall"]
    assert json_keys["median"] == 25.0 and json_keys["open_at"]["1d"] == 0.75


def test_a_median_not_reached_prints_so(tmp_path: Path) -> None:
    session = Session(tmp_path / "corpus")
    out = str(tmp_path / "out")
    session.write("2026-07-10T10:00Z", TURNS[:1], S1[:2], [(1, "open", "user")], {1: []})
    crawl([str(tmp_path / "corpus")], out, workers=1)
    check(out)
    text = format_text(compute(out))
    assert NOT_REACHED in text


def test_the_idle_table_says_days_in_both_counts(history: Path) -> None:
    """The idle table's last header read "over 30", beside "over 7 days", in a table of
    hours: 30 what was left to guess."""
    idle = format_text(compute(str(history))).split("Idle in hours")[1]
    header = next(ln for ln in idle.splitlines() if ln.strip().startswith("stage"))
    assert "over 7 days" in header and "over 30 days" in header


def test_compute_selects_points_by_label_and_run(history: Path) -> None:
    early = compute(str(history), labels={"phase": "early"})
    assert early.point.labels == {"phase": "early"}
    assert len(early.history) == 2
    assert early.fork_lifetimes.overall.censored == 2
    first = early.history[0].runs[0]
    assert [p.runs[0] for p in compute(str(history), run=first).history] == [first]
    assert compute(str(history), run="previous").point == early.point.__class__(
        *[getattr(compute(str(history)).history[-2], f) for f in ("name", "position")],
        **{
            k: getattr(compute(str(history)).history[-2], k)
            for k in ("started_at", "runs", "labels", "checked")
        },
    )
    with pytest.raises(SelectorError, match="phase=early"):
        compute(str(history), labels={"phase": "never"})
    with pytest.raises(SelectorError, match="no run or census point"):
        compute(str(history), run="no-such-run")


# ─────────── the report's share of the lifetime pass (one definition, one walk) ───────────


@pytest.fixture(scope="module")
def git_census(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated git corpus (forks raised and closed over commits), crawled with its history
    on two nights and checked."""
    from tests.conftest import generate_corpus

    root = generate_corpus(tmp_path_factory.mktemp("lifetimes") / "corpus", 80, 5, 0.2, "--git")
    out = tmp_path_factory.mktemp("lifetimes-out") / "out"
    for night in ("night-1", "night-2"):
        crawl([str(root)], str(out), git_history=True, point=night)
    check(str(out))
    return out


def test_fork_lifetimes_of_some_sessions_are_their_rows_of_every_session(
    git_census: Path,
) -> None:
    con = connect(Out(git_census))
    keys = [
        r[0]
        for r in con.execute(
            "SELECT DISTINCT session_key FROM fork_lifetimes ORDER BY session_key LIMIT 7"
        ).fetchall()
    ]
    order = "ORDER BY session_key, root, fork_id"
    some = _dicts(con, f"SELECT * FROM fork_lifetimes_of(NULL, ?::VARCHAR[]) {order}", [keys])
    every = _dicts(
        con,
        f"SELECT * FROM fork_lifetimes WHERE list_contains(?::VARCHAR[], session_key) {order}",
        [keys],
    )
    assert some == every and len(some) > 7
    # Reconciled syncs are counted, so the sessions' sync pairs were read (sync_pairs_of).
    assert any(r["syncs"] for r in some)


def test_hours_lifetime_is_the_overall_of_the_full_pass(git_census: Path) -> None:
    from pipeline.select import all_points
    from pipeline.stats import history_runs, hours_lifetime, lifetimes

    con = connect(Out(git_census))
    show_lifetimes_unfrozen(con)
    point = all_points(con)[-1]
    runs, _ = history_runs(all_points(con))
    full = lifetimes(con, point, runs, {})[0].overall
    alone = hours_lifetime(con, point, runs)
    assert alone == full and full.estimated > 0 and full.closes > 0


def test_check_freezes_each_points_lifetimes_as_the_history_gives_them(git_census: Path) -> None:
    """What check froze for each night (summaries, curves, longest-open forks) is what a pass
    over that night's history gives now, to the last float."""
    from pipeline.select import all_points
    from pipeline.stats import (
        _lifetime_groups,
        frozen_lifetime_groups,
        history_runs,
        hours_lifetime,
        lifetimes_check,
        longest_open,
    )

    con = connect(Out(git_census))
    points = all_points(con)
    frozen = {}
    for point in points:
        assert lifetimes_check(con, point.name) is not None, point.name
        frozen[point.name] = (
            frozen_lifetime_groups(con, point.name),
            longest_open(con, point),
            hours_lifetime(con, point, history_runs(points)[0]),
        )
    show_lifetimes_unfrozen(con)
    for point in points:
        runs, _ = history_runs([p for p in points if p.position <= point.position])
        groups = _lifetime_groups(con, runs, list(point.runs))
        ranked = longest_open(con, point)  # from the point_forks this pass left
        hours = hours_lifetime(con, point, runs)
        assert frozen[point.name] == (groups, ranked, hours), point.name
        assert groups["hours"]["overall"].curve and groups["syncs"]["overall"].forks > 0
        assert len(ranked) > 3


def _plain_session(folder: Path, status: str, composed: str, marker: str) -> None:
    """A small session with one fork F1 under `marker`, composed at `composed`."""
    (folder / "ops").mkdir(parents=True, exist_ok=True)
    (folder / "ops" / ".gitignore").write_text("*\n")
    (folder / "state.md").write_text(
        f"# State\n- Status: {status}\n- Posture: p\n- Started: 2026-01-01\n"
        f"- Sitting: single\n- Last compose: {composed}\n\n## Aspect map\n- core — c → thesis\n"
    )
    (folder / "thesis.md").write_text(
        f"# T\nCurrent as of: {composed}\n\n## Claim\nx\n## Argument\ny\n## What changed\nz\n"
    )
    (folder / "forks.md").write_text(
        f"# Forks\n\n## F1 — A question [{marker}]\n- Raised by: user\n- Closes when: a pick\n"
    )
    (folder / "ledger.md").write_text("# Ledger\n")


def test_a_stale_history_copy_beside_the_research_folder_closes_no_fork(tmp_path: Path) -> None:
    """A move half done: the research folder stands for the session (docs/time-model.md), so
    its open F1 is censored. The history copy, observed at the same moment and sorted after
    it by stage, was the latest snapshot: F1 read as parked after 24 h, a close."""
    repo = tmp_path / "root" / "repo"
    research = repo / "docs" / "research" / "t-brainstorm"
    _plain_session(research, "open", "2026-01-01T00:00Z", "open")
    history = repo / "docs" / "history" / "brainstorms" / "t"
    _plain_session(history, "harvested", "2026-01-02T00:00Z", "parked → docs/x.md")
    shutil.rmtree(history / "ops")
    out = tmp_path / "out"
    crawl([str(tmp_path / "root")], str(out), workers=1)
    _plain_session(research, "open", "2026-01-05T00:00Z", "open")
    crawl([str(tmp_path / "root")], str(out), workers=1)
    check(str(out))
    con = connect(Out(out))
    forks = con.execute(
        "SELECT fork_id, close_kind, censored, hours FROM fork_lifetimes_at("
        "(SELECT max_by(point, position) FROM points))"
    ).fetchall()
    assert forks == [("F1", None, True, 96.0)]
    overall = compute(str(out)).fork_lifetimes.overall
    assert (overall.closes, overall.censored, overall.median) == (0, 1, None)


def test_frozen_lifetime_summaries_are_written_in_one_order(git_census: Path) -> None:
    """Each point's frozen summaries come in the order of their groups: the same forks give the
    same file, whichever order DuckDB's aggregation happened to finish in."""
    import pyarrow.parquet as pq

    files = sorted((git_census / "tables" / "lifetime_summaries").rglob("*.parquet"))
    seen = 0
    for file in files:
        rows = pq.read_table(file, columns=["check_id", "point", "unit", "grp"]).to_pylist()
        by_point: dict[tuple[str, str], list[str]] = {}
        for row in rows:
            by_point.setdefault((row["check_id"], row["point"]), []).append(
                f"{row['unit']}|{row['grp']}"
            )
        for groups in by_point.values():
            assert groups == sorted(groups) and len(groups) > 3
            seen += 1
    assert seen >= 2


def test_the_reports_open_forks_are_the_longest_open_of_the_point(git_census: Path) -> None:
    from pipeline.compare import Selector
    from pipeline.report import gather
    from pipeline.stats import OPEN_FORKS

    con = connect(Out(git_census))
    expected = _dicts(
        con,
        "SELECT repo, topic, fork_id, title, raised_by, hours FROM fork_lifetimes_at('night-2') "
        "SEMI JOIN (SELECT session_key, root FROM sessions WHERE point = 'night-2') "
        "USING (session_key, root) WHERE censored AND NOT vanished "
        "ORDER BY hours DESC NULLS LAST, session_key, root, fork_id LIMIT ?",
        [OPEN_FORKS],
    )
    expected.sort(
        key=lambda r: (r["hours"] is None, -(r["hours"] or 0), r["repo"], r["topic"], r["fork_id"])
    )
    got = gather(str(git_census), Selector()).open_forks
    assert len(got) == OPEN_FORKS
    assert [tuple(r.values()) for r in got] == [tuple(r.values()) for r in expected]


def test_statuses_has_one_row_per_point_session_and_rule(git_census: Path) -> None:
    """The views count rules with count(*), not count(DISTINCT): this is what makes it right."""
    con = connect(Out(git_census))
    rows, keys = con.execute(
        "SELECT count(*), count(DISTINCT (point, session_key, root, rule_id)) FROM statuses"
    ).fetchone()
    assert rows == keys > 0


def test_check_freezes_each_points_counts_and_verdicts_and_the_views_read_them(
    tmp_path: Path,
) -> None:
    """A night's rates and verdicts are facts: check stores the rule counts and the session
    verdicts it decided, they equal the live ones of the same statuses, and rule_rates and
    sessions give the same rows whether they read them or compute them."""
    from pipeline.bench import touch_share
    from pipeline.select import resolve
    from pipeline.stats import keep_rule_rates, keep_session_verdicts
    from tests.conftest import generate_corpus

    root = generate_corpus(tmp_path / "corpus", 60, 3, 0.3)
    out = tmp_path / "out"
    crawl([str(root)], str(out), point="night-1", workers=1)
    check(str(out))
    touch_share(root, 0.2, 3)  # a fork raised in a fifth of the sessions
    crawl([str(root)], str(out), point="night-2", workers=1)
    check(str(out))
    counted = "point, rule_id, evaluated, failed, info, skipped"
    order = "ORDER BY point, rule_id"
    rates_query = f"SELECT * FROM rule_rates {order}"
    con = connect(Out(out))
    frozen = con.execute(f"SELECT {counted} FROM rule_counts {order}").fetchall()
    assert frozen == con.execute(f"SELECT {counted} FROM rule_counts_live {order}").fetchall()
    assert {r[0] for r in frozen} == {"night-1", "night-2"}
    checks = con.execute("SELECT count(DISTINCT check_id) FROM rule_counts").fetchone()[0]
    assert checks == 2, "each night frozen by the check that decided it"
    rates = con.execute(rates_query).fetchall()
    assert len(rates) == 2 * con.execute("SELECT count(*) FROM rules").fetchone()[0]
    # A point checked before counts were frozen (night-1, once its counts are hidden) is
    # counted live, by the view and by what stats keeps of it, beside a frozen one.
    con.execute(
        "CREATE TEMP TABLE rule_counts AS "
        f"SELECT * FROM {out_view(con, 'rule_counts')} WHERE point = 'night-2'"
    )
    live = con.execute("SELECT list(point) FROM points_counted_live").fetchone()[0]
    assert live == ["night-1"]
    assert con.execute(rates_query).fetchall() == rates
    # Kept for the first night, then for the last (as stats then alarms may): the second keep
    # reads OUT's views, not the first keep's temp tables of the same names.
    keep_rule_rates(con, resolve(con, "night-1"))
    keep_rule_rates(con, resolve(con))
    assert con.execute(rates_query).fetchall() == rates
    # The same for each session's verdict, which the sessions view reads.
    judged = "point, session_key, root, clean, failing_rules"
    by = "ORDER BY point, session_key, root"
    verdicts = con.execute(f"SELECT {judged} FROM session_verdicts {by}").fetchall()
    assert verdicts == con.execute(f"SELECT {judged} FROM session_verdicts_live {by}").fetchall()
    assert {r[0] for r in verdicts} == {"night-1", "night-2"}
    assert len({r[4] for r in verdicts}) > 1, "sessions fail different numbers of rules"
    sessions_query = f"SELECT * FROM sessions {by}"
    sessions = con.execute(sessions_query).fetchall()
    assert [r[-2:] for r in sessions] == [r[3:] for r in verdicts]
    con.execute(
        "CREATE TEMP TABLE session_verdicts AS "
        f"SELECT * FROM {out_view(con, 'session_verdicts')} WHERE point = 'night-2'"
    )
    assert con.execute("SELECT list(point) FROM points_judged_live").fetchone()[0] == ["night-1"]
    assert con.execute(sessions_query).fetchall() == sessions
    keep_session_verdicts(con, resolve(con, "night-1"))
    keep_session_verdicts(con, resolve(con))
    assert con.execute(sessions_query).fetchall() == sessions
    # And the views do read what was frozen: a changed frozen row shows through them.
    con.execute(
        "CREATE OR REPLACE TEMP TABLE session_verdicts AS "
        "SELECT * REPLACE (failing_rules + 100 AS failing_rules) "
        f"FROM {out_view(con, 'session_verdicts')}"
    )
    con.execute(
        "CREATE OR REPLACE TEMP TABLE rule_counts AS "
        f"SELECT * REPLACE (evaluated + 100 AS evaluated) FROM {out_view(con, 'rule_counts')}"
    )
    for table in ("session_verdicts_live", "rule_counts_live", "rule_rates"):
        con.execute(f"DROP TABLE IF EXISTS temp.main.{table}")  # what the keeps left
    assert con.execute("SELECT min(failing_rules) FROM sessions").fetchone()[0] >= 100
    assert con.execute("SELECT min(evaluated) FROM rule_rates").fetchone()[0] >= 100
    # Re-checked with the same rules: new frozen rows, the same single row per rule or session.
    check(str(out), recheck=True)
    again = connect(Out(out))
    assert again.execute(rates_query).fetchall() == rates
    assert again.execute(sessions_query).fetchall() == sessions
    for table in ("rule_counts", "session_verdicts"):
        assert again.execute(f"SELECT count(DISTINCT check_id) FROM {table}").fetchone()[0] == 3


def test_fork_lifetimes_at_a_point_are_the_forks_stats_counts(tmp_path: Path) -> None:
    """A session gone by night 2 is not night 2's: fork_lifetimes_at('n2') and stats agree
    on its forks (the macro counted the vanished session's forks too)."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    research = repo / "docs" / "research"
    copy_tree(research / "demo-brainstorm", research / "other-brainstorm")
    out = tmp_path / "out"
    crawl([str(repo.parent)], str(out), workers=1, point="n1")
    check(str(out))
    for path in sorted((research / "other-brainstorm").rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    (research / "other-brainstorm").rmdir()
    crawl([str(repo.parent)], str(out), workers=1, point="n2")
    check(str(out))
    forks, everywhere = (
        connect(Out(out))
        .execute(
            "SELECT (SELECT count(*) FROM fork_lifetimes_at('n2')), "
            "(SELECT count(*) FROM fork_lifetimes)"
        )
        .fetchone()
    )
    assert forks == compute(str(out)).fork_lifetimes.overall.forks > 0
    assert everywhere == 2 * forks, "the view keeps every series; the point, its own"


@pytest.mark.parametrize(
    ("compose", "turns"),
    [
        # The newest turn's time cannot be read: the older readable one is 2 h before Last compose.
        ("2026-07-10T10:00Z", ["2026-07-10T08:00Z", "2026-07-10 11:00"]),
        ("last Tuesday", ["2026-07-10T08:00Z"]),  # Last compose itself cannot be read
    ],
)
def test_compose_lag_is_stale_where_bs_compose_02_fails(
    tmp_path: Path, compose: str, turns: list[str]
) -> None:
    """Compose lag worked from the readable turns alone: with the newest turn's time unread,
    BS-COMPOSE-02 failed and the lag said not stale (−2.00 h), two definitions of stale."""
    session = Session(tmp_path / "corpus")
    session.write(compose, turns, S1, [(1, "open", "user")], {})
    out = str(tmp_path / "out")
    crawl([str(tmp_path / "corpus")], out, workers=1)
    check(out)
    failed = (
        connect(Out(out))
        .execute(
            "SELECT count(*) FROM rule_results "
            "WHERE rule_id = 'BS-COMPOSE-02' AND status = 'fail' AND gate = 'manifest'"
        )
        .fetchone()
    )
    assert failed == (1,)
    lag = compute(out).compose_lag[0]
    assert (lag.sessions, lag.measured, lag.stale) == (1, 0, 1)


def test_the_estimator_hashes_every_view_the_frozen_lifetimes_read() -> None:
    """checks.estimator decides whether a night copies the lifetimes an earlier one froze, but
    it hashed no file of sync_pairs_of (views/50_sync_pairs.sql), which counts each fork's
    syncs: a change to the pairing left it the same, so unchanged nights kept copying syncs
    figures frozen under the old pairing (found by a hunt)."""
    import re

    from pipeline.resources import queries_dir
    from pipeline.stats import ESTIMATOR_FILES

    defined = {
        name: path.relative_to(queries_dir()).as_posix()
        for path in sorted((queries_dir() / "views").glob("*.sql"))
        for name in re.findall(r"CREATE OR REPLACE (?:MACRO|VIEW) (\w+)", path.read_text())
    }
    missing = set()
    for name in ESTIMATOR_FILES:
        text = re.sub(r"--[^\n]*", "", (queries_dir() / name).read_text())
        used = {defined[word] for word in set(re.findall(r"\w+", text)) & defined.keys()}
        missing |= used - set(ESTIMATOR_FILES)
    assert not missing, f"the estimator's queries read views it does not hash: {missing}"


def test_a_content_time_from_a_clock_running_ahead_is_never_negative_idle(
    tmp_path: Path,
) -> None:
    """A twin on a fast clock writes Last compose 2030: the session was idle for minus three
    years (the p50 and max of every stage it was in). What the crawl saw was written before
    it saw it, so such a content time counts as that moment: idle 0, as lifetimes cap it."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    session = repo / "docs" / "research" / "demo-brainstorm"
    for name, prefix in (("state.md", "- Last compose: "), ("thesis.md", "Current as of: ")):
        path = session / name
        path.write_text(
            path.read_text().replace(f"{prefix}2026-07-08T14:30Z", f"{prefix}2030-01-01T10:00Z")
        )
    out = tmp_path / "out"
    crawl([str(tmp_path / "root")], str(out), workers=1)
    check(str(out))
    idle = compute(str(out)).idle[0]
    assert (idle.measured, idle.idle_p50_hours, idle.idle_max_hours) == (1, 0.0, 0.0)


def test_an_empty_group_keeps_the_open_at_keys_in_json(tmp_path: Path) -> None:
    """A census point with no fork gave `open_at: {}` for all forks and each close kind, where
    every other hours group has the keys 1d, 7d and 30d (docs/stats.md): a reader of
    `stats --json` took `open_at["1d"]` and failed on an empty census (found by a hunt)."""
    (tmp_path / "empty" / "docs" / "research").mkdir(parents=True)
    out = str(tmp_path / "out")
    crawl([str(tmp_path / "empty")], out, workers=1)
    check(out)
    found = compute(out).as_json()
    hours, syncs = found["fork_lifetimes"], found["fork_syncs"]
    for group in (hours["overall"], *hours["by_close_kind"].values()):
        assert group["open_at"] == {"1d": None, "7d": None, "30d": None}
    assert syncs["overall"]["open_at"] == {}
