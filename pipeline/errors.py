"""The errors a user can act on, defined in one place: the CLI prints any of them as one
line on stderr and exits 2. Kept free of imports so every module, and `census detect`, can
raise them cheaply."""

from __future__ import annotations


class CensusError(Exception):
    """Something the user can fix: the message says what, where, and what to do."""


class RootError(CensusError):
    """A root that cannot be crawled at all."""


class OutError(CensusError):
    """OUT cannot be used (locked, not a census output, unwritable, damaged)."""


class RuleFileError(CensusError):
    """A rule file whose header is not what the rules loader needs."""


class SelectorError(CensusError):
    """A run, census point or label selector that matches nothing in OUT."""


class UnusableInput(CensusError):
    """`census detect` was given something that is not a session folder."""


class UsageError(CensusError):
    """Options that do not fit together or name nothing (a metric, a prune, a query)."""
