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
