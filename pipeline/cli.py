"""The `census` command: thin wrappers that parse options, call one library function, print.

Heavy libraries are imported inside the commands, so `census detect` starts fast.
"""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
import typer.core


class _CensusGroup(typer.core.TyperGroup):
    """Turns errors into one line on stderr and exit 2 (a traceback only with --debug)."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except Exception as err:
            # Exits, aborts and usage errors (which carry an exit code) are the CLI's own.
            if (
                _state["debug"]
                or isinstance(err, typer.Exit | typer.Abort)
                or hasattr(err, "exit_code")
            ):
                raise
            # Imported only for a real error: it pulls in compare and stats, which detect
            # (whose every answer is a typer.Exit) never needs.
            from pipeline.errors import KNOWN

            text = (
                str(err)
                if isinstance(err, KNOWN)
                else (f"internal error: {type(err).__name__}: {err} (rerun with --debug)")
            )
            typer.echo(f"census: {text}", err=True)
            ctx.exit(2)


app = typer.Typer(
    cls=_CensusGroup,
    help="Crawl brainstorm session folders, check the schema's rules, count and report.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

DEFAULT_OUT = "census-out"
_state = {"debug": False}


class Gate(StrEnum):
    session = "session"
    manifest = "manifest"
    move = "move"


class Format(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"
    parquet = "parquet"


OutOption = Annotated[
    Path, typer.Option("--out", "-o", help="Output folder (tables, census.duckdb, report).")
]
LabelOption = Annotated[
    list[str], typer.Option("--label", "-l", help="Tag the run: k=v (repeatable).")
]
WorkersOption = Annotated[
    int | None, typer.Option(help="Worker processes (default: one per core).")
]


def fail(message: str, code: int = 2) -> NoReturn:
    typer.echo(f"census: {message}", err=True)
    raise typer.Exit(code)


@app.callback()
def main_options(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
) -> None:
    _state["debug"] = debug


def _labels(values: list[str]) -> dict[str, str]:
    labels = {}
    for value in values:
        key, sep, val = value.partition("=")
        if not sep or not key.strip():
            fail(f"label {value!r} is not k=v; write --label run=baseline")
        labels[key.strip()] = val.strip()
    return labels


def _progress() -> Any:
    """A rich progress bar on a terminal; plain lines otherwise."""
    if sys.stderr.isatty():
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        progress = Progress(
            SpinnerColumn(),
            TextColumn("crawling: {task.completed} sessions"),
            TimeElapsedColumn(),
            transient=True,
        )
        return progress
    return None


def _shard(value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    k, sep, n = value.partition("/")
    if not (sep and k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        fail(f"--shard {value!r} is not K/N with 1 <= K <= N; write --shard 2/8")
    return int(k), int(n)


def _crawl(
    roots: list[str],
    out: Path,
    labels: dict[str, str],
    workers: int | None,
    history: bool = False,
    shard: tuple[int, int] | None = None,
    scheduler: str | None = None,
) -> Any:
    from functools import partial

    from pipeline import crawl as crawl_module

    crawl = partial(crawl_module.crawl, shard=shard, scheduler=scheduler)

    progress = _progress()
    if progress is None:
        seen = [0]

        def tick(n: int) -> None:
            seen[0] += n
            if seen[0] // 5000 != (seen[0] - n) // 5000:
                typer.echo(f"crawled {seen[0]} sessions", err=True)

        return crawl(roots, str(out), labels, workers, tick, history)
    with progress:
        task = progress.add_task("crawl", total=None)
        return crawl(roots, str(out), labels, workers, lambda n: progress.advance(task, n), history)


def _print_crawl(summary: Any) -> None:
    past = f" (+{summary.history} from git history)" if summary.history else ""
    typer.echo(
        f"run {summary.run_id}: {summary.sessions} sessions{past}, "
        f"{summary.new_snapshots} new snapshots "
        f"({summary.read} read, {summary.parsed} parsed), {summary.parse_issues} parse issues, "
        f"{summary.seconds:.2f} s → {summary.out}"
    )


@app.command()
def crawl(
    roots: Annotated[list[str], typer.Argument(help="Directories, git repositories or archives.")],
    out: OutOption = Path(DEFAULT_OUT),
    label: LabelOption = [],  # noqa: B006
    workers: WorkersOption = None,
    git_history: Annotated[
        bool,
        typer.Option(
            "--git-history", help="Also one snapshot per commit that touched a session folder."
        ),
    ] = False,
    shard: Annotated[
        str | None, typer.Option(help="Crawl only shard K/N of the sessions (N machines, one OUT).")
    ] = None,
    scheduler: Annotated[
        str | None, typer.Option(help="Run the work on this Dask scheduler (needs the dask extra).")
    ] = None,
) -> None:
    """Discover, parse and flatten session folders into Parquet; a run appends to OUT.

    Unchanged content is not parsed again. Example:

        census crawl ~/src --out census-out --label run=nightly --git-history
    """
    summary = _crawl(roots, out, _labels(label), workers, git_history, _shard(shard), scheduler)
    _print_crawl(summary)


def _print_rates(run_id: str | None, rates: list[Any]) -> None:
    """One row per rule, one column per gate: the sessions whose own gate that is."""
    from rich.console import Console
    from rich.table import Table

    from pipeline.rules import GATES

    cells: dict[str, dict[str, str]] = {}
    for r in rates:
        if r.rate is None:
            text = f"– ({r.skipped} skipped)" if r.skipped else "–"
        else:
            text = f"{r.failed}/{r.evaluated} {r.rate:.0%} ({r.rate_lo:.0%}–{r.rate_hi:.0%})"
            text += f" +{r.info} info" if r.info else ""
        cells.setdefault(r.rule_id, {})[r.gate] = text
    table = Table(
        title=f"Rule-failure rates, run {run_id}: failed/evaluated, rate (95% Wilson interval), "
        "over the sessions whose own gate each column is",
        title_justify="left",
    )
    table.add_column("rule")
    for gate in GATES:
        table.add_column(f"{gate} gate", justify="right")
    for rule_id in sorted(cells):
        table.add_row(rule_id, *(cells[rule_id].get(g, "") for g in GATES))
    Console(width=120).print(table)


@app.command()
def check(
    out: OutOption = Path(DEFAULT_OUT),
    gate: Annotated[
        Gate | None, typer.Option(help="Rates at this gate for every session, not each at its own.")
    ] = None,
    sarif: Annotated[
        Path | None, typer.Option(help="Write the findings as SARIF 2.1.0 here.")
    ] = None,
    fail_above: Annotated[
        float | None, typer.Option(help="Exit 1 when any rule's failure rate is above this (0–1).")
    ] = None,
    fail_on_regression: Annotated[
        bool,
        typer.Option(
            "--fail-on-regression",
            help="Exit 1 when a rule is worse than in the previous run, beyond its interval.",
        ),
    ] = False,
) -> None:
    """Evaluate every rule at every gate for every stored snapshot into rule_results; print rates.

    Example: census check --out census-out --sarif census.sarif --fail-above 0.2
    """
    from pipeline.check import check as run_check
    from pipeline.check import findings
    from pipeline.sarif import write_sarif
    from pipeline.store import Out

    summary = run_check(str(out), gate.value if gate else None)
    _print_rates(summary.run_id, summary.rates)
    typer.echo(
        f"{summary.snapshots} snapshots checked, {summary.results} results, {summary.seconds:.2f} s"
    )
    if sarif is not None and summary.run_id:
        write_sarif(str(sarif), findings(Out(out), summary.run_id, gate.value if gate else None))
        typer.echo(f"SARIF → {sarif}")
    alarm = False
    if fail_above is not None:
        over = [r for r in summary.rates if r.rate is not None and r.rate > fail_above]
        if over:
            names = ", ".join(f"{r.rule_id}@{r.gate} {r.rate:.1%}" for r in over)
            typer.echo(f"above {fail_above:.1%}: {names}")
            alarm = True
    if fail_on_regression:
        from pipeline.compare import against_previous_run

        comparison = against_previous_run(str(out))
        if comparison is None:
            typer.echo("no previous run in OUT: nothing to regress from")
        elif comparison.regressions:
            _print_comparison(comparison)
            alarm = True
        else:
            typer.echo(f"no regression against the previous run {comparison.baseline_runs[0]}")
    if alarm:
        raise typer.Exit(1)


@app.command()
def run(
    roots: Annotated[
        list[str] | None,
        typer.Argument(help="Roots to crawl (default: the shipped example corpus)."),
    ] = None,
    out: OutOption = Path(DEFAULT_OUT),
    label: LabelOption = [],  # noqa: B006
    workers: WorkersOption = None,
) -> None:
    """The main job: crawl, check, print failure rates and write the HTML report.

    With no ROOT it runs on the example corpus that ships with census.

    Example: census run ~/src/team-repos --out census-out
    """
    from pipeline.check import check as run_check
    from pipeline.resources import example_corpus

    if not roots:
        corpus = example_corpus()
        roots = sorted(str(p) for p in corpus.iterdir() if p.is_dir() or p.name.endswith(".tar.gz"))
    from pipeline.report import build

    _print_crawl(_crawl(roots, out, _labels(label), workers))
    summary = run_check(str(out))
    _print_rates(summary.run_id, summary.rates)
    typer.echo(
        f"{summary.snapshots} snapshots checked in {summary.seconds:.2f} s; tables in {out}/tables"
    )
    report = build(str(out))
    typer.echo(f"report: {report.path}")


@app.command()
def detect(
    session_dir: Annotated[str, typer.Argument(help="One session folder.")],
    gate: Annotated[
        Gate, typer.Option(help="The gate to check (its rules and no others).")
    ] = Gate.session,
    json_: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    sarif: Annotated[
        Path | None, typer.Option(help="Write the findings as SARIF 2.1.0 here.")
    ] = None,
) -> None:
    """Check one session folder under the detector's contract: exit 0 clean, 1 failing, 2 unusable.

    Example: census detect docs/research/sync-brainstorm --gate manifest
    """
    from pipeline.detect import UnusableInput, format_lines
    from pipeline.detect import detect as run_detect

    try:
        found = run_detect(session_dir, gate.value)
    except UnusableInput as err:
        fail(str(err))
    if json_:
        typer.echo(json.dumps(found.as_json(), indent=2))
    else:
        for line in format_lines(found):
            typer.echo(line)
    if sarif is not None:
        from pipeline.sarif import write_sarif

        rows = [
            {
                "repo_path": "",
                "path": session_dir.rstrip("/"),
                "session_key": None,
                "gate": gate.value,
                "rule_id": o.rule,
                "status": o.status,
                **f,
            }
            for o in found.outcomes
            if o.status in ("fail", "info")
            for f in o.findings
        ]
        write_sarif(str(sarif), rows)
    raise typer.Exit(1 if found.result == "failing" else 0)


def _tables_epilog() -> str:
    """The table and view reference under `census sql --help` (columns: docs/tables.md)."""
    from pipeline.schema import TABLES, VIEWS

    lines = ["Tables and views (every column, with its meaning, in docs/tables.md):", ""]
    lines += [f"{name}: {', '.join(t.names)}" for name, t in TABLES.items()]
    lines += [f"{name}: {', '.join(c for c, _ in cols)}" for name, (_, cols) in VIEWS.items()]
    return "\n\n".join(lines)


@app.command(epilog=_tables_epilog())
def sql(
    query: Annotated[
        str, typer.Argument(help="SQL over the views; see docs/tables.md for every column.")
    ],
    out: OutOption = Path(DEFAULT_OUT),
    format_: Annotated[
        Format, typer.Option("--format", "-f", help="Output format.")
    ] = Format.table,
    output: Annotated[
        Path | None, typer.Option(help="Write to this file instead of standard output.")
    ] = None,
) -> None:
    """Run ad hoc SQL against the census views (tables, rule_rates, fork_lifetimes, …).

    Example: census sql "SELECT rule_id, rate FROM rule_rates ORDER BY rate DESC" --out census-out
    """
    import duckdb

    from pipeline.engine import connect
    from pipeline.store import Out

    target = Out(out)
    target.require()
    con = connect(target)
    try:
        relation = con.sql(query)
    except duckdb.Error as err:
        fail(f"{str(err).splitlines()[0]} (docs/tables.md lists every view and column)")
    if relation is None:
        return
    if format_ is Format.parquet:
        if output is None:
            fail("--format parquet needs --output FILE")
        relation.write_parquet(str(output))
        return
    if format_ is Format.table:
        text = str(relation)
    elif format_ is Format.csv:
        import io

        df = relation.df()
        buffer = io.StringIO()
        df.to_csv(buffer, index=False)
        text = buffer.getvalue()
    else:
        cols = relation.columns
        rows = [dict(zip(cols, row, strict=True)) for row in relation.fetchall()]
        text = json.dumps(rows, default=str, indent=2) + "\n"
    if output is None:
        typer.echo(text, nl=False)
    else:
        output.write_text(text)


@app.command()
def report(
    out: OutOption = Path(DEFAULT_OUT),
    html: Annotated[
        Path | None, typer.Option(help="Where to write the report (default OUT/report.html).")
    ] = None,
    worst: Annotated[
        int, typer.Option(help="Sessions shown in detail (the rest are one query away).")
    ] = 25,
    baseline: Annotated[
        list[str], typer.Option(help="With --candidate: add the comparison view (k=v).")
    ] = [],  # noqa: B006
    candidate: Annotated[
        list[str], typer.Option(help="With --baseline: the candidate runs' labels (k=v).")
    ] = [],  # noqa: B006
) -> None:
    """Render the latest run as one self-contained HTML file (no network needed to open it).

    Example: census report --out census-out --baseline run=baseline --candidate run=candidate
    """
    from pipeline.report import build

    if bool(baseline) != bool(candidate):
        fail("give both --baseline and --candidate, or neither")
    summary = build(
        str(out),
        str(html) if html else None,
        worst,
        baseline=_labels(baseline) or None,
        candidate=_labels(candidate) or None,
    )
    typer.echo(f"report: {summary.path} ({summary.bytes / 1024:.0f} KiB, {summary.seconds:.2f} s)")


@app.command()
def stats(
    out: OutOption = Path(DEFAULT_OUT),
    run: Annotated[
        str | None, typer.Option(help="A run id (default: the latest in scope).")
    ] = None,
    label: Annotated[
        list[str], typer.Option("--label", "-l", help="Only runs with these labels k=v.")
    ] = [],  # noqa: B006
    json_: Annotated[
        bool, typer.Option("--json", help="Print one JSON object (docs/stats.md).")
    ] = False,
) -> None:
    """Failure rates, fork lifetimes (Kaplan–Meier), stages, sync health, compose lag, idle time.

    Example: census stats --out census-out --label run=nightly --json
    """
    from pipeline.stats import compute, format_text

    result = compute(str(out), run, _labels(label))
    typer.echo(json.dumps(result, indent=2) if json_ else format_text(result))


@app.command()
def compare(
    out: OutOption = Path(DEFAULT_OUT),
    baseline: Annotated[
        list[str], typer.Option(help="Labels k=v that select the baseline runs (repeatable).")
    ] = [],  # noqa: B006
    candidate: Annotated[
        list[str], typer.Option(help="Labels k=v that select the candidate runs (repeatable).")
    ] = [],  # noqa: B006
    json_: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    sarif: Annotated[
        Path | None, typer.Option(help="Write candidate findings as SARIF with baselineState.")
    ] = None,
) -> None:
    """Compare a candidate's failure rates with a baseline's: exit 1 when anything regressed.

    Example: census compare --out census-out --baseline run=baseline --candidate run=candidate
    """
    from pipeline.compare import SelectorError, findings_against_baseline
    from pipeline.compare import compare as run_compare

    if not baseline or not candidate:
        fail("give --baseline k=v and --candidate k=v (each repeatable)")
    try:
        result = run_compare(str(out), _labels(baseline), _labels(candidate))
    except SelectorError as err:
        fail(str(err))
    if json_:
        typer.echo(json.dumps(result.as_json(), indent=2, default=str))
    else:
        _print_comparison(result)
    if sarif is not None:
        from pipeline.sarif import write_sarif

        write_sarif(str(sarif), findings_against_baseline(str(out), result))
    raise typer.Exit(1 if result.regressions else 0)


def _print_comparison(result: Any) -> None:
    from rich.console import Console
    from rich.table import Table

    from pipeline.compare import ordered

    design = (
        f"paired over {result.matched_sessions} sessions"
        if result.matched_sessions
        else "two-sample"
    )
    table = Table(
        title=f"Candidate vs baseline, {design}; intervals simultaneous at 95% over "
        f"{result.family_size} comparisons (each at {result.confidence:.2%})",
        title_justify="left",
    )
    for name in (
        "verdict",
        "metric",
        "gate",
        "baseline",
        "candidate",
        "difference",
        "interval",
        "n",
    ):
        table.add_column(name, justify="left" if name in ("verdict", "metric", "gate") else "right")

    def pct(value: float | None, metric: str) -> str:
        if value is None:
            return "–"
        return f"{value:.1f} h" if metric == "fork-median-hours" else f"{value:.1%}"

    shown = [r for r in ordered(result.rows) if r.verdict != "unchanged" or r.difference]
    for r in shown:
        hours = r.metric == "fork-median-hours"
        diff = (
            "–"
            if r.difference is None
            else (f"{r.difference:+.1f} h" if hours else f"{r.difference:+.1%}")
        )
        interval = "–" if r.lower is None else f"{r.lower:+.1%} … {r.upper:+.1%}"
        table.add_row(
            r.verdict,
            r.metric,
            r.gate,
            pct(r.baseline, r.metric),
            pct(r.candidate, r.metric),
            diff,
            interval,
            str(r.n_candidate),
        )
    Console(width=130).print(table)
    counts = {
        v: sum(r.verdict == v for r in result.rows)
        for v in ("regression", "improvement", "unchanged")
    }
    typer.echo(
        f"regressions: {counts['regression']}, improvements: {counts['improvement']}, "
        f"unchanged: {counts['unchanged']} (rows with no difference at all are not listed)"
    )


def main() -> None:
    app()


if __name__ == "__main__":
    main()
