"""`census hook FILES…`: the pre-commit entry point (.pre-commit-hooks.yaml).

pre-commit passes the staged file names; each session folder they lie in
(`docs/research/{topic}-brainstorm/…` or `docs/history/brainstorms/{topic}/…`) is checked
once with `census detect` at the gate asked for. Kept as light as detect: no pandas or pyarrow.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

from pipeline.discover import sessions_holding
from pipeline.errors import CensusError


def session_folders(files: Iterable[str]) -> list[str]:
    """The session folders the files lie in, each once, in the order first named."""
    folders: dict[str, None] = {}
    for name in files:
        parts = name.replace(os.sep, "/").split("/")
        for _, depth, _, _ in sessions_holding(parts, os.path.isdir(name)):
            folders.setdefault("/".join(parts[:depth]), None)
    return list(folders)


def run_hook(files: Iterable[str], gate: str, echo: Callable[[str, bool], None]) -> int:
    """Detect on every session folder the files name; prints detect's lines under a line per
    folder. Exit code: 0 all clean, 1 a folder fails, 2 a folder could not be checked."""
    from pipeline.detect import detect, format_lines

    code = 0
    for folder in session_folders(files):
        try:
            found = detect(folder, gate)
        except CensusError as err:
            echo(f"census: {err}", True)
            code = 2
            continue
        echo(f"census detect {folder} --gate {gate}: {found.result}", False)
        if found.result == "failing":
            for line in format_lines(found):
                echo(f"  {line}", False)
            code = max(code, 1)
    return code
