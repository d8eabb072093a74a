"""`census compare` as text, through pipeline.textout."""

from __future__ import annotations

from typing import Any

from pipeline.compare import (
    MEDIAN,
    NO_FORKS,
    UNTESTED,
    Arm,
    Comparison,
    Row,
    ordered,
)
from pipeline.textout import (
    DASH,
    count_rate,
    difference_interval,
    num,
    pct,
    plural,
    reached,
    table,
)


def median_text(arm: Arm) -> str:
    """An arm's fork median as the text and the report show it."""
    if not arm.evaluated:
        return "no forks"
    return reached(arm.value, unit="h")


def skipped_text(row: Row) -> str:
    """Each arm's skipped count, baseline / candidate (spec §7 shows it beside a rate); the
    fork median skips nothing."""
    if row.metric == MEDIAN:
        return DASH
    return f"{row.baseline.skipped:,} / {row.candidate.skipped:,}"


def _arm(row: Row, which: str) -> str:
    arm = row.baseline if which == "baseline" else row.candidate
    if row.metric == MEDIAN:
        return median_text(arm)
    return count_rate(arm.count, arm.evaluated, arm.value)


def comparison_table(result: Comparison) -> Any:
    """Every rule, the clean share and the fork median, as the spec's §9 lists them: a row
    left out for showing no difference hid a median never reached (its difference is none)."""
    rows = []
    for r in ordered(result.rows):
        hours = r.metric == MEDIAN
        diff = num(r.difference, signed=True, unit="h") if hours else pct(r.difference, signed=True)
        rows.append(
            [
                r.metric,
                r.verdict,
                r.design or DASH,
                _arm(r, "baseline"),
                _arm(r, "candidate"),
                skipped_text(r),
                diff,
                difference_interval(r.lower, r.upper, hours, r.verdict not in UNTESTED),
            ]
        )
    title = (
        f"Candidate {result.candidate.title} against baseline {result.baseline.title}; "
        f"intervals simultaneous at 95% over {result.family_size} comparisons "
        f"(each at {result.confidence:.2%})"
    )
    columns = [
        "metric",
        "verdict",
        "design",
        "baseline",
        "candidate",
        "skipped",
        "difference",
        "interval",
    ]
    return table(title, columns, rows)


def _count_in(one: bool, arm: str) -> str:
    """Where sessions of one arm alone count, said of one session or of several."""
    if one:
        return f"it counts in the {arm}'s rates, and the rows it enters are two-sample"
    return f"they count in the {arm}'s rates, and the rows they enter are two-sample"


def summary_line(result: Comparison) -> str:
    counts = result.counts()
    names = ", ".join(r.metric for r in result.regressions) or "none"
    line = (
        f"{plural(counts['regression'], 'regression')} ({names}), "
        f"{plural(counts['improvement'], 'improvement')}, {counts['unchanged']} unchanged"
        + (f", {counts['no sessions']} with no sessions" if counts["no sessions"] else "")
        + (f", {counts[NO_FORKS]} with no forks" if counts[NO_FORKS] else "")
    )
    if result.skipped_everywhere:
        rows = result.skipped_everywhere
        line += (
            f"; {plural(len(rows), 'rule')} the baseline {result.baseline.name} measured "
            f"{'was' if len(rows) == 1 else 'were'} skipped on every session of the candidate "
            f"{result.candidate.name} ({', '.join(r.metric for r in rows)}): nothing shows "
            f"{'it holds' if len(rows) == 1 else 'they hold'}"
        )
    if result.emptied:
        line += (
            f"; the candidate {result.candidate.name} saw no session, where the baseline "
            f"{result.baseline.name} saw {result.emptied}"
        )
    if result.baseline_only:
        one = result.baseline_only == 1
        line += (
            f"; {plural(result.baseline_only, 'session')} of the baseline "
            f"{result.baseline.name} {'is' if one else 'are'} not in the candidate "
            f"{result.candidate.name}: {_count_in(one, 'baseline')} "
            f"({'the lost one may be one' if one else 'the lost ones may be the ones'} it broke)"
        )
    if result.candidate_only:
        # Sessions the baseline never saw make the rates two-sample as lost ones do: a
        # replay run on other sessions than the baseline's is not the same population.
        one = result.candidate_only == 1
        line += (
            f"; {plural(result.candidate_only, 'session')} of the candidate "
            f"{result.candidate.name} {'is' if one else 'are'} not in the baseline "
            f"{result.baseline.name}: {_count_in(one, 'candidate')}"
        )
    if result.baseless:
        line += (
            f"; the baseline {result.baseline.name} saw no session, where the candidate "
            f"{result.candidate.name} saw {result.baseless}: nothing was compared"
        )
    if result.unseen:
        line += (
            f"; neither the baseline {result.baseline.name} nor the candidate "
            f"{result.candidate.name} saw a session: nothing was compared"
        )
    return line
