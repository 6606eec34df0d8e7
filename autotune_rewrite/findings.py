"""What the check stage found, as typed records with their numbers (no words).

Why a config cannot launch (a compile that failed, or the occupancy limit that leaves no block),
the largest tile the SMEM model says fits, and the warnings about one kernel x launch spec
(spills, assumed dtypes, ints without a value). ``autotune_rewrite/output/explain.py`` chooses
the words for each, once; every record is JSON-able through ``model.to_jsonable`` and names
itself with ``kind`` so a reader of ``--format json`` can dispatch on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from autotune_rewrite.outcomes import Assumption


# --------------------------------------------------------------------------- why it cannot launch
@dataclass(frozen=True)
class CompileFailed:
    """The compile produced no kernel (``crashed``: the compiler's own failure, proves nothing)."""

    crashed: bool
    error: str
    file: str | None = None  # the user's file and line the compiler pointed at, when known
    line: int | None = None
    kind: str = field(default="compile_failed", init=False)


@dataclass(frozen=True)
class CompileOverBudget:
    """The compile was stopped at its time or memory budget (``compile/budget``): nothing is known."""

    message: str  # which budget, in words (``compile/budget``)
    seconds: float
    kind: str = field(default="compile_over_budget", init=False)


@dataclass(frozen=True)
class TooManyThreads:
    threads: int
    num_warps: int
    limit: int  # threads per block
    kind: str = field(default="threads_per_block", init=False)


@dataclass(frozen=True)
class TooManyRegistersPerThread:
    registers: int
    limit: int  # registers per thread
    kind: str = field(default="registers_per_thread", init=False)


@dataclass(frozen=True)
class TooManyRegistersPerBlock:
    registers: int  # per thread
    threads: int
    held: int  # registers the block holds as allocated (per-warp rounding, sub-partitions)
    limit: int  # registers per block
    kind: str = field(default="registers_per_block", init=False)


@dataclass(frozen=True)
class SmemOverOptin:
    """Dynamic SMEM over the per-block opt-in limit (what Triton's OutOfResources checks)."""

    arch: str
    shared_bytes: int
    static_bytes: int
    limit: int  # opt-in bytes per block, less the static SMEM
    registers_compiled: bool = True  # False: the compile stopped here (``compile/early_smem.py``)
    kind: str = field(default="smem_over_optin", init=False)


@dataclass(frozen=True)
class SmemOverBlock:
    """Within the opt-in limit, but the allocation (static + reserved, rounded) is not."""

    arch: str
    shared_bytes: int
    static_bytes: int
    reserved_bytes: int
    allocated: int
    limit: int  # bytes per block
    registers_compiled: bool = True  # False: the compile stopped here (``compile/early_smem.py``)
    kind: str = field(default="smem_per_block", init=False)


@dataclass(frozen=True)
class TmemOver:
    columns: int
    limit: int
    kind: str = field(default="tensor_memory", init=False)


Blocked = TooManyThreads | TooManyRegistersPerThread | TooManyRegistersPerBlock | SmemOverOptin | SmemOverBlock | TmemOver
Refusal = CompileFailed | CompileOverBudget | Blocked


# --------------------------------------------------------------------------- the SMEM model's bound
@dataclass(frozen=True)
class LargestFit:
    """The largest value of one tile parameter that the fitted SMEM model says fits ``arch``,
    the other model parameters held at ``held``; ``value`` None when no value fits."""

    arch: str
    param: str
    value: int | None
    held: tuple[tuple[str, int], ...]  # the other parameters of the model, sorted by name
    predicted_bytes: int | None  # the model's bytes at ``value``
    limit: int  # opt-in bytes per block
    kind: str = field(default="largest_fit", init=False)


# --------------------------------------------------------------------------- notes (warnings)
@dataclass(frozen=True)
class Spills:
    spec: str
    arch: str
    config: str  # the config's label
    spills: int
    registers: int | None
    kind: str = field(default="spills", init=False)


@dataclass(frozen=True)
class Assumed:
    """The spec rests on facts nobody stated (``spec_inference`` step 6, wrapper defaults,
    contiguity, the ``assume`` table): the numbers hold if these do."""

    spec: str
    assumptions: tuple[Assumption, ...]
    kind: str = field(default="assumed", init=False)


@dataclass(frozen=True)
class UnknownInts:
    spec: str
    params: tuple[str, ...]
    kind: str = field(default="unknown_ints", init=False)


Note = Spills | Assumed | UnknownInts


# --------------------------------------------------------------------------- spec probably wrong
# Evidence that the launch spec, not the configs, decided the numbers (``check/spec_sanity.py``):
# such a kernel is not judged, and none of its configs is reported as launching or not.
@dataclass(frozen=True)
class FlatSmemAcrossStages:
    """The same SMEM at every ``num_stages`` although a loop of the kernel is pipelined."""

    arch: str
    configs: tuple[str, ...]  # one group: the same config but for num_stages (labels)
    stages: tuple[int, ...]  # its num_stages values, in config order
    shared_bytes: int
    groups: int  # how many such groups there are, all flat
    loop_file: str | None
    loop_line: int | None
    unstated: tuple[str, ...]  # what the spec leaves unstated: ints without a value, assumed dtypes
    kind: str = field(default="flat_smem_across_stages", init=False)


@dataclass(frozen=True)
class NoSmemWithDot:
    """Every config compiled to 0 B of SMEM although the kernel always runs a ``tl.dot``."""

    archs: tuple[str, ...]
    configs: int
    dot_file: str | None
    dot_line: int | None
    kind: str = field(default="no_smem_with_dot", init=False)


@dataclass(frozen=True)
class EveryConfigRejected:
    """Every config's compile fails in the kernel's own source (not resources, not a crash)."""

    configs: int
    error: str  # the first config's error
    file: str | None
    line: int | None
    kind: str = field(default="every_config_rejected", init=False)


@dataclass(frozen=True)
class StaticAssertEveryConfig:
    """A ``tl.static_assert`` fails for every config."""

    configs: int
    error: str
    file: str | None
    line: int | None
    kind: str = field(default="static_assert_every_config", init=False)


Suspicion = FlatSmemAcrossStages | NoSmemWithDot | EveryConfigRejected | StaticAssertEveryConfig
