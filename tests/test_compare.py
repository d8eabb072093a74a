"""census compare: intervals against published and independent computations; regressions found."""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path
from statistics import NormalDist
from typing import Any

import pytest
from typer.testing import CliRunner

from pipeline.check import check
from pipeline.cli import app
from pipeline.compare import (
    MEDIAN,
    Comparison,
    Selector,
    band_median,
    between,
    compare,
    mcnemar_exact,
    median_interval,
    median_row,
    point_lifetime,
)
from pipeline.crawl import crawl
from pipeline.engine import connect
from pipeline.errors import SelectorError
from pipeline.rules import NOT_APPLICABLE_SKIPS, load_rules
from pipeline.select import resolve
from pipeline.stats import CURVE_POINTS, Lifetime
from pipeline.store import Out
from tests.conftest import FIXTURES, copy_tree, fill, generate_corpus

Z95 = NormalDist().inv_cdf(0.975)
runner = CliRunner()
BASELINE = Selector(None, {"run": "baseline"})
CANDIDATE = Selector(None, {"run": "candidate"})


def sql(expression: str, *args: float) -> tuple[float, ...]:
    """Evaluate the census's SQL macros (05_macros.sql) on numbers."""
    row = connect(None).execute(f"SELECT {expression}", list(args)).fetchone()
    assert row is not None
    return tuple(row)


def newcombe_unpaired(f1: int, n1: int, f2: int, n2: int, z: float) -> tuple[float, ...]:
    lower, upper = sql(
        "newcombe_lo(?, ?, ?, ?, ?), newcombe_hi(?, ?, ?, ?, ?)", *([f1, n1, f2, n2, z] * 2)
    )
    return f2 / n2 - f1 / n1, lower, upper


def newcombe_paired(a: int, b: int, c: int, d: int, z: float) -> tuple[float, ...]:
    lower, upper = sql(
        "newcombe_paired_lo(?, ?, ?, ?, ?), newcombe_paired_hi(?, ?, ?, ?, ?)",
        *([a, b, c, d, z] * 2),
    )
    return (c - b) / (a + b + c + d), lower, upper


def test_unpaired_interval_matches_newcombe_1998_table_ii() -> None:
    # Newcombe (1998), Statistics in Medicine 17:873, Table II, method 10: 56/70 − 48/80 and
    # 0/10 − 0/20. Our difference is candidate − baseline, so baseline = the second group.
    diff, lower, upper = newcombe_unpaired(48, 80, 56, 70, Z95)
    assert (round(diff, 4), round(lower, 4), round(upper, 4)) == (0.2, 0.0524, 0.3339)
    diff, lower, upper = newcombe_unpaired(0, 20, 0, 10, Z95)
    assert (round(diff, 4), round(lower, 4), round(upper, 4)) == (0.0, -0.1611, 0.2775)


def _paired_reference(n11: int, n12: int, n21: int, n22: int, z: float) -> tuple[float, float]:
    """Newcombe's paired method 10, written out from the paper's formulas (p1 − p2 form)."""
    n = n11 + n12 + n21 + n22
    p1, p2 = (n11 + n12) / n, (n11 + n21) / n

    def w(x: int) -> tuple[float, float]:
        p = x / n
        centre, half = p + z**2 / (2 * n), z * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
        return (centre - half) / (1 + z**2 / n), (centre + half) / (1 + z**2 / n)

    (l1, u1), (l2, u2) = w(n11 + n12), w(n11 + n21)
    big_a = (n11 + n12) * (n21 + n22) * (n11 + n21) * (n12 + n22)
    big_b = n11 * n22 - n12 * n21
    big_c = big_b - n / 2 if big_b > n / 2 else (big_b if big_b < 0 else 0)
    phi = big_c / math.sqrt(big_a) if big_a else 0.0
    d = p1 - p2
    lower = d - math.sqrt((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    upper = d + math.sqrt((p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2)
    return lower, upper


@pytest.mark.parametrize(
    "table", [(1, 1, 7, 12), (10, 15, 5, 20), (36, 12, 2, 0), (0, 0, 0, 40), (5, 0, 9, 6)]
)
def test_paired_interval_matches_an_independent_transcription(table: tuple[int, ...]) -> None:
    n11, n12, n21, n22 = table
    # Our orientation: baseline fails in n11 + n12, candidate in n11 + n21; difference c − b.
    diff, lower, upper = newcombe_paired(n11, n12, n21, n22, Z95)
    ref_lower, ref_upper = _paired_reference(n11, n12, n21, n22, Z95)
    assert diff == pytest.approx((n21 - n12) / sum(table))
    assert (lower, upper) == pytest.approx((-ref_upper, -ref_lower), abs=1e-12)


def test_mcnemar_exact_hand_worked() -> None:
    # 1 and 7 discordant pairs: 2 · (C(8,0) + C(8,1)) / 2^8 = 18/256.
    assert mcnemar_exact(1, 7) == pytest.approx(18 / 256)
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(5, 5) == 1.0


def test_wilson_hand_worked() -> None:
    # 1 of 5 at 95%: 0.0362 – 0.6245; 0 of 10: 0 – 0.2775 (Newcombe 1998, Table I, method 3).
    # 1 of 5 at 90% (z = 1.6449, z² = 2.7055), by hand: centre (0.2 + 0.27055) / 1.54110 =
    # 0.30533, half-width 1.6449 · sqrt(0.032 + 0.027055) / 1.54110 = 0.25938: 0.0460 – 0.5647.
    lower, upper = sql("wilson_lo(1, 5, ?), wilson_hi(1, 5, ?)", Z95, Z95)
    assert (round(lower, 4), round(upper, 4)) == (0.0362, 0.6245)
    lower, upper = sql("wilson_lo(0, 10, ?), wilson_hi(0, 10, ?)", Z95, Z95)
    assert (round(lower, 4), round(upper, 4)) == (0.0, 0.2775)
    z90 = NormalDist().inv_cdf(0.95)
    lower, upper = sql("wilson_lo(1, 5, ?), wilson_hi(1, 5, ?)", z90, z90)
    assert (round(lower, 4), round(upper, 4)) == (0.0460, 0.5647)
    # No failure (or all): the bound is exactly 0 (or 1), so `WHERE rate_lo > 0` finds none.
    for n in range(1, 200):
        assert sql("wilson_lo(0, ?, ?), wilson_hi(?, ?, ?)", n, Z95, n, n, Z95) == (0.0, 1.0)


def _drop_closes_when(corpus: Path, share: float) -> int:
    """Break BS-FORK-01 in a share of the sessions: delete every 'Closes when:' line."""
    files = sorted(corpus.glob("repo-*/docs/*/*/forks.md")) + sorted(
        corpus.glob("repo-*/docs/history/brainstorms/*/forks.md")
    )
    chosen = files[: int(len(files) * share)]
    for path in chosen:
        text = path.read_text()
        path.write_text(re.sub(r"(?m)^- Closes when:.*\n", "", text))
    return len(chosen)


@pytest.fixture(scope="module")
def replay(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("replay")
    baseline = generate_corpus(base / "baseline", 300, 11, 0.05)
    candidate = base / "candidate"
    shutil.copytree(baseline, candidate)
    assert _drop_closes_when(candidate, 0.4) > 50
    out = base / "out"
    crawl([str(baseline)], str(out), {"run": "baseline"}, workers=1)
    crawl([str(candidate)], str(out), {"run": "candidate"}, workers=1)
    check(str(out))
    return out


def test_a_raised_rule_is_the_only_regression(replay: Path) -> None:
    result = compare(str(replay), BASELINE, CANDIDATE)
    fork = next(r for r in result.rows if r.metric == "BS-FORK-01")
    assert fork.design == "paired", "same sessions: a paired comparison"
    assert fork.baseline.evaluated == fork.candidate.evaluated == 300
    regressed = {(r.metric, r.gate) for r in result.regressions}
    assert {m for m, _ in regressed} <= {"BS-FORK-01", "clean-share"}
    assert ("BS-FORK-01", "session") in regressed
    assert all(
        r.verdict in ("unchanged", "no sessions")
        for r in result.rows
        if r.metric.startswith("BS-") and r.metric != "BS-FORK-01"
    )
    ops = next(r for r in result.rows if r.metric == "BS-OPS-02")
    assert ops.verdict == "no sessions", "no git context: skipped everywhere, never 'unchanged'"


def test_the_median_difference_has_an_interval_at_the_family_level(replay: Path) -> None:
    result = compare(str(replay), BASELINE, CANDIDATE)
    row = next(r for r in result.rows if r.metric == MEDIAN)
    con = connect(Out(str(replay)))
    base, cand = (
        point_lifetime(con, resolve(con, None, arm.labels, checked=True))
        for arm in (BASELINE, CANDIDATE)
    )
    assert base.median is not None and cand.median is not None
    z = NormalDist().inv_cdf(1 - 0.05 / result.family_size / 2)
    for arm in (base, cand):
        # The stored band gives the summary's own 95% ends back (the curves are not thinned
        # here), and the family's level widens them.
        assert len(arm.curve) < CURVE_POINTS
        assert band_median(arm.curve, Z95) == (arm.median_lower, arm.median_upper)
        low, up = median_interval(arm, z)
        assert low is not None and arm.median_lower is not None and low <= arm.median_lower
        assert up is not None and arm.median_upper is not None and up >= arm.median_upper
    b_low, b_up = median_interval(base, z)
    c_low, c_up = median_interval(cand, z)
    assert b_low is not None and b_up is not None and c_low is not None and c_up is not None
    # The same forks in both arms (only Closes when lines were dropped): MOVER around d.
    difference = cand.median - base.median
    assert row.difference == pytest.approx(difference)
    below = math.hypot(cand.median - c_low, b_up - base.median)
    above = math.hypot(c_up - cand.median, base.median - b_low)
    assert (row.lower, row.upper) == pytest.approx((difference - below, difference + above))
    assert row.lower is not None and row.upper is not None and row.lower < 0 < row.upper
    assert row.verdict == "unchanged"


def test_a_point_compared_with_itself_is_refused_never_a_pass(replay: Path) -> None:
    """The candidate's crawl failed, so `--baseline run=baseline` alone took the latest point,
    the baseline itself, as the candidate: "0 regressions", exit 0 (found by a hunt)."""
    with pytest.raises(SelectorError, match="are both census point"):
        compare(str(replay), BASELINE, BASELINE)
    for selectors in (
        ["--baseline", "run=candidate"],
        ["--baseline-run", "latest", "--candidate-run", "latest"],
    ):
        done = runner.invoke(app, ["compare", "--out", str(replay), *selectors])
        assert done.exit_code == 2, (selectors, done.output)
        assert "the baseline and the candidate are both census point" in done.stderr


def test_each_arm_is_the_rule_rates_of_its_point_and_sarif_agrees(
    replay: Path, tmp_path: Path
) -> None:
    """One definition of a rate: compare's per-arm counts are rule_rates', row for row."""
    result = compare(str(replay), BASELINE, CANDIDATE)
    con = connect(Out(replay))
    for arm, point in (
        (lambda r: r.baseline, result.baseline),
        (lambda r: r.candidate, result.candidate),
    ):
        rates = {
            rule: (failed, evaluated, skipped)
            for rule, failed, evaluated, skipped in con.execute(
                "SELECT rule_id, failed, evaluated, skipped FROM rule_rates WHERE point = ?",
                [point.name],
            ).fetchall()
        }
        rows = {r.metric: (arm(r).count, arm(r).evaluated, arm(r).skipped) for r in result.rows}
        assert {k: rows[k] for k in rates} == rates
    sarif = tmp_path / "c.sarif"
    runner = CliRunner()
    args = ["compare", "--out", str(replay), "--baseline", "run=baseline"]
    runner.invoke(app, [*args, "--candidate", "run=candidate", "--sarif", str(sarif)])
    results = json.loads(sarif.read_text())["runs"][0]["results"]
    findings = con.execute(
        "SELECT count(*) FROM findings WHERE point = ?", [result.candidate.name]
    ).fetchone()[0]
    assert sum(r["baselineState"] != "absent" for r in results) == findings


def test_a_finding_whose_cited_line_moved_is_unchanged(tmp_path: Path) -> None:
    """A finding is the same in both arms when its session, rule, file and message are (lines
    move as files grow). BS-MANIFEST-01 cites `forks.md:N` and BS-FORK-01 a reused ID's first
    line in the message: one blank line above them made each finding absent and new."""
    out = tmp_path / "out"
    for arm in ("baseline", "candidate"):
        repo = copy_tree(FIXTURES / "example" / "acme-checkout", tmp_path / arm / "acme-checkout")
        forks = repo / "docs" / "research" / "guest-checkout-brainstorm" / "forks.md"
        text = (
            forks.read_text()
            + "\n## F2 — Asked again [open]\n- Raised by: user\n- Closes when: x\n"
        )
        if arm == "candidate":
            text = text.replace("# Forks\n", "# Forks\n\n", 1)
        forks.write_text(text)
        crawl([str(tmp_path / arm)], str(out), {"run": arm}, workers=1)
    check(str(out))
    sarif = tmp_path / "c.sarif"
    args = ["--baseline", "run=baseline", "--candidate", "run=candidate", "--sarif", str(sarif)]
    assert runner.invoke(app, ["compare", "--out", str(out), *args]).exit_code == 0
    results = json.loads(sarif.read_text())["runs"][0]["results"]
    cited = {r["ruleId"] for r in results if re.search(r"\.md:\d|line \d", r["message"]["text"])}
    assert cited == {"BS-MANIFEST-01", "BS-FORK-01"}
    assert {r["baselineState"] for r in results} == {"unchanged"}


def test_compare_cli_exit_codes_and_json(replay: Path, tmp_path: Path) -> None:
    runner = CliRunner()

    def compare_args(baseline: str, candidate: str) -> list[str]:
        return ["compare", "--out", str(replay), "--baseline", baseline, "--candidate", candidate]

    args = compare_args("run=baseline", "run=candidate")
    text = runner.invoke(app, args)
    assert text.exit_code == 1 and "regression" in text.output and "BS-FORK-01" in text.output
    sarif = tmp_path / "c.sarif"
    as_json = runner.invoke(app, [*args, "--json", "--sarif", str(sarif)])
    doc = json.loads(as_json.output)
    assert doc["counts"]["regression"] >= 1 and doc["rows"][0]["verdict"] == "regression"
    states = {r["baselineState"] for r in json.loads(sarif.read_text())["runs"][0]["results"]}
    assert "new" in states
    same = runner.invoke(app, compare_args("run=baseline", "run=baseline"))
    assert same.exit_code == 2 and "are both census point" in same.stderr
    bad = runner.invoke(app, compare_args("run=nope", "run=candidate"))
    assert bad.exit_code == 2 and len(bad.output.strip().splitlines()) == 1
    assert "run=baseline" in bad.output and "run=candidate" in bad.output, (
        "names the labels that exist"
    )


ROW_START = re.compile(r"^ ?(BS-|CENSUS-|clean-share|fork-median-hours|all forks|closed: )")


@pytest.mark.parametrize("columns", ["60", "80", "120"])
def test_a_narrow_terminal_shows_every_value_whole(replay: Path, columns: str) -> None:
    """compare's and stats' tables at a terminal's width: every cell the wide table shows is
    shown whole (at 80 columns compare cropped '11/245 4.5%' to '11/245 4' and 'regression' to
    'regres'), and no row is wider than the terminal."""
    for args in (
        [
            "compare",
            "--out",
            str(replay),
            "--baseline",
            "run=baseline",
            "--candidate",
            "run=candidate",
        ],
        ["stats", "--out", str(replay), "--label", "run=candidate"],
    ):
        wide = runner.invoke(app, args, env={"COLUMNS": "400"}).stdout
        rows = [line for line in wide.splitlines() if ROW_START.match(line)]
        cells = {cell for row in rows for cell in re.split(r"\s{2,}", row.strip())}
        assert len(rows) >= 20 and ("regression" in cells or args[0] == "stats")
        narrow = runner.invoke(app, args, env={"COLUMNS": columns}).stdout
        shown = [line for line in narrow.splitlines() if ROW_START.match(line)]
        assert max(len(line.rstrip()) for line in shown) <= int(columns)
        cut = [c for c in cells if not re.search(rf"(?<!\S){re.escape(c)}(?!\S)", narrow)]
        assert cut == [], f"{args[0]} at {columns} columns"


def test_a_sarif_that_cannot_be_written_warns_and_keeps_the_regression_exit(
    replay: Path, small_disk: Path
) -> None:
    """The verdict is printed whole, then the SARIF file meets a full disk: exit 2 said the
    comparison was unusable after it was shown; as check does, it warns and exits 1."""
    sarif = small_disk / "c.sarif"
    fill(small_disk)
    args = ["--baseline", "run=baseline", "--candidate", "run=candidate", "--sarif", str(sarif)]
    for extra in ([], ["--json"]):
        result = runner.invoke(app, ["compare", "--out", str(replay), *args, *extra])
        assert result.exit_code == 1, result.output
        assert "BS-FORK-01" in result.stdout
        assert result.stderr.splitlines()[-1] == (
            f"census: warning: the comparison stands, but {sarif} could not be written (no "
            f"space left on the device holding {sarif})"
        ), result.stderr
    assert [p.name for p in small_disk.iterdir()] == ["filler"]


def test_an_arm_not_checked_yet_is_refused_never_read_as_no_sessions(
    replay: Path, tmp_path: Path
) -> None:
    """Its rates do not exist yet: read as "no sessions", a regression would pass the gate."""
    out = tmp_path / "out"
    shutil.copytree(replay, out)
    crawled = Path(str(connect(Out(out)).execute("SELECT roots[1] FROM runs").fetchone()[0]))
    crawl([str(crawled)], str(out), {"run": "late"}, workers=1)
    runner = CliRunner()
    args = ["--out", str(out), "--baseline", "run=baseline", "--candidate", "run=late"]
    refused = runner.invoke(app, ["compare", *args])
    assert refused.exit_code == 2, refused.output
    assert "not checked yet" in refused.output and len(refused.output.strip().splitlines()) == 1
    late = resolve(connect(Out(out))).name
    for command in (["stats"], ["report", "--html", str(tmp_path / "r.html")]):
        named = runner.invoke(app, [*command, "--out", str(out), "--run", late])
        assert named.exit_code == 2 and "not checked yet" in named.output, named.output
    assert runner.invoke(app, ["check", "--out", str(out)]).exit_code == 0
    assert runner.invoke(app, ["compare", *args]).exit_code in (0, 1)


def test_a_candidate_that_saw_no_session_fails_compare_as_it_fails_the_night(
    replay: Path, tmp_path: Path
) -> None:
    """Every row of an empty candidate reads "no sessions", which no test flags: compare
    exited 0 where `check --fail-on-regression` trips on the same two points."""
    out = tmp_path / "out"
    shutil.copytree(replay, out)
    empty = tmp_path / "empty"
    empty.mkdir()
    crawl([str(empty)], str(out), {"run": "empty"}, workers=1)
    runner = CliRunner()
    assert runner.invoke(app, ["check", "--out", str(out)]).exit_code == 0
    args = ["compare", "--out", str(out), "--baseline", "run=baseline", "--candidate", "run=empty"]
    result = runner.invoke(app, args)
    assert result.exit_code == 1, result.output
    assert "saw no session, where the baseline" in result.output
    doc = json.loads(runner.invoke(app, [*args, "--json"]).output)
    assert doc["emptied"] > 0 and doc["counts"]["regression"] == 0
    night = runner.invoke(app, ["check", "--out", str(out), "--fail-on-regression"])
    assert night.exit_code == 1 and "saw no session" in night.stderr
    # The arms the other way round: an empty baseline compares nothing, and exits 1 too.
    swapped = [
        "compare",
        "--out",
        str(out),
        "--baseline",
        "run=empty",
        "--candidate",
        "run=baseline",
    ]
    result = runner.invoke(app, swapped)
    assert result.exit_code == 1, result.output
    assert "the baseline" in result.output and "saw no session" in result.output
    assert "nothing was compared" in result.output
    doc = json.loads(runner.invoke(app, [*swapped, "--json"]).output)
    assert doc["baseless"] > 0 and doc["emptied"] == 0


def test_two_arms_that_saw_no_session_compare_nothing_and_fail(tmp_path: Path) -> None:
    """Two replays that wrote nothing: every row reads "no sessions", which no test flags.
    One empty arm exits 1 ("nothing was compared"); both empty exited 0 with no word (found
    by a hunt), an eval gate's pass on no evidence at all."""
    out = tmp_path / "out"
    for arm in ("baseline", "candidate"):
        (tmp_path / arm).mkdir()
        crawl([str(tmp_path / arm)], str(out), {"run": arm}, workers=1)
    assert runner.invoke(app, ["check", "--out", str(out)]).exit_code == 0
    args = ["compare", "--out", str(out), "--baseline", "run=baseline", "--candidate"]
    result = runner.invoke(app, [*args, "run=candidate"])
    assert result.exit_code == 1, result.output
    assert "saw a session: nothing was compared" in result.output
    doc = json.loads(runner.invoke(app, [*args, "run=candidate", "--json"]).output)
    assert doc["unseen"] is True and doc["emptied"] == doc["baseless"] == 0
    html = tmp_path / "report.html"
    arms = ["--baseline", "run=baseline", "--candidate", "run=candidate"]
    shown = runner.invoke(app, ["report", "--out", str(out), "--html", str(html), *arms])
    assert shown.exit_code == 0, shown.output  # the report's exit reads the alarms asked for
    assert "Neither the baseline nor the candidate saw a session" in html.read_text()


def test_fail_on_regression_and_the_trend(replay: Path, tmp_path: Path) -> None:
    from pipeline.stats import compute

    runner = CliRunner()
    worse = runner.invoke(app, ["check", "--out", str(replay), "--fail-on-regression"])
    assert worse.exit_code == 1
    assert "census: BS-FORK-01 regressed from" in worse.stderr
    assert "ALARM" in worse.stdout and "BS-FORK-01" in worse.stdout.splitlines()[-1]
    trend_points = {t.point for t in compute(str(replay)).trend}
    assert len(trend_points) == 2, "both points are in the trend"
    steady = tmp_path / "steady"
    corpus = generate_corpus(tmp_path / "corpus", 60, 5, 0.1)
    crawl([str(corpus)], str(steady), workers=1)
    crawl([str(corpus)], str(steady), workers=1)
    same = runner.invoke(app, ["check", "--out", str(steady), "--fail-on-regression"])
    assert same.exit_code == 0 and "regressed since" in same.output and same.stderr == ""


def test_a_night_sharing_no_session_with_the_last_says_so_and_keeps_its_exit_code(
    tmp_path: Path,
) -> None:
    """Every repository renamed overnight: the regression test compares two populations
    (two-sample, spec §9, so the exit code stays 0), and the night says so on its closing line,
    on stderr and in --json, where it said only 'no alarm … regressed since …: none'."""
    corpus = generate_corpus(tmp_path / "a", 12, 5, 0.1)
    moved = tmp_path / "b"
    moved.mkdir()
    for repo in corpus.glob("repo-*"):
        shutil.copytree(repo, moved / f"x-{repo.name}")
    out = tmp_path / "out"
    crawl([str(corpus)], str(out), point="night-1", workers=1)
    check(str(out))
    crawl([str(moved)], str(out), point="night-2", workers=1)
    args = ["check", "--out", str(out), "--fail-on-regression"]
    apart = runner.invoke(app, args)
    assert apart.exit_code == 0, apart.output
    closing = apart.stdout.strip().splitlines()[-1]
    wanted = "no alarm at night-2; regressed since night-1 (night-2 shares no session with it)"
    assert closing == wanted + ": none"
    assert apart.stderr.startswith("census: note: census point night-2 shares no session with ")
    assert json.loads(runner.invoke(app, [*args, "--json"]).stdout)["no_session_in_common"]
    crawl([str(moved)], str(out), point="night-3", workers=1)
    same = runner.invoke(app, args)
    assert same.exit_code == 0 and same.stderr == "" and "shares" not in same.stdout


def test_generated_replay_flags_the_raised_rule_only(tmp_path: Path) -> None:
    from pipeline.bench import replay_pair

    result = replay_pair(tmp_path, 300, 4, 0.05, {"BS-SYNC-02": 0.5})
    assert {r.design for r in result.rows if r.metric == "BS-FORK-01"} == {"paired"}
    rules = {r.metric for r in result.regressions} - {"clean-share"}
    assert rules == {"BS-SYNC-02"}


def test_same_rates_flag_nothing_in_most_replays(tmp_path: Path) -> None:
    # The benchmark runs 100 of these (python -m pipeline.bench null); the suite runs 8.
    from pipeline.bench import null_replays

    result = null_replays(tmp_path, 8, 150, 0.1)
    assert result["flagged"] <= 1, result["examples"]


def test_report_shows_the_comparison(replay: Path, tmp_path: Path) -> None:
    from pipeline.report import build

    page = build(
        str(replay), str(tmp_path / "r.html"), baseline=BASELINE, candidate=CANDIDATE
    ).path.read_text()
    assert 'id="compare"' in page and "Did the candidate regress" in page
    assert "BS-FORK-01" in page.split('id="compare"', 1)[1].split("</section>", 1)[0]
    assert ">regression<" in page


def test_one_session_in_one_arm_only_makes_the_comparison_two_sample(tmp_path: Path) -> None:
    """Paired only when the arms hold the same sessions: one session more in the candidate
    (same repository paths otherwise, so the rest match by session_key) is two-sample."""
    from tests.conftest import base_corpus

    base_corpus(tmp_path / "baseline", 4)
    base_corpus(tmp_path / "candidate", 5)
    out = tmp_path / "out"
    crawl([str(tmp_path / "baseline")], str(out), {"run": "baseline"}, workers=1)
    crawl([str(tmp_path / "candidate")], str(out), {"run": "candidate"}, workers=1)
    check(str(out))
    rows = {r.metric: r for r in compare(str(out), BASELINE, CANDIDATE).rows}
    # repo-04 is open, so every session-gate rule sees 4 sessions against 5.
    fork = rows["BS-FORK-01"]
    assert (fork.baseline.evaluated, fork.candidate.evaluated) == (4, 5)
    assert fork.design == "two-sample"
    same = _baseline_against_itself(out).rows
    assert {r.design for r in same if r.metric == "BS-FORK-01"} == {"paired"}


def _baseline_against_itself(out: Path) -> Comparison:
    """The statistics of the baseline's point against itself (compare refuses the pair)."""
    con = connect(Out(out))
    point = resolve(con, None, BASELINE.labels, checked=True)
    return between(con, point, point)


def _unequal_arms(
    tmp_path: Path, baseline: int, candidate: int, lost: tuple[str, ...] = ()
) -> tuple[str, dict[str, Any], str]:
    """Compare's text, its --json and the report's text for arms of `baseline` and
    `candidate` generated sessions, the candidate without the repositories in `lost`."""
    from tests.conftest import base_corpus

    base_corpus(tmp_path / "baseline", baseline)
    base_corpus(tmp_path / "candidate", candidate)
    for repo in lost:
        shutil.rmtree(tmp_path / "candidate" / repo)
    out = tmp_path / "out"
    crawl([str(tmp_path / "baseline")], str(out), {"run": "baseline"}, workers=1)
    crawl([str(tmp_path / "candidate")], str(out), {"run": "candidate"}, workers=1)
    check(str(out))
    arms = ["--baseline", "run=baseline", "--candidate", "run=candidate"]
    args = ["compare", "--out", str(out), *arms]
    text = CliRunner().invoke(app, args).output
    doc = json.loads(CliRunner().invoke(app, [*args, "--json"]).output)
    page = tmp_path / "report.html"
    reported = CliRunner().invoke(app, ["report", "--out", str(out), *arms, "--html", str(page)])
    assert reported.exit_code == 0, reported.output
    return text, doc, " ".join(page.read_text().split())


def test_a_candidate_that_lost_sessions_says_how_many_it_holds_not(tmp_path: Path) -> None:
    """A replay that wrote 3 of the baseline's 5 sessions was compared on the 3 with no word
    that 2 were missing: the lost sessions may be the ones the candidate broke."""
    text, doc, page = _unequal_arms(tmp_path, 5, 6, ("repo-01", "repo-03"))
    assert "2 sessions of the baseline" in text, text
    assert "are not in the candidate" in text
    assert (doc["baseline_only"], doc["candidate_only"]) == (2, 1)
    # The report's compare view said nothing of them, where compare's summary line names them.
    # They count in the baseline's rates (rule_rates of its point): "not compared" was false.
    lost = "2 sessions of the baseline are not in the candidate: they count in the baseline's"
    assert lost in page and "not compared" not in page
    assert "not compared" not in text and "count in the baseline's rates" in text
    # The one session of the candidate alone is one: "they count … the rows they enter" was
    # said of it (found by a hunt).
    one = "it counts in the candidate's rates, and the rows it enters are two-sample"
    assert one in " ".join(text.split()) and one in page, text
    same = _baseline_against_itself(tmp_path / "out")
    assert same.baseline_only == same.candidate_only == 0


def test_a_candidate_with_sessions_the_baseline_lacks_says_how_many(tmp_path: Path) -> None:
    """A replay run on 6 sessions against a baseline of 4 was compared two-sample with no word
    of the 2 extra ones in the summary line or the report (only --json counted them): the
    arms did not replay the same sessions, which a reader of the verdict must see."""
    text, doc, page = _unequal_arms(tmp_path, 4, 6)
    summary = text.splitlines()[-1]
    assert "2 sessions of the candidate" in summary, summary
    assert "are not in the baseline" in summary
    assert "sessions of the baseline" not in summary
    assert (doc["baseline_only"], doc["candidate_only"]) == (0, 2)
    extra = "2 sessions of the candidate are not in the baseline: they count in the candidate's"
    assert extra in page and "not compared" not in page
    assert "not compared" not in summary and "count in the candidate's rates" in summary
    assert "of the baseline are not in the candidate" not in page


def test_each_arm_counts_its_sessions_as_the_rates_do(tmp_path: Path) -> None:
    """Two roots of one arm with the same layout give sessions with the same session_key
    (spec §2); compare counts each of them, as statuses and rule_rates do, and pairs none."""
    from tests.conftest import base_corpus

    for arm in ("b1", "b2", "c1", "c2"):
        base_corpus(tmp_path / arm, 3)
    out = tmp_path / "out"
    crawl([str(tmp_path / "b1"), str(tmp_path / "b2")], str(out), {"run": "baseline"}, workers=1)
    crawl([str(tmp_path / "c1"), str(tmp_path / "c2")], str(out), {"run": "candidate"}, workers=1)
    check(str(out))
    con = connect(Out(out))
    point = resolve(con, None, {"run": "baseline"}).name
    counted = dict(
        con.execute(
            "SELECT rule_id, count(*) FROM statuses WHERE point = ? AND own "
            "AND is_evaluated(status) GROUP BY rule_id",
            [point],
        ).fetchall()
    )
    rows = {r.metric: r for r in compare(str(out), BASELINE, CANDIDATE).rows}
    assert counted["BS-FORK-01"] == 6
    for rule, evaluated in counted.items():
        assert (rows[rule].baseline.evaluated, rows[rule].candidate.evaluated) == (evaluated,) * 2
        assert rows[rule].design == "two-sample"


def test_a_candidate_median_never_reached_beyond_the_baselines_interval_regresses() -> None:
    """Baseline forks close in 0.1 h; 39 of 40 candidate forks are still open after 52.3 h.
    The candidate's median and its interval's lower end are never reached, so both lie beyond
    52.3 h: the difference is at least 52.3 − 0.1 h, a regression (it was 'unchanged')."""
    from pipeline.stats import CurvePoint, Lifetime

    base = Lifetime(40, 40, 40, median=0.1, median_lower=0.1, median_upper=0.1)
    step = CurvePoint(52.3, 40, 1, 39, 0.975, 0.85, 0.996)
    cand = Lifetime(40, 40, 1, censored=39, curve=(CurvePoint(0.5, 40, 0, 0, 1, 1, 1), step))
    row = median_row(base, cand)
    assert row.difference is None and row.upper is None
    assert row.lower == pytest.approx(52.2)
    assert row.verdict == "regression"
    # And the other way round an improvement, never 'unchanged'.
    assert median_row(cand, base).verdict == "improvement"
    from pipeline.compare_text import median_text

    assert (median_text(row.baseline), median_text(row.candidate)) == ("0.1 h", "not reached")


def _arm(hours: float | list[float], forks: int = 0) -> Lifetime:
    """An arm whose forks all close at `hours` (one time for `forks` forks, or a time each),
    estimated by the SQL macros (tests/test_stats)."""
    from pipeline.stats import CURVE_COLUMNS, CurvePoint
    from tests.test_stats import km

    times = hours if isinstance(hours, list) else [hours] * forks
    forks = len(times)
    steps, summary = km(times, [True] * forks)
    curve = tuple(CurvePoint(*(s[c] for c in CURVE_COLUMNS)) for s in steps)
    ends = {k: summary[k] for k in ("median", "median_lower", "median_upper")}
    return Lifetime(forks, forks, forks, **ends, curve=curve)


def test_two_forks_per_arm_closing_together_are_noise_not_a_regression() -> None:
    """Each arm's curve falls to 0 at its median's step. Greenwood's band there is [0, 0], so
    each median's interval was a point and 1 h against 2 h was a regression "beyond noise";
    the exact bound where a curve falls to 0 leaves it unchanged. Forty forks a side are
    evidence, and stay a regression, at the family's level too."""
    row = median_row(_arm(1.0, 2), _arm(2.0, 2))
    assert row.difference == 1.0 and row.upper is None
    assert row.verdict == "unchanged"
    family = NormalDist().inv_cdf(1 - 0.05 / 21 / 2)
    assert median_row(_arm(0.1, 40), _arm(5.0, 40), family).verdict == "regression"


def test_ten_forks_a_side_all_closed_far_apart_are_a_regression_at_the_family_level() -> None:
    """Baseline forks close after 1…10 h, the candidate's after 30…39 h. At the family's level
    the log-log band before the last close is still above 0.5 and one fork is at risk there;
    the bound for no survivor of one fork kept the baseline median's upper end unreached, so
    a shift of a day read 'unchanged'. Peto's effective size (ten forks, none censored) makes
    the exact bound the order statistic's: all ten below the median has chance 2^-10, under
    the family's one-sided miss, so the upper end is 10 h."""
    family = NormalDist().inv_cdf(1 - 0.05 / 21 / 2)
    base = _arm([float(h) for h in range(1, 11)])
    cand = _arm([float(h) for h in range(30, 40)])
    row = median_row(base, cand, family)
    assert row.verdict == "regression" and row.lower is not None and row.lower > 0
    # With eight forks a side all eight below the median has chance 2^-8, above the miss:
    # the upper end stays unreached and the shift is not shown beyond noise.
    eight = median_row(_arm([float(h) for h in range(1, 9)]), _arm([30.0] * 8), family)
    assert eight.verdict == "unchanged"


def test_one_fork_against_ten_is_noise_not_a_regression() -> None:
    """Before any close Greenwood's band is [1, 1], so one candidate fork closing at 50 h put
    its median's lower end at 50 h, and ten baseline forks closing after 1…10 h read as a
    regression "beyond noise" against a single fork. The exact bound for every fork at risk
    surviving leaves one fork's median anywhere from 0 h: unchanged, at 95% and at the
    family's level."""
    family = NormalDist().inv_cdf(1 - 0.05 / 21 / 2)
    base = _arm([float(h) for h in range(1, 11)])
    for z in (Z95, family):
        row = median_row(base, _arm([50.0]), z)
        assert (row.difference, row.verdict) == (45.0, "unchanged"), z
    # Forty candidate forks closing at 50 h are evidence, and stay a regression.
    assert median_row(base, _arm(50.0, 40), family).verdict == "regression"


def test_a_median_difference_unbounded_both_ways_reads_as_such(tmp_path: Path) -> None:
    """Two arms whose medians are reached but whose family-level median intervals reach no
    upper end have a difference bounded on neither side. Compare's text and the report showed
    its interval as '–', the mark of a metric an arm never measured, beside a difference of
    0.0 h; it is '-∞ … +∞': the medians were measured and say nothing at this level."""
    baseline = generate_corpus(tmp_path / "baseline", 40, 7, 0.05, "--defect-seed", "1")
    shutil.copytree(baseline, tmp_path / "candidate")
    out = tmp_path / "out"
    for arm in ("baseline", "candidate"):
        crawl([str(tmp_path / arm)], str(out), {"run": arm}, workers=1)
    check(str(out))
    arms = ["--baseline", "run=baseline", "--candidate", "run=candidate"]
    doc = json.loads(runner.invoke(app, ["compare", "--out", str(out), *arms, "--json"]).stdout)
    (median,) = [r for r in doc["rows"] if r["metric"] == MEDIAN]
    assert median["difference"] == 0.0 and median["lower"] is median["upper"] is None, median
    text = runner.invoke(app, ["compare", "--out", str(out), *arms]).stdout
    (line,) = [x for x in text.splitlines() if MEDIAN in x]
    assert line.split()[-3:] == ["-∞", "…", "+∞"], line
    assert next(x for x in text.splitlines() if "BS-OPS-02" in x).split()[-2:] == ["–", "–"]
    page = tmp_path / "report.html"
    reported = runner.invoke(app, ["report", "--out", str(out), *arms, "--html", str(page)])
    assert reported.exit_code == 0, reported.output
    row = page.read_text().split(f'data-metric="{MEDIAN}"')[1].split("</tr>")[0]
    assert row.rstrip().endswith("-∞ … +∞</td>"), row


def test_an_arm_crawled_as_two_points_says_what_it_left_out(tmp_path: Path) -> None:
    """An arm chosen by labels is its latest census point: a baseline crawled in two separate
    crawls (no shared --point) was silently its second half. Compare names what it left
    out on stderr; one --point for both crawls counts them together, with no note."""
    corpus = generate_corpus(tmp_path / "c", 40, 3, 0.1)
    halves = sorted(str(p) for p in corpus.iterdir() if p.is_dir())
    out = tmp_path / "out"
    for half in (halves[: len(halves) // 2], halves[len(halves) // 2 :]):
        crawl(half, str(out), {"run": "baseline"}, workers=1)
    crawl([str(corpus)], str(out), {"run": "candidate"}, workers=1)
    check(str(out))
    args = ["compare", "--out", str(out), "--baseline", "run=baseline"]
    done = CliRunner().invoke(app, [*args, "--candidate", "run=candidate"])
    chosen = resolve(connect(Out(out)), None, {"run": "baseline"}, checked=True)
    assert f"note: the baseline is census point {chosen.name} alone;" in done.stderr
    assert "not counted" in done.stderr and "candidate is" not in done.stderr
    assert "also carries run=baseline and is not counted" in done.stderr, "one point left out"
    # A gate that reads --json alone sees the same notes there.
    doc = json.loads(
        CliRunner().invoke(app, [*args, "--candidate", "run=candidate", "--json"]).stdout
    )
    assert doc["notes"] == [n for n in done.stderr.splitlines() if n.startswith("note:")]
    assert len(doc["notes"]) == 1
    # The report's comparison of the same arms says so too, on stderr and on its page.
    page = tmp_path / "report.html"
    arms = ["--baseline", "run=baseline", "--candidate", "run=candidate", "--html", str(page)]
    reported = CliRunner().invoke(app, ["report", "--out", str(out), *arms])
    assert reported.exit_code == 0, reported.output
    assert f"note: the baseline is census point {chosen.name} alone;" in reported.stderr
    assert "also carries run=baseline and is not counted" in page.read_text()
    together = tmp_path / "together"
    for half in (halves[: len(halves) // 2], halves[len(halves) // 2 :]):
        crawl(half, str(together), {"run": "baseline"}, workers=1, point="base")
    crawl([str(corpus)], str(together), {"run": "candidate"}, workers=1)
    check(str(together))
    args = ["compare", "--out", str(together), "--baseline", "run=baseline"]
    quiet = CliRunner().invoke(app, [*args, "--candidate", "run=candidate"])
    assert quiet.stderr == "", quiet.stderr


def test_a_candidate_alone_is_compared_with_the_point_before_it(tmp_path: Path) -> None:
    """`compare --candidate-run n2` took the point before the *latest* as the baseline: with
    n3 crawled after n2, that was n2 itself, and a real regression exited 0."""
    good = generate_corpus(tmp_path / "good", 40, 9, 0.0)
    bad = tmp_path / "bad"
    shutil.copytree(good, bad)
    assert _drop_closes_when(bad, 0.5) > 5
    out = str(tmp_path / "out")
    for point, root in (("n1", good), ("n2", bad), ("n3", good)):
        crawl([str(root)], out, point=point, workers=1)
    check(out)
    alone = runner.invoke(app, ["compare", "--out", out, "--candidate-run", "n2", "--json"])
    named = ["--baseline-run", "n1", "--candidate-run", "n2", "--json"]
    explicit = runner.invoke(app, ["compare", "--out", out, *named])
    assert alone.exit_code == explicit.exit_code == 1, alone.output
    assert json.loads(alone.stdout) == json.loads(explicit.stdout)
    first = runner.invoke(app, ["compare", "--out", out, "--candidate-run", "n1"])
    assert first.exit_code == 2
    assert "no checked census point before 'n1'" in first.output


def test_a_previous_baseline_with_labels_is_the_point_before_the_candidate(
    tmp_path: Path,
) -> None:
    """`--baseline-run previous` is the point before the candidate, as without labels: with
    `--baseline env=prod`, which every point carries, it was the one before the latest, a
    point after the candidate (found by a hunt)."""
    corpus = generate_corpus(tmp_path / "corpus", 12, 4, 0.1)
    out = str(tmp_path / "out")
    for point in ("n1", "n2", "n3", "n4"):
        crawl([str(corpus)], out, {"env": "prod"}, point=point, workers=1)
    check(out)
    arms = ["compare", "--out", out, "--candidate-run", "n2", "--baseline-run", "previous"]
    for extra in ([], ["--baseline", "env=prod"]):
        done = runner.invoke(app, [*arms, *extra, "--json"])
        assert done.exit_code == 0, done.output
        assert json.loads(done.stdout)["baseline"]["point"] == "n1", extra
    lone = runner.invoke(app, [*arms[:-2], "--baseline-run", "previous", "--baseline", "env=dev"])
    assert lone.exit_code == 2
    assert "no checked census point before 'n2' carrying env=dev" in lone.stderr


def test_a_key_held_under_two_roots_pairs_by_root_as_the_report_pairs_it(tmp_path: Path) -> None:
    """Two clones of one repository, crawled each night: every session key is held twice.
    Compare counted such sessions unpaired (a two-sample test) while the report matched them
    by root night to night; both now match as same_session does, so the nights are paired."""
    roots = [tmp_path / "clone-a", tmp_path / "clone-b"]
    for root in roots:
        shutil.copytree(FIXTURES / "example" / "orbit-api", root / "orbit-api")
    out = str(tmp_path / "out")
    crawl([str(r) for r in roots], out, workers=1, point="night-1")
    state = roots[0] / "orbit-api/docs/research/pagination-brainstorm/state.md"
    state.write_text(state.read_text().replace("- Status:", "- Status: maybe", 1))
    crawl([str(r) for r in roots], out, workers=1, point="night-2")
    check(out)
    result = compare(out, Selector(run="night-1"), Selector(run="night-2"))
    rows = {r.metric: r for r in result.rows}
    assert rows["BS-STATE-01"].design == "paired"
    assert (rows["BS-STATE-01"].baseline.count, rows["BS-STATE-01"].candidate.count) == (0, 1)
    assert rows["clean-share"].design == "paired"


def test_a_rule_every_session_skipped_shows_its_skipped_counts_and_no_design(
    replay: Path, tmp_path: Path
) -> None:
    """BS-OPS-02 needs git context, which no session of the replay has: compare read "no
    sessions" with no skipped count (spec §7 shows it beside every rate) and called the row
    "two-sample", a design no test was run with. Text, --json and the report agree."""
    arms = ["--baseline", "run=baseline", "--candidate", "run=candidate"]
    text = runner.invoke(app, ["compare", "--out", str(replay), *arms]).output
    row = next(line for line in text.splitlines() if "BS-OPS-02" in line).split()
    assert row[:2] == ["BS-OPS-02", "no"] and "two-sample" not in row, row
    assert row[row.index("sessions") + 1] == "–" and "300 / 300" in " ".join(row), row
    doc = json.loads(runner.invoke(app, ["compare", "--out", str(replay), *arms, "--json"]).output)
    ops = next(r for r in doc["rows"] if r["metric"] == "BS-OPS-02")
    assert ops["design"] is None
    assert ops["baseline"]["skipped"] == ops["candidate"]["skipped"] == 300
    fork = next(r for r in doc["rows"] if r["metric"] == "BS-FORK-01")
    assert fork["design"] == "paired" and fork["baseline"]["skipped"] == 0
    page = tmp_path / "r.html"
    runner.invoke(app, ["report", "--out", str(replay), *arms, "--html", str(page)])
    view = page.read_text().split('id="compare"', 1)[1].split("</section>", 1)[0]
    cells = re.findall(r"<td[^>]*>(.*?)</td>", view.split('data-metric="BS-OPS-02"')[1])[:5]
    assert cells[2] == "–" and "two-sample" not in cells, cells
    assert "300 / 300" in view.split('data-metric="BS-OPS-02"')[1].split("</tr>")[0]


def test_an_interval_end_that_excludes_zero_never_reads_as_zero(tmp_path: Path) -> None:
    """20 sessions, 8 newly failing BS-FORK-01 and none fixed: Newcombe's paired lower end at
    the family level is +0.0013%, so the verdict is a regression; printed to one decimal it
    read '0.0% … +70.9%', an interval touching zero beside 'regression' (found by a hunt)."""
    from tests.conftest import base_corpus

    base_corpus(tmp_path / "baseline", 20)
    copy_tree(tmp_path / "baseline", tmp_path / "candidate")
    forks = sorted((tmp_path / "candidate").glob("repo-*/docs/**/forks.md"))
    broken = [p for p in forks if "Closes when" in p.read_text()][:8]
    assert len(broken) == 8
    for path in broken:
        path.write_text(re.sub(r"(?m)^- Closes when:.*\n", "", path.read_text()))
    out = tmp_path / "out"
    crawl([str(tmp_path / "baseline")], str(out), {"run": "baseline"}, workers=1)
    crawl([str(tmp_path / "candidate")], str(out), {"run": "candidate"}, workers=1)
    check(str(out))
    rows = {r.metric: r for r in compare(str(out), BASELINE, CANDIDATE).rows}
    fork, clean = rows["BS-FORK-01"], rows["clean-share"]
    assert fork.verdict == clean.verdict == "regression"
    assert 0 < fork.lower < 0.0005 and -0.0005 < clean.upper < 0  # type: ignore[operator]
    args = ["compare", "--out", str(out), "--baseline", "run=baseline"]
    shown = runner.invoke(app, [*args, "--candidate", "run=candidate"]).output
    fork_line = next(line for line in shown.splitlines() if "BS-FORK-01" in line)
    clean_line = next(line for line in shown.splitlines() if "clean-share" in line)
    assert "+0.001% … +70.9%" in fork_line, fork_line
    assert "-70.9% … -0.001%" in clean_line, clean_line
    alarm = runner.invoke(app, ["check", "--out", str(out), "--fail-on-regression", "rules"])
    assert "(+0.001% … +70.9%)" in alarm.output, alarm.output


def test_difference_interval_ends_read_apart_from_zero() -> None:
    from pipeline.textout import difference_interval

    assert difference_interval(1.3e-5, 0.709) == "+0.001% … +70.9%"
    assert difference_interval(-0.709, -2e-7) == "-70.9% … -0.00002%"
    assert difference_interval(-1e-5, 0.2) == "-0.001% … +20.0%"
    assert difference_interval(0.0, 0.2) == "0.0% … +20.0%"
    assert difference_interval(0.004, 3.0, hours=True) == "+0.004 h … +3.0 h"
    assert difference_interval(0.25, None, hours=True) == "+0.2 h … +∞"


def test_a_median_with_no_fork_in_an_arm_says_no_forks_not_no_sessions(tmp_path: Path) -> None:
    """A candidate of the same sessions with every fork gone (forks.md emptied) showed the
    median row's verdict as 'no sessions' and the summary '2 with no sessions' (the report:
    '2 metrics with no sessions in an arm') while both arms held every session; the row now
    says 'no forks' and is counted so (found by a hunt)."""
    from tests.conftest import base_corpus

    base_corpus(tmp_path / "baseline", 4)
    copy_tree(tmp_path / "baseline", tmp_path / "candidate")
    for path in (tmp_path / "candidate").glob("repo-*/docs/**/forks.md"):
        path.write_text("# Forks\n")
    for path in (tmp_path / "candidate").glob("repo-*/docs/**/ledger.md"):
        path.write_text(re.sub(r"(?m)^- Resolves:.*\n", "", path.read_text()))
    out = tmp_path / "out"
    crawl([str(tmp_path / "baseline")], str(out), {"run": "baseline"}, workers=1)
    crawl([str(tmp_path / "candidate")], str(out), {"run": "candidate"}, workers=1)
    check(str(out))
    result = compare(str(out), BASELINE, CANDIDATE)
    median = next(r for r in result.rows if r.metric == MEDIAN)
    assert median.baseline.evaluated > 0 and median.candidate.evaluated == 0
    assert median.verdict == "no forks" and median.design is None
    sessions = [r for r in result.rows if r.verdict == "no sessions"]
    assert result.counts()["no sessions"] == len(sessions)
    assert result.counts()["no forks"] == 1
    arms = ["--baseline", "run=baseline", "--candidate", "run=candidate"]
    shown = runner.invoke(app, ["compare", "--out", str(out), *arms]).output
    assert f"{len(sessions)} with no sessions, 1 with no forks" in shown, shown
    page = tmp_path / "report.html"
    runner.invoke(app, ["report", "--out", str(out), *arms, "--html", str(page)])
    text = " ".join(page.read_text().split())
    assert f"{len(sessions)} metric{'s' if len(sessions) != 1 else ''} with no sessions" in text
    assert "1 metric with no fork in an arm" in text


def _tracked_ops_replay(tmp_path: Path) -> tuple[Path, Path]:
    """Baseline: three git repositories whose sessions' ops/capture.md is committed, so
    BS-OPS-02 fails on each; candidate: the same folders without .git, where BS-OPS-02 is
    skipped on every session (no git context). Both crawled into one OUT and checked."""
    import subprocess

    base = generate_corpus(tmp_path / "base", 12, 5, 0.0, "--jobs", "1")
    for extra in base.glob("truth*"):
        extra.unlink()
    cand = tmp_path / "cand"
    shutil.copytree(base, cand)
    git = ["git", "-c", "user.email=a@b", "-c", "user.name=a"]
    for repo in sorted(base.glob("repo-*"))[:3]:
        subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
        subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
        subprocess.run([*git, "add", "-f", *map(str, repo.glob("docs/research/*/ops"))], cwd=repo)
        subprocess.run([*git, "commit", "-qm", "x"], cwd=repo, check=True)
    out = tmp_path / "out"
    crawl([str(base)], str(out), {"run": "baseline"}, workers=1, point="baseline")
    crawl([str(cand)], str(out), {"run": "candidate"}, workers=1, point="candidate")
    check(str(out))
    return out, cand


def test_a_rule_the_candidate_skipped_on_every_session_fails_closed(tmp_path: Path) -> None:
    """BS-OPS-02 failed on the baseline's sessions and was skipped on every candidate session
    (its copy had no .git): the row read "no sessions", the clean share an improvement (the
    failing rule no longer counted), and compare exited 0 (found by a hunt)."""
    out, _ = _tracked_ops_replay(tmp_path)
    args = [
        "compare",
        "--out",
        str(out),
        "--baseline",
        "run=baseline",
        "--candidate",
        "run=candidate",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output
    assert re.search(
        r"1 rule the baseline baseline measured was skipped on every session of the "
        r"candidate candidate \(BS-OPS-02\): nothing shows it holds",
        result.output,
    ), result.output
    doc = json.loads(CliRunner().invoke(app, [*args, "--json"]).output)
    rows = {r["metric"]: r for r in doc["rows"]}
    assert rows["BS-OPS-02"]["verdict"] == "skipped everywhere" and doc["counts"]["regression"] == 0
    assert rows["BS-OPS-02"]["baseline"]["count"] > 0 and rows["BS-OPS-02"]["design"] is None
    assert rows["clean-share"]["verdict"] == "other measure", rows["clean-share"]
    # The nightly alarm is the same test: the candidate as tonight, the baseline as last night.
    night = CliRunner().invoke(app, ["check", "--out", str(out), "--fail-on-regression"])
    assert night.exit_code == 1, night.output
    assert re.search(
        r"BS-OPS-02 was measured on \d+ sessions at baseline and skipped on every session at "
        r"candidate \(\d+ skipped\)",
        night.stderr,
    ), night.stderr
    # The report shows the same alarm, and exits 1 on it only when asked to, as check does.
    page = ["report", "--out", str(out), "--html", str(tmp_path / "r.html")]
    assert CliRunner().invoke(app, page).exit_code == 0
    asked = CliRunner().invoke(app, [*page, "--fail-on-regression"])
    assert asked.exit_code == 1 and "BS-OPS-02 was measured on" in asked.stderr, asked.output
    assert "skipped on every session at candidate" in (tmp_path / "r.html").read_text()
    # The other way round, the candidate measures what the baseline skipped: no alarm for that.
    swapped = [
        "compare",
        "--out",
        str(out),
        "--baseline",
        "run=candidate",
        "--candidate",
        "run=baseline",
    ]
    doc = json.loads(CliRunner().invoke(app, [*swapped, "--json"]).output)
    assert {r["metric"]: r["verdict"] for r in doc["rows"]}["BS-OPS-02"] == "no sessions"


def _night_2_raises_no_alarm(out: Path) -> dict[str, Any]:
    """night-2's check trips no alarm and compare finds no regression since night-1: its rows
    by metric."""
    night = runner.invoke(app, ["check", "--out", str(out), "--fail-on-regression"])
    assert night.exit_code == 0, night.output
    args = ["compare", "--out", str(out), "--baseline-run", "night-1", "--candidate-run", "night-2"]
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return {r["metric"]: r for r in json.loads(result.output)["rows"]}


def test_a_rule_that_no_longer_applies_once_harvested_is_no_alarm(tmp_path: Path) -> None:
    """Every applied session of night-1 harvested by night-2, as the schema prescribes: the
    move gate's ops/ rules (BS-USELESS-01, CENSUS-MOVE-01) are then skipped on every session,
    with the reason `ops/ removed at harvest`. That is the rule not applying, not a measure
    lost: skipped everywhere tripped compare and the nightly alarm on a healthy night (found
    by a hunt). A skip that hides a measure (no git context) still fails closed, above."""
    corpus = generate_corpus(tmp_path / "corpus", 20, 3, 0.0, "--jobs", "1")
    out = tmp_path / "out"
    crawl([str(corpus)], str(out), workers=1, point="night-1")
    check(str(out))
    con = connect(Out(str(out)))
    applied = con.execute(
        "SELECT repo_path || '/' || path FROM sessions WHERE point = 'night-1' "
        "AND stage = 'applied'"
    ).fetchall()
    con.close()
    assert applied, "the corpus has applied sessions to harvest"
    for (relative,) in applied:
        folder = corpus / relative
        history = folder.parents[1] / "history" / "brainstorms" / folder.name[: -len("-brainstorm")]
        history.parent.mkdir(parents=True, exist_ok=True)
        folder.rename(history)
        shutil.rmtree(history / "ops")
        state = history / "state.md"
        state.write_text(re.sub(r"(?m)^- Status: .*$", "- Status: harvested", state.read_text()))
    crawl([str(corpus)], str(out), workers=1, point="night-2")
    rows = _night_2_raises_no_alarm(out)
    for rule in ("BS-USELESS-01", "CENSUS-MOVE-01"):
        assert rows[rule]["baseline"]["evaluated"] > 0, rows[rule]
        assert rows[rule]["candidate"]["evaluated"] == 0, rows[rule]
        assert rows[rule]["verdict"] == "no sessions", rows[rule]
    # The reasons compare tells apart are the rule files' own (one text each, spec §5).
    reasons = {reason for rule in load_rules() for _, reason in rule.skips}
    assert set(NOT_APPLICABLE_SKIPS) <= reasons


def test_the_last_manifest_harvested_is_no_alarm(tmp_path: Path) -> None:
    """Night 1 holds a converging session (its manifest checked by BS-MANIFEST-01) and an open
    one (no manifest: skipped); by night 2 the converging one is harvested as the schema
    prescribes. Every rule passes on both nights, and BS-MANIFEST-01 now applies to no
    session (`ops/ removed at harvest`, `no manifest`): that measures nothing, no alarm. It
    tripped `check --fail-on-regression` and compare ("nothing shows it holds"; found by a
    hunt), as only the harvest's reason was known not to hide a measure."""
    base = FIXTURES / "cases" / "base"
    root = tmp_path / "root"
    copy_tree(base / "converging" / "repo", root / "ra")
    copy_tree(base / "open" / "repo", root / "rb")
    out = tmp_path / "out"
    crawl([str(root)], str(out), workers=1, point="night-1")
    check(str(out))
    shutil.rmtree(root / "ra")
    copy_tree(base / "harvested" / "repo", root / "ra")
    crawl([str(root)], str(out), workers=1, point="night-2")
    rows = _night_2_raises_no_alarm(out)
    assert rows["BS-MANIFEST-01"]["baseline"]["evaluated"] == 1, rows["BS-MANIFEST-01"]
    assert rows["BS-MANIFEST-01"]["verdict"] == "no sessions", rows["BS-MANIFEST-01"]
    assert rows["clean-share"]["verdict"] == "unchanged", rows["clean-share"]
