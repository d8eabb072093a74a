"""The crawl on real trees: directory, .tar.gz and .zip agree; reruns re-read only what changed."""

from __future__ import annotations

import os
import tarfile
import zipfile
from pathlib import Path

import pytest

from pipeline.crawl import crawl
from pipeline.engine import connect
from pipeline.schema import CONTENT_TABLES, OBSERVATIONS, TABLES
from pipeline.store import Out
from tests.conftest import FIXTURES, copy_tree, make_git_repo

# Observation fields that name where the corpus was read from, which differ by design.
ROOT_FIELDS = {"run_id", "root", "repo", "session_key", "observed_at"}


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    for stage in ("open", "converging", "applied", "harvested"):
        copy_tree(FIXTURES / "cases" / "base" / stage / "repo", root / f"team-{stage}")
    return root


def pack_tar(source: Path, target: Path) -> Path:
    with tarfile.open(target, "w:gz") as archive:
        for path in sorted(source.rglob("*")):
            archive.add(path, arcname=str(path.relative_to(source)), recursive=False)
    return target


def pack_zip(source: Path, target: Path) -> Path:
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(source.rglob("*")):
            archive.write(path, arcname=str(path.relative_to(source)))
    return target


def table_contents(out: Path) -> dict[str, list[tuple[object, ...]]]:
    con = connect(Out(out))
    contents = {}
    for table in [*CONTENT_TABLES, OBSERVATIONS]:
        columns = [c for c in table.names if c not in ROOT_FIELDS]
        select = ", ".join(f'"{c}"' for c in columns)
        contents[table.name] = sorted(
            con.execute(f'SELECT {select} FROM "{table.name}"').fetchall(), key=repr
        )
    return contents


def test_directory_tar_and_zip_give_identical_tables(corpus: Path, tmp_path: Path) -> None:
    tgz = pack_tar(corpus, tmp_path / "corpus.tar.gz")
    zipped = pack_zip(corpus, tmp_path / "corpus.zip")
    results = {}
    for name, root in (("dir", corpus), ("tgz", tgz), ("zip", zipped)):
        summary = crawl([str(root)], str(tmp_path / f"out-{name}"), workers=1)
        assert summary.sessions == 4
        results[name] = table_contents(tmp_path / f"out-{name}")
    assert results["dir"]["forks"], "the corpus has forks, so the comparison is not vacuous"
    assert results["dir"] == results["tgz"] == results["zip"]


def test_every_table_exists_with_its_documented_columns(corpus: Path, tmp_path: Path) -> None:
    crawl([str(corpus)], str(tmp_path / "out"), workers=1)
    con = connect(Out(tmp_path / "out"))
    for table in TABLES.values():
        columns = [row[0] for row in con.execute(f'DESCRIBE "{table.name}"').fetchall()]
        assert columns == table.names, table.name
    assert (tmp_path / "out" / "census.duckdb").is_file()


def test_every_table_is_a_parquet_dataset_even_with_no_rows(corpus: Path, tmp_path: Path) -> None:
    """Spec §6: one Parquet dataset per table under OUT/tables/{table}/, read by any Parquet
    reader. A clean corpus has no parse issues and no findings along history: those tables
    still read, as zero rows with their columns, not as "No files found"."""
    import duckdb

    from pipeline.check import check

    crawl([str(corpus)], str(tmp_path / "out"), workers=1)
    check(str(tmp_path / "out"))
    tables = tmp_path / "out" / "tables"
    con = duckdb.connect()
    counts = {}
    for table in TABLES.values():
        scan = f"read_parquet('{tables / table.name}/*/*.parquet', hive_partitioning = false)"
        columns = [row[0] for row in con.execute(f"DESCRIBE SELECT * FROM {scan}").fetchall()]
        assert columns == table.names, table.name
        counts[table.name] = con.execute(f"SELECT count(*) FROM {scan}").fetchone()[0]
    assert counts["series_findings"] == 0 and counts["forks"] > 0, counts


def test_a_parquet_reader_of_tables_sees_only_the_committed_rows(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Spec §6: any Parquet reader sees everything, and only that. The files a commit
    superseded (the previous check's lifetime_forks, a compaction's inputs) stayed in tables/
    until the next writer, so `read_parquet('tables/lifetime_forks/*/*.parquet')` counted the
    last check's rows twice."""
    import duckdb

    from pipeline import maintain
    from pipeline.check import check

    monkeypatch.setattr(maintain, "COMPACT_AT", 3)  # so the nights below compact too
    out = Out(tmp_path / "out")
    forks = next(corpus.glob("team-open/docs/research/*/forks.md"))
    con = duckdb.connect()
    for night in range(4):
        forks.write_text(forks.read_text() + f"\n## F{90 + night} — night {night} [open]\n")
        crawl([str(corpus)], str(out.root), workers=1)
        check(str(out.root))
        for table in TABLES.values():
            scan = f"read_parquet('{out.tables / table.name}/*/*.parquet')"
            committed = f"read_parquet({[str(f) for f in out.files(table.name)]})"
            raw, kept = (
                con.execute(f"SELECT count(*) FROM {q}").fetchone() for q in (scan, committed)
            )
            assert raw == kept, (night, table.name, raw, kept)


def test_census_duckdb_answers_sql_directly(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import duckdb

    crawl([str(corpus)], str(tmp_path / "out"), workers=1)
    # The views name their files relative to OUT: open it from inside OUT.
    monkeypatch.chdir(tmp_path / "out")
    con = duckdb.connect("census.duckdb", read_only=True)
    stages = dict(con.execute("SELECT stage, count(*) FROM snapshots GROUP BY stage").fetchall())
    assert stages == {"open": 1, "converging": 1, "applied": 1, "harvested": 1}


def test_rerun_parses_nothing_and_adds_only_observations(corpus: Path, tmp_path: Path) -> None:
    out = str(tmp_path / "out")
    first = crawl([str(corpus)], out, workers=1)
    assert (first.parsed, first.new_snapshots) == (4, 4)
    second = crawl([str(corpus)], out, workers=1)
    assert (second.read, second.parsed, second.new_snapshots) == (0, 0, 0)
    con = connect(Out(out))
    assert con.execute("SELECT count(*) FROM snapshots").fetchone() == (4,)
    assert con.execute("SELECT count(*) FROM observations").fetchone() == (8,)
    assert con.execute("SELECT count(DISTINCT run_id) FROM observations").fetchone() == (2,)


def test_changing_one_file_reparses_that_session_only(corpus: Path, tmp_path: Path) -> None:
    out = str(tmp_path / "out")
    crawl([str(corpus)], out, workers=1)
    forks = corpus / "team-open" / "docs" / "research" / "demo-brainstorm" / "forks.md"
    forks.write_text(
        forks.read_text() + "\n## F9 — A late question [open]\n- Closes when: a pick\n"
    )
    rerun = crawl([str(corpus)], out, workers=1)
    assert (rerun.read, rerun.parsed, rerun.new_snapshots) == (1, 1, 1)
    con = connect(Out(out))
    assert con.execute("SELECT count(*) FROM forks WHERE fork_id = 'F9'").fetchone() == (1,)


def test_touched_but_unchanged_file_is_read_not_parsed(corpus: Path, tmp_path: Path) -> None:
    out = str(tmp_path / "out")
    crawl([str(corpus)], out, workers=1)
    state = corpus / "team-open" / "docs" / "research" / "demo-brainstorm" / "state.md"
    os.utime(state, ns=(state.stat().st_atime_ns, state.stat().st_mtime_ns + 10**9))
    rerun = crawl([str(corpus)], out, workers=1)
    assert (rerun.read, rerun.parsed) == (1, 0)


def test_parallel_crawl_equals_single_process(corpus: Path, tmp_path: Path) -> None:
    many = tmp_path / "many"
    for i in range(450):
        copy_tree(corpus / "team-open", many / f"repo-{i:03d}")
    # Topics differ per repository so every snapshot is distinct; 450 is past INLINE_SESSIONS.
    for i in range(450):
        src = many / f"repo-{i:03d}" / "docs" / "research" / "demo-brainstorm"
        src.rename(src.with_name(f"demo{i}-brainstorm"))
    one = crawl([str(many)], str(tmp_path / "one"), workers=1)
    two = crawl([str(many)], str(tmp_path / "two"), workers=2)
    assert one.sessions == two.sessions == 450
    assert table_contents(tmp_path / "one") == table_contents(tmp_path / "two")


def test_git_repository_records_tracked_ops_files(tmp_path: Path) -> None:
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    make_git_repo(repo, ["docs/research/demo-brainstorm/ops/capture.md"])
    crawl([str(tmp_path / "root")], str(tmp_path / "out"), workers=1)
    con = connect(Out(tmp_path / "out"))
    assert con.execute("SELECT file FROM tracked_files WHERE file LIKE 'ops/%'").fetchall() == [
        ("ops/capture.md",)
    ]
    assert con.execute("SELECT git_context FROM snapshots").fetchall() == [(True,)]


def test_roots_that_are_repositories_keep_distinct_identities(tmp_path: Path) -> None:
    for name in ("alpha", "beta"):
        copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / name)
    crawl([str(tmp_path / "alpha"), str(tmp_path / "beta")], str(tmp_path / "out"), workers=1)
    con = connect(Out(tmp_path / "out"))
    rows = con.execute(
        "SELECT repo, count(DISTINCT session_key) FROM observations GROUP BY repo"
    ).fetchall()
    assert sorted(rows) == [("alpha", 1), ("beta", 1)]


def test_a_repository_below_the_root_named_like_it_is_another_repository(tmp_path: Path) -> None:
    """A root that is a repository is named by its folder (proj), which a repository below it
    at proj/proj/ is named by too: the two sessions of one topic shared a session_key, the
    point held one of them, and the crawl warned of two checkouts of one origin there was not."""
    from pipeline.check import check

    root = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "proj")
    copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", root / "proj")
    state = root / "proj" / "docs" / "research" / "demo-brainstorm" / "state.md"
    state.write_text(state.read_text().replace("→ F", "→ F9, F", 1))  # fails BS-ASPECT-01
    summary = crawl([str(root)], str(tmp_path / "out"), workers=1)
    assert not [w for w in summary.warnings if "checkouts" in w], summary.warnings
    check(str(tmp_path / "out"))
    rows = connect(Out(tmp_path / "out")).execute(
        "SELECT repo_path, clean FROM sessions ORDER BY repo_path"
    )
    assert rows.fetchall() == [(".", True), ("proj", False)]


def test_a_topic_in_research_and_history_at_once_is_its_research_folder(tmp_path: Path) -> None:
    """A move half done leaves one session (one session_key) in two folders: the research
    folder stands for it (by definition unfinished), whichever copy is healthier, and the
    same on every check; it was an arbitrary one of the two."""
    from pipeline.check import check

    repo = copy_tree(FIXTURES / "cases" / "base" / "converging" / "repo", tmp_path / "c" / "repo")
    research = repo / "docs" / "research" / "demo-brainstorm"
    history = repo / "docs" / "history" / "brainstorms" / "demo"
    history.mkdir(parents=True)
    for name in ("state.md", "thesis.md", "forks.md", "ledger.md"):
        (history / name).write_text((research / name).read_text())
    (research / "ops" / ".gitignore").unlink()  # the copy left behind is broken (BS-OPS-01)
    out = tmp_path / "out"
    crawl([str(tmp_path / "c")], str(out), workers=1)
    check(str(out))
    con = connect(Out(out))
    assert con.execute("SELECT count(DISTINCT session_key) FROM observations").fetchone() == (1,)
    rows = con.execute("SELECT location, clean FROM sessions").fetchall()
    assert rows == [("research", False)]


def test_a_topic_in_research_and_history_at_once_fails_loc_01(tmp_path: Path) -> None:
    """The research folder stands for a session in two places, so the history copy's failures
    went unseen and the session read clean (found by a hunt): being in two places is a layout
    that disagrees with the lifecycle, and fails CENSUS-LOC-01 in both folders, in crawl and
    detect alike."""
    from pipeline.check import check
    from pipeline.detect import detect

    repo = copy_tree(FIXTURES / "cases" / "base" / "converging" / "repo", tmp_path / "c" / "repo")
    research = repo / "docs" / "research" / "demo-brainstorm"
    out = tmp_path / "out"
    crawl([str(tmp_path / "c")], str(out), workers=1)
    check(str(out))
    assert connect(Out(out)).execute("SELECT clean FROM sessions").fetchall() == [(True,)]
    history = repo / "docs" / "history" / "brainstorms" / "demo"
    history.mkdir(parents=True)
    for name in ("state.md", "thesis.md", "forks.md", "ledger.md"):
        (history / name).write_text((research / name).read_text().replace("stopping", "bogus"))
    crawl([str(tmp_path / "c")], str(out), workers=1)
    check(str(out))
    con = connect(Out(out))
    latest = "WHERE point = (SELECT max_by(point, position) FROM points)"
    rows = con.execute(f"SELECT location, clean FROM sessions {latest}").fetchall()
    assert rows == [("research", False)]
    for folder, other in ((research, history), (history, research)):
        found = detect(str(folder), "session")
        (loc,) = [o for o in found.outcomes if o.rule == "CENSUS-LOC-01"]
        assert loc.status == "fail"
        where = "/" + other.relative_to(repo).as_posix()
        assert any(
            f"the topic is also at {where} (a move half done)" in f["message"] for f in loc.findings
        )


def test_an_empty_research_folder_coming_and_going_is_seen_by_a_rerun(tmp_path: Path) -> None:
    """An empty research folder beside a harvested session makes it one in two places
    (CENSUS-LOC-01). A rerun into the same OUT kept the verdict of the night before either
    way, as the repository's signature held files alone: a pass after the folder appeared,
    a fail after it was removed, while detect and a fresh OUT said otherwise (found by a
    hunt)."""
    from pipeline.check import check

    repo = copy_tree(FIXTURES / "cases" / "base" / "harvested" / "repo", tmp_path / "c" / "repo")
    empty = repo / "docs" / "research" / "demo-brainstorm"
    out = tmp_path / "out"
    latest = (
        "SELECT r.status FROM observations o JOIN run_points p USING (run_id) "
        "JOIN rule_results r USING (snapshot_id) WHERE r.rule_id = 'CENSUS-LOC-01' "
        "AND r.gate = 'session' AND o.path = 'docs/history/brainstorms/demo' "
        "AND p.point = (SELECT max_by(point, position) FROM points)"
    )
    statuses = []
    for present in (False, True, False):
        if present:
            empty.mkdir(parents=True)
        elif empty.exists():
            empty.rmdir()
        crawl([str(tmp_path / "c")], str(out), workers=1)
        check(str(out))
        statuses.append(connect(Out(out)).execute(latest).fetchall())
    assert statuses == [[("pass",)], [("fail",)], [("pass",)]]


def test_a_session_folder_that_is_a_link_inside_the_root_is_that_session(tmp_path: Path) -> None:
    """Spec §2: a session folder is found by its path. One that is a symbolic link to a folder
    inside the root was dropped (its repository had no other session) or read as empty
    (every file missing), while `census detect` read it through the link as clean."""
    from pipeline.check import check
    from pipeline.detect import detect

    repo = tmp_path / "root" / "repo"
    source = FIXTURES / "cases" / "base" / "open" / "repo" / "docs" / "research" / "demo-brainstorm"
    copy_tree(source, repo / "docs" / "drafts" / "demo")
    (repo / "docs" / "research").mkdir(parents=True)
    link = repo / "docs" / "research" / "linked-brainstorm"
    link.symlink_to("../drafts/demo", target_is_directory=True)
    out = tmp_path / "out"
    assert crawl([str(tmp_path / "root")], str(out), workers=1).sessions == 1
    check(str(out))
    con = connect(Out(out))
    assert con.execute("SELECT path, clean FROM sessions").fetchall() == [
        ("docs/research/linked-brainstorm", True)
    ]
    assert all(o.status != "fail" for o in detect(str(link), "session").outcomes)


def test_a_session_folder_with_an_empty_topic_is_a_session(tmp_path: Path) -> None:
    """Spec §2: `docs/research/-brainstorm/` is a directory named `{topic}-brainstorm` under
    docs/research/, with an empty topic. The crawl skipped it without a word (its broken
    files were never checked) while `census detect` read it: it is a session, topic '', in
    both, and a rule it breaks fails in both (found by a hunt)."""
    from pipeline.check import check
    from pipeline.detect import detect
    from pipeline.hook import session_folders

    source = FIXTURES / "cases" / "base" / "open" / "repo"
    repo = copy_tree(source, tmp_path / "root" / "repo")
    folder = repo / "docs" / "research" / "-brainstorm"
    (repo / "docs" / "research" / "demo-brainstorm").rename(folder)
    (folder / "thesis.md").unlink()
    out = tmp_path / "out"
    assert crawl([str(tmp_path / "root")], str(out), workers=1).sessions == 1
    check(str(out))
    con = connect(Out(out))
    assert con.execute("SELECT path, topic, clean FROM sessions").fetchall() == [
        ("docs/research/-brainstorm", "", False)
    ]
    checked = dict(con.execute("SELECT rule_id, status FROM statuses").fetchall())
    detected = detect(str(folder), "session")
    assert detected.topic == "" and detected.repo_root == str(repo)
    assert {o.rule: o.status for o in detected.outcomes} == {
        o.rule: checked[o.rule] for o in detected.outcomes
    }
    assert checked["BS-THESIS-01"] == "fail"
    assert session_folders([str(folder / "forks.md")]) == [str(folder)]


@pytest.mark.parametrize("source", ["directory", "archive"])
def test_a_folder_named_like_a_session_but_for_case_or_spaces_is_noted(
    tmp_path: Path, source: str
) -> None:
    """Spec §2 names session folders exactly, so `X-Brainstorm`, `x-brainstorm ` (a trailing
    space) and `docs/History/brainstorms/y` are none; they were skipped without a word, a
    folder meant as a session never checked. Each is now a root issue `misnamed-folder`, and
    `census detect`, which reads any folder, says the same (found by a hunt). So are the
    suffix spelt another way (`z_brainstorm`, `w-brainstorms`, `brainstorm-v`) and
    `docs/history/brainstorm/` (found by another); a folder grouping sessions is none."""
    from pipeline.detect import detect

    session = (
        FIXTURES / "cases" / "base" / "open" / "repo" / "docs" / "research" / "demo-brainstorm"
    )
    repo = tmp_path / "root" / "repo"
    misnamed = [
        "docs/research/X-Brainstorm",
        "docs/research/x-brainstorm ",
        "docs/History/brainstorms/y",
        # The suffix spelt another way, or first (until 2026-12-07, found by a hunt).
        "docs/research/z_brainstorm",
        "docs/research/w-brainstorms",
        "docs/research/brainstorm-v",
        "docs/history/brainstorm/u",
    ]
    others = ["docs/research/kept-brainstorm", "docs/research/y-brainstorm-v2"]
    for folder in [*misnamed, *others, "docs/research/brainstorms/t-notes"]:
        copy_tree(session, repo / folder)
    root = tmp_path / "root"
    if source == "archive":
        root = pack_tar(tmp_path / "root", tmp_path / "root.tar.gz")
    out = tmp_path / "out"
    assert crawl([str(root)], str(out), workers=1).sessions == 1
    con = connect(Out(out))
    noted = con.execute(
        "SELECT file FROM parse_issues WHERE code = 'misnamed-folder' ORDER BY file"
    ).fetchall()
    assert [file.partition(":")[2] for (file,) in noted] == sorted(f"repo/{f}" for f in misnamed)
    notes = detect(str(repo / "docs" / "research" / "X-Brainstorm"), "session").notes
    assert [n["code"] for n in notes if n["file"] == "."] == ["misnamed-folder"]


@pytest.mark.parametrize("location", ["research", "history"])
def test_a_looping_link_beside_a_session_folder_hides_no_repository(
    tmp_path: Path, location: str
) -> None:
    """Links leading to each other beside the session folders (found by a hunt): asking such an
    entry whether it is a folder raises, and the look for repository roots gave up on the
    whole folder at the first one the listing met, so the repository and every session in it
    vanished from the night with no word (depending on the order the disk lists them)."""
    base = "harvested" if location == "history" else "open"
    repo = copy_tree(FIXTURES / "cases" / "base" / base / "repo", tmp_path / "root" / "repo")
    folder = repo / "docs" / location / ("brainstorms" if location == "history" else "")
    for n in range(12):
        (folder / f"l{n}-brainstorm").symlink_to(f"m{n}-brainstorm")
        (folder / f"m{n}-brainstorm").symlink_to(f"l{n}-brainstorm")
    assert crawl([str(tmp_path / "root")], str(out := tmp_path / "out"), workers=1).sessions == 1
    assert out.is_dir()


def test_a_session_folder_link_that_is_broken_or_loops_is_noted(tmp_path: Path) -> None:
    """`docs/research/x-brainstorm` a symbolic link to nothing (a shared folder removed), or two
    such links leading to each other (found by a hunt): the walk took each for a file that
    could not be read and, being no folder, no session, so the session vanished with no word,
    where an archive's link so placed is noted. Each is now a root issue; a broken link named
    as a Markdown index beside history folders is no session meant, and is not."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    research = repo / "docs" / "research"
    (research / "gone-brainstorm").symlink_to("../../shared/gone")
    (research / "a-brainstorm").symlink_to("b-brainstorm")
    (research / "b-brainstorm").symlink_to("a-brainstorm")
    # Out of the root to nothing (an unmounted share, a folder moved away): noted too (a hunt).
    (research / "share-brainstorm").symlink_to(tmp_path / "unmounted" / "x-brainstorm")
    (research / "moved-brainstorm").symlink_to("../../../../gone-brainstorm")
    (tmp_path / "root" / "other").mkdir()
    (tmp_path / "root" / "other" / "docs").symlink_to(tmp_path / "unmounted" / "docs")
    (repo / "docs" / "history" / "brainstorms").mkdir(parents=True)
    (repo / "docs" / "history" / "brainstorms" / "README.md").symlink_to("../../gone.md")
    out = tmp_path / "out"
    assert crawl([str(tmp_path / "root")], str(out), workers=1).sessions == 1
    noted = connect(Out(out)).execute(
        "SELECT file FROM parse_issues WHERE code = 'unreadable' AND file LIKE '%:%' ORDER BY 1"
    )
    assert [f.partition(":")[2] for (f,) in noted.fetchall()] == [
        "other/docs",
        *(f"repo/docs/research/{name}-brainstorm" for name in ("a", "b", "gone", "moved", "share")),
    ]


@pytest.mark.parametrize("source", ["directory", "archive"])
def test_a_file_where_a_research_session_folder_would_be_is_noted(
    tmp_path: Path, source: str
) -> None:
    """`docs/research/x-brainstorm` a file (a folder link git checked out as a file holding its
    target, core.symlinks off; found by a hunt): no folder, so no session, and nothing said,
    the session gone from the night. It is a root issue, not-a-folder; a file beside the
    history folders (an index) is none."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    (repo / "docs" / "research" / "x-brainstorm").write_text("../../shared/x\n")
    (repo / "docs" / "history" / "brainstorms").mkdir(parents=True)
    (repo / "docs" / "history" / "brainstorms" / "index").write_text("sessions\n")
    root = tmp_path / "root"
    if source == "archive":
        root = pack_tar(tmp_path / "root", tmp_path / "root.tar.gz")
    out = tmp_path / "out"
    assert crawl([str(root)], str(out), workers=1).sessions == 1
    noted = (
        connect(Out(out))
        .execute("SELECT file FROM parse_issues WHERE code = 'not-a-folder'")
        .fetchall()
    )
    assert [f.partition(":")[2] for (f,) in noted] == ["repo/docs/research/x-brainstorm"]


@pytest.mark.parametrize("source", ["directory", "archive"])
def test_a_history_folder_that_kept_its_research_suffix_is_noted(
    tmp_path: Path, source: str
) -> None:
    """`git mv docs/research/demo-brainstorm docs/history/brainstorms/` keeps the suffix: spec
    §2 makes the topic the history folder's name, `demo-brainstorm`, so the session is another
    than the research folder it came from (its move never seen; in a half-done move its forks
    counted twice) and nothing said so (found by a hunt). The topic stays the folder name, and
    the folder is noted, in the crawl and in `census detect`; `demo` moved right is not."""
    from pipeline.detect import detect

    harvested = FIXTURES / "cases" / "base" / "harvested" / "repo"
    repo = copy_tree(harvested, tmp_path / "root" / "repo")
    history = repo / "docs" / "history" / "brainstorms"
    copy_tree(history / "demo", history / "kept-brainstorm")
    root = tmp_path / "root"
    if source == "archive":
        root = pack_tar(tmp_path / "root", tmp_path / "root.tar.gz")
    out = tmp_path / "out"
    crawl([str(root)], str(out), workers=1)
    con = connect(Out(out))
    topics = con.execute("SELECT DISTINCT topic FROM observations ORDER BY 1").fetchall()
    assert topics == [("demo",), ("kept-brainstorm",)]
    noted = con.execute(
        "SELECT s.topic, p.file FROM parse_issues p JOIN snapshots s USING (snapshot_id) "
        "WHERE p.code = 'misnamed-folder'"
    ).fetchall()
    assert noted == [("kept-brainstorm", ".")]
    notes = detect(str(history / "kept-brainstorm"), "move").notes
    assert [n["code"] for n in notes] == ["misnamed-folder"]
    assert "docs/history/brainstorms/kept/" in notes[0]["message"]
    assert detect(str(history / "demo"), "move").notes == []


@pytest.mark.parametrize("source", ["directory", "archive"])
def test_a_folder_link_named_like_a_session_but_for_case_is_noted(
    tmp_path: Path, source: str
) -> None:
    """A session folder misnamed by case that is a symbolic link to a folder inside the root
    (`docs/research/X-Brainstorm -> ../../store/x`) was skipped without a word, in a
    directory and in an archive alike, where a real folder of that name is noted: a folder link is
    a folder meant as a session too (found by a hunt)."""
    session = (
        FIXTURES / "cases" / "base" / "open" / "repo" / "docs" / "research" / "demo-brainstorm"
    )
    repo = tmp_path / "root" / "repo"
    copy_tree(session, repo / "store" / "x")
    copy_tree(session, repo / "docs" / "research" / "kept-brainstorm")
    os.symlink("../../store/x", repo / "docs" / "research" / "X-Brainstorm")
    root = tmp_path / "root"
    if source == "archive":
        root = pack_tar(tmp_path / "root", tmp_path / "root.tar.gz")
    out = tmp_path / "out"
    assert crawl([str(root)], str(out), workers=1).sessions == 1
    noted = connect(Out(out)).execute("SELECT file, code FROM parse_issues").fetchall()
    assert [(f.partition(":")[2], c) for f, c in noted] == [
        ("repo/docs/research/X-Brainstorm", "misnamed-folder")
    ]


def test_a_session_folder_inside_another_session_is_a_session_too(tmp_path: Path) -> None:
    """Spec §2: a session folder is found by its path alone, wherever it lies. A copy kept
    under another session's basis/ was only files of the outer session to the crawl, while
    `census detect` and the pre-commit hook took it for a session out of the layout. It is
    now a session of its own (its repository root the folder that holds its docs/) for all
    three, and its files stay the outer session's basis too."""
    from pipeline.check import check
    from pipeline.detect import detect
    from pipeline.hook import session_folders

    base = FIXTURES / "cases" / "base"
    repo = copy_tree(base / "open" / "repo", tmp_path / "root" / "repo")
    outer = repo / "docs" / "research" / "demo-brainstorm"
    vendored = outer / "basis" / "vendor" / "docs" / "research" / "old-brainstorm"
    copy_tree(base / "converging" / "repo" / "docs" / "research" / "demo-brainstorm", vendored)
    (vendored / "thesis.md").unlink()  # so that the copy fails a rule the outer one passes
    out = tmp_path / "out"
    assert crawl([str(tmp_path / "root")], str(out), workers=1).sessions == 2
    check(str(out))
    con = connect(Out(out))
    rows = con.execute("SELECT repo, path, topic FROM sessions ORDER BY repo").fetchall()
    assert rows == [
        ("repo", "docs/research/demo-brainstorm", "demo"),
        ("repo/docs/research/demo-brainstorm/basis/vendor", "docs/research/old-brainstorm", "old"),
    ]
    basis = con.execute("SELECT count(*) FROM files WHERE file LIKE 'basis/vendor/%'").fetchone()
    assert basis[0] > 0, "the copy is still the outer session's basis"
    found = detect(str(vendored), "session")
    assert (found.location, found.topic) == ("research", "old")
    assert found.repo_root == str(vendored.parents[2])
    failing = {o.rule for o in found.outcomes if o.status == "fail"}
    statuses = con.execute(
        "SELECT rule_id FROM statuses WHERE own AND status = 'fail' AND path LIKE '%old%'"
    ).fetchall()
    assert {r for (r,) in statuses} == failing >= {"BS-THESIS-01"}
    in_it = f"{vendored.relative_to(tmp_path / 'root')}/state.md"
    assert session_folders([in_it]) == [
        "repo/docs/research/demo-brainstorm",
        str(vendored.relative_to(tmp_path / "root")),
    ]


def test_detect_takes_the_location_from_the_path_given(tmp_path: Path) -> None:
    """Spec §8: a research path that is a link to a history folder elsewhere is a research
    session to `detect` (it read the target's path: history rules, CENSUS-LOC-01 failing)."""
    from pipeline.detect import detect

    source = FIXTURES / "cases" / "base" / "open" / "repo" / "docs" / "research" / "demo-brainstorm"
    target = copy_tree(source, tmp_path / "elsewhere" / "docs" / "history" / "brainstorms" / "old")
    link = tmp_path / "repo" / "docs" / "research" / "demo-brainstorm"
    link.parent.mkdir(parents=True)
    link.symlink_to(target, target_is_directory=True)
    found = detect(str(link), "session")
    assert (found.location, found.topic) == ("research", "demo")
    assert all(o.status != "fail" for o in found.outcomes)


def test_a_root_below_the_repository_says_it_found_no_session(tmp_path: Path) -> None:
    """A root given at a repository's docs/ finds no session by the layout (spec §2): the
    crawl exits 0, as before, but says so on stderr instead of reporting 0 sessions mutely."""
    from typer.testing import CliRunner

    from pipeline.cli import app

    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "repo")
    result = CliRunner().invoke(app, ["crawl", str(repo / "docs"), "--out", str(tmp_path / "o")])
    assert result.exit_code == 0 and "no session folder under the roots" in result.stderr
    again = CliRunner().invoke(app, ["crawl", str(repo), "--out", str(tmp_path / "o")])
    assert again.exit_code == 0 and "no session folder" not in again.stderr


def test_a_root_with_no_session_beside_others_is_a_warning(tmp_path: Path) -> None:
    # A typo'd or too-deep root would vanish in the night's total: the crawl names it.
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "repo")
    (tmp_path / "docs-only").mkdir()
    both = crawl([str(repo), str(tmp_path / "docs-only")], str(tmp_path / "out"), workers=1)
    assert both.sessions == 1
    assert [w for w in both.warnings if "holds no session folder" in w] == [
        next(w for w in both.warnings if w.startswith(f"warning: {tmp_path / 'docs-only'} holds"))
    ]
    alone = crawl([str(repo)], str(tmp_path / "out2"), workers=1)
    assert not any("holds no session folder" in w for w in alone.warnings)
    # Sharded, a root may hold no session of this shard: no warning there.
    roots = [str(repo), str(tmp_path / "docs-only")]
    shard = crawl(roots, str(tmp_path / "out3"), shard=(1, 2), point="n1")
    assert not any("holds no session folder" in w for w in shard.warnings)


@pytest.mark.parametrize("others", [True, False])
def test_a_root_read_only_in_part_says_so(tmp_path: Path, others: bool) -> None:
    """A zip cut short (its central directory lost) holds sessions that could not be read:
    the warning said it "holds no session folder" (or, alone, that no root held one), which
    sent the reader looking for a wrong path (found by a hunt). It says the root could not
    be read in full, and that its unread sessions are missing from the night."""
    source = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "src" / "repo")
    whole = tmp_path / "whole.zip"
    with zipfile.ZipFile(whole, "w") as archive:
        for path in sorted(source.rglob("*")):
            archive.write(path, path.relative_to(source.parent).as_posix())
    cut = tmp_path / "corpus.zip"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size * 2 // 3])
    roots = [str(cut)]
    if others:
        roots.append(str(copy_tree(source, tmp_path / "other" / "repo").parent))
    found = crawl(roots, str(tmp_path / "out"), workers=1)
    assert found.sessions == (1 if others else 0)
    assert [w for w in found.warnings if "corpus.zip" in w or "session folder" in w] == [
        f"warning: {cut} could not be read in full (corrupt; see its parse issue): the "
        "sessions in what was not read are missing from the night"
    ]


def test_a_docs_folder_that_is_a_link_inside_the_root_is_noted(tmp_path: Path) -> None:
    """docs/ a link to documentation/ in the same repository: the link is not followed and
    documentation/research/… is no session path, so its session vanished from the night with
    no word, while `census detect` read it through the link (found by a hunt)."""
    from pipeline.sources.tree import LAYOUT_LINK

    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "linked")
    (repo / "docs").rename(repo / "documentation")
    (repo / "docs").symlink_to("documentation", target_is_directory=True)
    out = tmp_path / "out"
    summary = crawl([str(tmp_path / "root")], str(out), workers=1)
    assert summary.sessions == 0 and summary.parse_issues == 1
    rows = connect(Out(out)).execute("SELECT file, code, message FROM parse_issues").fetchall()
    assert [(f.rsplit(":", 1)[-1], c, m) for f, c, m in rows] == [
        ("linked/docs", "unreadable", LAYOUT_LINK)
    ]


@pytest.mark.parametrize("shards", [2, 3])
def test_shards_together_hold_each_root_issue_once(tmp_path: Path, shards: int) -> None:
    """Every shard walks every root and meets its issues (a misnamed session folder, a link
    out of the root, a damaged archive); the night's shards together hold each once, as one
    crawl does. Before, each shard wrote them all: a night in N shards counted every root
    issue N times, in parse_issues and in the report (found by a hunt)."""
    root = tmp_path / "root"
    for name in ("a", "b", "c"):
        copy_tree(FIXTURES / "example" / "orbit-api", root / name)
    (root / "b" / "docs" / "research" / "Misnamed-Brainstorm").mkdir()
    (root / "c" / "docs" / "research" / "away-brainstorm").symlink_to(tmp_path)
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes((FIXTURES / "example" / "harbor-infra-history.tar.gz").read_bytes()[:900])
    roots = [str(root), str(cut)]
    crawl(roots, str(tmp_path / "plain"))
    for k in range(1, shards + 1):
        crawl(roots, str(tmp_path / "sharded"), shard=(k, shards), point="n1")
    held = []
    for out in ("plain", "sharded"):
        with connect(Out(tmp_path / out)) as con:
            held.append(
                con.execute(
                    "SELECT file, code, message FROM parse_issues WHERE snapshot_id IS NULL "
                    "ORDER BY ALL"
                ).fetchall()
            )
    assert len(held[0]) >= 3
    assert held[1] == held[0]
