"""The report in a real headless browser: sections, charts, no network, hostile text inert."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from pipeline.check import check
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
    check(str(out.root))
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
    for needle in ("http://", "https://", "<link ", 'src="http'):
        hits = [line for line in html.splitlines() if needle in line and "w3.org" not in line]
        assert hits == [], f"{needle!r} in report: {hits[:2]}"
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<script>alert(1)</script>" not in html


HOSTILE_FORKS = """# Forks

## F1 — <img src=x onerror="window.pwned=1"> and <b onmouseover=alert(2)>bold</b> [open]
- Raised by: user
- Closes when: [click](javascript:window.pwned=3) settles it

## F2 — control \x07\x1b[31m characters and {long} [open]
- Raised by: user
- Closes when: <script>window.pwned=4</script>

## F5 — {{ jinja }} {% raw %} and <a href="javascript:alert(5)">x</a> [open]
- Raised by: user
"""


def test_hostile_session_text_stays_text(browser: Any, tmp_path: Path) -> None:
    from tests.conftest import FIXTURES, copy_tree

    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "evil")
    forks = repo / "docs" / "research" / "demo-brainstorm" / "forks.md"
    forks.write_text(HOSTILE_FORKS.replace("{long}", "A" * 20_000))
    out = Out(tmp_path / "out")
    crawl([str(tmp_path / "root")], str(out.root), workers=1)
    check(str(out.root))
    report = build(str(out.root)).path
    page = browser.new_page()
    errors: list[str] = []
    dialogs: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(report.as_uri())
    page.wait_for_load_state("load")
    for element in page.locator("details").all():
        element.evaluate("e => e.open = true")
    page.mouse.move(400, 400)
    assert errors == [] and dialogs == []
    assert page.evaluate("window.pwned") is None, "no hostile handler or script ran"
    assert page.locator("img[src='x']").count() == 0
    assert page.locator("a[href^='javascript:']").count() == 0
    body = page.inner_text("body")
    assert '<img src=x onerror="window.pwned=1">' in body
    assert "{{ jinja }} {% raw %}" in body
    page.screenshot(path=str(tmp_path / "hostile.png"), full_page=True)
