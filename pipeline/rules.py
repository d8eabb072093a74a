"""Rule files and the SQL that turns findings into statuses.

A rule is `queries/rules/{RULE-ID}.sql`: a query over one snapshot's tables returning the
findings that break it (snapshot_id, file, line, message, and optionally severity 'info');
its header declares the rule's gate, description and skip conditions. No rows for a
snapshot: pass. A rule that also compares a session's snapshots along its history (Status
moving backward, a fork retitled, a ledger entry rewritten) has a second file,
`queries/series/{RULE-ID}.sql`, a query over `history_pairs` returning findings per pair.
Adding a rule is adding its file (and its cases): the rule list, the docs and the `rules`
view all come from the folder.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from pipeline.errors import RuleFileError
from pipeline.resources import one_statement, queries_dir
from pipeline.vocabulary import GATES, gate_includes, sql_macros

_HEADER_RE = re.compile(r"^--\s*([a-z-]+):\s*(.*?)\s*$")
# A series file's line `-- include: NAME` stands for queries/series/shared/NAME.sql: a walk
# that two rules share is written once.
_INCLUDE_RE = re.compile(r"^--\s*include:\s*([a-z_]+)\s*$", re.MULTILINE)
# The view files whose views and macros the rule and series queries call (as_shown, points,
# seen_in, …); part of the rule set's identity, as a rule file is.
RULE_VIEWS = ("05_macros.sql", "10_points.sql", "15_history.sql")
# The reason a rule that reads only ops/ is skipped in a history folder (spec §5): ops/ is gone
# by design there, so the rule does not apply, which no other skip reason says.
HARVEST_SKIP = "ops/ removed at harvest"
# The reason a manifest rule is skipped where no ops/manifest.md exists: the rule applies only
# where one does (spec §5), so this skip too says the rule does not apply, not that its
# evidence went missing.
NO_MANIFEST_SKIP = "no manifest"
# The skips that mean "the rule does not apply here"; any other (no git context, no
# repository layout) hides a measure.
NOT_APPLICABLE_SKIPS = (HARVEST_SKIP, NO_MANIFEST_SKIP)
# The shape of rule_results' rows, part of the rule set: a new shape checks points anew.
RESULTS_LAYOUT = "one row per snapshot, gate and rule"


@dataclass(frozen=True)
class Rule:
    rule_id: str
    gate: str
    description: str
    skips: tuple[tuple[str, str], ...]  # (SQL predicate over snapshots, reason), first match wins
    body: str
    path: Path
    series: str | None = None  # the query over history_pairs, for rules that compare snapshots
    reads: tuple[str, ...] = ()  # the session files the rule reads (its `reads:` header)

    def evaluated_at(self, gate: str) -> bool:
        return gate_includes(gate, self.gate)

    @property
    def series_path(self) -> Path:
        return _series_path(self.path)


def _series_path(rule_path: Path) -> Path:
    """queries/series/RULE.sql beside queries/rules/RULE.sql: the rule's query over history."""
    return rule_path.parent.parent / "series" / rule_path.name


def _read(path: Path) -> tuple[dict[str, str], list[tuple[str, str]], str]:
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
    return header, skips, one_statement("\n".join(body))


def parse_rule(path: Path) -> Rule:
    header, skips, body = _read(path)
    missing = {"rule", "gate", "description"} - set(header)
    if missing or header.get("gate") not in GATES or header.get("rule") != path.stem:
        raise RuleFileError(f"{path}: header needs rule (= file name), gate and description")
    series_path = _series_path(path)
    series = _with_includes(series_path) if series_path.is_file() else None
    names = (f.strip() for f in header.get("reads", "").split(","))
    reads = tuple(name for name in names if name and name != "none")
    return Rule(
        header["rule"],
        header["gate"],
        header["description"],
        tuple(skips),
        body,
        path,
        series,
        reads,
    )


def _with_includes(path: Path) -> str:
    def included(m: re.Match[str]) -> str:
        shared = path.parent / "shared" / f"{m[1]}.sql"
        if not shared.is_file():
            raise RuleFileError(f"{path}: includes {m[1]}, but {shared} is missing")
        return shared.read_text().strip()

    return one_statement(_INCLUDE_RE.sub(included, _read(path)[2]))


def unparsable_file() -> RuleFileError | None:
    """The rule file (its query or a skip predicate) or series file DuckDB cannot parse as
    the subquery the census wraps it in, once a query built of them failed to parse: that
    file is named, not an internal error in the query of every rule. None when each parses.
    Sought only after a failure: parsing each file first cost every command 35 ms."""
    import duckdb

    for rule in load_rules():
        queries = [(rule.path, rule.body), (rule.series_path, rule.series)]
        queries += [(rule.path, f"SELECT CASE WHEN {p} THEN 1 END") for p, _ in rule.skips]
        for path, query in queries:
            if query is None:
                continue
            try:
                duckdb.extract_statements(f"SELECT * FROM (\n{query}\n)")
            except duckdb.Error as err:
                first = str(err).splitlines()[0] if str(err) else type(err).__name__
                return RuleFileError(
                    f"{path}: DuckDB cannot parse its query ({first}); fix the file"
                )
    return None


@cache
def load_rules() -> tuple[Rule, ...]:
    folder = queries_dir() / "rules"
    rules = tuple(parse_rule(p) for p in sorted(folder.glob("*.sql")))
    known = {r.rule_id for r in rules}
    for path in (queries_dir() / "series").glob("*.sql"):
        if path.stem not in known:
            raise RuleFileError(f"{path}: a series query needs queries/rules/{path.name}")
    return rules


def rules_for(gate: str) -> list[Rule]:
    return [r for r in load_rules() if r.evaluated_at(gate)]


@cache
def ruleset() -> str:
    """A hash of everything a rule result depends on: the rule and series files, the views and
    macros they call, the SQL each is run as and the vocabulary. Results computed under another
    rule set are not reused."""
    h = hashlib.sha256()
    for rule in load_rules():
        h.update(rule.path.read_bytes())
        h.update((rule.series or "").encode())
    for name in RULE_VIEWS:
        h.update((queries_dir() / "views" / name).read_bytes())
    # What wraps the rule files (what fails closed, one finding per step) decides results too.
    h.update(results_sql().encode())
    h.update(series_sql().encode())
    h.update("\n".join(sql_macros()).encode())
    # What a result row is: results of another shape are not reused.
    h.update(RESULTS_LAYOUT.encode())
    return h.hexdigest()[:16]


# Parse issues that mean a file (or, with file '.', the whole session) was not read at all:
# every rule that reads it fails, not only the rule the issue names (docs/errors.md).
# `binary`: a file with NUL bytes is no UTF-8 text (UTF-16, say), so its reading is no reading.
UNREAD_CODES = (
    "too-large",
    "unreadable",
    "vanished",
    "not-a-file",
    "not-a-folder",
    "archive-incomplete",
    "binary",
    "misnamed-file",
)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _sql_list(texts: Iterable[str]) -> str:
    """`'a', 'b'`: the texts as SQL string literals, for an IN list."""
    return ", ".join(_literal(text) for text in texts)


def _rule_sql(rule: Rule) -> str:
    unread = _sql_list(UNREAD_CODES)
    # An issue on the whole folder ('.') or on a folder not entered (`ops/`) covers its files.
    folders = {posixpath.dirname(name) + "/" for name in rule.reads if "/" in name}
    files = _sql_list((".", *rule.reads, *sorted(folders)))
    # A history folder has no ops/ by design, so nothing there reads it: a stray file named
    # `ops` is not an ops/ layer that could not be read.
    in_ops = any(name.startswith("ops/") for name in (*rule.reads, *folders))
    not_history_ops = (
        " AND NOT (starts_with(file, 'ops/') AND snapshot_id IN "
        "(SELECT snapshot_id FROM snapshots WHERE location = 'history'))"
        if in_ops
        else ""
    )
    reason = "NULL"
    if rule.skips:
        whens = " ".join(f"WHEN {p} THEN {_literal(text)}" for p, text in rule.skips)
        reason = f"CASE {whens} END"
    return f"""
SELECT k.snapshot_id, {_literal(rule.rule_id)} AS rule_id, {_literal(rule.gate)} AS gate,
    CASE WHEN k.reason IS NOT NULL THEN 'skipped' WHEN f.snapshot_id IS NULL THEN 'pass'
         ELSE f.severity END AS status,
    f.file, CAST(f.line AS INTEGER) AS line, coalesce(k.reason, f.message) AS message
FROM (SELECT snapshot_id, {reason} AS reason FROM snapshots) k
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
        -- So does a file it reads that could not be read at all, whichever rule the issue
        -- names, and a session that may have lost files (file '.': an archive cut short).
        UNION ALL BY NAME (
            SELECT snapshot_id, file, line, 'could not read: ' || message AS message,
                'fail' AS severity
            FROM parse_issues
            WHERE code IN ({unread}) AND file IN ({files})
                AND rule_id IS DISTINCT FROM '{rule.rule_id}'{not_history_ops})
    )
    -- A snapshot with any 'fail' finding fails, and only its fail findings are kept.
    QUALIFY coalesce(severity, 'fail') = CASE
        WHEN bool_or(coalesce(severity, 'fail') = 'fail') OVER (PARTITION BY snapshot_id)
        THEN 'fail' ELSE 'info' END
) f ON k.reason IS NULL AND f.snapshot_id = k.snapshot_id"""


def results_sql(gate: str | None = None) -> str:
    """One query yielding a status (and the findings) of every rule for every snapshot in
    the connection's tables: every rule, or those evaluated at `gate`."""
    chosen = load_rules() if gate is None else rules_for(gate)
    return "\nUNION ALL\n".join(_rule_sql(r) for r in chosen)


def series_sql() -> str:
    """Findings along the sessions' histories for the pairs of the census point at $position.

    Each series file reads `pairs` (history_pairs of that point: pair_id, session_key, root,
    before_id, after_id, before_seen, after_seen) and returns pair_id, file, line, message.
    """
    parts = [
        f"""
SELECT p.point, p.session_key, p.root, p.after_id AS snapshot_id,
    {_literal(rule.rule_id)} AS rule_id, {_literal(rule.gate)} AS gate,
    f.file, CAST(f.line AS INTEGER) AS line, f.message, f.element, f.detail, p.after_seen
FROM pairs p
JOIN ({rule.series}) f USING (pair_id)"""
        for rule in load_rules()
        if rule.series
    ]
    parts += [_unread_along_history(rule) for rule in load_rules() if rule.series]
    # One finding per change: a step seen over two pairs (the commit that made it, and the
    # working tree that shows it) is one finding, named by the commit where there is one.
    return (
        "WITH pairs AS MATERIALIZED (FROM history_pairs_in($position - 1, $position))\n"
        "SELECT * EXCLUDE (element, detail, after_seen) FROM (\n"
        + "\nUNION ALL\n".join(parts)
        + ")\nQUALIFY row_number() OVER (PARTITION BY session_key, root, rule_id, element, detail\n"
        "    ORDER BY after_seen LIKE 'commit %' DESC, message) = 1"
    )


def _unread_along_history(rule: Rule) -> str:
    """A commit first seen at the point whose file the rule reads could not be read (a partial
    clone lacking its blob): what it said is unknown, so a step through it cannot be ruled out,
    and the rule fails there (spec §3.1, fail closed). Skipping it compared the commits around
    it, and `open → (stopping) → open` passed (found by a hunt)."""
    unread, files = _sql_list(UNREAD_CODES), _sql_list((".", *rule.reads))
    return f"""
SELECT p.point, p.session_key, p.root, p.after_id AS snapshot_id,
    {_literal(rule.rule_id)} AS rule_id, {_literal(rule.gate)} AS gate, i.file,
    CAST(i.line AS INTEGER) AS line,
    'could not read ' || i.file || ' at ' || p.after_seen || ' (' || i.message
        || '): a step along history cannot be ruled out' AS message,
    'unread' AS element, i.file AS detail, p.after_seen
FROM pairs p
JOIN parse_issues i ON i.snapshot_id = p.after_id
WHERE p.after_seen LIKE 'commit %' AND i.code IN ({unread}) AND i.file IN ({files})"""


def rules_view() -> str:
    """The `rules` view: every rule with its gate and description, from the rule files."""
    rows = ", ".join(
        f"({_literal(r.rule_id)}, {_literal(r.gate)}, {_literal(r.description)}, "
        f"{'true' if r.series else 'false'})"
        for r in load_rules()
    )
    return (
        "CREATE OR REPLACE VIEW rules AS SELECT * FROM (VALUES "
        f"{rows}) AS t(rule_id, gate, description, across_history)"
    )


def rules_markdown() -> str:
    """docs/rules.md, generated from the rule files' headers."""
    out = [
        "# Rules",
        "",
        "Generated from the headers of `queries/rules/*.sql` by `python -m pipeline.rules >",
        "docs/rules.md`; a test fails when they disagree. Each rule is one SQL file returning",
        "the findings that break it; a rule marked *history* also has a query in",
        "`queries/series/` that compares a session's snapshots along its history. Decisions",
        "where the spec is silent: [rule-semantics.md](rule-semantics.md).",
        "",
        "| rule | gate | meaning | skipped when |",
        "|---|---|---|---|",
    ]
    for rule in sorted(load_rules(), key=lambda r: (GATES.index(r.gate), r.rule_id)):
        skips = "; ".join(f"`{p}` ({reason})" for p, reason in rule.skips) or "never"
        history = " *(history)*" if rule.series else ""
        out.append(f"| `{rule.rule_id}`{history} | {rule.gate} | {rule.description} | {skips} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(rules_markdown(), end="")
