"""An unchanged rerun confirms each repository by stat alone, and any change walks it again.

Every case starts from a corpus crawled twice with its files' mtimes in the past (so every
block is memoised and the second crawl replays them all), changes something on disk, and
crawls again: the new run's rows must equal those of a crawl of the same tree into a fresh OUT
(which walks everything), with the changed repository walked and the others replayed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pipeline.crawl import CrawlSummary, crawl
from pipeline.engine import connect
from pipeline.schema import OBSERVATIONS
from pipeline.store import Out
from tests.conftest import age, base_corpus, git, make_git_repo

# The run's own fields; everything else in a working-tree observation must be equal.
RUN_FIELDS = {"run_id", "observed_at"}
SESSION = "docs/research/demo{}-brainstorm"


def rows(out: Path, run_id: str) -> list[tuple[object, ...]]:
    columns = ", ".join(f'"{c}"' for c in OBSERVATIONS.names if c not in RUN_FIELDS)
    con = connect(Out(out))
    found = con.execute(
        f"SELECT {columns} FROM observations WHERE run_id = ? AND commit IS NULL", [run_id]
    ).fetchall()
    return sorted(found, key=repr)


def fresh_rows(root: Path, tmp_path: Path, **options: object) -> list[tuple[object, ...]]:
    out = tmp_path / f"fresh-{time.monotonic_ns()}"
    summary = crawl([str(root)], str(out), **options)  # type: ignore[arg-type]
    assert summary.replayed == 0
    return rows(out, summary.run_id)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = base_corpus(tmp_path / "corpus", 4)
    # An ops file git ignores, there from the start, so staging it changes only the index.
    ops = next((root / "repo-01").glob("docs/**/ops"))
    (ops / "kept-aside.md").write_text("# Capture\n", encoding="utf-8")
    for i in (1, 3):
        make_git_repo(root / f"repo-{i:02d}")
    age(root)
    return root


def memoised(root: Path, out: Path, **options: object) -> CrawlSummary:
    crawl([str(root)], str(out), **options)  # type: ignore[arg-type]
    summary = crawl([str(root)], str(out), **options)  # type: ignore[arg-type]
    assert summary.replayed == summary.sessions > 0
    assert summary.read == 0
    return summary


def append(path: Path, text: str) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(text)


def _same_size_edit(root: Path) -> None:
    state = root / "repo-00" / SESSION.format(0) / "state.md"
    text = state.read_text(encoding="utf-8")
    state.write_text(text.replace("open", "OPEN", 1), encoding="utf-8")


def _same_size_edit_mtime_set_back(root: Path) -> None:
    """As `touch -r`, `cp -p` or `rsync -a` leave it: the size and the mtime as they were, and
    only the ctime (which no tool sets back) moved. It was never read again."""
    state = root / "repo-00" / SESSION.format(0) / "state.md"
    before = state.stat()
    _same_size_edit(root)
    os.utime(state, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (state.stat().st_size, state.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def _add_a_fragment(root: Path) -> None:
    late = root / "repo-00" / SESSION.format(0) / "fragments" / "late.md"
    late.write_text("# Late\n", encoding="utf-8")


def _new_session(root: Path) -> None:
    source = root / "repo-02" / "docs" / "history" / "brainstorms" / "demo2"
    if not source.exists():
        source = root / "repo-02" / SESSION.format(2)
    shutil.copytree(source, root / "repo-02" / SESSION.format("-new"))


def _harvest_move(root: Path) -> None:
    research = root / "repo-00" / SESSION.format(0)
    target = root / "repo-00" / "docs" / "history" / "brainstorms" / "demo0"
    target.parent.mkdir(parents=True, exist_ok=True)
    research.rename(target)


def _link_from_a_document(root: Path) -> None:
    append(
        root / "repo-00" / "README.md",
        f"\nSee [the forks]({SESSION.format(0)}/forks.md#f1).\n",
    )


def _commit(root: Path) -> None:
    repo = root / "repo-01"
    forks = next(repo.glob("docs/**/forks.md"))
    append(forks, "\n## F99 — Raised tonight [open]\n- Raised by: user\n")
    git(repo, "commit", "-qam", "tonight")


def _origin(root: Path) -> None:
    git(root / "repo-03", "remote", "add", "origin", "https://example.invalid/team/three.git")


def _stage_an_ops_file(root: Path) -> None:
    repo = root / "repo-01"
    aside = next(repo.glob("docs/**/ops/kept-aside.md"))
    git(repo, "add", "-f", str(aside.relative_to(repo)))


def _git_above(root: Path) -> None:
    git(root, "init", "-q")


CHANGES: dict[str, Callable[[Path], None]] = {
    "edit in place": lambda root: append(
        root / "repo-00" / SESSION.format(0) / "forks.md", "\n## F98 — New [open]\n"
    ),
    "same size, new content": _same_size_edit,
    "same size and mtime, new content": _same_size_edit_mtime_set_back,
    "file added to a session": _add_a_fragment,
    "file removed from a session": lambda root: (
        root / "repo-00" / SESSION.format(0) / "basis" / "intake.md"
    ).unlink(),
    "new session": _new_session,
    "session harvested (moved)": _harvest_move,
    "link from a document": _link_from_a_document,
    "git commit": _commit,
    "git origin set": _origin,
    "ops file staged (the index alone changes)": _stage_an_ops_file,
    "git repository made above": _git_above,
}


@pytest.mark.parametrize("git_history", [False, True], ids=["plain", "git-history"])
@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_change_walks_its_repository_again_and_the_rows_equal_a_fresh_crawl(
    corpus: Path, tmp_path: Path, change: str, git_history: bool
) -> None:
    out = tmp_path / "out"
    memoised(corpus, out, git_history=git_history)
    CHANGES[change](corpus)
    summary = crawl([str(corpus)], str(out), git_history=git_history)
    assert rows(out, summary.run_id) == fresh_rows(corpus, tmp_path, git_history=git_history)
    assert summary.replayed < summary.sessions
    if change != "git repository made above":  # that one changes every repository's identity
        assert summary.replayed > 0, "the unchanged repositories were not replayed"


def test_an_unchanged_rerun_replays_every_repository_with_the_rows_of_a_walk(
    corpus: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    summary = memoised(corpus, out, git_history=True)
    assert rows(out, summary.run_id) == fresh_rows(corpus, tmp_path, git_history=True)
    # Nothing to save after an unchanged rerun: the memo file is the one the first rerun read.
    memo = out / "state" / "memo.marshal"
    written = memo.stat().st_mtime_ns
    crawl([str(corpus)], str(out), git_history=True)
    assert memo.stat().st_mtime_ns == written


def test_a_plain_crawl_does_not_replay_what_a_history_crawl_memoised(
    corpus: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    memoised(corpus, out, git_history=True)
    summary = crawl([str(corpus)], str(out))
    assert summary.replayed == 0  # its rows carry no parents: another context, another memo
    assert rows(out, summary.run_id) == fresh_rows(corpus, tmp_path)


def test_shards_keep_a_memo_each(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    replayed = 0
    for night in ("n1", "n2"):
        for k in (1, 2):
            summary = crawl([str(corpus)], str(out), shard=(k, 2), point=night)
            replayed += summary.replayed if night == "n2" else 0
    assert replayed == fresh_sessions(corpus, tmp_path)


def fresh_sessions(root: Path, tmp_path: Path) -> int:
    return crawl([str(root)], str(tmp_path / "count")).sessions


@pytest.mark.parametrize(
    "damage",
    [b"", b"\x00garbage", b"\xe3\x02\x00\x00\x00", None],
    ids=["empty", "garbage", "truncated", "wrong shapes"],
)
def test_a_damaged_memo_costs_a_walk_never_the_run(
    corpus: Path, tmp_path: Path, damage: bytes | None
) -> None:
    import marshal
    import zlib

    out = tmp_path / "out"
    memoised(corpus, out)
    path = out / "state" / "memo.marshal"
    if damage is None:
        made, files, saved = marshal.loads(path.read_bytes())
        stamps, blob = next(iter(saved.values()))
        shapes = [
            b"not a pair of blobs",
            (b"not zlib", blob),
            (stamps, zlib.compress(marshal.dumps([[1]]))),  # rows of the wrong width
            (zlib.compress(marshal.dumps([("x", "1", 2)])), blob),  # a stamp of the wrong types
            (zlib.compress(b"\xe3\x02"), blob),  # marshal cut short
            (stamps, None),
        ]
        damage = marshal.dumps(
            (made, files, {key: shapes[i % len(shapes)] for i, key in enumerate(saved)})
        )
    path.write_bytes(damage)
    summary = crawl([str(corpus)], str(out))
    assert summary.replayed == 0
    assert rows(out, summary.run_id) == fresh_rows(corpus, tmp_path)


def test_a_repository_changed_just_before_its_walk_is_walked_again_next_time(
    corpus: Path, tmp_path: Path
) -> None:
    """A file written in the walk's own mtime tick could change again unseen (racily clean)."""
    out = tmp_path / "out"
    append(corpus / "repo-02" / "README.md", "\nEdited a moment ago.\n")
    crawl([str(corpus)], str(out))
    summary = crawl([str(corpus)], str(out))
    assert 0 < summary.replayed < summary.sessions
    assert rows(out, summary.run_id) == fresh_rows(corpus, tmp_path)


def test_after_a_compaction_an_unchanged_rerun_looks_its_rows_up_and_still_replays(
    corpus: Path, tmp_path: Path
) -> None:
    """A memo's rows are taken on trust only while the snapshot files listed with it stay
    committed; a compaction rewrites them, so the next rerun looks each row up in OUT."""
    import marshal

    from pipeline.maintain import compact

    out = tmp_path / "out"
    memoised(corpus, out)
    CHANGES["edit in place"](corpus)
    age(corpus)
    crawl([str(corpus)], str(out))  # a second snapshots file, for the compaction to merge
    compact(str(out))
    summary = crawl([str(corpus)], str(out))
    assert summary.replayed == summary.sessions
    assert rows(out, summary.run_id) == fresh_rows(corpus, tmp_path)
    # Looked up once, the memo is saved again with the files that now hold its rows.
    _, files, _ = marshal.loads((out / "state" / "memo.marshal").read_bytes())
    assert files == Out(out).manifest()["snapshots"]


def test_an_unchanged_rerun_imports_neither_pyarrow_nor_pandas(
    corpus: Path, tmp_path: Path
) -> None:
    """Building Arrow arrays from Python imports pandas: about 0.6 s, a third of what an
    unchanged rerun of 20,000 sessions costs in all."""
    out = tmp_path / "out"
    memoised(corpus, out)
    code = (
        "import sys; from pipeline.crawl import crawl; "
        f"s = crawl([{str(corpus)!r}], {str(out)!r}); "
        "print(s.replayed == s.sessions > 0, 'pyarrow' in sys.modules, 'pandas' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "False", "False"]


def test_a_memo_row_naming_a_snapshot_out_no_longer_holds_walks_its_repository(
    corpus: Path, tmp_path: Path
) -> None:
    """Once the snapshot files listed with the memos leave the manifest (a prune, a
    compaction), a row is replayed only if OUT still holds the snapshot it names."""
    import marshal
    import zlib

    from pipeline.crawl import _MEMO_COLUMNS

    out = tmp_path / "out"
    memoised(corpus, out)
    path = out / "state" / "memo.marshal"
    made, _, memos = marshal.loads(path.read_bytes())
    key = sorted(memos)[0]
    stamps, packed = memos[key]
    block_rows = marshal.loads(zlib.decompress(packed))
    block_rows[0][_MEMO_COLUMNS.index("snapshot_id")] = "0" * 64
    memos[key] = (stamps, zlib.compress(marshal.dumps(block_rows)))
    path.write_bytes(marshal.dumps((made, ["snapshots/written_by=gone/part-0.parquet"], memos)))
    summary = crawl([str(corpus)], str(out))
    assert 0 < summary.replayed < summary.sessions
    assert rows(out, summary.run_id) == fresh_rows(corpus, tmp_path)


@pytest.mark.parametrize("where", ["corpus/census-out", "corpus/repo-01/census-out"])
def test_an_out_inside_the_root_is_never_read_and_an_unchanged_night_replays(
    corpus: Path, tmp_path: Path, where: str
) -> None:
    """A nightly job that crawls `.` into ./census-out: OUT's own files, new every night, must
    not make a repository look changed (nor be read as part of it)."""
    out = tmp_path / where
    first = crawl([str(corpus)], str(out), git_history=True)
    age(corpus)  # making OUT changed its folder's mtime, racily new for the next walk
    again = memoised(corpus, out, git_history=True)
    assert rows(out, again.run_id) == rows(out, first.run_id) != []
    files = (
        connect(Out(out))
        .execute("SELECT count(*) FROM files WHERE file LIKE '%census-out%'")
        .fetchone()
    )
    assert files == (0,)


def _linked_worktree(root: Path, elsewhere: Path) -> Path:
    """repo-01 as a linked worktree of a clone outside the root: its .git is a file."""
    main = elsewhere / "main"
    shutil.move(str(root / "repo-01"), str(main))
    git(main, "worktree", "add", "-q", str(root / "repo-01"), "-b", "night")
    return root / "repo-01"


def _submodule(root: Path, elsewhere: Path) -> Path:
    """repo-01 as a submodule of a superproject made at the root: its .git is a file."""
    source = elsewhere / "source"
    shutil.move(str(root / "repo-01"), str(source))
    make_git_repo(root)
    git(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(source), "repo-01")
    git(root, "commit", "-qm", "submodule")
    return root / "repo-01"


@pytest.mark.parametrize("layout", [_linked_worktree, _submodule], ids=["worktree", "submodule"])
def test_staging_in_a_checkout_whose_git_is_a_file_is_seen_on_a_rerun(
    corpus: Path, tmp_path: Path, layout: Callable[[Path, Path], Path]
) -> None:
    (tmp_path / "elsewhere").mkdir()
    ops = next((corpus / "repo-01").glob("docs/**/ops")).relative_to(corpus / "repo-01")
    kept = shutil.copytree(corpus / "repo-01" / ops, tmp_path / "ops")
    repo = layout(corpus, tmp_path / "elsewhere")
    # git ignores ops/, so the new checkout has none: it gets the clone's back.
    shutil.copytree(kept, repo / ops, dirs_exist_ok=True)
    aside = repo / ops / "kept-aside.md"
    assert (repo / ".git").is_file() and "kept-aside.md" not in git(repo, "ls-files")
    age(corpus)
    out = tmp_path / "out"
    # Such a block has no memo (it is walked each night), but its sessions' stat cache
    # holds unless the repository's signature moves.
    crawl([str(corpus)], str(out))
    # The index lives in the git directory `.git` names; staging changes nothing else.
    git(repo, "add", "-f", str(aside.relative_to(repo)))
    summary = crawl([str(corpus)], str(out))
    assert rows(out, summary.run_id) == fresh_rows(corpus, tmp_path)


def test_staging_in_a_session_folder_that_is_a_submodule_is_seen_on_a_rerun(
    corpus: Path, tmp_path: Path
) -> None:
    """A session folder that is a submodule: what its own index tracks decides BS-OPS-02, so
    staging an ops/ file there (the repository's index unchanged) must not keep the last
    night's stat-cache row (found by a hunt)."""
    session = next((corpus / "repo-01").glob("docs/**/ops")).parent
    source = tmp_path / "session-source"
    shutil.move(str(session), str(source))
    make_git_repo(source)
    git(corpus / "repo-01", "rm", "-rq", "--cached", str(session.relative_to(corpus / "repo-01")))
    add = ("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(source))
    git(corpus / "repo-01", *add, str(session.relative_to(corpus / "repo-01")))
    git(corpus / "repo-01", "commit", "-qm", "submodule")
    shutil.copytree(source / "ops", session / "ops", dirs_exist_ok=True)  # git ignores ops/
    age(corpus)
    out = tmp_path / "out"
    crawl([str(corpus)], str(out))
    git(session, "add", "-f", "ops/kept-aside.md")
    summary = crawl([str(corpus)], str(out))
    assert rows(out, summary.run_id) == fresh_rows(corpus, tmp_path)


def test_an_archive_replaced_in_place_is_read_again(tmp_path: Path) -> None:
    """A script writes every member of a tar with time 0: two versions of one session that
    differ in one field (same size) list the same. The second night kept the first night's
    content, 0 read; the archive file's own size and time now say it changed."""
    import io
    import tarfile

    from tests.conftest import FIXTURES

    session = FIXTURES / "cases" / "base" / "open" / "repo" / "docs/research/demo-brainstorm"
    files = {p.relative_to(session): p.read_bytes() for p in session.rglob("*") if p.is_file()}

    def write(path: Path, status: bytes) -> None:
        with tarfile.open(path, "w:gz") as archive:
            for name, data in sorted(files.items()):
                data = data.replace(b"Status: open", status) if name.name == "state.md" else data
                member = tarfile.TarInfo(f"repo/docs/research/demo-brainstorm/{name}")
                member.size = len(data)
                archive.addfile(member, io.BytesIO(data))

    corpus = tmp_path / "corpus.tar.gz"
    out = tmp_path / "out"
    write(corpus, b"Status: open")
    crawl([str(corpus)], str(out), workers=1)
    write(corpus, b"Status: oops")  # the same length: the same member sizes
    second = crawl([str(corpus)], str(out), workers=1)
    assert (second.read, second.new_snapshots) == (1, 1)
    statuses = connect(Out(out)).execute(
        "SELECT s.status FROM observations o JOIN snapshots s USING (snapshot_id) "
        "JOIN runs r USING (run_id) ORDER BY r.started_at"
    )
    assert statuses.fetchall() == [("open",), ("oops",)]


# What a worker has imported of the package, asked with a builtin (a test function would make
# the worker import this test module, and the crawl with it).
LOADED = "sorted(m for m in __import__('sys').modules if m.split('.')[0] == 'pipeline')"


def test_the_workers_that_check_stamps_import_no_more_than_the_stamps_need() -> None:
    """Each spawned worker imports its initializer's module: the crawl's own, before, which
    cost each worker 0.1–0.2 s of imports before its first stat on an unchanged rerun."""
    from pipeline import memo
    from pipeline.crawl import stamp_pool

    with stamp_pool(1) as pool:
        assert pool.submit(memo.confirm, []).result() == []
        loaded = pool.submit(eval, LOADED).result()
    assert loaded == ["pipeline", "pipeline.lifeline", "pipeline.memo"]
