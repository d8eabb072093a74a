"""The scheduled census's alarms, decided once for `census check`, `census run` and the report.

    --fail-above RATE            a rule whose rate at the census point is above RATE
    --fail-on-regression [M,…]   a metric worse than at the previous census point beyond its
                                 interval (compare's test); M is `rules` (every rule, the
                                 default), a rule ID, `clean-share` or `fork-median-hours`

Each tripped alarm is one line naming the metric, the two values and the interval; the
closing line names every rule that tripped, or says there was none.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pipeline.compare import CLEAN, MEDIAN, Comparison, Row, between
from pipeline.engine import connect, fetch_dicts
from pipeline.errors import UsageError
from pipeline.rules import load_rules
from pipeline.select import Point, previous, resolve
from pipeline.stats import RuleRate, keep_rule_rates, records, rule_rates
from pipeline.store import Out
from pipeline.textout import difference_interval, pct, pct_above, pct_exact, plural, reached


def parse_metrics(values: list[str]) -> list[str]:
    """`rules`, rule IDs, `clean-share`, `fork-median-hours` (comma-separated or repeated)."""
    known = {r.rule_id for r in load_rules()}
    metrics: list[str] = []
    for value in values:
        names = [v.strip() for v in value.split(",")]
        if not all(names):
            # An empty $METRICS in a scheduler's command line watched nothing and exited 0.
            what = "has an empty metric name" if value.strip() else "names no metric"
            raise UsageError(
                f"--fail-on-regression {value!r} {what}; give rules, a rule ID, {CLEAN} or "
                f"{MEDIAN}, comma-separated, or no value for rules"
            )
        for name in names:
            if name == "rules":
                metrics += sorted(known)
            elif name in known or name in (CLEAN, MEDIAN):
                metrics.append(name)
            else:
                raise UsageError(
                    f"--fail-on-regression {name!r} is not a metric; use rules, a rule ID, "
                    f"{CLEAN} or {MEDIAN}"
                )
    return list(dict.fromkeys(metrics))


@dataclass
class AlarmReport:
    out: str
    point: Point
    rates: list[Any]
    threshold: float | None = None
    above: list[RuleRate] = field(default_factory=list)
    watched: list[str] = field(default_factory=list)
    baseline: Point | None = None
    regressions: list[Row] = field(default_factory=list)
    comparison: Comparison | None = None
    gate: str | None = None  # the rates shown are every session's at this gate
    # Sessions at the baseline, when the point saw none of them (a checkout gone, a wrong
    # root): every rate is then "no sessions", which no regression test can flag.
    emptied: int = 0
    # The points between the baseline and this one that saw no session (alarm_baseline).
    passed_over: list[str] = field(default_factory=list)
    # Watched rules the baseline measured and this point skipped on every session (a
    # checkout that lost its .git): nothing shows they hold (compare.SKIPPED_EVERYWHERE).
    skipped: list[Row] = field(default_factory=list)

    @property
    def tripped(self) -> bool:
        return bool(self.above or self.regressions or self.skipped or self.emptied)

    @property
    def untested(self) -> str | None:
        """Why the watched metrics that count rules were not tested for a regression (the
        previous point was measured with other rules or readers: compare.other_measure), else
        None."""
        if self.comparison is None or not any(m != MEDIAN for m in self.watched):
            return None
        return self.comparison.other_measure

    @property
    def disjoint(self) -> bool:
        """Whether the point was tested against a previous one that shares no session with it (a
        root moved, repositories renamed): the test ran, two-sample, on two populations."""
        return bool(self.watched and self.comparison and self.comparison.disjoint)

    def note_lines(self) -> list[str]:
        """What the reader of a passing night must know about its test (stderr, not an alarm:
        spec §9 compares two populations two-sample, and the exit code stays)."""
        if not self.disjoint or self.baseline is None:
            return []
        return [
            f"note: census point {self.point.name} shares no session with {self.baseline.name} "
            "(a root moved, or repositories renamed?): its regression test compared two "
            "populations, two-sample"
        ]

    def untested_line(self) -> str | None:
        """The line on stderr that says the regression test could not be made (exit 2)."""
        if not self.untested:
            return None
        return f"cannot test {self.point.name} for regressions: {self.untested}"

    def alarm_lines(self) -> list[str]:
        assert self.threshold is not None or not self.above
        where = f" (every session at the {self.gate} gate)" if self.gate else ""
        lines = [
            f"{r.rule_id} at {self.point.name}{where} is {pct_above(r.rate, self.threshold)} "
            f"({r.failed}/{r.evaluated}), above {pct_exact(self.threshold)}"
            for r in self.above
            if r.rate is not None and self.threshold is not None
        ]
        lines += [self._regression_line(r) for r in self.regressions]
        lines += [self._skipped_line(r) for r in self.skipped]
        if self.emptied:
            assert self.baseline is not None
            lines.append(
                f"census point {self.point.name} saw no session, where {self.baseline.name} "
                f"saw {self.emptied}"
            )
        return lines

    def _regression_line(self, row: Row) -> str:
        hours = row.metric == MEDIAN
        # A median the curve never reaches reads as compare and the report show it.
        value = (lambda v: reached(v, unit="h")) if hours else pct
        span = f" ({difference_interval(row.lower, row.upper, hours)})"
        assert self.baseline is not None
        return (
            f"{row.metric} regressed from {value(row.baseline.value)} at {self.baseline.name} "
            f"to {value(row.candidate.value)} at {self.point.name}{span}"
        )

    def _skipped_line(self, row: Row) -> str:
        assert self.baseline is not None
        return (
            f"{row.metric} was measured on {plural(row.baseline.evaluated, 'session')} at "
            f"{self.baseline.name} and skipped on every session at {self.point.name} "
            f"({row.candidate.skipped:,} skipped)"
        )

    def check_flags(self) -> str:
        """The `census check` options that raise these same alarms (`rules` for every rule)."""
        flags = [] if self.threshold is None else [f"--fail-above {self.threshold}"]
        if self.watched:
            known = sorted(r.rule_id for r in load_rules())
            every = set(known) <= set(self.watched)
            named = [m for m in self.watched if not (every and m in known)]
            if every and not named:
                flags.append("--fail-on-regression")
            else:
                flags.append(
                    "--fail-on-regression " + ",".join((["rules"] if every else []) + named)
                )
        return " ".join(flags)

    def closing_line(self) -> str:
        parts = []
        if self.threshold is not None:
            names = ", ".join(r.rule_id for r in self.above) or "none"
            parts.append(f"above {pct_exact(self.threshold)}: {names}")
        if self.watched:
            if self.baseline is None:
                parts.append("regressions: no previous census point to compare with")
            else:
                gone = ["every session"] if self.emptied else []
                worse = [*self.regressions, *self.skipped]
                names = ", ".join([*gone, *(r.metric for r in worse)])
                if self.untested:
                    found = f" ({names} regressed)" if names else ""
                    since = f"since {self.baseline.name}{found}"
                    parts.append(f"rules not tested for regressions {since}: {self.untested}")
                else:
                    apart = (
                        f" ({self.point.name} shares no session with it)" if self.disjoint else ""
                    )
                    apart += self._passed_over_text()
                    parts.append(f"regressed since {self.baseline.name}{apart}: {names or 'none'}")
        if not parts:
            return f"census point {self.point.name}: no alarm asked for"
        verdict = "ALARM" if self.tripped else "UNTESTED" if self.untested else "no alarm"
        return f"{verdict} at {self.point.name}; " + "; ".join(parts)

    def _passed_over_text(self) -> str:
        if not self.passed_over:
            return ""
        saw = "saw" if len(self.passed_over) == 1 else "each saw"
        return f" ({', '.join(self.passed_over)} {saw} no session)"

    def findings(self) -> list[dict[str, Any]]:
        """The point's findings for SARIF: at each session's own gate, or, with a gate, those
        of every session at that gate (the rates printed)."""
        con = connect(Out(self.out))
        query = (
            "SELECT * FROM findings_at($gate) WHERE point = $point "
            "ORDER BY repo_path, path, rule_id, line"
        )
        return fetch_dicts(con, query, {"point": self.point.name, "gate": self.gate})

    def as_json(self, summary: Any = None) -> dict[str, Any]:
        from dataclasses import asdict

        return {
            "point": self.point.name,
            "checked": list(summary.points) if summary is not None else [],
            "rates": [asdict(r) for r in self.rates],
            "above": [r.rule_id for r in self.above],
            "threshold": self.threshold,
            "baseline": self.baseline.name if self.baseline else None,
            "regressions": [asdict(r) for r in self.regressions],
            "skipped_everywhere": [r.metric for r in self.skipped],
            "alarms": self.alarm_lines(),
            "tripped": self.tripped,
            "untested": self.untested,
            "no_session_in_common": self.disjoint,
            "passed_over": self.passed_over,
        }


def exit_code(reports: list[AlarmReport]) -> int:
    """1 when an alarm tripped; else 2 when a regression test asked for could not be made (the
    rules changed since the previous point), which must not read as a pass; else 0."""
    if any(r.tripped for r in reports):
        return 1
    return 2 if any(r.untested for r in reports) else 0


def evaluate(
    out_path: str,
    run: str | None,
    labels: dict[str, str],
    gate: str | None,
    threshold: float | None,
    metrics: list[str],
    comparison: Comparison | None = None,
    con: Any = None,
) -> AlarmReport:
    """The selected point's rates (each session at its own gate, or all at `gate`) and the
    alarms asked for. A threshold reads the rates shown (with `gate`, those at that gate: a
    shown 70% never passes --fail-above 0.5); regressions, the own-gate rate. `comparison`,
    when the caller has already compared the previous point with this one, is used as is;
    `con`, a connection to OUT the caller holds (the report's)."""
    con = con or connect(Out(out_path))
    point = resolve(con, run, labels, checked=True)
    keep_rule_rates(con, point)
    own = rule_rates(con, point.name)
    rates: list[Any] = own
    if gate is not None:
        rates = records(
            con,
            RuleRate,
            "SELECT * FROM rule_rates_at_gate WHERE point = $point AND gate = $gate "
            "ORDER BY rule_id",
            {"point": point.name, "gate": gate},
        )
    report = AlarmReport(out_path, point, rates, threshold, watched=metrics, gate=gate)
    if threshold is not None:
        report.above = [r for r in rates if r.rate is not None and r.rate > threshold]
    if metrics:
        report.baseline, report.passed_over = alarm_baseline(con, point, labels)
        if report.baseline is not None:
            if comparison is None or comparison.baseline.name != report.baseline.name:
                comparison = between(con, report.baseline, point)
            report.comparison = comparison
            wanted = set(metrics)
            report.regressions = [r for r in report.comparison.regressions if r.metric in wanted]
            skipped = report.comparison.skipped_everywhere
            report.skipped = [r for r in skipped if r.metric in wanted]
            report.emptied = report.comparison.emptied
    return report


def alarm_baseline(
    con: Any, point: Point, labels: dict[str, str]
) -> tuple[Point | None, list[str]]:
    """The point a night's regressions are tested against: the one before it, or, past the
    points that saw no session (a checkout gone, whose own alarm tripped), the last that saw
    one, with the names of those passed over. A night tested against an empty one alone was
    never worse than it, so a regression across the outage never alarmed."""
    before = previous(con, point, labels)
    passed: list[str] = []
    earlier = before
    while earlier is not None and not _saw_a_session(con, earlier):
        passed.append(earlier.name)
        earlier = previous(con, earlier, labels)
    if earlier is None:  # no earlier point saw a session: the one before, as it is
        return before, []
    return earlier, passed


def _saw_a_session(con: Any, point: Point) -> bool:
    query = "SELECT count(*) > 0 FROM point_sessions WHERE point = $point"
    return bool(con.execute(query, {"point": point.name}).fetchone()[0])


def evaluate_checked_with(
    out_path: str, shown: AlarmReport, labels: dict[str, str], threshold: float | None
) -> list[AlarmReport]:
    """The alarms of the other points that the check which decided `shown`'s point decided
    with it (a night whose check did not run is decided by the next night's), as that check
    raised them: the report shows them beside the shown point's, as check's exit code
    covered them."""
    # Only the points that check decided first: a re-check decides every point again, and the
    # report after one alarmed on each earlier night its own check had alarmed on already.
    rows = connect(Out(out_path)).execute(
        "WITH shown AS (SELECT check_id FROM points WHERE point = $point) "
        "SELECT point FROM points WHERE check_id = (FROM shown) AND point <> $point "
        "AND point NOT IN (SELECT point FROM checks WHERE check_id < (FROM shown)) "
        "ORDER BY position",
        {"point": shown.point.name},
    )
    decided = [row[0] for row in rows.fetchall()]
    return evaluate_decided(out_path, decided, shown, labels, shown.gate, threshold, shown.watched)


def evaluate_decided(
    out_path: str,
    decided: list[str],
    shown: AlarmReport,
    labels: dict[str, str],
    gate: str | None,
    threshold: float | None,
    metrics: list[str],
) -> list[AlarmReport]:
    """The alarms of the other points one check decided that the selection's labels take,
    beside the shown one's: a scheduled check that missed a night decides two, and the earlier
    night's regression would otherwise never alarm (its figures are frozen, and every later
    check compares later nights). Only with the latest point shown, however it was named
    (`--run latest`, its name or a run id of it)."""
    from pipeline.errors import SelectorError

    if threshold is None and not metrics:
        return []
    con = connect(Out(out_path))
    if resolve(con, None, labels, checked=True).name != shown.point.name:
        return []
    reports = []
    for name in decided:
        if name == shown.point.name:
            continue
        try:
            reports.append(evaluate(out_path, name, labels, gate, threshold, metrics, con=con))
        except SelectorError:  # a point the labels do not take
            continue
    return reports
