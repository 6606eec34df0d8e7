"""Compile many jobs: cache first, then the misses in parallel processes.

Why processes and fork: ``triton.compile`` holds the GIL for most of its work, so threads do
not scale; forking a parent that has already imported Triton's compiler gives workers that start
compiling at once (spawn would pay the Triton import and backend discovery in every worker).
Jobs are submitted one by one, largest tiles first (a compile costs ~0.2-0.8 s, far above the
IPC cost), which keeps every core busy to the end. Identical jobs are compiled once.
``workers=1`` compiles in the calling process (no fork; Python-level output capture only).

A worker that dies (an LLVM abort, a segfault) breaks the pool; the jobs it left unfinished are
then retried one per fresh process, so only the job that really crashes is reported as such.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from autotune_rewrite import interrupts, tempdirs
from autotune_rewrite import resources
from autotune_rewrite.compile.compile_cache import CompileCache, current_toolchain, job_key
from autotune_rewrite.compile import budget
from autotune_rewrite.compile.peak_memory import proc_mb
from autotune_rewrite.compile.crosscompile import (
    compile_job, compiled_in_this_process, fp_fusion_setting, over_budget_outcome,
)
from autotune_rewrite.evidence import CompileJob, CompileOutcome

if TYPE_CHECKING:
    import multiprocessing.context

# concurrent.futures and multiprocessing are imported where a pool is made: a warm run that
# only reads the cache never needs them (they cost ~30 ms of start-up).

Progress = Callable[[int, int], None]


# The memory one compile worker is given room for when the default worker count is chosen: the
# largest resident set of a check process or worker over the 25-repository H200 coverage run was
# 848 MB (benchmarks/results/coverage/h200/coverage_corpus26_stop31.jsonl), so 1.5 GB each keeps
# a run within the machine's memory. A compile that needs more meets its memory budget instead.
WORKER_MB = 1536


def default_workers(available_mb: int | None = None) -> int:
    """Usable cores, fewer where the available memory holds fewer workers (``WORKER_MB`` each)."""
    try:
        cores = max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        cores = max(1, os.cpu_count() or 1)
    memory = available_mb if available_mb is not None else _available_mb()
    return cores if memory is None else max(1, min(cores, memory // WORKER_MB))


def _available_mb() -> int | None:
    """MemAvailable (Linux), in MB; None where it cannot be read."""
    return proc_mb("/proc/meminfo", "MemAvailable")


def _context() -> multiprocessing.context.BaseContext:
    import multiprocessing

    # fork only where it is the safe, cheap default (Linux); elsewhere spawn.
    if not sys.platform.startswith("linux"):
        return multiprocessing.get_context("spawn")
    if not compiled_in_this_process():
        return multiprocessing.get_context("fork")
    # This process has run LLVM itself (a library caller, an in-process recheck): its forks can
    # abort in LLVM. Fork from a clean server instead, started once, with Triton imported.
    server = multiprocessing.get_context("forkserver")
    server.set_forkserver_preload(["triton.compiler.compiler", "autotune_rewrite.compile.crosscompile"])
    return server


def _preload_triton(capabilities: set[int]) -> None:
    """Do once in the parent what every first compile of a process pays, so forked workers
    inherit it: the imports, Triton's own source hash (``triton_key``, ~0.3 s: it hashes
    libtriton) and the backend for each target."""
    import triton.language  # noqa: F401
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import make_backend

    try:
        from triton.runtime.cache import triton_key

        triton_key()
    except ImportError:  # moved in some Triton version: the workers just pay it themselves
        pass
    for cap in capabilities:
        make_backend(GPUTarget("cuda", cap, 32))


def _cost_estimate(job: CompileJob) -> int:
    """A rough compile cost: tile sizes (int constexprs above 1) times stages. Only for order."""
    size = 1
    for _, value in job.constexprs:
        if isinstance(value, int) and not isinstance(value, bool) and value > 1:
            size *= value
    return size * max(job.num_stages, 1)


def _crashed(job: CompileJob, detail: str) -> CompileOutcome:
    return CompileOutcome.failed(job, f"the compiler process crashed ({detail})",
                                 resources.triton_version(), resources.ptxas_version(job.capability))


def _compile_isolated(job: CompileJob, triton_dir: Path, fp_fusion: bool) -> tuple[CompileOutcome, bool]:
    """Compile in a process of its own -> (outcome, crashed)."""
    from concurrent.futures.process import BrokenProcessPool

    pool = _pool(1)
    start = time.monotonic()
    try:
        future = pool.submit(compile_job, job, triton_cache_dir=triton_dir, fp_fusion=fp_fusion, capture_fds=True,
                             enforce_budget=True)
        try:
            return future.result(), False
        except BrokenProcessPool as exc:
            seconds = time.monotonic() - start
            limit = job.budget.seconds if job.budget else None
            if budget.ran_out(seconds, limit):  # the CPU-time backstop ended a stage stuck in C++
                return over_budget_outcome(job, budget.over_budget_message(limit), seconds), False
            return _crashed(job, str(exc) or "worker died"), True
    except BaseException:
        interrupts.stop_pool(pool)
        raise
    finally:
        pool.shutdown(wait=True)


def _pool(n_workers: int):
    return interrupts.process_pool(n_workers, _context())


def compile_many(
    jobs: Sequence[CompileJob],
    workers: int | None = None,
    cache_dir: Path | None = None,
    progress: Progress | None = None,
) -> list[CompileOutcome]:
    """Outcomes for ``jobs``, in input order. Cached outcomes come back with ``cached=True``.

    ``workers``: processes for the misses (default: usable cores; 1 compiles in this process).
    ``cache_dir``: the outcome cache (default ``disk_cache.default_cache_dir()``).
    ``progress(done, total)`` is called as outcomes arrive (cache hits first).
    Raises UserError only for a broken installation (no cuobjdump); compile failures are
    outcomes with ``error`` set."""
    jobs = list(jobs)
    total = len(jobs)
    if not jobs:
        return []
    fusion = fp_fusion_setting()
    toolchain = current_toolchain({j.capability for j in jobs}, fusion)
    cache = CompileCache(cache_dir)
    results: list[CompileOutcome | None] = [None] * total
    pending: dict[str, list[int]] = {}
    done = 0
    for i, job in enumerate(jobs):
        key = job_key(job, toolchain)
        hit = cache.get(key, job)
        if hit is not None:
            results[i] = hit
            done += 1
        else:
            pending.setdefault(key, []).append(i)
    if progress is not None and done:
        progress(done, total)
    if not pending:
        return results  # type: ignore[return-value]

    resources.find_cuobjdump()  # a missing tool is a UserError before any work starts

    def finish(key: str, outcome: CompileOutcome, store: bool = True) -> None:
        nonlocal done
        if store:
            cache.put(key, outcome)
        for i in pending[key]:
            results[i] = outcome if jobs[i] is outcome.job else dataclasses.replace(outcome, job=jobs[i])
            done += 1
            if progress is not None:
                progress(done, total)

    n_workers = min(workers or default_workers(), len(pending))
    with tempdirs.temp_dir("triton") as triton_dir:
        # In-process only when asked for (-j 1): a lone miss still goes to a worker, because a
        # compiler abort there is one kernel's outcome, here it would end the whole run (and a
        # crash is never cached, so a rerun's only miss is exactly the job that crashes).
        if workers == 1:
            for key, idx in pending.items():
                finish(key, compile_job(jobs[idx[0]], triton_cache_dir=triton_dir, fp_fusion=fusion))
        else:
            _run_pool(jobs, pending, n_workers, triton_dir, fusion, finish)
    return results  # type: ignore[return-value]


def _run_pool(
    jobs: list[CompileJob],
    pending: dict[str, list[int]],
    n_workers: int,
    triton_dir: Path,
    fusion: bool,
    finish: Callable[..., None],
) -> None:
    import concurrent.futures as cf
    from concurrent.futures.process import BrokenProcessPool

    _preload_triton({job.capability for job in jobs})
    broken: list[str] = []
    pool = _pool(n_workers)
    try:
        # Largest first: the last compile to finish sets the wall time, so the long ones
        # (big tiles, many stages) should not be the ones left over at the end.
        order = sorted(pending, key=lambda k: _cost_estimate(jobs[pending[k][0]]), reverse=True)
        futures = {
            pool.submit(compile_job, jobs[pending[key][0]], triton_cache_dir=triton_dir, fp_fusion=fusion,
                        capture_fds=True, enforce_budget=True): key
            for key in order
        }
        for future in cf.as_completed(futures):
            key = futures[future]
            try:
                outcome = future.result()
            except BrokenProcessPool:
                broken.append(key)
                continue
            finish(key, outcome)
    except BaseException:
        interrupts.stop_pool(pool)
        raise
    pool.shutdown(wait=True)
    for key in broken:
        outcome, crashed = _compile_isolated(jobs[pending[key][0]], triton_dir, fusion)
        finish(key, outcome, store=not crashed)
