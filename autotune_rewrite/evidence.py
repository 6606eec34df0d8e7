"""What the compiler proved: the data passed between the check stages and the rewriter.

``CompileJob`` is everything one ``triton.compile`` needs, picklable so it can go to a worker
process and be hashed for the on-disk cache. ``CompileOutcome`` is what came back (exact
numbers from the compile and ``cuobjdump``). ``ConfigVerdict`` adds the occupancy rules for one
target; ``KernelReport`` gathers one kernel x launch spec.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from autotune_rewrite.findings import Blocked, CompileFailed, CompileOverBudget, LargestFit, Note, Refusal, Suspicion
from autotune_rewrite.model import AutotuneSite, ConfigValue
from autotune_rewrite.outcomes import Assumption, KernelOutcome, Problem, Reason, Status

# CompileOutcome.error_kind: a kernel-level rejection (Triton's autotuner prunes OutOfResources,
# CompileTimeAssertionFailure and PTXASError; a CompilationError is the kernel's own source failing
# for this config) means "this config cannot launch"; a crash (an MLIR pass failure, any other
# exception inside Triton, a dying compiler process) proves nothing about the config.
REJECTED = "rejected"
CRASHED = "crashed"
OVER_BUDGET = "over_budget"  # stopped at its time or memory budget (``compile/budget``): nothing is known


@dataclass(frozen=True)
class KernelBundle:
    """A self-contained Python module text that defines the kernel and only what it needs
    (Triton imports, the module-level constants it reads, the @triton.jit helpers it calls).
    Executing it never runs the user's module top level."""

    kernel: str  # name of the @triton.jit function defined in ``source``
    source: str
    origin: str  # "path::kernel", for messages
    # Where each @triton.jit function of ``source`` was cut from: (name, user path, line of its
    # ``def``), so a compile error is reported at the user's file:line, not the bundle's.
    functions: tuple[tuple[str, str, int], ...] = ()
    # Globals the kernel's code reads that the loader could not provide (a value computed at import
    # time, a name from a package outside the repository): (name in ``source``, user path, line).
    # A compile that fails with a NameError for one of them failed in our loading, not in the kernel.
    unprovided: tuple[tuple[str, str, int | None], ...] = ()
    # Triton modules and names the kernel needs that the installed Triton does not have (a fork's
    # ``triton.language.extra.tlx``, another version's ``tl._experimental_descriptor_load``):
    # (dotted name, user path, line). No spec can make such a kernel compile here.
    absent_modules: tuple[tuple[str, str, int | None], ...] = ()
    # The files it was cut from (root-relative, as ``bundle_cache`` keys it): what
    # ``--changed-since`` counts as the kernel's source. Not part of what is compiled.
    files: tuple[str, ...] = ()

    def unprovided_global(self, name: str | None) -> tuple[str, str, int | None] | None:
        """The record of ``name`` when it is one of the globals the loader could not provide."""
        return next((u for u in self.unprovided if u[0] == name), None) if name else None


@dataclass(frozen=True)
class CompileBudget:
    """What one compile may take in a worker (``compile/budget``); None: not limited."""

    seconds: float | None = None
    memory_mb: int | None = None


@dataclass(frozen=True)
class CompileJob:
    bundle: KernelBundle
    signature: tuple[tuple[str, str], ...]  # every parameter in order: ("q", "*bf16"), ("BLOCK_T", "constexpr")
    constexprs: tuple[tuple[str, Any], ...]  # every constexpr's value (spec values + config meta-params)
    divisible_by_16: tuple[str, ...]  # parameters that get tt.divisibility=16, as the runtime would
    num_warps: int
    num_stages: int
    num_ctas: int
    maxnreg: int | None
    capability: int  # 120 for sm_120
    # Stop after shared-memory allocation when the kernel needs more than this many bytes (the
    # most any judged target of this capability can launch): registers are then not compiled.
    # None (``--full``): always compile to the cubin. Not part of the cache key: a stopped
    # outcome records itself as such and ``compile_cache`` serves it only to stopping jobs.
    stop_smem_above: int | None = None
    # What the compile may take in a worker (``compile/budget``); None: not limited. Not part of
    # the cache key either: an over-budget outcome serves only jobs with no larger budget.
    budget: CompileBudget | None = None


@dataclass(frozen=True)
class CompileOutcome:
    job: CompileJob
    shared_bytes: int | None  # metadata.shared: the dynamic SMEM Triton asks for at launch
    tmem_bytes: int | None
    registers: int | None  # cuobjdump REG
    spills: int | None  # cuobjdump STACK / 4
    error: str | None  # compiler message when the compile failed
    triton_version: str
    ptxas_version: str | None
    cached: bool = False
    seconds: float = 0.0
    error_kind: str | None = None  # REJECTED | CRASHED | OVER_BUDGET when ``error`` is set
    error_file: str | None = None  # the user's file and line the compiler pointed at, when known
    error_line: int | None = None
    undefined_name: str | None = None  # the global a NameError of the failed compile names, if any
    # The compile stopped once shared memory was allocated (over ``job.stop_smem_above``):
    # ``shared_bytes`` is exact, ``registers``/``spills`` were never compiled (None).
    stopped_early: bool = False
    # The compiling process's peak resident set during the compile, in MB (ptxas's when higher),
    # where it was measured (``compile/peak_memory``): about what the autotuner's own compile of
    # this config takes in the serving process.
    peak_mb: int | None = None

    @classmethod
    def failed(cls, job: CompileJob, error: str, triton_version: str, ptxas_version: str | None,
               seconds: float = 0.0, kind: str = CRASHED, file: str | None = None,
               line: int | None = None, undefined_name: str | None = None) -> "CompileOutcome":
        """A compile that produced no kernel: the error is the verdict, there are no numbers."""
        return cls(job=job, shared_bytes=None, tmem_bytes=None, registers=None, spills=None, error=error,
                   triton_version=triton_version, ptxas_version=ptxas_version, seconds=seconds,
                   error_kind=kind, error_file=file, error_line=line, undefined_name=undefined_name)


@dataclass(frozen=True)
class Occupancy:
    blocks_per_sm: int
    warps_per_sm: int
    occupancy: float  # active warps / max warps per SM
    limiter: str  # "warps" | "registers" | "shared memory" | "blocks" | "threads"
    blocked: Blocked | None  # the limit that leaves no block, with its numbers; None when it launches
    # Blocks/SM each resource alone allows (cudaOccResult.blockLimit*), in the header's order:
    # ("warps", 12), ("registers", 2), ("shared memory", 1), ("blocks", 24). Added with a default.
    limits: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class ConfigVerdict:
    config: ConfigValue
    arch: str  # "sm_120"
    outcome: CompileOutcome
    occupancy: Occupancy | None  # None when the compile failed

    @property
    def launchable(self) -> bool:
        return (
            self.outcome.error is None
            and self.occupancy is not None
            and self.occupancy.blocks_per_sm > 0
        )

    @property
    def crashed(self) -> bool:
        """The compiler failed for its own reasons: nothing is known about this config."""
        return self.outcome.error is not None and self.outcome.error_kind == CRASHED

    @property
    def over_budget(self) -> bool:
        """The compile ran past its time or memory budget: whether it launches is not known."""
        return self.outcome.error is not None and self.outcome.error_kind == OVER_BUDGET

    @property
    def known(self) -> bool:
        """Whether this verdict says anything (not a crash, not stopped at its budget)."""
        return not self.crashed and not self.over_budget

    @property
    def reason_code(self) -> str | None:
        """Why it cannot launch, as a code: ``compile_crashed``, ``compile_rejected``, or the
        occupancy limiter that leaves no block (``shared_memory``, ``registers``, ...)."""
        if self.launchable:
            return None
        if self.outcome.error is not None:
            return ("compile_crashed" if self.crashed else "compile_over_budget" if self.over_budget
                    else "compile_rejected")
        return self.occupancy.limiter.replace(" ", "_") if self.occupancy else None

    @property
    def refusal(self) -> Refusal | None:
        """Why it cannot launch, with the numbers (``output/explain.py`` words it)."""
        o = self.outcome
        if self.over_budget:
            return CompileOverBudget(o.error, o.seconds)
        if o.error is not None:
            return CompileFailed(self.crashed, o.error, o.error_file, o.error_line)
        return self.occupancy.blocked if self.occupancy else None


@dataclass(frozen=True)
class SmemModel:
    """Shared memory as a linear function of config/spec parameters, fitted on compiled points."""

    coefficients: tuple[tuple[str, float], ...]  # (term, bytes), e.g. ("num_stages*BLOCK_T", 1348.0); "1" = constant
    max_residual: int  # bytes, over the points fitted
    points: int
    text: str  # e.g. "SMEM = 1152*BLOCK_H + 1348*num_stages*BLOCK_T"


@dataclass(frozen=True)
class LaunchSpec:
    """What a compile needs beyond the source: parameter types and non-config constexprs."""

    name: str  # e.g. "BLOCK_H=16"; "default" when there is one
    types: tuple[tuple[str, str], ...]  # parameter -> "*bf16" / "i32" / "fp32" / "constexpr"
    constexprs: tuple[tuple[str, Any], ...]  # values of constexprs that are not config meta-params
    int_values: tuple[tuple[str, int], ...] = ()  # known runtime int values (for 1-specialization / divisibility)
    assumed: tuple[str, ...] = ()  # pointer parameters whose dtype was assumed (--assume-dtype)
    source: str = ""  # where it came from: "pyproject.toml", "launch a.py:12", "annotations", ...
    divisible: tuple[str, ...] = ()  # ints of unknown value assumed divisible by 16 (and not 1)
    assumptions: tuple[Assumption, ...] = ()  # every fact this spec rests on that nobody stated
    # @triton.heuristics values: name -> ((config label, meta-parameters key, value), ...)
    heuristic_values: tuple[tuple[str, tuple[tuple[str, str, Any], ...]], ...] = ()
    # A spec made from an assumed range (``spec/shape_sweep``): the launch's spec it is one value of,
    # and the values it takes (name -> value); one family's specs differ only there (``check/ranges``).
    family: str = ""
    ranged: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class KernelReport:
    site: AutotuneSite
    spec: LaunchSpec | None
    verdicts: tuple[ConfigVerdict, ...] = ()
    smem_model: SmemModel | None = None
    problem: Problem | None = None  # why this kernel was not judged (unresolved configs, missing spec, ...)
    # Added by the check pipeline (defaults keep older constructors valid):
    # per target arch, the fitted model (``smem_model`` is the first target's) ...
    smem_models: tuple[tuple[str, SmemModel | None], ...] = ()
    # ... and the largest value of each tile parameter that fits it (per target, in model order).
    largest_fit: tuple[LargestFit, ...] = ()
    notes: tuple[Note, ...] = ()  # warnings: spills, assumed dtypes, ints compiled without a value
    # Why the spec is probably wrong (``problem`` is then SPEC_PROBABLY_WRONG; the verdicts stay as evidence).
    suspicions: tuple[Suspicion, ...] = ()

    @property
    def all_launchable(self) -> bool:
        return self.problem is None and all(v.launchable for v in self.verdicts)

    @property
    def status(self) -> Status:
        """This kernel's one outcome, derived from what the stages found (never stored twice)."""
        if self.problem is not None:
            return self.problem.status
        if any(v.crashed for v in self.verdicts):
            return Status.COMPILE_CRASHED
        if self.dead_targets:
            return Status.NO_LAUNCHABLE
        return Status.ASSUMED if self.assumptions else Status.JUDGED

    @property
    def dead_targets(self) -> tuple[str, ...]:
        """The targets where no config launches. Each GPU autotunes over the configs that launch
        on it, so a kernel is broken on a target with none, whatever launches elsewhere, and fine
        where each target has one, even when no single config launches on all of them."""
        alive: dict[str, bool] = {}
        for v in self.verdicts:
            if not v.over_budget:  # not known: a target with only such configs is not dead
                alive[v.arch] = alive.get(v.arch, False) or v.launchable
        return tuple(sorted(arch for arch, ok in alive.items() if not ok))

    @property
    def assumptions(self) -> tuple[Assumption, ...]:
        if self.spec is None:
            return ()
        return self.spec.assumptions

    @property
    def outcome(self) -> KernelOutcome:
        return KernelOutcome(self.site.ident, self.spec.name if self.spec else None, self.status)

    @property
    def crash(self) -> ConfigVerdict | None:
        """The first config whose compile crashed (for the one-line message)."""
        return next((v for v in self.verdicts if v.crashed), None)


def skipped_report(site: AutotuneSite, reason: Reason, spec: LaunchSpec | None = None, **detail) -> KernelReport:
    """A kernel that was not judged, with why."""
    return KernelReport(site=site, spec=spec, problem=Problem(reason, **detail))
