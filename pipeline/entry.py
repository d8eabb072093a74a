"""The `census` console script (pyproject.toml): loads the CLI, and answers a Ctrl-C that
comes while it loads, before `pipeline.cli.main` can, with one line instead of a traceback."""

from __future__ import annotations

import sys


def main() -> None:
    try:
        from pipeline.cli import main as run
    except KeyboardInterrupt:
        # Typer and the census modules take a good part of a `census detect`'s 0.3 s to load.
        sys.stderr.write("census: interrupted before it started; nothing was read or written\n")
        raise SystemExit(130) from None
    run()
