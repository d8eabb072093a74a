"""A week of nights for the report's tests and demo, until the nightly simulator lands.

    python -m tests.report_week ROOT [--sessions 1000] [--nights 7] [--docs docs]

writes ROOT/corpus (edited night by night) and ROOT/out (one census point a night), the
report of the last night and of the first, and with --docs the README's demo: full-page
screenshots of both reports (1,280 px wide), the first screen of the last, and the last
night's report as HTML.

Night 1 is a generated corpus (fixtures.generate). Each later night edits it in place the way
a team's sessions drift (a few forks raised and parked, sessions advanced, harvested, opened,
one stepping backward), crawls it as census point `night-{k}` labelled `night=2026-11-{k}`,
and checks it. On chosen nights a rule is made to fail in a large share of the sessions it
reads (a spike), and on others a spike is undone (a fix): those are the rules the report's
"since the last run" section must list, and only those.

Every change is drawn from a seeded random stream over sorted paths: the same arguments give
the same week.
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.check import check
from pipeline.crawl import crawl

# Night → rules spiked that night; night → rules fixed (their spike undone) that night.
SPIKES: dict[int, tuple[str, ...]] = {4: ("BS-SYNC-02",), 7: ("BS-OPS-01", "BS-THESIS-01")}
FIXES: dict[int, tuple[str, ...]] = {5: ("BS-SYNC-02",)}
SPIKE_SHARE = 0.5


@dataclass
class Night:
    number: int
    point: str
    date: str
    spiked: tuple[str, ...] = ()
    fixed: tuple[str, ...] = ()
    drift: dict[str, int] = field(default_factory=dict)


def night_date(number: int) -> str:
    return f"2026-11-{23 + number:02d}" if number <= 7 else f"2026-12-{number - 7:02d}"


def research_sessions(corpus: Path) -> list[Path]:
    return sorted(corpus.glob("repo-*/docs/research/*-brainstorm"))


def _edit(path: Path, change: Callable[[str], str]) -> bool:
    if not path.is_file():
        return False
    before = path.read_text(encoding="utf-8", errors="surrogateescape")
    after = change(before)
    if after == before:
        return False
    path.write_text(after, encoding="utf-8", errors="surrogateescape")
    return True


# ─────────────────── spikes: one rule fails in many sessions ───────────────────


def _spike_ops_01(session: Path, undo: bool) -> bool:
    ignore, kept = session / "ops" / ".gitignore", session / "ops" / ".gitignore.spiked"
    source, target = (kept, ignore) if undo else (ignore, kept)
    if not source.exists():
        return False
    source.rename(target)
    return True


def _spike_thesis_01(session: Path, undo: bool) -> bool:
    thesis = session / "thesis.md"
    if undo:
        return _edit(thesis, lambda t: t.replace("## Spiked claim\n", "## Claim\n"))
    return _edit(thesis, lambda t: t.replace("## Claim\n", "## Spiked claim\n", 1))


def _spike_sync_02(session: Path, undo: bool) -> bool:
    forks = session / "forks.md"
    if undo:
        return _edit(forks, lambda t: re.sub(r"twin \(S(\d+)0000\)", r"twin (S\1)", t))
    return _edit(forks, lambda t: re.sub(r"twin \(S(\d+)\)", r"twin (S\g<1>0000)", t))


SPIKERS: dict[str, Callable[[Path, bool], bool]] = {
    "BS-OPS-01": _spike_ops_01,
    "BS-THESIS-01": _spike_thesis_01,
    "BS-SYNC-02": _spike_sync_02,
}


def spike(corpus: Path, rule: str, seed: int, undo: bool = False) -> int:
    """Make `rule` fail in SPIKE_SHARE of the research sessions, each chosen by its path alone
    (so sessions opened on other nights do not change the choice); or undo it everywhere."""

    def chosen(session: Path) -> bool:
        where = session.relative_to(corpus).as_posix()
        return random.Random(f"spike/{seed}/{rule}/{where}").random() < SPIKE_SHARE

    sessions = research_sessions(corpus)
    return sum(SPIKERS[rule](s, undo) for s in sessions if undo or chosen(s))


# ─────────────────── drift: what a night of work changes ───────────────────

NEW_FORK = "\n## F{n} — Raised on night {night}: who decides? [open]\n- Raised by: user\n" + (
    "- Closes when: the owner answers\n"
)


OPEN, STOPPING = "- Status: open\n", "- Status: stopping\n"


def _raise_fork(session: Path, night: int) -> bool:
    return _edit(session / "forks.md", lambda t: t + NEW_FORK.format(n=80 + night, night=night))


def _park_fork(session: Path, night: int) -> bool:
    if (session / "ops" / "manifest.md").exists():
        return False  # a parked fork needs a manifest row there; keep BS-MANIFEST-01 still
    pattern = re.compile(r"^(## F\d+ .*) \[open\]$", re.M)
    return _edit(
        session / "forks.md", lambda t: pattern.sub(r"\1 [parked → docs/later.md]", t, count=1)
    )


def _advance(session: Path, night: int) -> bool:
    forks = session / "forks.md"
    if not forks.exists() or "[open]" in forks.read_text():
        return False
    return _edit(session / "state.md", lambda t: t.replace(OPEN, STOPPING))


def _step_back(session: Path, night: int) -> bool:
    manifest = session / "ops" / "manifest.md"
    if manifest.exists() and "Status: applied" in manifest.read_text():
        return False
    return _edit(session / "state.md", lambda t: t.replace(STOPPING, OPEN))


def _harvest(session: Path, night: int) -> bool:
    manifest = session / "ops" / "manifest.md"
    if not manifest.exists() or "Status: applied" not in manifest.read_text():
        return False
    topic = session.name.removesuffix("-brainstorm")
    target = session.parent.parent / "history" / "brainstorms" / topic
    if target.exists():
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(session), str(target))
    shutil.rmtree(target / "ops")
    _edit(target / "state.md", lambda t: re.sub(r"- Status: \w+", "- Status: harvested", t))
    return True


def _open_new(session: Path, night: int) -> bool:
    copy = session.with_name(session.name.replace("-brainstorm", f"-n{night}-brainstorm"))
    if copy.exists():
        return False
    shutil.copytree(session, copy)
    return True


DRIFT: tuple[tuple[str, float, Callable[[Path, int], bool]], ...] = (
    ("forks raised", 0.03, _raise_fork),
    ("forks parked", 0.03, _park_fork),
    ("advanced", 0.02, _advance),
    ("stepped back", 0.004, _step_back),
    ("harvested", 0.03, _harvest),
    ("opened", 0.01, _open_new),
)


def drift(corpus: Path, night: int, seed: int) -> dict[str, int]:
    """A night of ordinary work: small shares of sessions change; counts by kind."""
    rng = random.Random(f"drift/{seed}/{night}")
    done: dict[str, int] = {}
    for name, share, change in DRIFT:
        picked = [s for s in research_sessions(corpus) if rng.random() < share]
        done[name] = sum(change(s, night) for s in picked if s.exists())
    return done


# ─────────────────── the week ───────────────────


def simulate(
    root: Path,
    sessions: int,
    nights: int = 7,
    seed: int = 1,
    spikes: dict[int, tuple[str, ...]] | None = None,
    fixes: dict[int, tuple[str, ...]] | None = None,
    quiet: bool = True,
) -> tuple[Path, list[Night]]:
    """Generate, then crawl and check `nights` census points into root/out; the nights."""
    from fixtures.generate import generate

    spikes = SPIKES if spikes is None else spikes
    fixes = FIXES if fixes is None else fixes
    corpus, out = root / "corpus", root / "out"
    generate(corpus, sessions, seed, 0.08, jobs=1)
    done: list[Night] = []
    for k in range(1, nights + 1):
        started = time.perf_counter()
        night = Night(k, f"night-{k}", night_date(k), spikes.get(k, ()), fixes.get(k, ()))
        if k > 1:
            night.drift = drift(corpus, k, seed)
        for rule in night.fixed:
            spike(corpus, rule, seed, undo=True)
        for rule in night.spiked:
            spike(corpus, rule, seed)
        crawl([str(corpus)], str(out), labels={"night": night.date}, point=night.point, workers=1)
        check(str(out))
        done.append(night)
        if not quiet:
            print(
                f"{night.point} {night.date} {night.drift} spiked={night.spiked} "
                f"fixed={night.fixed} ({time.perf_counter() - started:.1f} s)",
                file=sys.stderr,
            )
    return out, done


BROWSER_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
CHROMIUM = "/usr/bin/chromium"


def screenshots(report: Path, shots: dict[Path, bool]) -> None:
    """Screenshots of a report at 1,280 px wide: path → full page (True) or the first screen."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(report.resolve().as_uri())
        page.wait_for_load_state("load")
        for path, full in shots.items():
            page.screenshot(path=str(path), full_page=full)
        browser.close()
    for path in shots:
        _shrink(path)


def _shrink(path: Path) -> None:
    """A screenshot in 256 colours: the same page at a third of the bytes (Pillow, if any)."""
    try:
        from PIL import Image
    except ImportError:
        return
    with Image.open(path) as image:
        small = image.convert("RGB").quantize(colors=256, dither=Image.Dither.NONE)
    small.save(path, optimize=True)


def demo(root: Path, sessions: int, nights: int, seed: int, docs: Path | None) -> None:
    from pipeline.compare import Selector
    from pipeline.report import build

    out, _ = simulate(root, sessions, nights, seed, quiet=False)
    first = build(str(out), str(root / "report-1-night.html"), selector=Selector("night-1"))
    last = build(str(out), str(root / "report-week.html"))
    print(f"{first.path}: {first.bytes / 1024:.0f} KiB in {first.seconds:.1f} s", file=sys.stderr)
    print(f"{last.path}: {last.bytes / 1024:.0f} KiB in {last.seconds:.1f} s", file=sys.stderr)
    if docs is None:
        return
    screenshots(first.path, {docs / "report-1-night.png": True})
    screenshots(
        last.path, {docs / "report-week.png": True, docs / "report-first-screen.png": False}
    )
    shutil.copyfile(last.path, docs / "report-demo.html")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.report_week", description=__doc__)
    parser.add_argument("root", type=Path, help="work folder (replaced)")
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--nights", type=int, default=7)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--docs", type=Path, help="write the screenshots and demo report here")
    ns = parser.parse_args(argv)
    if ns.root.exists():
        shutil.rmtree(ns.root)
    demo(ns.root, ns.sessions, ns.nights, ns.seed, ns.docs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
