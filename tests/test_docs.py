"""The docs agree with the code: the table reference is generated from pipeline/schema.py."""

from __future__ import annotations

from pipeline.engine import connect
from pipeline.rules import load_rules, rules_markdown
from pipeline.schema import VIEWS, tables_markdown
from tests.conftest import ROOT

SPEC_RULES = {
    "BS-OPS-01",
    "BS-OPS-02",
    "BS-STATE-01",
    "BS-ASPECT-01",
    "BS-ASPECT-02",
    "BS-THESIS-01",
    "BS-COMPOSE-01",
    "BS-COMPOSE-02",
    "BS-FORK-01",
    "BS-FORK-02",
    "BS-FORK-03",
    "BS-SYNC-01",
    "BS-SYNC-02",
    "BS-LEDGER-01",
    "BS-MANIFEST-01",
    "BS-HARVEST-01",
    "BS-USELESS-01",
    "CENSUS-LOC-01",
    "CENSUS-MOVE-01",
}


def test_tables_md_is_generated_from_the_schema() -> None:
    assert (ROOT / "docs" / "tables.md").read_text() == tables_markdown(), (
        "docs/tables.md is stale: run python -m pipeline.schema > docs/tables.md"
    )


def test_documented_views_have_their_columns() -> None:
    con = connect(None)
    for name, (_, columns) in VIEWS.items():
        got = [row[0] for row in con.execute(f'DESCRIBE "{name}"').fetchall()]
        assert got == [c for c, _ in columns], name


def test_every_spec_rule_has_exactly_one_sql_file() -> None:
    rules = load_rules()
    assert {r.rule_id for r in rules} == SPEC_RULES
    assert len(rules) == len(SPEC_RULES)
    for rule in rules:
        assert rule.description and rule.body.lower().lstrip().startswith(("select", "with"))


def test_rules_md_is_generated_from_the_rule_files() -> None:
    text = (ROOT / "docs" / "rules.md").read_text()
    assert text == rules_markdown(), (
        "docs/rules.md is stale: run python -m pipeline.rules > docs/rules.md"
    )
    for rule in SPEC_RULES:
        assert f"`{rule}`" in text, rule


def test_every_cli_error_code_is_documented() -> None:
    text = (ROOT / "docs" / "errors.md").read_text()
    for code in ("unsafe-member", "too-large", "invalid-utf8", "bad-archive", "bad-timestamp"):
        assert f"`{code}`" in text, code
