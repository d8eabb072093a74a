"""The synthetic corpus generator: determinism, every rule covered, clean sessions, real files."""

from __future__ import annotations

import hashlib
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

from fixtures.generate import (  # noqa: E402
    ALL_RULES,
    GATES,
    OWN_GATE,
    READING_DEFECT_KINDS,
    STAGES,
    generate,
)

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


# ───────────────────────────── census.md §3.1 variants ─────────────────────────────

# The corpus of (40 sessions, seed 11, defect rate 0.3) as the generator wrote it before the
# §3.1 variants existed: without --variants its output must stay byte for byte the same. (The
# truth files in it change when the oracle reads a rule anew: BS-FORK-03 failing a fork whose
# marker is not read changed them, the sessions' files not; so did BS-SYNC-02 taking a result
# above its dispatch for no reply, 2026-12-06.)
PINNED_DIGEST = "ea9ab3a861f7a80e9d88f07492e6854db2993d050555af89a331240ab83b88d7"


def digest(root: Path) -> str:
    h = hashlib.sha256()
    for path, data in tree_bytes(root).items():
        h.update(path.encode() + b"\0" + data + b"\0")
    return h.hexdigest()


def reading_defects(record: dict[str, Any]) -> list[str]:
    return [d for d in record["defects"] if d.split(":", 1)[1] in READING_DEFECT_KINDS]


@pytest.fixture(scope="module")
def variant_heavy(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Truth]:
    out = tmp_path_factory.mktemp("variants") / "corpus"
    generate(out, 200, seed=2, defect_rate=0.2, variants=1.0)
    return out, load_truth(out)


def test_without_variants_the_output_is_unchanged(tmp_path: Path) -> None:
    generate(tmp_path / "a", 40, seed=11, defect_rate=0.3, jobs=1)
    assert digest(tmp_path / "a") == PINNED_DIGEST


def test_variants_change_spellings_not_sessions(tmp_path: Path) -> None:
    generate(tmp_path / "plain", 150, seed=9, defect_rate=0.2, jobs=1)
    generate(tmp_path / "varied", 150, seed=9, defect_rate=0.2, jobs=2, variants=0.5)
    generate(tmp_path / "again", 150, seed=9, defect_rate=0.2, jobs=1, variants=0.5)
    assert tree_bytes(tmp_path / "varied") == tree_bytes(tmp_path / "again")
    plain, varied = load_truth(tmp_path / "plain"), load_truth(tmp_path / "varied")
    assert [(r["repo"], r["path"]) for r in plain] == [(r["repo"], r["path"]) for r in varied]
    untouched = 0
    for before, after in zip(plain, varied, strict=True):
        extra = reading_defects(after)
        assert [d for d in after["defects"] if d not in extra] == before["defects"]
        if not extra:
            untouched += 1
            assert (after["stage"], after["gates"]) == (before["stage"], before["gates"])
    assert untouched > 50
    changed = [
        p
        for p in tree_bytes(tmp_path / "plain")
        if (tmp_path / "varied" / p).is_file()
        and (tmp_path / "plain" / p).read_bytes() != (tmp_path / "varied" / p).read_bytes()
    ]
    assert len(changed) > 300


def test_variants_at_defect_rate_zero_are_clean_at_each_sessions_own_gate(
    tmp_path: Path,
) -> None:
    generate(tmp_path / "corpus", 150, seed=6, defect_rate=0, variants=1.0)
    for r in load_truth(tmp_path / "corpus"):
        assert r["gates"][OWN_GATE[r["stage"]]]["fail"] == [], r["path"]
        assert r["defects"] == []


def test_variants_inject_every_form_section_3_1_names_as_broken(
    variant_heavy: tuple[Path, Truth],
) -> None:
    _, truth = variant_heavy
    kinds = {d.split(":", 1)[1] for r in truth for d in reading_defects(r)}
    assert kinds == READING_DEFECT_KINDS
    for r in truth:
        for defect in reading_defects(r):
            rule = defect.split(":", 1)[0]
            assert any(rule in gate["fail"] for gate in r["gates"].values()), (r["path"], defect)


# Each §3.1 variant the generator writes: the file it is in and a pattern that finds it.
HEADING = r"^ {0,3}#{2,4}"
ITEM = r"^(?:[-*+] |\d+[.)] )?"
VARIANT_FORMS: dict[str, tuple[str, str]] = {
    "heading with two or three spaces": ("*.md", HEADING + r"   ?\S"),
    "heading with a tab": ("*.md", HEADING + r"\t\S"),
    "heading with closing #s": ("*.md", HEADING + r" .* #{1,3}$"),
    "indented heading": ("*.md", r"^ {1,3}#{2,4} "),
    "`*` items": ("*.md", r"^\* (?!S\d)"),
    "`+` items": ("*.md", r"^\+ "),
    "`1.` items": ("*.md", r"^1\. "),
    "`1)` items": ("*.md", r"^1\) "),
    "emphasised field name": ("*.md", ITEM + r"(\*\*|__|_|\*)[A-Za-z -]+:?(\*\*|__|_|\*):? "),
    "lower-case field name": ("*.md", ITEM + r"(status|closes when|why|decision|result):"),
    "upper-case field name": ("*.md", ITEM + r"(STATUS|CLOSES WHEN|WHY|DECISION|RESULT):"),
    "field as a plain line": ("forks.md", r"^(\*\*|__|_|\*)?(Raised by|RAISED BY|raised by)"),
    "section heading with trailing text": ("*.md", HEADING + r" +(Aspect map|Claim) \(draft\)"),
    "section heading with a colon": ("*.md", HEADING + r" +(Claim|Argument|What changed):"),
    "IDs joined with and": ("*.md", r"[FD]\d+ and [FD]\d+"),
    "IDs joined with ;": ("*.md", r"[FD]\d+; [FD]\d+"),
    "IDs as links": ("*.md", r"\[[FD]\d+\]\((forks\.md|ledger\.md)?#[fd]\d+\)"),
    "ID with commentary": ("*.md", r"[FD]\d+ \((settled in review|after the pilot|main one)\)"),
    "Twin or TWIN": ("forks.md", r"(Twin|TWIN) \(S\d+"),
    "twin citing a turn": ("forks.md", r"twin \(S\d+, T\d+\)"),
    "twin citing a linked sync": ("forks.md", r"\(\[S\d+\]\(ops/sync-log\.md\)\)"),
    "sub-bullet under an aspect": ("state.md", r"^ {2,4}- (the user|came up|covered|mostly)"),
    "continuation line": ("ledger.md", r"^ {2,4}[A-Za-z]"),
    "value in sub-bullets": ("forks.md", r"^ {2,4}- [A-Za-z]"),
    "fenced fork example": ("forks.md", r"^## F99 "),
    "fenced ledger example": ("ledger.md", r"^## D99 "),
    "indented turn example": ("capture.md", r"^    ### T\d+ "),
    "fenced state template": ("state.md", r"^- Status: open \| stopping \| harvested$"),
    "fenced thesis template": ("thesis.md", r"^Current as of: 2031-"),
    "fenced manifest round": ("manifest.md", r"^Round: 9$"),
    "section heading in forks": ("forks.md", r"^## (Forks still open|Notes|Open and parked)"),
    "section heading in the ledger": ("ledger.md", r"^## Decisions"),
    "ID then colon": ("*.md", HEADING + r"\s+[FD]\d+: "),
    "ID then space": ("*.md", HEADING + r"\s+[FD]\d+ [A-Z]"),
    "Reversed by in a heading": ("ledger.md", HEADING + r" .*\(Reversed by D\d+\)"),
    "marker with commentary": ("forks.md", r"\] \((raised T\d+|needs the user)\)"),
    "value with commentary": (
        "*.md",
        r"(pass|approved|applied|open|stopping) \((per|since|round|cold|second)",
    ),
    "value in emphasis": ("*.md", r": (\*\*|_)(pass|approved|applied|open|stopping)(\*\*|_)$"),
    "keyword ref in another case": ("state.md", r"(Thesis|THESIS|None Yet|NONE YET|None yet)"),
    "fragment ref with .md": ("state.md", r"fragment:[\w-]+\.md"),
    "stamp as a bullet": ("thesis.md", r"^- Current as of"),
    "turn with an em dash": ("capture.md", HEADING + r"\s+T\d+ — \d{4}-"),
    "turn with a pipe": ("capture.md", HEADING + r"\s+T\d+ \| \d{4}-"),
    "turn with a colon": ("capture.md", HEADING + r"\s+T\d+: \d{4}-"),
    "turn with text before the time": ("capture.md", HEADING + r"\s+T\d+ \(\w+\) "),
    "turn at another level": ("capture.md", r"^ {0,3}(##|####)\s+T\d+ "),
    "sync lines as list items": ("sync-log.md", r"^[-*] S\d+ (\||→|->)"),
    "sync lines under headings": ("sync-log.md", r"^## \d{4}-\d\d-\d\d$"),
    "table without outer pipes": ("manifest.md", r"^\d+ \| "),
    "alignment colons": ("manifest.md", r"^\|?:-"),
    "destination as a link": ("manifest.md", r"\| \[(doc|target page)\]\([^)]+\) \|"),
    "destination with commentary": (
        "manifest.md",
        r"\.md(#\S+)?`? \((new|append|section at the end)\) \|",
    ),
    "destinations with a comma": ("manifest.md", r"docs/changelog\.md, "),
    "destinations with ;": ("manifest.md", r"docs/changelog\.md; "),
    "destinations with <br>": ("manifest.md", r"docs/changelog\.md<br>"),
    "destinations with and": ("manifest.md", r"docs/changelog\.md and "),
}


def test_variant_heavy_corpus_writes_every_section_3_1_variant(
    variant_heavy: tuple[Path, Truth],
) -> None:
    out, _ = variant_heavy
    files = [p for p in out.rglob("*.md") if "/docs/research/" in str(p) or "/history/" in str(p)]
    texts = {p: "\n".join(read_lines(p)) for p in files}
    missing = [
        name
        for name, (glob, pattern) in VARIANT_FORMS.items()
        if not any(
            re.search(pattern, text, re.M)
            for p, text in texts.items()
            if p.match(glob) and "/fragments/" not in str(p)
        )
    ]
    assert missing == []
    assert list(out.rglob("fragments/.gitkeep")) and list(out.rglob("fragments/.notes.md"))
    # Every line of every sync log still reads as a dispatch or result once its list marker
    # is dropped; headings are the only other lines.
    for sync in out.rglob("sync-log.md"):
        for line in filter(None, read_lines(sync)):
            if not line.startswith("#"):
                line = re.sub(r"^[-*] ", "", line)
                assert DISPATCH.fullmatch(line) or RESULT.fullmatch(line), line


def test_cli_refuses_variants_outside_0_to_1(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "fixtures.generate", str(tmp_path / "out")]
    done = subprocess.run(
        [*command, "--sessions", "2", "--variants", "1.5"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 2 and "--variants" in done.stderr
