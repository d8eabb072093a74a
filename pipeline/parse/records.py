"""The rows one snapshot produces, table by table, before they become Arrow batches."""

from __future__ import annotations

from collections import defaultdict
from typing import Any


class Records:
    """Rows for one snapshot; every row carries the snapshot id."""

    def __init__(self, snapshot_id: str) -> None:
        self.snapshot_id = snapshot_id
        self.snapshot: dict[str, Any] = {"snapshot_id": snapshot_id}
        self.rows: defaultdict[str, list[dict[str, Any]]] = defaultdict(list)

    def add(self, table: str, **row: Any) -> dict[str, Any]:
        row["snapshot_id"] = self.snapshot_id
        self.rows[table].append(row)
        return row

    def issue(
        self, file: str, line: int | None, code: str, message: str, rule_id: str | None = None
    ) -> None:
        """A parse issue; `rule_id` names the rule that fails because the line could not
        be read (spec §3.1, fail closed), None when no rule needs it."""
        self.rows["parse_issues"].append(
            {
                "file": file,
                "line": line,
                "code": code,
                "message": message,
                "run_id": None,
                "rule_id": rule_id,
                "snapshot_id": self.snapshot_id,
            }
        )

    def of(self, table: str) -> list[dict[str, Any]]:
        return self.rows.get(table, [])
