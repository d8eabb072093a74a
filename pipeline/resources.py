"""Where the SQL, templates and example corpus live: beside the package in a wheel,
at the repository root in a checkout."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
_CHECKOUT = _PACKAGE.parent


def _find(name: str, installed: str) -> Path:
    inside = _PACKAGE / "_resources" / installed
    return inside if inside.is_dir() else _CHECKOUT / name


def one_statement(text: str) -> str:
    """A query file's text as one statement that other SQL can wrap: trailing comment lines and
    the final ; dropped, and a newline after a last line that ends in a -- comment, which would
    otherwise swallow the wrapper's closing parenthesis."""
    lines = text.strip().splitlines()
    while lines and lines[-1].lstrip().startswith("--"):
        lines.pop()
    body = "\n".join(lines).strip().rstrip(";")
    return body + "\n" if "--" in body[body.rfind("\n") + 1 :] else body


def queries_dir() -> Path:
    return _find("queries", "queries")


def reports_dir() -> Path:
    return _find("reports", "reports")


def example_corpus() -> Path:
    return _find("fixtures/example", "example")
