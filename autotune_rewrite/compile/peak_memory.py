"""The memory one compile took: the worker's peak resident set during it, and ptxas's.

A compile worker is reused for many jobs, and the kernel's high-water mark (``VmHWM``) is a
lifetime figure; Linux resets it when "5" is written to ``/proc/self/clear_refs``, so the mark
read after a job is that job's peak. ptxas runs as a child process: the largest child's resident
set (``RUSAGE_CHILDREN``) only says something when this job raised it. Where the reset is not
possible (not Linux, no permission) no figure is given rather than a lifetime one."""

from __future__ import annotations

import resource
from contextlib import contextmanager
from collections.abc import Iterator


def _reset() -> bool:
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def proc_mb(path: str, field: str) -> int | None:
    """A kB field of a ``/proc`` file (``VmHWM`` of ``/proc/self/status``, ``MemAvailable`` of
    ``/proc/meminfo``) in MB; None where it cannot be read."""
    try:
        with open(path, encoding="ascii") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _high_water_mb() -> int | None:
    return proc_mb("/proc/self/status", "VmHWM")


def _children_mb() -> int:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024  # Linux: kilobytes


@contextmanager
def measured() -> Iterator[list]:
    """``with measured() as peak:`` then ``peak[0]``: the block's peak resident set in MB (the
    process's, or a child's when one this block ran went higher), or None when not measurable."""
    out: list = [None]
    fresh, children = _reset(), _children_mb()
    try:
        yield out
    finally:
        mine = _high_water_mb() if fresh else None
        child = _children_mb()
        out[0] = None if mine is None else max(mine, child) if child > children else mine


__all__ = ["measured", "proc_mb"]
