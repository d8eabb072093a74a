"""Rule files (queries/rules/{RULE-ID}.sql) and the SQL that turns findings into statuses.

A rule file is a query returning the findings that break the rule (snapshot_id,
file, line, message, and optionally severity 'info'); its header declares the
rule's gate, description and skip conditions. No rows for a snapshot: pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from pipeline.resources import queries_dir

GATES = ("session", "manifest", "move")
_HEADER_RE = re.compile(r"^--\s*([a-z-]+):\s*(.*?)\s*$")


@dataclass(frozen=True)
class Rule:
    rule_id: str
    gate: str
    description: str
    skips: tuple[tuple[str, str], ...]  # (SQL predicate over snapshots, reason), first match wins
    body: str
    path: Path

    def evaluated_at(self, gate: str) -> bool:
        return GATES.index(gate) >= GATES.index(self.gate)


class RuleFileError(Exception):
    pass


def parse_rule(path: Path) -> Rule:
    header: dict[str, str] = {}
    skips: list[tuple[str, str]] = []
    body: list[str] = []
    for line in path.read_text().splitlines():
        m = _HEADER_RE.match(line) if not body else None
        if m is None:
            body.append(line)
            continue
        key, value = m.groups()
        if key == "skip":
            predicate, _, reason = value.partition("=>")
            skips.append((predicate.strip(), reason.strip()))
        else:
            header[key] = value
    missing = {"rule", "gate", "description"} - set(header)
    if missing or header.get("gate") not in GATES or header.get("rule") != path.stem:
        raise RuleFileError(f"{path}: header needs rule (= file name), gate and description")
    return Rule(
        header["rule"],
        header["gate"],
        header["description"],
        tuple(skips),
        "\n".join(body).strip().rstrip(";"),
        path,
    )


@cache
def load_rules() -> tuple[Rule, ...]:
    folder = queries_dir() / "rules"
    return tuple(parse_rule(p) for p in sorted(folder.glob("*.sql")))


def rules_for(gate: str) -> list[Rule]:
    return [r for r in load_rules() if r.evaluated_at(gate)]


def _rule_sql(rule: Rule, gates: list[str], scope: str) -> str:
    reason = "NULL"
    if rule.skips:
        whens = " ".join(
            f"WHEN {predicate} THEN '{text.replace(chr(39), chr(39) * 2)}'"
            for predicate, text in rule.skips
        )
        reason = f"CASE {whens} END"
    gate_list = ", ".join(f"('{g}')" for g in gates if rule.evaluated_at(g))
    return f"""
SELECT k.snapshot_id, g.gate, '{rule.rule_id}' AS rule_id,
    CASE WHEN k.reason IS NOT NULL THEN 'skipped' WHEN f.snapshot_id IS NULL THEN 'pass'
         ELSE f.severity END AS status,
    f.file, CAST(f.line AS INTEGER) AS line, coalesce(k.reason, f.message) AS message
FROM (SELECT snapshot_id, {reason} AS reason FROM snapshots {scope}) k
LEFT JOIN (
    SELECT snapshot_id, file, line, message, coalesce(severity, 'fail') AS severity
    FROM (
        SELECT NULL::VARCHAR AS snapshot_id, NULL::VARCHAR AS file, NULL::INTEGER AS line,
            NULL::VARCHAR AS message, NULL::VARCHAR AS severity
        WHERE false
        UNION ALL BY NAME ({rule.body})
        -- A line the rule needs that could not be read fails it (spec §3.1, fail closed).
        UNION ALL BY NAME (
            SELECT snapshot_id, file, line, 'could not read: ' || message AS message,
                'fail' AS severity
            FROM parse_issues WHERE rule_id = '{rule.rule_id}')
    )
    -- A snapshot with any 'fail' finding fails, and only its fail findings are kept.
    QUALIFY coalesce(severity, 'fail') = CASE
        WHEN bool_or(coalesce(severity, 'fail') = 'fail') OVER (PARTITION BY snapshot_id)
        THEN 'fail' ELSE 'info' END
) f ON k.reason IS NULL AND f.snapshot_id = k.snapshot_id
CROSS JOIN (VALUES {gate_list}) g(gate)"""


def results_sql(gates: list[str] | None = None, scope: str = "") -> str:
    """One query yielding rule_results rows for every snapshot, gate and rule."""
    gates = gates or list(GATES)
    parts = [
        _rule_sql(r, gates, scope) for r in load_rules() if any(r.evaluated_at(g) for g in gates)
    ]
    return "\nUNION ALL\n".join(parts)


def rules_markdown() -> str:
    """docs/rules.md, generated from the rule files' headers."""
    out = [
        "# Rules",
        "",
        "Generated from the headers of `queries/rules/*.sql` by `python -m pipeline.rules >",
        "docs/rules.md`; a test fails when they disagree. Each rule is one SQL file returning",
        "the findings that break it. Decisions where the spec is silent:",
        "[rule-semantics.md](rule-semantics.md).",
        "",
        "| rule | gate | meaning | skipped when |",
        "|---|---|---|---|",
    ]
    for rule in sorted(load_rules(), key=lambda r: (GATES.index(r.gate), r.rule_id)):
        skips = "; ".join(f"`{p}` ({reason})" for p, reason in rule.skips) or "never"
        out.append(f"| `{rule.rule_id}` | {rule.gate} | {rule.description} | {skips} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(rules_markdown(), end="")
