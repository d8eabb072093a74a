"""Git facts about a repository on disk, asked of git itself and never written.

Read once per repository: the index's tracked paths (BS-OPS-02) and the origin
URL (repository identity). Every call sets GIT_OPTIONAL_LOCKS=0 so that git
does not refresh the index, and safe.directory=* so that repositories owned by
other users can still be read; and no setting of the repository's own config runs a
command (READ_ONLY), since reading must never execute what a crawled repository says.
"""

from __future__ import annotations

import bisect
import contextlib
import os
import re
import subprocess
from dataclasses import dataclass
from functools import cached_property

from pipeline.sources.tree import ReadError

# The variables by which a caller's git names the repository, index and objects to read (`git
# rev-parse --local-env-vars`): git gives a hook in a linked worktree GIT_DIR, and one in
# `git commit -a` GIT_INDEX_FILE, which would answer for every repository census asks.
CALLERS_REPOSITORY = (
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_OBJECT_DIRECTORY",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_GRAFT_FILE",
    "GIT_INDEX_FILE",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_REPLACE_REF_BASE",
    "GIT_PREFIX",
    "GIT_INTERNAL_SUPER_PREFIX",
    "GIT_SHALLOW_FILE",
    "GIT_COMMON_DIR",
)


def _env(repo: str | None = None) -> dict[str, str]:
    """Git that reads only: no index refresh, no prompt, and no lazy fetch of an object a
    partial clone lacks (which writes a pack into .git and reaches the network): the
    variable of git 2.44 and later, and for older ones no transport allowed at all. The
    caller's repository is none of its business (CALLERS_REPOSITORY). With `repo`, git reads
    the repository of that very folder, its `.git`: one git cannot open (a link to a volume
    not mounted) must fail, not be read as a checkout above it (a ceiling cannot say so for
    a path holding ':', the separator of GIT_CEILING_DIRECTORIES)."""
    env = {k: v for k, v in os.environ.items() if k not in CALLERS_REPOSITORY}
    env.update(
        {
            "GIT_OPTIONAL_LOCKS": "0",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_NO_LAZY_FETCH": "1",
            "GIT_ALLOW_PROTOCOL": "none",
        }
    )
    if repo is not None:
        top = os.path.abspath(repo)
        env["GIT_DIR"], env["GIT_WORK_TREE"] = os.path.join(top, ".git"), top
        index = _callers_index(top)
        if index is not None:
            env["GIT_INDEX_FILE"] = index
    return env


def _callers_index(top: str) -> str | None:
    """The index the caller's git named, when it is this working tree's own: a hook in `git
    commit -a` checks the index being committed, never another repository's."""
    given = os.environ.get("GIT_INDEX_FILE")
    if not given:
        return None
    path = os.path.realpath(given)  # a relative one is relative to the hook's folder, as here
    own = os.path.dirname(os.path.realpath(git_index(top)))
    return path if os.path.dirname(path) == own else None


def git_index(top: str) -> str:
    """The path of a working tree's git index. In a linked worktree or a submodule `.git`
    is a file naming the git directory (`gitdir: …`), which holds the index: staging
    there must change the signature as it does in a plain clone."""
    dot_git = os.path.join(top, ".git")
    if os.path.isfile(dot_git):
        try:
            with open(dot_git, encoding="utf-8") as f:
                first = f.readline().strip()
        except (OSError, UnicodeDecodeError):
            return os.path.join(dot_git, "index")
        if first.startswith("gitdir:"):
            return os.path.join(top, first[len("gitdir:") :].strip(), "index")
    return os.path.join(dot_git, "index")


# Settings a repository's config could use to run a command while git reads it: the fsmonitor
# hook runs on reading the index (ls-files), and a signature check runs gpg.program (log).
READ_ONLY = (
    "-c",
    "safe.directory=*",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "log.showSignature=false",
)


def _git(repo: str, *args: str, pinned: bool = True) -> subprocess.CompletedProcess[bytes] | None:
    """Git run in `repo`; `pinned`, git reads the repository of that very folder (see _env)."""
    try:
        return subprocess.run(
            ["git", *READ_ONLY, "-C", repo, *args],
            capture_output=True,
            env=_env(repo if pinned else None),
            timeout=120,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


@dataclass
class Commit:
    sha: str
    time: int  # committer time, seconds since the epoch
    parents: tuple[str, ...]  # nearest ancestors that also changed the path asked about
    changed: set[str]  # paths it changed, relative to the repository's prefix


# The last second a timestamp of the tables can hold (9999-12-31T23:59:59Z).
_LAST_TIME = 253402300799


def _readable_time(text: str) -> bool:
    return text.isdigit() and int(text) <= _LAST_TIME


class GitRepo:
    """A git working tree rooted at `path` (the directory holding `.git`)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.failure = ""  # why `tracked` could not be read, once it was tried
        self.head_failure = ""  # why HEAD could not be resolved, once head() was asked

    def head(self) -> str | None:
        """The commit HEAD names; None on an unborn branch (no commit yet). A HEAD git cannot
        resolve otherwise (an empty branch ref, a worktree whose repository is gone) is no
        "no commit": `head_failure` then names git's error."""
        done = _git(self.path, "rev-parse", "--verify", "HEAD")
        if done is not None and done.returncode == 0:
            return done.stdout.decode("ascii", "replace").strip() or None
        # Unborn, HEAD still names its branch (git resolves a missing ref without complaint);
        # a broken ref, or no repository, leaves nothing for symbolic-ref to resolve.
        unborn = _git(self.path, "symbolic-ref", "-q", "HEAD")
        if unborn is None or unborn.returncode != 0:
            said = unborn if unborn is not None and unborn.stderr.strip() else done
            self.head_failure = _why(said)
        return None

    @cached_property
    def tracked(self) -> list[str] | None:
        """Sorted paths in the index, relative to the working tree; None when git fails
        (and `failure` says why)."""
        done = _git(self.path, "ls-files", "-z", "--full-name")
        if done is None or done.returncode != 0:
            self.failure = _why(done)
            return None
        # Names that are not UTF-8 read with U+FFFD, as the tree lists them (they are stored).
        names = done.stdout.decode("utf-8", "replace").split("\0")
        return sorted(n for n in names if n)

    @cached_property
    def origin(self) -> str | None:
        done = _git(self.path, "config", "--get", "remote.origin.url")
        if done is None or done.returncode != 0:
            return None
        return without_credentials(done.stdout.decode("utf-8", "replace").strip()) or None

    def first_changes(self, folder: str) -> list[tuple[str, str]] | None:
        """(path relative to `folder`, the first commit reachable from HEAD that changed it) for
        every file committed under `folder`; None when git cannot say (`failure` says why)."""
        everything = self._first_changes
        if everything is None:
            return None
        prefix = folder.rstrip("/") + "/" if folder else ""
        return [(p[len(prefix) :], sha) for p, sha in everything.items() if p.startswith(prefix)]

    @cached_property
    def _first_changes(self) -> dict[str, str] | None:
        """Every committed path and the first commit that changed it, from one `git log` per
        working tree: a docs/ clone holding many sessions is asked once, not once each."""
        if self.head() is None:
            self.failure = self.head_failure
            return None if self.head_failure else {}  # an unborn branch has no commit
        done = _git(
            self.path,
            *("--literal-pathspecs", "log", "--reverse", "--topo-order", "--full-history"),
            *("--no-renames", "-m", "--name-only", "-z", "--format=%x00%H"),
        )
        if done is None or done.returncode != 0:
            self.failure = _why(done)
            return None
        found: dict[str, str] = {}
        for sha, names in log_records(done.stdout):
            for name in names:
                found.setdefault(name, sha)
        return found

    def held_sessions(self) -> bool:
        """Whether a commit reachable from HEAD changed a path under the folders sessions lie
        in (docs/research, docs/history/brainstorms): a git failure says yes, and the history
        read then says what it can (fail closed)."""
        done = _git(
            self.path,
            *("--literal-pathspecs", "log", "-1", "--format=%H", "HEAD", "--"),
            *("docs/research", "docs/history/brainstorms"),
        )
        return done is None or done.returncode != 0 or bool(done.stdout.strip())

    def tracked_under(self, folder: str) -> list[str] | None:
        """Tracked paths under `folder` (relative to the working tree), relative to it."""
        tracked = self.tracked
        if tracked is None:
            return None
        prefix = folder.rstrip("/") + "/" if folder else ""
        start = bisect.bisect_left(tracked, prefix)
        found = []
        for name in tracked[start:]:
            if not name.startswith(prefix):
                break
            found.append(name[len(prefix) :])
        return found


def log_records(out: bytes) -> list[tuple[str, list[str]]]:
    """(header, names) per record of `git log -z --name-only --format=%x00…`. A header is the
    field after an empty one (its own leading NUL), as no name is empty; a name may hold any
    byte but NUL (a split on a marker byte such as 0x01 took part of a name for a header)."""
    records: list[tuple[str, list[str]]] = []
    header_next = False
    for field in out.split(b"\x00"):
        if not field:
            header_next = True
        elif header_next:
            records.append((field.decode("ascii", "replace"), []))
            header_next = False
        elif records:
            names = records[-1][1]
            # git puts a line end before a record's first name only.
            raw = field[1:] if not names and field.startswith(b"\n") else field
            names.append(raw.decode("utf-8", "replace"))
    return records


def _why(done: subprocess.CompletedProcess[bytes] | None) -> str:
    """Why a git command failed, in one line (for the parse issue that says so)."""
    if done is None:
        return "git could not be run"
    lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[0] if lines else f"exit {done.returncode}"


def enclosing_repo(path: str) -> tuple[GitRepo, str] | None:
    """The git working tree holding `path`, and path relative to it; for `census detect`."""
    done = _git(path, "rev-parse", "--show-toplevel", pinned=False)
    if done is None or done.returncode != 0:
        return None
    top = os.path.realpath(done.stdout.decode("utf-8", "surrogateescape").strip())
    rel = os.path.relpath(os.path.realpath(path), top)
    return GitRepo(top), "" if rel == "." else rel.replace(os.sep, "/")


class GitHistory:
    """A repository's past, read from git objects without checking anything out.

    `git log` names the commits that touched session folders; `git ls-tree` lists a
    commit's files; one long-lived `git cat-file --batch` streams their contents, so a
    history of thousands of commits costs one process per repository, not one per file.
    """

    def __init__(self, repo: GitRepo) -> None:
        self.repo = repo
        self._batch: subprocess.Popen[bytes] | None = None
        self._trees: dict[str, list[tuple[str, str, int, bool]]] = {}
        self.failure = ""  # why git could not walk the history, once dag() was asked

    def dag(self, prefix: str) -> list[Commit]:
        """Commits that changed prefix/docs, parents first (topological order), each with its
        nearest such ancestors (git's parent rewriting, through merges) and the paths it
        changed against any parent. Names are read NUL-separated, so no name is quoted."""
        spec = f"{prefix}/docs" if prefix else "docs"
        done = _git(
            self.repo.path,
            *("log", "--reverse", "--topo-order", "--full-history", "--simplify-merges"),
            *("--parents", "-m", "--no-renames", "--name-only", "-z"),
            "--format=%x00%H %ct %P",
            "--",
            spec,
        )
        if done is None or done.returncode != 0:
            # A treeless clone (no trees to name the paths) or a damaged repository: nothing
            # read is not "no commit", and the caller says so.
            said = done.stderr.decode("utf-8", "replace").strip().splitlines() if done else []
            errors = [line for line in said if line.startswith(("fatal:", "error:"))]
            self.failure = (errors or said or ["git log did not run"])[0]
            return []
        found: dict[str, Commit] = {}
        for head, names in log_records(done.stdout):
            sha, _, rest = head.partition(" ")
            when, _, listed = rest.partition(" ")
            if not _readable_time(when):
                # A date git stores but cannot print as a time (before 1970, past year 9999):
                # no lifetime can be measured along it, and the history is said unread.
                self.failure = f"commit {sha[:12]} has a date git cannot give as a time"
                return []
            parents = listed.split()
            commit = found.setdefault(sha, Commit(sha, int(when), tuple(parents), set()))
            for name in names:
                commit.changed.add(name[len(prefix) + 1 :] if prefix else name)
        return list(found.values())

    def tree(self, commit: str, prefix: str) -> list[tuple[str, str, int, bool]]:
        """(path relative to prefix, blob id, size, is a symbolic link) of every file under
        prefix at a commit (a link's blob is its target's path, not a file's text)."""
        key = f"{commit}:{prefix}"
        if key not in self._trees:
            args = ["ls-tree", "-r", "-z", "--long", commit]
            done = _git(self.repo.path, *args, *([prefix] if prefix else []))
            if done is not None and done.returncode != 0:
                # --long reads every blob for its size; a partial clone lacks some. Listed
                # without sizes, the files are still there, and a missing one is noted when read.
                done = _git(self.repo.path, *args[:3], commit, *([prefix] if prefix else []))
            entries = []
            if done is None or done.returncode != 0:
                # Its files are unknown, not none: read as an empty tree, the commit looked like
                # the deletion of every session folder, and the step it held passed unseen.
                self.failure = f"git could not list commit {commit[:12]} ({_why(done)})"
            else:
                for record in done.stdout.decode("utf-8", "replace").split("\0"):
                    meta, _, path = record.partition("\t")
                    parts = meta.split()
                    if len(parts) in (3, 4) and parts[1] == "blob":
                        rel = path[len(prefix) + 1 :] if prefix else path
                        size = parts[3] if len(parts) == 4 else ""
                        link = parts[0] == "120000"
                        entries.append((rel, parts[2], int(size) if size.isdigit() else 0, link))
            self._trees = {key: entries}  # One commit at a time is all the walk needs.
        return self._trees[key]

    def blob(self, sha: str) -> bytes:
        if self._batch is None:
            self._batch = subprocess.Popen(
                ["git", *READ_ONLY, "-C", self.repo.path, "cat-file", "--batch"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=_env(self.repo.path),
            )
        assert self._batch.stdin is not None and self._batch.stdout is not None
        try:
            self._batch.stdin.write(sha.encode() + b"\n")
            self._batch.stdin.flush()
            header = self._batch.stdout.readline().split()
        except OSError:  # git exited (a broken pipe)
            header = []
        if not header:
            # Git before 2.44 exits on an object a partial clone lacks (it may not fetch it);
            # the next blob starts a new process.
            self._batch.kill()
            self.close()
        if len(header) < 3 or header[1] == b"missing":
            # Not an empty file: a partial or damaged clone lacks it (fail closed).
            raise ReadError("unreadable", "not in the repository's objects (a partial clone?)")
        size = int(header[2])
        data = self._batch.stdout.read(size)
        self._batch.stdout.read(1)
        return data

    def close(self) -> None:
        if self._batch is not None:
            assert self._batch.stdin is not None and self._batch.stdout is not None
            with contextlib.suppress(OSError):  # a pipe git already closed
                self._batch.stdin.close()
            self._batch.stdout.close()
            self._batch.wait(timeout=30)
            self._batch = None


# A URL with a scheme (`https://host/path`, `ssh://user@host:22/path`), and git's scp-like
# form (`user@host:path`, no `//` after the colon): what names the remote is host and path.
_SCHEME_URL_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/]*@)?([^/:]+)(?::\d*)?(/.*)?")
_SCP_URL_RE = re.compile(r"(?:[^@/:]+@)?([^/:]{2,}):(?!//)(.+)")


def same_remote(url: str) -> str:
    """What an origin URL names, whatever the way it is written: `https://github.com/a/b.git`,
    `git@github.com:a/b.git` and `ssh://git@github.com/a/b` are all `github.com/a/b` (host in
    lower case; no scheme, user, port, trailing `/` or `.git`). A local path is itself."""
    found = _SCHEME_URL_RE.fullmatch(url) or _SCP_URL_RE.fullmatch(url)
    if found is None or url.startswith("file:"):
        return url
    path = (found[2] or "").strip("/")
    return f"{found[1].lower()}/{path.removesuffix('.git')}"


def without_credentials(url: str) -> str:
    """An origin URL as the tables may show it: an http(s) URL's user and password (a token
    written into the remote) are dropped, and any URL's password; an ssh user (`git@`) stays,
    as it names no secret and is part of how the repository has always been known."""
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest.split("/", 1)[0]:
        return url
    authority, slash, path = rest.partition("/")
    userinfo, _, host = authority.rpartition("@")
    if scheme.lower() in ("http", "https") or not userinfo.partition(":")[0]:
        return f"{scheme}://{host}{slash}{path}"
    user = userinfo.partition(":")[0]
    return f"{scheme}://{user}@{host}{slash}{path}"
