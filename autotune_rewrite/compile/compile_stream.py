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

With a ``farm`` (``compile_farm``, ``--executor dask``) the misses go to a Dask cluster instead
of the local pool, connected when the first miss needs it (a warm run never connects), and the
outcomes land in the same cache. A job the farm loses (its workers died Dask's
``allowed-failures`` times, or it came back from another toolchain) goes back to the queue for
the local pool; when the scheduler itself is lost, everything not finished goes there. What was
finished is already in the cache. ``farm_events`` says what happened, for the summary.
"""

from __future__ import annotations

import contextlib
import dataclasses
import heapq
from concurrent.futures.process import BrokenProcessPool
from collections.abc import Callable, Sequence
from pathlib import Path

from autotune_rewrite import interrupts, stopwatch, tempdirs
from autotune_rewrite.compile import compile_pool
from autotune_rewrite import resources
from autotune_rewrite.compile.compile_farm import FarmEvent
from autotune_rewrite.settings.schema import FarmChoice
from autotune_rewrite.compile.compile_cache import CompileCache, current_toolchain, job_key
from autotune_rewrite.compile.crosscompile import fp_fusion_setting
from autotune_rewrite.evidence import CompileJob, CompileOutcome

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

    def __init__(self, workers: int | None, cache_dir: Path | None, progress: Progress | None = None,
                 farm: FarmChoice | None = None):
        self.workers = workers
        self.cache = CompileCache(cache_dir)
        self.progress = progress
        self.fusion = fp_fusion_setting()
        self._done = 0
        self._total = 0
        self._waiters: dict[str, list[tuple[_Batch, int]]] = {}  # key -> (batch, index) waiting on it
        self._queue: list[tuple[int, int, int, str]] = []  # (priority, -cost, seq, key) not yet submitted
        self._jobs: dict[str, CompileJob] = {}  # key -> the job compiled for it
        self._fresh: dict[str, CompileOutcome] = {}  # key -> compiled in this run: not "cached" when asked again
        self._inflight: dict = {}  # future -> (key, on the farm)
        self._priority: dict[str, tuple[int, int]] = {}  # key -> its queue place, to requeue a lost job
        self._ready: list[_Batch] = []  # complete batches whose callbacks have not run yet
        self._seq = 0
        self._pool = None
        self._stack = contextlib.ExitStack()
        self._triton_dir: Path | None = None
        self._farm_choice = farm
        self._farm = None  # compile_farm.Farm once connected
        self._local_only: set[str] = set()  # jobs the farm lost: the local pool compiles them
        self.farm_events: list[FarmEvent] = []

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> CompileStream:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if self._farm is not None:
                self._farm.close(abort=exc_type is not None)
                self._farm = None
            if self._pool is not None:
                if exc_type is None:
                    self._pool.shutdown(wait=True)
                else:  # Ctrl-C, SIGTERM or a bug: end the running compiles now
                    interrupts.stop_pool(self._pool)
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
            if key in self._fresh:  # compiled earlier in this run (a probe started with the configs)
                fresh = self._fresh[key]
                self._fill(batch, i, fresh if job is fresh.job else dataclasses.replace(fresh, job=job))
                continue
            hit = self.cache.get(key, job)
            if hit is not None:
                self._fill(batch, i, hit)
                continue
            self._waiters[key] = [(batch, i)]
            self._jobs[key] = job
            self._seq += 1
            self._priority[key] = (priority, -compile_pool._cost_estimate(job))
            heapq.heappush(self._queue, (*self._priority[key], self._seq, key))
        if batch.missing == 0:
            self._ready.append(batch)
        self._report_progress()
        self._run_ready()
        self._top_up()

    # ------------------------------------------------------------------ running
    def pump(self, block: bool = False) -> None:
        """Take in finished compiles and run the callbacks of complete batches; with ``block``,
        wait until at least one compile finishes (when any is running)."""
        if self._inflight:
            import concurrent.futures as cf

            done, _ = cf.wait(list(self._inflight), timeout=None if block else 0,
                              return_when=cf.FIRST_COMPLETED)
            self._collect(done)
        elif self._serial():
            if self._queue and (block or not self._ready):
                self._compile_here(heapq.heappop(self._queue)[3])
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

    def _serial(self) -> bool:
        """-j 1 and no farm to send to: compile in this process."""
        return self.workers == 1 and self._farm_choice is None

    def _top_up(self) -> None:
        """Hand the pool about one job per worker (the farm two per worker thread, to hide the
        network): the rest wait in the priority queue, where a batch added later for an earlier
        kernel can still go first."""
        while self._queue:
            key = self._queue[0][3]
            farm = self._farm_for(key)
            if farm is None and self._serial():
                return
            limit = 2 * farm.slots() + 1 if farm is not None else self._n_workers() + 1
            if sum(1 for _, remote in self._inflight.values() if remote == (farm is not None)) >= limit:
                return
            item = heapq.heappop(self._queue)
            if farm is not None:
                future = farm.submit(self._jobs[key], self.fusion, self._priority[key][0])
            else:
                try:
                    future = self._ensure_pool().submit(compile_pool.compile_job, self._jobs[key],
                                                        triton_cache_dir=self._scratch(), fp_fusion=self.fusion,
                                                        capture_fds=True, enforce_budget=True)
                except BrokenProcessPool:
                    # A worker died and a callback asked for more before its lost jobs were
                    # collected: the next pump collects them, replaces the pool and resubmits.
                    heapq.heappush(self._queue, item)
                    return
            self._inflight[future] = (key, farm is not None)

    def _farm_for(self, key: str):
        """The farm for this job: connected on first use; None for the local pool (no farm asked
        for, a job the farm lost, or a farm that could not be reached with ``--fallback local``)."""
        if self._farm_choice is None or key in self._local_only:
            return None
        if self._farm is None:
            from autotune_rewrite.compile import compile_farm
            from autotune_rewrite.errors import UserError

            choice = self._farm_choice
            try:
                with stopwatch.stage("farm_connect"):
                    self._farm = compile_farm.connect(choice, {j.capability for j in self._jobs.values()})
            except UserError as exc:
                if choice.fallback != compile_farm.LOCAL:
                    raise
                self.farm_events.append(FarmEvent("unreachable", choice.address, str(exc)))
                self._farm_choice = None
                return None
        return self._farm

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

        from autotune_rewrite.compile.compile_farm import same_toolchain

        lost: list[str] = []
        farm_lost: list[tuple[str, str]] = []

        def take(futures) -> None:
            for future in futures:
                key, remote = self._inflight.pop(future)
                try:
                    outcome = future.result()
                except BrokenProcessPool:
                    lost.append(key)
                    continue
                except Exception as exc:  # noqa: BLE001 - a farm job lost (KilledWorker, the scheduler gone)
                    if not remote:
                        raise
                    farm_lost.append((key, f"{type(exc).__name__}: {exc}".splitlines()[0]))
                    continue
                if remote and not same_toolchain(outcome):  # a worker that joined with another Triton
                    farm_lost.append((key, f"compiled with Triton {outcome.triton_version}, "
                                           f"ptxas {outcome.ptxas_version}"))
                    continue
                self._finish(key, outcome)

        take(done)
        if farm_lost:
            self._requeue_locally(farm_lost)
        if not lost:
            return
        # A worker died: every job still in that pool is lost too. Each lost job is retried
        # alone in a fresh process, so only the one that really crashes is reported (and not
        # cached) as crashed.
        take(cf.wait([f for f, (_, remote) in self._inflight.items() if not remote]).done)
        self._pool.shutdown(wait=True)
        self._pool = None
        for key in lost:
            outcome, crashed = compile_pool._compile_isolated(self._jobs[key], self._scratch(), self.fusion)
            self._finish(key, outcome, store=not crashed)

    def _requeue_locally(self, lost: list[tuple[str, str]]) -> None:
        """Jobs the farm lost go back to the queue for the local pool; when the scheduler is
        gone, so does everything else still on the farm (finished work is already cached)."""
        farm = self._farm
        if farm is not None and not farm.alive():
            stranded = [(f, key) for f, (key, remote) in self._inflight.items() if remote]
            for future, key in stranded:
                del self._inflight[future]
                lost.append((key, "the scheduler was lost"))
            self.farm_events.append(FarmEvent("lost", farm.address, "the scheduler stopped answering", len(lost)))
            farm.close(abort=True)
            self._farm, self._farm_choice = None, None
        else:
            for key, why in lost:
                self.farm_events.append(FarmEvent("job_lost", farm.address if farm else "", why, 1))
        for key, _ in lost:
            self._local_only.add(key)
            self._seq += 1
            heapq.heappush(self._queue, (*self._priority[key], self._seq, key))

    def _finish(self, key: str, outcome: CompileOutcome, store: bool = True) -> None:
        if store:
            self.cache.put(key, outcome)
            self._fresh[key] = outcome
        for batch, i in self._waiters.pop(key):
            job = batch.jobs[i]
            self._fill(batch, i, outcome if job is outcome.job else dataclasses.replace(outcome, job=job))
            if batch.missing == 0:
                self._ready.append(batch)
        self._jobs.pop(key, None)
        self._priority.pop(key, None)
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
