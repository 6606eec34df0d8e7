"""Run the real CLI (``python -m autotune_rewrite ...``) for a test, in this process by default.

Why in process: a CLI subprocess pays about 1.5 s of interpreter start and imports (LibCST,
Typer, rich, Triton) before it does any work, and the suite runs some two hundred of them. In
process, the command runs through the same ``cli.main`` (argument parsing, the crash backstop,
the SIGINT/SIGTERM handling, the exit code) with this test's working folder, environment and
``argv``, and its stdout/stderr captured as bytes, exactly as a pipe would get them.

What a process would give each run fresh is put back afterwards: the environment, the working
folder, ``sys.argv``, the signal handlers and unraisable hook that ``interrupts.install`` sets,
and the tool's own once-per-process state (the colour choice, the stale-folder sweep, the bytes
written counter). The caches the tool keeps in memory are keyed by content, so a file edited
between two runs is read again.

Tests about the process itself (signals, a piped log's escape codes, user state outside the
test's folders, a crash injected with ``-c``) keep running a real subprocess (``isolated=True``
or their own ``subprocess`` calls); ``AUTOTUNE_REWRITE_TEST_SUBPROCESS=1`` runs every CLI call
as a subprocess, for a fully faithful run of the suite.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Mapping, Sequence

from repo_env import pythonpath

_SIGNALS = (signal.SIGINT, signal.SIGTERM)
IN_PROCESS_LIMIT_S = 600.0  # a run given no timeout: long past any test's, short of a hung CI job


class _Deadline(BaseException):
    """Raised by SIGALRM at a run's time limit: a BaseException, so the CLI's crash backstop
    (which catches Exception) lets it through, as a subprocess's kill would end it."""


def run(args: Sequence[object], *, cwd: Path | str | None = None, env: Mapping[str, str] | None = None,
        text: bool = True, timeout: float | None = None, isolated: bool = False) -> subprocess.CompletedProcess:
    """``autotune-rewrite *args`` as ``subprocess.run(..., capture_output=True)`` would return it.
    ``env``: the whole environment of the run (default: this process's); ``text``: decode both
    streams with universal newlines, as ``subprocess`` does; ``timeout``: seconds, then
    ``subprocess.TimeoutExpired`` (in process: SIGALRM, ``IN_PROCESS_LIMIT_S`` when not given).
    In process needs the main thread (signals), as pytest's is."""
    argv = [str(a) for a in args]
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = pythonpath(env=env)
    if isolated or os.environ.get("AUTOTUNE_REWRITE_TEST_SUBPROCESS") == "1":
        return subprocess.run([sys.executable, "-m", "autotune_rewrite", *argv], cwd=cwd, env=env,
                              capture_output=True, text=text, timeout=timeout)
    code, stdout, stderr = _in_process(argv, cwd, env, timeout or IN_PROCESS_LIMIT_S)
    if text:
        stdout, stderr = _universal(stdout), _universal(stderr)
    return subprocess.CompletedProcess([sys.executable, "-m", "autotune_rewrite", *argv], code, stdout, stderr)


def _universal(raw: bytes) -> str:
    return raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


def _in_process(argv: list[str], cwd, env: dict[str, str], limit: float) -> tuple[int, bytes, bytes]:
    from autotune_rewrite import cli, disk_cache, output, tempdirs

    def deadline(signum, frame):
        raise _Deadline()

    saved_env, saved_cwd, saved_argv = dict(os.environ), os.getcwd(), sys.argv
    saved_streams = sys.stdout, sys.stderr
    saved_handlers = {sig: signal.getsignal(sig) for sig in _SIGNALS}
    saved_hook = sys.unraisablehook
    saved_alarm = signal.signal(signal.SIGALRM, deadline)
    signal.setitimer(signal.ITIMER_REAL, limit)
    out, err = io.BytesIO(), io.BytesIO()
    # newline="": bytes as written (a CRLF file's diff keeps its \r\n), as a pipe gets them.
    sys.stdout = io.TextIOWrapper(out, encoding="utf-8", newline="", write_through=True)
    sys.stderr = io.TextIOWrapper(err, encoding="utf-8", newline="", write_through=True)
    os.environ.clear()
    os.environ.update(env)
    if cwd is not None:
        os.chdir(cwd)
    sys.argv = ["autotune-rewrite", *argv]
    output._color, tempdirs._swept, disk_cache._written = None, False, 0
    code = 0
    try:
        cli.main()
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    except _Deadline:
        tempdirs.remove_all()
        raise subprocess.TimeoutExpired(["autotune-rewrite", *argv], limit) from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, saved_alarm)
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
            stream.detach()  # the BytesIO stays open and readable
        sys.stdout, sys.stderr = saved_streams
        for sig, handler in saved_handlers.items():
            signal.signal(sig, handler)
        sys.unraisablehook = saved_hook
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        output._color = None
    return code, out.getvalue(), err.getvalue()


__all__ = ["run"]
