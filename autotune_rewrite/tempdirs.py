"""The one owner of the tool's temporary folders.

Every scratch folder (compile scratch, re-check copies, apply worktrees, capture hooks) is made
here, named ``autotune-rewrite-<kind>-<pid>-<random>`` so that it is recognisably ours and says
which process owns it. Each is removed when its ``with`` block ends (normally, by an exception,
or by the exception that SIGINT/SIGTERM raise, see ``interrupts``); ``remove_all`` is the
backstop the CLI calls after an interrupt. A SIGKILL runs no code at all, so the first temp
folder a later run makes first sweeps away our folders whose owning process is dead.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Iterator

PREFIX = "autotune-rewrite-"
_NAME = re.compile(rf"^{re.escape(PREFIX)}([a-z]+)-(\d+)-")

_live: dict[Path, None] = {}  # insertion-ordered set of the folders this process owns now
_swept = False


def owner_pid(path: Path | str) -> int | None:
    """The pid recorded in one of our temp folder names (None for any other name)."""
    m = _NAME.match(Path(path).name)
    return int(m.group(2)) if m else None


def owner_kind(path: Path | str) -> str | None:
    """The kind (``apply``, ``recheck``, ...) in one of our temp folder names."""
    m = _NAME.match(Path(path).name)
    return m.group(1) if m else None


def pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, someone else's
        return True
    return True


def is_stale(path: Path | str) -> bool:
    """Ours, and its owning process is gone (killed with SIGKILL, or the machine rebooted)."""
    pid = owner_pid(path)
    return pid is not None and not pid_alive(pid)


def sweep_stale(base: Path | None = None) -> list[Path]:
    """Remove our folders under ``base`` (default: the temp folder) whose owner is dead."""
    base = Path(base or tempfile.gettempdir())
    removed = []
    try:
        entries = list(base.iterdir())
    except OSError:
        return removed
    for entry in entries:
        if entry.is_dir() and not entry.is_symlink() and is_stale(entry):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


def make(kind: str) -> Path:
    """A new folder of ours, registered for removal; prefer ``temp_dir`` (a ``with`` block)."""
    global _swept
    if not _swept:
        _swept = True
        sweep_stale()
    path = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{kind}-{os.getpid()}-"))
    _live[path] = None
    return path


def remove(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
    _live.pop(path, None)


@contextlib.contextmanager
def temp_dir(kind: str) -> Iterator[Path]:
    path = make(kind)
    try:
        yield path
    finally:
        remove(path)


def live() -> list[Path]:
    return list(_live)


def remove_all() -> None:
    """Remove every folder this process still owns (after an interrupt, newest first)."""
    for path in reversed(list(_live)):
        remove(path)


__all__ = ["PREFIX", "is_stale", "live", "make", "owner_kind", "owner_pid", "remove", "remove_all", "sweep_stale", "temp_dir"]
