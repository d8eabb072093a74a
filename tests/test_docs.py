"""The docs agree with the code: the table reference is generated from pipeline/schema.py."""

from __future__ import annotations

from pipeline.engine import connect
from pipeline.rules import load_rules, rules_markdown
from pipeline.schema import TABLES, VIEWS, tables_markdown
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


def test_every_view_census_duckdb_holds_is_documented() -> None:
    """Spec §6: every table users can query is documented; own_gate_results, which statuses
    reads, was in census.duckdb and in no doc (found by a hunt)."""
    con = connect(None)
    rows = con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()
    views = {r[0] for r in rows}
    assert views - set(VIEWS) - set(TABLES) == set()


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


# Spec §6's minimum columns, in its words: a maintainer's ad hoc SQL may name any of them.
SPEC_COLUMNS = {
    "runs": "run_id started_at finished_at roots labels tool_version",
    "observations": "run_id session_key snapshot_id root repo path topic location observed_at "
    "commit",
    "snapshots": "snapshot_id status posture started sitting last_compose content_time stage "
    "ledger_entries turns syncs",
    "rule_results": "snapshot_id gate rule_id status file line message",
    "rule_rates": "run_id gate rule_id evaluated failed info skipped rate rate_lo rate_hi",
    "sync_pairs": "snapshot_id sync_id gate scope dispatched_at result result_at latency_s",
    "fork_lifetimes": "session_key fork_id raised_by raised_at closed_at close_kind censored "
    "hours syncs",
}
# "one row per thing the file section names, each with snapshot_id, the file and the line"
SPEC_CONTENT = (
    "aspects aspect_refs forks ledger ledger_resolves turns sync_events manifests manifest_rows "
    "fragments links parse_issues"
)


def test_the_spec_minimum_columns_are_there() -> None:
    con = connect(None)
    wanted = {**SPEC_COLUMNS, **{t: "snapshot_id file line" for t in SPEC_CONTENT.split()}}
    for name, columns in wanted.items():
        got = {row[0] for row in con.execute(f'DESCRIBE "{name}"').fetchall()}
        assert set(columns.split()) <= got, (name, set(columns.split()) - got)
