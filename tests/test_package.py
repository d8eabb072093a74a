"""The wheel carries what the package needs at run time: queries/, reports/, the example corpus."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT


def test_wheel_contains_queries_reports_and_example(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--wheel",
            "--no-isolation",
            "--outdir",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    wheel = next(tmp_path.glob("brainstorm_census-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "pipeline/cli.py" in names
    assert "pipeline/_resources/queries/rules/BS-FORK-03.sql" in names
    assert "pipeline/_resources/queries/views/40_rule_rates.sql" in names
    assert "pipeline/_resources/queries/series/shared/last_known.sql" in names
    assert "pipeline/_resources/reports/census.html.j2" in names
    assert "pipeline/_resources/reports/_partials/rates.html.j2" in names
    example = [n for n in names if n.startswith("pipeline/_resources/example/")]
    assert any(n.endswith(".tar.gz") for n in example)
    # ops/.gitignore holds `*`; the example's ops/ layer must still ship whole.
    assert any(n.endswith("/ops/capture.md") for n in example)
    assert any(n.endswith("/ops/.gitignore") for n in example)
    rule_files = [n for n in names if n.startswith("pipeline/_resources/queries/rules/")]
    assert len(rule_files) == 19


def test_no_function_in_the_package_is_over_sixty_lines() -> None:
    """A newcomer reads any function on one screen (CONTRIBUTING.md)."""
    import ast

    long = []
    for path in sorted((ROOT / "pipeline").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > 60:
                    long.append(f"{path.relative_to(ROOT)}::{node.name} ({length} lines)")
    assert long == []


def test_a_series_include_stands_for_its_shared_file_and_a_missing_one_is_named(
    tmp_path: Path,
) -> None:
    """BS-FORK-01 and BS-LEDGER-01 share their walk back along history (queries/series/shared/):
    each rule's query holds it in place of its include line, and a rule file that includes a
    file that is not there is a RuleFileError naming both, not a query that fails to bind."""
    from pipeline.errors import RuleFileError
    from pipeline.rules import load_rules, parse_rule

    shared = (ROOT / "queries/series/shared/last_known.sql").read_text().strip()
    series = {r.rule_id: r.series for r in load_rules() if r.series}
    for rule_id in ("BS-FORK-01", "BS-LEDGER-01"):
        assert shared in series[rule_id]
        assert not re.search(r"^--\s*include:", series[rule_id], re.MULTILINE)
    for folder in ("rules", "series"):
        (tmp_path / folder).mkdir()
    rule = tmp_path / "rules" / "BS-X-01.sql"
    rule.write_text("-- rule: BS-X-01\n-- gate: session\n-- description: x\nselect 1\n")
    (tmp_path / "series" / "BS-X-01.sql").write_text("with a as (\n-- include: nowhere\n)\n")
    with pytest.raises(RuleFileError, match=r"includes nowhere, but .*shared/nowhere\.sql"):
        parse_rule(rule)


def _census_with_queries(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the package beside a copy of queries/ (a checkout's layout), to edit the
    query files as a maintainer does, and the example corpus crawled into an OUT."""
    import shutil

    code = tmp_path / "code"
    shutil.copytree(ROOT / "pipeline", code / "pipeline")
    shutil.copytree(ROOT / "queries", code / "queries")
    (code / "reports").symlink_to(ROOT / "reports")
    out = tmp_path / "out"
    done = _census(code, "crawl", str(ROOT / "fixtures/example/acme-checkout"), "--out", str(out))
    assert done.returncode == 0, done.stderr
    return code, out


def _census(code: Path, *args: str) -> subprocess.CompletedProcess[str]:
    run = "import sys; sys.argv[0] = 'census'; from pipeline.entry import main; main()"
    return subprocess.run(
        [sys.executable, "-c", run, *args],
        capture_output=True,
        text=True,
        cwd=code,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(code), "HOME": str(code)},
        timeout=120,
    )


def test_a_query_file_may_end_in_a_comment_and_one_duckdb_cannot_parse_is_named(
    tmp_path: Path,
) -> None:
    """A rule, series or stats file whose last line is a `-- comment` is the same query (the
    census wraps it in SQL of its own, which the comment swallowed: an internal error); a rule
    file DuckDB cannot parse is one line naming the file, exit 2."""
    code, out = _census_with_queries(tmp_path)
    for name in (
        "rules/BS-ASPECT-01.sql",
        "series/BS-FORK-01.sql",
        "stats/longest_open.sql",
        "report/summary.sql",
    ):
        path = code / "queries" / name
        path.write_text(path.read_text().rstrip().rstrip(";") + ";\n-- a last word\n")
    rule = code / "queries/rules/BS-STATE-01.sql"
    rule.write_text(rule.read_text().rstrip() + "  -- the rule ends here\n")
    for command in (("check",), ("stats",), ("report",)):
        done = _census(code, *command, "--out", str(out))
        assert done.returncode == 0, done.stderr
        assert "internal error" not in done.stderr
    series = code / "queries/series/BS-FORK-01.sql"
    skip = code / "queries/rules/BS-OPS-01.sql"
    for broken, edit in (
        (rule, lambda t: t.replace("select", "selec", 1)),
        (series, lambda t: t.replace("SELECT", "SELEC", 1).replace("select", "selec", 1)),
        (skip, lambda t: t.replace("=> ops/ removed", "AND => ops/ removed", 1)),
    ):
        kept = broken.read_text()
        broken.write_text(edit(kept))
        done = _census(code, "check", "--out", str(out), "--recheck")
        assert done.returncode == 2
        assert done.stderr.startswith(f"census: {broken}: DuckDB cannot parse its query ("), (
            done.stderr
        )
        assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr
        broken.write_text(kept)
