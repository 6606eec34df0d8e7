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
# Triton 3.6's autotuner times each config with do_bench(warmup=25 ms, rep=100 ms), once per value
# of its key; a config that cannot launch is timed as inf at once.
BENCH_S_PER_CONFIG = 0.125


@dataclass(frozen=True)
class FirstUse:
    """What the autotuner pays on one target at a kernel's first use (per key value for the
    benchmark): every config compiled, the launchable ones timed."""

    arch: str
    configs: int
    compile_s: float  # the compiles' own seconds here (a GPU host's are of the same order)
    bench_s: float  # from Triton's do_bench defaults (``BENCH_S_PER_CONFIG``), not a measurement
    at_least: bool  # some compiles stopped early here (at their SMEM), so the autotuner's take longer


def first_use(report: KernelReport) -> tuple[FirstUse, ...]:
    """Per target, what the autotuner pays at the first use of ``report``'s kernel."""
    by_arch: dict[str, list] = {}
    for v in report.verdicts:
        by_arch.setdefault(v.arch, []).append(v)
    return tuple(FirstUse(arch, len(vs), round(sum(v.outcome.seconds for v in vs), 2),
                          round(BENCH_S_PER_CONFIG * sum(1 for v in vs if v.launchable), 3),
                          any(v.outcome.stopped_early or v.over_budget for v in vs))
                 for arch, vs in by_arch.items())


@dataclass(frozen=True)
class SlowCompile:
    kernel: str
    spec: str
    config: str
    arch: str
    seconds: float
    over_budget: bool  # stopped at its budget: it would take longer still
    peak_mb: int | None = None  # the compile's peak resident set, where measured


def slowest(reports: Iterable[KernelReport], over_s: float = SLOW_COMPILE_S,
            n: int = LISTED) -> tuple[SlowCompile, ...]:
    """The ``n`` slowest compiles of at least ``over_s`` seconds, slowest first (one per
    kernel x spec x config x target)."""
    found = [SlowCompile(r.site.ident, r.spec.name if r.spec else "", v.config.label(), v.arch,
                         round(v.outcome.seconds, 2), v.over_budget, v.outcome.peak_mb)
             for r in reports for v in r.verdicts if v.outcome.seconds >= over_s]
    return tuple(sorted(found, key=lambda c: -c.seconds)[:n])


__all__ = ["BENCH_S_PER_CONFIG", "FirstUse", "LISTED", "SLOW_COMPILE_S", "SlowCompile", "first_use", "slowest"]
