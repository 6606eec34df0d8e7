"""All terminal output lives in this package (one module per report).

Diffs and machine-readable reports go to stdout; tables, progress and warnings to stderr.
``NO_COLOR`` and ``--color`` are respected through the consoles built here.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from typing import Callable, Iterator, Optional

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


def interrupted(signum: int) -> None:
    """The one line after SIGINT/SIGTERM (exit 130/143 follows); temp folders are gone by now."""
    what = "interrupted" if signum == signal.SIGINT else f"stopped by {signal.Signals(signum).name}"
    stderr().print(f"{what}; cleaned up", markup=False)


def print_version(tool: str, triton: str) -> None:
    stdout().print(f"autotune-rewrite {tool} (triton {triton})", markup=False)


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


def heartbeat_seconds() -> float:
    """Seconds between heartbeat lines in logs (``AUTOTUNE_REWRITE_HEARTBEAT_S``; 0 = none)."""
    try:
        return max(0.0, float(os.environ.get("AUTOTUNE_REWRITE_HEARTBEAT_S", "10")))
    except ValueError:
        return 10.0


@contextlib.contextmanager
def _heartbeat(label: str, unit: str, before: str) -> Iterator[Callable[[int, int], None]]:
    """A CI log gets no bar, but a silent ten-minute compile looks hung: every few seconds one
    plain line (``compiling 37/120 configs, 40 s``) from a daemon thread, so a single long
    compile between two progress calls still shows the run is alive."""
    state = {"done": 0, "total": None}
    start = time.monotonic()
    stop = threading.Event()
    interval = heartbeat_seconds()
    console = stderr()

    def beat() -> None:
        while not stop.wait(interval):
            seconds = int(time.monotonic() - start)
            total = state["total"]
            if total:
                line = f"{label} {state['done']}/{total}{' ' + unit if unit else ''}, {seconds} s"
            else:  # nothing counted yet: say what the run is doing instead
                line = f"{before or label}, {seconds} s"
            console.print(line, markup=False, highlight=False)

    def update(done: int, total: int) -> None:
        state.update(done=done, total=total)

    thread = threading.Thread(target=beat, name="autotune-rewrite-heartbeat", daemon=True)
    if interval > 0:
        thread.start()
    try:
        yield update
    finally:
        stop.set()
        if thread.is_alive():
            thread.join(timeout=1)


@contextlib.contextmanager
def progress_bar(label: str, unit: str = "", before: str = "") -> Iterator[Optional[Callable[[int, int], None]]]:
    """A ``(done, total)`` callback drawing a transient bar on stderr when it is a terminal;
    otherwise (pipes, CI logs: no escape codes) a heartbeat line every few seconds. ``before``:
    what the heartbeat says while nothing has been counted yet."""
    if not sys.stderr.isatty():
        with _heartbeat(label, unit, before) as update:
            yield update
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    with Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), console=stderr(),
                  transient=True) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update
