"""What every worker process of a crawl runs first, in a module of its own: a spawned worker
imports the module of its initializer, and the workers that only check stamps (memo.confirm)
then start without the crawl's imports (0.1–0.2 s each, on the unchanged rerun's path)."""

from __future__ import annotations

import os
import signal
import sys


def die_with_parent(parent: int) -> None:
    """A worker ends with the crawl that started it: a crawl killed outright (a scheduler's
    `timeout -s KILL`) cannot stop its workers, which ran on without it, holding pipes."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent died before the line above
        os._exit(1)
    # Ctrl-C reaches the whole process group: the crawl stops its workers itself. A worker
    # interrupted mid-reply printed its traceback, and once left the pool hung on half a reply.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
