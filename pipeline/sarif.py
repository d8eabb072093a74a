"""SARIF 2.1.0 for code-scanning tools: one result per finding, stable ruleIds.

Each finding's file is named relative to its repository root, and the run's
originalUriBaseIds say where that root is (`%SRCROOT%`, or `%SRCROOT1%`, `%SRCROOT2%`, … when
the findings span several repositories). Code scanning reads such a URI as relative to the
checkout, which is the repository root when the census runs in it. Every file written here
validates against the OASIS SARIF 2.1.0 schema (tests/test_sarif_schema.py).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from pipeline import __version__
from pipeline.output import written
from pipeline.rules import load_rules

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def finding_uri(session_path: str, file: str | None) -> str:
    """The finding's file relative to its repository root, as a URI reference (a '/…' file
    is repository-relative already); bytes that are not UTF-8 are kept, percent-encoded."""
    if file and file.startswith("/"):
        relative = file.lstrip("/")
    else:
        relative = f"{session_path}/{file or ''}".strip("/")
    return quote(os.fsencode(relative))


def repository_root(finding: dict[str, Any]) -> str | None:
    """The absolute repository root of a finding: its crawl root joined with its repo_path."""
    root = finding.get("root")
    if not root:
        return None
    repo = finding.get("repo_path") or ""
    return root if repo in ("", ".") else f"{root.rstrip('/')}/{repo}"


def _base_uri(root: str) -> str:
    uri = Path(root).as_uri() if os.path.isabs(root) else quote(os.fsencode(root))
    return uri if uri.endswith("/") else uri + "/"


def _bases(findings: list[dict[str, Any]]) -> dict[str, tuple[str, str]]:
    """Repository root → (base id, what it is), one per repository the findings name."""
    roots: dict[str, str] = {}
    for f in findings:
        root = repository_root(f)
        if root is not None:
            name = str(f.get("repo") or root)
            roots.setdefault(root, os.fsencode(name).decode("utf-8", "replace"))
    if len(roots) == 1:
        return {root: ("%SRCROOT%", name) for root, name in roots.items()}
    ordered = sorted(roots)
    return {root: (f"%SRCROOT{i}%", roots[root]) for i, root in enumerate(ordered, 1)}


def _result(f: dict[str, Any], index: dict[str, int], bases: dict[str, Any]) -> dict[str, Any]:
    artifact: dict[str, Any] = {"uri": finding_uri(f["path"], f.get("file"))}
    root = repository_root(f)
    if root is not None:
        artifact["uriBaseId"] = bases[root][0]
    location: dict[str, Any] = {"artifactLocation": artifact}
    if f.get("line") and int(f["line"]) >= 1:
        location["region"] = {"startLine": int(f["line"])}
    result: dict[str, Any] = {
        "ruleId": f["rule_id"],
        "ruleIndex": index[f["rule_id"]],
        "level": "error" if f["status"] == "fail" else "note",
        "message": {"text": f.get("message") or f["rule_id"]},
        "locations": [{"physicalLocation": location}],
        "properties": {"gate": f["gate"], "session_key": f.get("session_key")},
    }
    if "baselineState" in f:
        result["baselineState"] = f["baselineState"]
    return result


def sarif_log(findings: Iterable[dict[str, Any]], notes: Iterable[str] = ()) -> dict[str, Any]:
    """The SARIF 2.1.0 log of `findings`; `notes`: warnings on what the run did not look at,
    as tool execution notifications of its one invocation."""
    rules = load_rules()
    index = {r.rule_id: i for i, r in enumerate(rules)}
    listed = list(findings)
    bases = _bases(listed)
    run: dict[str, Any] = {
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
        "results": [_result(f, index, bases) for f in listed],
    }
    warnings = [{"level": "warning", "message": {"text": text}} for text in notes]
    if warnings:
        run["invocations"] = [{"executionSuccessful": True, "toolExecutionNotifications": warnings}]
    if bases:
        run["originalUriBaseIds"] = {
            base: {"uri": _base_uri(root), "description": {"text": f"repository {name}"}}
            for root, (base, name) in bases.items()
        }
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}


def detection_findings(detection: Any) -> list[dict[str, Any]]:
    """A `census detect` result as findings rows: files relative to the repository root the
    folder's path shows (or to the folder's parent, for a folder outside the layout), as
    detect read it: a session folder that is a link is named by its path, as check names it."""
    return [
        {
            "root": detection.base,
            "repo_path": "",
            "repo": detection.base,
            "path": detection.session_path,
            "session_key": None,
            "gate": detection.gate,
            "rule_id": o.rule,
            "status": o.status,
            **f,
        }
        for o in detection.outcomes
        if o.status in ("fail", "info")
        for f in o.findings
    ]


def write_sarif(path: str, findings: Iterable[dict[str, Any]], notes: Iterable[str] = ()) -> None:
    body = (json.dumps(sarif_log(findings, notes), indent=2) + "\n").encode()
    with written(path) as handle:
        handle.write(body)
