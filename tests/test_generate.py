"""The synthetic corpus generator: determinism, every rule covered, clean sessions, real files."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # fixtures/ is a folder of the project, not an installed package

from fixtures.generate import ALL_RULES, GATES, OWN_GATE, STAGES, generate  # noqa: E402

Truth = list[dict[str, Any]]


def load_truth(out: Path) -> Truth:
    with open(out / "truth.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def read_lines(path: Path) -> list[str]:
    """A file's lines as the census reads them: BOM dropped, CRLF read as LF."""
    return path.read_bytes().decode("utf-8-sig").replace("\r\n", "\n").split("\n")


def failing(truth: Truth) -> set[str]:
    return {rule for r in truth for gate in r["gates"].values() for rule in gate["fail"]}


@pytest.fixture(scope="module")
def defective(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Truth]:
    out = tmp_path_factory.mktemp("defective") / "corpus"
    generate(out, 400, seed=1, defect_rate=0.2)
    return out, load_truth(out)


def test_same_arguments_give_identical_bytes(tmp_path: Path) -> None:
    generate(tmp_path / "a", 120, seed=7, defect_rate=0.3, jobs=1)
    generate(tmp_path / "b", 120, seed=7, defect_rate=0.3, jobs=2)
    generate(tmp_path / "c", 120, seed=8, defect_rate=0.3, jobs=1)
    a = tree_bytes(tmp_path / "a")
    assert a == tree_bytes(tmp_path / "b")
    assert a != tree_bytes(tmp_path / "c")


def test_every_rule_fails_somewhere_without_git(defective: tuple[Path, Truth]) -> None:
    out, truth = defective
    assert len(truth) == 400
    assert failing(truth) == set(ALL_RULES) - {"BS-OPS-02"}
    assert any(r["gates"]["session"]["info"] == ["BS-ASPECT-01"] for r in truth)
    for r in truth:
        assert "BS-OPS-02" in r["gates"]["session"]["skipped"]
        assert r["skip_reasons"]["BS-OPS-02"] == "no git context"
    assert not list(out.rglob(".git"))


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_corpus_tracks_ops_files_exactly_where_ops_02_fails(tmp_path: Path) -> None:
    out = tmp_path / "corpus"
    generate(out, 60, seed=3, defect_rate=0.3, git=True)
    truth = load_truth(out)
    assert "BS-OPS-02" in failing(truth)
    for repo in {r["repo"] for r in truth}:
        assert (out / repo / ".git").is_dir()
        assert not subprocess.run(
            ["git", "-C", str(out / repo), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    for r in truth:
        tracked = subprocess.run(
            ["git", "-C", str(out / r["repo"]), "ls-files", "--", f"{r['path']}/ops"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert bool(tracked) == ("BS-OPS-02" in r["gates"]["session"]["fail"]), r["path"]
        assert "BS-OPS-02" not in r["gates"]["session"]["skipped"]


def test_defect_rate_zero_is_clean_at_each_sessions_own_gate(tmp_path: Path) -> None:
    out = tmp_path / "corpus"
    generate(out, 300, seed=5, defect_rate=0)
    truth = load_truth(out)
    assert {r["stage"] for r in truth} == set(STAGES)
    for r in truth:
        assert r["gates"][OWN_GATE[r["stage"]]]["fail"] == [], r["path"]
        assert r["defects"] == []
        assert r["location"] == ("history" if r["stage"] == "harvested" else "research")
    # Gates are cumulative: clean open sessions still fail the later gates' rules.
    later = {rule for r in truth if r["stage"] == "open" for rule in r["gates"]["manifest"]["fail"]}
    assert {"BS-FORK-03", "BS-COMPOSE-02"} <= later


def test_truth_is_sorted_complete_and_summarised(defective: tuple[Path, Truth]) -> None:
    out, truth = defective
    keys = [(r["repo"], r["path"]) for r in truth]
    assert keys == sorted(keys)
    for r in truth:
        assert (out / r["repo"] / r["path"]).is_dir()
        assert set(r["gates"]) == set(GATES)
        for gate in r["gates"].values():
            for status in ("fail", "info", "skipped"):
                assert gate[status] == sorted(gate[status])
    summary = json.loads((out / "truth-summary.json").read_text(encoding="utf-8"))
    assert summary["sessions"] == 400
    assert summary["stages"] == dict(Counter(r["stage"] for r in truth))
    own_fails = Counter(rule for r in truth for rule in r["gates"][OWN_GATE[r["stage"]]]["fail"])
    assert {k: v["fail"] for k, v in summary["own_gate"].items() if v["fail"]} == own_fails


TIMESTAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)"
DISPATCH = re.compile(rf"S\d+ \| gate: [\w-]+ \| dispatched: {TIMESTAMP} \| scope: .+")
RESULT = re.compile(rf"S\d+ (→|->) (reconciled|failed) \| {TIMESTAMP} \| .+")


def test_files_look_like_the_schema(defective: tuple[Path, Truth]) -> None:
    out, truth = defective
    seen: Counter[str] = Counter()
    for r in truth:
        folder = out / r["repo"] / r["path"]
        if r["location"] == "history" and not any(
            d.startswith(("CENSUS-LOC-01:ops-left", "BS-OPS-02")) for d in r["defects"]
        ):
            assert not (folder / "ops").exists()
        if r["stage"] == "applied":
            manifest = read_lines(folder / "ops" / "manifest.md")
            assert [x for x in manifest if x.startswith("Status:")][-1] == "Status: applied"
        sync = folder / "ops" / "sync-log.md"
        if sync.exists():
            for line in filter(None, read_lines(sync)):
                assert DISPATCH.fullmatch(line) or RESULT.fullmatch(line), line
                seen["->"] += "->" in line
        for line in read_lines(folder / "forks.md"):
            if line.startswith("## F"):
                assert re.match(r"## F\d* (—|–|-) \S", line), line
                seen["en dash"] += " – " in line
                seen["spaced hyphen"] += bool(re.match(r"## F\d+ - ", line))
        for path in folder.rglob("*.md"):
            raw = path.read_bytes()
            seen["bom"] += raw.startswith(b"\xef\xbb\xbf")
            seen["crlf"] += b"\r\n" in raw
            seen["offset"] += bool(re.search(rb"T\d\d:\d\d[+-]\d\d:\d\d", raw))
        forks_text = "\n".join(read_lines(folder / "forks.md"))
        if "BS-FORK-01:empty-closes-when" in r["defects"]:
            assert re.search(r"^- Closes when:$", forks_text, re.M)
        if "BS-FORK-01:no-id" in r["defects"]:
            assert re.search(r"^## F (—|–|-) ", forks_text, re.M)
        if "BS-THESIS-01:missing-file" in r["defects"]:
            assert not (folder / "thesis.md").exists()
    assert all(seen[k] for k in ("->", "en dash", "spaced hyphen", "bom", "crlf", "offset")), seen
    readme = "\n".join(read_lines(out / "repo-00001" / "README.md"))
    assert readme.startswith("# ") and "](" in readme


def test_cli_refuses_a_non_empty_out_unless_forced(tmp_path: Path) -> None:
    out = tmp_path / "corpus"
    command = [sys.executable, "-m", "fixtures.generate", str(out), "--sessions", "12"]
    command += ["--seed", "4", "--defect-rate", "0.2", "--jobs", "1"]
    first = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    assert "wrote 12 sessions" in first.stdout
    before = (out / "truth.jsonl").read_bytes()
    again = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert again.returncode == 2
    assert "not empty" in again.stderr and "Traceback" not in again.stderr
    forced = subprocess.run([*command, "--force"], cwd=ROOT, capture_output=True, text=True)
    assert forced.returncode == 0, forced.stderr
    assert (out / "truth.jsonl").read_bytes() == before
