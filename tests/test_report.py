"""The report in a real headless browser: sections, charts, no network, hostile text inert."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from pipeline.check import evaluate
from pipeline.crawl import crawl
from pipeline.report import build
from pipeline.resources import example_corpus
from pipeline.store import Out

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SECTIONS = ["run", "stages", "rates", "trend", "forks", "sync", "idle", "worst", "issues"]
HOSTILE = "Should we allow <script>alert(1)</script> in titles?"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = Out(tmp_path_factory.mktemp("report") / "out")
    roots = sorted(str(p) for p in example_corpus().iterdir() if p.name != "README.md")
    crawl(roots, str(out.root), workers=1)
    evaluate(out)
    return build(str(out.root)).path


@pytest.fixture(scope="module")
def browser() -> Any:
    if not Path(CHROMIUM).exists():
        pytest.skip("no chromium on this machine: apt-get install chromium (.ci/run does)")
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


def test_report_in_a_browser(report: Path, browser: Any, tmp_path: Path) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    requests: list[str] = []
    dialogs: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(report.as_uri())
    page.wait_for_load_state("load")
    assert errors == []
    assert requests == [report.as_uri()], "the report loads nothing but itself"
    for section in SECTIONS:
        assert page.locator(f"section#{section}").count() == 1, section
    assert page.locator("#rates .chart svg").count() == 1
    assert page.locator("#stages .chart svg").count() == 1
    assert page.locator("#rates .chart svg .mark-rule").count() >= 1, "intervals drawn as rules"
    body = page.inner_text("body")
    assert HOSTILE in body, "the hostile fork title is shown as text"
    assert dialogs == [] and page.evaluate("typeof window.alertCalled") == "undefined"
    # Sorting a column is the page's one script; it must work.
    page.click("#rates table th:nth-child(5)")
    page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    assert (tmp_path / "report.png").stat().st_size > 10_000


def test_report_is_self_contained(report: Path) -> None:
    html = report.read_text()
    for needle in ("http://", "https://", "<link ", "src=\"http"):
        hits = [line for line in html.splitlines() if needle in line and "w3.org" not in line]
        assert hits == [], f"{needle!r} in report: {hits[:2]}"
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<script>alert(1)</script>" not in html
