"""How numbers and tables look, in one place: the CLI, the report and the JSON's text fields
all format a rate, an interval or a duration with these functions.

Never a negative zero (a Wilson bound of -1e-17 is 0%, a difference of -0.0001 is 0.0%), never
a share strictly between 0 and 1 shown as 0.0% or 100.0% (1 of 3,000 is 0.03%), never a value
shown cut: a table where it fits the terminal (or COLUMNS), else one block per row.
"""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Sequence
from typing import Any

from pipeline.visible import visible

NOT_REACHED = "not reached"
DASH = "–"
# Width for output that goes to a pipe or a file with no COLUMNS: wide enough for every table.
PIPE_WIDTH = 160


def reads_zero(text: str) -> bool:
    """Whether a formatted value shows as zero ('0.0%', '-0.00 h'): no digit but 0 in it."""
    return not any(c in "123456789" for c in text)


def _unsigned_zero(text: str) -> str:
    """'-0.0%' → '0.0%', '+0.0 h' → '0.0 h': a value that rounds to zero has no sign."""
    if text[:1] in "+-" and reads_zero(text):
        return text[1:]
    return text


def pct(value: float | None, digits: int = 1, signed: bool = False) -> str:
    if value is None:
        return DASH
    text = _unsigned_zero(f"{value:{'+' if signed else ''}.{digits}%}")
    # A share strictly between none and all (1 of 3,000 failing, 2,999 of 3,000) never reads
    # as 0.0% or 100.0%: it takes the fewest decimals that show it is neither.
    rounded = reads_zero(text) or text.startswith("100")
    if not signed and 0 < value < 1 and rounded and digits < EXACT_DIGITS:
        return pct(value, digits + 1)
    return text


# The most decimals a rate is given with to show it is neither 0% nor 100%, or an interval's
# end to show its sign.
EXACT_DIGITS = 6
# The most decimals a threshold, or a rate shown beside it, is given with: as many as a float
# holds, so a threshold written with more than six never reads as a rate above itself.
THRESHOLD_DIGITS = 17


def pct_exact(value: float) -> str:
    """A rate the user gave (a --fail-above threshold) with the fewest decimals, from one, that
    read back as it: 0.0536 is '5.36%', not the '5.4%' a rate above it may round to."""
    for digits in range(1, THRESHOLD_DIGITS):
        text = pct(value, digits)
        # Relative, so that a threshold of 1e-9 never reads back from '0.000000%'.
        if abs(float(text[:-1]) / 100 - value) <= 1e-12 * value:
            return text
    return pct(value, THRESHOLD_DIGITS)


def pct_above(value: float, bound: float) -> str:
    """A rate above `bound` with the fewest decimals, from one, at which it reads apart from
    it: 5.004% above 5% is '5.004%', never '5.0%' beside '5.0%'."""
    for digits in range(1, THRESHOLD_DIGITS):
        if pct(value, digits) != pct(bound, digits):
            return pct(value, digits)
    return pct(value, THRESHOLD_DIGITS)


def num(value: float | None, digits: int = 1, signed: bool = False, unit: str = "") -> str:
    if value is None:
        return DASH
    text = _unsigned_zero(f"{value:{'+' if signed else ''},.{digits}f}")
    return f"{text} {unit}" if unit else text


def reached(value: float | None, unit: str = "") -> str:
    """A Kaplan–Meier time (a median, a quartile): 'not reached' where the curve never gets
    there (spec §7), never '–', which reads as no data."""
    return NOT_REACHED if value is None else num(value, unit=unit)


def interval(lower: float | None, upper: float | None) -> str:
    """A percentage interval: '3.6% – 62.4%' (a difference's: difference_interval)."""
    if lower is None or upper is None:
        return DASH
    return f"{pct(lower)} – {pct(upper)}"


def difference_interval(
    lower: float | None, upper: float | None, hours: bool = False, measured: bool = False
) -> str:
    """A compared metric's interval for its difference: '+1.2% … +7.9%' for a rate,
    '+2.2 h … +20.2 h' for the fork-lifetime median, whose ends may be unbounded (a median
    never reached): '+0.5 h … +∞'. `measured`: both arms measured the metric, so two ends
    left None are both unbounded ('-∞ … +∞'), not an interval never computed ('–')."""
    if lower is None and upper is None and not measured:
        return DASH

    def shown(value: float, digits: int) -> str:
        return num(value, digits, True, "h") if hours else pct(value, digits, signed=True)

    def end(value: float | None, unbounded: str) -> str:
        if value is None:
            return unbounded
        # The verdict reads each end's sign: an end off zero is never shown as zero, so a
        # regression's interval never reads '0.0% … +70.9%' (the fewest decimals that show it).
        for digits in range(1, EXACT_DIGITS):
            if not value or not reads_zero(shown(value, digits)):
                return shown(value, digits)
        return shown(value, EXACT_DIGITS)

    return f"{end(lower, '-∞')} … {end(upper, '+∞')}"


def count_rate(failed: int, evaluated: int, rate: float | None) -> str:
    """'3/25 12.0%', or 'no sessions' when nothing was evaluated."""
    if not evaluated:
        return "no sessions"
    return f"{failed}/{evaluated} {pct(rate)}"


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


def width() -> int:
    """The terminal's width, or COLUMNS; PIPE_WIDTH for a pipe with neither."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    size = shutil.get_terminal_size((0, 0))
    return size.columns if size.columns > 0 else PIPE_WIDTH


def console(file: Any = None) -> Any:
    """A rich console as wide as the terminal; a closed pipe is the CLI's to answer."""
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            # rich would exit 1, which says an alarm tripped; the CLI's standard output never
            # raises this (pipeline.cli._PipeEnd), and any other pipe's error goes on to it.
            raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))

    return _Console(width=width(), file=file, soft_wrap=False, highlight=False)


def table(title: str, columns: Sequence[str], rows: Sequence[Sequence[str]], keys: int = 1) -> Any:
    """A rich table whose first `keys` columns (IDs, names) lead each row; where the table is
    wider than the console, one block per row instead (spec: a value is never shown cut)."""
    return _Fitted(title, list(columns), [list(map(str, r)) for r in rows], keys)


class _Fitted:
    """Decided at printing, when the console's width is known: a table that fits it, else each
    row as a block of `column  value` lines, so no number is cropped or folded."""

    def __init__(self, title: str, columns: list[str], rows: list[list[str]], keys: int) -> None:
        self.title, self.columns, self.rows, self.keys = title, columns, rows, keys

    def _table(self) -> Any:
        from rich import box
        from rich.table import Table
        from rich.text import Text

        # Cells are text, never markup: a label `model=[v2]` lost its value, and `[/]` made
        # stats fail (found by a hunt).
        out = Table(box=box.SIMPLE_HEAD, pad_edge=False)
        for i, column in enumerate(self.columns):
            header = Text(column)
            out.add_column(header, justify="left" if i < self.keys else "right", no_wrap=True)
        for row in self.rows:
            out.add_row(*(Text(visible(cell)) for cell in row))
        return out

    def _blocks(self) -> list[str]:
        label = max((len(c) for c in self.columns[self.keys :]), default=0)
        lines = []
        for row in self.rows:
            lines += ["", visible("  ".join(row[: self.keys]))]
            pairs = zip(self.columns[self.keys :], row[self.keys :], strict=True)
            lines += [f"  {column:<{label}}  {visible(value)}" for column, value in pairs if value]
        return lines

    def __rich_console__(self, console: Any, options: Any) -> Any:
        from rich.measure import Measurement
        from rich.text import Text

        # The title is a line of its own, wrapped at the console's width, not the table's.
        yield Text(visible(self.title))
        shown = self._table()
        # Measured as if the console had no edge: rich clamps a measurement to the width.
        natural = Measurement.get(console, options.update_width(1 << 16), shown).maximum
        if natural <= options.max_width:
            yield shown
        else:
            # A line wider still (a console of 20 columns) wraps at its spaces: never cropped.
            yield from (Text(line, overflow="fold") for line in self._blocks())
