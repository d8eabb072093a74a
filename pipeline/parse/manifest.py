"""ops/manifest.md: rounds, status, the routing table and the uselessness test."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from typing import Any

from pipeline.parse.lexical import MAX_LINE_CHARS, field, int32
from pipeline.parse.records import Records

FILE = "ops/manifest.md"
# Values end at their last non-space (not lazily before `\s*$`, which is quadratic).
_ROUND_RE = re.compile(r"^(?:[-*]\s+)?Round:\s*((?:.*\S)?)\s*$")
_STATUS_RE = re.compile(r"^(?:[-*]\s+)?Status:\s*((?:.*\S)?)\s*$")
_CELL_SPLIT_RE = re.compile(r"(?<!\\)\|")
_SEPARATOR_RE = re.compile(r"^:?-{1,}:?$")
_HEADER = ["#", "what", "source", "destination", "action"]
_USELESS_FIELDS = {
    "Result": "useless_result",
    "Cold-reader allowed paths": "cold_reader_paths",
    "Gaps": "gaps",
}


def parse_manifest(
    lines: list[str], rec: Records, exists: Callable[[str], bool] = lambda _: False
) -> None:
    current: dict[str, Any] = _new_round(None, None)
    rounds = 0
    section = ""
    rows: list[dict[str, Any]] = []
    for number, raw in enumerate(lines, 1):
        if len(raw) > MAX_LINE_CHARS:
            continue
        line = raw.strip()
        if line.startswith("#") and not line.startswith("#|"):
            section = line.lstrip("#").strip()
            continue
        round_m = _ROUND_RE.match(line)
        if round_m:
            rounds += 1
            value = round_m[1]
            num = int32(value) if value.isdecimal() else None
            if num is None:
                rec.issue(FILE, number, "bad-round", f"Round '{value}' is not a whole number")
            current = _new_round(num, number)
            section = ""
            continue
        status_m = _STATUS_RE.match(line)
        if status_m and current["status"] is None:
            current["status"], current["status_line"] = status_m[1], number
            continue
        if line.startswith("|"):
            _table_line(line, number, current, rows)
            continue
        if section == "Uselessness test":
            parsed = field(raw)
            if parsed and parsed[0] in _USELESS_FIELDS:
                key = _USELESS_FIELDS[parsed[0]]
                current[key] = parsed[1]
                if key == "useless_result":
                    current["useless_result_line"] = number
    last_round = current["round_key"]
    for row in rows:
        row["current"] = row.pop("round_key") is last_round
        row["destination_exists"] = bool(row["destination_path"]) and exists(
            row["destination_path"]
        )
        rec.add("manifest_rows", file=FILE, **row)
    rec.add(
        "manifests",
        file=FILE,
        line=current["round_line"] or 1,
        round=current["round"],
        rounds=rounds,
        round_line=current["round_line"],
        status=current["status"],
        status_line=current["status_line"],
        has_table=current["has_table"],
        table_rows=sum(1 for row in rows if row["current"]),
        useless_result=current["useless_result"],
        useless_result_line=current["useless_result_line"],
        cold_reader_paths=current["cold_reader_paths"],
        gaps=current["gaps"],
    )


def _new_round(num: int | None, line: int | None) -> dict[str, Any]:
    state: dict[str, Any] = dict.fromkeys(
        (
            "status",
            "status_line",
            "useless_result",
            "useless_result_line",
            "cold_reader_paths",
            "gaps",
        ),
    )
    state.update(round=num, round_line=line, has_table=False, round_key=object())
    return state


def _table_line(
    line: str, number: int, current: dict[str, Any], rows: list[dict[str, Any]]
) -> None:
    body = line[1:-1] if line.endswith("|") and not line.endswith("\\|") else line[1:]
    cells = [cell.strip().replace("\\|", "|") for cell in _CELL_SPLIT_RE.split(body)]
    # Extra columns after the five the schema names are allowed.
    if [cell.lower() for cell in cells[:5]] == _HEADER:
        current["has_table"] = True
        return
    if all(_SEPARATOR_RE.match(cell) for cell in cells if cell) and any(cells):
        return
    cells = (cells + [""] * 5)[:5]
    rows.append(
        {
            "line": number,
            "round": current["round"],
            "round_key": current["round_key"],
            "num": cells[0],
            "what": cells[1],
            "source": cells[2],
            "destination": cells[3],
            "action": cells[4],
            "destination_path": destination_path(cells[3]),
        }
    )


def destination_path(cell: str) -> str | None:
    """A Destination cell as a repository-relative path, or None when it is not one."""
    text = cell.strip().strip("`").strip()
    text = text.split("#", 1)[0].strip()
    if not text or ":" in text:
        return None
    text = posixpath.normpath(text.lstrip("/"))
    return None if text.startswith("..") or text == "." else text
