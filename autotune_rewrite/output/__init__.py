"""All terminal output lives in this package (one module per report).

Diffs and machine-readable reports go to stdout; tables, progress and warnings to stderr.
``NO_COLOR`` and ``--color`` are respected through the consoles built here.
"""

from __future__ import annotations

import os
import sys

from rich.console import Console
from rich.measure import Measurement
from rich.markup import escape

_color: bool | None = None  # None = decide from the terminal and NO_COLOR


def set_color(mode: str) -> None:
    """``--color auto|always|never``."""
    global _color
    _color = {"auto": None, "always": True, "never": False}[mode]


def _no_color() -> bool:
    if _color is not None:
        return not _color
    return bool(os.environ.get("NO_COLOR"))


def stdout() -> Console:
    return Console(
        file=sys.stdout,
        no_color=_no_color(),
        force_terminal=True if _color else None,
        highlight=False,
        soft_wrap=True,
    )


def stderr() -> Console:
    return Console(
        file=sys.stderr,
        no_color=_no_color(),
        force_terminal=True if _color else None,
        highlight=False,
        soft_wrap=True,
    )


def error(message: str) -> None:
    """The one-line error for bad input (exit code 2 follows)."""
    stderr().print(f"[bold red]error:[/] {escape(message)}", markup=True)


def warning(message: str) -> None:
    stderr().print(f"[yellow]warning:[/] {escape(message)}", markup=True)


def write_raw(text: str) -> None:
    """Exact bytes to stdout (diffs, JSON): no rich markup, no wrapping."""
    sys.stdout.write(text)
    sys.stdout.flush()


def print_unwrapped(console: Console, renderable) -> None:
    """Print a table without folding or truncating any cell: widen past the terminal (or the 80
    columns rich assumes for a pipe) when the table needs it. Numbers are never cut."""
    needed = Measurement.get(console, console.options.update(max_width=1000), renderable).maximum
    console.width = max(console.width, needed)
    console.print(renderable)
