"""Operating the nightly census from cron or CI: selectors, alarms, prune and compact, a moved
OUT opened in the DuckDB CLI, SQL from files and stdin, Unix manners. Real OUTs throughout."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.check import check
from pipeline.cli import app
from pipeline.crawl import crawl
from pipeline.engine import connect
from pipeline.maintain import COMPACT_AT
from pipeline.rules import load_rules
from pipeline.store import Out
from pipeline.textout import count_rate, interval, num, pct
from tests.conftest import FIXTURES, base_corpus, copy_tree
from tests.test_nightly import assert_frozen

runner = CliRunner()
CENSUS = Path(sys.executable).with_name("census")
DUCKDB = Path(sys.executable).with_name("duckdb")


def _break_closes_when(corpus: Path, repos: int) -> None:
    """Night by night, more sessions lose their forks' 'Closes when:' (BS-FORK-01 rises)."""
    for forks in sorted(corpus.glob("repo-*/docs/*/*/forks.md"))[:repos]:
        forks.write_text(forks.read_text().replace("- Closes when:", "- Closes:"))


@pytest.fixture(scope="module")
def nights(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Four nights over 12 sessions, checked; on night 4, 10 of them break BS-FORK-01."""
    base = tmp_path_factory.mktemp("ops")
    corpus = base_corpus(base / "corpus", 12)
    out = base / "out"
    for night in range(1, 5):
        if night == 4:
            _break_closes_when(corpus, 10)
        crawl([str(corpus)], str(out), {"night": str(night)}, workers=1, point=f"night-{night}")
        check(str(out))
    return corpus, out


def _rates_text(out: Path, point: str) -> str:
    rows = connect(Out(out)).execute(
        "SELECT * EXCLUDE (position) FROM rule_rates WHERE point = ? ORDER BY rule_id", [point]
    )
    return repr(rows.fetchall())


def test_selectors_pick_the_same_point_in_every_command(nights: tuple[Path, Path]) -> None:
    _, out = nights
    stats = json.loads(
        runner.invoke(app, ["stats", "--out", str(out), "--run", "previous", "--json"]).stdout
    )
    assert stats["point"]["name"] == "night-3"
    by_label = runner.invoke(app, ["stats", "--out", str(out), "-l", "night=2", "--json"])
    assert json.loads(by_label.stdout)["point"]["name"] == "night-2"
    checked = runner.invoke(app, ["check", "--out", str(out), "--run", "night-1", "--json"])
    assert json.loads(checked.stdout)["point"] == "night-1"
    run_id = (
        json.loads(checked.stdout)["rates"]
        and connect(Out(out))
        .execute("SELECT runs[1] FROM points WHERE point = 'night-2'")
        .fetchone()[0]
    )
    by_run = runner.invoke(app, ["check", "--out", str(out), "--run", run_id, "--json"])
    assert json.loads(by_run.stdout)["point"] == "night-2"
    sql = runner.invoke(
        app,
        [
            "sql",
            "SELECT selected_point() AS p",
            "--out",
            str(out),
            "--run",
            "previous",
            "-f",
            "csv",
        ],
    )
    assert sql.stdout == "p\nnight-3\n"
    report = runner.invoke(app, ["report", "--out", str(out), "--run", "night-2"])
    assert report.exit_code == 0
    assert "night=2" in (out / "report.html").read_text().split("</header>")[0]
    missing = runner.invoke(app, ["stats", "--out", str(out), "--run", "night-9"])
    assert missing.exit_code == 2 and len(missing.output.strip().splitlines()) == 1
    assert "night-4" in missing.output, "the error names the points that exist"


def test_alarm_lines_name_the_rule_on_stderr(nights: tuple[Path, Path]) -> None:
    _, out = nights
    result = runner.invoke(app, ["check", "--out", str(out), "--fail-on-regression"])
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert lines == [line for line in lines if line.startswith("census: BS-FORK-01 regressed")]
    assert "at night-3 to" in lines[0] and "at night-4" in lines[0] and " … " in lines[0]
    assert result.stdout.strip().splitlines()[-1].startswith("ALARM at night-4")
    assert "BS-FORK-01" in result.stdout.strip().splitlines()[-1]


def test_a_night_that_saw_no_session_trips_the_regression_alarm(
    nights: tuple[Path, Path], tmp_path: Path
) -> None:
    """A checkout gone or a wrong root gives every rate "no sessions", which no interval can
    call worse: the scheduled census says so instead of passing."""
    _, source = nights
    out = tmp_path / "out"
    shutil.copytree(source, out)
    empty = tmp_path / "empty"
    empty.mkdir()
    crawl([str(empty)], str(out), point="night-5")
    watched = runner.invoke(app, ["check", "--out", str(out), "--fail-on-regression", "BS-SYNC-01"])
    assert watched.exit_code == 1, watched.output
    assert "census: census point night-5 saw no session, where night-4 saw" in watched.stderr
    assert "regressed since night-4: every session" in watched.stdout.strip().splitlines()[-1]
    unwatched = runner.invoke(app, ["check", "--out", str(out)])
    assert unwatched.exit_code == 0


def _outage_week(tmp_path: Path) -> Path:
    """Night 1 crawls 12 healthy sessions, night 2 a root with none (the checkout was gone),
    night 3 the sessions again, 10 of them now breaking BS-FORK-01; nights 1 and 2 checked."""
    corpus = base_corpus(tmp_path / "corpus", 12)
    out = tmp_path / "out"
    crawl([str(corpus)], str(out), workers=1, point="night-1")
    check(str(out))
    empty = tmp_path / "empty"
    empty.mkdir()
    crawl([str(empty)], str(out), workers=1, point="night-2")
    gone = runner.invoke(app, ["check", "--out", str(out), "--fail-on-regression"])
    assert gone.exit_code == 1 and "night-2 saw no session" in gone.stderr, gone.output
    _break_closes_when(corpus, 10)
    crawl([str(corpus)], str(out), workers=1, point="night-3")
    return out


def test_the_night_after_a_night_that_saw_no_session_is_tested_against_the_last_that_did(
    tmp_path: Path,
) -> None:
    """Night 3 was tested against empty night 2 alone, which nothing can be worse than: "no
    alarm at night-3; regressed since night-2: none", exit 0, and the regression since night 1
    was never alarmed (found by a hunt)."""
    out = _outage_week(tmp_path)
    back = runner.invoke(app, ["check", "--out", str(out), "--fail-on-regression"])
    assert back.exit_code == 1, back.output
    closing = back.stdout.strip().splitlines()[-1]
    assert closing.startswith("ALARM at night-3; regressed since night-1"), closing
    assert "night-2 saw no session" in closing and "BS-FORK-01" in closing, closing
    assert "census: BS-FORK-01 regressed from 0.0% at night-1" in back.stderr, back.stderr
    shown = json.loads(runner.invoke(app, ["check", "--out", str(out), "--json"]).stdout)
    assert shown["baseline"] is None  # no regression test asked for, none named


def test_the_report_after_a_night_that_saw_no_session_compares_with_the_alarms_baseline(
    tmp_path: Path,
) -> None:
    """The report's "what changed" compared night 3 with empty night 2, the point before it:
    every session "new", every failing one "newly failing", beside an alarm box tested against
    night 1. Both now compare with night 1 and name the night passed over."""
    out = _outage_week(tmp_path)
    check(str(out))
    page = tmp_path / "r.html"
    made = runner.invoke(app, ["report", "--out", str(out), "--html", str(page)])
    assert made.exit_code == 0, made.output
    text = re.sub(r"<[^>]+>", "", page.read_text())
    passed = "(night-2 saw no session)"
    assert f"compared with night-1 {passed}" in text
    assert "What changed since night-1?" in text
    assert re.search(rf"From night-1 \(\S+ \S+ UTC\) to night-3 {re.escape(passed)}\.", text)
    assert "Newly failing since night-1" in text
    assert "ALARM at night-3; regressed since night-1 (night-2 saw no session)" in text


def test_a_regression_on_a_night_checked_with_a_later_one_still_alarms(tmp_path: Path) -> None:
    """A scheduled check that missed a night decides two points at once. Night 2 broke
    BS-FORK-01 and night 3 repeated it: the alarm compared night 3 with night 2 only, exited 0,
    and night 2's regression, frozen since, never alarmed (found by a hunt)."""
    corpus = base_corpus(tmp_path / "corpus", 12)
    out = tmp_path / "out"
    prod = {"env": "prod"}
    crawl([str(corpus)], str(out), prod, workers=1, point="night-1")
    check(str(out))
    _break_closes_when(corpus, 10)
    crawl([str(corpus)], str(out), prod, workers=1, point="night-2")
    crawl([str(corpus)], str(out), prod, workers=1, point="night-3")
    for copy in ("again", "latest", "named", "labelled"):
        shutil.copytree(out, tmp_path / copy)
    result = runner.invoke(app, ["check", "--out", str(out), "--fail-on-regression"])
    assert result.exit_code == 1, result.output
    lines = result.stdout.strip().splitlines()
    assert lines[-2].startswith("ALARM at night-2; regressed since night-1: BS-FORK-01"), lines
    assert lines[-1].startswith("no alarm at night-3"), lines
    assert result.stderr.startswith("census: BS-FORK-01 regressed from"), result.stderr
    shown = runner.invoke(
        app, ["check", "--out", str(tmp_path / "again"), "--fail-on-regression", "--json"]
    )
    found = json.loads(shown.stdout)
    assert shown.exit_code == 1 and found["tripped"] and found["point"] == "night-3"
    assert [(e["point"], e["tripped"]) for e in found["decided_with_it"]] == [("night-2", True)]
    # The latest point chosen as latest, by its name or by its labels: the same alarms (named,
    # it alarmed night 3 alone, and night 2's regression was never alarmed again).
    selectors = (
        ("latest", ["--run", "latest"]),
        ("named", ["--run", "night-3"]),
        ("labelled", ["-l", "env=prod"]),
    )
    for copy, selector in selectors:
        args = ["check", "--out", str(tmp_path / copy), *selector, "--fail-on-regression"]
        chosen = runner.invoke(app, args)
        assert chosen.exit_code == 1 and "at night-2" in chosen.stderr, (selector, chosen.output)


def test_the_report_shows_the_alarm_of_a_night_checked_with_it(tmp_path: Path) -> None:
    """Night 2 broke BS-FORK-01 and was decided with night 3 by one check. check alarmed on
    night 2, but the report of night 3 watched night 3 against night 2 alone: "No alarm", and
    --fail-on-regression exited 0, so a CI job gating on the report never alarmed on night 2
    (found by a hunt)."""
    corpus = base_corpus(tmp_path / "corpus", 12)
    out = tmp_path / "out"
    crawl([str(corpus)], str(out), workers=1, point="night-1")
    check(str(out))
    _break_closes_when(corpus, 10)
    crawl([str(corpus)], str(out), workers=1, point="night-2")
    crawl([str(corpus)], str(out), workers=1, point="night-3")
    checked = runner.invoke(app, ["check", "--out", str(out), "--fail-on-regression"])
    assert checked.exit_code == 1 and "at night-2" in checked.stderr, checked.output
    page = tmp_path / "r.html"
    args = ["report", "--out", str(out), "--html", str(page)]
    asked = runner.invoke(app, [*args, "--fail-on-regression"])
    assert asked.exit_code == 1, asked.output
    assert asked.stderr == checked.stderr
    shown = runner.invoke(app, args)
    assert shown.exit_code == 0, shown.output
    text = page.read_text()
    assert "Alarm:" in text and "ALARM at night-2; regressed since night-1: BS-FORK-01" in text
    # The previous night, shown alone, is judged against its own previous night only.
    earlier = runner.invoke(app, [*args, "--run", "night-2", "--fail-on-regression"])
    assert earlier.exit_code == 1 and "ALARM at night-1" not in page.read_text()


def test_a_recheck_raises_no_alarm_its_nights_own_checks_raised(tmp_path: Path) -> None:
    """Night 2 broke BS-FORK-01 and its own check alarmed; night 3 was clean of regressions.
    A --recheck under the same rules changed no figure, yet it and every report of night 3
    after it exited 1 on night 2 again, "checked together with night-3", while check on
    night 3 exited 0 (found by a hunt)."""
    corpus = base_corpus(tmp_path / "corpus", 12)
    out = tmp_path / "out"
    for night in range(1, 4):
        if night == 2:
            _break_closes_when(corpus, 10)
        crawl([str(corpus)], str(out), workers=1, point=f"night-{night}")
        checked = runner.invoke(app, ["check", "--out", str(out), "--fail-on-regression"])
        assert checked.exit_code == (1 if night == 2 else 0), checked.output
    page = tmp_path / "r.html"
    report = ["report", "--out", str(out), "--html", str(page), "--fail-on-regression"]
    before = runner.invoke(app, report)
    assert before.exit_code == 0, before.output
    shown = page.read_text()
    again = runner.invoke(app, ["check", "--out", str(out), "--recheck", "--fail-on-regression"])
    assert again.exit_code == 0 and "night-2" not in again.stderr, again.output
    after = runner.invoke(app, report)
    assert after.exit_code == 0 and "at night-2" not in after.stderr, after.output
    assert page.read_text() == shown
    # Nights no check had decided yet are decided with the night shown, and alarm with it.
    for forks in corpus.glob("repo-*/docs/*/*/forks.md"):
        forks.write_text(forks.read_text().replace("- Closes:", "- Closes when:"))
    crawl([str(corpus)], str(out), workers=1, point="night-4")
    _break_closes_when(corpus, 10)
    crawl([str(corpus)], str(out), workers=1, point="night-5")
    late = runner.invoke(app, ["check", "--out", str(out), "--recheck", "--fail-on-regression"])
    assert late.exit_code == 1 and "night-2" not in late.stderr, late.output
    lines = late.stdout.strip().splitlines()
    assert lines[-2].startswith("no alarm at night-4"), lines
    assert lines[-1].startswith("ALARM at night-5; regressed since night-4: BS-FORK-01"), lines


def test_no_regression_test_is_made_across_a_rule_set_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Night 1 was checked by an older census (another rule set), night 2 by this one. The
    alarm compared rates counted by two rule sets, so a census upgrade that changed a rule
    alarmed (or hid a regression) as if the corpus had moved: `check --fail-on-regression`
    exited 1 for a rule made stricter on unchanged files. Now the regression test is not made,
    and says so with exit 2; the median (crawled history only) is still tested, compare
    refuses, and a recheck makes the test possible again (found by the lead's hunt)."""
    import pipeline.check

    corpus = base_corpus(tmp_path / "corpus", 12)
    out = tmp_path / "out"
    crawl([str(corpus)], str(out), workers=1, point="night-1")
    with monkeypatch.context() as older:
        older.setattr(pipeline.check, "ruleset", lambda: "0ld0ld0ld0ld0ld0")
        check(str(out))
    night_1 = _rates_text(out, "night-1")
    _break_closes_when(corpus, 10)
    crawl([str(corpus)], str(out), workers=1, point="night-2")
    result = runner.invoke(app, ["check", "--out", str(out), "--fail-on-regression"])
    assert result.exit_code == 2, result.output
    reason = "night-1 was checked with rule set 0ld0ld0ld0ld0ld0 and night-2 with "
    assert result.stderr.startswith(f"census: cannot test night-2 for regressions: {reason}")
    assert "census check --recheck" in result.stderr and "regressed from" not in result.stderr
    assert result.stdout.strip().splitlines()[-1].startswith("UNTESTED at night-2; rules not")
    as_json = runner.invoke(app, ["check", "--out", str(out), "--fail-on-regression", "--json"])
    assert as_json.exit_code == 2 and reason in json.loads(as_json.stdout)["untested"]
    median = ["check", "--out", str(out), "--fail-on-regression", "fork-median-hours"]
    assert runner.invoke(app, median).exit_code == 0
    page = tmp_path / "r.html"
    report = ["report", "--out", str(out), "--html", str(page)]
    asked = runner.invoke(app, [*report, "--fail-on-regression"])
    assert asked.exit_code == 2 and asked.stderr.endswith(result.stderr), asked.output
    assert runner.invoke(app, report).exit_code == 0
    text = page.read_text()
    assert "Regressions not tested at" in text and reason in text
    assert "1 census point of this trend was measured with other rules" in text
    arms = ["compare", "--out", str(out), "--baseline-run", "night-1", "--candidate-run", "night-2"]
    refused = runner.invoke(app, arms)
    # Compare says which arm is which: points named by run IDs do not (found by a hunt).
    roles = "the baseline night-1 was checked with rule set 0ld0ld0ld0ld0ld0 and the candidate "
    assert refused.exit_code == 2 and f"census: cannot compare: {roles}" in refused.stderr
    assert _rates_text(out, "night-1") == night_1  # the night checked before is a fact
    # Checked again with one rule set, the two nights are compared: night 2 broke BS-FORK-01.
    assert runner.invoke(app, ["check", "--out", str(out), "--recheck"]).exit_code == 0
    again = runner.invoke(app, ["check", "--out", str(out), "--fail-on-regression"])
    assert again.exit_code == 1 and "BS-FORK-01 regressed" in again.stderr, again.output
    assert runner.invoke(app, arms).exit_code == 1
    assert runner.invoke(app, report).exit_code == 0
    assert "other rules" not in page.read_text()


def test_no_regression_test_is_made_across_a_change_of_the_readers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Night 1 was crawled by an older census (other readers: a reader that now notes a line it
    once skipped fails more folders on the same files), night 2 by this one: their rates are
    not one measure either. The regression test is not made (exit 2) and compare refuses; the
    next night, read alike, is compared with night 2 as always."""
    import pipeline.crawl
    import pipeline.parse.session

    corpus = base_corpus(tmp_path / "corpus", 12)
    out = tmp_path / "out"
    with monkeypatch.context() as older:
        for module in (pipeline.crawl, pipeline.parse.session):
            older.setattr(module, "READER_VERSION", 1)
        crawl([str(corpus)], str(out), workers=1, point="night-1")
    check(str(out))
    crawl([str(corpus)], str(out), workers=1, point="night-2")
    result = runner.invoke(app, ["check", "--out", str(out), "--fail-on-regression"])
    assert result.exit_code == 2, result.output
    reason = "night-1 was read with census readers version 1 and night-2 with "
    assert result.stderr.startswith(f"census: cannot test night-2 for regressions: {reason}")
    arms = ["compare", "--out", str(out), "--baseline-run", "night-1", "--candidate-run", "night-2"]
    refused = runner.invoke(app, arms)
    roles = "the baseline night-1 was read with census readers version 1 and the candidate "
    assert refused.exit_code == 2 and f"census: cannot compare: {roles}" in refused.stderr
    _break_closes_when(corpus, 10)
    crawl([str(corpus)], str(out), workers=1, point="night-3")
    later = runner.invoke(app, ["check", "--out", str(out), "--fail-on-regression"])
    assert later.exit_code == 1 and "BS-FORK-01 regressed" in later.stderr, later.output


def test_the_reports_alarm_sentences_begin_with_a_capital(tmp_path: Path) -> None:
    """The report's alarm paragraph joins the lines check prints into sentences, and read
    "… (checked together with …). no alarm at night-2; …" with a small letter after a full
    stop (found by a hunt). Every sentence there begins with a capital now; check's own
    lines stay as they are."""
    corpus = base_corpus(tmp_path / "corpus", 2)
    out = tmp_path / "out"
    crawl([str(corpus)], str(out), workers=1, point="night-1")
    crawl([str(corpus)], str(out), workers=1, point="night-2")
    check(str(out))
    for asked in ([], ["--fail-on-regression"]):
        page = tmp_path / "r.html"
        shown = runner.invoke(app, ["report", "--out", str(out), "--html", str(page), *asked])
        assert shown.exit_code == 0, shown.output
        paragraph = re.search(r'<p class="muted small">(.*?)</p>', page.read_text(), re.S)
        assert paragraph is not None
        starts = re.findall(r"(?:^|[.!?] )([A-Za-z])", re.sub(r"<[^>]+>", "", paragraph[1]))
        assert starts and all(c.isupper() for c in starts), paragraph[1]
    said = runner.invoke(app, ["check", "--out", str(out), "--fail-on-regression"])
    assert said.stdout.splitlines()[-1].startswith("no alarm at night-2"), said.output


def test_regression_alarm_watches_rules_unless_told(nights: tuple[Path, Path]) -> None:
    _, out = nights
    median = runner.invoke(
        app, ["check", "--out", str(out), "--fail-on-regression", "fork-median-hours"]
    )
    assert median.exit_code == 0 and median.stderr == "", "the median is not a rule rate"
    other = runner.invoke(app, ["check", "--out", str(out), "--fail-on-regression", "BS-SYNC-01"])
    assert other.exit_code == 0
    named = runner.invoke(app, ["check", "--out", str(out), "--fail-on-regression", "BS-FORK-01"])
    assert named.exit_code == 1
    wrong = runner.invoke(app, ["check", "--out", str(out), "--fail-on-regression", "BS-NOPE"])
    assert wrong.exit_code == 2 and "not a metric" in wrong.output


@pytest.mark.parametrize("value", ["", ",", " ", "BS-FORK-01,"])
def test_an_empty_metric_name_is_a_usage_error_not_an_alarm_switched_off(
    nights: tuple[Path, Path], tmp_path: Path, value: str
) -> None:
    """`--fail-on-regression "$METRICS"` with the variable empty watched nothing: check said
    "no alarm asked for" and exited 0 over night 4's regression (report too). An empty or
    blank name is a usage error now, one line on stderr, exit 2, in both commands."""
    _, out = nights
    html = str(tmp_path / "r.html")
    for command in (["check"], ["report", "--html", html]):
        result = runner.invoke(app, [*command, "--out", str(out), "--fail-on-regression", value])
        assert result.exit_code == 2, (command, result.output)
        (line,) = result.stderr.splitlines()
        assert line.startswith(f"census: --fail-on-regression {value!r} ")
        assert "metric" in line and "Traceback" not in result.output


def test_a_checked_night_never_changes_and_refuses_a_late_crawl(
    nights: tuple[Path, Path], tmp_path: Path
) -> None:
    corpus, out = nights
    before = _rates_text(out, "night-2")
    late = runner.invoke(app, ["crawl", str(corpus), "--out", str(out), "--point", "night-2"])
    assert late.exit_code == 2 and "already checked" in late.output
    assert _rates_text(out, "night-2") == before


def test_prune_keeps_the_latest_rates_and_reads_like_a_fresh_crawl(
    nights: tuple[Path, Path], tmp_path: Path
) -> None:
    _, source = nights
    out = tmp_path / "out"
    shutil.copytree(source, out)
    latest = {p: _rates_text(out, p) for p in ("night-3", "night-4")}
    result = runner.invoke(app, ["prune", "--out", str(out), "--keep-last", "2", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["points_dropped"] == ["night-1", "night-2"]
    assert {p: _rates_text(out, p) for p in latest} == latest, "kept points are unchanged"
    # Rates counted live would read the same: the kept points must still be the frozen ones.
    for name in latest:
        assert_frozen(connect(Out(out)), name)
    assert runner.invoke(app, ["check", "--out", str(out)]).exit_code == 0
    assert {p: _rates_text(out, p) for p in latest} == latest
    # The snapshots left are exactly those the kept nights observe: what a crawl of those
    # two nights alone would have stored (nights 3 and 4 saw the corpus's last two states).
    con = connect(Out(out))
    kept = con.execute("SELECT count(DISTINCT snapshot_id) FROM observations").fetchone()[0]
    assert con.execute("SELECT count(*) FROM snapshots").fetchone()[0] == kept
    assert con.execute("SELECT count(*) FROM points").fetchone()[0] == 2
    orphans = con.execute(
        "SELECT count(*) FROM forks WHERE snapshot_id NOT IN (SELECT snapshot_id FROM observations)"
    ).fetchone()[0]
    assert orphans == 0
    assert sum(len(f) for f in Out(out).manifest().values()) <= len(Out(out).manifest())


def test_after_a_prune_the_next_check_counts_every_lifetime_again(
    nights: tuple[Path, Path], tmp_path: Path
) -> None:
    """The forks check carries from night to night were counted over the dropped nights too:
    a prune empties them, and the next night's lifetimes are those its kept history gives."""
    from tests.test_nightly import lifetimes_of

    corpus, source = nights
    out = tmp_path / "out"
    shutil.copytree(source, out)
    assert connect(Out(out)).execute("SELECT count(*) FROM lifetime_forks").fetchone()[0] > 0
    assert runner.invoke(app, ["prune", "--out", str(out), "--keep-last", "2"]).exit_code == 0
    assert connect(Out(out)).execute("SELECT count(*) FROM lifetime_forks").fetchone()[0] == 0
    crawl([str(corpus)], str(out), point="night-5")
    check(str(out))
    assert lifetimes_of(out, "night-5") == lifetimes_of(out, "night-5", live=True)


def test_prune_needs_one_way_to_choose(nights: tuple[Path, Path]) -> None:
    _, out = nights
    assert runner.invoke(app, ["prune", "--out", str(out)]).exit_code == 2
    everything = runner.invoke(app, ["prune", "--out", str(out), "--before", "2999-01-01"])
    assert everything.exit_code == 2 and "keeps at least one" in everything.output


@pytest.mark.parametrize("offset", ["+01:00", "-05:00", "+00:00:07"])
def test_prune_before_an_instant_with_an_offset_drops_the_points_started_before_it(
    offset: str, nights: tuple[Path, Path], tmp_path: Path
) -> None:
    """`--before` with a UTC offset names one instant. Found by a hunt: the offset was thrown
    away and the clock time read as UTC, so `+01:00` dropped the points of the hour after the
    instant (or refused: every point started before it) and `-05:00` dropped fewer."""
    from datetime import timedelta, timezone

    _, source = nights
    out = tmp_path / "out"
    shutil.copytree(source, out)
    starts = connect(Out(out)).execute("SELECT started_at FROM points ORDER BY position")
    first, second = (row[0] for row in starts.fetchall()[:2])
    instant = first + (second - first) / 2  # after night-1 began, before night-2 did
    sign = -1 if offset.startswith("-") else 1
    parts = [int(p) for p in offset[1:].split(":")]
    shift = sign * timedelta(hours=parts[0], minutes=parts[1], seconds=sum(parts[2:]))
    local = instant.astimezone(timezone(shift)).replace(tzinfo=None).isoformat() + offset
    result = runner.invoke(app, ["prune", "--out", str(out), "--before", local, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["points_dropped"] == ["night-1"]


def test_file_count_stays_bounded_and_compact_merges(tmp_path: Path) -> None:
    corpus = base_corpus(tmp_path / "corpus", 2)
    out = tmp_path / "out"
    for _ in range(COMPACT_AT + 4):
        crawl([str(corpus)], str(out), workers=1)
    manifest = Out(out).manifest()
    assert max(len(files) for files in manifest.values()) < COMPACT_AT
    before = connect(Out(out)).execute("SELECT count(*) FROM observations").fetchone()[0]
    assert runner.invoke(app, ["compact", "--out", str(out)]).exit_code == 0
    assert max(len(files) for files in Out(out).manifest().values()) <= 1
    assert connect(Out(out)).execute("SELECT count(*) FROM observations").fetchone()[0] == before
    on_disk = list((out / "tables").rglob("*.parquet"))
    assert len(on_disk) == sum(len(f) for f in Out(out).manifest().values()), "old files swept"


@pytest.mark.parametrize("maintenance", ["compact", "prune"])
def test_census_duckdb_names_live_files_once_compact_or_prune_returns(
    maintenance: str, nights: tuple[Path, Path], tmp_path: Path
) -> None:
    """A reader of census.duckdb (the DuckDB CLI) between a compaction's sweep and the next
    command's rebuild got 'No files found': the sweep deleted the files its views named. The
    library call itself now leaves census.duckdb naming only files that exist."""
    import duckdb

    from pipeline.maintain import compact, prune

    _, source = nights
    out = tmp_path / "out"
    shutil.copytree(source, out)
    crawl([str(nights[0])], str(out), workers=1, point="night-5")  # two files per table
    if maintenance == "compact":
        compact(str(out))
    else:
        check(str(out))  # a prune leaves alone what an unchecked night compares with
        prune(str(out), keep_last=2)
    con = duckdb.connect(str(out / "census.duckdb"), read_only=True)
    for table in ("runs", "observations", "snapshots", "rule_results", "forks"):
        con.execute(f'SELECT count(*) FROM "{table}"').fetchone()


def test_an_older_census_duckdb_whose_views_lack_a_new_column_is_rebuilt(
    nights: tuple[Path, Path], tmp_path: Path
) -> None:
    """An OUT the census before checks.estimator checked: its checks files and census.duckdb's
    checks view lack the column, and no other view changed, so the file was taken as current
    and stats, report and check --recheck ended in 'census: internal error' (BinderException:
    estimator not found) until the next crawl (found by a hunt)."""
    import dataclasses
    import hashlib

    import duckdb

    from pipeline.aftercommit import DATABASE_STATE, refresh_database
    from pipeline.engine import derived_views, table_scan
    from pipeline.schema import CHECKS
    from pipeline.store import write_state

    _, source = nights
    out = tmp_path / "out"
    shutil.copytree(source, out)
    paths = [out / "tables" / rel for rel in Out(out).manifest()[CHECKS.name]]
    for path in paths:  # as the older census wrote them
        older_file = path.with_name("older.parquet")
        duckdb.execute(
            f"COPY (SELECT * EXCLUDE (estimator) FROM read_parquet('{path}')) TO '{older_file}'"
        )
        os.replace(older_file, path)
    refresh_database(Out(out))
    # census.duckdb as the older census left it: its checks view, the table views it recorded
    # making, and its stamp (of the manifest, OUT's path and the derived views).
    assert CHECKS.columns[-1].name == "estimator"
    older = dataclasses.replace(CHECKS, columns=CHECKS.columns[:-1])
    view = f'CREATE OR REPLACE VIEW "{CHECKS.name}" AS {table_scan(older, paths)}'
    recorded = hashlib.sha256(json.dumps(Out(out).manifest(), sort_keys=True).encode())
    recorded.update(str(out).encode())
    for statement in derived_views():
        recorded.update(statement.encode())
    con = duckdb.connect(str(out / "census.duckdb"))
    con.execute(view)
    con.execute(
        "UPDATE _census SET stamp = $stamp, tables = list_transform(tables, lambda s: "
        "CASE WHEN s LIKE 'CREATE OR REPLACE VIEW \"checks\"%' THEN $view ELSE s END)",
        {"stamp": recorded.hexdigest(), "view": view},
    )
    con.close()
    write_state(Out(out), DATABASE_STATE, {"manifest": recorded.hexdigest()})
    for command in (["stats", "--json"], ["report"], ["check", "--recheck"]):
        result = runner.invoke(app, [*command, "--out", str(out)])
        assert result.exit_code in (0, 1), (command, result.output)
        assert "internal error" not in result.output, (command, result.output)
    cli = duckdb.connect(str(out / "census.duckdb"), read_only=True)
    assert cli.execute("SELECT count(estimator) FROM checks").fetchone()[0] > 0


def test_a_moved_out_reads_its_own_files_in_the_duckdb_cli(
    nights: tuple[Path, Path], tmp_path: Path
) -> None:
    """`duckdb OUT/census.duckdb` from any directory (spec §6); a moved OUT's views follow
    it once a census command has run on it there."""
    _, source = nights
    copy = tmp_path / "copy"
    shutil.copytree(source, copy)
    moved = tmp_path / "elsewhere" / "moved"
    moved.parent.mkdir()
    os.rename(copy, moved)
    query = "SELECT count(*) AS n FROM observations"
    ours = runner.invoke(app, ["sql", query, "--out", str(moved), "-f", "csv"]).stdout
    cli = _duckdb_csv(str(moved / "census.duckdb"), query, tmp_path)
    assert cli.returncode == 0, cli.stderr
    assert cli.stdout == ours == f"n\n{48}\n"
    rates = "SELECT count(*) AS n FROM rule_rates WHERE failed > 0"
    cli_rates = _duckdb_csv("census.duckdb", rates, moved)
    assert (
        cli_rates.stdout
        == runner.invoke(app, ["sql", rates, "--out", str(moved), "-f", "csv"]).stdout
    )


def _duckdb_csv(database: Path | str, query: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The DuckDB CLI answering a query over census.duckdb read-only, as CSV."""
    return subprocess.run(
        [str(DUCKDB), "-readonly", "-csv", str(database), "-c", query],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_readmes_selected_point_queries_run_in_the_duckdb_cli(
    nights: tuple[Path, Path], tmp_path: Path
) -> None:
    """The README's queries say `WHERE point = selected_point()`; in the DuckDB CLI, which it
    says holds the same views, they ended in 'Scalar Function with name selected_point does
    not exist'. census.duckdb has it, as census sql's default: the latest checked point."""
    _, source = nights
    out = tmp_path / "out"
    shutil.copytree(source, out)
    query = (
        "SELECT point, rule_id, failed FROM rule_rates WHERE point = selected_point() "
        "AND failed > 0 ORDER BY rule_id"
    )
    ours = runner.invoke(app, ["sql", query, "--out", str(out), "-f", "csv"]).stdout
    cli = _duckdb_csv(str(out / "census.duckdb"), query, tmp_path)
    assert cli.returncode == 0, cli.stderr
    assert cli.stdout == ours and "night-4" in ours, ours
    which = ["sql", "SELECT selected_point() AS p", "--out", str(out), "-f", "csv"]
    earlier = runner.invoke(app, [*which, "--run", "previous"])
    assert earlier.stdout == "p\nnight-3\n", "census sql's own choice still wins"


def test_an_out_whose_path_holds_a_question_mark_gets_its_census_duckdb(
    nights: tuple[Path, Path], tmp_path: Path
) -> None:
    """DuckDB reads a `?` in a database path as the start of its options and opened the WAL
    at `nightly.wal?v2/…`: census.duckdb was never written under `--out nightly?v2`, every
    command warned "check the disk", and `duckdb OUT/census.duckdb` found no database (found
    by a hunt)."""
    import duckdb

    _, source = nights
    out = tmp_path / "nightly?v2"
    shutil.copytree(source, out)
    (out / "census.duckdb").unlink()
    query = "SELECT count(*) AS n FROM observations"
    ours = runner.invoke(app, ["sql", query, "--out", str(out), "-f", "csv"])
    assert ours.exit_code == 0 and "warning" not in ours.stderr, ours.stderr
    con = duckdb.connect(str(out / "census.duckdb"), read_only=True)
    assert ours.stdout == f"n\n{con.execute(query).fetchone()[0]}\n" == "n\n48\n"
    assert sorted(p.name for p in out.iterdir() if "census.duckdb" in p.name) == ["census.duckdb"]


def test_an_out_whose_path_holds_a_backslash_gets_its_census_duckdb(
    nights: tuple[Path, Path], tmp_path: Path
) -> None:
    """DuckDB reads a backslash in a database path as a folder separator: under `--out
    nightly\\v2` it opened `nightly/v2/census.duckdb.tmp`, so census.duckdb was never written
    and every command warned "check the disk", with a healthy disk (found by a hunt). The
    file is there now, and its views answer (opened from a copy: DuckDB opens no database at
    such a path, though it reads Parquet files there)."""
    import duckdb

    _, source = nights
    out = tmp_path / "nightly\\v2"
    shutil.copytree(source, out)
    (out / "census.duckdb").unlink()
    query = "SELECT count(*) AS n FROM observations"
    ours = runner.invoke(app, ["sql", query, "--out", str(out), "-f", "csv"])
    assert ours.exit_code == 0 and "warning" not in ours.stderr, ours.stderr
    copy = tmp_path / "copy.duckdb"
    shutil.copyfile(out / "census.duckdb", copy)
    con = duckdb.connect(str(copy), read_only=True)
    assert ours.stdout == f"n\n{con.execute(query).fetchone()[0]}\n" == "n\n48\n"
    assert sorted(p.name for p in out.iterdir() if "census.duckdb" in p.name) == ["census.duckdb"]


def test_sql_from_a_file_stdin_and_with_a_leading_comment(
    nights: tuple[Path, Path], tmp_path: Path
) -> None:
    _, out = nights
    query = "-- points, oldest first\nSELECT point FROM points ORDER BY position"
    file = tmp_path / "q.sql"
    file.write_text(query)
    want = "point\nnight-1\nnight-2\nnight-3\nnight-4\n"
    by_file = runner.invoke(app, ["sql", "--file", str(file), "--out", str(out), "-f", "csv"])
    assert by_file.stdout == want
    by_stdin = runner.invoke(app, ["sql", "-", "--out", str(out), "-f", "csv"], input=query)
    assert by_stdin.stdout == want
    as_argument = runner.invoke(app, ["sql", query, "--out", str(out), "-f", "csv"])
    assert as_argument.stdout == want
    both = runner.invoke(app, ["sql", "SELECT 1", "--file", str(file), "--out", str(out)])
    assert both.exit_code == 2


def test_sql_is_sandboxed(nights: tuple[Path, Path], tmp_path: Path) -> None:
    _, out = nights
    target = tmp_path / "x.csv"
    for query in (
        f"COPY (SELECT 1) TO '{target}'",
        "SELECT * FROM read_csv('/etc/passwd')",
        f"COPY (SELECT 1) TO '{out}/tables/x.csv'",
        "SET enable_external_access = true",
    ):
        result = runner.invoke(app, ["sql", query, "--out", str(out)])
        assert result.exit_code == 2, query
        assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output
    assert not target.exists() and not (out / "tables" / "x.csv").exists()
    written = tmp_path / "points.json"
    ok = runner.invoke(
        app,
        [
            "sql",
            "SELECT point FROM points",
            "--out",
            str(out),
            "-f",
            "json",
            "--output",
            str(written),
        ],
    )
    assert ok.exit_code == 0 and len(json.loads(written.read_text())) == 4


def _closed_early(command: list[str], *, stderr: int = subprocess.PIPE) -> tuple[int, bytes]:
    """`command` with standard output's reader gone before it writes (`census … | head -1`
    once head has its line): its exit code and standard error."""
    with subprocess.Popen([str(CENSUS), *command], stdout=subprocess.PIPE, stderr=stderr) as proc:
        assert proc.stdout is not None
        # Closed before census has loaded, so its first write finds no reader, every time.
        proc.stdout.close()
        err = proc.stderr.read() if proc.stderr is not None else b""
        return proc.wait(timeout=120), err


def _read_whole(command: list[str]) -> tuple[int, bytes]:
    done = subprocess.run(
        [str(CENSUS), *command], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120
    )
    return done.returncode, done.stderr


@pytest.mark.parametrize(
    ("command", "found"),
    [
        (["check", "--fail-above", "0.01"], 1),
        (["compare"], 1),
        (["report", "--fail-above", "0.01"], 1),
        (["detect", "--gate", "manifest"], 1),
        (["check"], 0),
        (["stats"], 0),
        (["sql", "SELECT * FROM range(200000)"], 0),
    ],
)
def test_a_reader_that_leaves_early_loses_no_alarm_and_no_exit_code(
    nights: tuple[Path, Path], tmp_path: Path, command: list[str], found: int
) -> None:
    """`census check --fail-above 0.01 | head -1` exited 141 with an empty stderr: the closed
    stdout dropped the alarms. Standard error holds what it holds with a reader that reads all,
    and the exit code says what was found; 141 (the shell's closed pipe) only for nothing."""
    corpus, out = nights
    if command[0] == "detect":
        command = [*command, str(next(corpus.glob("repo-*/docs/research/*-brainstorm")))]
    elif command[0] == "report":
        command = [*command, "--out", str(out), "--html", str(tmp_path / "r.html")]
    else:
        command = [*command, "--out", str(out)]
    whole = _read_whole(command)
    assert whole[0] == found, whole
    code, err = _closed_early(command)
    assert err == whole[1], command
    assert code == (found or 141), (command, err)
    if "--fail-above" in command:
        # Each alarm one line: the rule, the point, the figures and the threshold (README).
        alarm = r"census: [A-Z-]+\d\d at night-4 is [\d.]+% \(\d+/\d+\), above 1\.0%"
        lines = err.decode().splitlines()
        assert lines and all(re.fullmatch(alarm, line) for line in lines), lines


@pytest.mark.parametrize("unbuffered", ["1", ""])
def test_an_output_cut_after_its_first_line_says_so_buffered_or_not(
    nights: tuple[Path, Path], unbuffered: str
) -> None:
    """`census sql … | head -1` under PYTHONUNBUFFERED=1: the one large write went straight
    to the pipe, which took part of it, and the rest was dropped with exit 0 (found by a
    hunt); it exits 141, as with buffering, so `set -o pipefail` sees the cut."""
    _, out = nights
    query = "SELECT range, 'abcdefghij' AS s FROM range(300000)"
    env = {**os.environ, "PYTHONUNBUFFERED": unbuffered}
    command = [str(CENSUS), "sql", query, "--out", str(out), "--format", "csv"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.readline() == b"range,s\n"
        proc.stdout.close()
        err = proc.stderr.read()
        assert (proc.wait(timeout=120), err) == (141, b"")


def test_an_alarm_still_exits_1_when_stderr_shares_the_closed_pipe(
    nights: tuple[Path, Path],
) -> None:
    """`census check … 2>&1 | head -1`: the alarm lines have no reader, the exit code still
    says one tripped."""
    _, out = nights
    code, _ = _closed_early(
        ["check", "--out", str(out), "--fail-above", "0.01"], stderr=subprocess.STDOUT
    )
    assert code == 1


def test_compare_writes_its_sarif_after_its_reader_left(
    nights: tuple[Path, Path], tmp_path: Path
) -> None:
    """The SARIF file is written after the table: a closed stdout stopped compare before it."""
    _, out = nights
    sarif = tmp_path / "c.sarif"
    code, err = _closed_early(["compare", "--out", str(out), "--sarif", str(sarif)])
    assert code == 1, err
    assert json.loads(sarif.read_text())["version"] == "2.1.0"


@pytest.mark.parametrize("columns", ["60", "200"])
def test_tables_fit_the_terminal_and_never_cut_a_rule_id(
    nights: tuple[Path, Path], columns: str
) -> None:
    _, out = nights
    env = {**os.environ, "COLUMNS": columns}
    done = subprocess.run(
        [str(CENSUS), "stats", "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    for rule in ("BS-MANIFEST-01", "CENSUS-MOVE-01", "BS-COMPOSE-02"):
        assert rule in done.stdout, f"{rule} cut at {columns} columns"
    assert "night=4" in done.stdout.splitlines()[0], "points are named by their labels"


def test_numbers_never_print_a_negative_zero() -> None:
    assert pct(-1e-17) == "0.0%" and pct(-0.00001, signed=True) == "0.0%"
    assert pct(0.0, signed=True) == "0.0%" and pct(0.012, signed=True) == "+1.2%"
    assert interval(-1e-17, 0.0321) == "0.0% – 3.2%"
    assert num(-0.01, 1, signed=True, unit="h") == "0.0 h"


def test_a_share_between_none_and_all_never_reads_as_either() -> None:
    """2,999 of 3,000 sessions failing read '2999/3000 100.0%', and 1 of 3,000 '0.0%', beside
    the rate chart's bar, the alarms and the share of forks still open (found by a hunt)."""
    assert pct(2999 / 3000) == "99.97%" and pct(1 / 3000) == "0.03%"
    assert count_rate(1, 20000, 1 / 20000) == "1/20000 0.01%"
    assert pct(0.996, 0) == "99.6%" and pct(0.004, 0) == "0.4%"
    assert pct(1.0) == "100.0%" and pct(0.0) == "0.0%" and pct(0.9994) == "99.9%"
    assert interval(0.0, 1 / 3000) == "0.0% – 0.03%"
    assert pct(-0.00001, signed=True) == "0.0%", "a difference keeps its own rule"


def test_every_reporting_command_has_json(nights: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, out = nights
    fresh = tmp_path / "fresh"
    for args in (
        ["crawl", str(corpus), "--out", str(fresh)],
        ["check", "--out", str(out)],
        ["stats", "--out", str(out)],
        ["compare", "--out", str(out)],
        ["compact", "--out", str(fresh)],
    ):
        result = runner.invoke(app, [*args, "--json"])
        assert result.exit_code in (0, 1), (args, result.output)
        json.loads(result.stdout)


def test_duckdb_never_draws_a_progress_bar(nights: tuple[Path, Path]) -> None:
    """DuckDB draws its bar on stdout during a long query: inside census's own output."""
    _, out = nights
    for con in (connect(Out(out)), connect(None), connect(Out(out), sandbox=True)):
        assert con.execute("SELECT current_setting('enable_progress_bar')").fetchall() == [(False,)]


def test_a_series_selected_by_label_is_compared_with_its_own_previous_point(
    tmp_path: Path,
) -> None:
    """Two teams' corpora crawled into one OUT in turn: team a's night is compared with team
    a's previous night (as `--run previous --label team=a` picks it), never with team b's
    healthier one in between, in the alarm and in the report's "what changed"."""
    broken = base_corpus(tmp_path / "a", 12)
    _break_closes_when(broken, 10)
    healthy = base_corpus(tmp_path / "b", 12)
    out = tmp_path / "out"
    for night, (team, corpus) in enumerate([("a", broken), ("b", healthy), ("a", broken)], start=1):
        crawl([str(corpus)], str(out), {"team": team}, workers=1, point=f"night-{night}")
    check(str(out))
    own = runner.invoke(
        app, ["check", "--out", str(out), "-l", "team=a", "--fail-on-regression", "--json"]
    )
    assert own.exit_code == 0, own.output
    overall = runner.invoke(app, ["check", "--out", str(out), "--fail-on-regression"])
    assert overall.exit_code == 1, "with no label, the previous point in OUT (team b's)"
    b_only = runner.invoke(
        app, ["check", "--out", str(out), "-l", "team=b", "--fail-on-regression"]
    )
    assert b_only.exit_code == 0 and "no previous census point" in b_only.stdout
    report = runner.invoke(
        app, ["report", "--out", str(out), "-l", "team=a", "--html", str(tmp_path / "a.html")]
    )
    assert report.exit_code == 0, report.output
    since = (tmp_path / "a.html").read_text().split('<section id="since">')[1]
    assert "From <code><bdi>night-1</bdi></code>" in since.split("</section>")[0]


def test_sql_selects_a_point_not_checked_yet_by_name(
    nights: tuple[Path, Path], tmp_path: Path
) -> None:
    """Ad hoc SQL may look at a night crawled but not checked yet when it names it; by
    default the selected point stays the latest checked one."""
    corpus, source = nights
    out = tmp_path / "out"
    shutil.copytree(source, out)
    crawl([str(corpus)], str(out), workers=1, point="night-5")
    query = "SELECT selected_point() AS p"
    named = runner.invoke(app, ["sql", query, "--out", str(out), "--run", "night-5", "-f", "csv"])
    assert (named.exit_code, named.stdout) == (0, "p\nnight-5\n"), named.output
    latest = runner.invoke(app, ["sql", query, "--out", str(out), "-f", "csv"])
    assert latest.stdout == "p\nnight-4\n"


def test_stats_and_report_name_a_later_point_not_checked_yet(
    nights: tuple[Path, Path], tmp_path: Path
) -> None:
    """The default is the latest checked point; a night crawled after it and not checked is
    named on stderr, so yesterday's numbers are not read as tonight's."""
    corpus, source = nights
    out = tmp_path / "out"
    shutil.copytree(source, out)
    crawl([str(corpus)], str(out), workers=1, point="night-5")
    note = (
        "note: census point night-5 is not checked yet; this shows night-4, the latest "
        "checked (run 'census check' first)\n"
    )
    shown = runner.invoke(app, ["stats", "--out", str(out), "--json"])
    assert shown.exit_code == 0 and shown.stderr == note, shown.output
    assert json.loads(shown.stdout)["unchecked_later"] == ["night-5"]
    page = tmp_path / "r.html"
    report = runner.invoke(app, ["report", "--out", str(out), "--html", str(page)])
    assert report.exit_code == 0 and report.stderr == note, report.output
    named = runner.invoke(app, ["stats", "--out", str(out), "--run", "night-4"])
    assert named.exit_code == 0 and named.stderr == "", "a point asked for by name needs no note"
    # compare's latest arm is the latest checked too: an eval that forgot to check the new
    # candidate is told so, not passed on yesterday's candidate in silence.
    compared = runner.invoke(app, ["compare", "--out", str(out)])
    assert compared.stderr == note.replace("this shows", "the candidate is"), compared.output
    check(str(out))
    after = runner.invoke(app, ["stats", "--out", str(out)])
    assert after.exit_code == 0 and after.stderr == "" and "night-5" in after.stdout


def test_a_later_point_of_other_labels_is_not_named(tmp_path: Path) -> None:
    """`stats --label team=a` named an unchecked team=b point as the later night, though a1
    is the latest team=a point; report and compare already named only the points the labels
    select (found by a hunt). One rule: the labels select the later points too."""
    corpus = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "c" / "repo")
    out = tmp_path / "out"
    crawl([str(corpus.parent)], str(out), workers=1, point="a1", labels={"team": "a"})
    check(str(out))
    crawl([str(corpus.parent)], str(out), workers=1, point="b1", labels={"team": "b"})
    shown = runner.invoke(app, ["stats", "--out", str(out), "--label", "team=a", "--json"])
    assert shown.exit_code == 0 and shown.stderr == "", shown.output
    assert json.loads(shown.stdout)["unchecked_later"] == []
    page = tmp_path / "r.html"
    report = ["report", "--out", str(out), "--label", "team=a", "--html", str(page)]
    assert runner.invoke(app, report).stderr == ""
    unlabelled = runner.invoke(app, ["stats", "--out", str(out), "--json"])
    assert json.loads(unlabelled.stdout)["unchecked_later"] == ["b1"]


def test_report_exits_1_on_an_alarm_it_was_asked_for(
    nights: tuple[Path, Path], tmp_path: Path
) -> None:
    """Night 4 regressed BS-FORK-01: with --fail-on-regression the report fails as check
    does (exit 1, the page written); without it the page shows the alarm and exits 0."""
    _, out = nights
    page = tmp_path / "r.html"
    asked = runner.invoke(
        app, ["report", "--out", str(out), "--html", str(page), "--fail-on-regression"]
    )
    assert asked.exit_code == 1 and page.is_file(), asked.output
    # The same alarms as check's, each a line on stderr (the report's exit 1 was bare).
    checked = runner.invoke(app, ["check", "--out", str(out), "--fail-on-regression"])
    assert checked.exit_code == 1 and "BS-FORK-01" in checked.stderr
    assert asked.stderr == checked.stderr
    shown = runner.invoke(app, ["report", "--out", str(out), "--html", str(page)])
    assert shown.exit_code == 0, shown.output
    assert "Alarm:" in page.read_text()
    # --fail-above alone asks for no regression alarm: exit 0 as check's, the regression shown.
    for command in (["report", "--html", str(page)], ["check"]):
        above = runner.invoke(app, [*command, "--out", str(out), "--fail-above", "0.99"])
        assert above.exit_code == 0 and above.stderr == "", above.output
    assert "Alarm:" in page.read_text()
    # One default watch: the page without the flag watches what check's bare flag does.
    watching = re.search(r"watching (\d+) metrics", page.read_text())
    assert watching is not None and int(watching[1]) == len(load_rules())


def test_rule_rates_are_keyed_by_run_id_as_the_spec_names_them(tmp_path: Path) -> None:
    """Spec §6: rule_rates per run_id. A run crawled alone is its own point and names its rates;
    a point of two runs (shards) is named by its last run, still one row per rule."""
    corpus = base_corpus(tmp_path / "c", 4)
    out = tmp_path / "out"
    alone = crawl([str(corpus)], str(out), workers=1).run_id
    first = crawl([str(corpus)], str(out), workers=1, point="night", shard=(1, 2)).run_id
    last = crawl([str(corpus)], str(out), workers=1, point="night", shard=(2, 2)).run_id
    check(str(out))
    con = connect(Out(out))
    rows = con.execute(
        "SELECT run_id, count(*), count(DISTINCT rule_id) FROM rule_rates GROUP BY run_id"
    ).fetchall()
    rules = con.execute("SELECT count(*) FROM rules").fetchone()[0]
    assert sorted(rows) == sorted([(alone, rules, rules), (last, rules, rules)])
    assert first not in {r[0] for r in rows}
    answer = runner.invoke(
        app,
        [
            "sql",
            f"SELECT count(*) AS n FROM rule_rates WHERE run_id = '{alone}'",
            "--out",
            str(out),
            "-f",
            "csv",
        ],
    )
    assert answer.stdout == f"n\n{rules}\n", answer.output


def test_sql_json_is_strict_json(nights: tuple[Path, Path]) -> None:
    """JSON has no NaN or infinity: they are null (Python's json wrote `NaN`, `-Infinity`,
    which strict parsers refuse), in lists and structs too."""
    _, out = nights
    query = (
        "SELECT 'nan'::double AS n, ln(0) AS i, [1.0, 'inf'::double] AS l, {'a': 2.5::double} AS s"
    )
    result = runner.invoke(app, ["sql", query, "--out", str(out), "--format", "json"])
    assert result.exit_code == 0, result.output

    def refuse(constant: str) -> None:
        raise ValueError(constant)

    rows = json.loads(result.stdout, parse_constant=refuse)
    assert rows == [{"n": None, "i": None, "l": [1.0, None], "s": {"a": 2.5}}]


def test_sql_json_writes_decimals_as_numbers(nights: tuple[Path, Path]) -> None:
    """A DECIMAL (a literal `2.5`, a sum of them) was written as the string "2.5"."""
    _, out = nights
    query = "SELECT 2.5 AS d, sum(x) AS s, [1.25] AS l FROM (VALUES (1.5), (2.0)) t(x)"
    result = runner.invoke(app, ["sql", query, "--out", str(out), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [{"d": 2.5, "s": 3.5, "l": [1.25]}]


@pytest.mark.parametrize("damage", ["cut", "garbled", "gone"])
def test_a_damaged_table_file_is_one_line_naming_out(
    nights: tuple[Path, Path], tmp_path: Path, damage: str
) -> None:
    """A table file of OUT cut short or deleted is damage to OUT, said in one line with exit 2
    (it was `internal error: …`, which reads as a bug of the census)."""
    _, source = nights
    out = tmp_path / "out"
    shutil.copytree(source, out)
    victim = sorted((out / "tables" / "forks").glob("*/*.parquet"))[0]
    if damage == "cut":
        victim.write_bytes(victim.read_bytes()[:100])
    elif damage == "garbled":
        # Footer intact, pages not: DuckDB says "Failed to read file …" only when it reads them.
        data = bytearray(victim.read_bytes())
        for i in range(8, len(data) // 2, 3):
            data[i] ^= 0x5A
        victim.write_bytes(bytes(data))
    else:
        victim.unlink()
    for command in ("check", "stats", "report", "sql"):
        recheck = ["--recheck"] if command == "check" else []  # check reads every point again
        # census sql said it as the query's fault ("docs/tables.md lists every view").
        query = ["SELECT count(*) FROM forks"] if command == "sql" else []
        result = runner.invoke(app, [command, *query, "--out", str(out), *recheck])
        lines = [line for line in result.stderr.splitlines() if "OUT is damaged" in line]
        assert result.exit_code == 2 and len(lines) == 1, (command, result.output)
        assert "internal error" not in result.stderr


DAMAGED_OUT = "census: OUT is damaged: a table file cannot be read ("
RESTORE = "; restore OUT from a copy, or crawl into a new --out"


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two sessions crawled and checked; a test damages a copy of OUT, never this one."""
    base = tmp_path_factory.mktemp("damaged")
    corpus = base_corpus(base / "corpus", 2)
    crawl([str(corpus)], str(base / "out"), workers=1)
    check(str(base / "out"))
    return corpus, base / "out"


def _copies(crawled: tuple[Path, Path], tmp_path: Path, changed: bool) -> tuple[Path, Path]:
    """A copy of the crawled OUT, and the corpus to crawl into it: the same (every session
    unchanged), or a copy with a fork added (every session read, as a new root's are)."""
    corpus, source = crawled
    out = tmp_path / "out"
    shutil.copytree(source, out)
    if changed:
        corpus = shutil.copytree(corpus, tmp_path / "corpus")
        _add_a_fork(corpus)
    return corpus, out


def _add_a_fork(corpus: Path) -> None:
    forks = sorted(corpus.glob("repo-*/docs/*/*/forks.md"))[0]
    forks.write_text(forks.read_text() + "\n## F77 — Should a new question wait? [open]\n")


def _crawl_refused_as_damaged(corpus: Path, out: Path) -> None:
    """A crawl of `corpus` into `out` says "OUT is damaged" in one line, exit 2, and commits
    nothing."""
    manifest = (out / "manifest.json").read_bytes()
    result = runner.invoke(app, ["crawl", str(corpus), "--out", str(out), "--workers", "1"])
    assert result.exit_code == 2, result.output
    [line] = result.stderr.splitlines()
    assert line.startswith(DAMAGED_OUT) and line.endswith(RESTORE), line
    assert (out / "manifest.json").read_bytes() == manifest, "the crawl committed a run"
    assert not any((out / "staging").glob("*")), "nothing is left staged"


@pytest.mark.parametrize("changed", [False, True], ids=["unchanged", "changed"])
@pytest.mark.parametrize("damage", ["cut", "gone"])
@pytest.mark.parametrize(
    "table", ["snapshots", "observations", "files", "parse_issues", "rule_results"]
)
def test_a_crawl_into_an_out_with_a_damaged_table_file_refuses_before_it_commits(
    crawled: tuple[Path, Path], tmp_path: Path, table: str, damage: str, changed: bool
) -> None:
    """A crawl into an OUT whose table file was cut short or deleted said `internal error:
    ArrowInvalid: Parquet magic bytes not found …` or "Failed to open local file …; check the
    disk", and when no session had changed (or none it read) committed its run, exit 0, onto
    an OUT the next check refused as damaged (found by a test session). It refuses as check
    does, whether or not a session changed: the tables it does not read are damage too."""
    corpus, out = _copies(crawled, tmp_path, changed)
    victim = sorted((out / "tables" / table).glob("*/*.parquet"))[0]
    if damage == "cut":
        victim.write_bytes(victim.read_bytes()[:100])
    else:
        victim.unlink()
    _crawl_refused_as_damaged(corpus, out)


def test_a_crawl_that_reads_a_garbled_table_file_says_out_is_damaged(
    crawled: tuple[Path, Path], tmp_path: Path
) -> None:
    """A snapshots file whose footer is whole and whose pages are garbled passes the crawl's
    look at each file's ends; the crawl that then read it (a session changed) said `internal
    error: OSError: Couldn't deserialize thrift …`."""
    corpus, out = _copies(crawled, tmp_path, changed=True)
    victim = sorted((out / "tables" / "snapshots").glob("*/*.parquet"))[0]
    data = bytearray(victim.read_bytes())
    for i in range(8, len(data) // 2, 3):
        data[i] ^= 0x5A
    victim.write_bytes(bytes(data))
    _crawl_refused_as_damaged(corpus, out)


def test_a_lost_manifest_never_re_decides_a_checked_point(
    nights: tuple[Path, Path], tmp_path: Path
) -> None:
    """Without manifest.json an OUT was read as one from before it, and check decided its
    checked points again from whatever lay in tables/: it is damage, said in one line."""
    _, source = nights
    out = tmp_path / "out"
    shutil.copytree(source, out)
    (out / "manifest.json").unlink()
    before = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    for command in ("check", "stats", "report", "sql"):
        query = ["SELECT count(*) FROM rule_rates"] if command == "sql" else []
        result = runner.invoke(app, [command, *query, "--out", str(out)])
        assert result.exit_code == 2, (command, result.output)
        assert "manifest.json is missing, yet OUT holds checked census points" in result.stderr
        assert len(result.stderr.splitlines()) == 1, result.stderr
    after = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert after == before, "nothing was written"


def test_sql_parquet_goes_to_stdout_as_the_spec_writes_it(
    nights: tuple[Path, Path], tmp_path: Path
) -> None:
    """Spec §8: `census sql "SELECT …" --out OUT --format parquet`, with no --output, sent to a
    file or a pipe, writes the Parquet bytes there (it was exit 2 asking for --output)."""
    import pyarrow.parquet as pq

    _, out = nights
    target = tmp_path / "rates.parquet"
    query = "SELECT point, rule_id, rate FROM rule_rates"
    with open(target, "wb") as handle:
        done = subprocess.run(
            [str(CENSUS), "sql", query, "--out", str(out), "--format", "parquet"],
            stdout=handle,
            stderr=subprocess.PIPE,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    table = pq.read_table(target)
    assert table.column_names == ["point", "rule_id", "rate"] and table.num_rows > 0


def test_a_macro_replaced_in_census_duckdb_from_the_cli_changes_no_census_figure(
    nights: tuple[Path, Path], tmp_path: Path
) -> None:
    """The DuckDB CLI opens census.duckdb read-write unless told -readonly, so a maintainer's
    `CREATE OR REPLACE MACRO z95() AS 1.0` (68% intervals for an afternoon) stayed in the file,
    whose stamp still matched: stats, check and the report then gave BS-FORK-01's 95% interval
    as 3.2% – 19.8% where census sql gave 1.5% – 35.4%, and the next commit kept the macro
    (found by a hunt). census.duckdb's digest is recorded: an altered file is not read, and is
    made whole again."""
    import duckdb

    from pipeline.aftercommit import is_fresh, refresh_database

    _, source = nights
    out = tmp_path / "out"
    shutil.copytree(source, out)
    refresh_database(Out(out))  # census.duckdb as this census writes it
    cli = duckdb.connect(str(out / "census.duckdb"))
    cli.execute("CREATE OR REPLACE MACRO z95() AS 1.0")
    cli.execute("CREATE OR REPLACE VIEW my_failures AS SELECT * FROM rule_rates WHERE failed > 0")
    cli.close()
    assert not is_fresh(Out(out))
    query = "SELECT rule_id, rate_lo, rate_hi FROM rule_rates WHERE point = 'night-4'"
    sandboxed = json.loads(runner.invoke(app, ["sql", query, "--out", str(out), "--json"]).stdout)
    stats = json.loads(runner.invoke(app, ["stats", "--out", str(out), "--json"]).stdout)
    assert {r["rule_id"]: (r["rate_lo"], r["rate_hi"]) for r in stats["rule_rates"]} == {
        r["rule_id"]: (r["rate_lo"], r["rate_hi"]) for r in sandboxed
    }
    assert is_fresh(Out(out)), "the first command rebuilt it"
    rebuilt = duckdb.connect(str(out / "census.duckdb"), read_only=True)
    assert rebuilt.execute("SELECT CAST(z95() AS DOUBLE)").fetchone()[0] > 1.95
    # The maintainer's own view stays: only census's objects are census's to restore.
    assert rebuilt.execute("SELECT count(*) FROM my_failures").fetchone()[0] > 0


def test_sql_asks_again_when_a_compaction_swept_the_files_it_was_reading(
    nights: tuple[Path, Path], tmp_path: Path
) -> None:
    """A `census sql` running while the nightly check compacted OUT ended in exit 2, "Failed
    to open local file …; check the disk", though nothing was wrong: the compaction had swept
    the files its query was reading. The query is asked again over OUT's new files (found by a
    hunt); an error of the query's own is still said as before."""
    from pipeline.adhoc import run_query
    from pipeline.errors import UsageError
    from pipeline.maintain import compact

    _, source = nights
    out = tmp_path / "out"
    shutil.copytree(source, out)
    query = "SELECT count(*) AS n FROM observations"
    before = run_query(str(out), query, "csv", None)
    opened = connect(Out(out), sandbox=True)  # the query's connection, before the compaction
    summary = compact(str(out))
    assert summary.files_after < summary.files_before  # it swept the files `opened` reads
    assert run_query(str(out), query, "csv", None, con=opened) == before
    with pytest.raises(UsageError, match="nope"):  # a query's own error is said as before
        run_query(str(out), "SELECT nope FROM observations", "csv", None)


def test_files_a_compaction_swept_under_a_reader_are_no_damage(
    nights: tuple[Path, Path], tmp_path: Path
) -> None:
    """`census report` running while `census compact` (or a nightly check's compaction)
    committed lost the files it had listed, and said "OUT is damaged: a table file cannot be
    read …; restore OUT from a copy, or crawl into a new --out", exit 2: advice to throw a
    whole OUT away (found by a hunt). A file gone that OUT no longer lists is a sweep; one
    gone that OUT still lists is damage."""
    import duckdb

    from pipeline.errors import swept_file
    from pipeline.maintain import compact

    _, source = nights
    out = tmp_path / "out"
    shutil.copytree(source, out)
    reader = connect(Out(out))  # a command's connection, opened before the compaction
    compact(str(out))
    with pytest.raises(duckdb.Error) as swept:
        reader.execute("SELECT count(*) FROM observations").fetchall()
    assert swept_file(swept.value, str(out))
    victim = sorted((out / "tables" / "observations").glob("*/*.parquet"))[0]
    victim.unlink()
    with pytest.raises(duckdb.Error) as damaged:
        connect(Out(out)).execute("SELECT count(*) FROM observations").fetchall()
    assert not swept_file(damaged.value, str(out))
