"""The crawl: roots → repositories → snapshots → Parquet, in parallel, appending a run to OUT.

Work is cut into jobs of whole repositories. Workers (processes) read, hash and
parse; the parent writes Parquet in bounded row groups and commits the run.
A session whose file metadata is unchanged since the last run is not read; one
whose content hash is already stored is read but not parsed or written again.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from multiprocessing import get_context
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline import __version__, memo
from pipeline.discover import (
    RepoRef,
    SessionRef,
    discover,
    session_folder_holding,
    session_key,
    session_matches,
)
from pipeline.errors import OutError, UsageError
from pipeline.lifeline import die_with_parent
from pipeline.parse import READER_VERSION
from pipeline.schema import (
    CHECKS,
    CONTENT_TABLES,
    OBSERVATIONS,
    PARSE_ISSUES,
    RUNS,
    SNAPSHOTS,
    TABLES,
)
from pipeline.sources import open_root
from pipeline.sources.git import GitRepo, same_remote
from pipeline.sources.tree import OUT_OF_ROOT, DirTree, Entry, Tree
from pipeline.store import (
    RUN_ID_RE,
    SHARD_LABEL_RE,
    Out,
    PartitionWriter,
    crash_point,
    new_run_id,
    publish,
    read_committed,
    read_parquet,
    read_statcache,
    read_state,
    write_state,
)

if TYPE_CHECKING:
    from pipeline.gather import History, RepoContext

# Sessions per job: large enough to amortise process hand-off, small enough to balance.
JOB_SESSIONS = 200
# Repositories of a directory root per job, and the sessions each is guessed to hold.
REPO_WEIGHT = 10
# Below this many sessions in the first jobs, the crawl stays in one process.
INLINE_SESSIONS = 400


@dataclass
class Job:
    root_label: str
    root_abs: str
    archive_name: str
    repos: list[RepoRef]
    # Repository roots (under a directory root) the worker walks and discovers itself.
    walk: list[str] = field(default_factory=list)
    shard: tuple[int, int] | None = None
    skip: str | None = None  # OUT (DirTree's skip): left out of the walk when inside the root

    @property
    def weight(self) -> int:
        """Sessions, or an estimate for repositories not yet walked."""
        return sum(len(r.sessions) for r in self.repos) + REPO_WEIGHT * len(self.walk)


@dataclass
class JobResult:
    tables: dict[str, Any]  # content table name → Arrow table
    observations: list[dict[str, Any]]
    cache: dict[str, tuple[str, str]]
    issues: list[dict[str, Any]]
    sessions: int = 0
    history: int = 0
    parsed: int = 0
    read: int = 0
    replayed: int = 0
    # Repository key → what its git history said at the HEAD read (see _HistoryState).
    heads: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Block key → its new memo, or None when it cannot have one; blocks whose memo held.
    memos: dict[str, memo.Memo | None] = field(default_factory=dict)
    kept: list[str] = field(default_factory=list)


@dataclass
class CrawlSummary:
    run_id: str
    out: str
    point: str = ""
    sessions: int = 0
    history: int = 0
    new_snapshots: int = 0
    parsed: int = 0
    read: int = 0
    # Sessions of blocks whose memo held: confirmed unchanged by stat alone.
    replayed: int = 0
    parse_issues: int = 0
    seconds: float = 0.0
    roots: list[str] = field(default_factory=list)
    # The reader version of OUT's last run, when it differs: everything is read again.
    previous_reader: str | None = None
    # Steps after the commit that failed (census.duckdb, caches), one line each.
    warnings: list[str] = field(default_factory=list)

    def add(self, result: JobResult) -> None:
        self.sessions += result.sessions
        self.history += result.history
        self.parsed += result.parsed
        self.read += result.read
        self.replayed += result.replayed
        self.parse_issues += len(result.issues) + _rows(result, PARSE_ISSUES.name)


@dataclass
class _Context:
    stored: set[str]
    cache: dict[str, tuple[str, str]]
    run_id: str
    observed_at: datetime
    git_history: bool = False
    # f"{root}\x1f{session_key}\x1f{commit}" of every commit snapshot OUT already holds.
    observed_commits: set[str] = field(default_factory=set)
    # Repository key → its history at the HEAD last read (skip the walk when HEAD is the same).
    heads: dict[str, dict[str, Any]] = field(default_factory=dict)
    shard: tuple[int, int] | None = None
    nested_emptied: frozenset[str] = frozenset()  # _Plan.nested_emptied
    history_only: frozenset[str] = frozenset()  # _Plan.history_only


_CTX: _Context | None = None


def _init_worker(ctx: _Context) -> None:
    global _CTX
    _CTX = ctx


def _start_worker(parent: int, ctx: _Context) -> None:
    die_with_parent(parent)
    _init_worker(ctx)


def crawl(
    roots: list[str],
    out_path: str,
    labels: dict[str, str] | None = None,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
    git_history: bool = False,
    shard: tuple[int, int] | None = None,
    scheduler: str | None = None,
    point: str | None = None,
) -> CrawlSummary:
    """Crawl ROOTs into OUT as one new run of census point `point`; returns what it did.

    With git_history, a git repository also yields one snapshot per commit that changed
    a session folder and that OUT does not hold yet (observed at the commit time, with
    `commit` and its `parents` along git ancestry set). With shard=(K, N) only a stable
    1/N of the sessions (and of their commits) is crawled, so N machines can fill one OUT
    at once; shards of one night share a `point`. With scheduler, the work runs on that
    Dask cluster instead of local processes.
    """
    started = time.perf_counter()
    out = Out(out_path)
    _refuse_bad_options(labels or {}, shard, scheduler, point)
    trees = [open_root(r, out_path) for r in roots]  # a bad root fails before any write
    _refuse_overlapping(roots)
    out.require_folder()
    _refuse_foreign_out(out)
    _refuse_hiding_out(trees, out)
    _refuse_root_out(trees, out)
    out.root.mkdir(parents=True, exist_ok=True)
    plan = _Plan(labels or {}, workers, progress, started, git_history, shard, scheduler, point)
    if shard is None:
        with out.lock():
            out.sweep()
            return _crawl_locked(out, trees, plan)
    # Shards share OUT: each holds the writers' lock shared and its own shard lock exclusive.
    with out.lock(shared=True), out.shard_lock(plan.shard_name):
        # Another shard may commit while this one runs: what it adds then is left out at this
        # shard's commit (_drop_stored_meanwhile).
        plan.snapshot_files = frozenset(out.manifest()[SNAPSHOTS.name])
        return _crawl_locked(out, trees, plan)


@dataclass
class _Plan:
    labels: dict[str, str]
    workers: int | None
    progress: Callable[[int], None] | None
    started: float
    git_history: bool
    shard: tuple[int, int] | None
    scheduler: str | None
    point: str | None = None
    # Block keys of repositories OUT saw sessions in that hold none now and lie inside a
    # listed repository (a submodule, a nested clone): their history is read in its block.
    nested_emptied: frozenset[str] = frozenset()
    # Block keys of such repositories around a listed one: their history is read, unwalked.
    history_only: frozenset[str] = frozenset()
    # A shard's: the snapshots table's files committed when it began.
    snapshot_files: frozenset[str] = frozenset()

    @property
    def shard_name(self) -> str:
        return f"{self.shard[0]}-of-{self.shard[1]}" if self.shard else ""


def _listed(trees: list[Tree], blocks: list[list[str]]) -> set[str]:
    """The keys of the repository blocks listed under the directory roots."""
    return {
        _block_key(t.root, rel)
        for t, rels in zip(trees, blocks, strict=True)
        if isinstance(t, DirTree)
        for rel in rels
    }


def _crawl_locked(out: Out, trees: list[Tree], plan: _Plan) -> CrawlSummary:
    out.require_whole()  # the crawl reads few of OUT's files: a damaged one is refused first
    run_id = new_run_id()
    point = plan.point or run_id
    if plan.point:  # a new run id names a new point, which nothing can have checked
        _refuse_closed_point(out, point, plan.shard, plan.labels, trees, plan.git_history)
    _refuse_clock_behind(out, point, now := datetime.now(UTC))
    made = memo.context(READER_VERSION, plan.git_history, plan.shard_name)
    memos, vouched_by = memo.load(_memo_file(out, plan), made)
    staging = out.root / "staging" / run_id
    writer = PartitionWriter(staging, [t for t in TABLES.values() if t.writer == "crawl"])
    summary = CrawlSummary(run_id, str(out.root), point, roots=[t.label for t in trees])
    run = _RunRows(writer, summary, memos, plan.progress)
    # The memos' stats, an unchanged rerun's whole cost, run in workers from here on; this
    # process reads OUT, lists the repositories and writes the rows of each block that held.
    with _confirming(memos, {t.root for t in trees if isinstance(t, DirTree)}, plan) as held:
        summary.previous_reader = _previous_reader(out)
        if summary.previous_reader:  # other readers made OUT's rows: every session is read
            memos = run.memos = {}
        blocks = [list(t.repo_roots()) if isinstance(t, DirTree) else [] for t in trees]
        past: dict[str, Any] | None = None
        if plan.git_history:
            blocks = _with_emptied_repos(out, trees, blocks, plan)
            blocks, past = _with_past_sessions(out, trees, blocks, plan)
        # Rows of memos saved while every snapshot file they name stayed committed need no
        # look-up in OUT; after a prune or a compaction each row is looked up.
        vouched = set(vouched_by) <= set(out.manifest()[SNAPSHOTS.name])
        fresh = summary.previous_reader is not None
        ctx = _context(out, trees, plan, run_id, now, fresh, light=vouched)
        listed = _listed(trees, blocks)
        for result in _replayed(held, listed, memos, None if vouched else ctx.stored, ctx):
            run.take(result)
    walk = [
        [rel for rel in rels if _block_key(tree.root, rel) not in run.memos_now]
        if isinstance(tree, DirTree)
        else []
        for tree, rels in zip(trees, blocks, strict=True)
    ]
    if vouched and (any(walk) or not all(isinstance(t, DirTree) for t in trees)):
        # What the workers need of OUT is read only when something is walked or read.
        ctx = _context(out, trees, plan, run_id, now, fresh)
    cache, heads = dict(ctx.cache), dict(ctx.heads)
    for result in _results(trees, walk, ctx, plan):
        run.take(result)
        cache.update(result.cache)
        heads.update(result.heads)
    summary.parse_issues += _write_root_issues(writer, trees, run_id, plan.shard)
    summary.new_snapshots = len(run.written)
    writer.write(RUNS.name, [_runs_row(summary, plan, ctx.observed_at)])
    writer.close()
    # An unchanged rerun rewrites none of the caches: they are what it read.
    memos_changed = run.walked or run.memos_now.keys() != memos.keys() or not vouched
    saved = _Saved(cache != ctx.cache, heads != ctx.heads, memos_changed, run.memos_now, made, past)
    _commit(out, staging, summary, plan, cache, heads, saved)
    summary.warnings += _root_warnings(trees, run.checkouts, summary.sessions, plan)
    summary.seconds = time.perf_counter() - plan.started
    return summary


def _root_warnings(
    trees: list[Tree], checkouts: dict[tuple[str, str], set[str]], sessions: int, plan: _Plan
) -> list[str]:
    """What the roots' layout hides from the night's figures: a root read only in part, a
    repository checked out twice, and a root with no session beside roots that have some,
    or no session at all (a shard may hold none of a root's sessions, so shards are not
    told of those two)."""
    cut = [tree for tree in trees if tree.incomplete]
    found = [
        f"warning: {tree.label} could not be read in full ({tree.incomplete}; see "
        "its parse issue): the sessions in what was not read are missing from the night"
        for tree in cut
    ]
    found += _twin_checkouts(checkouts)
    if plan.shard_name:
        return found
    if sessions:
        found += _empty_roots([t for t in trees if t not in cut], {root for _, root in checkouts})
    elif not cut:
        # A root given below a repository's docs/ (or no repository at all) finds nothing: say
        # so, as a run of zero sessions is rarely what was meant (the run is committed).
        found.append(
            "warning: no session folder under the roots given; a session is a folder "
            "REPO/docs/research/{topic}-brainstorm/ or REPO/docs/history/brainstorms/{topic}/ "
            "below a root: give the repository, or a folder above it"
        )
    return found


def _empty_roots(trees: list[Tree], seen: set[str]) -> list[str]:
    """A warning for each root that held no session while others did: a typo or a root
    given below a repository's docs/ would otherwise pass unseen in the night's total (a
    root read only in part is told as such, not as one holding none)."""
    return [
        f"warning: {tree.label} holds no session folder (the other roots held some); a "
        "session is a folder REPO/docs/research/{topic}-brainstorm/ or "
        "REPO/docs/history/brainstorms/{topic}/ below a root"
        for tree in trees
        if _root_key(tree) not in seen
    ]


def _twin_checkouts(checkouts: dict[tuple[str, str], set[str]]) -> list[str]:
    """A warning for repositories checked out twice under a root (one origin, so one
    identity): each session of theirs is counted once, from the first by path."""
    pairs = sorted({tuple(sorted(paths)) for paths in checkouts.values() if len(paths) > 1})
    return [
        f"warning: {', '.join(paths)} are checkouts of one repository (the same origin); "
        f"each of their sessions is counted once, from {paths[0]}: crawl one checkout, "
        "or give each its own census (--out) to compare them"
        for paths in pairs
    ]


class _RunRows:
    """A run's results as they come in: written, counted, and their blocks' memos kept."""

    def __init__(
        self,
        writer: PartitionWriter,
        summary: CrawlSummary,
        memos: dict[str, memo.Memo],
        progress: Callable[[int], None] | None,
    ) -> None:
        self.writer = writer
        self.summary = summary
        self.memos = memos  # the memos loaded, which replayed blocks keep
        self.progress = progress
        self.memos_now: dict[str, memo.Memo] = {}
        self.written: set[str] = set()  # snapshot ids this run stored
        self.walked = False
        self.taken = 0
        # Session key and root → the repositories whose working tree holds it: more than
        # one is two checkouts of one repository (one origin) under a root.
        self.checkouts: dict[tuple[str, str], set[str]] = {}

    def take(self, result: JobResult) -> None:
        self.taken += 1
        if self.taken == 2:
            crash_point("writing")
        _write_result(self.writer, result, self.written)
        for row in result.observations:
            if row["commit"] is None:
                key = (row["session_key"], row["root"])
                self.checkouts.setdefault(key, set()).add(row["repo_path"])
        self.memos_now.update((key, self.memos[key]) for key in result.kept)
        self.memos_now.update((key, m) for key, m in result.memos.items() if m is not None)
        self.walked = self.walked or bool(result.memos)
        self.summary.add(result)
        if self.progress:
            self.progress(result.sessions)


def _heads_file(plan: _Plan) -> str:
    return f"history{'-' + plan.shard_name if plan.shard_name else ''}.json"


def _past_file(plan: _Plan) -> str:
    return f"past-sessions{'-' + plan.shard_name if plan.shard_name else ''}.json"


def _memo_file(out: Out, plan: _Plan) -> str:
    return str(out.state(f"memo{'-' + plan.shard_name if plan.shard_name else ''}.marshal"))


def forget_history(out: Out, repos: set[tuple[str, str]]) -> None:
    """Make the next --git-history crawl read these repositories' history again (each is
    (root, repo_path) as observations name it), in every shard's state: an unchanged HEAD
    and an unchanged tree's memo would each skip the walk, and with it the commits OUT no
    longer holds."""
    heads = {f"{root}\x1f{'' if path == '.' else path}" for root, path in repos}
    state = out.state("")
    for file in [*state.glob("history.json"), *state.glob("history-*.json")]:
        kept = {k: v for k, v in read_state(out, file.name).items() if k not in heads}
        write_state(out, file.name, kept)

    def holds_one(block: str) -> bool:
        root, _, rel = block.partition("\x1f")
        return any(root == r and (not rel or f"{p}/".startswith(f"{rel}/")) for r, p in repos)

    for file in [*state.glob("memo.marshal"), *state.glob("memo-*.marshal")]:
        memo.forget(str(file), holds_one)


@dataclass
class _Saved:
    """Which of the crawl's caches changed and are written after the commit."""

    cache_changed: bool
    heads_changed: bool
    memos_changed: bool
    memos: dict[str, memo.Memo]
    made: list[Any]  # the context the memos were made under
    # _with_past_sessions' answers, when they changed (None: as saved).
    past: dict[str, Any] | None = None


def _refuse_overlapping(roots: list[str]) -> None:
    """Each session is seen once per run: a root given twice, or inside another, would count
    its sessions twice (once per root)."""
    real = [(os.path.realpath(r), r) for r in roots]
    for i, (outer, outer_name) in enumerate(real):
        for inner, inner_name in real[i + 1 :]:
            if inner == outer or outer.startswith(inner.rstrip(os.sep) + os.sep):
                inner, inner_name, outer, outer_name = outer, outer_name, inner, inner_name
            # An archive inside a directory root is not read by its walk: no overlap.
            nested = os.path.isdir(inner) and inner.startswith(outer.rstrip(os.sep) + os.sep)
            if inner == outer or nested:
                kind = "folder" if os.path.isdir(inner) else "file"  # an archive is a file
                where = f"is the same {kind} as" if inner == outer else "lies inside"
                raise UsageError(
                    f"root {inner_name!r} {where} root {outer_name!r}; give each root once"
                )


def _refuse_foreign_out(out: Out) -> None:
    """An OUT that holds no census run yet is refused when it holds a folder named like one of
    its own: the crawl would write into the user's folder, and its sweep delete staging/."""
    foreign = out.foreign_folder()
    if foreign is not None:
        raise UsageError(
            f"--out {out.root} holds no census run yet but a folder {foreign!r} of its own "
            "name, which the crawl would write into (and sweep, for staging/); give --out a "
            "folder of its own"
        )


def _refuse_root_out(trees: list[Tree], out: Out) -> None:
    """OUT that is a root itself (`census crawl . --out .`): its files would lie among the ones
    crawled, walked on every crawl, and an OUT inside a root is left out only below it. A root
    inside OUT's own files would be written in."""
    where = os.path.realpath(out.root)
    for tree in trees:
        if getattr(tree, "root", None) == where:
            raise UsageError(
                f"--out {out.root} is root {tree.label!r} itself, where OUT's files would lie "
                "among the ones crawled; give --out a folder of its own (the default "
                "./census-out is one, left out of the crawl)"
            )
        # A root in OUT's own folders (OUT/tables) would be written in: the census never
        # writes in a root. A corpus beside them in OUT's folder is the user's, never written.
        place = str(getattr(tree, "root", "") or getattr(tree, "path", "") or tree.label)
        if out.owns(Path(place)):
            raise UsageError(
                f"root {tree.label!r} lies inside --out {out.root}, in the files the crawl "
                "writes; give a root outside OUT, or another --out"
            )


def _refuse_hiding_out(trees: list[Tree], out: Out) -> None:
    """The walk leaves out an OUT inside its root (the census never reads what it writes), so
    an OUT in a session folder, or one already holding documents or sessions, is refused: its
    folder would hide them, and the crawl would pass what `census detect` fails."""
    holding = [t for t in trees if isinstance(t, DirTree) and t.skip is not None]
    within: tuple[str, ...] = ()
    for tree in holding:
        parts = os.path.relpath(str(tree.skip), tree.root).split(os.sep)
        within = tuple(parts)
        session = next(session_matches(parts), None)
        if session is not None:
            folder = "/".join(parts[: session[1]])
            raise UsageError(
                f"--out {out.root} lies in the session folder {folder!r} of root {tree.label!r}, "
                "where its files would be the session's; give --out a folder outside it"
            )
    # In a session folder of a repository not crawled now, too: that repository's next crawl
    # would read OUT's files as the session's own (§12; found by a hunt, `census run` in one).
    place = session_folder_holding(out.root, is_dir=True)
    if place is not None:
        raise UsageError(
            f"--out {out.root} lies in the session folder {place}, where a crawl of its "
            "repository would read its files as the session's; give --out a folder outside it"
        )
    # Roots never nest (_refuse_overlapping), so OUT lies in one root at most: looked at once.
    held = out.corpus_inside(within) if holding else None
    if held is not None:
        raise UsageError(
            f"--out {out.root} lies inside root {holding[0].label!r} and holds {held!r}, which "
            "the crawl would not read (it leaves OUT out); give --out a folder of its own"
        )


def _context(
    out: Out,
    trees: list[Tree],
    plan: _Plan,
    run_id: str,
    now: datetime,
    fresh: bool = False,
    light: bool = False,
) -> _Context:
    """What the workers need to know of OUT: stored snapshots, file metadata, git history read.
    `fresh` (the readers changed): the stat cache is ignored, so every session is read again.
    `light` (nothing will be walked or read): none of it, only the run's own fields."""
    if light:
        return _Context(set(), {}, run_id, now, plan.git_history)
    cache = {} if fresh else read_statcache(out, plan.shard_name)
    ctx = _Context(out.stored_snapshot_ids(), cache, run_id, now, plan.git_history)
    ctx.shard = plan.shard
    ctx.nested_emptied, ctx.history_only = plan.nested_emptied, plan.history_only
    if plan.git_history:
        ctx.observed_commits = _observed_commits(out, [_root_key(t) for t in trees])
        ctx.heads = read_state(out, _heads_file(plan))
    return ctx


def _runs_row(summary: CrawlSummary, plan: _Plan, started: datetime) -> dict[str, Any]:
    labels = dict(plan.labels)
    if plan.shard:
        labels.setdefault("shard", plan.shard_name)
    return {
        "run_id": summary.run_id,
        "point": summary.point,
        "reader_version": READER_VERSION,
        "started_at": started,
        "finished_at": datetime.now(UTC),
        "roots": summary.roots,
        "labels": list(labels.items()),
        "git_history": plan.git_history,
        "tool_version": __version__,
        "sessions": summary.sessions + summary.history,
        "new_snapshots": summary.new_snapshots,
        "parse_issues": summary.parse_issues,
    }


def _commit(
    out: Out,
    staging: Any,
    summary: CrawlSummary,
    plan: _Plan,
    cache: dict[str, tuple[str, str]],
    heads: dict[str, dict[str, Any]],
    saved: _Saved,
) -> None:
    """Publish the run (the commit point), then the caches, compaction and census.duckdb that
    follow it: from the commit on the run is in OUT, so what fails after it is a warning."""
    from pipeline.aftercommit import Step, after_commit, cache_step, state_step

    with out.commit_lock():
        if plan.shard:
            try:
                # A shard that ran beside this one may have committed the other way meanwhile.
                _refuse_other_history(out, summary.point, plan.shard, plan.git_history)
            except UsageError:
                shutil.rmtree(staging, ignore_errors=True)  # nothing of a refused run stays
                raise
            summary.new_snapshots -= _drop_stored_meanwhile(out, staging, plan.snapshot_files)
        publish(out, staging, summary.run_id)
        steps = [cache_step(out, cache, plan.shard_name)] if saved.cache_changed else []
        if plan.git_history and saved.heads_changed:
            steps.append(state_step(out, _heads_file(plan), heads))
        if saved.past is not None:
            steps.append(state_step(out, _past_file(plan), saved.past))
        if saved.memos_changed:
            path = _memo_file(out, plan)
            steps.append(
                Step(
                    "the unchanged-tree memo",
                    "the next crawl walks every repository again",
                    lambda: memo.save(
                        path, saved.made, saved.memos, out.manifest()[SNAPSHOTS.name]
                    ),
                )
            )
        # A shard holds the writers' lock shared: another shard's staging is not its to sweep.
        sweep = not plan.shard_name
        summary.warnings = after_commit(out, f"run {summary.run_id}", *steps, sweep=sweep)


def _drop_stored_meanwhile(out: Out, staging: Path, before: frozenset[str]) -> int:
    """Leave out of the run's staged content the snapshots another shard of the night committed
    while it ran (one template in repositories of both shards): identical content is stored
    once, and stored twice it doubled every row the rules join (found by a hunt). The run's
    observations of them stay. How many snapshots were left out. Call under commit_lock."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    meanwhile = [out.tables / rel for rel in out.manifest()[SNAPSHOTS.name] if rel not in before]
    staged = sorted((staging / SNAPSHOTS.name).glob("*.parquet"))
    stored = set()
    if meanwhile and staged:
        stored = _snapshot_ids(staged, read_parquet) & _snapshot_ids(meanwhile, read_committed)
    if not stored:
        return 0
    left_out = pa.array(sorted(stored), pa.string())
    for table in CONTENT_TABLES:
        for file in sorted((staging / table.name).glob("*.parquet")):
            rows = read_parquet(file)
            theirs = pc.fill_null(pc.is_in(rows["snapshot_id"], left_out), False)
            pq.write_table(rows.filter(pc.invert(theirs)), file, compression="zstd")
    return len(stored)


def _snapshot_ids(files: list[Path], read: Callable[..., Any]) -> set[str]:
    """The snapshot ids in these files, each read with `read` (read_committed for OUT's own:
    one that cannot be read is damage to OUT, said so)."""
    return {i for f in files for i in read(f, ["snapshot_id"])["snapshot_id"].to_pylist()}


def _root_key(tree: Tree) -> str:
    """A root as the series know it: its real absolute path, however it was spelled."""
    return os.path.realpath(tree.label)


def _refuse_other_history(out: Out, point: str, shard: tuple[int, int], git_history: bool) -> None:
    """The shards of one night are crawled all with --git-history or all without: each shard
    reads its share of the night's history, so a night checked whole with one shard crawled
    the other way would lack that shard's commits (found by a hunt). The same shard crawled
    again may change its way: it then stands for the shard."""
    from pipeline.engine import table_scan

    files = out.files(RUNS.name)
    if not files:
        return
    mine = f"{shard[0]}-of-{shard[1]}"
    # Each other shard as its latest run crawled it (a shard crawled again stands for it).
    rows = _query(
        "SELECT shard FROM (SELECT labels['shard'] AS shard, arg_max(git_history, run_id) AS way "
        f"FROM ({table_scan(RUNS, files)}) WHERE point = ? GROUP BY shard) "
        "WHERE shard <> ? AND way <> ?",
        [point, mine, git_history],
    )
    others = sorted(r[0].replace("-of-", "/") for r in rows if SHARD_LABEL_RE.fullmatch(r[0]))
    if others:
        way, other_way = ("with", "without") if git_history else ("without", "with")
        raise UsageError(
            f"census point {point!r} holds shard{'s' if len(others) > 1 else ''} "
            f"{', '.join(others)} crawled {other_way} "
            f"--git-history; shard {shard[0]}/{shard[1]} cannot join it {way} (each shard "
            "reads its share of the night's history, so every shard of a night is crawled "
            "the same way)"
        )


# A character that ends a line or drives a terminal (C0 but the tab, DEL, C1).
_CONTROL_RE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def _refuse_bad_options(
    labels: dict[str, str], shard: tuple[int, int] | None, scheduler: str | None, point: str | None
) -> None:
    """Options that cannot work together, refused before anything is read or written."""
    if scheduler is not None and not scheduler.strip():
        # `--scheduler "$DASK_SCHEDULER"` with the variable unset: crawling here instead would
        # hide that the cluster asked for was never used.
        raise UsageError("--scheduler '' names no Dask scheduler; give tcp://HOST:PORT")
    if point is not None and (
        not point.strip()
        or point in ("latest", "previous")
        or RUN_ID_RE.fullmatch(point)
        or _CONTROL_RE.search(point)
    ):
        # Selectors read these words as positions, and `--run ID` a run id as the point that
        # holds that run: a point so named could never be chosen. A control character would
        # split each alarm naming the point over lines, or act on the terminal (found by a hunt).
        raise UsageError(
            f"--point {point!r} cannot name a census point; write --point $(date -u +%F)"
        )
    if shard is not None and not point:
        raise UsageError(
            "--shard needs --point NAME, the census point the shards of one night share "
            "(e.g. --point $(date -u +%F))"
        )
    if "shard" in labels:
        # The crawl labels each shard's run `shard=K-of-N`, by which check tells a night
        # whole: a label of the user's there (`shard=1-of-1`) froze half a night as whole,
        # and without --shard made a night no crawl could finish (found by a hunt).
        raise UsageError(
            f"--label shard={labels['shard']} names the label --shard gives the run "
            "(shard=K-of-N); give your label another name"
        )


def _refuse_closed_point(
    out: Out,
    point: str,
    shard: tuple[int, int] | None,
    labels: dict[str, str],
    trees: list[Tree],
    git_history: bool,
) -> None:
    """A crawl adds to the latest census point or starts a new one, never rewrites one: a
    checked point is final, and a point crawled after this one would have its sessions'
    later content ordered before this one's (a step forward read as a step back). Shards of
    one night share one N, and a night of shards takes no crawl without --shard, or it could
    never be checked; the runs of one point share their labels, or a selector by label would
    pick another arm's sessions with it."""
    from pipeline.engine import parquet_scan

    files = out.files(CHECKS.name)
    query = f"SELECT 1 FROM {parquet_scan(files)} WHERE point = ? LIMIT 1"
    if files and _query(query, [point]):
        raise OutError(
            f"census point {point!r} is already checked and its results are final; "
            "crawl into a new --point"
        )
    runs = out.files(RUNS.name)
    if not runs:
        return
    rows = _query(
        "WITH p AS (SELECT coalesce(point, run_id) AS point, min(started_at) AS started, "
        "list(labels['shard']) AS shards, arg_min(labels, started_at) AS labels "
        f"FROM {parquet_scan(runs)} GROUP BY 1) "
        "SELECT (SELECT arg_max(point, started) FROM p WHERE started > mine.started), "
        "mine.shards, mine.labels FROM p AS mine WHERE mine.point = ?",
        [point],
    )
    if not rows:
        return
    later, shards, held_labels = rows[0]
    if later is not None:
        raise OutError(
            f"census point {point!r} is no longer the latest ({later!r} was crawled after it); "
            "a crawl adds to the latest point or starts a new one: crawl into a new --point"
        )
    written = sorted({s for s in shards or [] if s and SHARD_LABEL_RE.fullmatch(s)})
    held = ", ".join(s.replace("-of-", "/") for s in written)
    if shard is not None and any(not s.endswith(f"-of-{shard[1]}") for s in written):
        raise UsageError(
            f"census point {point!r} holds shards {held}; --shard {shard[0]}/{shard[1]} "
            "cannot join them (the shards of one night share one N)"
        )
    _refuse_other_labels(point, dict(held_labels or {}), labels)
    if shard is not None:
        _refuse_other_history(out, point, shard, git_history)
    if shard is None and written:
        raise UsageError(
            f"census point {point!r} holds shards {held}; a crawl without --shard cannot join "
            f"them (the night is crawled in shards): crawl the others with --point {point} "
            f"--shard K/{written[0].rpartition('-of-')[2]}"
        )
    _refuse_nested_in_point(out, point, trees)


def _refuse_clock_behind(out: Out, point: str, now: datetime) -> None:
    """Points are ordered by their first run's start: a run started no later than another
    point (a host whose clock stepped back) would be ordered before a night already crawled,
    its steps compared with nothing and that night's trend rewritten."""
    from pipeline.engine import parquet_scan

    runs = out.files(RUNS.name)
    if not runs:
        return
    rows = _query(
        "SELECT coalesce(point, run_id) AS p, min(started_at) AS s "
        f"FROM {parquet_scan(runs)} GROUP BY 1 HAVING p <> ? AND s >= ? "
        "ORDER BY s DESC LIMIT 1",
        [point, now],
    )
    if rows:
        other, started = rows[0]
        raise OutError(
            f"this host's clock reads {now:%Y-%m-%dT%H:%M:%S}Z, not later than census point "
            f"{other!r} started ({started.astimezone(UTC):%Y-%m-%dT%H:%M:%S}Z): a crawl now "
            "would be ordered before it, and compared with nothing; set the clock right, "
            f"then crawl (if it is right, {other!r} was crawled by a clock running ahead: drop "
            f"it with census prune --point {other})"
        )


def _refuse_nested_in_point(out: Out, point: str, trees: list[Tree]) -> None:
    """The runs of one census point see each session once: a root inside a root that another
    run of the point crawled (or holding one) would count its sessions twice, once per root,
    as the same roots given to one crawl would (_refuse_overlapping). The same root again is a
    rerun of the night, whose latest observation stands."""
    from pipeline.engine import parquet_scan

    observations, runs = out.files(OBSERVATIONS.name), out.files(RUNS.name)
    if not observations or not runs:
        return
    held = _query(
        f"SELECT DISTINCT root FROM {parquet_scan(observations)} SEMI JOIN ("
        f"SELECT run_id FROM {parquet_scan(runs)} WHERE coalesce(point, run_id) = ?"
        ") USING (run_id) ORDER BY root",
        [point],
    )
    for tree in trees:
        mine = _root_key(tree)
        for (other,) in held:
            inner, outer = (mine, other) if len(mine) > len(other) else (other, mine)
            # An archive inside a directory root is not read by its walk: no overlap.
            if os.path.isdir(inner) and inner.startswith(outer.rstrip(os.sep) + os.sep):
                where = "lies inside" if inner == mine else "holds"
                raise UsageError(
                    f"root {tree.label!r} {where} root {other!r}, which census point {point!r} "
                    "was crawled from: its sessions would count twice there; give each folder "
                    "once (crawl the same roots into one point)"
                )


def _refuse_other_labels(point: str, held: dict[str, str], labels: dict[str, str]) -> None:
    from pipeline.select import labels_text

    held = {k: v for k, v in held.items() if k != "shard"}
    mine = {k: v for k, v in labels.items() if k != "shard"}
    if held != mine:
        raise UsageError(
            f"census point {point!r} holds runs with {labels_text(held) or 'no labels'} and "
            f"this crawl has {labels_text(mine) or 'no labels'}: the runs of one point share "
            "their labels (or it would mix two arms); crawl into its own --point"
        )


def _previous_reader(out: Out) -> str | None:
    """The reader version of OUT's latest run when it is not this one's (None otherwise)."""
    files = out.files(RUNS.name)
    if not files:
        return None
    import duckdb

    from pipeline.engine import parquet_scan

    # Runs written before the reader had a version lack the column: NULL, read as "before 2".
    try:
        found = _query(
            "SELECT bool_or(reader_version IS NULL), arg_max(reader_version, started_at) "
            f"FROM {parquet_scan(files)}"
        )
    except duckdb.BinderException:  # no run has the column at all
        return "before 2"
    legacy, latest = found[0] if found else (False, None)
    if legacy:
        return "before 2"
    return None if latest in (None, READER_VERSION) else str(latest)


def _with_emptied_repos(
    out: Out, trees: list[Tree], blocks: list[list[str]], plan: _Plan
) -> list[list[str]]:
    """`blocks` and, per directory root, the repositories OUT saw sessions in that hold none
    now (the last folder deleted): their history is read still, so a step back committed
    before the deletion fails the night; unlisted, no commit was read (found by a hunt).
    One inside a listed repository is read in that one's block (plan.nested_emptied)."""
    from pipeline.engine import parquet_scan

    files = out.files(OBSERVATIONS.name)
    roots = [t.root for t in trees if isinstance(t, DirTree)]
    if not files or not roots:
        return blocks
    seen = _query(
        f"SELECT DISTINCT root, repo_path FROM {parquet_scan(files)} WHERE list_contains(?, root)",
        [roots],
    )
    more = [list(rels) for rels in blocks]
    nested, around = set(), set()
    for tree, rels in zip(trees, more, strict=True):
        if not isinstance(tree, DirTree):
            continue
        listed = set(rels)  # the usual case, a repository still listed, costs one look-up
        for root, repo_path in sorted(seen):
            rel = "" if repo_path == "." else repo_path
            if root != tree.root or rel in listed:
                continue
            # One walked inside another would show the other's sessions twice: left out.
            overlaps = any(
                not r or not rel or f"{r}/".startswith(f"{rel}/") or rel.startswith(f"{r}/")
                for r in rels
            )
            if not overlaps and os.path.isdir(os.path.join(root, rel)):
                rels.append(rel)
            elif rel and any(not r or rel.startswith(f"{r}/") for r in rels):
                nested.add(_block_key(root, rel))
            elif os.path.lexists(os.path.join(root, rel, ".git")):
                # Around listed ones (whose walks hold their sessions): its history alone.
                rels.append(rel)
                around.add(_block_key(root, rel))
    plan.nested_emptied, plan.history_only = frozenset(nested), frozenset(around)
    return more


def _with_past_sessions(
    out: Out, trees: list[Tree], blocks: list[list[str]], plan: _Plan
) -> tuple[list[list[str]], dict[str, Any] | None]:
    """`blocks` and, per directory root, the git repositories that hold no session folder now
    but whose history did (every session folder deleted, before OUT ever saw one): §2 reads a
    snapshot per commit that touched a session folder, and on a new OUT (_with_emptied_repos
    knows the repositories OUT saw) they were never read, a step back in them unseen (found by
    a hunt). One around listed repositories has its history read unwalked, as there. Git is
    asked once per HEAD; the answers, when they changed, are returned to be saved."""
    known = read_state(out, _past_file(plan))
    answers: dict[str, Any] = {}
    more = [list(rels) for rels in blocks]
    around = set(plan.history_only)
    for tree, rels in zip(trees, more, strict=True):
        if not isinstance(tree, DirTree):
            continue
        for rel in [r for r in tree.git_folders if r not in rels]:
            key = _block_key(tree.root, rel)
            repo = GitRepo(os.path.join(tree.root, rel) if rel else tree.root)
            head = repo.head()
            if head is None:  # no commit (or none git can name): no history to read
                continue
            seen = known.get(key)
            held = seen["held"] if seen and seen.get("head") == head else repo.held_sessions()
            answers[key] = {"head": head, "held": held}
            if held:
                if any(not rel or r.startswith(f"{rel}/") for r in rels):
                    around.add(key)
                rels.append(rel)
    plan.history_only = frozenset(around)
    return more, (answers if answers != known else None)


def _emptied_inside(
    ctx: _Context, root: str, entries: list[Entry], repos: list[RepoRef]
) -> list[RepoRef]:
    """The repositories of a walked block with a `.git` of their own that OUT saw sessions in
    and that hold none now: nested in the block's repository, they are no block of their own,
    and their history must still be read (a step back committed before the deletion)."""
    found = {r.path for r in repos}
    nested = []
    for entry in entries:
        path = entry.path.removesuffix("/.git")
        if entry.problem != "git" or path == entry.path or path in found:
            continue
        if _block_key(root, path) in ctx.nested_emptied:
            nested.append(RepoRef(path, has_git=True))
    return nested


def _query(sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    """A look-up in OUT's files through DuckDB: reading them with pyarrow would import pandas
    (about 0.6 s, as much as the rest of an unchanged rerun's own work)."""
    from pipeline.engine import in_memory

    with in_memory() as con:
        return con.execute(sql, params or []).fetchall()


def _observed_commits(out: Out, roots: list[str]) -> set[str]:
    """The commit snapshots OUT holds for these roots: each is read and stored once."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from pipeline.maintain import PRUNED_COMMITS

    keys = set(read_state(out, PRUNED_COMMITS).get("keys", []))
    wanted = pa.array(roots, pa.string())
    for file in out.files(OBSERVATIONS.name):
        data = read_committed(file, ["root", "session_key", "commit"])
        data = data.filter(
            pc.and_(pc.is_valid(data.column("commit")), pc.is_in(data.column("root"), wanted))
        )
        joined = pc.binary_join_element_wise(
            data.column("root"), data.column("session_key"), data.column("commit"), "\x1f"
        )
        keys.update(joined.to_pylist())
    return keys


def _rows(result: JobResult, table: str) -> int:
    found = result.tables.get(table)
    return 0 if found is None else int(found.num_rows)


def _write_root_issues(
    writer: PartitionWriter, trees: list[Tree], run_id: str, shard: tuple[int, int] | None
) -> int:
    """The roots' own issues this shard writes; how many."""
    written = 0
    for tree in trees:
        for path, code, message in tree.issues:
            row = _root_issue(run_id, tree, path, code, message)
            if root_issue_in_shard(row["file"], code, message, shard):
                writer.write(PARSE_ISSUES.name, [row])
                written += 1
    return written


def _root_issue(run_id: str, tree: Tree, path: str, code: str, message: str) -> dict[str, Any]:
    where = f"{tree.label}:{path}" if path else tree.label
    return {
        "snapshot_id": None,
        "run_id": run_id,
        "file": where,
        "line": None,
        "code": code,
        "message": message,
    }


def _write_result(writer: PartitionWriter, result: JobResult, written: set[str]) -> None:
    snapshots = result.tables.get(SNAPSHOTS.name)
    ids = set(snapshots.column("snapshot_id").to_pylist()) if snapshots is not None else set()
    repeated = ids & written
    for name, table in result.tables.items():
        if repeated:
            # Two jobs met the same content in one run: keep the first copy only.
            import pyarrow as pa
            import pyarrow.compute as pc

            keep = pc.invert(pc.is_in(table.column("snapshot_id"), pa.array(sorted(repeated))))
            table = table.filter(keep)
        writer.write(name, table)
    written.update(ids)
    writer.write(OBSERVATIONS.name, result.observations)
    if result.issues:
        writer.write(PARSE_ISSUES.name, result.issues)


def root_issue_in_shard(where: str, code: str, message: str, shard: tuple[int, int] | None) -> bool:
    """Whether this shard writes a root issue: every shard walks every root and meets its
    issues, so each is written by the one shard a stable hash of it names (a night crawled in
    N shards would otherwise hold it N times)."""
    text = f"{where}\0{code}\0{message}".encode("utf-8", "surrogateescape")
    return in_shard(hashlib.sha256(text).hexdigest(), shard)


def in_shard(key: str, shard: tuple[int, int] | None) -> bool:
    """Whether a session belongs to shard K of N: a stable hash of its session_key, so a
    session's working tree and every commit of its history fall to the same shard."""
    if shard is None:
        return True
    return int(key[:12], 16) % shard[1] == shard[0] - 1


def _jobs(
    trees: list[Tree], walk: list[list[str]], shard: tuple[int, int] | None
) -> Iterator[tuple[Tree, Job]]:
    """The work left after the replay: `walk` names, per directory root, the repository roots
    its workers walk and discover themselves; archives are read whole."""
    for tree, rels in zip(trees, walk, strict=True):
        if isinstance(tree, DirTree):
            per_job = _blocks_per_job()
            for start in range(0, len(rels), per_job):
                roots = rels[start : start + per_job]
                yield tree, Job(tree.label, tree.root, "", [], roots, shard, tree.out)
            continue
        root_abs = _root_key(tree)
        pending: list[RepoRef] = []
        count = 0
        for block in tree.blocks():
            for repo in discover(block):
                pending.append(repo)
                count += len(repo.sessions)
                if count >= JOB_SESSIONS:
                    yield tree, Job(tree.label, root_abs, tree.archive_name, pending, [], shard)
                    pending, count = [], 0
        if pending:
            yield tree, Job(tree.label, root_abs, tree.archive_name, pending, [], shard)


def _blocks_per_job() -> int:
    return max(1, JOB_SESSIONS // REPO_WEIGHT)


def _block_key(root: str, rel: str) -> str:
    """A block (a repository root `rel` under the directory root `root`) as its memo is
    keyed; _block_root gives the root back."""
    return f"{root}\x1f{rel}"


def _block_root(key: str) -> str:
    return key.partition("\x1f")[0]


def stamp_pool(workers: int) -> ProcessPoolExecutor:
    """The workers that check stamps: spawned, as fork would copy the locks of threads a
    caller (pyarrow, DuckDB) may run, and importing no more than the stamps need."""
    return ProcessPoolExecutor(workers, get_context("spawn"), die_with_parent, (os.getpid(),))


@contextmanager
def _confirming(
    memos: dict[str, memo.Memo], roots: set[str], plan: _Plan
) -> Iterator[Iterator[list[str]]]:
    """Start checking the stamps of the memos of these roots' blocks; what it gives yields the
    keys of those that hold, a batch at a time as the checks end (in worker processes, when
    there are many)."""
    keys = [key for key in memos if _block_root(key) in roots]
    items = [(_block_root(key), memos[key]) for key in keys]
    workers = plan.workers or os.cpu_count() or 1
    if len(keys) * REPO_WEIGHT < INLINE_SESSIONS or workers <= 1:
        yield iter([[key for key, holds in zip(keys, memo.confirm(items), strict=True) if holds]])
        return
    size = -(-len(keys) // (workers * 4))  # a few batches per worker, to balance them
    batches = [(keys[i : i + size], items[i : i + size]) for i in range(0, len(keys), size)]
    with stamp_pool(workers) as pool:
        answers = pool.map(memo.confirm, [batch for _, batch in batches])
        yield (
            [key for key, holds in zip(batch_keys, answer, strict=True) if holds]
            for (batch_keys, _), answer in zip(batches, answers, strict=True)
        )


def _results(
    trees: list[Tree], walk: list[list[str]], ctx: _Context, plan: _Plan
) -> Iterator[JobResult]:
    jobs = _jobs(trees, walk, plan.shard)
    if plan.scheduler:
        yield from _dask_results(jobs, ctx, plan.scheduler)
        return
    head: list[tuple[Tree, Job]] = []
    total = 0
    for item in jobs:
        head.append(item)
        total += item[1].weight
        if total >= INLINE_SESSIONS:
            break
    workers = plan.workers or os.cpu_count() or 1
    if total < INLINE_SESSIONS or workers <= 1:
        _init_worker(ctx)
        for tree, job in [*head, *jobs]:
            yield run_job(job, tree)
        return
    # Spawned workers: the parent has pyarrow threads running, and fork would copy their locks.
    with ProcessPoolExecutor(
        workers, get_context("spawn"), _start_worker, (os.getpid(), ctx)
    ) as pool:
        pending: set[Future[JobResult]] = set()
        inline: list[tuple[Tree, Job]] = []
        try:
            for tree, job in [*head, *jobs]:
                # Archives live in the parent's memory, so their jobs run here.
                if not isinstance(tree, DirTree):
                    inline.append((tree, job))
                    continue
                pending.add(pool.submit(run_job, job, None))
                while len(pending) >= workers * 3:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    yield from (f.result() for f in done)
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                yield from (f.result() for f in done)
        except BaseException:
            # Interrupted or failed: the queued jobs are dropped, not run to the end first.
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    _init_worker(ctx)
    for tree, job in inline:
        yield run_job(job, tree)


def _dask_results(
    jobs: Iterator[tuple[Tree, Job]], ctx: _Context, address: str
) -> Iterator[JobResult]:
    """The same jobs on a Dask cluster; its workers must see the roots at the same paths."""
    try:
        from distributed import Client
    except ImportError:
        raise OutError(
            "--scheduler needs the dask extra: pip install 'brainstorm-census[dask]'"
        ) from None
    inline: list[tuple[Tree, Job]] = []
    with _quiet_dask():
        client: Any = _dask_client(Client, address)
        with client:
            try:
                shared_ctx = client.scatter(ctx, broadcast=True)
            except OSError as err:  # TimeoutError: no worker joined the scheduler in time
                if not isinstance(err, TimeoutError):
                    raise _scheduler_lost(address, err) from None
                raise UsageError(
                    f"--scheduler {address!r}: the Dask scheduler gave the crawl no worker "
                    f"({err}); start workers for it (dask worker ADDRESS)"
                ) from None
            yield from _dask_run(client, shared_ctx, jobs, inline, address)
    _init_worker(ctx)
    for tree, job in inline:
        yield run_job(job, tree)


@contextmanager
def _quiet_dask() -> Iterator[None]:
    """Dask's loggers (each with its own level and handler) silenced below CRITICAL: a lost
    scheduler is logged as tracebacks on stderr, where the crawl says it in one line."""
    names = [n for n in logging.root.manager.loggerDict if n.split(".")[0] == "distributed"]
    loggers = [logging.getLogger(n) for n in ["distributed", *names]]
    levels = [one.level for one in loggers]
    for one in loggers:
        one.setLevel(logging.CRITICAL)
    yield
    # Not on an error: Dask's threads may still log the lost scheduler as the crawl ends.
    for one, level in zip(loggers, levels, strict=True):
        one.setLevel(level)


def _dask_run(
    client: Any, shared_ctx: Any, jobs: Iterator[tuple[Tree, Job]], inline: list[Any], at: str
) -> Iterator[JobResult]:
    """The directory jobs on the cluster, at most three per thread in flight; the others
    (archives, git history) into `inline`, for this process."""
    from asyncio import CancelledError
    from concurrent.futures import CancelledError as FutureCancelled

    from distributed import wait as dask_wait

    limit = max(sum(client.nthreads().values()), 1) * 3
    pending: set[Any] = set()
    try:
        for tree, job in jobs:
            if not isinstance(tree, DirTree):
                inline.append((tree, job))
                continue
            pending.add(client.submit(run_remote, shared_ctx, job, pure=False))
            while len(pending) >= limit:
                done, not_done = dask_wait(list(pending), return_when="FIRST_COMPLETED")  # type: ignore[no-untyped-call]
                pending = set(not_done)
                yield from (f.result() for f in done)
        while pending:
            done, not_done = dask_wait(list(pending), return_when="FIRST_COMPLETED")  # type: ignore[no-untyped-call]
            pending = set(not_done)
            yield from (f.result() for f in done)
    except (CancelledError, FutureCancelled, OSError) as err:
        # The futures were cancelled, or the connection closed, with the client: the scheduler
        # went away (an OSError of a job itself, with the client still up, is the job's).
        if isinstance(err, OSError) and client.status == "running":
            raise
        raise _scheduler_lost(at, err) from None


def _scheduler_lost(address: str, err: BaseException) -> UsageError:
    """One line: Dask's message for cancelled futures runs over several, listing each."""
    detail = (str(err).strip().splitlines() or ["no detail"])[0].rstrip(":")
    return UsageError(
        f"--scheduler {address!r}: the Dask scheduler was lost mid-crawl "
        f"({type(err).__name__}: {detail}); nothing of this crawl is in OUT; "
        "restart the scheduler and its workers, and crawl again"
    )


def _dask_client(make: Any, address: str) -> Any:
    """A Dask client of the scheduler at `address`, or one clear line why there is none.

    The wait is Dask's connect timeout (`distributed.comm.timeouts.connect`, 30 s unless
    configured), given explicitly; a peer that accepts the connection and never answers
    (no scheduler, a hung one) is not bounded by it in Dask, so the client is made on a
    daemon thread that the crawl stops waiting for."""
    import threading

    import dask
    from dask.utils import parse_timedelta

    timeout = parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"), "s") or 30
    made: list[Any] = []
    failed: list[BaseException] = []

    def connect() -> None:
        try:
            made.append(make(address, timeout=timeout))
        except BaseException as err:  # handed to the crawl's thread, which says what it was
            failed.append(err)

    thread = threading.Thread(target=connect, name="census-dask-connect", daemon=True)
    thread.start()
    thread.join(timeout * 2 + 5)
    err = failed[0] if failed else None
    if made:
        return made[0]
    if err is None:
        raise UsageError(
            f"--scheduler {address!r}: no Dask scheduler answered within {timeout * 2 + 5:g} s "
            "(something there takes the connection but does not speak Dask's protocol, or the "
            "scheduler hangs); check the address, or restart the scheduler"
        )
    if isinstance(err, AssertionError | RuntimeError):
        # distributed's IO loop thread missed its start (10 s; an overloaded machine): no
        # client, through no fault of the address.
        raise UsageError(
            f"--scheduler {address!r}: Dask's client could not start its IO loop "
            f"({type(err).__name__}{': ' + str(err) if str(err) else ''}); the machine may be "
            "overloaded: run the crawl again"
        ) from None
    if not isinstance(err, OSError | ValueError | TypeError):
        raise err
    # No cluster there (a typo, a stopped scheduler, a tls:// or ucx:// address this process
    # has no settings or library for): the user's to fix, not a bug.
    raise UsageError(
        f"--scheduler {address!r}: no Dask scheduler reached ({err}); start it, or give "
        "its address as tcp://HOST:PORT"
    ) from None


def run_remote(ctx: _Context, job: Job) -> JobResult:
    """A job on a Dask worker: the context travels with it."""
    _init_worker(ctx)
    return run_job(job, None)


def run_job(job: Job, tree: Tree | None) -> JobResult:
    """Read, hash and (when new) parse every session of a job's repositories."""
    from pipeline.schema import arrow_table

    ctx = _CTX
    assert ctx is not None, "run_job needs _init_worker first"
    batch = _JobBatch(job, ctx)
    if job.walk:
        walker = DirTree(job.root_abs, job.skip)
        for rel in job.walk:
            _crawl_block(batch, job, walker, rel)
    for repo in job.repos:
        _crawl_repo(batch, job, repo, tree)
    for table in CONTENT_TABLES:
        if batch.rows[table.name]:
            batch.result.tables[table.name] = arrow_table(table, batch.rows[table.name])
    return batch.result


def _crawl_block(batch: _JobBatch, job: Job, walker: DirTree, rel: str) -> None:
    """One repository root under a directory root, walked, discovered and crawled, and
    memoised when nothing in it was amiss."""
    key = _block_key(job.root_abs, rel)
    if key in batch.ctx.history_only:
        # Emptied, around listed repositories: walking it would read their sessions twice.
        batch.result.memos[key] = None
        _crawl_repo(batch, job, RepoRef(rel, has_git=True), None)
        return
    started = time.time_ns()
    seen = len(walker.issues)
    entries = list(walker.walk_block(rel))
    stamps = memo.stamps_of(job.root_abs, rel, entries, started)
    walk_issues = walker.issues[seen:]
    repos = list(discover(entries))
    if batch.ctx.git_history and not repos:
        # A repository OUT saw sessions in that holds none now (_with_emptied_repos).
        repos.append(RepoRef(rel, has_git=True))
    if batch.ctx.nested_emptied:
        repos += _emptied_inside(batch.ctx, job.root_abs, entries, repos)
    # A link out of the root inside a session is that session's own parse issue already, and
    # a folder not listed inside a repository is its session's or the repository's (discover).
    sessions = tuple(f"{s.root_path}/" for r in repos for s in r.sessions.values())
    inside = tuple(f"{r.path}/" if r.path else "" for r in repos)
    for path, code, message in walk_issues:
        if code == "unreadable-dir" and repos and f"{path}/".startswith(inside):
            continue
        if message != OUT_OF_ROOT or not path.startswith(sessions):
            batch.root_issue(f"{job.root_label}:{path}", code, message)
    issues, observed = len(batch.result.issues), len(batch.result.observations)
    for repo in repos:
        _crawl_repo(batch, job, repo, None)
    if stamps is None or walk_issues or len(batch.result.issues) != issues:
        batch.result.memos[key] = None
        return
    rows = [
        [o[name] for name in _MEMO_COLUMNS]
        for o in batch.result.observations[observed:]
        if o["commit"] is None
    ]
    batch.result.memos[key] = memo.pack(stamps, rows)


# The observation columns a memo keeps: the rest are the run's own.
_MEMO_COLUMNS = tuple(n for n in OBSERVATIONS.names if n not in ("run_id", "observed_at"))


def _replayed(
    held: Iterator[list[str]],
    listed: set[str],
    memos: dict[str, memo.Memo],
    stored: set[str] | None,
    ctx: _Context,
) -> Iterator[JobResult]:
    """The rows of each block listed now whose stamps held, again, as this run's observations,
    in job-sized results. `stored`: the snapshots OUT holds, when the memos' rows need looking
    up (a block with a row naming another is walked instead)."""
    at = _MEMO_COLUMNS.index("snapshot_id")
    step = _blocks_per_job()
    for keys in held:
        keys = sorted(k for k in keys if k in listed and k in memos)
        for start in range(0, len(keys), step):
            result = JobResult({}, [], {}, [])
            for key in keys[start : start + step]:
                rows = memo.unpack_rows(memos[key], len(_MEMO_COLUMNS))
                if rows is None or (stored is not None and any(r[at] not in stored for r in rows)):
                    continue
                for row in rows:
                    observation = dict(zip(_MEMO_COLUMNS, row, strict=True))
                    observation["run_id"] = ctx.run_id
                    observation["observed_at"] = ctx.observed_at
                    result.observations.append(observation)
                result.kept.append(key)
                result.sessions += len(rows)
                result.replayed += len(rows)
            yield result


def _crawl_repo(batch: _JobBatch, job: Job, repo: RepoRef, tree: Tree | None) -> None:
    # The reading side is imported where it runs: an unchanged rerun's parent never reads.
    from pipeline.gather import (
        destination_stamps,
        nested_index_stamps,
        repo_signature,
        session_signature,
    )

    ctx = batch.ctx
    repo_ctx = _repo_context(job, repo, tree)
    known = ctx.heads.get(f"{job.root_abs}\x1f{repo.path}")
    identity = _kept_identity(known, _identity(job, repo, repo_ctx), repo_ctx.git_prefix)
    mine = {
        folder: s
        for folder, s in repo.sessions.items()
        if in_shard(session_key(identity, s.topic), job.shard)
    }
    at_head: dict[str, list[str]] = {}
    if ctx.git_history and repo_ctx.git is not None:
        history = _history(batch, job, repo, repo_ctx, identity)
        at_head = history.at_head
        for session in mine.values():
            repo_ctx.tracked_history[session.path] = sorted(
                (f, c) for f, c in history.ops_tracked.get(session.topic, [])
            )
    for session in mine.values() if ctx.git_history else ():
        repo_ctx.nested_ops_history(session)
        repo_ctx.linked_history(session)
    repo_sig = repo_signature(repo_ctx) + destination_stamps(repo_ctx)
    repo_sig += tree.stamp if tree is not None else ""
    for session in mine.values():
        key = f"{job.root_abs}\x1f{session.root_path}"
        sig = session_signature(repo_sig, session) + nested_index_stamps(repo_ctx, session)
        if ctx.git_history:
            # What history adds to the working tree is part of what the rules read.
            sig += "/" + "".join(
                f"{f}@{c}" for f, c in repo_ctx.tracked_history.get(session.path, [])
            )
            # A history git stopped walking fails the series rules on unchanged files too.
            sig += f"/{repo_ctx.history_problem}" if repo_ctx.history_problem else ""
            sig += "/" + repo_ctx.nested_history_problem.get(session.path, "")
            sig += "/" + repo_ctx.session_history_problem.get(session.path, "")
        parents = at_head.get(session.topic, []) if ctx.git_history else None
        batch.observe(repo_ctx, session, identity, key, sig, ctx.observed_at, None, parents)
    for path, code, message in repo_ctx.issues:
        batch.root_issue(f"{repo.path}/{path}".lstrip("/"), code, message)
    repo_ctx.close()


def _history_failure(repo_ctx: RepoContext, head: str | None, read: int) -> str:
    """Why git could not walk the history, said as a history-incomplete issue; "" when it
    could. Asked after the walk: git may fail on a commit's files (a tree lost) part-way."""
    assert repo_ctx.git is not None
    # Only an unborn branch has no history to read; a HEAD git cannot resolve hides one.
    failure = repo_ctx.history().failure or repo_ctx.git.head_failure
    if head is None and not repo_ctx.git.head_failure:
        return ""
    if failure:
        unread = "not every commit was read" if read else "no commit was read"
        repo_ctx.history_problem = (
            f"git could not walk the history ({failure}): {unread}, so a step back "
            "along it cannot be seen"
        )
        repo_ctx.issues.append((".git", "history-incomplete", repo_ctx.history_problem))
    return failure


def _history(
    batch: _JobBatch, job: Job, repo: RepoRef, repo_ctx: RepoContext, identity: str
) -> History:
    """The repository's history at HEAD; the commit snapshots of this shard's sessions that OUT
    does not hold yet are observed. An unchanged HEAD reads nothing from git but HEAD."""
    from pipeline.gather import History, read_history, shallow_boundary, walk_history

    ctx = batch.ctx
    assert repo_ctx.git is not None
    repo_key = f"{job.root_abs}\x1f{repo.path}"
    head = repo_ctx.git.head()
    boundary = shallow_boundary(repo_ctx.git.path)
    if boundary:
        message = (
            "a shallow clone: the commits before its boundary are not in the repository, so "
            "--git-history reads only part of each session's history (fetch with --unshallow)"
        )
        repo_ctx.issues.append((".git", "history-incomplete", message))
        # Deepened later (`git fetch --unshallow`), the history is new though HEAD is not.
        head = f"{head}\x1fshallow:{boundary}" if head is not None else None
    known = ctx.heads.get(repo_key)
    # A new identity (an origin added or changed) starts new series, which need the history
    # read under their own keys though HEAD did not move.
    if (
        known
        and head is not None
        and known.get("head") == head
        and known.get("identity") == identity
    ):
        batch.result.heads[repo_key] = known
        ops = {t: [tuple(p) for p in pairs] for t, pairs in known["ops"].items()}
        return History(known["at_head"], ops)
    history = read_history(repo_ctx)

    def wanted(topic: str, commit: str) -> bool:
        key = session_key(identity, topic)
        seen = f"{job.root_abs}\x1f{key}\x1f{commit}" in ctx.observed_commits
        return not seen and in_shard(key, job.shard)

    read = 0
    for commit, when, parents, past_ctx, session in walk_history(repo_ctx, history, wanted):
        key = f"{job.root_abs}\x1f{session.root_path}\x1f{commit}"
        at = datetime.fromtimestamp(when, UTC)
        batch.observe(past_ctx, session, identity, key, commit, at, commit, parents)
        read += 1
    failure = _history_failure(repo_ctx, head, read)
    batch.result.heads[repo_key] = {
        "head": None if failure else head,  # read again next time, once git can
        "identity": identity,
        "at_head": history.at_head,
        "ops": history.ops_tracked,
    }
    return history


class _JobBatch:
    """The rows and observations one job produces."""

    def __init__(self, job: Job, ctx: _Context) -> None:
        self.job = job
        self.ctx = ctx
        self.rows: dict[str, list[dict[str, Any]]] = {t.name: [] for t in CONTENT_TABLES}
        self.result = JobResult({}, [], {}, [])
        self.seen: set[str] = set()

    def observe(
        self,
        repo_ctx: RepoContext,
        session: SessionRef,
        identity: str,
        key: str,
        signature: str,
        observed_at: datetime,
        commit: str | None,
        parents: list[str] | None = None,
    ) -> None:
        ctx, result = self.ctx, self.result
        if commit is None:
            result.sessions += 1
        else:
            result.history += 1
        cached = ctx.cache.get(key)
        if cached and cached[0] == signature and cached[1] in ctx.stored:
            snapshot_id = cached[1]
        else:
            from pipeline.gather import session_input
            from pipeline.parse.session import parse_session, snapshot_row

            inp = session_input(repo_ctx, session)
            result.read += 1
            snapshot_id = inp.snapshot_id()
            if snapshot_id not in ctx.stored and snapshot_id not in self.seen:
                rec = parse_session(inp, snapshot_id)
                result.parsed += 1
                self.rows[SNAPSHOTS.name].append(snapshot_row(rec, SNAPSHOTS.names))
                for name, table_rows in rec.rows.items():
                    self.rows[name].extend(table_rows)
            self.seen.add(snapshot_id)
        result.cache[key] = (signature, snapshot_id)
        result.observations.append(
            {
                "run_id": ctx.run_id,
                "session_key": session_key(identity, session.topic),
                "snapshot_id": snapshot_id,
                "root": self.job.root_abs,
                "repo": identity,
                "repo_path": session.repo_path or ".",
                "path": session.path,
                "topic": session.topic,
                "location": session.location,
                "observed_at": observed_at,
                "commit": commit,
                "parents": parents,
            }
        )

    def root_issue(self, where: str, code: str, message: str) -> None:
        if not root_issue_in_shard(where, code, message, self.job.shard):
            return
        self.result.issues.append(
            {
                "snapshot_id": None,
                "run_id": self.ctx.run_id,
                "file": where,
                "line": None,
                "code": code,
                "message": message,
            }
        )


def _repo_context(job: Job, repo: RepoRef, tree: Tree | None) -> RepoContext:
    from pipeline.gather import RepoContext, folder_names

    base = os.path.join(job.root_abs, repo.path) if repo.path else job.root_abs
    if tree is not None and not isinstance(tree, DirTree):
        prefix = f"{repo.path}/" if repo.path else ""
        archive = tree
        # In an archive, a link climbs back into the repository through the members' folders.
        names = tuple(repo.path.split("/")) if repo.path else ()
        return RepoContext(repo, lambda p: archive.read(prefix + p), root_names=names)
    from pipeline.sources.tree import read_file

    # A file that is a link leads inside its own repository or is not read, as in detect:
    # bounded by the crawl's root, what a folder reads would hang on where the crawl began.
    bound = os.path.realpath(base)
    ctx = RepoContext(repo, lambda p: read_file(os.path.join(base, p), bound), base=base)
    ctx.root_names = folder_names(base)
    git_top = _git_top(job.root_abs, repo.path)
    if git_top is not None:
        ctx.git = GitRepo(os.path.join(job.root_abs, git_top) if git_top else job.root_abs)
        ctx.git_prefix = repo.path[len(git_top) :].strip("/")
    return ctx


def _git_top(root_abs: str, repo_path: str) -> str | None:
    """The nearest folder at or above the repository, inside the root, that holds .git."""
    parts = repo_path.split("/") if repo_path else []
    for depth in range(len(parts), -1, -1):
        candidate = "/".join(parts[:depth])
        # lexists: a `.git` link git cannot follow is a repository git cannot read (BS-OPS-02
        # then fails as git-unreadable), never a plain folder.
        if os.path.lexists(os.path.join(root_abs, candidate, ".git")):
            return candidate
    return None


def _kept_identity(known: dict[str, Any] | None, identity: str, prefix: str | None) -> str:
    """The identity this checkout had when last crawled with history, if its origin names the
    same remote however respelt (https → ssh, `.git` dropped): a new spelling would start new
    series and read their whole history again under new keys, so every step along it failed
    a second night (found by a hunt)."""
    before = known.get("identity") if known else None
    if not isinstance(before, str) or before == identity:
        return identity
    suffix = f":{prefix}" if prefix else ""
    if not (before.endswith(suffix) and identity.endswith(suffix)):
        return identity
    urls = [i.removesuffix(suffix) if suffix else i for i in (before, identity)]
    remotes = [same_remote(u) for u in urls]
    # A path under the root is no URL: an origin added to such a repository starts new series.
    if remotes[0] == urls[0] or remotes[1] == urls[1]:
        return identity
    return before if remotes[0] == remotes[1] else identity


def _identity(job: Job, repo: RepoRef, ctx: RepoContext) -> str:
    if ctx.git is not None and ctx.git.origin:
        return f"{ctx.git.origin}:{ctx.git_prefix}" if ctx.git_prefix else ctx.git.origin
    if job.archive_name:
        # The archive's own name, links resolved (root_abs): not the name the crawl was given.
        return f"{os.path.basename(job.root_abs)}:{repo.path or '.'}"
    # A root that is itself the repository is named by its folder: '.' would make every
    # such root the same repository, and their sessions one another's.
    root_name = os.path.basename(job.root_abs.rstrip(os.sep)) or "."
    if repo.path == root_name:
        # A repository below it named like the root (proj/proj/) is another repository; './'
        # begins no path relative to the root, so the two never share an identity.
        return f"./{repo.path}"
    return repo.path or root_name
