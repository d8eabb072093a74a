"""The README's console examples, run for real and compared row by row.

Which blocks run: every fenced block whose info string is `console`. A line starting `$ ` is
a command; the lines after it, up to the next command or the end of the block, are its
output. A command shown with no output lines is run but its output is not compared (the
README leaves it out); every line the README does show is compared. A block runs in a fresh
folder holding `corpus/` (a copy of fixtures/example, the corpus `census run` uses), with
this checkout's `census` and `python` first on PATH, the checkout on PYTHONPATH (for
`python -m fixtures.generate`) and COLUMNS=200. Its commands run in one bash, in order, so
`echo $?` shows the previous command's exit code. An HTML comment on the line right before
the block may say
    <!-- readme-test: setup: CMD && CMD -->   commands to run first (their output unchecked)
    <!-- readme-test: skip: REASON -->        do not run it (a reason is required)

How output is compared, after normalising what changes from run to run: run ids become
`<run>`, ISO 8601 times `<time>`, durations (`1.21 s`) `<n> s`, sizes (`43 KiB`) `<n> KiB`,
and the working folder's path is dropped. Then table borders and JSON/CSV punctuation
(`{}[],":`) are dropped and the text is compared as a sequence of words, so wrapping and
column widths may differ but every word of every row must be there, in order. A line that
is only `…` stands for any number of lines (an elision), and a line in parentheses is a note
to the reader, not output.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, ROOT

README = ROOT / "README.md"
MARKER = re.compile(r"<!--\s*readme-test:\s*(setup|skip):\s*(.*?)\s*-->")
BORDERS = re.compile(r"[─━│┃┏┓┗┛┡┩┠┨┯┷┿╇╈┳┻╋┌┐└┘├┤┬┴┼═║╔╗╚╝╠╣╦╩╬╭╮╯╰]")
# JSON's and CSV's punctuation separates words, so a JSON object shown on one line matches
# the same object printed with indentation.
PUNCTUATION = re.compile(r'[{}\[\],":]')
NORMALISE = [
    (re.compile(r"\b\d{8}T\d{6}(?:\.\d+)?Z-[0-9a-f]{6}\b"), "<run>"),
    (
        re.compile(
            r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})?)?"
        ),
        "<time>",
    ),
    (re.compile(r"\b\d+(?:\.\d+)? s\b"), "<n> s"),
    (re.compile(r"\b\d+(?:\.\d+)? KiB\b"), "<n> KiB"),
]
ELISION = "…"
SEPARATOR = "@@readme-test-command-done@@"
TIMEOUT = 900


@dataclass
class Command:
    line: str  # the command as the README shows it, without `$ `
    output: list[str] = field(default_factory=list)


@dataclass
class Block:
    number: int  # the README line the block starts on
    commands: list[Command]
    setup: str = ""
    skip: str = ""

    @property
    def name(self) -> str:
        first = self.commands[0].line.split()[:2] if self.commands else ["empty"]
        return f"line{self.number}-{'-'.join(first)}"


def console_blocks(text: str) -> list[Block]:
    """Every ```console block, its commands and outputs, and the marker before it."""
    lines = text.splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        if lines[i].strip() != "```console":
            i += 1
            continue
        before = next((ln for ln in reversed(lines[:i]) if ln.strip()), "")
        marker = MARKER.search(before)
        start, i = i + 1, i + 1
        commands: list[Command] = []
        while i < len(lines) and lines[i].strip() != "```":
            if lines[i].startswith("$ "):
                commands.append(Command(lines[i][2:]))
            elif commands:
                commands[-1].output.append(lines[i])
            i += 1
        block = Block(start, commands)
        if marker and marker.group(1) == "setup":
            block.setup = marker.group(2)
        elif marker:
            block.skip = marker.group(2)
        blocks.append(block)
        i += 1
    return blocks


def normalise(text: str, workdir: Path) -> str:
    text = text.replace(f"{workdir}/", "").replace(str(workdir), ".")
    for pattern, replacement in NORMALISE:
        text = pattern.sub(replacement, text)
    return PUNCTUATION.sub(" ", BORDERS.sub(" ", text))


def segments(lines: list[str], workdir: Path) -> list[list[str] | None]:
    """Expected output as word runs; None where the README elides lines with `…`."""
    found: list[list[str] | None] = [[]]
    for line in lines:
        stripped = line.strip()
        if stripped == ELISION:
            found += [None, []]
        elif stripped.startswith("(") and stripped.endswith(")"):
            continue
        else:
            words = normalise(line, workdir).split()
            last = found[-1]
            assert last is not None
            last.extend(words)
    return [s for s in found if s != []]


def matches(expected: list[list[str] | None], words: list[str]) -> bool:
    """Whether `words` is the expected runs in order, with any words where an elision is."""
    position, free = 0, False
    for run in expected:
        if run is None:
            free = True
            continue
        if free:
            found = next(
                (
                    p
                    for p in range(position, len(words) - len(run) + 1)
                    if words[p : p + len(run)] == run
                ),
                None,
            )
            if found is None:
                return False
            position = found + len(run)
        elif words[position : position + len(run)] == run:
            position += len(run)
        else:
            return False
        free = False
    return free or position == len(words)


def environment() -> dict[str, str]:
    bin_dir = str(Path(sys.executable).parent)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "COV_"))}
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=str(ROOT),
        COLUMNS="200",
        TERM="dumb",
        NO_COLOR="1",
    )
    return env


def run_block(block: Block, workdir: Path) -> list[str]:
    """Each command's output (stdout and stderr, as a terminal shows them), in order."""
    script = ["set -o pipefail"]
    if block.setup:
        script.append(f"{{ {block.setup} ; }} > setup.log 2>&1 || {{ cat setup.log; exit 97; }}")
    for command in block.commands:
        # Print a separator after each command, keeping its exit code for a following `echo $?`.
        script.append(f"{command.line}\n__rc=$?; printf '\\n{SEPARATOR}\\n'; (exit $__rc)")
    done = subprocess.run(
        ["bash", "-c", "\n".join(script)],
        cwd=workdir,
        env=environment(),
        capture_output=False,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode != 97, f"setup failed: {done.stdout}"
    outputs = done.stdout.split(f"\n{SEPARATOR}\n")
    assert len(outputs) == len(block.commands) + 1, done.stdout
    return outputs[:-1]


BLOCKS = console_blocks(README.read_text())


def test_the_readme_has_console_examples_to_run() -> None:
    assert [b for b in BLOCKS if not b.skip], "no README console block is run"
    for block in BLOCKS:
        assert block.commands, f"README line {block.number}: a console block with no `$ ` line"


@pytest.mark.slow
@pytest.mark.parametrize("block", BLOCKS, ids=[b.name for b in BLOCKS])
def test_readme_console_block(block: Block, tmp_path: Path) -> None:
    if block.skip:
        pytest.skip(f"README line {block.number}: {block.skip}")
    workdir = tmp_path / "work"
    workdir.mkdir()
    shutil.copytree(FIXTURES / "example", workdir / "corpus")
    outputs = run_block(block, workdir)
    for command, output in zip(block.commands, outputs, strict=True):
        if not command.output:
            continue  # the README shows no output for it: run, not compared
        expected = segments(command.output, workdir)
        words = normalise(output, workdir).split()
        assert matches(expected, words), (
            f"README line {block.number}: `$ {command.line}` printed\n{output}\n"
            f"which does not match the README's\n" + "\n".join(command.output)
        )


# ───────────────────────────── the harness itself ─────────────────────────────


def test_harness_parses_commands_outputs_and_markers() -> None:
    text = "\n".join(
        [
            "<!-- readme-test: setup: census crawl corpus --out o -->",
            "```console",
            "$ census sql 'SELECT 1' --out o",
            "a,b",
            "1,2",
            "$ echo $?",
            "0",
            "```",
            "<!-- readme-test: skip: needs a cluster -->",
            "",
            "```console",
            "$ census crawl x --scheduler tcp://s:8786",
            "```",
        ]
    )
    first, second = console_blocks(text)
    assert first.setup == "census crawl corpus --out o" and not first.skip
    assert [(c.line, c.output) for c in first.commands] == [
        ("census sql 'SELECT 1' --out o", ["a,b", "1,2"]),
        ("echo $?", ["0"]),
    ]
    assert second.skip == "needs a cluster" and second.commands[0].output == []


def test_harness_normalises_and_elides_but_never_ignores_data(tmp_path: Path) -> None:
    shown = [
        "run 20261129T180228Z-347fe0: 14 sessions, 1.00 s → census-out",
        "┃ rule ┃ rate ┃",
        "│ BS-FORK-01 │ 1/5 20% │",
        ELISION,
        "(shortened here)",
        "done",
    ]
    printed = (
        f"run 20261130T140213.674763Z-c30fda: 14 sessions, 5.61 s → {tmp_path}/census-out\n"
        " rule   rate\n BS-FORK-01   1/5\n 20%\nmore rows\nstill more\ndone\n"
    )
    words = normalise(printed, tmp_path).split()
    assert matches(segments(shown, tmp_path), words)
    garbage = [line.replace("1/5", "9/9") for line in shown]
    assert not matches(segments(garbage, tmp_path), words)
    assert not matches(segments(shown[:3], tmp_path), words), "unshown rows at the end fail"
    assert not matches(segments([*shown, "extra"], tmp_path), words)
