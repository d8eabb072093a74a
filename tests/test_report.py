"""The report in a real headless browser (Debian's chromium driven by Playwright).

A simulated week (tests/report_week.py: a generated corpus edited night by night, one census
point a night, chosen rules spiked and fixed) must show, at the top, exactly the rules that the
simulator changed since the night before; no chart may have overlapping tick labels or reuse a
colour for two categories, at 1 night, after a week and after 30 nights; rule IDs never wrap,
the page fits 1,280 px, prints, sorts; the comparison view counts and pluralises; and hostile
session text stays text.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pipeline import charts
from pipeline.check import check
from pipeline.compare import Selector
from pipeline.crawl import crawl
from pipeline.report import _delta, build
from pipeline.resources import example_corpus
from pipeline.select import Point
from pipeline.store import Out
from pipeline.textout import plural
from tests.report_week import BROWSER_ARGS, SPIKES, Night, simulate

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SECTIONS = ["run", "since", "stages", "rates", "trend", "forks", "sync", "idle", "worst", "issues"]
HOSTILE = "Should we allow <script>alert(1)</script> in titles?"
WEEK_SESSIONS = 150
MONTH_SESSIONS, MONTH_NIGHTS = 40, 30


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = Out(tmp_path_factory.mktemp("report") / "out")
    roots = sorted(str(p) for p in example_corpus().iterdir() if p.name != "README.md")
    crawl(roots, str(out.root), workers=1)
    check(str(out.root))
    return build(str(out.root)).path


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Night]]:
    """Seven nights of 150 sessions: BS-SYNC-02 spiked on night 4 and fixed on night 5,
    BS-OPS-01 and BS-THESIS-01 spiked on night 7, ordinary drift every night."""
    return simulate(tmp_path_factory.mktemp("week"), WEEK_SESSIONS, nights=7)


@pytest.fixture(scope="module")
def month(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Thirty nights of 40 sessions, BS-OPS-01 spiked on the last: the trend at many nights."""
    out, _ = simulate(
        tmp_path_factory.mktemp("month"),
        MONTH_SESSIONS,
        nights=MONTH_NIGHTS,
        spikes={MONTH_NIGHTS: ("BS-OPS-01",)},
        fixes={},
    )
    return build(str(out)).path


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.skip("no chromium on this machine: apt-get install chromium (.ci/run does)")
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        yield browser
        browser.close()


def open_page(browser: Any, report: Path) -> tuple[Any, list[str], list[str]]:
    """A 1,280 × 900 page on the report; the errors it logs and the URLs it requests."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(report.as_uri())
    page.wait_for_load_state("load")
    return page, errors, requests


def night_report(week: tuple[Path, list[Night]], night: int, tmp_path: Path) -> Path:
    out, _ = week
    html = tmp_path / f"night-{night}.html"
    return build(str(out), str(html), selector=Selector(f"night-{night}")).path


# ─────────────── what the browser checks on every chart ───────────────

# Every visible tick label of each axis of each chart, as boxes on the page, and the pairs of
# one axis that intersect (by more than half a pixel).
OVERLAPS_JS = """
(svg) => {
  const found = [];
  svg.querySelectorAll("g.role-axis").forEach((axis, a) => {
    const boxes = [...axis.querySelectorAll("g.role-axis-label text")]
      .filter(t => t.getAttribute("opacity") !== "0" && t.textContent.trim() !== "")
      .map(t => [t.textContent, t.getBoundingClientRect()]);
    for (let i = 0; i < boxes.length; i++) {
      for (let j = i + 1; j < boxes.length; j++) {
        const [p, r] = boxes[i], [q, s] = boxes[j];
        if (r.left < s.right - 0.5 && s.left < r.right - 0.5 &&
            r.top < s.bottom - 0.5 && s.top < r.bottom - 0.5) {
          found.push(`axis ${a}: "${p}" and "${q}"`);
        }
      }
    }
  });
  return found;
}
"""
# Each mark's category (the figure's data-series field, read from the mark's aria-label) and
# its colour: fill, or stroke for a line. Text marks (values written beside bars) are ink.
COLOURS_JS = """
(figure) => {
  const field = figure.dataset.series, seen = {};
  figure.querySelectorAll("svg [role=graphics-symbol][aria-label]").forEach(mark => {
    const pairs = mark.getAttribute("aria-label").split("; ").map(p => p.split(": "));
    const hit = pairs.find(p => p[0] === field);
    if (!hit || mark.tagName.toLowerCase() === "text") return;
    const fill = mark.getAttribute("fill");
    const colour = (fill && fill !== "none" ? fill : mark.getAttribute("stroke")).toLowerCase();
    (seen[hit.slice(1).join(": ")] = seen[hit.slice(1).join(": ")] || []).push(colour);
  });
  return [field, seen];
}
"""


def assert_charts_readable(page: Any, expected: int) -> None:
    """No overlapping tick labels on any axis; every category of a chart its own colour."""
    figures = page.locator("figure.chart").all()
    assert len(figures) == expected
    for figure in figures:
        svg = figure.locator("svg")
        assert svg.count() == 1, figure.inner_html()[:200]
        overlaps = svg.evaluate(OVERLAPS_JS)
        field, seen = figure.evaluate(COLOURS_JS)
        assert overlaps == [], f"{field} chart: overlapping tick labels {overlaps[:5]}"
        assert seen, f"no {field} categories found in the chart"
        colour_of = {}
        for category, colours in seen.items():
            assert len(set(colours)) == 1, f"{field} {category} drawn in {set(colours)}"
            colour_of[category] = colours[0]
        assert len(set(colour_of.values())) == len(colour_of), f"a colour repeats: {colour_of}"


def assert_page_layout(page: Any) -> None:
    """Readable at 1,280 px: nothing wider than the window; rule IDs on one line."""
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 1280, f"the page is {width} px wide"
    wrapped = page.evaluate(
        """[...document.querySelectorAll("code.id")]
             .filter(e => e.offsetParent !== null && e.getClientRects().length > 1)
             .map(e => e.textContent)"""
    )
    assert wrapped == [], f"rule IDs wrap: {wrapped[:5]}"
    headings = page.locator("section > h2").all_inner_texts()
    assert headings and all(h.rstrip().endswith("?") for h in headings), headings


def moved_rules(page: Any) -> dict[str, str]:
    """Rule → 'worse' or 'better', as the "since the last run" section lists them."""
    rows = page.locator("#since table.moved tbody tr").all()
    found = {}
    for row in rows:
        metric = row.get_attribute("data-rule") or ""
        if re.fullmatch(r"(BS|CENSUS)-[A-Z]+-\d+", metric):
            found[metric] = "worse" if "worse" in row.inner_text() else "better"
    return found


# ─────────────── the week ───────────────


@pytest.mark.slow
def test_since_the_last_run_lists_the_rules_the_simulator_changed(
    week: tuple[Path, list[Night]], browser: Any, tmp_path: Path
) -> None:
    _, nights = week
    changed = [n for n in nights if n.spiked or n.fixed]
    assert [n.number for n in changed] == [4, 5, 7]
    for night in changed:
        page, errors, requests = open_page(browser, night_report(week, night.number, tmp_path))
        expected = {rule: "worse" for rule in night.spiked}
        expected.update({rule: "better" for rule in night.fixed})
        assert moved_rules(page) == expected, f"night {night.number}"
        alarm = page.locator("#run").inner_text()
        tripped = "alarm" in (page.locator("#run").get_attribute("class") or "")
        assert tripped == bool(night.spiked), alarm
        for rule in night.spiked:
            assert f"{rule} regressed from" in alarm
        assert errors == [] and len(requests) == 1
        page.close()


@pytest.mark.slow
def test_week_report_first_screen(
    week: tuple[Path, list[Night]], browser: Any, tmp_path: Path
) -> None:
    """The top 900 px hold the point, the alarm, the tiles, the rules that moved and the
    session changes; every link from there to a session lands on its findings."""
    out, _ = week
    report = build(str(out)).path
    page, errors, requests = open_page(browser, report)
    assert errors == [] and requests == [report.as_uri()], "the report loads nothing else"
    header = page.locator("header").inner_text()
    assert header.startswith("Brainstorm census — night-7\n"), "named as the point was"
    assert "night=2026-11-30" in header and header.endswith("compared with night-6")
    for selector in ("#run .verdict", "#run .cards", "#since table.moved"):
        box = page.locator(selector).bounding_box()
        assert box is not None and box["y"] < 900, f"{selector} is below the first screen"
    since = page.locator("#since").inner_text()
    assert "newly failing" in since and "newly clean" in since
    for flow in ("opened (new)", "advanced", "harvested", "went backward", "gone"):
        assert flow in since
    assert re.search(r"\d+ forks? raised", since) and re.search(r"\d+ forks? closed", since)
    links = page.locator("#since a[href^='#s-']").all()
    assert links, "newly failing sessions link to their findings"
    for link in links:
        target = (link.get_attribute("href") or "")[1:]
        assert page.locator(f"#worst li[id='{target}'] details").count() == 1, target
    tiles = page.locator("#run .card").all_inner_texts()
    assert any("rules moved" in t and "2 worse" in t for t in tiles), tiles
    page.screenshot(path=str(tmp_path / "week-first-screen.png"))
    page.screenshot(path=str(tmp_path / "week.png"), full_page=True)
    assert (tmp_path / "week.png").stat().st_size > 50_000


@pytest.mark.slow
def test_first_night_has_nothing_to_compare(
    week: tuple[Path, list[Night]], browser: Any, tmp_path: Path
) -> None:
    page, errors, _ = open_page(browser, night_report(week, 1, tmp_path))
    assert errors == []
    since = page.locator("#since").inner_text()
    assert "Nothing to compare with: this is the first census point in OUT" in since
    assert page.locator("#since table").count() == 0
    assert "One census point so far" in page.locator("#trend").inner_text()
    assert "No alarm" in page.locator("#run .verdict").inner_text()
    assert_charts_readable(page, expected=3)
    assert_page_layout(page)
    page.screenshot(path=str(tmp_path / "night-1.png"), full_page=True)


@pytest.mark.slow
def test_week_charts_and_layout(
    week: tuple[Path, list[Night]], browser: Any, tmp_path: Path
) -> None:
    out, _ = week
    page, _, _ = open_page(browser, build(str(out), str(tmp_path / "r.html")).path)
    assert_charts_readable(page, expected=4)
    assert_page_layout(page)
    titles = [t for t in page.locator("#trend svg .role-title-text text").all_text_contents() if t]
    assert titles[: len(SPIKES[7])] == [f"{r} ▲ worse" for r in sorted(SPIKES[7])], titles
    rated = page.locator("#rates tbody tr", has_not_text="no sessions").count()
    assert len(titles) == rated == 18, "one panel per rule with a rate (BS-OPS-02 has none)"


@pytest.mark.slow
def test_tables_sort_numerically(
    week: tuple[Path, list[Night]], browser: Any, tmp_path: Path
) -> None:
    out, _ = week
    page, _, _ = open_page(browser, build(str(out), str(tmp_path / "r.html")).path)
    header = page.locator("#rates table thead th", has_text="failed")
    column = 1 + page.locator("#rates table thead th").all_inner_texts().index("failed")

    def failed() -> list[int]:
        cells = page.locator(f"#rates table tbody td:nth-child({column})").all_inner_texts()
        return [int(c.replace(",", "")) for c in cells]

    header.click()
    assert failed() == sorted(failed())
    header.click()
    assert failed() == sorted(failed(), reverse=True)
    # A cell with no number ("no sessions") sorts last either way (it sorted first ascending,
    # as -Infinity, against the script's own comment; found by a hunt).
    rate = page.locator("#rates table thead th", has_text="rate").first
    at = 1 + page.locator("#rates table thead th").all_inner_texts().index("rate")
    for _ in range(2):
        rate.click()
        cells = page.locator(f"#rates table tbody td:nth-child({at})").all_inner_texts()
        assert cells[-1] == "no sessions" and "no sessions" not in cells[:-1], cells


def test_a_table_sorts_from_the_keyboard(report: Path, browser: Any) -> None:
    """A column header sorted on a click only: it took no focus, so a reader without a mouse
    could not sort any table, nor hear how one was sorted (found by a hunt). Each header is
    reached with Tab, sorts on Enter or Space, and says its order (aria-sort)."""
    page, errors, _ = open_page(browser, report)
    header = page.locator("#rates table thead th", has_text="failed")
    column = 1 + page.locator("#rates table thead th").all_inner_texts().index("failed")

    def failed() -> list[int]:
        cells = page.locator(f"#rates table tbody td:nth-child({column})").all_inner_texts()
        return [int(c.replace(",", "")) for c in cells]

    assert failed() != sorted(failed()), "the example's rules are not in this order already"
    for _ in range(200):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.textContent") == "failed":
            break
    else:
        raise AssertionError("Tab never reaches the header")
    page.keyboard.press("Enter")
    assert failed() == sorted(failed())
    assert header.get_attribute("aria-sort") == "ascending"
    page.keyboard.press(" ")
    assert failed() == sorted(failed(), reverse=True)
    assert header.get_attribute("aria-sort") == "descending"
    assert errors == []


@pytest.mark.slow
def test_report_prints(week: tuple[Path, list[Night]], browser: Any, tmp_path: Path) -> None:
    out, _ = week
    page, _, _ = open_page(browser, build(str(out), str(tmp_path / "r.html")).path)
    page.emulate_media(media="print")
    assert page.locator("nav").is_hidden()
    assert page.locator("#rates figure.chart svg").is_visible()
    pdf = page.pdf(format="A4")
    assert pdf.startswith(b"%PDF") and pdf.count(b"/Type /Page") > 3


@pytest.mark.slow
def test_comparison_view_counts_and_pluralises(
    week: tuple[Path, list[Night]], browser: Any, tmp_path: Path
) -> None:
    out, _ = week
    for baseline, candidate in (("night-6", "night-7"), ("night-3", "night-4")):
        report = build(
            str(out),
            str(tmp_path / f"{candidate}.html"),
            baseline=Selector(baseline),
            candidate=Selector(candidate),
        ).path
        page, errors, _ = open_page(browser, report)
        assert errors == []
        view = page.locator("#compare")
        rows = view.locator("tbody tr")
        verdicts = {
            r.get_attribute("data-metric"): r.locator("td").first.inner_text() for r in rows.all()
        }
        regressions = sum(v == "regression" for v in verdicts.values())
        improvements = sum(v == "improvement" for v in verdicts.values())
        counts = view.locator(".compare-counts").inner_text()
        assert plural(regressions, "regression") in counts
        assert plural(improvements, "improvement") in counts
        assert not re.search(r"\b1 (regressions|improvements|metrics)\b", view.inner_text())
        # BS-OPS-02 needs git; the simulated corpus has none: no sessions in either arm.
        ops02 = view.locator("tr[data-metric='BS-OPS-02']")
        assert verdicts["BS-OPS-02"] == "no sessions"
        assert ops02.locator("td").nth(3).inner_text() == "no sessions"
        sync01 = view.locator("tr[data-metric='BS-SYNC-01'] td").all_inner_texts()
        assert re.fullmatch(r"\d+/\d+ \d+\.\d%", sync01[3]) and re.fullmatch(
            r"\d+/\d+ \d+\.\d%", sync01[4]
        ), sync01
        page.close()


@pytest.mark.slow
def test_thirty_nights(month: Path, browser: Any) -> None:
    page, errors, _ = open_page(browser, month)
    assert errors == []
    assert_charts_readable(page, expected=4)
    assert_page_layout(page)
    assert moved_rules(page) == {"BS-OPS-01": "worse"}
    ticks = page.locator("#trend svg g.role-axis-label text").all()
    visible = [t.text_content() or "" for t in ticks if t.get_attribute("opacity") != "0"]
    dates = [t for t in visible if not t.endswith("%")]
    # The newest night is always labelled, the others at an even step back, as short dates.
    assert dates.count("Dec 23") == 18 and len(dates) >= 18 * 3, dates[:8]
    assert all(re.fullmatch(r"[A-Z][a-z]{2} \d{1,2}", t) for t in dates), set(dates)


# ─────────────── the example corpus, hostile text ───────────────


def test_report_in_a_browser(report: Path, browser: Any, tmp_path: Path) -> None:
    page, errors, requests = open_page(browser, report)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    assert errors == []
    assert requests == [report.as_uri()], "the report loads nothing but itself"
    for section in SECTIONS:
        assert page.locator(f"section#{section}").count() == 1, section
    assert page.locator("#rates figure.chart svg .mark-rule").count() >= 1, "intervals drawn"
    body = page.inner_text("body")
    assert HOSTILE in body, "the hostile fork title is shown as text"
    assert dialogs == [] and page.evaluate("typeof window.alertCalled") == "undefined"
    # The header's line reads whole: a <details> inside a <p> broke it after "4 roots (".
    meta = page.locator("header div.meta").inner_text()
    assert "4 roots" in meta and "the first census point in OUT" in meta, meta
    page.click("#rates table th:nth-child(5)")
    assert_page_layout(page)
    page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    assert (tmp_path / "report.png").stat().st_size > 10_000


# A4 less the print margins of base.html.j2 (12 mm each side), in CSS pixels: 186 mm.
PRINTED_WIDTH = 703


def test_every_table_fits_the_printed_page(report: Path, browser: Any) -> None:
    """Printed on A4, the rate table was 967 px wide and the lifetime and sync tables over
    850 (cells kept on one line, the meaning column 300 px at least): the PDF cut their right
    columns off, the meanings mid-word (found by a hunt). Laid out as print at the page's
    width, no table, chart or block is wider than the page."""
    page, _, _ = open_page(browser, report)
    page.set_viewport_size({"width": PRINTED_WIDTH, "height": 1000})
    page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
    page.emulate_media(media="print")
    wide = page.evaluate(
        """(width) => [...document.querySelectorAll("table, figure, pre, header")]
             .filter(e => e.getBoundingClientRect().right > width + 1)
             .map(e => `${(e.closest("section") || e).id} ${e.tagName}: ${e.scrollWidth} px`)""",
        PRINTED_WIDTH,
    )
    assert wide == [], wide
    assert page.evaluate("document.documentElement.scrollWidth") <= PRINTED_WIDTH


def test_the_header_names_the_roots_crawled(report: Path) -> None:
    """Spec §10: the report shows the run, its roots and labels (four roots: listed)."""
    header = report.read_text().split("</header>", 1)[0]
    roots = sorted(p.name for p in example_corpus().iterdir() if p.name != "README.md")
    assert "4 roots" in header
    for name in roots:
        assert re.search(rf"<code><bdi>[^<]*/{re.escape(name)}</bdi></code>", header), name


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


HOSTILE_NEW_FORK = """
## F9 — raised overnight: <svg onload="window.pwned=9"></svg> [open]
- Raised by: user
- Closes when: <iframe src="javascript:window.pwned=10"></iframe>
"""


def test_hostile_session_text_stays_text(browser: Any, tmp_path: Path) -> None:
    from tests.conftest import FIXTURES, copy_tree

    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "evil")
    forks = repo / "docs" / "research" / "demo-brainstorm" / "forks.md"
    forks.write_text(HOSTILE_FORKS.replace("{long}", "A" * 20_000))
    # A right-to-left override quoted in a finding reversed the census's words after it.
    state = forks.with_name("state.md")
    state.write_text(state.read_text() + "- evil\u202e name — a gap → F99\n")
    out = Out(tmp_path / "out")
    crawl([str(tmp_path / "root")], str(out.root), workers=1)
    check(str(out.root))
    forks.write_text(HOSTILE_FORKS.replace("{long}", "A" * 20_000) + HOSTILE_NEW_FORK)
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
    assert 'raised overnight: <svg onload="window.pwned=9"></svg>' in body, "in forks raised"
    assert "aspect 'evil\\u202e name' cites F99, which is neither" in body
    # The first screen only: a full-page capture of a 20,000-character line takes minutes.
    page.screenshot(path=str(tmp_path / "hostile.png"))


# ─────────────── without a browser ───────────────


def test_point_labels_are_short_and_distinct() -> None:
    from datetime import UTC, datetime

    def point(name: str, day: int, hour: int = 2, **labels: str) -> Point:
        when = datetime(2026, 11, day, hour, tzinfo=UTC)
        return Point(name, ord(name[-1]), when, (name,), labels)

    nightly = [point(f"n{d}", d, night=f"2026-11-{d:02d}", shard="1/2") for d in (1, 2)]
    assert charts.point_labels(nightly) == {"n1": "Nov 1", "n2": "Nov 2"}
    # Points of their own (named by their first run, as crawl names them).
    a, b, c = (f"20261105T020000.000000Z-aaaaa{x}" for x in "abc")
    bare = [point(a, 5), point(b, 5, 14), point(c, 6)]
    assert charts.point_labels(bare) == {a: "Nov 5 02:00", b: "Nov 5 14:00", c: "Nov 6 02:00"}
    same = [point("a", 5, run="baseline"), point("b", 5, run="baseline")]
    assert len(set(charts.point_labels(same).values())) == 2


def test_the_trend_names_a_point_as_it_was_named() -> None:
    """A night crawled after midnight as `--point 2026-11-29` (the README's nightly) with no
    label was "Nov 30" on the trend's axis, its start date, where every sentence of the page
    calls it "Nov 29"; points named 10 and 9 were "Dec 5 23:32 #3" and "#4" there, and "10"
    and "9" above it (found by a hunt). With no label, a point's axis name is its --point name
    (a date shortened); a point of its own is still named by its date."""
    from datetime import UTC, datetime

    def point(name: str, day: int, position: int) -> Point:
        when = datetime(2026, 11, day, 2, tzinfo=UTC)
        return Point(name, position, when, ("20261130T020000.000000Z-aaaaaa",), {})

    nights = [point("2026-11-28", 29, 1), point("2026-11-29", 30, 2)]
    assert charts.point_labels(nights) == {"2026-11-28": "Nov 28", "2026-11-29": "Nov 29"}
    numbered = [point("10", 30, 1), point("9", 30, 2)]
    assert charts.point_labels(numbered) == {"10": "10", "9": "9"}
    own = point("20261130T020000.000000Z-aaaaaa", 30, 1)
    assert charts.point_labels([own]) == {own.name: "Nov 30"}


def test_the_trend_breaks_where_a_rule_had_no_rate() -> None:
    """A rule with no session at its gate on the middle night was drawn as a line (and band)
    straight from the first night to the last, through the middle night's place on the axis,
    as if it had a rate there (found by a hunt). The line and the band break at a night with
    no rate; the nights on each side keep their marks."""
    from datetime import UTC, datetime

    from pipeline.stats import TrendRate

    when = datetime(2026, 11, 1, 2, tzinfo=UTC)
    names = ["g1", "g2", "g3"]
    history = [Point(n, i + 1, when, (n,), {}) for i, n in enumerate(names)]

    def rate(point: str, rule: str, evaluated: int) -> TrendRate:
        value, hi = (0.0, 0.79) if evaluated else (None, None)
        return TrendRate(rule, "manifest", evaluated, 0, 0, 0, value, value, hi, point=point)

    trend = [rate(n, "BS-FORK-03", 0 if n == "g2" else 1) for n in names]
    trend += [rate(n, "BS-FORK-01", 1) for n in names]
    svg = charts.trend_chart(trend, history).svg

    def drawn(rule: str, mark: str) -> list[str]:
        path = rf'<path aria-label="[^"]*rule: {rule}" [^>]*"{mark}"[^>]* d="([^"]*)"'
        return re.findall(path, svg)

    assert [d.count("L") for d in drawn("BS-FORK-01", "line mark")] == [2], "g1 to g2 to g3"
    assert all(d.count("L") == 0 for d in drawn("BS-FORK-03", "line mark")), "no line over g2"
    # Each piece of the band stands at one night: none spans g1 to g3.
    pieces = [p for d in drawn("BS-FORK-03", "area mark") for p in d.split("Z") if p]
    assert pieces and all(len(set(re.findall(r"[ML]([\d.]+),", p))) == 1 for p in pieces)
    assert svg.count("rule: BS-FORK-03") >= 2, "g1 and g3 keep their marks"


def test_palette_never_repeats() -> None:
    for n in (1, 3, 19, 20, 21, 45):
        colours = charts.palette(n)
        assert len(colours) == n and len(set(colours)) == n
        assert all(re.fullmatch(r"#[0-9a-f]{6}", c) for c in colours)


def test_changes_have_no_negative_zero() -> None:
    assert _delta(10.0, 10.04, 1, "pts", worse_up=False) == ("no change", "")
    assert _delta(3, 4, worse_up=True) == ("−1", "good")
    assert _delta(14.9, 28.3, 1, "pts", worse_up=False) == ("−13.4 pts", "bad")
    assert _delta(5, None) == ("", "")


def test_lifetimes_in_reconciled_syncs_are_in_the_report(
    week: tuple[Path, list[Night]], tmp_path: Path
) -> None:
    """Spec §7 (and §10, "the table of section 7"): lifetime in reconciled syncs as well,
    where the sync log allows; the report's table reads as `census stats` does."""
    from pipeline.stats import compute
    from pipeline.stats_text import censored_text

    out, _ = week
    html = night_report(week, 7, tmp_path).read_text()
    section = html.split('id="forks"', 1)[1].split("</section>", 1)[0]
    syncs = section.split("In reconciled syncs", 1)[1].split("</table>", 1)[0]
    overall = compute(str(out), "night-7").fork_syncs.overall
    assert overall.estimated > 0 and overall.median is not None
    row = re.search(r"<tr><td class=\"wrap\"><bdi>all forks</bdi></td>(.*?)</tr>", syncs, re.S)
    assert row is not None
    cells = re.findall(r'<td class="num">([^<]*)</td>', row[1])
    assert cells[:4] == [
        f"{overall.forks:,}",
        f"{overall.closes:,}",
        censored_text(overall),
        f"{overall.unknown:,}",
    ]
    assert cells[4].startswith(f"{overall.median:.1f} (")
    assert len(cells) == 7, "no 'open at' columns for syncs"


# ─────────────── long and right-to-left session text ───────────────

RLO = "\u202e"
LONG_TOPIC = "quarterlyplanning" * 12  # 204 characters and no space: folder names allow 255 bytes
LONG_REPO = "platformservices" * 12


def _text_session(repo: Path, topic: str, title: str) -> None:
    """A copy of the open base session named `topic`, failing BS-THESIS-01, with fork F9
    titled `title` raised, and a capture log that is not all UTF-8."""
    from tests.conftest import FIXTURES, copy_tree

    base = FIXTURES / "cases" / "base" / "open" / "repo" / "docs" / "research" / "demo-brainstorm"
    session = copy_tree(base, repo / "docs" / "research" / f"{topic}-brainstorm")
    (session / "thesis.md").unlink()
    forks = session / "forks.md"
    forks.write_text(forks.read_text() + f"\n## F9 — {title} [open]\n- Raised by: user\n")
    with open(session / "ops" / "capture.md", "ab") as capture:
        capture.write(b"\n\xff\xfe not text\n")


@pytest.fixture(scope="module")
def session_text(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two nights: one plain session, then two more opened and failing, one whose topic and fork
    title are long unbroken words under a long repository name, one whose topic and title
    carry a right-to-left override (U+202E)."""
    from tests.conftest import FIXTURES, copy_tree

    base = tmp_path_factory.mktemp("session-text")
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", base / "root" / LONG_REPO)
    out = str(base / "out")
    crawl([str(base / "root")], out, workers=1, point="night-1")
    _text_session(repo, LONG_TOPIC, "Which" + "quarter" * 60 + "?")
    _text_session(repo, f"pay{RLO}ments", f"Who pays{RLO} the fees?")
    crawl([str(base / "root")], out, workers=1, point="night-2")
    check(out)
    return build(out).path


# Every element holding text the session supplied (its text names the long topic or title, or
# carries the override) whose box leaves its nearest block's box: a long word not wrapped.
SPILLS_JS = """
(words) => {
  const leaves = [...document.querySelectorAll("main *, header *")].filter(e =>
    !e.closest("svg") && [...e.childNodes].some(n => n.nodeType === 3 &&
      words.some(w => n.textContent.includes(w))));
  const spills = [];
  for (const e of leaves) {
    let block = e.parentElement;
    while (getComputedStyle(block).display.startsWith("inline")) block = block.parentElement;
    const outer = block.getBoundingClientRect();
    for (const r of e.getClientRects()) {
      if (r.right > outer.right + 1 || r.left < outer.left - 1) {
        spills.push(`${e.tagName} in ${block.tagName}: ${r.left}–${r.right}, not in ` +
          `${outer.left}–${outer.right}`);
      }
    }
  }
  return [leaves.length, spills];
}
"""


def test_long_session_text_wraps_within_its_column(session_text: Path, browser: Any) -> None:
    """A 204-character topic (folder names allow 255 bytes) under a 192-character repository
    name made the page 1,623 px wide and ran across the neighbouring column: the session lists
    of "What changed" were nowrap, and the topic cell of the longest-open forks had no break
    (found by a hunt). Every piece of it wraps within its own column now."""
    page, errors, _ = open_page(browser, session_text)
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    assert errors == []
    assert_page_layout(page)
    leaves, spills = page.evaluate(SPILLS_JS, [LONG_TOPIC[:40], LONG_REPO[:40], "quarter" * 9])
    assert leaves >= 15, "the long text is in the lists, entries, tables and parse issues"
    assert spills == [], spills[:5]
    page.screenshot(path=str(session_text.parent / "long-text.png"), full_page=True)


def test_a_long_label_value_wraps_in_the_lifetimes_by_label(browser: Any, tmp_path: Path) -> None:
    """A label value of 300 characters (`--label k=…`, a grouping of three values) made the page
    3,906 px wide: the heading and sentences naming the point by it did not break it, nor did
    the rate and stage tables' headers naming the previous point by it, nor the
    lifetimes-by-label table's group cell, which did not isolate the label either (found by a
    hunt). It wraps within its block now; a right-to-left override in a label stays in
    its cell."""
    from tests.conftest import FIXTURES, copy_tree

    copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    out = str(tmp_path / "out")
    long = "z" * 300
    # Points of their own: the page names them by their labels.
    crawl([str(tmp_path / "root")], out, {"k": f"a{RLO}b"}, workers=1)
    crawl([str(tmp_path / "root")], out, {"k": long}, workers=1)
    crawl([str(tmp_path / "root")], out, {"k": "last"}, workers=1)
    check(out)
    page, errors, _ = open_page(browser, build(out, str(tmp_path / "r.html")).path)
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280, "folded"
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    assert errors == []
    assert_page_layout(page)
    cells = page.locator("#forks details td bdi").all_inner_texts()
    assert f"label k={long}" in cells and f"label k=a{RLO}b" in cells, cells
    since = page.locator("#rates thead th").all_inner_texts()
    assert f"since k={'z' * 21}…" in since, since


# The text around session text that carries a right-to-left override: every text node (but
# those holding the override) in the blocks where the override is shown, each with the pairs
# of its neighbouring characters on one line drawn right to left (the second left of the first).
REORDERED_JS = """
(override) => {
  const nodes = (root) => {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    const found = [];
    while (walker.nextNode()) found.push(walker.currentNode);
    return found;
  };
  const blocks = new Set();
  for (const node of nodes(document.body)) {
    if (!node.textContent.includes(override) || node.parentElement.closest("svg, script")) continue;
    let block = node.parentElement;
    while (getComputedStyle(block).display.startsWith("inline")) block = block.parentElement;
    if (block.getClientRects().length) blocks.add(block);
  }
  const checked = [], reversed = [];
  for (const block of blocks) {
    for (const node of nodes(block)) {
      const text = node.textContent;
      if (text.includes(override) || !node.parentElement.getClientRects().length) continue;
      const boxes = [];
      for (let i = 0; i < text.length; i++) {
        if (/\\s/.test(text[i])) continue;
        const range = document.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const r = range.getBoundingClientRect();
        if (r.width) boxes.push([text[i], r]);
      }
      if (boxes.length < 2) continue;
      checked.push(text.trim());
      for (let i = 1; i < boxes.length; i++) {
        const [a, r] = boxes[i - 1], [b, s] = boxes[i];
        if (Math.abs(r.top - s.top) < 2 && s.left < r.left) {
          reversed.push(`${text.trim()} (${a}${b})`);
          break;
        }
      }
    }
  }
  return [blocks.size, checked, reversed];
}
"""


def test_a_bidi_override_in_session_text_leaves_the_pages_words_in_order(
    session_text: Path, browser: Any
) -> None:
    """A right-to-left override (U+202E) in a topic reversed the page's own words after it:
    a worst session's summary was drawn "10-KROF-SB :(noisses etag ,nepo)", and in "What
    changed" the sessions listed after it read backwards (found by a hunt). Session text is
    isolated (<bdi>): the override reorders its own text, never a character of the page's."""
    page, errors, _ = open_page(browser, session_text)
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    assert errors == []
    blocks, checked, reversed = page.evaluate(REORDERED_JS, RLO)
    assert blocks >= 8, "the topic in lists, entries and tables; the title in forks raised"
    for words in ("(open, gate session):", "BS-THESIS-01", "F9", LONG_TOPIC):
        assert any(words in text for text in checked), f"{words!r} not checked"
    assert reversed == [], reversed[:5]
    summary = page.locator("#worst summary", has_text=f"pay{RLO}ments").first
    summary.screenshot(path=str(session_text.parent / "bidi-summary.png"))


def test_a_section_reached_from_the_nav_shows_its_heading(report: Path, browser: Any) -> None:
    """The nav sticks to the top: a link to a section (Compare, Rule rates, …) scrolled its
    heading under the nav, so the view opened on a table with no title saying what it is."""
    page, errors, _ = open_page(browser, report)
    assert errors == []
    links = page.locator("nav a").all()
    assert len(links) >= len(SECTIONS)
    for link in links:
        target = (link.get_attribute("href") or "")[1:]
        link.click()
        page.wait_for_timeout(50)
        nav = page.locator("nav").bounding_box()
        heading = page.locator(f"section#{target} h2").first.bounding_box()
        assert heading["y"] >= nav["y"] + nav["height"] - 0.5, (target, heading, nav)
    page.close()


def test_a_bidi_override_in_a_point_name_or_label_leaves_the_pages_words_in_order(
    browser: Any, tmp_path: Path
) -> None:
    """A right-to-left override in a --point name or a --label value reversed the page's own
    sentences: "What changed" began "From ab%59 ta suoenatlumis ...", the alarm footnote read
    backwards to its end (found by a hunt). Session text was isolated; point names and labels,
    and the check's lines quoting them, were not. Names are isolated, and a line the page
    quotes shows the override as an escape, as the CLI's findings do."""
    from tests.conftest import FIXTURES, copy_tree

    copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    out = str(tmp_path / "out")
    crawl([str(tmp_path / "root")], out, workers=1, point=f"ab{RLO}cd")
    crawl([str(tmp_path / "root")], out, {"k": f"x{RLO}y"}, workers=1)
    check(out)
    page, errors, _ = open_page(browser, build(out, str(tmp_path / "r.html")).path)
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    assert errors == []
    blocks, checked, reversed = page.evaluate(REORDERED_JS, RLO)
    assert blocks >= 4, "the header, what changed, the alarms' footnote, the worst sessions"
    assert any('A rate "moved" when' in text for text in checked), checked
    assert reversed == [], reversed[:5]
