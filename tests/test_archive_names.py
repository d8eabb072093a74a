"""Archive members named with `..` anywhere are refused (docs/errors.md, `unsafe-member`).

tests/test_bad_input.py covers names that climb out of the archive (`../x`, `/etc/x`,
`a/../../x`); these names stay inside once normalised, so only the rule "a `..` segment
anywhere is refused" stops them. It matters: `control/docs/../docs/…/forks.md` normalises to
the control session's own forks.md, and, were it read, would replace that file's content.
"""

from __future__ import annotations

import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.test_bad_input import (  # noqa: F401  (control_counts is a fixture)
    SESSION,
    add_control,
    add_member,
    assert_control_read,
    control_counts,
    crawl_unchanged,
    issues,
    ordered,
    zip_control,
)

SHADOW = f"control/docs/../{SESSION}/forks.md"
INSIDE = ("control/../control/README.md", SHADOW, "control/docs/..")
HOSTILE_FORKS = b"# Forks\n\n## F99 - shadowed [open]\n- Raised by: user\n- Closes when: never\n"


@pytest.mark.parametrize("kind", ["tar.gz", "zip"])
def test_dot_dot_inside_a_member_name_is_refused(
    tmp_path: Path,
    control_counts: dict[str, int],  # noqa: F811
    kind: str,
) -> None:
    holder = tmp_path / "in"
    holder.mkdir()
    archive = holder / f"corpus.{kind}"
    if kind == "zip":
        with zipfile.ZipFile(archive, "w") as zf:
            zip_control(zf)
            for name in INSIDE:
                zf.writestr(zipfile.ZipInfo(name), HOSTILE_FORKS)
    else:
        with tarfile.open(archive, "w:gz") as tar:
            add_control(tar)
            for name in INSIDE:
                add_member(tar, name, HOSTILE_FORKS)
    con = crawl_unchanged([archive], holder, tmp_path / "out")
    assert issues(con) == ordered(
        [(None, f"{archive}:{name}", None, "unsafe-member") for name in INSIDE]
    )
    # The control's forks.md is its own, not the member that named it with `..`.
    assert con.execute("SELECT count(*) FROM forks WHERE fork_id = 'F99'").fetchone()[0] == 0
    assert_control_read(con, control_counts, repo=f"corpus.{kind}:control")
