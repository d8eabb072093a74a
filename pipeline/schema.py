"""Every table the census writes, defined once: column names, types and meanings.

Types are spelled as short logical names so that this module stays import-light
(`census detect` builds DuckDB tables from it without pyarrow); `arrow_schema`
and `duckdb_ddl` translate them for the crawl and the detector.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Column:
    name: str
    # string | int32 | int64 | bool | timestamp | list<string> | list<int32> | map<string,string>
    type: str
    doc: str


@dataclass(frozen=True)
class Table:
    name: str
    doc: str
    columns: tuple[Column, ...]
    # Snapshot tables hold content-addressed facts, written once per distinct snapshot.
    per_snapshot: bool = True
    # Which command writes the table: the crawl, or check (results frozen per census point).
    writer: str = "crawl"

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]


def _c(name: str, type_: str, doc: str) -> Column:
    return Column(name, type_, doc)


SNAPSHOT_ID = _c(
    "snapshot_id", "string", "Content hash of everything the rules read for the snapshot."
)
FILE = _c("file", "string", "File the row comes from, relative to the session folder.")
LINE = _c("line", "int32", "1-based line in that file.")

TABLES: dict[str, Table] = {}


def _table(
    name: str, doc: str, *columns: Column, per_snapshot: bool = True, writer: str = "crawl"
) -> Table:
    table = Table(name, doc, tuple(columns), per_snapshot, writer)
    TABLES[name] = table
    return table


RUNS = _table(
    "runs",
    "One row per committed crawl run; a run is visible only once this row exists.",
    _c("run_id", "string", "Run identifier (UTC start time plus a random suffix, sortable)."),
    _c(
        "point",
        "string",
        "The census point the run belongs to (--point; the run's own id when not given).",
    ),
    _c("started_at", "timestamp", "When the run started (UTC)."),
    _c("finished_at", "timestamp", "When the run committed (UTC)."),
    _c("roots", "list<string>", "The roots crawled, as given on the command line."),
    _c("labels", "map<string,string>", "Labels given with --label k=v."),
    _c(
        "git_history",
        "bool",
        "Whether the run read git history (--git-history); null for a run an older census wrote.",
    ),
    _c("tool_version", "string", "Version of brainstorm-census that wrote the run."),
    _c(
        "reader_version",
        "string",
        "Version of the file readers; part of every snapshot id, so a new one re-reads all.",
    ),
    _c("sessions", "int64", "Session observations in the run."),
    _c("new_snapshots", "int64", "Snapshots first stored by this run."),
    _c("parse_issues", "int64", "Parse issues in the run's new snapshots and its roots."),
    per_snapshot=False,
)

OBSERVATIONS = _table(
    "observations",
    "One row per session seen per run (per commit with --git-history).",
    _c("run_id", "string", "The run that saw the session."),
    _c("session_key", "string", "Stable hash of (repository identity, topic in NFC)."),
    SNAPSHOT_ID,
    _c("root", "string", "The crawl root the session was found under, as an absolute path."),
    _c("repo", "string", "Repository identity: origin URL, else its path under the root."),
    _c("repo_path", "string", "Repository root relative to the crawl root ('.' for the root)."),
    _c("path", "string", "Session folder relative to its repository root."),
    _c("topic", "string", "Topic slug."),
    _c("location", "string", "research or history."),
    _c("observed_at", "timestamp", "Commit time for a git-history snapshot, else the run's start."),
    _c("commit", "string", "Commit id for a git-history snapshot, else null."),
    _c(
        "parents",
        "list<string>",
        "With --git-history: the nearest earlier commits (by git ancestry) that changed this "
        "session, for a commit snapshot; the commits at HEAD for a working tree. Else null.",
    ),
    per_snapshot=False,
)

SNAPSHOTS = _table(
    "snapshots",
    "One row per distinct snapshot (session content at one time).",
    SNAPSHOT_ID,
    _c("location", "string", "research or history."),
    _c("topic", "string", "Topic slug."),
    _c("path", "string", "Session folder relative to its repository root."),
    _c("stage", "string", "open, converging, applied or harvested (spec §4)."),
    _c(
        "git_context",
        "bool",
        "Whether the session sits in a git working tree (also when git could not read it: "
        "BS-OPS-02 then fails, with a git-unreadable parse issue).",
    ),
    _c(
        "commit_snapshot",
        "bool",
        "Read from a commit (--git-history), not a working tree; ops/ is then usually absent.",
    ),
    _c("state_exists", "bool", "state.md exists."),
    _c(
        "status",
        "string",
        "state.md Status, as read (spec §3.1: emphasis and a trailing comment dropped, so "
        "'**stopping** (since S3)' is stopping); null when absent.",
    ),
    _c("status_line", "int32", "Line of the Status bullet."),
    _c("posture", "string", "state.md Posture."),
    _c("started", "timestamp", "state.md Started (a date alone reads as midnight UTC)."),
    _c("sitting", "string", "state.md Sitting."),
    _c("last_compose_raw", "string", "state.md Last compose, as written."),
    _c(
        "last_compose", "timestamp", "Last compose as a UTC instant; null for never or unparseable."
    ),
    _c("last_compose_never", "bool", "Last compose is the value never."),
    _c("last_compose_line", "int32", "Line of the Last compose bullet."),
    _c("aspect_map_line", "int32", "Line of the '## Aspect map' heading; null when absent."),
    _c("thesis_exists", "bool", "thesis.md exists."),
    _c("thesis_title", "string", "thesis.md title line text."),
    _c("thesis_stamp_raw", "string", "thesis.md 'Current as of:' value, as written."),
    _c(
        "thesis_stamp",
        "timestamp",
        "The thesis stamp as a UTC instant; null for never or unparseable.",
    ),
    _c("thesis_stamp_never", "bool", "The thesis stamp is the value never."),
    _c("thesis_stamp_line", "int32", "Line of the stamp."),
    _c("thesis_has_claim", "bool", "thesis.md has '## Claim'."),
    _c("thesis_has_argument", "bool", "thesis.md has '## Argument'."),
    _c("thesis_has_what_changed", "bool", "thesis.md has '## What changed'."),
    _c("forks_exists", "bool", "forks.md exists."),
    _c("ledger_exists", "bool", "ledger.md exists."),
    _c("ops_exists", "bool", "The session has an ops/ folder."),
    _c("gitignore_exists", "bool", "ops/.gitignore exists."),
    _c("gitignore_star", "bool", "ops/.gitignore has a line that is exactly '*' (trimmed)."),
    _c("capture_exists", "bool", "ops/capture.md exists."),
    _c("sync_log_exists", "bool", "ops/sync-log.md exists."),
    _c("manifest_exists", "bool", "ops/manifest.md exists."),
    _c("newest_turn_at", "timestamp", "Newest parseable capture turn timestamp."),
    _c("newest_sync_at", "timestamp", "Newest parseable sync-log timestamp."),
    _c("content_time", "timestamp", "Latest of Last compose, newest turn and newest sync line."),
    _c("forks_open", "int32", "Forks marked open, or whose marker could not be read."),
    _c("forks_parked", "int32", "Forks marked parked."),
    _c("forks_total", "int32", "Fork entries in forks.md."),
    _c("ledger_entries", "int32", "Ledger entries."),
    _c("turns", "int32", "Capture turns."),
    _c("syncs", "int32", "Distinct sync IDs in the sync log."),
    _c("files", "int32", "Files in the session folder."),
    _c("bytes", "int64", "Bytes in the session folder."),
    _c("parse_issues", "int32", "Parse issues in the snapshot (rows of parse_issues)."),
)

FILES = _table(
    "files",
    "Every file in the session folder (basis/, fragments/ and ops/ listings included).",
    SNAPSHOT_ID,
    FILE,
    _c("size", "int64", "Size in bytes."),
    _c("sha256", "string", "Content hash (first 32 hex digits)."),
)

TRACKED_FILES = _table(
    "tracked_files",
    "Files under the session folder that git's index tracks (BS-OPS-02).",
    SNAPSHOT_ID,
    FILE,
    _c("commit", "string", "Commit that tracked it (git history), else null for the index."),
)

ASPECTS = _table(
    "aspects",
    "One row per aspect bullet under '## Aspect map' in state.md.",
    SNAPSHOT_ID,
    FILE,
    LINE,
    _c("name", "string", "Aspect name (text before the dash)."),
    _c("description", "string", "Text between the dash and the arrow."),
    _c("has_arrow", "bool", "The bullet has an arrow."),
    _c("refs_raw", "string", "Text after the arrow, as written."),
    _c("ref_count", "int32", "Number of refs (0 when there is no arrow or nothing after it)."),
)

ASPECT_REFS = _table(
    "aspect_refs",
    "One row per ref of an aspect.",
    SNAPSHOT_ID,
    FILE,
    LINE,
    _c("aspect", "string", "Aspect name."),
    _c("ref", "string", "The ref as written (trimmed)."),
    _c("kind", "string", "fork, decision, thesis, fragment, none_yet or unknown."),
    _c("target", "string", "F#/D# ID or fragment name; null for thesis, none_yet and unknown."),
)

FORKS = _table(
    "forks",
    "One row per fork entry (a heading starting '## F') in forks.md.",
    SNAPSHOT_ID,
    FILE,
    LINE,
    _c("fork_id", "string", "F# ID; null when the heading has none."),
    _c("fork_num", "int32", "The number of the ID."),
    _c(
        "title",
        "string",
        "Title between the dash and the marker; for a heading with nothing before its marker, "
        "the text after it (a bracketed remark alone is commentary, so no title).",
    ),
    _c("marker", "string", "open or parked; null when missing or unknown."),
    _c("marker_raw", "string", "The bracketed marker as written."),
    _c(
        "destination",
        "string",
        "Parked destination (text after the arrow); '' when none is written or it names no "
        "place (TBD, none, ?), null when one is written with no arrow before it "
        "([parked: docs/x.md]).",
    ),
    _c("heading_ok", "bool", "The heading parsed in full."),
    _c("raised_by", "string", "Raised by value as written."),
    _c("raised_by_kind", "string", "user, twin, probe, harvest or other."),
    _c("raised_by_sync", "string", "The first S# the Raised by value names ('twin (S#)')."),
    _c("raised_by_syncs", "list<string>", "Every S# the Raised by value names, in order."),
    _c("raised_by_line", "int32", "Line of the Raised by bullet."),
    _c(
        "closes_when",
        "string",
        "Closes when value; '' when it says nothing or is left to fill (TBD, ?); null when "
        "the bullet is missing.",
    ),
    _c("closes_when_line", "int32", "Line of the Closes when bullet."),
)

LEDGER = _table(
    "ledger",
    "One row per ledger entry (a heading starting '## D') in ledger.md.",
    SNAPSHOT_ID,
    FILE,
    LINE,
    _c("position", "int32", "1-based order of the entry in the file."),
    _c("decision_id", "string", "D# ID; null when the heading has none."),
    _c("decision_num", "int32", "The number of the ID."),
    _c("title", "string", "Title after the dash."),
    _c("heading_ok", "bool", "The heading parsed in full."),
    _c("decision", "string", "Decision text; '' when left to fill (TBD, ?); null when missing."),
    _c("why", "string", "Why text; '' when left to fill (TBD, ?); null when missing."),
    _c(
        "how_to_apply",
        "string",
        "How to apply text; '' when left to fill (TBD, ?); null when missing.",
    ),
    _c("decision_line", "int32", "Line of the Decision field; null when missing."),
    _c("why_line", "int32", "Line of the Why field; null when missing."),
    _c("how_to_apply_line", "int32", "Line of the How to apply field; null when missing."),
    _c("resolves_raw", "string", "Resolves value as written."),
    _c("reversed_by", "string", "The first D# named by 'Reversed by' (bullet or phrase)."),
    _c("reversed_by_line", "int32", "Line of the first such annotation."),
    _c("reverses", "string", "The first D# named by 'Reverses:'."),
    _c("reverses_line", "int32", "Line of the first Reverses field."),
    _c(
        "reversed_by_ids",
        "list<string>",
        "Every D# the entry's 'Reversed by' annotations name (every annotation counts), in "
        "order (each must be an entry).",
    ),
    _c(
        "reverses_ids",
        "list<string>",
        "Every D# the entry's 'Reverses:' fields name (every field counts), in order (each "
        "must be an entry).",
    ),
    _c(
        "reversed_by_lines",
        "list<int32>",
        "Line of the annotation that names each D# of reversed_by_ids, in the same order.",
    ),
    _c(
        "reverses_lines",
        "list<int32>",
        "Line of the Reverses field that names each D# of reverses_ids, in the same order.",
    ),
)

LEDGER_RESOLVES = _table(
    "ledger_resolves",
    "One row per fork ID named in a ledger entry's Resolves bullet.",
    SNAPSHOT_ID,
    FILE,
    LINE,
    _c("decision_id", "string", "The resolving entry."),
    _c("fork_id", "string", "A fork ID (F#) the Resolves value names as a word."),
)

TURNS = _table(
    "turns",
    "One row per capture turn heading '### T# · timestamp' in ops/capture.md.",
    SNAPSHOT_ID,
    FILE,
    LINE,
    _c("turn_id", "string", "T# ID."),
    _c("turn_num", "int32", "Its number."),
    _c("at_raw", "string", "Timestamp as written."),
    _c(
        "at",
        "timestamp",
        "Timestamp as a UTC instant; null when unparseable. AT is a keyword in DuckDB's SQL: "
        'write the column "at" (in double quotes).',
    ),
)

SYNC_EVENTS = _table(
    "sync_events",
    "One row per dispatch or result line in ops/sync-log.md.",
    SNAPSHOT_ID,
    FILE,
    LINE,
    _c("sync_id", "string", "S# ID."),
    _c("sync_num", "int32", "Its number."),
    _c("kind", "string", "dispatch or result."),
    _c("gate", "string", "Dispatch gate."),
    _c("scope", "string", "Dispatch scope."),
    _c(
        "result",
        "string",
        "reconciled or failed (result lines); null on a result line whose outcome could not "
        "be read (its bad-sync-line issue).",
    ),
    _c("at_raw", "string", "Timestamp as written."),
    _c(
        "at",
        "timestamp",
        "Timestamp as a UTC instant; null when unparseable. AT is a keyword in DuckDB's SQL: "
        'write the column "at" (in double quotes).',
    ),
    _c("summary", "string", "Result summary text."),
    _c("edits", "int32", "'N edits' from a reconciled summary."),
    _c("new_forks", "int32", "'N new forks' from a reconciled summary."),
    _c("open_forks", "int32", "'N open' from a reconciled summary."),
)

MANIFESTS = _table(
    "manifests",
    "One row per ops/manifest.md: its current (last) round.",
    SNAPSHOT_ID,
    FILE,
    LINE,
    _c("round", "int32", "The last Round number; null when missing or unparseable."),
    _c("rounds", "int32", "How many Round lines the file has."),
    _c("round_line", "int32", "Line of the last Round line."),
    _c(
        "status",
        "string",
        "The current round's Status value, as read (spec §3.1: 'applied (all rows done)' is "
        "applied).",
    ),
    _c("status_line", "int32", "Line of that Status."),
    _c("has_table", "bool", "The current round has a table header row."),
    _c("table_rows", "int32", "Data rows in the current round's table."),
    _c("useless_result", "string", "Uselessness test Result value."),
    _c("useless_result_line", "int32", "Line of the Result bullet."),
    _c("cold_reader_paths", "string", "Cold-reader allowed paths value."),
    _c("gaps", "string", "Gaps value."),
)

MANIFEST_ROWS = _table(
    "manifest_rows",
    "One row per data row of a manifest table (every round).",
    SNAPSHOT_ID,
    FILE,
    LINE,
    _c("round", "int32", "Round the row belongs to (null before any Round line)."),
    _c("current", "bool", "The row belongs to the manifest's current (last) round."),
    _c("num", "string", "The # cell."),
    _c("what", "string", "The What cell (escaped pipes unescaped)."),
    _c("source", "string", "The Source cell."),
    _c("destination", "string", "The Destination cell."),
    _c("action", "string", "The Action cell."),
    _c(
        "destination_path",
        "string",
        "The cell's first destination as a repository-relative path (all: manifest_destinations).",
    ),
    _c(
        "destination_exists",
        "bool",
        "That path is a file or folder of the repository, or a pattern (`*`) matching a file.",
    ),
)

MANIFEST_DESTINATIONS = _table(
    "manifest_destinations",
    "One row per destination a manifest row's Destination cell names (a Markdown link's "
    "target, a path before commentary, or the whole cell when it ends as a file name does: "
    "`docs/release notes.md`; several separated by , ; <br> or ' and ', ' & ', ' + ', though "
    "not inside a parenthesised remark: `docs/x.md (new page, 2 sections)` is one).",
    SNAPSHOT_ID,
    FILE,
    LINE,
    _c("round", "int32", "Round the row belongs to (null before any Round line)."),
    _c("current", "bool", "The row belongs to the manifest's current (last) round."),
    _c("position", "int32", "1-based place of the destination in its cell."),
    _c("destination", "string", "The destination as written."),
    _c("destination_path", "string", "It as a repository-relative path; null when it is none."),
    _c(
        "destination_exists",
        "bool",
        "That path is a file or folder of the repository, or a pattern (`*`) matching a file.",
    ),
)

FRAGMENTS = _table(
    "fragments",
    "One row per file in fragments/.",
    SNAPSHOT_ID,
    FILE,
    _c(
        "line",
        "int32",
        "Always null: a fragment is a whole file (spec §6 gives every such table "
        "the file and the line).",
    ),
    _c("name", "string", "File name without extension."),
)

LINKS = _table(
    "links",
    "Links in the repository's other Markdown documents that resolve into this session's "
    "research or history folder.",
    SNAPSHOT_ID,
    _c("file", "string", "The linking document, relative to the repository root."),
    LINE,
    _c("kind", "string", "inline, image, reference, autolink or html."),
    _c(
        "target",
        "string",
        "The link target as the page's parser reads it, and findings quote it: a Markdown "
        "link's with character references decoded and what a URL may not hold percent-encoded "
        "(`<a b.md>` is `a%20b.md`), an HTML attribute's with its references decoded.",
    ),
    _c("resolved", "string", "The target resolved to a repository-relative path."),
)

PARSE_ISSUES = _table(
    "parse_issues",
    "What could not be read: one row per problem, with the field left null.",
    _c("snapshot_id", "string", "The snapshot; null for a problem with a root or archive."),
    _c("run_id", "string", "The run, for problems not tied to a snapshot; else null."),
    _c("file", "string", "The file (session-relative, or root-relative when no snapshot)."),
    LINE,
    _c("code", "string", "Stable issue code (see docs/errors.md)."),
    _c("message", "string", "What was wrong."),
    _c(
        "rule_id",
        "string",
        "The rule this issue fails by itself (its finding reads 'could not read: …'); null "
        "when it fails none, or when the rule fails on the row the line left instead (a fork "
        "heading with no ID is a forks row that BS-FORK-01 fails). docs/errors.md names the "
        "rules each code fails.",
    ),
)

RULE_RESULTS = _table(
    "rule_results",
    "Every rule for every checked snapshot (passes included), under one rule set: one row per "
    "snapshot, gate and rule (gates are cumulative: a session-gate rule has a row at each of "
    "the three gates, with the same status), one more per further finding of a failing rule. "
    "`WHERE gate = 'manifest'` is everything the manifest gate decides. The rules that compare "
    "snapshots over time add their findings per census point (series_findings).",
    SNAPSHOT_ID,
    _c("ruleset", "string", "Hash of the rule files and views the results were computed with."),
    _c("rule_id", "string", "Stable rule ID (BS-… from the schema, CENSUS-… the census's own)."),
    _c("gate", "string", "The gate this row decides: the rule's own gate or a later one."),
    _c(
        "rule_gate",
        "string",
        "The rule's own gate, where it is first evaluated (null in rows checked before "
        "rule_results had a row per gate: their gate is the rule's own).",
    ),
    _c("status", "string", "pass, fail, info or skipped."),
    _c("file", "string", "File of the finding, relative to the session folder (or repository)."),
    LINE,
    _c("message", "string", "The finding, or the reason a rule was skipped."),
    per_snapshot=False,
    writer="check",
)

SERIES_FINDINGS = _table(
    "series_findings",
    "Findings of the rules that compare a session's snapshots along its history (Status "
    "backward, a fork retitled or reused, a ledger entry removed or rewritten), frozen with "
    "the census point at which the later snapshot was first seen.",
    _c(
        "check_id",
        "string",
        "The check that found it; a point's findings are its latest check's "
        "(point_series_findings).",
    ),
    _c("point", "string", "The census point the finding belongs to."),
    _c("session_key", "string", "The session."),
    _c("root", "string", "The crawl root (absolute) of the session's series."),
    _c("snapshot_id", "string", "The later snapshot of the pair."),
    _c("rule_id", "string", "BS-STATE-01, BS-FORK-01 or BS-LEDGER-01."),
    _c("gate", "string", "The rule's own gate."),
    _c("file", "string", "File of the finding, relative to the session folder."),
    LINE,
    _c("message", "string", "The finding, naming both commits or runs."),
    per_snapshot=False,
    writer="check",
)

CHECKS = _table(
    "checks",
    "One row per census point checked; a point's results are final once this row exists.",
    _c("check_id", "string", "Check identifier (sortable, like a run id)."),
    _c("point", "string", "The census point checked."),
    _c("ruleset", "string", "The rule set its results were computed with."),
    _c("checked_at", "timestamp", "When (UTC)."),
    _c("tool_version", "string", "Version of brainstorm-census that checked it."),
    _c("snapshots_evaluated", "int64", "Snapshots newly evaluated by this check."),
    _c("series_findings", "int64", "Findings along the sessions' histories at this point."),
    _c(
        "lifetimes_frozen",
        "bool",
        "This check froze the point's fork lifetimes (lifetime_summaries, lifetime_curves, "
        "longest_open); a re-check keeps those it finds.",
    ),
    _c(
        "estimator",
        "string",
        "How that census estimated fork lifetimes (a hash); a later point copies or carries "
        "these lifetimes only when it is estimated the same way.",
    ),
    per_snapshot=False,
    writer="check",
)

# What check decided a frozen row with: the check, the point, and the point's rule set.
_DECIDED = (
    _c("check_id", "string", "The check that decided the point."),
    _c("point", "string", "The census point."),
    _c("ruleset", "string", "The rule set the point was checked with."),
)
RULE_COUNTS = _table(
    "rule_counts",
    "The counts behind each rule's rate at a census point, frozen when the point is checked "
    "(the rule_rates view reads them; a point checked before they existed is counted live).",
    *_DECIDED,
    _c("rule_id", "string", "The rule."),
    _c("evaluated", "int64", "Sessions at whose own gate the rule passed, failed or informed."),
    _c("failed", "int64", "Of those, the failing sessions."),
    _c("info", "int64", "Of those, the sessions with an info finding."),
    _c("skipped", "int64", "Sessions at whose own gate the rule was skipped."),
    per_snapshot=False,
    writer="check",
)

SESSION_VERDICTS = _table(
    "session_verdicts",
    "Each session's verdict at a census point (clean at its own gate, rules failing there), "
    "frozen when the point is checked (the sessions view reads them; a point checked before "
    "they existed is judged live).",
    *_DECIDED,
    _c("session_key", "string", "The session."),
    _c("root", "string", "The crawl root (absolute) of the session's series."),
    _c("clean", "bool", "No rule fails at the session's own gate."),
    _c("failing_rules", "int64", "Rules failing at its own gate."),
    per_snapshot=False,
    writer="check",
)

# The point a frozen statistic belongs to, and the check that froze it.
_FROZEN = (
    _c("check_id", "string", "The check that froze it."),
    _c("point", "string", "The census point."),
)
_LIFETIME_GROUP = (
    _c("unit", "string", "hours, or syncs (reconciled syncs)."),
    _c(
        "grp",
        "string",
        "overall; close_kind:resolved or close_kind:parked (cause-specific); raised_by:{kind}.",
    ),
)
LIFETIME_SUMMARIES = _table(
    "lifetime_summaries",
    "Each census point's fork-lifetime summaries (spec §7; docs/stats.md), frozen when the "
    "point is checked: one row per unit and group. stats and the report read them.",
    *_FROZEN,
    *_LIFETIME_GROUP,
    _c("forks", "int64", "Forks in the group."),
    _c("estimated", "int64", "Forks with a known lifetime (the Kaplan–Meier input)."),
    _c("closes", "int64", "Of those, closed (the event)."),
    _c("censored", "int64", "Of those, still open (or vanished): censored."),
    _c("competing", "int64", "Of those, closed the other way (cause-specific groups)."),
    _c("unknown", "int64", "Forks whose raise or close time is unknown."),
    _c("median", "double", "Kaplan–Meier median; null when not reached."),
    _c("median_lower", "double", "Lower end of its 95% interval (Brookmeyer–Crowley)."),
    _c("median_upper", "double", "Upper end; null when not reached."),
    _c("p25", "double", "First quartile of the lifetime."),
    _c("p75", "double", "Third quartile."),
    _c("open_1d", "double", "Share still open after a day (hours only)."),
    _c("open_7d", "double", "After a week (hours only)."),
    _c("open_30d", "double", "After thirty days (hours only)."),
    per_snapshot=False,
    writer="check",
)
LIFETIME_CURVES = _table(
    "lifetime_curves",
    "The Kaplan–Meier curve of each lifetime summary, thinned to at most 400 steps, frozen "
    "with it.",
    *_FROZEN,
    *_LIFETIME_GROUP,
    _c("time", "double", "Duration (hours or syncs)."),
    _c("at_risk", "int64", "Forks at risk just before it."),
    _c("events", "int64", "Closes at it."),
    _c("censored", "int64", "Forks censored at it."),
    _c("survival", "double", "Share still open after it."),
    _c("lower", "double", "Lower end of its 95% band (Greenwood, log-log)."),
    _c("upper", "double", "Upper end."),
    per_snapshot=False,
    writer="check",
)
LONGEST_OPEN = _table(
    "longest_open",
    "Each census point's longest-open forks (the report lists them), ranked when the point "
    "is checked.",
    *_FROZEN,
    _c("rank", "int64", "1 = open the longest."),
    _c("session_key", "string", "The session."),
    _c("root", "string", "The crawl root of its series."),
    _c("fork_id", "string", "The fork (F#)."),
    _c("hours", "double", "Hours open so far at the point; null when its raise is unknown."),
    per_snapshot=False,
    writer="check",
)

LIFETIME_FORKS = _table(
    "lifetime_forks",
    "The last checked census point's forks with their lifetimes, and one row per session: "
    "what the next check carries forward for the sessions whose history did not change since "
    "(docs/stats.md). Each check that freezes lifetimes replaces it; a prune empties it, and "
    "the next check then computes every lifetime again.",
    *_FROZEN,
    _c("session_key", "string", "The session."),
    _c("root", "string", "The crawl root of its series."),
    _c("fork_id", "string", "The fork (F#); null on the one row every session of the point has."),
    _c("hours", "double", "Raise to close (or censoring) in hours; null when unknown."),
    _c("syncs", "int64", "Reconciled syncs over that span; null when unknown."),
    _c("close_kind", "string", "resolved or parked; null when censored."),
    _c("raised_by", "string", "Raised by kind; null when unknown."),
    _c("still_open", "bool", "Open at the point (censored, not vanished)."),
    _c(
        "last_at",
        "timestamp",
        "On the session's row: its latest observation's time so far (a commit's no later than "
        "the run that saw it).",
    ),
    _c(
        "last_snapshot",
        "string",
        "On the session's row: the snapshot seen then (null when several were).",
    ),
    per_snapshot=False,
    writer="check",
)

# Views in census.duckdb (queries/views/*.sql and the generated vocabulary) that users query by
# name: name → (doc, columns). A test checks every view's columns against this list.
_POINT = ("point", "The census point (docs/time-model.md).")
_POSITION = ("position", "The point's place in time order (1 = the oldest).")
_SESSION = [
    ("session_key", "The session (stable across runs and the move to history)."),
    ("root", "The crawl root (absolute) the session was seen under."),
    ("repo", "Repository identity."),
    ("repo_path", "Repository root relative to the crawl root."),
    ("path", "Session folder relative to its repository root."),
    ("topic", "Topic slug."),
]
_RATE = [
    ("evaluated", "Sessions with pass, fail or info."),
    ("failed", "Sessions with fail."),
    ("info", "Sessions with info."),
    ("skipped", "Sessions with skipped (outside the denominator)."),
    ("rate", "failed / evaluated; null when nothing was evaluated."),
    ("rate_lo", "Lower end of the 95% Wilson interval."),
    ("rate_hi", "Upper end of the 95% Wilson interval."),
]
_CLEAN = ("clean", "No rule fails at its own gate (null until the point is checked).")
_FAILING_RULES = ("failing_rules", "Rules failing at its own gate.")
# A node of a session's history: the columns of history_nodes and working_nodes.
_HISTORY_NODE = [
    ("session_key", "The session."),
    ("root", "The crawl root (a series is a session under one root)."),
    ("snapshot_id", "Its content."),
    ("commit", "The commit; null for a working tree."),
    ("parents", "Nearest earlier commits that changed the session (git ancestry)."),
    ("observed_at", "Commit time, or the run's start for a working tree."),
    _POINT,
    _POSITION,
    ("run_id", "The run that saw it."),
    ("repo", "Repository identity."),
    ("repo_path", "Repository root relative to the crawl root."),
    ("path", "Session folder relative to its repository root."),
    ("topic", "Topic slug."),
    ("location", "research or history."),
    ("seen_in", "'commit <sha>' or 'run <run id>', as findings name it."),
]
VIEWS: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "rules": (
        "Every rule, from the files in queries/rules/ (one per rule ID).",
        [
            ("rule_id", "The rule."),
            ("gate", "Its own gate: it is evaluated there and at every later gate."),
            ("description", "What it checks."),
            ("across_history", "It also compares snapshots along history (queries/series/)."),
        ],
    ),
    "gates": (
        "The gates in order (pipeline/vocabulary.py).",
        [("gate", "session, manifest or move."), ("gate_rank", "1, 2, 3.")],
    ),
    "stages": (
        "The stages in order, with the gate each must pass (pipeline/vocabulary.py).",
        [
            ("stage", "open, converging, applied or harvested."),
            ("stage_rank", "1 to 4."),
            ("own_gate", "The gate a session at this stage is counted at."),
        ],
    ),
    "run_points": (
        "Each committed run with its census point.",
        [
            ("run_id", "The run."),
            _POINT,
            ("started_at", "When the run started."),
            ("finished_at", "When it committed."),
            ("labels", "Its labels."),
            ("roots", "Its roots, as given."),
        ],
    ),
    "points": (
        "One row per census point: the runs crawled with one --point (a night's shards), or a "
        "run of its own; checked once `census check` has frozen its results.",
        [
            _POINT,
            _POSITION,
            ("started_at", "Its first run's start."),
            ("finished_at", "Its last run's commit."),
            ("runs", "Its run ids, in start order."),
            ("labels", "Its first run's labels (a shard's own label left out)."),
            ("checked", "Its results are decided and final."),
            ("ruleset", "The rule set it was checked with."),
            ("checked_at", "When it was checked."),
            ("check_id", "The check that decided it (its latest)."),
            ("check_series", "The history findings that check found at it."),
        ],
    ),
    "working_nodes": (
        "A session's working tree at each census point: its latest observation in the "
        "point's runs (the history_nodes that are not commits).",
        _HISTORY_NODE,
    ),
    "history_nodes": (
        "A session's history: each commit that changed it (with --git-history), once, at the "
        "point whose crawl first saw it; and its working tree at each point.",
        _HISTORY_NODE,
    ),
    "history_pairs": (
        "The pairs along every session's history (before → after along git ancestry and "
        "working-tree succession, never by date), at the point of the later node; identical "
        "pairs left out. A point's check compares history_pairs_in(position - 1, position), "
        "which also leaves out a step shown again by an amended, rebased or cherry-picked copy "
        "of a commit an earlier point saw; this view, which no earlier point bounds, lists it.",
        [
            ("pair_id", "Row number."),
            ("session_key", "The session."),
            ("root", "Its crawl root."),
            _POINT,
            ("before_id", "The earlier snapshot."),
            ("before_seen", "Where it was seen."),
            ("after_id", "The later snapshot."),
            ("after_seen", "Where it was seen."),
            ("before_commit", "The earlier node's commit (null for a working tree)."),
        ],
    ),
    "point_sessions": (
        "The sessions of each census point: those whose working tree its crawl saw, each at its "
        "latest observation in the point, and those gone by then whose history at the point "
        "holds a finding along history, at their last commit in the point's runs.",
        [
            _POINT,
            _POSITION,
            *_SESSION,
            ("location", "research or history."),
            ("snapshot_id", "Its content at the point."),
            ("run_id", "The run that saw it."),
            ("observed_at", "When."),
            ("stage", "open, converging, applied or harvested."),
            ("gate", "Its own gate (the stage's)."),
        ],
    ),
    "point_series_findings": (
        "The history findings of each checked census point, as its rates count them: those of "
        "the point's latest check (series_findings keeps every check's).",
        [
            _POINT,
            ("session_key", "The session."),
            ("root", "The crawl root of its series."),
            ("snapshot_id", "The later snapshot of the pair."),
            ("rule_id", "BS-STATE-01, BS-FORK-01 or BS-LEDGER-01."),
            ("gate", "The rule's own gate."),
            ("file", "File of the finding, relative to the session folder."),
            ("line", "1-based line, where there is one."),
            ("message", "The finding, naming both commits or runs."),
        ],
    ),
    "own_gate_results": (
        "rule_results at each rule's own gate: one row per snapshot, rule set and rule, one "
        "more per further finding of a failing rule (statuses reads it).",
        [
            ("snapshot_id", "The snapshot."),
            ("ruleset", "Hash of the rule files and views the results were computed with."),
            ("rule_id", "The rule."),
            ("gate", "The rule's own gate."),
            ("status", "pass, fail, info or skipped."),
            ("file", "File of the finding, relative to the session folder (or repository)."),
            ("line", "1-based line in that file."),
            ("message", "The finding, or the reason a rule was skipped."),
        ],
    ),
    "statuses": (
        "One status per checked census point, session and rule: the rule's result on the "
        "session's snapshot, failed when the rule also found something along its history at "
        "that point.",
        [
            _POINT,
            _POSITION,
            *_SESSION,
            ("stage", "The session's stage."),
            ("snapshot_id", "Its snapshot."),
            ("rule_id", "The rule."),
            ("gate", "The rule's own gate."),
            ("status", "pass, fail, info or skipped."),
            ("own", "The rule is evaluated at the session's own gate (what rates count)."),
            ("findings", "Its findings (on the snapshot and along history)."),
        ],
    ),
    "findings": (
        "One row per finding at the session's own gate, per checked census point; the macro "
        "findings_at(gate) gives every session's findings at that gate (check --gate --sarif).",
        [
            _POINT,
            _POSITION,
            *_SESSION,
            ("stage", "The session's stage."),
            ("snapshot_id", "The snapshot the finding is on."),
            ("rule_id", "The rule."),
            ("gate", "The rule's own gate."),
            ("status", "fail or info."),
            ("file", "File of the finding (session-relative; '/…' is repository-relative)."),
            ("line", "Line, where there is one."),
            ("message", "What is wrong."),
            ("source", "snapshot (its content) or history (compared along its history)."),
        ],
    ),
    "sessions": (
        "One row per census point and session: where it stands and whether it is clean at its "
        "own gate. The table macro matched_roots(earlier, later) matches two points' sessions "
        "as compare matches its arms (by session_key where each point holds the key once, else "
        "under its root): session_key, root_before, root; the report's 'What changed' reads it.",
        [
            _POINT,
            _POSITION,
            *_SESSION,
            ("location", "research or history."),
            ("stage", "open, converging, applied or harvested."),
            ("gate", "Its own gate."),
            ("snapshot_id", "Its snapshot."),
            ("run_id", "The run that saw it."),
            ("observed_at", "When."),
            ("status", "state.md Status."),
            ("started_at", "state.md Started."),
            ("harvested_at", "When it was first seen in docs/history/ (commit time with history)."),
            ("content_time", "Latest of Last compose, newest turn and newest sync line."),
            ("forks_open", "Forks marked open, or whose marker could not be read."),
            ("forks_parked", "Forks marked parked."),
            ("ledger_entries", "Ledger entries."),
            ("turns", "Capture turns."),
            ("syncs", "Sync IDs."),
            _CLEAN,
            _FAILING_RULES,
        ],
    ),
    "status_tallies": (
        "The statuses of each checked census point tallied two ways in one pass: per rule "
        "(session_key null) the counts a rate is made of (rule_counts_live), per session "
        "(rule_id null) its verdict (session_verdicts_live).",
        [
            _POINT,
            ("rule_id", "The rule (a rule's tally); null in a session's."),
            ("session_key", "The session (a session's tally); null in a rule's."),
            ("root", "The crawl root of the session; null in a rule's tally."),
            ("own_sessions", "Rows at the session's own gate (sessions, or rules of one)."),
            ("evaluated", "Of them with pass, fail or info."),
            ("failed", "Of them with fail."),
            ("info", "Of them with info."),
            ("skipped", "Of them with skipped."),
            ("clean", "Nothing of them fails (null when there is none)."),
        ],
    ),
    "session_verdicts_live": (
        "A session's verdict, defined once: per checked census point and session, clean when "
        "no rule fails at its own gate, and the number of rules failing there, judged now from "
        "statuses (check freezes the same verdicts in the session_verdicts table, which the "
        "sessions view reads).",
        [_POINT, *_SESSION[:2], _CLEAN, _FAILING_RULES],
    ),
    "session_verdicts_frozen": (
        "The verdicts check froze with each point: those of the check that decided it with its "
        "current rule set (session_verdicts).",
        [_POINT, *_SESSION[:2], _CLEAN, _FAILING_RULES],
    ),
    "points_judged_live": (
        "Checked points with no frozen verdicts (checked by a census older than "
        "session_verdicts): the sessions view judges them from their statuses.",
        [_POINT, _POSITION],
    ),
    "rule_counts_live": (
        "How a rate is counted, defined once: per checked census point and rule, its sessions "
        "at whose own gate the rule is evaluated, by status, counted now from statuses (check "
        "freezes the same counts in the rule_counts table, which rule_rates reads).",
        [_POINT, ("rule_id", "The rule."), *_RATE[:4]],
    ),
    "rule_counts_frozen": (
        "The rule counts check froze with each point: those of the check that decided it with "
        "its current rule set (rule_counts).",
        [_POINT, ("rule_id", "The rule."), *_RATE[:4]],
    ),
    "points_counted_live": (
        "Checked points with no frozen counts (checked by a census older than rule_counts): "
        "rule_rates counts them from their statuses.",
        [_POINT, _POSITION],
    ),
    "rule_rates": (
        "The rule-failure rate, defined once: per checked census point and rule, over the "
        "point's sessions at whose own gate the rule is evaluated (spec §7), from the counts "
        "check froze with the point.",
        [
            _POINT,
            _POSITION,
            ("rule_id", "The rule."),
            ("gate", "The rule's own gate."),
            *_RATE,
            (
                "run_id",
                "The point's run (spec §6's key); its last run when it holds several (a night's "
                "shards: points.runs lists them).",
            ),
        ],
    ),
    "rule_rates_at_gate": (
        "A separate, explicitly named metric: every session of a point evaluated at one gate, "
        "whatever its own stage.",
        [_POINT, ("gate", "The gate asked."), ("rule_id", "The rule."), *_RATE],
    ),
    "sync_pairs": (
        "One row per snapshot and sync ID of ops/sync-log.md: the dispatch paired with its "
        "result (the first of each in file order when a sync ID has several). The table macro "
        "sync_pairs_of(snapshot_ids) gives the same for the given snapshots only (NULL: every "
        "one).",
        [
            ("snapshot_id", "The snapshot."),
            ("sync_id", "S# ID."),
            ("gate", "Dispatch gate; null when there is no dispatch line."),
            ("scope", "Dispatch scope."),
            ("dispatched_at", "Dispatch time (UTC); null when missing or unparseable."),
            (
                "result",
                "reconciled or failed; null while in flight (no result line), or when the result "
                "line's outcome could not be read (result_line set: a bad-sync-line issue).",
            ),
            ("result_at", "Result time (UTC)."),
            (
                "latency_s",
                "result_at minus dispatched_at, in seconds; null unless both parse and the result "
                "comes after the dispatch, in file order and in time (never negative).",
            ),
            ("edits", "'N edits' from a reconciled summary."),
            ("new_forks", "'N new forks' from a reconciled summary."),
            ("open_forks", "'N open' from a reconciled summary."),
            ("sync_num", "The number of the ID."),
            ("summary", "Result summary text."),
            ("dispatch_line", "Line of the dispatch; null for a result with no dispatch."),
            ("result_line", "Line of the result; null while in flight."),
            ("dispatches", "Dispatch lines with this ID (more than 1 fails BS-SYNC-01)."),
            ("results", "Result lines with this ID (more than 1 fails BS-SYNC-01)."),
            (
                "newest",
                "The ID's dispatch is the last dispatch line in the file (the one allowed "
                "in flight).",
            ),
            (
                "failed_results",
                "Result lines with this ID that read failed (any of them, not only the "
                "first: sync health counts the sync failed).",
            ),
        ],
    ),
    "fork_lifetimes": (
        "One row per fork (session_key under its root, fork_id) over every committed run's "
        "observations (spec §7; the header of queries/views/60_fork_lifetimes.sql gives every "
        "rule). The table macros fork_lifetimes_for(run_ids) and fork_lifetimes_at(point) give "
        "the same over the given runs only, or for a census point's sessions over its history "
        "(the forks stats counted for it when check froze them in lifetime_summaries; after "
        "a prune it reads only the history left, where stats keeps the frozen figures); "
        "fork_lifetimes_of(run_ids, session_keys) over the given runs for some sessions only "
        "(NULL: every run, every session).",
        [
            ("session_key", "The session."),
            ("root", "The crawl root of its series."),
            ("fork_id", "F# ID (from forks.md, or only from a ledger Resolves)."),
            (
                "raised_by",
                "Raised by kind: user, twin, probe, harvest or other; null if never "
                "listed with one.",
            ),
            (
                "raised_at",
                "Dispatch time of the twin's S# (from any snapshot's sync log), else "
                "content_time of the first snapshot listing it open; null when unknown.",
            ),
            (
                "closed_at",
                "content_time of the first snapshot in which a ledger entry resolves "
                "it or it is parked; null while open.",
            ),
            ("close_kind", "resolved or parked; null when not closed."),
            ("censored", "Not closed: open in the session's latest snapshot (or vanished)."),
            (
                "hours",
                "Hours from raise to close or censoring; null when the raise time is "
                "unknown (counted, not estimated).",
            ),
            (
                "syncs",
                "Reconciled syncs (no failed result, as sync health counts them) "
                "dispatched after the raise and reconciled by the close "
                "or censoring, from that snapshot's sync log or (a commit: git never holds "
                "ops/) the first later one's; null when hours is, or no such log exists.",
            ),
            (
                "raised_by_sync",
                "S# named by 'twin (S#)': of several, the one whose dispatch raised it "
                "(the earliest dispatched).",
            ),
            ("raise_source", "sync (a logged dispatch), first_open, or null (unknown)."),
            ("censored_at", "content_time at which a censored fork is censored."),
            (
                "vanished",
                "Left forks.md without a resolving ledger entry; censored when last listed.",
            ),
            ("title", "The fork's latest title."),
            ("repo", "Repository identity of the session."),
            ("topic", "Topic slug."),
            ("snapshots", "Distinct consecutive snapshots of the session in time order."),
            ("first_seen_at", "content_time of the first snapshot that names the fork."),
            ("first_run_id", "Run of that first snapshot."),
            ("end_run_id", "Run of the snapshot that closes or censors it."),
        ],
    ),
}

# Tables the crawl fills from parsed content, in write order.
CONTENT_TABLES = [t for t in TABLES.values() if t.per_snapshot]

_ARROW = {
    "string": "string",
    "int32": "int32",
    "int64": "int64",
    "double": "float64",
    "bool": "bool_",
}
_DUCKDB = {
    "string": "VARCHAR",
    "int32": "INTEGER",
    "int64": "BIGINT",
    "double": "DOUBLE",
    "bool": "BOOLEAN",
    "timestamp": "TIMESTAMPTZ",
    "list<string>": "VARCHAR[]",
    "list<int32>": "INTEGER[]",
    "map<string,string>": "MAP(VARCHAR, VARCHAR)",
}


def arrow_type(type_: str) -> Any:
    import pyarrow as pa

    if type_ == "timestamp":
        return pa.timestamp("us", tz="UTC")
    if type_ == "list<string>":
        return pa.list_(pa.string())
    if type_ == "list<int32>":
        return pa.list_(pa.int32())
    if type_ == "map<string,string>":
        return pa.map_(pa.string(), pa.string())
    return getattr(pa, _ARROW[type_])()


def blank_row(table: Table, *given: str) -> dict[str, Any]:
    """A row of `table` with every column None except snapshot_id and the `given` ones."""
    skip = {"snapshot_id", *given}
    return dict.fromkeys(n for n in table.names if n not in skip)


def arrow_table(table: Table, rows: list[dict[str, Any]]) -> Any:
    """Row dicts → an Arrow table, column by column (three times faster than from_pylist)."""
    import pyarrow as pa

    columns = {name: [row.get(name) for row in rows] for name in table.names}
    return pa.table(columns, schema=arrow_schema(table))


def arrow_schema(table: Table) -> Any:
    import pyarrow as pa

    return pa.schema([pa.field(c.name, arrow_type(c.type)) for c in table.columns])


def duckdb_type(type_: str) -> str:
    return _DUCKDB[type_]


def duckdb_ddl(table: Table) -> str:
    cols = ", ".join(f'"{c.name}" {_DUCKDB[c.type]}' for c in table.columns)
    return f'CREATE TABLE "{table.name}" ({cols})'


def tables_markdown() -> str:
    """The table reference in docs/tables.md, generated from the definitions above."""
    out = [
        "# Tables",
        "",
        "Generated from `pipeline/schema.py` by `python -m pipeline.schema > docs/tables.md`;",
        "a test fails when this file and the schema disagree.",
        "Every table is a Parquet dataset under `OUT/tables/{table}/` and a view of the same",
        "name in `OUT/census.duckdb`. Timestamps are UTC.",
        "",
    ]
    for table in TABLES.values():
        out += [f"## `{table.name}`", "", table.doc, "", "| column | type | meaning |"]
        out += ["|---|---|---|"]
        out += [f"| `{c.name}` | {c.type} | {c.doc} |" for c in table.columns]
        out.append("")
    out += ["# Views", ""]
    for name, (doc, columns) in VIEWS.items():
        out += [f"## `{name}`", "", doc, "", "| column | meaning |", "|---|---|"]
        out += [f"| `{col}` | {meaning} |" for col, meaning in columns]
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    print(tables_markdown(), end="")
