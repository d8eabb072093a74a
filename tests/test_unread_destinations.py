"""A destination document the census could not read fails BS-HARVEST-01 (spec §3 and §3.1:
a file over 8 MiB is not read, and what could not be read fails the rule that needs it).
Such a document may hold a link into the session folder, so `pass` would be a guess."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import duckdb
import pytest

from pipeline.check import check
from pipeline.crawl import crawl
from pipeline.detect import detect
from tests.conftest import FIXTURES, copy_tree, make_git_repo

NINE_MIB = 9 * 1024 * 1024
SESSION_APPLIED = "docs/research/demo-brainstorm"


def _oversize(document: Path) -> None:
    """Past the limit, with no link in it at all: only its size is wrong."""
    document.write_text("# Digests\n\n" + "Plain prose without links.\n" * (NINE_MIB // 26))


def _harvest(session: Path) -> tuple[str, list[str]]:
    outcome = next(o for o in detect(str(session), "move").outcomes if o.rule == "BS-HARVEST-01")
    return outcome.status, [f"{f['file']} {f['message']}" for f in outcome.findings]


def _checked_status(corpus: Path, out: Path) -> list[tuple[str, str]]:
    crawl([str(corpus)], str(out), workers=1)
    check(str(out))
    with duckdb.connect(str(out / "census.duckdb"), read_only=True) as con:
        con.execute(f"SET file_search_path = '{out}'")
        rows = con.execute(
            "SELECT status, coalesce(file, '') FROM rule_results "
            "WHERE rule_id = 'BS-HARVEST-01' ORDER BY status, file"
        ).fetchall()
    return [(str(s), str(f)) for s, f in rows]


# A destination of each kind: (base, session folder, document).
DESTINATIONS = [
    # The current round names docs/features/demo.md as a destination.
    ("applied", "docs/research/demo-brainstorm", "docs/features/demo.md"),
    # Harvested: every document outside docs/research/ and docs/history/ counts.
    ("harvested", "docs/history/brainstorms/demo", "docs/architecture/overview.md"),
]


@pytest.mark.parametrize(("base", "session", "document"), DESTINATIONS)
def test_an_unread_destination_fails_harvest(
    base: str, session: str, document: str, tmp_path: Path
) -> None:
    repo = copy_tree(FIXTURES / "cases" / "base" / base / "repo", tmp_path / "corpus" / "repo")
    assert _harvest(repo / session)[0] == "pass"
    _oversize(repo / document)
    status, findings = _harvest(repo / session)
    assert status == "fail"
    assert any(f"/{document}" in f and "8 MiB" in f for f in findings), findings
    assert ("fail", f"/{document}") in _checked_status(tmp_path / "corpus", tmp_path / "out")


@pytest.mark.parametrize(("base", "session", "document"), DESTINATIONS)
def test_a_link_that_climbs_out_of_the_repository_and_back_in_fails_harvest(
    base: str, session: str, document: str, tmp_path: Path
) -> None:
    """A destination linking into the session folder by climbing above the repository root
    and naming it on the way back (`../../../repo/docs/…`, as a monorepo's pages may): the
    disk opens the folder, but every path starting `../` was dropped as outside the
    repository, so BS-HARVEST-01 passed and the move gate was clean (found by a hunt). A climb
    that comes back through another folder's name stays outside."""
    repo = copy_tree(FIXTURES / "cases" / "base" / base / "repo", tmp_path / "corpus" / "repo")
    up = "../" * document.count("/")
    outside = f"[elsewhere]({up}../other/{session}/thesis.md)"
    (repo / document).write_text(f"# Page\n\n{outside}\n")
    assert _harvest(repo / session) == ("pass", [])
    link = f"{up}../repo/{session}/thesis.md"
    assert (repo / document).parent.joinpath(link).resolve() == (repo / session / "thesis.md")
    (repo / document).write_text(f"# Page\n\n{outside}\n\nSee [the thesis]({link}).\n")
    status, findings = _harvest(repo / session)
    assert status == "fail"
    assert findings == [
        f"/{document} /{document} links into the session folder ({link}); "
        "point it at the harvested document instead"
    ], findings
    make_git_repo(repo, [f"{session}/ops"] if base == "applied" else [])
    out = tmp_path / "out"
    crawl([str(tmp_path / "corpus")], str(out), workers=1, git_history=True)
    check(str(out))
    with duckdb.connect(str(out / "census.duckdb"), read_only=True) as con:
        con.execute(f"SET file_search_path = '{out}'")
        rows = con.execute(
            "SELECT o.commit IS NULL, r.status, r.file FROM rule_results r JOIN observations o "
            "USING (snapshot_id) WHERE r.rule_id = 'BS-HARVEST-01' AND r.gate = 'move' "
            "ORDER BY ALL"
        ).fetchall()
    # The commit's snapshot reads the same document, as the working tree's does.
    assert rows == [(False, "fail", f"/{document}"), (True, "fail", f"/{document}")], rows


def test_an_unread_document_no_round_names_fails_nothing(tmp_path: Path) -> None:
    """A research session reads only the destinations its rounds name: a large document
    elsewhere in the repository is noted, and BS-HARVEST-01 still passes."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "applied" / "repo", tmp_path / "repo")
    _oversize(repo / "docs" / "architecture" / "overview.md")
    assert _harvest(repo / "docs" / "research" / "demo-brainstorm") == ("pass", [])


@pytest.mark.parametrize("named", ["docs/features/", "docs/features", "docs/features/*.md"])
def test_an_unread_document_in_a_folder_or_pattern_destination_fails_harvest(
    tmp_path: Path, named: str
) -> None:
    """Each document in a folder Destination, or matching a pattern, is a destination
    document: one that could not be read was a note only, and BS-HARVEST-01 passed over
    whatever links it may hold (found by a hunt)."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "applied" / "repo", tmp_path / "corpus" / "repo")
    session = repo / SESSION_APPLIED
    manifest = session / "ops" / "manifest.md"
    manifest.write_text(manifest.read_text().replace("docs/features/demo.md", named))
    assert _harvest(session)[0] == "pass"
    (repo / "docs" / "features" / "other.md").write_bytes(b"x\0[a](../research/demo-brainstorm/)")
    status, findings = _harvest(session)
    assert status == "fail", findings
    assert any("/docs/features/other.md" in f and "NUL" in f for f in findings), findings
    checked = _checked_status(tmp_path / "corpus", tmp_path / "out")
    assert ("fail", "/docs/features/other.md") in checked


def test_an_unread_destination_of_an_earlier_round_fails_harvest(tmp_path: Path) -> None:
    """BS-HARVEST-01 reads every round's destinations, but an unread one failed it only when
    the current round named it: a document named by round 1 alone, over 8 MiB, was a note and
    the folder was clean."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "applied" / "repo", tmp_path / "corpus" / "repo")
    session = repo / "docs" / "research" / "demo-brainstorm"
    manifest = session / "ops" / "manifest.md"
    first = manifest.read_text().split("## Uselessness test")[0]
    second = first.replace("Round: 1", "Round: 2").replace(
        "| 3 | parked fork F4 | forks.md | docs/architecture/open-questions.md | append |\n",
        "| 3 | parked fork F4 | forks.md | docs/features/demo.md | append |\n",
    )
    rest = "## Uselessness test" + manifest.read_text().split("## Uselessness test")[1]
    manifest.write_text(first.replace("Status: applied", "Status: approved") + second + rest)
    assert _harvest(session)[0] == "pass"
    _oversize(repo / "docs" / "architecture" / "open-questions.md")
    status, findings = _harvest(session)
    assert status == "fail", findings
    assert any("/docs/architecture/open-questions.md" in f for f in findings), findings
    checked = _checked_status(tmp_path / "corpus", tmp_path / "out")
    assert ("fail", "/docs/architecture/open-questions.md") in checked


@pytest.mark.parametrize(
    "cell",
    [
        "docs/research/auth-brainstorm/forks.md",
        # Escaped as a link may be: the next night missed the change to that file.
        "[forks](docs/research/auth%2Dbrainstorm/forks.md)",
        # Reached without the folder's name in the text (a pattern, a folder above it, a
        # character reference): the next night replayed the night before (found by a hunt).
        "docs/research/*/forks.md",
        "docs/research/",
        "docs/research/auth&#45;brainstorm/forks.md",
    ],
)
def test_a_destination_in_another_session_folder_is_read_and_followed(
    cell: str, tmp_path: Path
) -> None:
    """A round may route a row into another session's forks.md. That file is no repository
    document, so its links were never read: one into the folder passed BS-HARVEST-01 (and,
    once, the file did not count as existing). It is read, in detect and in the crawl; the
    next night's crawl reads the session again when only that file changed, however the
    manifest spells its path."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "applied" / "repo", tmp_path / "corpus" / "repo")
    session = repo / "docs" / "research" / "demo-brainstorm"
    manifest = session / "ops" / "manifest.md"
    manifest.write_text(
        manifest.read_text().replace(
            "| 2 | send window section | fragment:send-window | docs/features/demo.md |",
            f"| 2 | send window section | fragment:send-window | {cell} |",
        )
    )
    other = repo / "docs" / "research" / "auth-brainstorm"
    open_session = FIXTURES / "cases" / "base" / "open" / "repo" / "docs/research/demo-brainstorm"
    copy_tree(open_session, other)
    forks = other / "forks.md"
    linked = forks.read_text() + "\nParked from [demo](../demo-brainstorm/forks.md).\n"
    forks.write_text(linked)
    status, findings = _harvest(session)
    assert status == "fail"
    assert any("/docs/research/auth-brainstorm/forks.md" in f for f in findings), findings
    checked = _checked_status(tmp_path / "corpus", tmp_path / "out")
    assert ("fail", "/docs/research/auth-brainstorm/forks.md") in checked
    forks.write_text(linked.replace("[demo](../demo-brainstorm/forks.md)", "demo"))
    assert _harvest(session)[0] == "pass"
    rows = _checked_status(tmp_path / "corpus", tmp_path / "out")
    assert rows.count(("fail", "/docs/research/auth-brainstorm/forks.md")) == 1, rows
    assert ("pass", "") in rows, "the night after, the link gone, the session passes"


def test_a_destination_in_the_sessions_own_folder_is_read_and_followed(tmp_path: Path) -> None:
    """A round that routes a row into the session's own thesis.md names a destination that
    exists, and that thesis.md linked into the folder (`forks.md` alone): it was read neither
    as a repository document nor as a file of another session, so BS-HARVEST-01 passed and
    the folder was clean at the move gate (found by a hunt). It is read, in detect and in
    the crawl."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "applied" / "repo", tmp_path / "corpus" / "repo")
    session = repo / "docs" / "research" / "demo-brainstorm"
    manifest = session / "ops" / "manifest.md"
    manifest.write_text(
        manifest.read_text().replace(
            "| forks.md | docs/architecture/open-questions.md | append |",
            "| forks.md | docs/research/demo-brainstorm/thesis.md | append |",
        )
    )
    thesis = session / "thesis.md"
    thesis.write_text(thesis.read_text() + "\nParked: [F4](forks.md#f4).\n")
    status, findings = _harvest(session)
    assert status == "fail"
    assert any("/docs/research/demo-brainstorm/thesis.md" in f for f in findings), findings
    checked = _checked_status(tmp_path / "corpus", tmp_path / "out")
    assert ("fail", "/docs/research/demo-brainstorm/thesis.md") in checked, checked
    # Without the link the same row passes: the session's files are not read for any other.
    thesis.write_text(thesis.read_text().replace("[F4](forks.md#f4)", "F4"))
    assert _harvest(session)[0] == "pass"


def test_a_destination_beside_the_history_folders_is_read_once(tmp_path: Path) -> None:
    """A round routed into the brainstorm index, docs/history/brainstorms/README.md, a file
    named like a history session folder: its links were read as a repository document's and
    again as a file inside a session, so its one link into the folder was two `links` rows and
    two BS-HARVEST-01 findings (found by a hunt). Read once, also in a commit's snapshot,
    where the index names the folder by its topic alone (`[demo](demo/)`)."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "applied" / "repo", tmp_path / "corpus" / "repo")
    session = repo / "docs" / "research" / "demo-brainstorm"
    manifest = session / "ops" / "manifest.md"
    manifest.write_text(
        manifest.read_text().replace(
            "| docs/architecture/open-questions.md | append |",
            "| docs/history/brainstorms/README.md | append |",
        )
    )
    index = repo / "docs" / "history" / "brainstorms" / "README.md"
    index.parent.mkdir(parents=True)
    index.write_text("# Brainstorms\n\n- [demo](demo/)\n")
    status, findings = _harvest(session)
    assert status == "fail"
    assert len(findings) == 1, findings
    # ops/ committed, so that a commit's snapshot has the manifest that names the index.
    make_git_repo(repo, ["docs/research/demo-brainstorm/ops"])
    out = tmp_path / "out"
    crawl([str(tmp_path / "corpus")], str(out), workers=1, git_history=True)
    check(str(out))
    with duckdb.connect(str(out / "census.duckdb"), read_only=True) as con:
        con.execute(f"SET file_search_path = '{out}'")
        rows = con.execute(
            "SELECT o.commit IS NULL, count(*) FROM rule_results r JOIN observations o "
            "USING (snapshot_id) WHERE r.rule_id = 'BS-HARVEST-01' AND r.status = 'fail' "
            "AND r.file = '/docs/history/brainstorms/README.md' GROUP BY ALL ORDER BY 1"
        ).fetchall()
    assert rows == [(False, 1), (True, 1)], "one finding in the commit and the working tree"


def test_a_destination_in_a_harvested_sessions_folder_is_read_for_its_links(
    tmp_path: Path,
) -> None:
    """A round routed into a document of another, harvested, session whose link reaches this
    session's history folder by its topic alone (`../demo/thesis.md` from
    docs/history/brainstorms/old/): the document was never parsed, as it names neither
    `demo-brainstorm` nor `brainstorms/`, and BS-HARVEST-01 passed (found by a hunt)."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "applied" / "repo", tmp_path / "corpus" / "repo")
    session = repo / "docs" / "research" / "demo-brainstorm"
    manifest = session / "ops" / "manifest.md"
    manifest.write_text(
        manifest.read_text().replace(
            "| docs/architecture/open-questions.md | append |",
            "| docs/history/brainstorms/old/notes.md | append |",
        )
    )
    notes = repo / "docs" / "history" / "brainstorms" / "old" / "notes.md"
    notes.parent.mkdir(parents=True)
    notes.write_text("# Notes\n\nSee [demo](../demo/thesis.md).\n")
    status, findings = _harvest(session)
    assert status == "fail"
    assert any("/docs/history/brainstorms/old/notes.md" in f for f in findings), findings
    checked = _checked_status(tmp_path / "corpus", tmp_path / "out")
    assert ("fail", "/docs/history/brainstorms/old/notes.md") in checked, checked


def test_an_mdx_destination_is_read_for_its_links(tmp_path: Path) -> None:
    """MDX is Markdown with JSX: a destination written as docs/features/demo.mdx was never
    read, so its link into the folder passed BS-HARVEST-01."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "applied" / "repo", tmp_path / "corpus" / "repo")
    session = repo / "docs" / "research" / "demo-brainstorm"
    manifest = session / "ops" / "manifest.md"
    manifest.write_text(
        manifest.read_text().replace("docs/features/demo.md", "docs/features/demo.mdx")
    )
    (repo / "docs" / "features" / "demo.mdx").write_text(
        "import Note from './note'\n\n# Demo\n\n"
        "<Note>See the [session](../research/demo-brainstorm/thesis.md).</Note>\n"
    )
    status, findings = _harvest(session)
    assert status == "fail"
    assert any("/docs/features/demo.mdx" in f for f in findings), findings


@pytest.mark.parametrize(("base", "session", "document"), DESTINATIONS)
def test_a_destination_saved_as_utf16_is_a_document_not_read(
    base: str, session: str, document: str, tmp_path: Path
) -> None:
    """A UTF-16 document linking into the session folder holds NUL bytes, so the link
    pre-filter saw no folder name and the rule passed with nothing noted (found by a hunt)."""
    repo = copy_tree(FIXTURES / "cases" / "base" / base / "repo", tmp_path / "corpus" / "repo")
    target = "../../" + session + "/thesis.md"
    (repo / document).write_bytes(f"# Notes\n\nSee [the thesis]({target}).\n".encode("utf-16"))
    status, findings = _harvest(repo / session)
    assert status == "fail"
    assert any(f"/{document}" in f and "NUL bytes" in f for f in findings), findings
    assert ("fail", f"/{document}") in _checked_status(tmp_path / "corpus", tmp_path / "out")


def test_a_reference_on_a_documents_first_line_after_a_bom_is_read(tmp_path: Path) -> None:
    """A byte-order mark before `[notes]: …` on line 1 made it no definition: the link into
    the session folder was lost and BS-HARVEST-01 passed (found by a hunt)."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "applied" / "repo", tmp_path / "repo")
    document = repo / "docs" / "features" / "demo.md"
    line = "[notes]: ../research/demo-brainstorm/thesis.md\n"
    document.write_bytes(b"\xef\xbb\xbf" + line.encode() + document.read_bytes())
    status, findings = _harvest(repo / "docs" / "research" / "demo-brainstorm")
    assert status == "fail" and any("/docs/features/demo.md" in f for f in findings), findings


def test_a_destination_written_in_another_case_than_on_disk_fails_harvest(
    tmp_path: Path,
) -> None:
    """A Destination `docs/Features/Demo.md` where the repository holds docs/features/demo.md:
    on the case-insensitive disk where the harvest was applied that is the document written,
    and it linked into the folder, but the path named no file here, so it was no destination
    and BS-HARVEST-01 passed without reading it (found by a hunt). It fails, naming the file
    on disk, as a misnamed session file does; a destination missing in every case still is
    not checked."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "applied" / "repo", tmp_path / "corpus" / "repo")
    session = repo / "docs" / "research" / "demo-brainstorm"
    manifest = session / "ops" / "manifest.md"
    manifest.write_text(manifest.read_text().replace("docs/features/demo.md", "docs/new/x.md"))
    assert _harvest(session) == ("pass", [])
    manifest.write_text(manifest.read_text().replace("docs/new/x.md", "docs/Features/Demo.md"))
    demo = repo / "docs" / "features" / "demo.md"
    demo.write_text(demo.read_text() + "\nSee [forks](../research/demo-brainstorm/forks.md).\n")
    status, findings = _harvest(session)
    assert status == "fail"
    assert any(
        f.startswith("/docs/Features/Demo.md ") and "'docs/features/demo.md' does" in f
        for f in findings
    ), findings
    assert ("fail", "/docs/Features/Demo.md") in _checked_status(
        tmp_path / "corpus", tmp_path / "out"
    )


@pytest.mark.parametrize("form", ["NFC", "NFD"])
def test_a_destination_written_in_another_unicode_form_than_on_disk_fails_harvest(
    tmp_path: Path, form: str
) -> None:
    """A Destination `docs/features/café.md` typed in one Unicode form where the repository
    holds the document in the other (macOS writes names decomposed): on the disk where the
    harvest was applied that is the document, and it links into the folder, yet it was no
    destination, so detect said `clean` (found by a hunt). It fails as a name in another case
    does, naming the file on disk."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "applied" / "repo", tmp_path / "corpus" / "repo")
    session = repo / "docs" / "research" / "demo-brainstorm"
    other = "NFD" if form == "NFC" else "NFC"
    on_disk = unicodedata.normalize(other, "docs/features/caf\u00e9.md")
    document = (repo / "docs" / "features" / "demo.md").rename(repo / on_disk)
    document.write_text(
        document.read_text() + "\nSee [it](../research/demo-brainstorm/forks.md).\n"
    )
    manifest = session / "ops" / "manifest.md"
    written = unicodedata.normalize(form, "docs/features/caf\u00e9.md")
    manifest.write_text(manifest.read_text().replace("docs/features/demo.md", written))
    status, findings = _harvest(session)
    assert status == "fail"
    assert any(
        f.startswith(f"/{written} ") and f"'{on_disk}' does (its Unicode form differs)" in f
        for f in findings
    ), findings
    assert ("fail", f"/{written}") in _checked_status(tmp_path / "corpus", tmp_path / "out")


@pytest.mark.parametrize("written", ["docs/features/demo", "[demo](../../../features/demo)"])
def test_a_destination_written_without_its_extension_fails_harvest(
    tmp_path: Path, written: str
) -> None:
    """`docs/features/demo` where the harvest wrote docs/features/demo.md, which links into
    the folder: the path named nothing that existed, so the move gate passed, clean (found by
    a hunt). It fails as a name in another case does, naming the file on disk; a path with
    no such document is still one not created yet."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "applied" / "repo", tmp_path / "corpus" / "repo")
    session = repo / "docs" / "research" / "demo-brainstorm"
    document = repo / "docs" / "features" / "demo.md"
    document.write_text(
        document.read_text() + "\nSee [it](../research/demo-brainstorm/forks.md).\n"
    )
    manifest = session / "ops" / "manifest.md"
    manifest.write_text(manifest.read_text().replace("docs/features/demo.md", written))
    status, findings = _harvest(session)
    assert status == "fail"
    said = "'docs/features/demo.md' does (it lacks the extension)"
    assert any(f.startswith("/docs/features/demo ") and said in f for f in findings), findings
    manifest.write_text(manifest.read_text().replace("features/demo", "features/later"))
    assert _harvest(session) == ("pass", [])


@pytest.mark.parametrize("where", ["inside", "outside", "nowhere", "archive"])
def test_a_destination_behind_a_folder_link_not_followed_fails_harvest(
    where: str, tmp_path: Path
) -> None:
    """docs/features/ is a link to a folder (in the repository, out of the root, or to
    nothing), which the walk does not follow: docs/features/demo.md may exist for the
    repository's readers and link into the session, yet it read as not created yet and
    BS-HARVEST-01 passed (found by a hunt). It is a document not read, and the rule fails,
    in detect and in check; in an archive, a link member likewise."""
    import shutil
    import tarfile

    corpus = tmp_path / "corpus"
    repo = copy_tree(FIXTURES / "cases" / "base" / "applied" / "repo", corpus / "repo")
    features = repo / "docs" / "features"
    assert (features / "demo.md").is_file() and _harvest(repo / SESSION_APPLIED)[0] == "pass"
    real = {"inside": repo / "pages", "outside": tmp_path / "elsewhere"}.get(where, repo / "pages")
    shutil.move(features, real)
    if where == "nowhere":
        shutil.rmtree(real)
    features.symlink_to(real, target_is_directory=True)
    expected = "it lies under 'docs/features', which is not read"
    if where == "archive":
        with tarfile.open(tmp_path / "repo.tar", "w") as tar:
            tar.add(repo, arcname="repo")
        shutil.rmtree(corpus)
        corpus = tmp_path / "repo.tar"
    else:
        status, findings = _harvest(repo / SESSION_APPLIED)
        assert status == "fail" and any(expected in f for f in findings), findings
    checked = _checked_status(corpus, tmp_path / "out")
    assert ("fail", "/docs/features/demo.md") in checked, checked


@pytest.mark.parametrize("suffix", [".mdown", ".mkd", ".mkdn", ".mdwn"])
def test_markdown_under_its_other_extensions_is_read_for_links(tmp_path: Path, suffix: str) -> None:
    """GitHub renders .mdown, .mkd, .mkdn and .mdwn as Markdown: a harvested session's
    repository document so named, linking into its folder, was never read, and BS-HARVEST-01
    passed (found by a hunt)."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "harvested" / "repo", tmp_path / "corpus" / "r")
    session = repo / "docs" / "history" / "brainstorms" / "demo"
    (repo / "docs" / f"guide{suffix}").write_text(
        "# Guide\n\nSee [the forks](history/brainstorms/demo/forks.md).\n"
    )
    status, findings = _harvest(session)
    assert status == "fail" and any(f"/docs/guide{suffix}" in f for f in findings), findings
    checked = _checked_status(tmp_path / "corpus", tmp_path / "out")
    assert ("fail", f"/docs/guide{suffix}") in checked
