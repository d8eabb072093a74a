"""ops/manifest.md: rounds, status, the routing table and the uselessness test."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from typing import Any

from pipeline.parse.blocks import Heading, Table, parse
from pipeline.parse.lexical import bare, token
from pipeline.parse.reading import fields, number, section
from pipeline.parse.records import Records

FILE = "ops/manifest.md"
_FIELDS = {
    "round": "round",
    "status": "status",
    "result": "useless_result",
    "cold-reader allowed paths": "cold_reader_paths",
    "gaps": "gaps",
}
_USELESS = ("useless_result", "cold_reader_paths", "gaps")
_COLUMNS = ("#", "what", "source", "destination", "action")
_ROUND_RE = re.compile(r"(\d+)(?![\w.])")
_LINK_RE = re.compile(r"!?\[[^\]]*+\]\(\s*+<?([^)>\s]*+)>?[^)]*+\)")
_SPLIT_RE = re.compile(r"<br\s*/?>|[,;]|\s+and\s+", re.I)


def parse_manifest(
    lines: list[str], rec: Records, exists: Callable[[str], bool] = lambda _: False
) -> None:
    current = _new_round(None, None)
    rounds = 0
    useless = 0  # the uselessness test section's heading level; 0 outside it
    rows: list[dict[str, Any]] = []
    for block in parse(lines).blocks:
        if isinstance(block, Heading):
            if useless and block.level > useless:
                continue
            useless = block.level if section(block.text, ("uselessness test",)) else 0
            continue
        if isinstance(block, Table):
            _table(block, current, rows)
            continue
        for key, value, line in fields(block, _FIELDS):
            if key == "round":
                rounds += 1
                current = _new_round(_round(value, line, rec), line)
                useless = 0
            elif key == "status":
                if current["status"] is None:
                    current["status"] = token(value, ("proposed", "approved", "applied"))
                    current["status"] = current["status"] or bare(value)
                    current["status_line"] = line
            elif useless and key == "useless_result":
                current[key] = token(value, ("pass", "fail")) or bare(value)
                current["useless_result_line"] = line
            elif useless:
                current[key] = value
    _write(rec, current, rounds, rows, exists)


def _round(value: str, line: int, rec: Records) -> int | None:
    m = _ROUND_RE.match(bare(value))
    if m is None:
        rec.issue(FILE, line, "bad-round", f"Round '{value[:80]}' is not a whole number")
        return None
    return number(rec, FILE, line, m[1], "round")


def _write(
    rec: Records,
    current: dict[str, Any],
    rounds: int,
    rows: list[dict[str, Any]],
    exists: Callable[[str], bool],
) -> None:
    last_round = current["round_key"]
    for row in rows:
        row["current"] = row.pop("round_key") is last_round
        paths = row.pop("paths")
        for position, (written, path) in enumerate(paths, 1):
            rec.add(
                "manifest_destinations",
                file=FILE,
                line=row["line"],
                round=row["round"],
                current=row["current"],
                position=position,
                destination=written,
                destination_path=path,
                destination_exists=path is not None and exists(path),
            )
        first: str | None = next((p for _, p in paths if p), None)
        row["destination_path"] = first
        row["destination_exists"] = first is not None and exists(first)
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
    state: dict[str, Any] = dict.fromkeys(("status", "status_line", "useless_result_line"))
    state.update(dict.fromkeys(_USELESS))
    state.update(round=num, round_line=line, has_table=False, round_key=object())
    return state


def _table(table: Table, current: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    """The rows of a routing table: one whose header names the five columns (any case,
    any order, emphasis dropped; more columns are allowed)."""
    names = [bare(cell).lower() for cell in table.header]
    if not all(name in names for name in _COLUMNS):
        return
    where = [names.index(name) for name in _COLUMNS]
    current["has_table"] = True
    for line, cells in table.rows:
        num, what, source, destination, action = (cells[i] if i < len(cells) else "" for i in where)
        rows.append(
            {
                "line": line,
                "round": current["round"],
                "round_key": current["round_key"],
                "num": num,
                "what": what,
                "source": source,
                "destination": destination,
                "action": action,
                "paths": destinations(destination),
            }
        )


def destinations(cell: str) -> list[tuple[str, str | None]]:
    """Each destination a Destination cell names, as written and as a repository-relative
    path (None when it is not one): a Markdown link's target, a path followed by
    commentary, several separated by commas, semicolons, `<br>` or ` and `."""
    text = _LINK_RE.sub(lambda m: f" {m[1]} ", cell) if "](" in cell else cell
    found = []
    for piece in _SPLIT_RE.split(text):
        written = piece.strip()
        if written:
            found.append((written, destination_path(_first_path(written))))
    return found


def _first_path(text: str) -> str:
    if text.startswith("`"):
        end = text.find("`", 1)
        return text[1:end] if end > 0 else text[1:]
    return text.split()[0].strip("`*_")


def destination_path(cell: str) -> str | None:
    """A destination as a repository-relative path, or None when it is not one."""
    text = cell.strip().strip("`").strip()
    text = text.split("#", 1)[0].strip()
    if not text or ":" in text:
        return None
    text = posixpath.normpath(text.lstrip("/"))
    return None if text.startswith("..") or text == "." else text
