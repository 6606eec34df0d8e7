"""Compile many jobs: cache first, then the misses in parallel processes.

Why processes and fork: ``triton.compile`` holds the GIL for most of its work, so threads do
not scale; forking a parent that has already imported Triton's compiler gives workers that start
compiling at once (spawn would pay the Triton import and backend discovery in every worker).
Jobs are submitted one by one (a compile costs ~0.2-0.8 s, far above the IPC cost), which keeps
both cores busy to the end. Identical jobs are compiled once.

A worker that dies (an LLVM abort, a segfault) breaks the pool; the jobs it left unfinished are
then retried one per fresh process, so only the job that really crashes is reported as such.
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import multiprocessing
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from autotune_rewrite import resources
from autotune_rewrite.compile_cache import CompileCache, current_toolchain, job_key
from autotune_rewrite.crosscompile import compile_job, fp_fusion_setting
from autotune_rewrite.evidence import CompileJob, CompileOutcome

Progress = Callable[[int, int], None]


def default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _context() -> multiprocessing.context.BaseContext:
    # fork only where it is the safe, cheap default (Linux); elsewhere spawn.
    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def _preload_triton() -> None:
    """Import Triton's compiler in the parent so forked workers inherit it."""
    import triton  # noqa: F401
    import triton.backends.compiler  # noqa: F401
    import triton.compiler  # noqa: F401


def _crashed(job: CompileJob, detail: str, fp_fusion: bool) -> CompileOutcome:
    del fp_fusion
    return CompileOutcome(
        job=job,
        shared_bytes=None,
        tmem_bytes=None,
        registers=None,
        spills=None,
        error=f"the compiler process crashed ({detail})",
        triton_version=resources.triton_version(),
        ptxas_version=resources.ptxas_version(job.capability),
    )


def _compile_isolated(job: CompileJob, triton_dir: Path, fp_fusion: bool) -> tuple[CompileOutcome, bool]:
    """Compile in a process of its own -> (outcome, crashed)."""
    with cf.ProcessPoolExecutor(max_workers=1, mp_context=_context()) as pool:
        future = pool.submit(compile_job, job, triton_cache_dir=triton_dir, fp_fusion=fp_fusion)
        try:
            return future.result(), False
        except BrokenProcessPool as exc:
            return _crashed(job, str(exc) or "worker died", fp_fusion), True


def compile_many(
    jobs: Sequence[CompileJob],
    workers: int | None = None,
    cache_dir: Path | None = None,
    progress: Progress | None = None,
) -> list[CompileOutcome]:
    """Outcomes for ``jobs``, in input order. Cached outcomes come back with ``cached=True``.

    ``workers``: processes for the misses (default: usable cores; 1 compiles in this process).
    ``cache_dir``: the outcome cache (default ``compile_cache.default_cache_dir()``).
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
    triton_dir = Path(tempfile.mkdtemp(prefix="autotune-rewrite-triton-"))
    try:
        if n_workers <= 1:
            for key, idx in pending.items():
                finish(key, compile_job(jobs[idx[0]], triton_cache_dir=triton_dir, fp_fusion=fusion))
        else:
            _run_pool(jobs, pending, n_workers, triton_dir, fusion, finish)
    finally:
        shutil.rmtree(triton_dir, ignore_errors=True)
    return results  # type: ignore[return-value]


def _run_pool(
    jobs: list[CompileJob],
    pending: dict[str, list[int]],
    n_workers: int,
    triton_dir: Path,
    fusion: bool,
    finish: Callable[..., None],
) -> None:
    _preload_triton()
    broken: list[str] = []
    with cf.ProcessPoolExecutor(max_workers=n_workers, mp_context=_context()) as pool:
        futures = {
            pool.submit(compile_job, jobs[idx[0]], triton_cache_dir=triton_dir, fp_fusion=fusion): key
            for key, idx in pending.items()
        }
        for future in cf.as_completed(futures):
            key = futures[future]
            try:
                outcome = future.result()
            except BrokenProcessPool:
                broken.append(key)
                continue
            finish(key, outcome)
    for key in broken:
        outcome, crashed = _compile_isolated(jobs[pending[key][0]], triton_dir, fusion)
        finish(key, outcome, store=not crashed)
