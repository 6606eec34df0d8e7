"""Compiles on a Dask ``distributed`` cluster: the farm behind ``CompileStream`` (``--executor dask``).

Why Dask and not a scheduler of our own: Dask's scheduler already does what a farm needs (work
stealing across machines, a worker that dies has its task re-run elsewhere, ``allowed-failures``
before it gives up, priorities); its ``ClientExecutor`` hands back ``concurrent.futures``
futures, so the stream waits on farm and local compiles alike. Why Dask and not Ray: it is pure
Python and small (5 MB of wheels with its dependencies, Ray's wheel alone is ~70 MB), so CI and
the device machine can install it.

What travels: the same ``CompileJob`` the local pool gets (the bundle's source, signature,
constexprs, options), plus this run's fp-fusion setting and compiler environment (``PTXAS_OPTIONS``,
``TRITON_*``: part of the cache key, so a worker compiles under the key's settings, not its own).
The outcome comes back and is written into this machine's cache by the stream, under the key
computed here. A worker whose Triton, ptxas or autotune-rewrite differ from this process would
store wrong answers under that key: ``connect`` refuses such a cluster (exit 2), and an outcome
stamped with another Triton or ptxas (a worker that joined later) is compiled again locally.

Workers need ``autotune-rewrite`` (the same version) importable: the task is this module's
``farm_compile``, pickled by reference. Run them with one thread each (``dask worker ADDRESS
--nworkers N --nthreads 1``): ``triton.compile`` holds the GIL, and the compiler's output is
captured on the process's file descriptors, so one process compiles one job at a time (a lock
makes more threads safe, not faster).

Nothing here is imported unless ``--executor dask`` is asked for; ``distributed`` is optional
(the ``farm`` extra).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import Any

from autotune_rewrite import resources
from autotune_rewrite.compile.compile_cache import compiler_environment
from autotune_rewrite.evidence import CompileJob, CompileOutcome
from autotune_rewrite.errors import UserError
from autotune_rewrite.settings.schema import FarmChoice

DASK = "dask"
LOCAL = "local"
EXECUTORS = (LOCAL, DASK)
FALLBACKS = ("none", LOCAL)
_FIX = "start one with `dask scheduler` and `dask worker ADDRESS --nthreads 1`, pass another --address, or add --fallback local"


@dataclass(frozen=True)
class FarmEvent:
    """Something the farm did that the user should hear about (worded in ``output/farm.py``).

    ``kind``: ``unreachable`` (ran on the local pool instead), ``lost`` (the scheduler went away
    mid-run: the rest compiled locally), ``job_lost`` (a job's workers died ``allowed-failures``
    times, or it came back from another toolchain: compiled again locally)."""

    kind: str
    address: str
    detail: str = ""
    jobs: int = 0


# --------------------------------------------------------------------------- on the workers
_ONE_AT_A_TIME = threading.Lock()  # per worker process: fd capture and os.environ are process-wide


def farm_compile(job: CompileJob, fp_fusion: bool, environment: tuple[tuple[str, str], ...]) -> CompileOutcome:
    """The task: ``compile_job`` under the client's compiler environment, output captured."""
    from autotune_rewrite.compile.crosscompile import compile_job

    with _ONE_AT_A_TIME, _compiler_environment(environment):
        return compile_job(job, fp_fusion=fp_fusion, capture_fds=True)


@contextlib.contextmanager
def _compiler_environment(wanted: tuple[tuple[str, str], ...]):
    """Exactly the client's compiler variables while compiling (the worker's own removed)."""
    saved = dict(compiler_environment())
    for name in saved:
        os.environ.pop(name, None)
    os.environ.update(dict(wanted))
    try:
        yield
    finally:
        for name, _ in wanted:
            os.environ.pop(name, None)
        os.environ.update(saved)


def worker_facts(capabilities: tuple[int, ...]) -> dict[str, Any]:
    """What must match between client and worker, and warms the worker up: Triton's import and
    source hash (~1 s) are paid here, before the first task."""
    from autotune_rewrite import __version__
    from autotune_rewrite.compile.compile_pool import _preload_triton

    facts: dict[str, Any] = {"autotune-rewrite": __version__, "triton": resources.triton_version(),
                             "ptxas": {c: resources.ptxas_version(c) for c in capabilities}}
    try:
        resources.find_cuobjdump()
    except UserError as exc:
        facts["cuobjdump"] = str(exc)
    _preload_triton(set(capabilities))
    return facts


# --------------------------------------------------------------------------- on this machine
class Farm:
    """A connected cluster: ``submit`` jobs, ``alive`` while the scheduler answers, ``close``."""

    def __init__(self, client, address: str):
        self.client = client
        self.address = address
        # Dask logs a lost connection as tracebacks on stderr; the run says it once, in its summary
        # (output/farm.py), so its stderr stays the tool's own while the farm is in use.
        # Dask's records (``distributed.client`` too) reach stderr through the handlers it puts on
        # the ``distributed`` logger: those are turned down, not the records' own loggers.
        self._handlers = [(h, h.level) for h in logging.getLogger("distributed").handlers]
        for handler, _ in self._handlers:
            handler.setLevel(logging.CRITICAL)
        self._executor = client.get_executor(pure=False)
        self._slots = 0
        self._slots_at = 0.0

    def submit(self, job: CompileJob, fp_fusion: bool, priority: int):
        # Dask's priority: higher runs first; ours: lower (the kernel's place in the report) first.
        return self._executor.submit(farm_compile, job, fp_fusion, compiler_environment(), priority=-priority)

    def slots(self) -> int:
        """Worker threads in the cluster now (asked again at most once a second: workers join)."""
        now = time.monotonic()
        if now - self._slots_at > 1.0:
            with contextlib.suppress(Exception):
                self._slots = max(1, sum(self.client.nthreads().values()))
            self._slots_at = now
        return max(1, self._slots)

    def alive(self) -> bool:
        return self.client.status == "running"

    def close(self, abort: bool = False) -> None:
        with contextlib.suppress(Exception):
            self._executor.shutdown(wait=False)
        with contextlib.suppress(Exception):
            self.client.close(timeout=2 if abort else 10)
        for handler, level in self._handlers:
            handler.setLevel(level)


def same_toolchain(outcome: CompileOutcome) -> bool:
    """Compiled by the Triton and ptxas this process keys its cache with."""
    return (outcome.triton_version == resources.triton_version()
            and outcome.ptxas_version == resources.ptxas_version(outcome.job.capability))


def connect(choice: FarmChoice, capabilities: set[int]) -> Farm:
    """A client of the scheduler at ``choice.address`` whose workers compile as this process
    would. ``UserError`` (exit 2, one line naming the address and the fix) when ``distributed``
    is missing, the scheduler cannot be reached or has no worker within Dask's connect timeout
    (``distributed.comm.timeouts.connect``, 30 s; ``DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT``),
    or a worker differs (versions, no cuobjdump, autotune-rewrite not importable)."""
    try:
        import dask
        from distributed import Client
    except ImportError:
        raise UserError("--executor dask needs Dask distributed: pip install 'autotune-rewrite[farm]' "
                        "(or 'distributed>=2024'), or drop --executor") from None
    from dask.utils import parse_timedelta

    timeout = parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"), default="s")
    address = choice.address
    try:
        client = Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise UserError(f"cannot reach the Dask scheduler at {address} ({_first_line(exc)}): {_FIX}") from None
    try:
        try:
            client.wait_for_workers(1, timeout=timeout)
        except (TimeoutError, OSError) as exc:
            raise UserError(f"the Dask scheduler at {address} has no workers after {timeout:g} s "
                            f"({_first_line(exc)}): start some with `dask worker {address} --nthreads 1`, "
                            f"or add --fallback local") from None
        _check_workers(address, client, tuple(sorted(capabilities)))
    except BaseException:
        with contextlib.suppress(Exception):
            client.close(timeout=2)
        raise
    return Farm(client, address)


def _check_workers(address: str, client, capabilities: tuple[int, ...]) -> None:
    from autotune_rewrite import __version__

    try:
        facts = client.run(worker_facts, capabilities)
    except (ImportError, AttributeError) as exc:
        raise UserError(f"the Dask workers at {address} cannot import autotune-rewrite ({_first_line(exc)}): "
                        f"pip install autotune-rewrite=={__version__} on every worker") from None
    here = {"autotune-rewrite": __version__, "triton": resources.triton_version(),
            "ptxas": {c: resources.ptxas_version(c) for c in capabilities}}
    for worker, theirs in sorted(facts.items()):
        if "cuobjdump" in theirs:
            raise UserError(f"Dask worker {worker} (scheduler {address}): {theirs['cuobjdump']}")
        for name in ("autotune-rewrite", "triton", "ptxas"):
            if theirs.get(name) != here[name]:
                raise UserError(f"Dask worker {worker} (scheduler {address}) has {name} {theirs.get(name)}, "
                                f"this run {here[name]}: install the same versions on every worker")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


__all__ = ["DASK", "EXECUTORS", "FALLBACKS", "Farm", "FarmChoice", "FarmEvent", "LOCAL", "connect", "farm_compile",
           "same_toolchain", "worker_facts"]
