"""Where the SQL, templates and example corpus live: beside the package in a wheel,
at the repository root in a checkout."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
_CHECKOUT = _PACKAGE.parent


def _find(name: str, installed: str) -> Path:
    inside = _PACKAGE / "_resources" / installed
    return inside if inside.is_dir() else _CHECKOUT / name


def queries_dir() -> Path:
    return _find("queries", "queries")


def reports_dir() -> Path:
    return _find("reports", "reports")


def example_corpus() -> Path:
    return _find("fixtures/example", "example")
