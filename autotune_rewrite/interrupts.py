"""SIGINT and SIGTERM end a run cleanly: every ``finally`` runs, one line is printed, exit 130/143.

Why an exception of our own rather than Python's KeyboardInterrupt: Click (under Typer) turns
KeyboardInterrupt into "Aborted!" and exit 1, and exit 1 means "changes found" here. The
``Interrupted`` exception derives from BaseException, so no ``except Exception`` in the pipeline
or in a library swallows it, and the ``with``/``finally`` blocks that own temp folders and
worktrees unwind as for any error. A second signal while that cleanup runs is ignored (it would
otherwise cut the cleanup short); SIGKILL is the user's way to stop a stuck cleanup, and the next
run sweeps what it left (``tempdirs.sweep_stale``, ``apply``'s worktree pruning).

``deferred()`` holds signals back over a few lines that must not be cut in half (the branch
transaction and the PR bodies after it); the signal is honoured when the block ends.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
from typing import Callable, Iterator

from autotune_rewrite import tempdirs

_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


class Interrupted(BaseException):
    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum  # the shell's convention: 130 for SIGINT, 143 for SIGTERM


_state = {"raised": False, "pending": None, "defer": 0, "pid": None}


def _handler(signum, frame) -> None:
    if _state["pid"] is not None and os.getpid() != _state["pid"]:
        # A forked pool worker between the fork and ``reset_in_child``: it still has this handler,
        # and an ``Interrupted`` raised there prints multiprocessing's traceback. Do what
        # ``reset_in_child`` would: ignore the terminal's SIGINT, die quietly on SIGTERM.
        if signum != signal.SIGINT:
            os._exit(128 + signum)
        return
    if _state["raised"]:
        return  # cleanup in progress: let it finish
    if _state["defer"]:
        _state["pending"] = signum
        return
    _state["raised"] = True
    raise Interrupted(signum)


def _unraisable(hook: Callable) -> Callable:
    """A signal that lands inside a callback Python cannot raise from (an at-fork handler, a
    ``__del__``) turns ``Interrupted`` into "Exception ignored ... Traceback" and the run would go
    on to exit 0. Stay silent and deliver the signal again a moment later, from another thread:
    the handler then raises in the main thread's next code, where every ``finally`` sees it (a
    signal sent from inside this hook would be handled inside it, unraisable again)."""

    def on_unraisable(info) -> None:
        if isinstance(info.exc_value, Interrupted):
            _state["raised"] = False
            again = threading.Timer(0.01, os.kill, (os.getpid(), info.exc_value.signum))
            again.daemon = True
            again.start()
            return
        hook(info)

    return on_unraisable


def install() -> None:
    """Route SIGINT/SIGTERM to ``Interrupted`` (call once, in the main thread, from the CLI)."""
    _state.update(raised=False, pending=None, defer=0, pid=os.getpid())
    for sig in _SIGNALS:
        signal.signal(sig, _handler)
    sys.unraisablehook = _unraisable(sys.__unraisablehook__)


def reset_in_child(parent: int | None = None) -> None:
    """For pool worker processes: the parent decides. SIGINT from the terminal is ignored
    (no KeyboardInterrupt tracebacks from children); SIGTERM, which the parent sends to stop
    them, kills silently. On Linux a worker also gets SIGTERM when the process that started it
    dies: a pool worker waits for work forever, so a SIGKILLed parent would otherwise leave it
    running. ``parent``: the pid a forked worker must still have as its parent (else it died
    before the prctl took effect); None where a fork server started the worker (the server
    ends when the tool does, and its workers with it)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        except (OSError, AttributeError):
            pass
        if parent is not None and os.getppid() != parent:
            os._exit(1)


def process_pool(max_workers: int, context=None):
    """A ``ProcessPoolExecutor`` whose workers leave signals to this process and die with it
    (``reset_in_child``). Every pool of the tool is made here: a worker without it waits on its
    queue forever once a SIGKILL ends the tool (a forked worker holds both ends of the queue's
    pipe, so it never sees EOF), keeping the caller's pipes open. ``context``: a multiprocessing
    context (default: the platform's)."""
    import concurrent.futures as cf
    import multiprocessing

    context = context if context is not None else multiprocessing.get_context()
    # A forked worker's parent is this process; a fork server's worker's parent is the server.
    parent = os.getpid() if context.get_start_method() == "fork" else None
    return cf.ProcessPoolExecutor(max_workers=max_workers, mp_context=context, initializer=reset_in_child,
                                  initargs=(parent,))


def stop_pool(pool) -> None:
    """Ctrl-C, SIGTERM or a bug: drop the queue and end the running work now (a ``with`` block,
    ``shutdown()``, or the interpreter's exit hook would wait for it). Safe on a pool the signal
    caught half started (its manager thread created, not yet running)."""
    terminate = getattr(pool, "terminate_workers", None)  # Python 3.14+
    if terminate is not None:
        terminate()
        pool.shutdown(wait=False, cancel_futures=True)
        return
    # Before shutdown(), which forgets the processes: a worker still compiling would otherwise
    # write into the scratch folder after it is removed.
    procs = list((getattr(pool, "_processes", None) or {}).values())
    try:
        pool.shutdown(wait=False, cancel_futures=True)
    except RuntimeError:  # "cannot join thread before it is started": nothing to wait for
        pass
    for proc in procs:
        if proc.is_alive():
            proc.terminate()
    for proc in procs:
        proc.join(timeout=5)


def found_in(exc: BaseException) -> Interrupted | None:
    """The ``Interrupted`` that ``exc`` wraps, if any. Python wraps an exception raised while a
    class is created (``__set_name__``) in a RuntimeError, and libraries wrap theirs: a signal
    landing there is still the user's Ctrl-C, not a bug of ours."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, Interrupted):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    _state["defer"] += 1
    try:
        yield
    finally:
        _state["defer"] -= 1
        pending = _state["pending"]
        if not _state["defer"] and pending is not None and not _state["raised"]:
            _state["pending"] = None
            _state["raised"] = True
            raise Interrupted(pending)


def run(entry: Callable[[], object], report: Callable[[int], None]) -> None:
    """Run the CLI ``entry``; on SIGINT/SIGTERM remove what is left, ``report`` the signal, exit."""
    install()
    try:
        entry()
    except Interrupted as stop:
        _ignore()  # nothing may cut the last cleanup short
        tempdirs.remove_all()
        report(stop.signum)
        raise SystemExit(stop.exit_code) from None
    finally:
        # The command's result is complete (or reported): a signal during interpreter shutdown
        # (joining pool workers, flushing output) must not turn its exit code into a kill.
        _ignore()


def _ignore() -> None:
    for sig in _SIGNALS:
        signal.signal(sig, signal.SIG_IGN)


__all__ = ["Interrupted", "deferred", "found_in", "install", "process_pool", "reset_in_child", "run", "stop_pool"]
