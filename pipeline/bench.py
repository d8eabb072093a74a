"""The benchmark: generate a corpus, then time each stage beside the floor of merely reading it.

    python -m pipeline.bench --sessions 1000 20000 --json bench.json
    python -m pipeline.bench --sessions 20000 --git          # the corpus in git, --git-history
    python -m pipeline.bench --sessions 100000 --only stats report
    python -m pipeline.bench truth --sessions 5000

Each stage runs in a child process that reports its own wall time and peak memory
(resident set, self and its workers), so one stage's memory never hides another's.
The floor is `find ROOT -type f -exec cat {} + > /dev/null` with the page cache warm,
as the census's own reads are (the best of FLOOR_RUNS runs). A command, not a timed test:
figures vary by machine.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

# Peak memory is the step's own high-water mark (VmHWM, kB) and its children's: not
# RUSAGE_SELF, whose ru_maxrss survives exec and so starts at the benchmark's own size.
_STEP = """
import json, re, resource, sys, time
started = time.perf_counter()
{body}
seconds = time.perf_counter() - started
own = int(re.search(r"VmHWM:\\s+(\\d+)", open("/proc/self/status").read())[1])
peak = max(own, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
print(json.dumps({{"seconds": seconds, "peak_mb": peak / 1024}}))
"""

STEPS = {
    "crawl": "from pipeline.crawl import crawl; crawl([{root!r}], {out!r}, git_history={git})",
    "check": "from pipeline.check import check; check({out!r})",
    "stats": "from pipeline.stats import compute; compute({out!r})",
    "report": "from pipeline.report import build; build({out!r})",
}
# The stages of one size, in order: (figure name, step, what happens to the corpus before it).
STAGES = (
    ("crawl", "crawl", None),
    ("check", "check", None),
    ("rerun_unchanged", "crawl", None),
    ("check_unchanged", "check", None),
    ("rerun_1pct_changed", "crawl", "touch"),
    ("check_1pct_changed", "check", None),
    ("stats", "stats", None),
    ("report", "report", None),
)
# Targets, as fractions of the floor (issue 12): the table marks each stage met or not.
TARGETS = {"rerun_unchanged": 0.3, "check_1pct_changed": 0.1}


def step(name: str, root: Path, out: Path, git: bool = False) -> dict[str, float]:
    code = _STEP.format(body=STEPS[name].format(root=str(root), out=str(out), git=git))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# Each floor is the best of this many timed runs: a stall of the machine's disk makes one run
# slow, and a slow floor would mark a target met that is not.
FLOOR_RUNS = 3


def floor(root: Path) -> float:
    command = f"find '{root}' -type f -exec cat {{}} + > /dev/null"
    subprocess.run(command, shell=True, check=True)  # warm the cache as the census finds it
    return _best_of(command)


def _best_of(command: str) -> float:
    best = float("inf")
    for _ in range(FLOOR_RUNS):
        started = time.perf_counter()
        subprocess.run(command, shell=True, check=True)
        best = min(best, time.perf_counter() - started)
    return best


def stat_floor(root: Path) -> float:
    """The least a rerun that notices an edit in place can cost: list every folder and stat
    every entry once (in C, one process), as the crawl's walk must; `.git` is not walked."""
    command = f"find '{root}' -name .git -prune -o -printf '%y %s %T@ %p\\n' > /dev/null"
    subprocess.run(command, shell=True, check=True)
    return _best_of(command)


def detect_seconds(session: Path, repeats: int = 5) -> float:
    """Best wall time of `census detect` over a few calls, process start-up included."""
    script = Path(sys.executable).with_name("census")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "pipeline.cli"]
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run([*command, "detect", str(session)], capture_output=True, check=False)
        best = min(best, time.perf_counter() - started)
    return best


def generate(target: Path, sessions: int, seed: int, rate: float, git: bool = False) -> Path:
    marker = target / "truth-summary.json"
    if marker.exists():
        return target
    shutil.rmtree(target, ignore_errors=True)
    # The generator lives in the checkout's fixtures/, beside this package.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from fixtures.generate import main

    args = [str(target), "--sessions", str(sessions), "--seed", str(seed)]
    main([*args, "--defect-rate", str(rate), *(["--git"] if git else [])])
    return target


# Who commits the benchmark's day of work (git needs a name, whatever it is).
_GIT_NAMES = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL")


def touch_share(root: Path, share: float, seed: int, git: bool = False) -> int:
    """Append a fork to `share` of the sessions' forks.md files, as a day's work would (and,
    in a git corpus, commit each repository's change, as the day's commits would)."""
    files = sorted(root.glob("repo-*/docs/research/*-brainstorm/forks.md"))
    chosen = random.Random(seed).sample(files, max(1, int(len(files) * share)))
    for path in chosen:
        with open(path, "a") as handle:
            handle.write(
                "\n## F999 — A question raised today [open]\n- Raised by: user\n"
                "- Closes when: someone answers it\n"
            )
    if git:
        env = {**os.environ, **{k: "bench" for k in _GIT_NAMES}}
        for repo in sorted({p.parents[3] for p in chosen}):
            subprocess.run(
                ["git", "-C", str(repo), "commit", "-qam", "a day's work"], env=env, check=True
            )
    return len(chosen)


def bench_size(
    workdir: Path,
    sessions: int,
    seed: int,
    rate: float,
    git: bool = False,
    only: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Every stage of STAGES (or those named in `only`, after the crawl and check they need)."""
    suffix = "-git" if git else ""
    root = generate(workdir / f"corpus-{sessions}{suffix}", sessions, seed, rate, git)
    out = workdir / f"out-{sessions}{suffix}"
    figures: dict[str, Any] = {
        "sessions": sessions,
        "git_history": git,
        "floor_seconds": floor(root),
        "stat_floor_seconds": stat_floor(root),
    }
    figures["files"] = sum(1 for p in root.rglob("*") if p.is_file() and ".git" not in p.parts)
    # A fresh OUT (no `only`, or none yet) runs every stage: the ones named need the crawl
    # and the check before them, and a stage skipped on a fresh OUT would time an unchecked one.
    fresh = not only or not out.exists()
    if fresh:
        shutil.rmtree(out, ignore_errors=True)
    for name, stage, before in STAGES:
        if only and name not in only and not fresh:
            continue
        if before == "touch":
            figures["changed_sessions"] = touch_share(root, 0.01, seed, git)
        try:
            figures[name] = step(stage, root, out, git)
        except subprocess.CalledProcessError as err:
            figures[name] = {"error": (err.stderr or "failed").strip().splitlines()[-1]}
    session = next(root.glob("repo-*/docs/research/*-brainstorm"))
    figures["detect_seconds"] = detect_seconds(session)
    if "changed_sessions" in figures:
        # The 1% change is undone so the corpus can be reused as generated.
        shutil.rmtree(root)
        generate(root, sessions, seed, rate, git)
    return figures


def print_figures(figures: dict[str, Any]) -> None:
    base = figures["floor_seconds"]
    history = " (--git-history)" if figures.get("git_history") else ""
    print(
        f"\n{figures['sessions']} sessions{history}, {figures['files']} files; floor {base:.2f} s"
    )
    if "stat_floor_seconds" in figures:
        stat = figures["stat_floor_seconds"]
        print(f"stat floor (every entry stat-ed once, in C) {stat:.2f} s ({stat / base:.2f}×)")
    print(f"{'stage':<22}{'seconds':>10}{'× floor':>10}{'peak MB':>10}  target")
    for name, _, _ in STAGES:
        item = figures.get(name, {})
        if "seconds" in item:
            ratio = item["seconds"] / base if base else float("nan")
            target = ""
            if name in TARGETS:
                verdict = "met" if ratio <= TARGETS[name] else "not met"
                target = f"  ≤ {TARGETS[name]:.2f}×: {verdict}"
            print(
                f"{name:<22}{item['seconds']:>10.2f}{ratio:>10.2f}{item['peak_mb']:>10.0f}{target}"
            )
        elif item:
            print(f"{name:<22}{item.get('error', 'not run'):>30}")
    if "seconds" in figures.get("crawl", {}) and "seconds" in figures.get("check", {}):
        both = figures["crawl"]["seconds"] + figures["check"]["seconds"]
        print(f"{'crawl + check':<22}{both:>10.2f}{both / base:>10.2f}")
    print(f"{'detect (one, wall)':<22}{figures['detect_seconds']:>10.3f}")


def truth(
    workdir: Path, sessions: int, seed: int, rate: float, all_gates: bool = False
) -> dict[str, Any]:
    """Ground truth at scale: check against the generator (every session, every gate), and
    detect against check (every session at its own gate, or at every gate with all_gates)."""
    from pipeline.check import check
    from pipeline.crawl import crawl
    from pipeline.store import Out
    from pipeline.truth import by_status, load_truth, mismatches, observed_statuses
    from pipeline.vocabulary import GATES, OWN_GATE

    root = generate(workdir / f"corpus-{sessions}", sessions, seed, rate)
    out = Out(workdir / f"truth-out-{sessions}")
    shutil.rmtree(out.root, ignore_errors=True)
    crawl([str(root)], str(out.root))
    check(str(out.root))
    found = observed_statuses(out)
    problems = mismatches(load_truth(root), found)  # every session, every gate
    truth_items = load_truth(root)
    tasks = [
        (str(root / repo / path), gate, by_status(gates[gate]))
        for (repo, path), gates in sorted(found.items())
        for gate in GATES
        if all_gates or gate == OWN_GATE[truth_items[(repo, path)]["stage"]]
    ]
    with ProcessPoolExecutor(mp_context=get_context("spawn")) as pool:
        disagreements = [
            t
            for t, same in zip(tasks, pool.map(_detect_agrees, tasks, chunksize=50), strict=True)
            if not same
        ]
    return {
        "sessions": sessions,
        "gates_checked": len(tasks),
        "truth_mismatches": len(problems),
        "detect_disagreements": len(disagreements),
        "examples": problems[:5] + [f"{p} at {g}" for p, g, _ in disagreements[:5]],
    }


def _detect_agrees(task: tuple[str, str, dict[str, list[str]]]) -> bool:
    from pipeline.detect import detect
    from pipeline.truth import by_status

    path, gate, expected = task
    return by_status({o.rule: o.status for o in detect(path, gate).outcomes}) == expected


def replay_pair(
    workdir: Path,
    sessions: int,
    seed: int,
    rate: float,
    candidate_rates: dict[str, float] | None = None,
) -> Any:
    """Generate a baseline and a candidate of the same sessions, crawl both, compare them."""
    from pipeline.check import check
    from pipeline.compare import Selector, compare
    from pipeline.crawl import crawl

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from fixtures.generate import generate as generate_corpus

    shutil.rmtree(workdir, ignore_errors=True)
    out = workdir / "out"
    for side, defect_seed, rates in (
        ("baseline", 2 * seed, None),
        ("candidate", 2 * seed + 1, candidate_rates),
    ):
        corpus = workdir / side
        generate_corpus(corpus, sessions, seed, rate, defect_seed=defect_seed, rates=rates)
        crawl([str(corpus)], str(out), {"run": side}, workers=1)
    check(str(out))
    return compare(
        str(out), Selector(None, {"run": "baseline"}), Selector(None, {"run": "candidate"})
    )


def null_replays(workdir: Path, repetitions: int, sessions: int, rate: float) -> dict[str, Any]:
    """Candidates drawn from the baseline's own rates: how many replays flag anything?"""
    flagged = []
    for seed in range(1, repetitions + 1):
        result = replay_pair(workdir / "replay", sessions, seed, rate)
        if result.regressions:
            flagged.append({"seed": seed, "rows": [(r.metric, r.gate) for r in result.regressions]})
    return {
        "repetitions": repetitions,
        "sessions": sessions,
        "defect_rate": rate,
        "flagged": len(flagged),
        "examples": flagged[:5],
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m pipeline.bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("mode", nargs="?", choices=["speed", "truth", "null"], default="speed")
    parser.add_argument("--repetitions", type=int, default=100, help="null: replays to run")
    parser.add_argument("--sessions", type=int, nargs="+", default=[1000])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--defect-rate", type=float, default=0.1)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/census-bench"))
    parser.add_argument("--json", type=Path, help="Write the figures here as JSON.")
    parser.add_argument("--git", action="store_true", help="A git corpus, crawled --git-history.")
    parser.add_argument("--only", nargs="+", default=[], help="speed: only these stages.")
    args = parser.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    results = []
    for sessions in args.sessions:
        if args.mode == "null":
            item = null_replays(args.workdir, args.repetitions, sessions, args.defect_rate)
            print(json.dumps(item, indent=2))
        elif args.mode == "truth":
            item = truth(args.workdir, sessions, args.seed, args.defect_rate)
            print(json.dumps(item, indent=2))
        else:
            item = bench_size(
                args.workdir, sessions, args.seed, args.defect_rate, args.git, tuple(args.only)
            )
            print_figures(item)
        results.append(item)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
