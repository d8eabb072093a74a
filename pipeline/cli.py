"""The `census` command: thin wrappers that parse options, call one library function, print.

Heavy libraries are imported inside the commands, so `census detect` starts fast. Every
error a user can act on is a `CensusError`, printed here as one line on stderr, exit 2.
"""

from __future__ import annotations

import io
import json
import os
import sys
import traceback
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
import typer.core

from pipeline.errors import CensusError, UsageError, one_line
from pipeline.sources.tree import storable_name
from pipeline.vocabulary import REGRESSION_DEFAULT

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer


class _CensusGroup(typer.core.TyperGroup):
    """One line on stderr and exit 2 for every error (a traceback only with --debug); a reader
    that left early changes only an exit 0, to 141 (_PipeEnd)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # `census --help` lists each command by its docstring's first paragraph; Typer's rich
        # mode would keep that paragraph's line breaks, which cut sentences mid-line.
        for command in self.commands.values():
            if command.short_help is None and command.help:
                command.short_help = " ".join(command.help.split("\n\n")[0].split())

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        ctx.meta["census.args"] = list(args)
        try:
            return super().parse_args(ctx, _bare_regression_flag(args))
        except Exception as err:
            # A usage error of `census` itself (`census --bogus`) is raised here, before invoke;
            # bare `census` shows the help.
            if not hasattr(err, "format_message") or type(err).__name__ == "NoArgsIsHelpError":
                raise
            _usage_line(err)

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            # Not standard output or error (_PipeEnd): a pipe named as a file (--output).
            _quiet_pipe()
        except Exception as err:
            # Exits and aborts are the CLI's own; usage errors (which carry an exit code) are
            # one line even with --debug, as they have no traceback worth showing.
            if isinstance(err, typer.Exit | typer.Abort):
                raise
            if _is_interrupt(err):
                # DuckDB turns Ctrl-C into an error of the query it stopped: an interrupt.
                raise KeyboardInterrupt from err
            if hasattr(err, "exit_code"):
                _usage_line(err, ctx.meta.get("census.args"))
            if _state["debug"]:
                # The traceback is added; the exit code still says "unusable input" (2).
                traceback.print_exc()
            typer.echo(f"census: {one_line(_error_line(err, ctx))}", err=True)
            if _stdout_failed(err):
                # Said once: the output still buffered would fail again at exit, a traceback.
                _to_devnull(sys.stdout.fileno())
            ctx.exit(2)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().main(*args, **kwargs)
        except BrokenPipeError:
            _quiet_pipe()
        except SystemExit as done:
            # What the command found (1 an alarm, 2 an error) is what a cron job reads, cut
            # output or not; with nothing found, 141 says, as for any writer in a shell, that
            # the reader left before the end (`set -o pipefail` sees the output was cut).
            if _state["reader_left"] and done.code in (0, None):
                raise SystemExit(141) from None
            raise done


def _is_interrupt(err: Exception) -> bool:
    return type(err).__name__ == "InterruptException" or str(err).startswith("Query interrupted")


def _error_line(err: Exception, ctx: Any) -> str:
    """A CensusError's message; an OS failure's path and remedy; else an internal error."""
    if isinstance(err, CensusError):
        return str(err)
    if _working_folder_gone():
        # Relative paths (the default OUT among them) and DuckDB resolve against it: whatever
        # failed, this is the cause, and the OS error names no path.
        return (
            "the current folder no longer exists (it was removed or moved); cd to a folder "
            "that exists, and run the command again"
        )
    from pipeline.errors import SWEPT, damaged_out, damaged_table, swept_file, system_failure

    if _stdout_failed(err):
        return _stdout_line(err)
    out = _out_argument(ctx.meta.get("census.args", []))
    if out is not None and swept_file(err, out):
        # Before the damage test: "OUT is damaged … restore OUT from a copy" for a file a
        # concurrent compaction swept sent a maintainer to throw a whole OUT away.
        return SWEPT
    found = system_failure(err, out)
    if found is not None:
        return str(found)
    damaged = damaged_table(err, out) if out is not None else None
    if damaged is not None:
        return damaged_out(damaged)
    if type(err).__name__ == "ParserException":
        from pipeline.rules import unparsable_file

        named = unparsable_file()
        if named is not None:
            return str(named)
    first = str(err).splitlines()[0] if str(err) else ""
    # --debug is the group's option: it goes before the command, not after it.
    command = _command(ctx.meta.get("census.args", [])) or ""
    again = f"census --debug {command} …" if command else "census --debug …"
    return f"internal error: {type(err).__name__}: {first} (rerun as {again} to see where)"


def _stdout_failed(err: Exception) -> bool:
    """Whether `err` is standard output's own failure (a `> log` on a full disk)."""
    return isinstance(err, OSError) and getattr(sys.stdout, "failed", False)


class _WatchedStdout(io.TextIOWrapper):
    """Standard output that remembers a failed write: the OS error names no file, and was
    blamed on OUT."""

    failed = False

    def write(self, text: str) -> int:
        try:
            return super().write(text)
        except OSError:
            self.failed = True
            raise

    def flush(self) -> None:
        try:
            super().flush()
        except OSError:
            self.failed = True
            raise


class _PipeEnd(io.FileIO):
    """Standard output or error under every layer that writes to it (text, bytes, rich),
    where a reader that left early (`census check | head -1`) is handled, once."""

    def write(self, data: ReadableBuffer, /) -> int:
        # All of it, write after write: the kernel may take part (a pipe's or a disk's room),
        # and a text layer straight over this raw stream (python -u) drops the rest unsaid
        # (found by a hunt: a cut or full output exited 0). The next write then fails as it must.
        view = memoryview(data).cast("B")
        done = 0
        try:
            while done < len(view):
                written = super().write(view[done:])
                if not written:
                    break  # a non-blocking stream that takes nothing now: say what it took
                done += written
        except BrokenPipeError:
            # The rest goes nowhere and the command runs to its end: stopping here lost the
            # alarms and warnings still due on stderr, and the exit code that says what it found.
            _state["reader_left"] = True
            _to_devnull(self.fileno())
            return done + (super().write(view[done:]) or 0)
        return done


def _to_devnull(fd: int) -> None:
    """What is still written to `fd` (a stream's buffer flushed at exit) goes nowhere."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def _stdout_line(err: Exception) -> str:
    """Standard output's failure, and what OUT holds: an OS error naming no file was blamed
    on OUT, though a crawl or check had committed and sql, stats or detect write nothing there."""
    from pipeline.errors import os_trouble

    found = os_trouble(err, "standard output")
    problem = found.problem if found else str(err)
    store = sys.modules.get("pipeline.store")
    held = (
        "; OUT holds this command's writes, committed before it"
        if store is not None and store.COMMITTED
        else ""
    )
    return f"{problem}: the output is incomplete{held}; send it where it can be written"


def _working_folder_gone() -> bool:
    try:
        os.getcwd()
    except FileNotFoundError:
        return True
    return False


def _out_argument(args: list[str]) -> str | None:
    """OUT as the command line names it (or its default), for an OS error that names no path."""
    for i, arg in enumerate(args):
        if arg in ("--out", "-o") and i + 1 < len(args):
            return os.path.abspath(args[i + 1])
        if arg.startswith("--out="):
            return os.path.abspath(arg.removeprefix("--out="))
    return None if _command(args) in NO_OUT else os.path.abspath(DEFAULT_OUT)


# The commands that take no --out: they read a session folder (None: bare `census`, the help).
NO_OUT = (None, "detect", "hook")


def _command(args: list[str]) -> str | None:
    return next((a for a in args if not a.startswith("-")), None)


def _bare_regression_flag(args: list[str]) -> list[str]:
    """`--fail-on-regression` with no value watches the rules' rates (REGRESSION_DEFAULT)."""
    out = list(args)
    for i, arg in enumerate(out):
        if arg == "--fail-on-regression" and (i + 1 == len(out) or out[i + 1].startswith("-")):
            out.insert(i + 1, REGRESSION_DEFAULT)
    return out


def _usage_line(err: Any, args: list[str] | None = None) -> NoReturn:
    """Click's usage errors as one line, like every other error."""
    message = err.format_message() if hasattr(err, "format_message") else str(err)
    named = next((a for a in args or [] if not a.startswith("-")), None)
    command = err.ctx.command_path if getattr(err, "ctx", None) else f"census {named or ''}"
    command = command.strip()
    typer.echo(f"census: {one_line(message)} (see '{command} --help')", err=True)
    raise SystemExit(2)


def _quiet_pipe() -> NoReturn:
    """The reader of a pipe census writes by name went away (`--output` a FIFO): stop without
    a word, as for a closed standard output with nothing found."""
    _to_devnull(sys.stdout.fileno())
    raise SystemExit(141)


app = typer.Typer(
    cls=_CensusGroup,
    help="Crawl brainstorm session folders, check the schema's rules, count and report.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

DEFAULT_OUT = "census-out"
# reader_left: standard output's or error's reader went away before the end (_PipeEnd).
_state = {"debug": False, "reader_left": False}


class Gate(StrEnum):
    session = "session"
    manifest = "manifest"
    move = "move"


class Format(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"
    parquet = "parquet"


def _utf8(value: Any) -> Any:
    """Text census stores in OUT or hands to DuckDB is UTF-8: a name with other bytes (a
    Latin-1 folder) arrives with surrogates, which every such write fails on, so it is a
    usage error here rather than an internal error later."""
    for text in value if isinstance(value, list) else [value]:
        if text is not None and storable_name(str(text)) != str(text):
            raise typer.BadParameter(
                f"{storable_name(str(text))!r} is not UTF-8 text, which OUT and DuckDB need; "
                "write it in UTF-8 (a folder: rename it)"
            )
    return value


def _selector(value: Any) -> Any:
    """A point selector as given: an empty one (an unset $NIGHT in a script) read as the
    default, so a script chose the latest night, or compare's previous, and said nothing."""
    if value is not None and not str(value).strip():
        raise typer.BadParameter(
            "is empty (an unset variable?); give latest, previous, a point's name or a run "
            "id, or leave it out"
        )
    return _utf8(value)


def _out_path(value: Any) -> Path:
    """--out as given: an empty one (an unset $OUT in a script) was Path(''), the current
    folder, where a crawl wrote OUT's files among the user's; refused, as an empty
    --fail-on-regression is."""
    if str(value) == "":
        raise typer.BadParameter(
            "is empty (an unset variable?); give a folder, or no --out for ./census-out"
        )
    return Path(value)


def _roots(value: Any) -> Any:
    """ROOTs as given: an empty one (an unset $ROOT) crawled the current folder."""
    if value and "" in value:
        raise typer.BadParameter("a ROOT is empty (an unset variable?); give a folder or archive")
    return _utf8(value)


OutOption = Annotated[
    Path,
    typer.Option(
        "--out",
        "-o",
        help="Output folder (tables, census.duckdb, report).",
        parser=_out_path,
        callback=_utf8,
    ),
]
LabelOption = Annotated[
    list[str],
    typer.Option("--label", "-l", help="Tag the run: k=v (repeatable).", callback=_utf8),
]
WorkersOption = Annotated[
    int | None, typer.Option(min=1, help="Worker processes, 1 or more (default: one per core).")
]
PointOption = Annotated[
    str | None,
    typer.Option(
        help="The census point this run belongs to (the shards of one night share one); "
        "default: a point of its own.",
        callback=_utf8,
    ),
]
RunSelector = Annotated[
    str | None,
    typer.Option(
        "--run",
        help="Which census point: latest (default), previous, a run id or a point name.",
        callback=_selector,
    ),
]
LabelSelector = Annotated[
    list[str],
    typer.Option(
        "--label",
        "-l",
        help="Only census points whose runs carry k=v (repeatable).",
        callback=_utf8,
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]


def fail(message: str, code: int = 2) -> NoReturn:
    typer.echo(f"census: {one_line(message)}", err=True)
    raise typer.Exit(code)


@app.callback()
def main_options(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
) -> None:
    _state["debug"] = debug


def _sarif_after_verdict(
    sarif: Path, findings: Any, verdict: str, notes: tuple[str, ...] = ()
) -> bool:
    """Write the SARIF file of a decided verdict (`verdict` says what stands: "the check is
    committed"); a failure is a warning, since the exit code must still say what the command
    found. Whether it was written."""
    from pipeline.errors import os_trouble
    from pipeline.sarif import write_sarif

    try:
        write_sarif(str(sarif), findings, notes)
    except OSError as err:
        found = os_trouble(err, str(sarif))
        problem = found.problem if found else str(err)
        _warn([f"warning: {verdict}, but {sarif} could not be written ({problem})"])
        return False
    return True


def _require_file_path(
    path: Path | None, option: str, example: str, out: Path | None = None
) -> None:
    """Refuse, before anything is written, an output file path that can never be written, that
    would write over OUT's own data (`out`), or that lies in a session folder."""
    if path is None:
        return
    from pipeline.discover import session_folder_holding
    from pipeline.store import Out

    if out is not None and Out(out).owns(path):
        fail(f"{option} {path} would write over OUT's own data; give a path outside {out}")
    folder = session_folder_holding(path, is_dir=False)
    if folder is not None:
        # The census never writes in what it reads: the next crawl would read the file as the
        # session's own (a SARIF written as ops/manifest.md failed BS-MANIFEST-01; found by a
        # hunt).
        fail(f"{option} {path} lies inside the session folder {folder}; give a path outside it")
    if path.is_dir():
        fail(f"{option} {path} is a directory; give a file path, such as {path / example}")
    # A link is written through (pipeline.output): the folder that matters is its target's.
    folder = Path(os.path.realpath(path)).parent if path.is_symlink() else path.parent
    if not folder.is_dir():
        fail(f"{option} {path}: the folder {folder} does not exist")


def _require_rate(fail_above: float | None) -> None:
    if fail_above is not None and not 0 <= fail_above <= 1:
        fail(f"--fail-above {fail_above} is not a rate between 0 and 1; write --fail-above 0.2")


def _warn(lines: list[str]) -> None:
    """Warnings (a step after a commit that failed) on stderr; the exit code stays as it is."""
    for line in lines:
        typer.echo(f"census: {one_line(line)}", err=True)


def _repair(out: Path) -> None:
    """Rebuild OUT/census.duckdb when a failed step, a prune or a compaction left it stale."""
    from pipeline.aftercommit import ensure_database

    note = ensure_database(str(out))
    _warn([note] if note else [])


def _labels(values: list[str], option: str = "--label") -> dict[str, str]:
    """`option` is the one the labels came from, which the remedy names (compare has no
    --label)."""
    labels: dict[str, str] = {}
    example = "run=candidate" if option == "--candidate" else "run=baseline"
    for value in values:
        key, sep, val = value.partition("=")
        if not sep or not key.strip():
            fail(f"label {value!r} is not k=v; write {option} {example}")
        if not val.strip():
            # `--label model=$MODEL` with the variable unset: stored, or selected, as no value.
            fail(f"label {value!r} has no value (an unset variable?); write {option} {example}")
        if labels.get(key.strip(), val.strip()) != val.strip():
            fail(f"label {key.strip()!r} is given twice ({labels[key.strip()]!r} and {val!r})")
        labels[key.strip()] = val.strip()
    return labels


def _shard(value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    k, sep, n = value.partition("/")
    if not (sep and k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        fail(f"--shard {value!r} is not K/N with 1 <= K <= N; write --shard 2/8")
    return int(k), int(n)


def _crawl(roots: list[str], out: Path, labels: dict[str, str], **options: Any) -> Any:
    """The crawl with progress: a bar on a terminal, a line per 5,000 sessions otherwise."""
    from pipeline.crawl import crawl as run_crawl

    if not sys.stderr.isatty():
        seen = [0]

        def tick(n: int) -> None:
            seen[0] += n
            if seen[0] // 5000 != (seen[0] - n) // 5000:
                typer.echo(f"crawled {seen[0]} sessions", err=True)

        return run_crawl(roots, str(out), labels, progress=tick, **options)
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    columns = (SpinnerColumn(), TextColumn("crawling: {task.completed} sessions"))
    with Progress(*columns, TimeElapsedColumn(), transient=True) as progress:
        task = progress.add_task("crawl", total=None)
        return run_crawl(
            roots, str(out), labels, progress=lambda n: progress.advance(task, n), **options
        )


def _print_crawl(summary: Any) -> None:
    if summary.previous_reader:
        typer.echo(
            f"the readers changed since the last run (version {summary.previous_reader} → "
            "this one): every session is read and parsed again, once"
        )
    past = f" (+{summary.history} from git history)" if summary.history else ""
    point = "" if summary.point == summary.run_id else f" (census point {summary.point})"
    typer.echo(
        f"run {summary.run_id}{point}: {summary.sessions} sessions{past}, "
        f"{summary.new_snapshots} new snapshots "
        # The issues are those of what this run parsed: a rerun over unchanged files with
        # issues said "0 parse issues" beside the night's sessions, which hold them still.
        f"({summary.read} read, {summary.parsed} parsed, {summary.parse_issues} parse issues), "
        f"{summary.seconds:.2f} s → {summary.out}"
    )
    _warn(summary.warnings)


@app.command()
def crawl(
    roots: Annotated[
        list[str],
        typer.Argument(help="Directories, git repositories or archives.", callback=_roots),
    ],
    out: OutOption = Path(DEFAULT_OUT),
    label: LabelOption = [],  # noqa: B006
    point: PointOption = None,
    workers: WorkersOption = None,
    git_history: Annotated[
        bool,
        typer.Option(
            "--git-history", help="Also one snapshot per commit that changed a session folder."
        ),
    ] = False,
    shard: Annotated[
        str | None, typer.Option(help="Crawl only shard K/N of the sessions (N machines, one OUT).")
    ] = None,
    scheduler: Annotated[
        str | None, typer.Option(help="Run the work on this Dask scheduler (needs the dask extra).")
    ] = None,
    json_: JsonOption = False,
) -> None:
    """Discover, parse and flatten session folders into Parquet; a run appends to OUT.

    Unchanged content is not parsed again. Example:

        census crawl ~/src --out census-out --point 2026-11-29 --git-history
    """
    summary = _crawl(
        roots,
        out,
        _labels(label),
        workers=workers,
        git_history=git_history,
        shard=_shard(shard),
        scheduler=scheduler,
        point=point,
    )
    if json_:
        from dataclasses import asdict

        typer.echo(json.dumps(asdict(summary), indent=2))
    else:
        _print_crawl(summary)


def _print_check(summary: Any) -> None:
    from pipeline.textout import plural

    if summary.previous_ruleset:
        typer.echo(
            f"the rules changed since the last check ({summary.previous_ruleset} → "
            f"{summary.ruleset}): new census points are checked with the new rules; earlier "
            "points keep their results (census check --recheck re-checks them all)"
        )
    if not summary.points:
        typer.echo(f"nothing to check: every census point is checked ({summary.seconds:.2f} s)")
        return
    what = "re-checked" if summary.rechecked else "checked"
    # With none evaluated, "no parse issues" would read as the night's sessions having none.
    unread = (
        f"{summary.unreadable_snapshots} with parse issues, {summary.parse_issues} lines"
        if summary.parse_issues
        else "no parse issues"
        if summary.snapshots
        else "the point's snapshots were evaluated by earlier checks"
        if summary.observed
        # A point that saw no session has no snapshot, evaluated before or now.
        else "no session at the point"
    )
    # The last three: an ellipsis before them says the earlier ones are not named.
    names = ("…, " if len(summary.points) > 3 else "") + ", ".join(summary.points[-3:])
    typer.echo(
        f"{what} {len(summary.points)} census point(s) ({names}): "
        f"{plural(summary.snapshots, 'snapshot')} evaluated ({unread}), "
        f"{plural(summary.series_findings, 'finding')} along history, {summary.seconds:.2f} s"
    )


def _rates_table(point: Any, rates: list[Any], gate: str | None = None) -> Any:
    from pipeline.textout import count_rate, interval, table

    where = f"every session at the {gate} gate" if gate else "each session at its own gate"
    rows = [
        [
            r.rule_id,
            r.gate,
            count_rate(r.failed, r.evaluated, r.rate),
            interval(r.rate_lo, r.rate_hi),
            str(r.info) if r.info else "",
            str(r.skipped) if r.skipped else "",
        ]
        for r in rates
    ]
    return table(
        f"Rule-failure rates at census point {point.title}, {where}: failed/evaluated, rate, "
        "95% Wilson interval",
        ["rule", "gate", "failed/evaluated", "95% interval", "info", "skipped"],
        rows,
    )


RatesGateOption = Annotated[
    Gate | None,
    typer.Option(
        help="Rates at this gate for every session, not each at its own (--fail-above reads them)."
    ),
]


RecheckOption = Annotated[
    bool,
    typer.Option(
        "--recheck",
        help="Check every census point again with the current rules (a point last checked "
        "under the same rules keeps its findings along history).",
    ),
]


@app.command()
def check(
    out: OutOption = Path(DEFAULT_OUT),
    run: RunSelector = None,
    label: LabelSelector = [],  # noqa: B006
    gate: RatesGateOption = None,
    sarif: Annotated[
        Path | None,
        typer.Option(
            help="Write the point's findings as SARIF 2.1.0 here (with --gate, those at that gate)."
        ),
    ] = None,
    fail_above: Annotated[
        float | None, typer.Option(help="Exit 1 when a rule's failure rate is above this (0–1).")
    ] = None,
    fail_on_regression: Annotated[
        list[str],
        typer.Option(
            "--fail-on-regression",
            help="Exit 1 when a metric is worse than at the previous census point beyond its "
            "interval (exit 2 when that point was measured with other rules or readers). Metrics "
            "(comma-separated): rules (the default), a rule ID, clean-share, fork-median-hours.",
        ),
    ] = [],  # noqa: B006
    recheck: RecheckOption = False,
    json_: JsonOption = False,
) -> None:
    """Decide every rule for every census point not yet checked, freeze the results, and print
    the failure rates of one point (the latest by default).

    Example: census check --out census-out --sarif out.sarif --fail-above 0.2 --fail-on-regression
    """
    from pipeline import alarms
    from pipeline.check import check as run_check

    _require_rate(fail_above)
    metrics = alarms.parse_metrics(fail_on_regression)
    _require_file_path(sarif, "--sarif", "census.sarif", out)
    summary = run_check(str(out), recheck=recheck)
    _warn(summary.warnings)
    _repair(out)
    gate_name = gate.value if gate else None
    labels = _labels(label)
    report = alarms.evaluate(str(out), run, labels, gate_name, fail_above, metrics)
    earlier = alarms.evaluate_decided(
        str(out), summary.first, report, labels, gate_name, fail_above, metrics
    )
    if sarif is not None and not _sarif_after_verdict(
        sarif, report.findings(), "the check is committed"
    ):
        sarif = None
    _print_checked(summary, report, earlier, sarif, json_)


def _print_checked(
    summary: Any, report: Any, earlier: list[Any], sarif: Path | None, json_: bool
) -> None:
    """check's output: the shown point's rates and alarms, the closing lines of the other
    points it decided first; exit 1 when any alarm of any of them tripped, else 2 when a
    regression test asked for could not be made (alarms.exit_code)."""
    from pipeline.alarms import exit_code

    every = [*earlier, report]
    if json_:
        shown = report.as_json(summary)
        shown["decided_with_it"] = [e.as_json() for e in earlier]
        shown["tripped"] = any(r.tripped for r in every)
        typer.echo(json.dumps(shown, indent=2, default=str))
    else:
        _print_check(summary)
        from pipeline.textout import console

        console().print(_rates_table(report.point, report.rates, report.gate))
        if sarif is not None:
            typer.echo(f"SARIF → {sarif}")
        for other in earlier:
            typer.echo(other.closing_line())
        typer.echo(report.closing_line())
    for line in [line for other in every for line in other.alarm_lines()]:
        typer.echo(f"census: {line}", err=True)
    for line in filter(None, (other.untested_line() for other in every)):
        typer.echo(f"census: {line}", err=True)
    for line in [line for other in every for line in other.note_lines()]:
        typer.echo(f"census: {line}", err=True)
    raise typer.Exit(exit_code(every))


@app.command()
def run(
    roots: Annotated[
        list[str] | None,
        typer.Argument(
            help="Roots to crawl (default: the shipped example corpus).", callback=_roots
        ),
    ] = None,
    out: OutOption = Path(DEFAULT_OUT),
    label: LabelOption = [],  # noqa: B006
    point: PointOption = None,
    workers: WorkersOption = None,
) -> None:
    """The main job: crawl, check, print failure rates and write the HTML report.

    With no ROOT it runs on the example corpus that ships with census.

    Example: census run ~/src/team-repos --out census-out
    """
    from pipeline import alarms
    from pipeline.check import check as run_check
    from pipeline.report import build
    from pipeline.resources import example_corpus
    from pipeline.textout import console

    if not roots:
        corpus = example_corpus()
        roots = sorted(str(p) for p in corpus.iterdir() if p.is_dir() or p.name.endswith(".tar.gz"))
    _print_crawl(_crawl(roots, out, _labels(label), workers=workers, point=point))
    summary = run_check(str(out))
    _print_check(summary)
    _warn(summary.warnings)
    report = alarms.evaluate(str(out), None, {}, None, None, [])
    console().print(_rates_table(report.point, report.rates))
    built = build(str(out))
    typer.echo(f"report: {built.path}")


@app.command()
def detect(
    session_dir: Annotated[str, typer.Argument(help="One session folder.")],
    gate: Annotated[
        Gate, typer.Option(help="The gate to check (its rules and no others).")
    ] = Gate.session,
    json_: JsonOption = False,
    sarif: Annotated[
        Path | None, typer.Option(help="Write the findings as SARIF 2.1.0 here.")
    ] = None,
) -> None:
    """Check one session folder under the detector's contract: exit 0 clean, 1 failing, 2 unusable.

    Example: census detect docs/research/sync-brainstorm --gate manifest
    """
    from pipeline.detect import detect as run_detect
    from pipeline.detect import format_lines, require_folder

    # The folder first: an empty or missing one would make any --sarif look "inside" it.
    require_folder(session_dir)
    _require_file_path(sarif, "--sarif", "census.sarif")
    if sarif is not None and sarif.resolve().is_relative_to(Path(session_dir).resolve()):
        # The census never writes in what it reads: the next crawl would read it as the
        # session's own file.
        fail(f"--sarif {sarif} lies inside the session folder it checks; give a path outside it")
    found = run_detect(session_dir, gate.value)
    if sarif is not None:
        # Written first: a file that cannot be written is an error (exit 2) printed alone,
        # not after a verdict that reads as the result.
        from pipeline.sarif import detection_findings, write_sarif

        write_sarif(str(sarif), detection_findings(found))
    if json_:
        typer.echo(json.dumps(found.as_json(), indent=2))
    else:
        for line in format_lines(found):
            typer.echo(line)
    raise typer.Exit(1 if found.result == "failing" else 0)


def _tables_epilog() -> str:
    """The table and view reference under `census sql --help` (columns: docs/tables.md)."""
    from pipeline.schema import TABLES, VIEWS

    lines = ["Tables and views (every column, with its meaning, in docs/tables.md):", ""]
    lines += [f"{name}: {', '.join(t.names)}" for name, t in TABLES.items()]
    lines += [f"{name}: {', '.join(c for c, _ in cols)}" for name, (_, cols) in VIEWS.items()]
    return "\n\n".join(lines)


def _query_text(query: str | None, file: Path | None) -> str:
    """The query from the argument, a file, or standard input (`-`)."""
    if file is not None:
        if query is not None:
            fail("give the query as an argument or with --file, not both")
        try:
            text = file.read_bytes().decode()
        except OSError as err:
            fail(f"cannot read {file}: {err.strerror}")
        except UnicodeDecodeError as err:
            fail(f"--file {file} is not UTF-8 text ({err.reason} at byte {err.start}); save it so")
        return text
    if query is None:
        fail('give a query: census sql "SELECT …", census sql --file q.sql, or census sql -')
    if query != "-":
        if storable_name(query) != query:
            fail("the query is not UTF-8 text; write it in UTF-8")
        return query
    try:
        text = sys.stdin.buffer.read().decode()
    except UnicodeDecodeError as err:
        fail(f"the query on standard input is not UTF-8 text ({err.reason} at byte {err.start})")
    return text


@app.command(epilog=_tables_epilog(), context_settings={"ignore_unknown_options": True})
def sql(
    query: Annotated[
        str | None,
        typer.Argument(help="SQL over the views (- reads standard input); see docs/tables.md."),
    ] = None,
    out: OutOption = Path(DEFAULT_OUT),
    file: Annotated[Path | None, typer.Option("--file", help="Read the query from a file.")] = None,
    run: RunSelector = None,
    label: LabelSelector = [],  # noqa: B006
    format_: Annotated[
        Format, typer.Option("--format", "-f", help="Output format.")
    ] = Format.table,
    output: Annotated[
        Path | None, typer.Option(help="Write to this file instead of standard output.")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="The same as --format json, as other commands say it.")
    ] = False,
) -> None:
    """Run ad hoc SQL against the census views (sessions, findings, rule_rates, …). The macro
    selected_point() names the census point --run/--label select (the latest by default).

    Example: census sql "SELECT rule_id, rate FROM rule_rates WHERE point = selected_point()"
    """
    from pipeline.adhoc import run_query

    if as_json:
        if format_ not in (Format.table, Format.json):
            raise UsageError(f"--json and --format {format_.value} ask for two formats; give one")
        format_ = Format.json
    text = _query_text(query, file)
    _require_file_path(
        output, "--output", f"result.{'txt' if format_ is Format.table else format_}"
    )
    _repair(out)
    result = run_query(str(out), text, format_.value, output, run, _labels(label))
    if result is not None and sys.stdout.isatty():
        typer.echo(result, nl=False)  # strips escape sequences: a value may be hostile text
    elif result is not None:
        # Into a pipe or a file the result is data: every character of a value, as written.
        sys.stdout.write(result)
        sys.stdout.flush()


@app.command()
def report(
    out: OutOption = Path(DEFAULT_OUT),
    run: RunSelector = None,
    label: LabelSelector = [],  # noqa: B006
    html: Annotated[
        Path | None, typer.Option(help="Where to write the report (default OUT/report.html).")
    ] = None,
    worst: Annotated[
        int,
        typer.Option(min=0, help="Sessions shown in detail (the rest are one query away)."),
    ] = 25,
    baseline: Annotated[
        list[str], typer.Option(help="With --candidate: add the comparison view (k=v).")
    ] = [],  # noqa: B006
    candidate: Annotated[
        list[str], typer.Option(help="With --baseline: the candidate point's labels (k=v).")
    ] = [],  # noqa: B006
    fail_above: Annotated[
        float | None,
        typer.Option(help="Show the alarm of a rule whose rate is above this (as census check)."),
    ] = None,
    fail_on_regression: Annotated[
        list[str],
        typer.Option(
            "--fail-on-regression",
            help="The metrics whose regression since the previous point is an alarm (as census "
            "check); default: every rule's rate, as census check watches.",
        ),
    ] = [],  # noqa: B006
) -> None:
    """Render a census point (the latest by default) as one self-contained HTML file: what
    changed since the previous point and the alarms first, then the detail. Exit 1 when an
    alarm asked for (--fail-above, --fail-on-regression) tripped, as census check does.

    Example: census report --out census-out --baseline run=baseline --candidate run=candidate
    """
    from pipeline import alarms
    from pipeline.compare import Selector
    from pipeline.report import build

    if bool(baseline) != bool(candidate):
        fail("give both --baseline and --candidate, or neither")
    _require_rate(fail_above)
    _require_file_path(html, "--html", "report.html", out)
    _repair(out)
    summary = build(
        str(out),
        str(html) if html else None,
        worst,
        selector=Selector(run, _labels(label)),
        baseline=Selector(None, _labels(baseline, "--baseline")) if baseline else None,
        candidate=Selector(None, _labels(candidate, "--candidate")) if candidate else None,
        threshold=fail_above,
        metrics=alarms.parse_metrics(fail_on_regression) if fail_on_regression else None,
    )
    typer.echo(f"report: {summary.path} ({summary.bytes / 1024:.0f} KiB, {summary.seconds:.2f} s)")
    _note_unchecked(run, summary.unchecked_later, summary.point, summary.notes)
    if summary.alarm or summary.untested:  # those asked for (the page shows the rest), as check
        _warn(summary.alarm_lines + summary.untested)
        raise typer.Exit(1 if summary.alarm else 2)


def _note_unchecked(
    run: str | None, names: list[str], shown: Any, more: list[str] | None = None
) -> None:
    """The latest (the default) is the latest checked point; a later one crawled but not
    checked is named on stderr, lest yesterday's numbers be read as tonight's. `more`: other
    notes for stderr (how a comparison's arms were chosen, as compare names them)."""
    from pipeline.select import unchecked_note

    note = unchecked_note(names, shown) if run in (None, "latest") else None
    for line in [*([note] if note else []), *(more or [])]:
        typer.echo(line, err=True)


@app.command()
def stats(
    out: OutOption = Path(DEFAULT_OUT),
    run: RunSelector = None,
    label: LabelSelector = [],  # noqa: B006
    json_: Annotated[
        bool, typer.Option("--json", help="Print one JSON object (docs/stats.md).")
    ] = False,
) -> None:
    """Failure rates, fork lifetimes (Kaplan–Meier), stages, sync health, compose lag, idle time.

    Example: census stats --out census-out --run previous --json
    """
    from pipeline.stats import compute

    _repair(out)
    result = compute(str(out), run, _labels(label))
    _note_unchecked(run, result.unchecked_later, result.point)
    if json_:
        typer.echo(json.dumps(result.as_json(), indent=2))
    else:
        from pipeline.stats_text import format_text

        typer.echo(format_text(result), nl=False)


@app.command()
def compare(
    out: OutOption = Path(DEFAULT_OUT),
    baseline: Annotated[
        list[str],
        typer.Option(help="Labels k=v of the baseline point (repeatable).", callback=_utf8),
    ] = [],  # noqa: B006
    candidate: Annotated[
        list[str],
        typer.Option(help="Labels k=v of the candidate point (repeatable).", callback=_utf8),
    ] = [],  # noqa: B006
    baseline_run: Annotated[
        str | None,
        typer.Option(
            help="Baseline: latest, previous, a run id or a point name.", callback=_selector
        ),
    ] = None,
    candidate_run: Annotated[
        str | None,
        typer.Option(
            help="Candidate: latest, previous, a run id or a point name.", callback=_selector
        ),
    ] = None,
    json_: JsonOption = False,
    sarif: Annotated[
        Path | None, typer.Option(help="Write candidate findings as SARIF with baselineState.")
    ] = None,
) -> None:
    """Compare a candidate census point with a baseline: exit 1 when anything regressed.

    With no selector, the previous point is the baseline and the latest the candidate; with a
    candidate alone, the checked point before it is the baseline.

    Example: census compare --out census-out --baseline run=baseline --candidate run=candidate
    """
    from pipeline.compare import Selector, findings_against_baseline, lost_note
    from pipeline.compare import compare as run_compare

    base = Selector(
        baseline_run or (None if baseline else "previous"), _labels(baseline, "--baseline")
    )
    cand = Selector(candidate_run, _labels(candidate, "--candidate"))
    _require_file_path(sarif, "--sarif", "census.sarif", out)
    _repair(out)
    result = run_compare(str(out), base, cand)
    for note in result.notes:
        typer.echo(note, err=True)
    if json_:
        typer.echo(json.dumps(result.as_json(), indent=2, default=str))
    else:
        from pipeline.compare_text import comparison_table, summary_line
        from pipeline.textout import console

        console().print(comparison_table(result))
        typer.echo(summary_line(result))
    if sarif is not None:
        findings = findings_against_baseline(str(out), result)
        lost = lost_note(result)
        _sarif_after_verdict(sarif, findings, "the comparison stands", (lost,) if lost else ())
    raise typer.Exit(1 if result.tripped else 0)


@app.command()
def prune(
    out: OutOption = Path(DEFAULT_OUT),
    keep_last: Annotated[
        int | None, typer.Option(help="Keep the last N census points, drop the rest.")
    ] = None,
    before: Annotated[
        str | None,
        typer.Option(
            help="Drop the census points started before this date (YYYY-MM-DD, UTC) or "
            "ISO 8601 instant (2026-10-01T06:00+02:00; UTC without an offset)."
        ),
    ] = None,
    point: Annotated[
        str | None,
        typer.Option(
            "--point",
            help="Drop this one census point (a night whose shards can no longer all be crawled).",
        ),
    ] = None,
    json_: JsonOption = False,
) -> None:
    """Drop whole census points from OUT, atomically; keep every snapshot a kept point observes.

    The kept points' checked results do not change; OUT is compacted as it goes.

    Example: census prune --out census-out --keep-last 30
    """
    from pipeline.maintain import prune as run_prune

    when = None
    if before is not None:
        from datetime import UTC, datetime

        try:
            when = datetime.fromisoformat(before)
        except ValueError:
            fail(f"--before {before!r} is not a date; write --before 2026-10-01")
        # An offset written names its instant; a date or time without one is UTC, as OUT's are.
        when = when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
    summary = run_prune(str(out), keep_last, when, point)
    _repair(out)
    if json_:
        from dataclasses import asdict

        typer.echo(json.dumps(asdict(summary), indent=2))
        return
    dropped = summary.points_dropped
    names = ", ".join(dropped[:3]) + (" …" if len(dropped) > 3 else "")
    typer.echo(
        f"dropped {len(dropped)} census point(s){' (' + names + ')' if dropped else ''}; "
        f"files {summary.files_before} → {summary.files_after}"
    )


@app.command()
def compact(out: OutOption = Path(DEFAULT_OUT), json_: JsonOption = False) -> None:
    """Merge each table's Parquet files into one (OUT reads the same rows after).

    Example: census compact --out census-out
    """
    from pipeline.maintain import compact as run_compact

    summary = run_compact(str(out))
    _repair(out)
    if json_:
        from dataclasses import asdict

        typer.echo(json.dumps(asdict(summary), indent=2))
        return
    typer.echo(f"files {summary.files_before} → {summary.files_after}")


@app.command()
def hook(
    files: Annotated[
        list[str] | None, typer.Argument(help="Files (as pre-commit passes the staged ones).")
    ] = None,
    gate: Annotated[
        Gate, typer.Option(help="The gate to check each session folder at.")
    ] = Gate.session,
) -> None:
    """For pre-commit: census detect once on each session folder the files lie in; exit 1 when
    one fails (its lines are printed), 0 when all are clean. See .pre-commit-hooks.yaml.

    Example: census hook docs/research/sync-brainstorm/forks.md --gate manifest
    """
    from pipeline.hook import run_hook

    raise typer.Exit(run_hook(files or [], gate.value, lambda line, err: typer.echo(line, err=err)))


def main() -> None:
    _tolerant_streams()
    try:
        app()
    except SystemExit as stop:
        if stop.code == 130:  # Typer's exit for Ctrl-C, which it leaves unsaid
            typer.echo(f"census: {_interrupted()}", err=True)
        raise


def _tolerant_streams() -> None:
    """An output that cannot encode a character (a Latin-1 locale, PYTHONIOENCODING=ascii)
    shows it as `?`: failing on `–` after the work was done turned an alarm's exit 1 into 2.
    A reader that leaves early ends neither stream's writes in an error (_PipeEnd)."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            stream.reconfigure(errors="replace")
    for name, kind in (("stdout", _WatchedStdout), ("stderr", io.TextIOWrapper)):
        stream = getattr(sys, name)
        if type(stream) is not io.TextIOWrapper:
            continue
        stream.flush()
        end: Any = _PipeEnd(stream.fileno(), "w", closefd=False)
        # Buffered as Python made it (unbuffered under python -u or PYTHONUNBUFFERED).
        end = end if isinstance(stream.buffer, io.RawIOBase) else io.BufferedWriter(end)
        setattr(
            sys,
            name,
            kind(
                end,
                encoding=stream.encoding,
                errors=stream.errors,
                line_buffering=stream.line_buffering,
                write_through=stream.write_through,
            ),
        )


def _interrupted() -> str:
    """What a Ctrl-C left: OUT as before, or this command's writes, committed before it came."""
    if _command(sys.argv[1:]) in NO_OUT:
        # detect and hook read a session folder and write no OUT.
        return "interrupted; nothing was changed (a --sarif file is written whole or not at all)"
    store = sys.modules.get("pipeline.store")
    if store is not None and store.COMMITTED:
        return (
            "interrupted after this command's writes were committed: OUT holds them (its "
            "result was not printed; census.duckdb is rebuilt by the next command if it lags)"
        )
    return (
        "interrupted; OUT is as it was before this command (its writes commit whole or not at all)"
    )


if __name__ == "__main__":
    main()
