"""The errors a user can act on; the CLI prints each as one line and exits 2."""

from __future__ import annotations

from pipeline.compare import SelectorError
from pipeline.rules import RuleFileError
from pipeline.sources import RootError
from pipeline.stats import StatsError
from pipeline.store import OutError

KNOWN: tuple[type[Exception], ...] = (RootError, OutError, RuleFileError, StatsError, SelectorError)
