"""An unreadable file, crawled for real even where the tests run as root (as CI does).

Root reads a chmod 000 file anyway, so tests/test_bad_input.py's version skips there. Here
the crawl runs in a subprocess that cannot bypass file modes: as root, under `setpriv`
without the two capabilities that let root ignore them (CAP_DAC_OVERRIDE and
CAP_DAC_READ_SEARCH), so it keeps its uid and can still read the root-owned checkout, its
venv and the test's temporary folders wherever CI cloned them; as any other user, as is.
The subprocess first proves it cannot read the file, so the test cannot pass by accident.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from pipeline.engine import connect
from pipeline.store import Out
from tests.test_bad_input import (  # noqa: F401  (control_counts is a fixture)
    CONTENT,
    DEADLINE,
    assert_control_read,
    control_counts,
    counts,
    issues,
    make_root,
    snapshot_of,
    tree_state,
)

DROPPED = "-dac_override,-dac_read_search"


def unprivileged(argv: list[str]) -> list[str]:
    """`argv` as a process that file modes apply to (see the module's docstring)."""
    if os.geteuid() != 0:
        return argv
    setpriv = shutil.which("setpriv")
    assert setpriv, "setpriv (util-linux) is needed to drop root's file-mode override"
    return [setpriv, f"--inh-caps={DROPPED}", f"--bounding-set={DROPPED}", "--", *argv]


CRAWL = textwrap.dedent(
    """
    import sys
    from pipeline.crawl import crawl
    try:
        open(sys.argv[1], "rb").close()
    except PermissionError:
        pass
    else:
        sys.exit("privileges were not dropped: the chmod 000 file is readable")
    crawl([sys.argv[2]], sys.argv[3], workers=1)
    """
)


def test_unreadable_file_without_root_privileges(
    tmp_path: Path,
    control_counts: dict[str, int],  # noqa: F811
) -> None:
    root, bad = make_root(tmp_path)
    forks = bad / "forks.md"
    out = tmp_path / "out"
    forks.chmod(0)
    try:
        before = tree_state(root)
        done = subprocess.run(
            unprivileged([sys.executable, "-c", CRAWL, str(forks), str(root), str(out)]),
            capture_output=True,
            text=True,
            timeout=DEADLINE,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert tree_state(root) == before, "the crawl changed something inside the root"
    finally:
        forks.chmod(0o644)
    con = connect(Out(out))
    assert issues(con) == [("bad", "forks.md", None, "unreadable")]
    found = counts(con, snapshot_of(con, "bad"))
    # forks.md is a gap; every other file of the session is read in full.
    assert found["forks"] == 0
    for table in CONTENT:
        if table not in ("forks", "files"):
            assert found[table] == control_counts[table], table
    assert found["files"] == control_counts["files"]  # listed, though not read
    assert_control_read(con, control_counts)


def test_a_fragments_sub_folder_that_cannot_be_listed_fails_the_fragment_rules(
    tmp_path: Path,
) -> None:
    """fragments/sub/ (mode 000) holding a fragment no manifest row routes (found by a hunt):
    the folder's issue named fragments/sub/, which no rule reads, so BS-MANIFEST-01 passed
    on the fragments it could list. The issue is fragments/'s now, and the rule fails."""
    from pipeline.check import check
    from tests.conftest import FIXTURES, copy_tree

    repo = copy_tree(FIXTURES / "cases" / "base" / "converging" / "repo", tmp_path / "root" / "r")
    sub = repo / "docs" / "research" / "demo-brainstorm" / "fragments" / "sub"
    sub.mkdir()
    (sub / "unrouted.md").write_text("# Unrouted\n", encoding="utf-8")
    out = tmp_path / "out"
    sub.chmod(0)
    try:
        argv = [sys.executable, "-c", CRAWL, str(sub), str(tmp_path / "root"), str(out)]
        done = subprocess.run(
            unprivileged(argv), capture_output=True, text=True, timeout=DEADLINE, check=False
        )
        assert done.returncode == 0, done.stderr
    finally:
        sub.chmod(0o755)
    check(str(out))
    found = connect(Out(out)).execute(
        "SELECT status, message FROM findings WHERE rule_id = 'BS-MANIFEST-01'"
    )
    assert found.fetchall() == [
        ("fail", "could not read: fragments/sub/: cannot list directory: Permission denied")
    ]


def test_detect_on_a_folder_behind_one_it_cannot_enter_says_so(tmp_path: Path) -> None:
    """docs/research/ (mode 000) holds the session: the path exists, but the user cannot
    reach it. Detect said `no such directory`, which sends the user looking for a typo
    (found by a hunt); exit 2 either way."""
    from tests.conftest import FIXTURES, copy_tree

    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "r")
    research = repo / "docs" / "research"
    census = [sys.executable, "-m", "pipeline.cli", "detect"]
    research.chmod(0)
    try:
        done = subprocess.run(
            unprivileged([*census, str(research / "demo-brainstorm")]),
            capture_output=True,
            text=True,
            timeout=DEADLINE,
            check=False,
        )
    finally:
        research.chmod(0o755)
    assert done.returncode == 2, done.stderr
    assert "permission denied" in done.stderr and "no such directory" not in done.stderr
    assert done.stdout == ""
