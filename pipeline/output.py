"""The files a user names (report --html, --sarif, sql --output), written as a shell's `>` would
write them, but whole: never a file beside them, nor the link or pipe in their place.

A regular file, or none yet, is replaced in one rename of a temporary file of census's own
beside it, so a reader sees the old content or the new, never half; a link is followed, so
the file it names is replaced and the link stays; a pipe or a device is written straight into.
Kept free of heavy imports: `census detect --sarif` writes through it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO

# A name no user file has: a dot file with this suffix, unique per write (created O_EXCL).
TEMP_SUFFIX = ".census-tmp"


@contextmanager
def written(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """A binary file whose content becomes `path`'s when the block ends without an error; an
    OSError raised inside names `path` as the user gave it."""
    named = os.fspath(path)
    target = os.path.realpath(named)
    try:
        try:
            mode: int | None = os.stat(target).st_mode
        except FileNotFoundError:
            mode = None
        if mode is not None and not stat.S_ISREG(mode):
            with open(target, "wb") as handle:
                yield handle
            return
        folder, name = os.path.split(target)
        # The name's start only: the temporary name must fit the file system's limit as the
        # user's did (32 characters are at most 128 bytes).
        temp = f".{name[:32]}.{os.getpid()}-{os.urandom(4).hex()}{TEMP_SUFFIX}"
        temp = os.path.join(folder, temp)
        # 0o666 less the umask, as for any new file; a file replaced keeps its own mode.
        handle = os.fdopen(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), "wb")
        try:
            with handle:
                if mode is not None:
                    os.fchmod(handle.fileno(), stat.S_IMODE(mode))
                yield handle
            os.replace(temp, target)
        except BaseException:
            os.unlink(temp)
            raise
    except OSError as err:
        # The user's path, not census's temporary file or where a link leads.
        err.filename, err.filename2 = named, None
        raise
