"""Under CI (CI=true, as .ci/run is run) the tools that other tests would skip without are
there: a skipped browser test must fail CI instead of passing it quietly."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    os.environ.get("CI", "").lower() not in ("1", "true", "yes"),
    reason="only under CI (CI=true): a developer may run without chromium",
)


def test_chromium_and_playwright_are_there_for_the_browser_tests() -> None:
    from tests.test_report import CHROMIUM

    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: tests/test_report.py would skip"
    import playwright.sync_api  # noqa: F401  (importorskip would skip without it)


def test_setpriv_is_there_for_the_unreadable_file_test() -> None:
    assert os.geteuid() != 0 or shutil.which("setpriv"), "tests/test_permissions.py needs it"
