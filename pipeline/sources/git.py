"""Git facts about a repository on disk, asked of git itself and never written.

Read once per repository: the index's tracked paths (BS-OPS-02) and the origin
URL (repository identity). Every call sets GIT_OPTIONAL_LOCKS=0 so that git
does not refresh the index, and safe.directory=* so that repositories owned by
other users can still be read.
"""

from __future__ import annotations

import bisect
import os
import subprocess
from functools import cached_property


def _git(repo: str, *args: str) -> subprocess.CompletedProcess[bytes] | None:
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"}
    try:
        return subprocess.run(
            ["git", "-c", "safe.directory=*", "-C", repo, *args],
            capture_output=True,
            env=env,
            timeout=120,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


class GitRepo:
    """A git working tree rooted at `path` (the directory holding `.git`)."""

    def __init__(self, path: str) -> None:
        self.path = path

    @cached_property
    def tracked(self) -> list[str] | None:
        """Sorted paths in the index, relative to the working tree; None when git fails."""
        done = _git(self.path, "ls-files", "-z", "--full-name")
        if done is None or done.returncode != 0:
            return None
        names = done.stdout.decode("utf-8", "surrogateescape").split("\0")
        return sorted(n for n in names if n)

    @cached_property
    def origin(self) -> str | None:
        done = _git(self.path, "config", "--get", "remote.origin.url")
        if done is None or done.returncode != 0:
            return None
        return done.stdout.decode("utf-8", "replace").strip() or None

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


def enclosing_repo(path: str) -> tuple[GitRepo, str] | None:
    """The git working tree holding `path`, and path relative to it; for `census detect`."""
    done = _git(path, "rev-parse", "--show-toplevel")
    if done is None or done.returncode != 0:
        return None
    top = os.path.realpath(done.stdout.decode("utf-8", "surrogateescape").strip())
    rel = os.path.relpath(os.path.realpath(path), top)
    return GitRepo(top), "" if rel == "." else rel.replace(os.sep, "/")
