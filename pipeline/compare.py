"""`census compare`: did the candidate break rules more often than the baseline, beyond noise?

Each arm is a census point, chosen with the selector every command uses (pipeline.select).
For every rule, and for the share of sessions clean at their own gate, queries/stats/
compare.sql gives each arm's failed/evaluated exactly as rule_rates counts them, and the
difference (candidate − baseline) with Newcombe's interval: paired, when both arms evaluate
the metric on the same sessions (the replay design; McNemar's exact test on the discordant
pairs), two-sample otherwise. The fork-lifetime median's difference has an interval built
from the two arms' median intervals (median_row). A row regresses when the candidate is worse
and the interval excludes zero, and improves when it is better and the interval excludes zero.

The 19 rules, the clean share and the fork-lifetime median are a family of m comparisons;
intervals are Bonferroni-simultaneous at 95% (each at 1 − 0.05/m), so a candidate drawn
from the baseline's own rates flags nothing in at least 95% of replays, not ~1 − 0.95^m.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from statistics import NormalDist
from typing import Any

from pipeline.engine import connect, fetch_dicts
from pipeline.errors import SelectorError
from pipeline.rules import NOT_APPLICABLE_SKIPS, load_rules
from pipeline.select import (
    Point,
    all_points,
    earlier_carrying,
    labels_text,
    resolve,
    unchecked_after,
    unchecked_note,
)
from pipeline.stats import (
    CurvePoint,
    Lifetime,
    history_runs,
    hours_lifetime,
    keep_session_verdicts,
    query_sql,
)
from pipeline.store import Out
from pipeline.vocabulary import GATES, Z95

FAMILY_ALPHA = 0.05
MEDIAN = "fork-median-hours"
# The median's verdict when an arm has no fork with a lifetime: its sessions may all be there.
NO_FORKS = "no forks"
# The verdict of a metric the baseline measured and the candidate skipped on every session
# it holds (BS-OPS-02 with no git context): nothing shows it holds, which fails closed.
SKIPPED_EVERYWHERE = "skipped everywhere"
# The verdicts of a row no test was run on.
UNTESTED = ("no sessions", NO_FORKS, SKIPPED_EVERYWHERE)
CLEAN = "clean-share"
# The verdict of a rule or clean-share row between points not measured alike (other_measure).
OTHER_MEASURE = "other measure"


@dataclass(frozen=True)
class Selector:
    """An arm: a run, census point, `latest` or `previous`, among the points with `labels`."""

    run: str | None = None
    labels: dict[str, str] = field(default_factory=dict)


@dataclass
class Arm:
    # What value counts of evaluated: sessions failing the rule; for clean-share, sessions
    # clean; for fork-median-hours, forks closed (of those with a lifetime).
    count: int
    evaluated: int
    value: float | None  # the rate (or the share, or the median in hours)
    # Sessions the rule skipped, out of `evaluated` and shown beside it (spec §7); for
    # clean-share, sessions with no verdict; 0 for fork-median-hours.
    skipped: int = 0


@dataclass
class Row:
    metric: str  # a rule ID, "clean-share" or "fork-median-hours"
    gate: str
    design: str | None  # paired, two-sample or medians; None where no test ran (no sessions)
    baseline: Arm
    candidate: Arm
    difference: float | None = None
    lower: float | None = None
    upper: float | None = None
    p_value: float | None = None
    # regression, improvement, unchanged, no sessions, skipped everywhere, other measure
    verdict: str = "unchanged"
    worse_when: str = "higher"


@dataclass
class Comparison:
    baseline: Point
    candidate: Point
    family_size: int
    confidence: float
    rows: list[Row] = field(default_factory=list)
    # The baseline's sessions when the candidate has none (a replay that wrote nothing, a
    # wrong root), else 0: every rate is then "no sessions", which no test can flag.
    emptied: int = 0
    # The candidate's sessions when the baseline has none (a wrong folder for the baseline):
    # nothing was compared, which must not read as a pass.
    baseless: int = 0
    # Neither arm saw a session (two replays that wrote nothing, two wrong folders): nothing
    # was compared either, which must not read as a pass.
    unseen: bool = False
    # Sessions of one arm matched by none of the other's (same_session), when both saw some:
    # a replay that lost sessions is compared on the rest, and says so.
    baseline_only: int = 0
    candidate_only: int = 0
    # Both arms saw sessions and none of them is in the other: every row is two populations'.
    disjoint: bool = False
    # What the reader should know about how the arms were chosen (printed on stderr).
    notes: list[str] = field(default_factory=list)
    # Why the rule and clean-share rows are not compared (other_measure), when they are not.
    other_measure: str | None = None

    @property
    def regressions(self) -> list[Row]:
        return [r for r in self.rows if r.verdict == "regression"]

    @property
    def skipped_everywhere(self) -> list[Row]:
        return [r for r in self.rows if r.verdict == SKIPPED_EVERYWHERE]

    @property
    def tripped(self) -> bool:
        """Whether the candidate is worse: a regression, a metric it skipped on every session
        where the baseline measured it, or no session where the baseline had some (`compare`
        exits 1, as `check --fail-on-regression` does); or nothing could be compared, the
        baseline having no session (or neither arm)."""
        return bool(
            self.regressions
            or self.skipped_everywhere
            or self.emptied
            or self.baseless
            or self.unseen
        )

    def counts(self) -> dict[str, int]:
        verdicts = ("regression", "improvement", "unchanged", *UNTESTED)
        return {v: sum(r.verdict == v for r in self.rows) for v in verdicts}

    def as_json(self) -> dict[str, Any]:
        def arm(point: Point) -> dict[str, Any]:
            return {"point": point.name, "labels": point.labels, "runs": list(point.runs)}

        return {
            "baseline": arm(self.baseline),
            "candidate": arm(self.candidate),
            "family_size": self.family_size,
            "confidence": self.confidence,
            "counts": self.counts(),
            "emptied": self.emptied,
            "baseless": self.baseless,
            "unseen": self.unseen,
            "baseline_only": self.baseline_only,
            "candidate_only": self.candidate_only,
            # A gate that reads --json alone must see what stderr says of how the arms were chosen.
            "notes": self.notes,
            "rows": [asdict(r) for r in ordered(self.rows)],
        }


def ordered(rows: list[Row]) -> list[Row]:
    rank = {
        "regression": 0,
        SKIPPED_EVERYWHERE: 1,
        "improvement": 2,
        "unchanged": 3,
        "no sessions": 4,
        NO_FORKS: 4,
        OTHER_MEASURE: 5,
    }
    return sorted(
        rows,
        key=lambda r: (rank[r.verdict], r.metric, GATES.index(r.gate) if r.gate in GATES else 9),
    )


def mcnemar_exact(only_base: int, only_cand: int) -> float:
    """Two-sided exact McNemar p-value: a binomial test of the discordant pairs at 1/2."""
    k, n = min(only_base, only_cand), only_base + only_cand
    if n == 0:
        return 1.0
    tail: float = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2.0 * tail)


def other_measure(base: Point, cand: Point, roles: tuple[str, str] = ("", "")) -> str | None:
    """Why two checked points' rule rates cannot be compared, when their checks used different
    rule sets or their runs read the files with different readers (a census upgrade between
    them): a rate, a clean share or a verdict is one measure under one of each, and a difference
    across two would be the upgrade's own. `roles` put each point's part before its name
    ('the baseline ', 'the candidate '), so an eval's reader knows which arm to redo."""
    before, after = f"{roles[0]}{base.name}", f"{roles[1]}{cand.name}"
    if base.ruleset != cand.ruleset:
        return (
            f"{before} was checked with rule set {base.ruleset} and {after} with "
            f"{cand.ruleset}, so their rule rates and clean shares are not one measure; "
            "census check --recheck checks every point with the current rules"
        )
    if base.readers != cand.readers:
        return (
            f"{before} was read with census readers version {', '.join(base.readers)} and "
            f"{after} with {', '.join(cand.readers)}, so their rule rates and clean shares "
            "are not one measure; the next point read with this census is compared with "
            f"{cand.name} (an eval: crawl both arms again with one census)"
        )
    return None


def verdict(row: Row) -> str:
    """Regression or improvement when the difference's interval excludes zero (a side left
    unbounded, None, excludes nothing); which of the two, by the metric's worse direction."""
    if row.baseline.evaluated and not row.candidate.evaluated and row.candidate.skipped:
        return SKIPPED_EVERYWHERE
    if not row.baseline.evaluated or not row.candidate.evaluated:
        return NO_FORKS if row.metric == MEDIAN else "no sessions"
    above = row.lower is not None and row.lower > 0
    below = row.upper is not None and row.upper < 0
    if not above and not below:
        return "unchanged"
    worse = above if row.worse_when == "higher" else below
    return "regression" if worse else "improvement"


def untested(row: Row) -> Row:
    """A row no test was run on (an arm evaluated nothing) names no design: 'two-sample'
    there read as a test that found nothing."""
    if row.verdict in UNTESTED:
        row.design = None
    return row


def compare(out_path: str, baseline: Selector, candidate: Selector) -> Comparison:
    out = Out(out_path)
    out.require()
    con = connect(out)
    # The baseline a selector names is resolved first, so its error comes first.
    # `previous` is the point before the candidate (among those carrying the baseline's
    # labels), with labels too: with them it was the one before the latest, later than the
    # candidate it was compared with (found by a hunt).
    before = baseline.run == "previous"
    named = None if before else resolve(con, baseline.run, baseline.labels, checked=True)
    cand = resolve(con, candidate.run, candidate.labels, checked=True)
    base = named or _point_before(con, cand, baseline.labels)
    if base.name == cand.name:
        # One point against itself is never a pass: the candidate's crawl failed, or the
        # selectors name one night (`--baseline run=baseline` alone takes the latest).
        raise SelectorError(
            f"the baseline and the candidate are both census point {base.name!r}; select "
            "another for one of them (--candidate k=v; census compare also takes "
            "--candidate-run NAME)"
        )
    differ = other_measure(base, cand, ("the baseline ", "the candidate "))
    if differ:
        # An eval gates on the verdict: a difference made by a census upgrade is no verdict.
        raise SelectorError(f"cannot compare: {differ}")
    result = between(con, base, cand)
    for arm, selector, point in (("baseline", baseline, base), ("candidate", candidate, cand)):
        if selector.run in (None, "latest"):
            # The arm is its latest checked point: a later one crawled for it is not counted.
            later = unchecked_after(con, point, selector.labels)
            note = unchecked_note(later, point, f"the {arm} is")
            if note:
                result.notes.append(note)
        left = earlier_carrying(con, point, selector.labels) if selector.run is None else []
        if left:
            carry = "also carries" if len(left) == 1 else "also carry"
            result.notes.append(
                f"note: the {arm} is census point {point.name} alone; {', '.join(left)} "
                f"{carry} {labels_text(selector.labels)} and {'is' if len(left) == 1 else 'are'} "
                "not counted (crawl an arm's runs into one --point to count them together)"
            )
    return result


def _point_before(con: Any, cand: Point, labels: dict[str, str]) -> Point:
    """The default baseline: the checked point before the candidate (before the latest only
    when the candidate is the latest), among those carrying `labels` when given."""
    earlier = [p for p in all_points(con) if p.checked and p.position < cand.position]
    if labels:
        kept = set(earlier_carrying(con, cand, labels))
        earlier = [p for p in earlier if p.name in kept]
    if not earlier:
        carrying = f" carrying {labels_text(labels)}" if labels else ""
        raise SelectorError(
            f"no checked census point before {cand.name!r}{carrying} to compare it with; "
            "name the baseline with --baseline-run or --baseline"
        )
    return earlier[-1]


def between(
    con: Any, base: Point, cand: Point, known: dict[str, Lifetime] | None = None
) -> Comparison:
    """Two census points compared on a connection to OUT; `known`: fork-lifetime summaries
    the caller already has, by point name (the report's statistics hold the current one)."""
    known = known or {}
    keep_session_verdicts(con, max(base, cand, key=lambda p: p.position))
    family = len(load_rules()) + 2
    z = NormalDist().inv_cdf(1 - FAMILY_ALPHA / family / 2)
    result = Comparison(base, cand, family, 1 - FAMILY_ALPHA / family)
    result.other_measure = other_measure(base, cand)
    params = {"baseline": base.name, "candidate": cand.name, "z": z}
    for r in fetch_dicts(con, query_sql("compare"), params):
        row = Row(
            r["metric"],
            r["gate"],
            "paired" if r["paired"] else "two-sample",
            Arm(r["f_baseline"], r["n_baseline"], r["baseline"], r["s_baseline"]),
            Arm(r["f_candidate"], r["n_candidate"], r["candidate"], r["s_candidate"]),
            r["difference"],
            r["lower"],
            r["upper"],
            mcnemar_exact(r["only_baseline"], r["only_candidate"]) if r["paired"] else None,
            worse_when="lower" if r["metric"] == CLEAN else "higher",
        )
        # Fork lifetimes read crawled history alone: only the median row survives other rules.
        row.verdict = OTHER_MEASURE if result.other_measure else verdict(row)
        result.rows.append(row)
    _no_longer_applies(con, cand, result.rows)
    result.rows = [untested(row) for row in result.rows]
    _doubt_clean_improvement(result)
    base_life, cand_life = (known.get(p.name) or point_lifetime(con, p) for p in (base, cand))
    result.rows.append(untested(median_row(base_life, cand_life, z)))
    before, after, result.baseline_only, result.candidate_only = _matched(con, base, cand)
    result.emptied, result.baseless = (before if not after else 0), (after if not before else 0)
    result.unseen = not before and not after
    if not before or not after:
        result.baseline_only = result.candidate_only = 0
    result.disjoint = bool(before and after and result.baseline_only == before)
    return result


# The candidate's skips of a rule that hide a measure: every one but those saying the rule does
# not apply (spec §5: `ops/ removed at harvest` in a history folder, `no manifest` where none
# exists), not that its evidence went missing (no git context, no repository layout).
HIDING_SKIPS = """
SELECT DISTINCT r.rule_id
FROM point_sessions ps
JOIN points p ON p.point = ps.point
JOIN own_gate_results r ON r.snapshot_id = ps.snapshot_id AND r.ruleset = p.ruleset
WHERE ps.point = $point AND list_contains($rules, r.rule_id) AND r.status = 'skipped'
    AND gate_includes(ps.gate, r.gate)
    AND NOT list_contains($not_applicable, coalesce(r.message, ''))
"""


def _no_longer_applies(con: Any, cand: Point, rows: list[Row]) -> None:
    """A rule skipped on every candidate session only because it does not apply to any (each
    was harvested since, its ops/ gone by design, or holds no manifest for a manifest rule)
    measures nothing: 'no sessions', as for a rule with none to measure, not 'skipped
    everywhere', which trips compare and the nightly alarm on a healthy night's harvests
    (found by two hunts, the harvested case first)."""
    skipped = [r.metric for r in rows if r.verdict == SKIPPED_EVERYWHERE]
    if not skipped:
        return
    params = {"point": cand.name, "rules": skipped, "not_applicable": list(NOT_APPLICABLE_SKIPS)}
    hiding = {rule for (rule,) in con.execute(HIDING_SKIPS, params).fetchall()}
    for row in rows:
        if row.verdict == SKIPPED_EVERYWHERE and row.metric not in hiding:
            row.verdict = "no sessions"


def _doubt_clean_improvement(result: Comparison) -> None:
    """A clean share that improved while the candidate skipped a rule on every session is not
    one measure with the baseline's: the skipped rule's failures no longer count. Its
    verdict is 'other measure' (a regression stands: skipping never makes a session fail)."""
    if not result.skipped_everywhere:
        return
    for row in result.rows:
        if row.metric == CLEAN and row.verdict == "improvement":
            row.verdict = OTHER_MEASURE


def _matched(con: Any, baseline: Point, candidate: Point) -> tuple[int, int, int, int]:
    """Each arm's sessions, and how many of each the other arm has no session for."""
    row = con.execute(query_sql("compare_sessions"), {"b": baseline.name, "p": candidate.name})
    return tuple(int(n) for n in row.fetchone())  # type: ignore[return-value]


def point_lifetime(con: Any, point: Point) -> Lifetime:
    """The fork-lifetime summary of a point's sessions, over its history."""
    history = [p for p in all_points(con) if p.position <= point.position]
    runs, _ = history_runs(history)
    return hours_lifetime(con, point, runs)


def median_row(base: Lifetime, cand: Lifetime, z: float = Z95) -> Row:
    """Fork-lifetime medians in hours: the difference (candidate − baseline) with its interval
    at the family's level `z`, judged as a rate's (a regression when it lies wholly above zero).

    Each arm's median interval is the Brookmeyer–Crowley one of stats, taken at `z`
    (median_interval); the difference's interval combines the two by MOVER (Zou and Donner,
    2008), the arms being independent sets of forks. When a median itself is not reached, the
    interval is the gap between the arms' intervals (each inside its own, the difference is at
    least it), a lower end never reached standing at the arm's last time (it lies beyond), and
    an upper end never reached leaving its side unbounded (None).
    """
    row = Row(
        MEDIAN,
        "own",
        "medians",
        Arm(base.closes, base.estimated, base.median),
        Arm(cand.closes, cand.estimated, cand.median),
    )
    b_low, b_up = median_interval(base, z)
    c_low, c_up = median_interval(cand, z)
    if base.median is not None and cand.median is not None:
        row.difference = cand.median - base.median
        if c_low is not None and b_up is not None:
            row.lower = row.difference - math.hypot(cand.median - c_low, b_up - base.median)
        if c_up is not None and b_low is not None:
            row.upper = row.difference + math.hypot(c_up - cand.median, base.median - b_low)
    else:
        # A lower end never reached lies beyond the arm's follow-up: at least its last time.
        c_low = c_low if c_low is not None else followed_for(cand)
        b_low = b_low if b_low is not None else followed_for(base)
        row.lower = None if c_low is None or b_up is None else c_low - b_up
        row.upper = None if c_up is None or b_low is None else c_up - b_low
    row.verdict = verdict(row)
    return row


def followed_for(life: Lifetime) -> float | None:
    """The last time the arm's curve reaches (None without a curve): an end of the median's
    interval that the curve never reaches lies beyond it."""
    return life.curve[-1].time if life.curve else None


def median_interval(life: Lifetime, z: float) -> tuple[float | None, float | None]:
    """The median's Brookmeyer–Crowley interval at level `z` (its 95% one at Z95, or without
    a curve to widen: the summary's own)."""
    if z == Z95 or not life.curve:
        return life.median_lower, life.median_upper
    return band_median(life.curve, z)


def band_median(curve: tuple[CurvePoint, ...], z: float) -> tuple[float | None, float | None]:
    """The first times the curve's log-log band at level `z` drops to 0.5 (km_summary's rule).
    Each step's standard error is read back from its 95% band, so this is the band km_curve
    would draw at z, on the curve as stored: thinned to at most stats.CURVE_POINTS steps, an
    end may fall on the next kept step."""
    lower = upper = None
    before = survived = 1.0  # the upper band and the curve at the step before
    tail = NormalDist().cdf(-z)
    for step in curve:
        band_low = band_up = step.survival
        after = step.at_risk - step.events - step.censored
        if step.survival >= 1 and after > 0:
            # No fork closed yet: km_curve's exact bound for all `after` forks surviving.
            band_low = tail ** (1 / after)
        elif 0 < step.survival < 1 and 0 < step.lower < 1:
            centre = math.log(-math.log(step.survival))
            spread = (math.log(-math.log(step.lower)) - centre) * z / Z95
            band_low = math.exp(-math.exp(centre + spread))
            band_up = math.exp(-math.exp(centre - spread))
        elif step.survival <= 0 and step.events == step.at_risk > 0:
            # Every fork at risk closes: km_curve's exact bound for no survivor of Peto's
            # effective sample size n / S(t−), at z.
            band_up = min(before, 1 - tail ** (survived / step.at_risk))
        before, survived = band_up, step.survival
        if lower is None and band_low <= 0.5 + 1e-9:
            lower = step.time
        if band_up <= 0.5 + 1e-9:
            upper = step.time
            break
    return lower, upper


# A line a message cites (`forks.md:3`, `ops/sync-log.md:12`, `first at line 7`): it moves as
# the file grows, as the finding's own line does.
CITED_LINE = re.compile(r"(?<=\.md:)\d+|(?<=at line )\d+")


def findings_against_baseline(out_path: str, comparison: Comparison) -> list[dict[str, Any]]:
    """Every candidate finding marked new or unchanged, and baseline-only ones marked absent,
    save those of sessions the candidate does not hold: SARIF's `absent` is a result the
    current run looked for and did not detect (read as fixed), and it never read those
    (lost_note says how many sessions were left out).

    A finding is the same in both arms when its session, rule, file and message are, read
    without line numbers (lines move as files grow); a finding repeated k times matches up to
    k times.
    """
    con = connect(Out(out_path))
    names = {"b": comparison.baseline.name, "p": comparison.candidate.name}
    lost = {tuple(r) for r in con.execute(query_sql("compare_lost"), names).fetchall()}
    query = "SELECT * FROM findings WHERE point = $point ORDER BY repo_path, path, rule_id, line"

    def load(point: Point) -> dict[tuple[Any, ...], list[dict[str, Any]]]:
        grouped: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
        for r in fetch_dicts(con, query, {"point": point.name}):
            message = CITED_LINE.sub("N", r["message"] or "")
            grouped.setdefault((r["session_key"], r["rule_id"], r["file"], message), []).append(r)
        return grouped

    base, cand = load(comparison.baseline), load(comparison.candidate)
    marked = []
    for key in sorted(set(base) | set(cand), key=str):
        before, after = base.get(key, []), cand.get(key, [])
        kept = len(before)
        marked += [
            {**r, "baselineState": "unchanged" if i < kept else "new"} for i, r in enumerate(after)
        ]
        gone = before[len(after) :]
        marked += [
            {**r, "baselineState": "absent"}
            for r in gone
            if (r["session_key"], r["root"]) not in lost
        ]
    return marked


def lost_note(comparison: Comparison) -> str | None:
    """What the SARIF leaves out (findings_against_baseline): the baseline's sessions the
    candidate does not hold, whose findings are neither absent nor still there."""
    lost = comparison.baseline_only or comparison.emptied
    if not lost:
        return None
    return (
        f"{lost:,} session{'' if lost == 1 else 's'} of the baseline {comparison.baseline.name} "
        f"{'is' if lost == 1 else 'are'} not in the candidate {comparison.candidate.name}: "
        "their findings are left out of this file, not marked absent (the candidate never "
        "read them, so they are not known fixed)"
    )
