"""On-disk cache of compile outcomes, so a rerun on unchanged input compiles nothing.

The key hashes everything that changes what ``triton.compile`` + cuobjdump return: the bundle
(kernel name and its self-contained source, which holds the helpers and constants it uses), the
signature, constexprs, divisibility attrs, options, capability, fp fusion, and the toolchain
(Triton version plus the size/mtime of ``libtriton``, the ptxas version). One small JSON file per
outcome in the ``outcomes`` namespace of ``disk_cache`` (which adds the schema and the tool
versions to the key and writes atomically, so parallel runs never read half a file).

Nothing here imports triton: a fully warm run stays cheap.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from autotune_rewrite import disk_cache
from autotune_rewrite import resources
from autotune_rewrite.evidence import OVER_BUDGET, CompileJob, CompileOutcome

SCHEMA = 4  # bump when the stored fields or their meaning change (2: disk_cache's envelope; 3: error kind/place;
# 4: the undefined name of a NameError)
_NAMESPACE = "outcomes"


@dataclass(frozen=True)
class Toolchain:
    """What, besides the job, decides the compile result."""

    triton_version: str
    triton_build: str  # size and mtime of libtriton: a rebuilt dev wheel with the same version
    ptxas_versions: tuple[tuple[int, str | None], ...]  # per capability
    fp_fusion: bool
    environment: tuple[tuple[str, str], ...] = ()  # TRITON_*/MLIR_*/LLVM_* settings in effect

    def ptxas_for(self, capability: int) -> str | None:
        return dict(self.ptxas_versions).get(capability)


def current_toolchain(capabilities: set[int] | frozenset[int], fp_fusion: bool) -> Toolchain:
    root = resources.triton_dir()
    lib = next(iter(sorted((root / "_C").glob("libtriton*"))), None)
    build = ""
    if lib is not None:
        st = lib.stat()
        build = f"{st.st_size}:{st.st_mtime_ns}"
    return Toolchain(
        triton_version=resources.triton_version(),
        triton_build=build,
        ptxas_versions=tuple((c, resources.ptxas_version(c)) for c in sorted(capabilities)),
        fp_fusion=fp_fusion,
        environment=compiler_environment(),
    )


# Variables that name places, or that crosscompile removes while compiling: they cannot change
# what a compile produces.
_NEUTRAL_VARS = frozenset({
    "TRITON_CACHE_DIR", "TRITON_HOME", "TRITON_DUMP_DIR", "TRITON_OVERRIDE_DIR",
    "TRITON_OVERRIDE_ARCH", "TRITON_ALWAYS_COMPILE", "TRITON_KERNEL_DUMP", "TRITON_KERNEL_OVERRIDE",
    "TRITON_DEFAULT_FP_FUSION",  # keyed as fp_fusion
})


# Prefixes (and names) of the variables triton/knobs.py, MLIR and LLVM read; PTXAS_OPTIONS and
# DISABLE_PTXAS_OPT carry no TRITON_ prefix.
_COMPILER_VARS = ("TRITON_", "MLIR_", "LLVM_", "PTXAS_", "NVPTX_", "DISABLE_PTXAS_OPT", "USE_IR_LOC")


def compiler_environment() -> tuple[tuple[str, str], ...]:
    """Environment variables Triton, MLIR or LLVM read that could change a compile (e.g.
    PTXAS_OPTIONS, TRITON_DEBUG): a conservative key part, so a changed setting recompiles."""
    return tuple(sorted(
        (k, v) for k, v in os.environ.items()
        if k.startswith(_COMPILER_VARS) and k not in _NEUTRAL_VARS
    ))


def job_key(job: CompileJob, toolchain: Toolchain) -> str:
    payload = {
        "kernel": job.bundle.kernel,
        "source": job.bundle.source,
        "signature": [list(p) for p in job.signature],
        "constexprs": [[k, repr(v)] for k, v in job.constexprs],
        "divisible_by_16": sorted(job.divisible_by_16),
        "options": [job.num_warps, job.num_stages, job.num_ctas, job.maxnreg],
        "capability": job.capability,
        "triton": [toolchain.triton_version, toolchain.triton_build],
        "ptxas": toolchain.ptxas_for(job.capability),
        "fp_fusion": toolchain.fp_fusion,
        "environment": [list(kv) for kv in toolchain.environment],
    }
    return disk_cache.make_key(_NAMESPACE, SCHEMA, payload)


_FIELDS = ("shared_bytes", "tmem_bytes", "registers", "spills", "error", "triton_version", "ptxas_version", "seconds",
           "error_kind", "error_file", "error_line", "undefined_name")


def serves_stopped(shared_bytes: object, job: CompileJob) -> bool:
    """Whether an outcome stopped at ``shared_bytes`` answers ``job``: the job stops early and
    that figure is over its threshold (the same test the compile itself made)."""
    return (job.stop_smem_above is not None and isinstance(shared_bytes, int)
            and shared_bytes > job.stop_smem_above)


def serves_over_budget(stored: object, job: CompileJob) -> bool:
    """Whether an outcome stopped at the ``stored`` budget ([seconds, MB]) answers ``job``: a job
    whose budget is nowhere larger would stop too; a larger one (or none) compiles again."""
    if job.budget is None or not isinstance(stored, list) or len(stored) != 2:
        return False
    mine = (job.budget.seconds, job.budget.memory_mb)
    # None is no limit: a job's limit is no larger when the stored one was none, or it is <= it.
    return all(old is None or (new is not None and new <= old) for new, old in zip(mine, stored))


class CompileCache:
    def __init__(self, directory: Path | None = None) -> None:
        self.store = disk_cache.namespace(_NAMESPACE, SCHEMA, directory)
        self.directory = self.store.root

    def get(self, key: str, job: CompileJob) -> CompileOutcome | None:
        """The stored outcome for ``key``, re-attached to ``job`` with ``cached=True``. An
        outcome stopped at shared memory serves only a job that would stop there too (never a
        ``--full`` one, which then compiles and overwrites it); a full one serves every job."""
        data = self.store.read_json(key)
        try:
            # Entries written before the staged compile never stopped early: False is their truth.
            stopped = bool(data.get("stopped_early", False))
            if stopped and not serves_stopped(data["shared_bytes"], job):
                return None
            if data["error_kind"] == OVER_BUDGET and not serves_over_budget(data.get("budget"), job):
                return None
            return CompileOutcome(job=job, cached=True, stopped_early=stopped, peak_mb=data.get("peak_mb"),
                                  **{f: data[f] for f in _FIELDS})
        except (KeyError, TypeError, AttributeError):
            return None

    def put(self, key: str, outcome: CompileOutcome) -> None:
        """Store atomically; a cache we cannot write is not an error (the run just stays cold)."""
        data = {"origin": outcome.job.bundle.origin}
        data.update({f: getattr(outcome, f) for f in _FIELDS}, peak_mb=outcome.peak_mb)
        data["stopped_early"] = outcome.stopped_early
        if outcome.error_kind == OVER_BUDGET and outcome.job.budget is not None:
            data["budget"] = [outcome.job.budget.seconds, outcome.job.budget.memory_mb]
        self.store.write_json(key, data)
