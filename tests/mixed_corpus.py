"""A mixed-stage corpus whose every figure was worked out by hand from the spec (§4, §5, §7).

Thirteen sessions, one repository each, built from the four healthy bases of
fixtures/cases (each clean at its own gate) with the edits of named cases from
fixtures/cases/cases.toml plus one edit of this module's own. The numbers below were
counted by hand from the cases' hand-written expectations and census.md; nothing here
imports the census's vocabulary or runs its SQL, so a bug there cannot move them.

Own gates (spec §4): open → session (13 rules), converging → manifest (16), applied and
harvested → move (19). A rule of the manifest gate is counted over the converging,
applied and harvested sessions (8); a move-gate rule over the applied and harvested (5).
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path
from typing import Any

from tests.conftest import FIXTURES, copy_tree, make_git_repo

CASES_DIR = FIXTURES / "cases"
CASES = {c["name"]: c for c in tomllib.loads((CASES_DIR / "cases.toml").read_text())["case"]}
WORST_EDIT = "open-worst"  # this module's own edit, see build_mixed()

# Repository folder → (the case it copies, its stage, the rules failing at its own gate).
SESSIONS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "open-healthy": ("healthy-open", "open", ()),
    "open-none-yet": ("aspect-01-none-yet-is-info", "open", ()),
    "open-no-ops": ("ops-01-missing-ops-folder", "open", ("BS-OPS-01", "BS-SYNC-02")),
    "open-git-tracked": ("ops-02-git-research-capture-tracked", "open", ("BS-OPS-02",)),
    # ops/ deleted and F2's `Closes when` dropped: BS-OPS-01 (no ops/), BS-SYNC-02 (F2 cites
    # S2, and a missing sync log reads as empty) and BS-FORK-01 (a fork without Closes when).
    WORST_EDIT: ("ops-01-missing-ops-folder", "open", ("BS-FORK-01", "BS-OPS-01", "BS-SYNC-02")),
    "conv-healthy": ("healthy-converging", "converging", ()),
    "conv-no-manifest": ("manifest-01-no-manifest-skipped", "converging", ()),
    "conv-open-fork": ("fork-03-open-fork-at-stop", "converging", ("BS-FORK-03",)),
    "applied-healthy": ("healthy-applied", "applied", ()),
    "applied-useless": ("useless-01-result-fail", "applied", ("BS-USELESS-01",)),
    "harv-healthy": ("healthy-harvested", "harvested", ()),
    "harv-fork-02": ("fork-02-resolved-fork-in-history", "harvested", ("BS-FORK-02",)),
    "harv-git-ops": (
        "ops-02-git-history-capture-tracked",
        "harvested",
        ("BS-OPS-02", "CENSUS-LOC-01"),
    ),
}

# rule → (its gate, evaluated, failed, info, skipped) over each session at its own gate.
# Skipped, by hand: BS-OPS-02 everywhere but the two git repositories (11); the ops-only
# rules (BS-OPS-01, BS-SYNC-01, BS-SYNC-02, BS-COMPOSE-02, BS-USELESS-01, CENSUS-MOVE-01) in
# the three harvested sessions; BS-MANIFEST-01 wherever there is no manifest: the five open
# sessions, conv-no-manifest and the three harvested ones (9).
RATES: dict[str, tuple[str, int, int, int, int]] = {
    "BS-ASPECT-01": ("session", 13, 0, 1, 0),
    "BS-COMPOSE-01": ("session", 13, 0, 0, 0),
    "BS-FORK-01": ("session", 13, 1, 0, 0),
    "BS-FORK-02": ("session", 13, 1, 0, 0),
    "BS-LEDGER-01": ("session", 13, 0, 0, 0),
    "BS-MANIFEST-01": ("session", 4, 0, 0, 9),
    "BS-OPS-01": ("session", 10, 2, 0, 3),
    "BS-OPS-02": ("session", 2, 2, 0, 11),
    "BS-STATE-01": ("session", 13, 0, 0, 0),
    "BS-SYNC-01": ("session", 10, 0, 0, 3),
    "BS-SYNC-02": ("session", 10, 2, 0, 3),
    "BS-THESIS-01": ("session", 13, 0, 0, 0),
    "CENSUS-LOC-01": ("session", 13, 1, 0, 0),
    "BS-ASPECT-02": ("manifest", 8, 0, 0, 0),
    "BS-COMPOSE-02": ("manifest", 5, 0, 0, 3),
    "BS-FORK-03": ("manifest", 8, 1, 0, 0),
    "BS-HARVEST-01": ("move", 5, 0, 0, 0),
    "BS-USELESS-01": ("move", 2, 1, 0, 3),
    "CENSUS-MOVE-01": ("move", 2, 0, 0, 3),
}
STAGES = {"open": 5, "converging": 3, "applied": 2, "harvested": 3}
CLEAN = 6  # the sessions with no failing rule at their own gate, of 13
# The worst sessions, worst first: most failing rules, then by repository (worst.sql's order).
WORST = [
    (WORST_EDIT, 3),
    ("harv-git-ops", 2),
    ("open-no-ops", 2),
    ("applied-useless", 1),
    ("conv-open-fork", 1),
    ("harv-fork-02", 1),
    ("open-git-tracked", 1),
]


def build_case(case: dict[str, Any], repo: Path) -> Path:
    """A case's repository at `repo` (its base copied, its edits applied, git when it says)."""
    copy_tree(CASES_DIR / "base" / case["base"] / "repo", repo)
    for rel in case.get("delete", []):
        target = repo / rel
        if target.is_dir():
            shutil.rmtree(target)
        else:
            target.unlink()
    for rel, content in case.get("write", {}).items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(content)
    if case.get("git"):
        make_git_repo(repo, case.get("git_add_force", []))
    return repo


def build_mixed(root: Path, names: dict[str, str] | None = None) -> Path:
    """The thirteen repositories under `root`; `names` maps a folder to another case."""
    for folder, (case, _, _) in SESSIONS.items():
        repo = build_case(CASES[(names or {}).get(folder, case)], root / folder)
        if folder == WORST_EDIT:
            forks = repo / "docs" / "research" / "demo-brainstorm" / "forks.md"
            lines = forks.read_text().splitlines(keepends=True)
            closes = [i for i, line in enumerate(lines) if line.startswith("- Closes when:")]
            del lines[closes[1]]  # F2's, the second fork's
            forks.write_text("".join(lines))
    return root
