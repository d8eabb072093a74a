"""SARIF 2.1.0 for code-scanning tools: one result per finding, stable ruleIds."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pipeline import __version__
from pipeline.rules import load_rules

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def finding_uri(repo_path: str, session_path: str, file: str | None) -> str:
    """The finding's file relative to the crawl root (a '/…' file is repository-relative)."""
    repo = "" if repo_path in ("", ".") else repo_path + "/"
    if file and file.startswith("/"):
        return repo + file.lstrip("/")
    return f"{repo}{session_path}/{file or ''}".rstrip("/")


def sarif_log(findings: Iterable[dict[str, Any]]) -> dict[str, Any]:
    rules = load_rules()
    index = {r.rule_id: i for i, r in enumerate(rules)}
    results = []
    for f in findings:
        region = {"startLine": int(f["line"])} if f.get("line") else None
        location: dict[str, Any] = {
            "artifactLocation": {"uri": finding_uri(f["repo_path"], f["path"], f.get("file"))}
        }
        if region:
            location["region"] = region
        result: dict[str, Any] = {
            "ruleId": f["rule_id"],
            "ruleIndex": index[f["rule_id"]],
            "level": "error" if f["status"] == "fail" else "note",
            "message": {"text": f["message"]},
            "locations": [{"physicalLocation": location}],
            "properties": {"gate": f["gate"], "session_key": f.get("session_key")},
        }
        if "baselineState" in f:
            result["baselineState"] = f["baselineState"]
        results.append(result)
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "brainstorm-census",
                        "version": __version__,
                        "rules": [
                            {
                                "id": r.rule_id,
                                "name": r.rule_id,
                                "shortDescription": {"text": r.description},
                                "fullDescription": {"text": r.description},
                                "properties": {"gate": r.gate},
                            }
                            for r in rules
                        ],
                    }
                },
                "results": results,
            }
        ],
    }


def write_sarif(path: str, findings: Iterable[dict[str, Any]]) -> None:
    Path(path).write_text(json.dumps(sarif_log(findings), indent=2) + "\n")
