"""A session file the census could not read fails every rule that reads it, not only the
rule the file is named after (spec §3.1: what could not be read fails the rule that needs it).
Rules that read other files only stay as they were."""

from __future__ import annotations

import tarfile
import zipfile
from pathlib import Path

import duckdb
import pytest

from pipeline.check import check
from pipeline.crawl import crawl
from pipeline.detect import detect
from pipeline.rules import load_rules
from tests.conftest import FIXTURES, copy_tree, git, make_git_repo

SESSION = "docs/research/demo-brainstorm"
NINE_MIB = 9 * 1024 * 1024


def _statuses(session: Path) -> dict[str, str]:
    return {o.rule: o.status for o in detect(str(session), "move").outcomes}


@pytest.mark.parametrize(
    ("name", "how"),
    [
        ("forks.md", "too-large"),
        ("ledger.md", "directory"),
        ("ops/manifest.md", "too-large"),
        ("ops/sync-log.md", "directory"),
        ("state.md", "too-large"),
        ("forks.md", "utf-16"),
        ("ledger.md", "utf-16"),
        # Named in another case (`Forks.md`): the file was missing to the census, so an open
        # fork in it passed the manifest gate (found by a hunt).
        ("forks.md", "case"),
        ("ops/manifest.md", "case"),
        ("ledger.md", "case"),
    ],
)
def test_every_rule_reading_an_unread_file_fails(name: str, how: str, tmp_path: Path) -> None:
    repo = copy_tree(FIXTURES / "cases" / "base" / "applied" / "repo", tmp_path / "corpus" / "r")
    session = repo / SESSION
    before = _statuses(session)
    path = session / name
    if how == "too-large":
        # Past the limit with the file's own text first: a reader that read it would pass.
        path.write_text(path.read_text() + "\nplain prose\n" * (NINE_MIB // 12))
    elif how == "case":
        path.rename(path.with_name(path.name.capitalize()))
    elif how == "utf-16":
        # Saved as UTF-16 (NUL bytes between the characters): its entries were read as nothing
        # and the session came out clean.
        path.write_bytes(path.read_text().encode("utf-16"))
    else:
        path.unlink()
        path.mkdir()
    after = _statuses(session)
    readers = {r.rule_id for r in load_rules() if name in r.reads}
    assert readers, name
    for rule in sorted(readers):
        assert after[rule] in ("fail", "skipped"), (rule, after[rule])
        if before[rule] == "pass":
            assert after[rule] == "fail", rule
    others = {r for r in after if r not in readers and after[r] != before[r]}
    # Only rules reading the file change (a missing manifest may skip its rules instead).
    assert all(after[r] in ("fail", "skipped") for r in others), others
    crawl([str(tmp_path / "corpus")], str(tmp_path / "out"), workers=1)
    check(str(tmp_path / "out"))
    with duckdb.connect(str(tmp_path / "out" / "census.duckdb"), read_only=True) as con:
        con.execute(f"SET file_search_path = '{tmp_path / 'out'}'")
        checked = dict(
            con.execute(
                "SELECT rule_id, status FROM statuses WHERE list_contains($r, rule_id)",
                {"r": sorted(readers)},
            ).fetchall()
        )
    assert {r: checked[r] for r in readers} == {r: after[r] for r in readers}


def test_an_ops_folder_linked_from_elsewhere_in_the_repository_fails_its_readers(
    tmp_path: Path,
) -> None:
    """ops/ as a link to a folder elsewhere in the repository is not entered: its files are
    unknown, so the rules reading them fail with a note (they passed, or skipped as if there
    were no manifest)."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "applied" / "repo", tmp_path / "corpus" / "r")
    session = repo / SESSION
    (session / "ops").rename(repo / "ops-store")
    (session / "ops").symlink_to("../../../ops-store")
    found = detect(str(session), "move")
    statuses = {o.rule: o.status for o in found.outcomes}
    readers = {r.rule_id for r in load_rules() if any(n.startswith("ops/") for n in r.reads)}
    assert {r: statuses[r] for r in readers} == dict.fromkeys(readers, "fail")
    assert any(n["file"] == "ops/" for n in found.notes), found.notes


@pytest.mark.parametrize("folder", ["ops", "fragments"])
def test_a_file_where_a_folder_should_be_fails_its_readers(folder: str, tmp_path: Path) -> None:
    """A file named ops (or fragments) is no folder: a note, and every rule reading a file in
    it fails (BS-OPS-01 said only that ops/.gitignore was missing; the others ran as if the
    folder were absent)."""
    import shutil

    repo = copy_tree(FIXTURES / "cases" / "base" / "applied" / "repo", tmp_path / "corpus" / "r")
    session = repo / SESSION
    shutil.rmtree(session / folder)
    (session / folder).write_text("notes\n", encoding="utf-8")
    found = detect(str(session), "move")
    statuses = {o.rule: o.status for o in found.outcomes}
    readers = {r.rule_id for r in load_rules() if any(n.startswith(folder) for n in r.reads)}
    assert readers and {r: statuses[r] for r in readers} == dict.fromkeys(readers, "fail")
    assert [(n["file"], n["code"]) for n in found.notes] == [(f"{folder}/", "not-a-folder")]


@pytest.mark.parametrize("folder", ["ops", "fragments"])
@pytest.mark.parametrize("target", ["outside", "nowhere"])
def test_a_rule_folder_linked_out_of_the_root_says_so(
    folder: str, target: str, tmp_path: Path
) -> None:
    """fragments/ (or ops/) as a link out of the root, or to nothing, was noted "a file, not a
    folder" (found by a hunt): the note says why it was not read, and its readers still fail."""
    import shutil

    repo = copy_tree(FIXTURES / "cases" / "base" / "applied" / "repo", tmp_path / "corpus" / "r")
    session = repo / SESSION
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(session / folder, elsewhere)
    shutil.rmtree(session / folder)
    (session / folder).symlink_to(elsewhere if target == "outside" else tmp_path / "gone")
    crawl([str(tmp_path / "corpus")], str(tmp_path / "out"), workers=1)
    check(str(tmp_path / "out"))
    with duckdb.connect(str(tmp_path / "out" / "census.duckdb"), read_only=True) as con:
        con.execute(f"SET file_search_path = '{tmp_path / 'out'}'")
        notes = con.execute(
            "SELECT file, code, message FROM parse_issues WHERE snapshot_id IS NOT NULL"
        ).fetchall()
        rows = con.execute("SELECT rule_id FROM statuses WHERE status = 'fail'").fetchall()
    failed = {rule for (rule,) in rows}
    assert [(file, code) for file, code, _ in notes] == [(f"{folder}/", "unreadable")]
    assert "symbolic link" in notes[0][2], notes
    readers = {r.rule_id for r in load_rules() if any(n.startswith(folder) for n in r.reads)}
    assert readers <= failed


@pytest.mark.parametrize("target", ["outside", "nowhere", "archived"])
def test_a_history_folder_keeping_an_ops_link_not_followed_fails_census_loc_01(
    target: str, tmp_path: Path
) -> None:
    """A history folder whose ops is a link out of the root, to nothing, or inside an archive,
    may still hold its ops layer: CENSUS-LOC-01 fails, as it does for a link inside the root.
    It passed, and detect said `clean` (found by a hunt): the link not followed was no folder."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "harvested" / "repo", tmp_path / "corpus" / "r")
    session = repo / "docs/history/brainstorms/demo"
    assert _statuses(session)["CENSUS-LOC-01"] == "pass"
    elsewhere = tmp_path / "scratch-ops"
    elsewhere.mkdir()
    (elsewhere / "capture.md").write_text("notes\n", encoding="utf-8")
    (session / "ops").symlink_to(elsewhere if target != "nowhere" else tmp_path / "gone")
    if target != "archived":
        assert _statuses(session)["CENSUS-LOC-01"] == "fail"
        return
    archive = tmp_path / "inputs" / "r.tar.gz"
    archive.parent.mkdir()
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(repo, arcname="r")
    assert _crawled_statuses(archive, tmp_path / "out", ["CENSUS-LOC-01"]) == {
        "CENSUS-LOC-01": "fail"
    }


def test_an_ops_gitignore_that_is_a_symbolic_link_fails_bs_ops_01(tmp_path: Path) -> None:
    """ops/.gitignore as a link to a shared ignore file holding `*` (found by a hunt): the census
    followed the link, read `*` and passed BS-OPS-01, but git does not read a .gitignore that is
    a symbolic link, so `git add -A` committed ops/. Detect and crawl+check now fail the rule."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "applied" / "repo", tmp_path / "corpus" / "r")
    session = repo / SESSION
    (repo / "ops-ignore").write_text("*\n", encoding="utf-8")
    (session / "ops" / ".gitignore").unlink()
    (session / "ops" / ".gitignore").symlink_to("../../../../ops-ignore")
    found = detect(str(session), "session")
    assert {o.rule: o.status for o in found.outcomes}["BS-OPS-01"] == "fail"
    assert [(n["file"], n["code"]) for n in found.notes] == [("ops/.gitignore", "unreadable")]
    crawled = _crawled_statuses(tmp_path / "corpus", tmp_path / "out", ["BS-OPS-01"])
    assert crawled == {"BS-OPS-01": "fail"}


def _crawled_statuses(corpus: Path, out: Path, rules: list[str]) -> dict[str, str]:
    crawl([str(corpus)], str(out), workers=1)
    check(str(out))
    with duckdb.connect(str(out / "census.duckdb"), read_only=True) as con:
        con.execute(f"SET file_search_path = '{out}'")
        query = "SELECT rule_id, status FROM statuses WHERE list_contains($r, rule_id)"
        return dict(con.execute(query, {"r": rules}).fetchall())


def test_a_history_folder_keeping_its_ops_layer_as_ops_in_another_case_fails(
    tmp_path: Path,
) -> None:
    """A history folder holding `Ops/capture.md`, tracked in git (found by a hunt): `Ops/` is ops/
    on the case-insensitive disk it was written on, yet CENSUS-LOC-01 ("has no ops/") and
    BS-OPS-02 ("no file under ops/ is tracked") passed and the folder was clean."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "harvested" / "repo", tmp_path / "corpus" / "r")
    session = repo / "docs" / "history" / "brainstorms" / "demo"
    assert detect(str(session), "move").result == "clean"
    (session / "Ops").mkdir()
    (session / "Ops" / "capture.md").write_text("### T1 · 2026-07-01T10:00Z\n", encoding="utf-8")
    make_git_repo(repo)
    assert "Ops/capture.md" in git(repo, "ls-files")
    rules = ["BS-OPS-02", "CENSUS-LOC-01"]
    found = {o.rule: o.status for o in detect(str(session), "move").outcomes}
    assert {r: found[r] for r in rules} == dict.fromkeys(rules, "fail")
    assert _crawled_statuses(tmp_path / "corpus", tmp_path / "out", rules) == dict.fromkeys(
        rules, "fail"
    )


@pytest.mark.parametrize("folder", ["Fragments", "fragment", "Fragment", "fragments_"])
def test_fragments_in_a_fragments_folder_of_another_case_fail_their_readers(
    tmp_path: Path, folder: str
) -> None:
    """A research folder whose fragments sit in `Fragments/`, one routed by no manifest row (found
    by a hunt): they were no fragments to the census, without a note, so BS-MANIFEST-01 passed and
    the folder was clean at the manifest gate. Every rule reading fragments/ now fails, noted.
    So does one in the singular, `fragment/`, or another spelling (found by a hunt: only the
    case was weighed for a folder, where a file's spelling already was)."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "converging" / "repo", tmp_path / "corpus" / "r")
    session = repo / SESSION
    (session / "fragments").rename(session / folder)
    (session / folder / "unrouted.md").write_text("# Unrouted\n", encoding="utf-8")
    state = session / "state.md"
    state.write_text(state.read_text().replace("fragment:send-window", "thesis"))
    found = detect(str(session), "manifest")
    readers = sorted(r.rule_id for r in load_rules() if "fragments/" in r.reads)
    statuses = {o.rule: o.status for o in found.outcomes}
    assert {r: statuses[r] for r in readers} == dict.fromkeys(readers, "fail")
    assert ("fragments/", "misnamed-file") in [(n["file"], n["code"]) for n in found.notes]
    assert _crawled_statuses(tmp_path / "corpus", tmp_path / "out", readers) == dict.fromkeys(
        readers, "fail"
    )


@pytest.mark.parametrize(
    ("kind", "expected"), [("tar-symbolic", "fail"), ("zip-symbolic", "fail"), ("tar-hard", "pass")]
)
def test_an_archived_ops_gitignore_link_reads_as_in_a_folder(
    kind: str, expected: str, tmp_path: Path
) -> None:
    """ops/.gitignore as a symbolic link to a file holding `*`, in a .tar or .zip (found by a
    hunt): the archive read the link as its target, without marking it a link, so BS-OPS-01
    passed where the same folder fails (git does not read a .gitignore that is a link). A
    hard link, which git reads as the file, still passes."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "applied" / "repo", tmp_path / "tree" / "r")
    ops = repo / SESSION / "ops"
    (ops / ".gitignore").rename(ops / "ignore-src")
    if kind == "tar-hard":
        (ops / ".gitignore").hardlink_to(ops / "ignore-src")
    else:
        (ops / ".gitignore").symlink_to("ignore-src")
    if kind.startswith("tar"):
        archive = tmp_path / "corpus" / "r.tar"
        archive.parent.mkdir()
        with tarfile.open(archive, "w") as tar:
            tar.add(repo, arcname="r")
    else:
        archive = tmp_path / "corpus" / "r.zip"
        archive.parent.mkdir()
        with zipfile.ZipFile(archive, "w") as zf:
            for path in sorted(repo.rglob("*")):
                name = f"r/{path.relative_to(repo)}"
                if path.is_symlink():
                    info = zipfile.ZipInfo(name)
                    info.external_attr = 0o120777 << 16
                    zf.writestr(info, str(path.readlink()))
                elif path.is_file():
                    zf.write(path, name)
    crawl([str(archive)], str(tmp_path / "out"), workers=1)
    check(str(tmp_path / "out"))
    with duckdb.connect(str(tmp_path / "out" / "census.duckdb"), read_only=True) as con:
        con.execute(f"SET file_search_path = '{tmp_path / 'out'}'")
        statuses = con.execute("SELECT status FROM statuses WHERE rule_id = 'BS-OPS-01'").fetchall()
    assert statuses == [(expected,)]


def test_an_ops_folder_of_another_case_that_is_a_clone_of_its_own_fails_bs_ops_02(
    tmp_path: Path,
) -> None:
    """`Ops/` beside ops/, a clone of its own whose index tracks notes.md (found by a hunt):
    BS-OPS-02 reads ops/ in any case, and failed `Ops/notes.md` in the repository's index, but
    a working tree nested at `Ops/` was asked only when named `ops`, so the session passed."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "corpus" / "r")
    make_git_repo(repo)
    other = repo / SESSION / "Ops"
    other.mkdir()
    (other / "notes.md").write_text("raw\n", encoding="utf-8")
    git(other, "init", "-q")
    git(other, "add", "notes.md")
    found = detect(str(repo / SESSION), "session")
    assert {o.rule: o.status for o in found.outcomes}["BS-OPS-02"] == "fail"
    crawled = _crawled_statuses(tmp_path / "corpus", tmp_path / "out", ["BS-OPS-02"])
    assert crawled == {"BS-OPS-02": "fail"}


def test_an_ops_folder_committed_as_a_link_fails_bs_ops_02(tmp_path: Path) -> None:
    """ops/ a symbolic link to a folder whose files git tracks, the link committed: git
    tracks `ops` itself, which the rule's `ops/%` did not match, so it passed (found by a
    hunt; BS-OPS-01 fails on the link as before)."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "corpus" / "r")
    (repo / "shared").mkdir()
    (repo / SESSION / "ops").rename(repo / "shared" / "ops")
    (repo / SESSION / "ops").symlink_to("../../../shared/ops")
    make_git_repo(repo, force_add=["shared/ops/capture.md"])
    found = detect(str(repo / SESSION), "session")
    assert {o.rule: o.status for o in found.outcomes}["BS-OPS-02"] == "fail"
    crawled = _crawled_statuses(tmp_path / "corpus", tmp_path / "out", ["BS-OPS-02"])
    assert crawled == {"BS-OPS-02": "fail"}


@pytest.mark.parametrize(
    ("name", "written", "rule"),
    [
        ("ops/sync-log.md", "ops/sync_log.md", "BS-SYNC-01"),
        ("ops/sync-log.md", "ops/synclog.md", "BS-SYNC-01"),
        ("ops/capture.md", "ops/capture.markdown", "BS-COMPOSE-02"),
        ("forks.md", "forks.txt", "BS-FORK-03"),
        ("forks.md", "fork.md", "BS-FORK-03"),
        ("ledger.md", "ledgers.md", "BS-LEDGER-01"),
        ("ops/capture.md", "ops/captures.md", "BS-COMPOSE-02"),
        ("ops/sync-log.md", "ops/sync-logs.md", "BS-SYNC-01"),
        # With no extension at all (found by a hunt).
        ("ops/sync-log.md", "ops/sync-log", "BS-SYNC-01"),
        ("ops/capture.md", "ops/capture", "BS-COMPOSE-02"),
        ("forks.md", "forks", "BS-FORK-03"),
        # Saved twice over, or a desktop's copy: until 2026-12-07 it vanished (found by a hunt).
        ("forks.md", "forks.md.txt", "BS-FORK-03"),
        ("forks.md", "forks.md ", "BS-FORK-03"),
        ("forks.md", "forks (1).md", "BS-FORK-03"),
        ("forks.md", "Copy of forks.md", "BS-FORK-03"),
        ("ops/capture.md", "ops/capture copy.md", "BS-COMPOSE-02"),
        ("ops/capture.md", "ops/capture.log", "BS-COMPOSE-02"),
        # An ops file beside the session's files, not in ops/ (found by a hunt).
        ("ops/capture.md", "capture.md", "BS-COMPOSE-02"),
        ("ops/sync-log.md", "sync_log.md", "BS-SYNC-01"),
    ],
)
def test_a_session_file_in_another_spelling_is_misnamed_and_fails_its_readers(
    tmp_path: Path, name: str, written: str, rule: str
) -> None:
    """A session file present only under another spelling of its name, `_` or nothing for
    its `-` or another Markdown or text extension (found by a hunt): it was simply missing,
    so a sync log with a dispatch never answered, a capture with a turn after Last compose
    or a forks file with an open fork passed at the manifest gate, with no note. So was one
    in the singular or the plural (`fork.md`, `ledgers.md`; found by a hunt). It is
    `misnamed-file`, as a file in another case is, and the rules reading the file fail."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "converging" / "repo", tmp_path / "corpus" / "r")
    session = repo / SESSION
    (session / name).rename(session / written)
    found = detect(str(session), "manifest")
    assert {o.rule: o.status for o in found.outcomes}[rule] == "fail"
    assert (name, "misnamed-file") in [(n["file"], n["code"]) for n in found.notes]
    assert _crawled_statuses(tmp_path / "corpus", tmp_path / "out", [rule]) == {rule: "fail"}


@pytest.mark.parametrize("name", ["fork.md", "capture.md"])
def test_a_singular_beside_the_session_file_is_no_misnamed_file(tmp_path: Path, name: str) -> None:
    """`fork.md` beside forks.md is some other note, not a misspelt forks.md: the spelling
    is only weighed when the file itself is missing (so is `capture.md` beside ops/)."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "converging" / "repo", tmp_path / "corpus" / "r")
    session = repo / SESSION
    (session / name).write_text("# Notes\n\nscratch\n", encoding="utf-8")
    found = detect(str(session), "manifest")
    assert [n for n in found.notes if n["code"] == "misnamed-file"] == []
    assert found.result == "clean"


@pytest.mark.parametrize(
    ("written", "holds", "rule", "issue"),
    [
        (
            "Forks.md",
            "## F9 — Should we ship? [open]\n- Closes when: a pick\n",
            "BS-FORK-01",
            "forks.md",
        ),
        ("Fragments/unrouted.md", "# Unrouted\n", "BS-MANIFEST-01", "fragments/"),
        ("OPS/capture.md", "### T99 · 2026-12-01T10:00Z\n", "BS-COMPOSE-02", "ops/"),
    ],
)
def test_a_session_file_or_folder_beside_one_named_alike_but_for_case_fails_its_readers(
    tmp_path: Path, written: str, holds: str, rule: str, issue: str
) -> None:
    """`Forks.md` beside forks.md, `Fragments/` beside fragments/ (found by a hunt): one file or
    folder on a case-insensitive disk, where a checkout keeps one of the two, so the census
    read only the exact name and an open fork, an unrouted fragment or a turn after Last
    compose kept in the other passed with nothing said, where the same folder checked out on
    such a disk fails. The pair is misnamed-file and the rules reading it fail."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "converging" / "repo", tmp_path / "corpus" / "r")
    session = repo / SESSION
    (session / written).parent.mkdir(exist_ok=True)
    (session / written).write_text(holds, encoding="utf-8")
    found = detect(str(session), "manifest")
    assert {o.rule: o.status for o in found.outcomes}[rule] == "fail"
    assert (issue, "misnamed-file") in [(n["file"], n["code"]) for n in found.notes]
    assert _crawled_statuses(tmp_path / "corpus", tmp_path / "out", [rule]) == {rule: "fail"}
