"""Where a run's time goes, by stage: what ``benchmarks/first_verdict.py`` reports.

``with stopwatch.stage("bundles"): ...`` adds the block's wall and CPU seconds (this process
only) to that stage. Stages nest, and time goes to the innermost one, so the stages of a run
add up to its total without counting anything twice (a report built inside "compile_wait" is
counted under "reports"). Costs two clock reads per block; nothing is printed by the tool.
Process-wide on purpose: the stages happen in several modules, and threading a timer through
every signature would be noise in code that does not care.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

_totals: dict[str, list[float]] = {}  # stage -> [wall, cpu]
_stack: list[list] = []  # [name, wall start, cpu start] of the open stages, innermost last


def _now() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _charge(frame: list, wall: float, cpu: float) -> None:
    total = _totals.setdefault(frame[0], [0.0, 0.0])
    total[0] += wall - frame[1]
    total[1] += cpu - frame[2]


@contextlib.contextmanager
def stage(name: str) -> Iterator[None]:
    wall, cpu = _now()
    if _stack:  # pause the enclosing stage
        _charge(_stack[-1], wall, cpu)
    _stack.append([name, wall, cpu])
    try:
        yield
    finally:
        wall, cpu = _now()
        _charge(_stack.pop(), wall, cpu)
        if _stack:  # resume it
            _stack[-1][1:] = [wall, cpu]


def reset() -> None:
    _totals.clear()


def totals() -> dict[str, dict[str, float]]:
    """``{stage: {"wall_s", "cpu_s"}}`` since the last ``reset``."""
    return {k: {"wall_s": round(w, 3), "cpu_s": round(c, 3)} for k, (w, c) in _totals.items()}


__all__ = ["reset", "stage", "totals"]
