"""The rows one snapshot produces, table by table, before they become Arrow batches."""

from __future__ import annotations

from typing import Any


class Records:
    """Rows for one snapshot; every row carries the snapshot id."""

    def __init__(self, snapshot_id: str) -> None:
        self.snapshot_id = snapshot_id
        self.snapshot: dict[str, Any] = {"snapshot_id": snapshot_id}
        self.rows: dict[str, list[dict[str, Any]]] = {}

    def add(self, table: str, **row: Any) -> dict[str, Any]:
        row["snapshot_id"] = self.snapshot_id
        self.rows.setdefault(table, []).append(row)
        return row

    def issue(self, file: str, line: int | None, code: str, message: str) -> None:
        self.add("parse_issues", file=file, line=line, code=code, message=message, run_id=None)

    def of(self, table: str) -> list[dict[str, Any]]:
        return self.rows.get(table, [])
