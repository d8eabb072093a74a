"""Which census point a command reads: one selector, used by check, stats, report, sql and
each arm of compare (docs/time-model.md).

    --run latest       the latest census point (the default)
    --run previous     the one before it
    --run ID           the point holding run ID, or the point named ID (--point at crawl time)
    --label k=v …      only points whose runs carry every label; --run then picks among them
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pipeline.errors import SelectorError
from pipeline.store import SHARD_LABEL_RE


@dataclass(frozen=True)
class Point:
    """A census point: the runs of one night (shards included), or a run of its own."""

    name: str
    position: int
    started_at: datetime
    runs: tuple[str, ...]
    labels: dict[str, str] = field(default_factory=dict, hash=False)
    checked: bool = False
    # The rule set its last check used (None before any) and the reader versions its runs
    # read with: rates are one measure only within one of each (compare.other_measure).
    ruleset: str | None = field(default=None, compare=False)
    readers: tuple[str, ...] = field(default=(), compare=False)

    @property
    def title(self) -> str:
        """How a person names the point: the name given with --point and its labels, else its
        labels, else its run id; with its date."""
        words = " ".join(f"{k}={v}" for k, v in sorted(self.labels.items()) if k != "shard")
        when = f"{self.started_at:%Y-%m-%d %H:%M}Z"
        if self.runs == (self.name,):  # a run of its own, named by its id
            return f"{words or self.name} ({when})"
        return f"{self.name} ({words + ', ' if words else ''}{when})"


def all_points(con: Any) -> list[Point]:
    rows = con.execute(
        "SELECT point, position, started_at, runs, map_entries(labels), checked, ruleset, "
        "(SELECT list(DISTINCT coalesce(CAST(reader_version AS VARCHAR), 'before 2') ORDER BY 1) "
        "FROM runs WHERE list_contains(p.runs, run_id)) FROM points p ORDER BY position"
    ).fetchall()
    # In UTC whatever the connection's zone: every page, line and chart shows the time as UTC.
    return [
        Point(
            r[0],
            r[1],
            r[2].astimezone(UTC),
            tuple(r[3]),
            {e["key"]: e["value"] for e in r[4] or []},
            r[5],
            r[6],
            tuple(r[7] or ()),
        )
        for r in rows
    ]


def _run_labels(con: Any) -> dict[str, dict[str, str]]:
    rows = con.execute("SELECT run_id, map_entries(labels) FROM runs").fetchall()
    return {r[0]: {e["key"]: e["value"] for e in r[1] or []} for r in rows}


def resolve(
    con: Any,
    run: str | None = None,
    labels: dict[str, str] | None = None,
    checked: bool = False,
    unchecked_ok: bool = False,
) -> Point:
    """The census point a selector names; SelectorError (one line, what exists) when none.

    `checked`: `latest` and `previous` count checked points only, and a point not checked yet
    is refused, since its rates and verdicts do not exist (an eval would read "no sessions"
    and pass); with `unchecked_ok` it is taken when no point is checked (ad hoc SQL)."""
    points = all_points(con)
    if not points:
        raise SelectorError("OUT has no census point yet; run 'census crawl ROOT' first")
    wanted = dict(labels or {})
    if wanted:
        carrying = _run_labels(con)
        points = _carrying(points, carrying, wanted)
        if not points:
            known = sorted({f"{k}={v}" for ls in carrying.values() for k, v in ls.items()})
            raise SelectorError(
                f"no run carries the labels {labels_text(wanted)}; labels in OUT: "
                f"{', '.join(known) or 'none'}"
            )
    done = [p for p in points if p.checked] if checked else points
    named = run not in (None, "latest", "previous")
    if unchecked_ok:
        # Ad hoc SQL may name a point not checked yet; `latest` stays the latest checked.
        among = points if named else (done or points)
        return _pick(among, run or "latest", wanted, _which(among, points))
    among = points if named or not done else done
    picked = _pick(among, run or "latest", wanted, _which(among, points))
    if not picked.checked and checked:
        order = [p.name for p in all_points(con)]
        raise SelectorError(
            missing_shards(con, [picked.name], order)
            or f"census point {picked.name!r} is not checked yet; run 'census check' on this OUT "
            "first"
        )
    return picked


def missing_shards(con: Any, unchecked: list[str], order: list[str]) -> str | None:
    """Why check cannot decide the first of these points, and what to do, when a night
    crawled in shards does not hold every shard of it yet (None when each does): a check
    freezes a night for good (a late shard is then refused), so a missing one would lose its
    sessions. `order`: every point's name, oldest first."""
    rows = con.execute(
        "SELECT point, list(labels['shard'] ORDER BY run_id), list(len(roots) ORDER BY run_id) "
        "FROM run_points WHERE list_contains($points, point) GROUP BY point ORDER BY point",
        {"points": unchecked},
    ).fetchall()
    for point, names, roots in rows:
        # A user's own `shard` label (not K-of-N) says nothing about the night's shards.
        sharded = [
            (int(m[1]), int(m[2]), count)
            for n, count in zip(names, roots, strict=True)
            if n and (m := SHARD_LABEL_RE.fullmatch(n))
        ]
        shards = {(k, n) for k, n, _ in sharded}
        counts = {n for _, n in shards}
        # A shard crawled again stands for it (its runs are in run order, the latest last).
        sharded = list({(k, n): (k, n, c) for k, n, c in sharded}.values())
        if len({count for *_, count in sharded}) > 1:
            from pipeline.textout import plural

            # Each shard takes its share of the roots it crawls: one that missed a root lost
            # that root's share of the night (found by a hunt: check froze it without them).
            crawled = ", ".join(f"{k}/{n} crawled {plural(c, 'root')}" for k, n, c in sharded)
            return (
                f"the shards of census point {point!r} crawled other roots ({crawled}): each "
                "shard takes its share of the roots it is given, so every shard of a night is "
                f"given the same roots; crawl the shard again with them (--point {point}), "
                "then check"
            )
        if not shards or (len(counts) == 1 and len(shards) == max(counts)):
            continue
        crawled = ", ".join(f"{k}/{n}" for k, n in sorted(shards))
        later = order[order.index(point) + 1 :]
        if later:
            # A crawl adds to the latest point only: this night can no longer be completed.
            return (
                f"census point {point!r} holds shards {crawled} only, and {later[0]!r} was "
                f"crawled after it, so no shard can join it now; drop it with census prune "
                f"--point {point}, then check"
            )
        return (
            f"census point {point!r} holds shards {crawled} only; crawl the others with "
            f"--point {point} --shard K/N (one N for the night), then check"
        )
    return None


def _which(among: list[Point], points: list[Point]) -> str:
    return " checked" if len(among) < len(points) else ""


def unchecked_after(con: Any, point: Point, labels: dict[str, str] | None = None) -> list[str]:
    """The points crawled after `point` and not checked yet (carrying `labels`, when given): a
    command that shows the latest checked point says so, lest yesterday's numbers be read as
    tonight's."""
    later = [p for p in all_points(con) if p.position > point.position and not p.checked]
    if labels:
        later = _carrying(later, _run_labels(con), labels)
    return [p.name for p in later]


def unchecked_note(names: list[str], shown: Point, what: str = "this shows") -> str | None:
    """`what`: how the note names the point shown (compare: "the candidate is")."""
    if not names:
        return None
    which = f"point {names[0]} is" if len(names) == 1 else f"points {', '.join(names)} are"
    return (
        f"note: census {which} not checked yet; {what} {shown.name}, the latest checked "
        "(run 'census check' first)"
    )


def _pick(points: list[Point], run: str, wanted: dict[str, str], which: str = "") -> Point:
    """`which`: what the points are, when not every point of OUT (" checked")."""
    scope = f" among the points with {labels_text(wanted)}" if wanted else ""
    if run == "latest":
        return points[-1]
    if run == "previous":
        if len(points) < 2:
            raise SelectorError(f"there is no previous census point{scope}: OUT holds one{which}")
        return points[-2]
    for point in points:
        if run == point.name or run in point.runs:
            return point
    names = ", ".join(p.name for p in points[-5:])
    raise SelectorError(
        f"no run or census point {run!r}{scope}; the latest are {names} "
        '(census sql "SELECT * FROM points" lists them all)'
    )


def earlier_carrying(con: Any, point: Point, labels: dict[str, str]) -> list[str]:
    """The checked points before `point` that also carry `labels`: an arm chosen by labels is
    its latest point alone, so an arm crawled as two separate points (no shared --point)
    leaves these out."""
    points = [p for p in all_points(con) if p.checked and p.position < point.position]
    return [p.name for p in _carrying(points, _run_labels(con), labels)] if labels else []


def _carrying(
    points: list[Point], carrying: dict[str, dict[str, str]], wanted: dict[str, str]
) -> list[Point]:
    """The points one of whose runs carries every label wanted."""
    return [
        p
        for p in points
        if any(all(carrying[r].get(k) == v for k, v in wanted.items()) for r in p.runs)
    ]


def previous(con: Any, point: Point, labels: dict[str, str] | None = None) -> Point | None:
    """The census point just before `point`, if any; among the points carrying `labels`, when
    given (as `--run previous --label k=v` picks it), so a series selected by its labels is
    compared with itself, not with the other series crawled into the same OUT."""
    earlier = [p for p in all_points(con) if p.position < point.position]
    if labels:
        earlier = _carrying(earlier, _run_labels(con), labels)
    return earlier[-1] if earlier else None


def labels_text(labels: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in labels.items())
