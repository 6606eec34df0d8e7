"""What the compiles cost: the slowest ones of a run, which Triton's autotuner also pays in the
user's serving process, at a kernel's first use (it compiles every config before timing them).

Seconds are the compile's own (``CompileOutcome.seconds``, measured where it ran; a cached
outcome keeps the figure of the run that compiled it), so they hold under the load of that run.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from autotune_rewrite.evidence import KernelReport

SLOW_COMPILE_S = 10.0  # listed from here: ~5x a typical config's compile on one core
LISTED = 5


@dataclass(frozen=True)
class SlowCompile:
    kernel: str
    spec: str
    config: str
    arch: str
    seconds: float
    over_budget: bool  # stopped at its budget: it would take longer still


def slowest(reports: Iterable[KernelReport], over_s: float = SLOW_COMPILE_S, n: int = LISTED) -> tuple[SlowCompile, ...]:
    """The ``n`` slowest compiles of at least ``over_s`` seconds, slowest first (one per
    kernel x spec x config x target)."""
    found = [SlowCompile(r.site.ident, r.spec.name if r.spec else "", v.config.label(), v.arch, v.outcome.seconds,
                         v.over_budget)
             for r in reports for v in r.verdicts if v.outcome.seconds >= over_s]
    return tuple(sorted(found, key=lambda c: -c.seconds)[:n])


__all__ = ["LISTED", "SLOW_COMPILE_S", "SlowCompile", "slowest"]
