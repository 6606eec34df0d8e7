"""Words for the typed facts the check stage returns: why a config cannot launch, the largest tile
that fits, the check notes and suspicions. What a variant decided and why is worded in
``explain_rewrite``, which builds on these.

The stages hand over data (``findings.py``, ``rewrite/facts.py``); the sentences are
chosen here, once, and used by the check tables, the rewrite summary, the JSON's human
strings, the commit message and the PR body, so every place says the same thing the same way.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import singledispatch
from typing import TYPE_CHECKING

from autotune_rewrite import findings as cf
from autotune_rewrite.evidence import ConfigVerdict

if TYPE_CHECKING:
    from autotune_rewrite.check.ranges import RangeVerdict


# --------------------------------------------------------------------------- why it cannot launch
@singledispatch
def refusal(r) -> str:
    """One refusal (a failed compile or the limit that leaves no block), in numbers."""
    raise TypeError(f"no words for {type(r).__name__}")


@refusal.register
def _(r: cf.CompileOverBudget) -> str:
    return f"not known: {r.message} (stopped after {r.seconds:.0f} s; the autotuner pays this at first use)"


@refusal.register
def _(r: cf.CompileFailed) -> str:
    where = f" ({r.file}:{r.line})" if r.file else ""
    return f"compile {'crashed' if r.crashed else 'error'}: {r.error}{where}"


@refusal.register
def _(r: cf.TooManyThreads) -> str:
    return f"{r.threads:,} threads (num_warps={r.num_warps}) > {r.limit:,} per block"


@refusal.register
def _(r: cf.TooManyRegistersPerThread) -> str:
    return f"registers {r.registers}/thread > {r.limit} per thread"


@refusal.register
def _(r: cf.TooManyRegistersPerBlock) -> str:
    text = f"registers {r.registers}/thread x {r.threads:,} threads > {r.limit:,} per block"
    if r.held != r.registers * r.threads:
        text += f" ({r.held:,} as allocated)"
    return text


@refusal.register
def _(r: cf.SmemOverOptin) -> str:
    static = f" (+{r.static_bytes:,} B static)" if r.static_bytes else ""
    return (f"shared memory {r.shared_bytes:,} B{static} > {r.limit:,} B opt-in limit of {r.arch}, "
            f"over by {r.shared_bytes - r.limit:,} B{_stopped(r)}")


@refusal.register
def _(r: cf.SmemOverBlock) -> str:
    return (f"shared memory {r.shared_bytes:,} B + {r.static_bytes:,} B static + {r.reserved_bytes:,} B reserved "
            f"= {r.allocated:,} B allocated > {r.limit:,} B per block on {r.arch}{_stopped(r)}")


def _stopped(r: cf.SmemOverOptin | cf.SmemOverBlock) -> str:
    """The staged compile stopped at the SMEM figure (``--full`` compiles the rest)."""
    return "" if r.registers_compiled else " (registers not compiled: cannot launch)"


@refusal.register
def _(r: cf.TmemOver) -> str:
    return f"tensor memory {r.columns:,} columns > {r.limit} per SM"


def verdict_reason(v: ConfigVerdict) -> str | None:
    """Why this config cannot launch on its target, in numbers; None when it launches."""
    r = v.refusal
    return None if r is None else refusal(r)


def occupancy_reason(blocked: cf.Blocked | None) -> str | None:
    return None if blocked is None else refusal(blocked)


# --------------------------------------------------------------------------- verdicts over a range
def range_values(values: Iterable[tuple[tuple[str, object], ...]]) -> str:
    """``d = 64, 128`` for one name; ``(d, BK) = (64, 128), (128, 256)`` for several."""
    values = list(values)
    names = [n for n, _ in values[0]] if values else []
    if len(names) == 1:
        return f"{names[0]} = " + ", ".join(repr(dict(v)[names[0]]) for v in values)
    return f"({', '.join(names)}) = " + ", ".join("(" + ", ".join(repr(x) for _, x in v) + ")" for v in values)


def depends(rv: "RangeVerdict") -> str:
    """``BLOCK_M=32 w4 s2 on sm_120: depends on d: launches at d = 64, 128; cannot at d = 256
    (shared memory 147,456 B > ...)``: a verdict that changes inside its assumed range."""
    cannot = "; ".join(f"{range_values([at])}: {verdict_reason(v)}" for at, v in rv.cannot_at)
    return (f"{rv.config} on {rv.arch}: depends on {', '.join(rv.names)}: launches at {range_values(rv.launches_at)}; "
            f"cannot at {cannot}")


# --------------------------------------------------------------------------- the SMEM model's bound
def largest_fit(fit: cf.LargestFit) -> str:
    """``BLOCK_T <= 16 at BLOCK_H=16, num_stages=2 (predicted 61,568 B of 101,376 B)``."""
    others = ", ".join(f"{k}={x}" for k, x in fit.held)
    where = f" at {others}" if others else ""
    if fit.value is None:
        return f"no {fit.param} fits{where}"
    return f"{fit.param} <= {fit.value}{where} (predicted {fit.predicted_bytes:,} B of {fit.limit:,} B)"


def largest_fits(fits: Iterable[cf.LargestFit]) -> dict[str, str]:
    """Per target arch, its bounds in one line (model order), as the tables and JSON show them."""
    out: dict[str, list[str]] = {}
    for f in fits:
        out.setdefault(f.arch, []).append(largest_fit(f))
    return {arch: "; ".join(parts) for arch, parts in out.items()}


# --------------------------------------------------------------------------- check notes
@singledispatch
def note(n) -> str:
    raise TypeError(f"no words for {type(n).__name__}")


@note.register
def _(n: cf.Spills) -> str:
    return (f"{n.arch} {n.config} (launch spec {n.spec}): spills {n.spills} registers to local memory "
            f"({n.registers} registers/thread)")


@note.register
def _(n: cf.Assumed) -> str:
    by_reason: dict[str, list[str]] = {}
    for a in n.assumptions:
        by_reason.setdefault(a.source, []).append(f"{a.parameter} = {a.value}" if a.value else a.parameter)
    parts = "; ".join(f"{', '.join(names)} ({reason})" for reason, names in by_reason.items())
    return (f"launch spec {n.spec} rests on {len(n.assumptions)} assumption(s), the numbers hold if they do: "
            f"{parts}. State the true values in the kernels or assume table to make them exact")


@note.register
def _(n: cf.UnknownInts) -> str:
    return (f"int parameters compiled without a known value (no divisibility-16 hint, not folded when 1): "
            f"{', '.join(n.params)}; give values = {{ ... }} in the launch spec to match a launch")


# --------------------------------------------------------------------------- spec probably wrong
def _at(file: str | None, line: int | None) -> str:
    return f" ({file}:{line})" if file else ""


@singledispatch
def suspicion(s) -> str:
    """Why a kernel's launch spec is probably wrong, in numbers."""
    raise TypeError(f"no words for {type(s).__name__}")


@suspicion.register
def _(s: cf.FlatSmemAcrossStages) -> str:
    stages = ", ".join(map(str, s.stages))
    more = f" (and in {s.groups - 1} more such group(s))" if s.groups > 1 else ""
    loop = f"the loop at {s.loop_file}:{s.loop_line}" if s.loop_file else "a loop of the kernel"
    return (f"shared memory is {s.shared_bytes:,} B at every num_stages ({stages}) for {', '.join(s.configs)} on "
            f"{s.arch}{more}, although {loop} loads tiles into a tl.dot, which Triton pipelines (one buffer more "
            "per stage) when its loads are at least 4 bytes wide: the spec probably lacks the divisibility or the "
            f"dtypes the runtime gives; state {', '.join(s.unstated)} (values = {{ ... }}, types = {{ ... }})")


@suspicion.register
def _(s: cf.NoSmemWithDot) -> str:
    return (f"all {s.configs} config(s) compiled to 0 B of shared memory on {', '.join(s.archs)}, although the "
            f"kernel always runs a tl.dot{_at(s.dot_file, s.dot_line)}, whose operands pass through shared memory: "
            "the spec's constexprs probably compile it away (a loop with no iterations?)")


@suspicion.register
def _(s: cf.StaticAssertEveryConfig) -> str:
    message = s.error.removeprefix("static_assert failed:").strip()
    return (f"a static_assert fails for every one of the {s.configs} configs{_at(s.file, s.line)}: {message}; "
            "the spec's values probably break the kernel's own assumptions")


@suspicion.register
def _(s: cf.EveryConfigRejected) -> str:
    return (f"every one of the {s.configs} configs fails to compile{_at(s.file, s.line)}: {s.error}; with the same "
            "error for every config, the spec's types or constexprs are probably wrong, not the configs")


def suspicions(found: Iterable) -> str:
    return "; ".join(suspicion(s) for s in found)


__all__ = ["largest_fit", "largest_fits", "note", "occupancy_reason", "refusal", "suspicion", "suspicions", "verdict_reason"]
