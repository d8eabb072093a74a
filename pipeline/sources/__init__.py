"""Read-only views of a crawl root as a tree of relative paths: directories, archives, git."""

from __future__ import annotations

import os
from pathlib import Path

from pipeline.errors import RootError
from pipeline.sources.archive import ARCHIVE_SUFFIXES, ArchiveTree
from pipeline.sources.tree import DirTree, Tree, storable_name


def open_root(root: str, out: str | None = None) -> Tree:
    """The root as a tree; a directory root leaves OUT out when OUT lies inside it."""
    path = Path(root)
    if not path.exists():
        raise RootError(
            f"root {root!r} does not exist; give a directory, git repository or archive"
        )
    # A root the user cannot list or read holds no session as far as the crawl can tell:
    # that is no night with nothing in it, so it stops before any write.
    if not os.access(path, os.R_OK | (os.X_OK if path.is_dir() else 0)):
        raise RootError(f"permission denied on root {root!r}; give this user access to it")
    real = os.path.realpath(root)
    if storable_name(real) != real:
        # The root's absolute path names its repositories and is stored: both need UTF-8.
        raise RootError(
            f"root {storable_name(root)!r} lies at {storable_name(real)!r}, a path that is not "
            "UTF-8 text; rename the folder, or crawl from a path that is UTF-8"
        )
    if path.is_dir():
        return DirTree(root, out)
    if path.name.lower().endswith(ARCHIVE_SUFFIXES):
        if not path.is_file():
            # A FIFO or device named like an archive: reading it would wait for ever.
            raise RootError(f"root {root!r} is not a regular file; an archive root must be one")
        return ArchiveTree(root)
    raise RootError(
        f"root {root!r} is a file but not an archive; use .tar, .tar.gz, .tgz, .tar.bz2, "
        ".tar.xz or .zip"
    )
