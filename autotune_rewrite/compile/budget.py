"""A compile's budget in time and memory, enforced in the worker process that runs it.

One config can take minutes to compile (a 64K-element block at one warp: LLVM and ptxas unroll
it), and nothing else bounds a CI job. Triton's autotuner pays the same at first use, so a config
over the budget is a finding, not a hang: its outcome says so (``OVER_BUDGET``), and the kernel
is judged on its other configs.

How it is enforced, in the worker only (a signal there ends that compile and nothing else):
- ``SIGALRM`` at the budget raises ``OverBudget`` in the next Python code the compile runs:
  between Triton's stages, or while it waits for ``ptxas`` (``subprocess.run`` then kills it);
- a stage stuck in C++ (an LLVM pass) runs no Python code: the CPU-time limit ends the worker at
  twice the budget (``RLIMIT_CPU``, SIGXCPU's default action), and the pool's one-job retry tells
  that death from a crash by the time it took (``ran_out``).
``OverBudget`` derives from BaseException so that no ``except Exception`` inside Triton turns it
into a compile error.

Memory: the data limit (``RLIMIT_DATA``: heap and private writable mappings, what a compile
really allocates) of the worker, which ``ptxas`` inherits, so that two ``ptxas`` at 7-8 GB each
cannot take a CI runner down. Not the address-space limit: a parent with CUDA initialized (a
library caller, ``bench``) reserves tens of GB of address space that forked workers inherit and
never use. A compile that meets it fails to allocate: ``ptxas`` says so in its log, Python raises
MemoryError (``out_of_memory`` reads both); LLVM aborts, which the pool reports as a crash. A
budget below what the worker already holds is over at once.
"""

from __future__ import annotations

import contextlib
import re
import signal
from collections.abc import Iterator

from autotune_rewrite.evidence import CompileBudget as Budget

BACKSTOP_FACTOR = 2  # the CPU-time limit, in budgets: a stage in C++ that never returns to Python


class OverBudget(BaseException):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message  # which budget, in words (``over_budget_message``, ``over_memory_message``)


@contextlib.contextmanager
def limited(budget: Budget | None) -> Iterator[None]:
    """Within the block, this process's compile is stopped at ``budget.seconds`` and its address
    space (and its children's) capped at ``budget.memory_mb``. For worker processes only: it
    takes over SIGALRM, the CPU-time and the address-space limits."""
    with _memory_capped(budget.memory_mb if budget else None), _timed(budget.seconds if budget else None):
        yield


@contextlib.contextmanager
def _memory_capped(memory_mb: int | None) -> Iterator[None]:
    import resource

    if not memory_mb:
        yield
        return
    if _data_size() > memory_mb * 2**20:  # already over: no allocation of the compile could succeed
        raise OverBudget(over_memory_message(memory_mb))
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    cap = memory_mb * 2**20
    if hard != resource.RLIM_INFINITY and cap > hard:
        cap = hard
    resource.setrlimit(resource.RLIMIT_DATA, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


@contextlib.contextmanager
def _timed(budget_s: float | None) -> Iterator[None]:
    if not budget_s or budget_s <= 0:
        yield
        return
    import resource

    def expire(signum, frame) -> None:
        raise OverBudget(over_budget_message(budget_s))

    before = signal.signal(signal.SIGALRM, expire)
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    backstop = int(usage.ru_utime + usage.ru_stime + BACKSTOP_FACTOR * budget_s) + 1
    if hard == resource.RLIM_INFINITY or backstop <= hard:
        resource.setrlimit(resource.RLIMIT_CPU, (backstop, hard))
    signal.setitimer(signal.ITIMER_REAL, budget_s)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _data_size() -> int:
    """What this process holds against ``RLIMIT_DATA``, in bytes (``VmData``; 0 where /proc is not there)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmData:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


# What an allocation that met the address-space limit leaves in a compiler message: ptxas's own
# words, C++'s and the C library's.
_NO_MEMORY = re.compile(r"Memory allocation failure|out of memory|std::bad_alloc|Cannot allocate memory", re.I)


def out_of_memory(exc: BaseException, message: str) -> bool:
    """Whether a failed compile ran out of memory (under the memory budget) rather than failing."""
    return isinstance(exc, MemoryError) or bool(_NO_MEMORY.search(f"{exc}\n{message}"))


def ran_out(seconds: float, budget_s: float | None) -> bool:
    """Whether a worker that died after ``seconds`` on a job with ``budget_s`` hit the budget's
    backstop rather than crashing (it cannot have been the backstop before the budget)."""
    return bool(budget_s) and seconds >= budget_s


def over_budget_message(budget_s: float) -> str:
    return f"its compile ran past the {budget_s:g} s time budget (--compile-timeout raises it)"


def over_memory_message(memory_mb: int) -> str:
    return f"its compile ran out of the {memory_mb:,} MB memory budget (--compile-memory raises it)"


__all__ = ["BACKSTOP_FACTOR", "Budget", "OverBudget", "limited", "out_of_memory", "over_budget_message",
           "over_memory_message", "ran_out"]
