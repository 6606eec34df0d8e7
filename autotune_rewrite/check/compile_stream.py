"""One compile pool for a whole ``check`` run, answering batch by batch as each completes.

``compile_many`` takes every job at once and returns when the last one is done: right for a
rewrite's few candidates, wrong for a repository of 200 kernels, whose first verdict would wait
for the last compile. Here the caller adds one batch per kernel (its configs, later its SMEM
probes) while it is still planning the others, and each batch's callback runs as soon as all
of its outcomes are in, so the kernel's report can be printed then.

Order: a batch's ``priority`` (the kernel's place in the report) decides what the pool runs
next, largest tile first within a batch; only about one job per worker is handed to the pool
at a time, so a probe batch added for kernel 1 runs before the configs of kernel 9 that were
queued earlier. Cache hits answer at once, identical jobs compile once, a worker that dies is
retried job by job in fresh processes as ``compile_pool`` does (a real crash is not cached).

Callbacks run in the caller's thread, inside ``add`` for all-cached batches or inside ``pump``
/ ``drain``; a callback may add batches.
"""

from __future__ import annotations

import contextlib
import dataclasses
import heapq
from collections.abc import Callable, Sequence
from pathlib import Path

from autotune_rewrite import stopwatch, tempdirs
from autotune_rewrite.check import compile_pool, resources
from autotune_rewrite.check.compile_cache import CompileCache, current_toolchain, job_key
from autotune_rewrite.check.crosscompile import fp_fusion_setting
from autotune_rewrite.check.evidence import CompileJob, CompileOutcome

Progress = Callable[[int, int], None]
Done = Callable[[list[CompileOutcome]], None]


class _Batch:
    def __init__(self, jobs: list[CompileJob], on_done: Done):
        self.jobs = jobs
        self.results: list[CompileOutcome | None] = [None] * len(jobs)
        self.missing = len(jobs)
        self.on_done = on_done


class CompileStream:
    """Use as a context manager; ``add`` batches, ``pump`` now and then, ``drain`` at the end."""

    def __init__(self, workers: int | None, cache_dir: Path | None, progress: Progress | None = None):
        self.workers = workers
        self.cache = CompileCache(cache_dir)
        self.progress = progress
        self.fusion = fp_fusion_setting()
        self._done = 0
        self._total = 0
        self._waiters: dict[str, list[tuple[_Batch, int]]] = {}  # key -> (batch, index) waiting on it
        self._queue: list[tuple[int, int, int, str]] = []  # (priority, -cost, seq, key) not yet submitted
        self._jobs: dict[str, CompileJob] = {}  # key -> the job compiled for it
        self._inflight: dict = {}  # future -> key
        self._ready: list[_Batch] = []  # complete batches whose callbacks have not run yet
        self._seq = 0
        self._pool = None
        self._stack = contextlib.ExitStack()
        self._triton_dir: Path | None = None

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> CompileStream:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if self._pool is not None:
                if exc_type is None:
                    self._pool.shutdown(wait=True)
                else:  # Ctrl-C, SIGTERM or a bug: end the running compiles now
                    compile_pool._stop_now(self._pool)
                self._pool = None
        finally:
            self._stack.close()

    # ------------------------------------------------------------------ adding
    def add(self, jobs: Sequence[CompileJob], on_done: Done, priority: int = 0) -> None:
        """Compile ``jobs``; ``on_done(outcomes)`` (input order) once all are known."""
        batch = _Batch(list(jobs), on_done)
        self._total += len(batch.jobs)
        if batch.jobs:
            toolchain = current_toolchain({j.capability for j in batch.jobs}, self.fusion)
        for i, job in enumerate(batch.jobs):
            key = job_key(job, toolchain)
            if key in self._waiters:  # the same job is already on its way
                self._waiters[key].append((batch, i))
                continue
            hit = self.cache.get(key, job)
            if hit is not None:
                self._fill(batch, i, hit)
                continue
            self._waiters[key] = [(batch, i)]
            self._jobs[key] = job
            self._seq += 1
            heapq.heappush(self._queue, (priority, -compile_pool._cost_estimate(job), self._seq, key))
        if batch.missing == 0:
            self._ready.append(batch)
        self._report_progress()
        self._run_ready()
        self._top_up()

    # ------------------------------------------------------------------ running
    def pump(self, block: bool = False) -> None:
        """Take in finished compiles and run the callbacks of complete batches; with ``block``,
        wait until at least one compile finishes (when any is running)."""
        if self.workers == 1:
            if self._queue and (block or not self._ready):
                self._compile_here(heapq.heappop(self._queue)[3])
        elif self._inflight:
            import concurrent.futures as cf

            done, _ = cf.wait(list(self._inflight), timeout=None if block else 0,
                              return_when=cf.FIRST_COMPLETED)
            self._collect(done)
        self._run_ready()
        self._top_up()

    def drain(self) -> None:
        """Run everything added (and whatever the callbacks add) to the end."""
        with stopwatch.stage("compile_wait"):
            while self._queue or self._inflight or self._ready:
                self.pump(block=True)

    def _compile_here(self, key: str) -> None:
        # -j 1: in this process, one job per pump, so reports still come out as kernels finish.
        outcome = compile_pool.compile_job(self._jobs[key], triton_cache_dir=self._scratch(), fp_fusion=self.fusion)
        self._finish(key, outcome)

    def _scratch(self) -> Path:
        if self._triton_dir is None:
            resources.find_cuobjdump()  # a missing tool is a UserError before any work starts
            self._triton_dir = self._stack.enter_context(tempdirs.temp_dir("triton"))
        return self._triton_dir

    def _top_up(self) -> None:
        """Hand the pool about one job per worker: the rest wait in the priority queue, where a
        batch added later for an earlier kernel can still go first."""
        if self.workers == 1 or not self._queue:
            return
        limit = self._n_workers() + 1
        while self._queue and len(self._inflight) < limit:
            key = heapq.heappop(self._queue)[3]
            pool = self._ensure_pool()
            self._inflight[pool.submit(compile_pool.compile_job, self._jobs[key], triton_cache_dir=self._scratch(),
                                       fp_fusion=self.fusion, capture_fds=True)] = key

    def _n_workers(self) -> int:
        return self.workers or compile_pool.default_workers()

    def _ensure_pool(self):
        if self._pool is None:
            with stopwatch.stage("pool_start"):
                self._scratch()  # made before the fork: every worker compiles into it
                compile_pool._preload_triton({job.capability for job in self._jobs.values()})
                self._pool = compile_pool._pool(self._n_workers())
        return self._pool

    def _collect(self, done) -> None:
        import concurrent.futures as cf
        from concurrent.futures.process import BrokenProcessPool

        lost: list[str] = []

        def take(futures) -> None:
            for future in futures:
                key = self._inflight.pop(future)
                try:
                    outcome = future.result()
                except BrokenProcessPool:
                    lost.append(key)
                    continue
                self._finish(key, outcome)

        take(done)
        if not lost:
            return
        # A worker died: every job still in that pool is lost too. Each lost job is retried
        # alone in a fresh process, so only the one that really crashes is reported (and not
        # cached) as crashed.
        take(cf.wait(list(self._inflight)).done)
        self._pool.shutdown(wait=True)
        self._pool = None
        for key in lost:
            outcome, crashed = compile_pool._compile_isolated(self._jobs[key], self._scratch(), self.fusion)
            self._finish(key, outcome, store=not crashed)

    def _finish(self, key: str, outcome: CompileOutcome, store: bool = True) -> None:
        if store:
            self.cache.put(key, outcome)
        for batch, i in self._waiters.pop(key):
            job = batch.jobs[i]
            self._fill(batch, i, outcome if job is outcome.job else dataclasses.replace(outcome, job=job))
            if batch.missing == 0:
                self._ready.append(batch)
        self._jobs.pop(key, None)
        self._report_progress()

    def _fill(self, batch: _Batch, i: int, outcome: CompileOutcome) -> None:
        batch.results[i] = outcome
        batch.missing -= 1
        self._done += 1

    def _run_ready(self) -> None:
        while self._ready:
            batch = self._ready.pop(0)
            batch.on_done(batch.results)  # type: ignore[arg-type]

    def _report_progress(self) -> None:
        if self.progress is not None and self._total:
            self.progress(self._done, self._total)


__all__ = ["CompileStream"]
