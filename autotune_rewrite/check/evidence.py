"""What the compiler proved: the data passed between the feasibility stages and the rewriter.

``CompileJob`` is everything one ``triton.compile`` needs, picklable so it can go to a worker
process and be hashed for the on-disk cache. ``CompileOutcome`` is what came back (exact
numbers from the compile and ``cuobjdump``). ``ConfigVerdict`` adds the occupancy rules for one
target; ``KernelReport`` gathers one kernel x launch spec.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from autotune_rewrite.model import AutotuneSite, ConfigValue


@dataclass(frozen=True)
class KernelBundle:
    """A self-contained Python module text that defines the kernel and only what it needs
    (Triton imports, the module-level constants it reads, the @triton.jit helpers it calls).
    Executing it never runs the user's module top level."""

    kernel: str  # name of the @triton.jit function defined in ``source``
    source: str
    origin: str  # "path::kernel", for messages


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

    @classmethod
    def failed(cls, job: CompileJob, error: str, triton_version: str, ptxas_version: str | None,
               seconds: float = 0.0) -> "CompileOutcome":
        """A compile that produced no kernel: the error is the verdict, there are no numbers."""
        return cls(job=job, shared_bytes=None, tmem_bytes=None, registers=None, spills=None, error=error,
                   triton_version=triton_version, ptxas_version=ptxas_version, seconds=seconds)


@dataclass(frozen=True)
class Occupancy:
    blocks_per_sm: int
    warps_per_sm: int
    occupancy: float  # active warps / max warps per SM
    limiter: str  # "warps" | "registers" | "shared memory" | "blocks" | "threads"
    reason: str | None  # why it cannot launch, in numbers; None when it can
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
    def reason(self) -> str | None:
        if self.outcome.error is not None:
            return f"compile error: {self.outcome.error}"
        return self.occupancy.reason if self.occupancy else None


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
    assumed: tuple[str, ...] = ()  # parameters whose type came from --assume-dtype
    source: str = ""  # where it came from: "pyproject.toml", "annotations", ...


@dataclass(frozen=True)
class KernelReport:
    site: AutotuneSite
    spec: LaunchSpec | None
    verdicts: tuple[ConfigVerdict, ...] = ()
    smem_model: SmemModel | None = None
    error: str | None = None  # why this kernel was skipped (unresolved configs, missing spec, ...)
    # Added by the check pipeline (defaults keep older constructors valid):
    # per target arch, the fitted model (``smem_model`` is the first target's) ...
    smem_models: tuple[tuple[str, SmemModel | None], ...] = ()
    # ... and the largest tile that fits it, in words ("BLOCK_T=16 at num_stages=2 (61,568 B)").
    largest_fit: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = ()  # warnings: spills, assumed dtypes, ints compiled without a value

    @property
    def all_launchable(self) -> bool:
        return self.error is None and all(v.launchable for v in self.verdicts)
