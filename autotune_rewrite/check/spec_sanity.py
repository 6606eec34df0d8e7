"""Is the launch spec probably wrong? Four checks over one kernel x spec's compiled verdicts.

A thin or wrong spec gives numbers that look exact and are not: an attention kernel compiled
with types but no int values had the same SMEM at every ``num_stages`` (no divisibility, so its
loads were too narrow for cp.async and nothing was pipelined) and "all 16 configs launch"; with
the runtime's values 6 of 16 could not. Each check below fires only on evidence the configs
cannot explain, so a kernel it flags is reported as not judged (``spec_suspect``), never as
"launches" or "cannot launch":

1. ``FlatSmemAcrossStages``: the kernel has a loop Triton pipelines (``kernel_facts``) with
   runtime bounds under this spec, yet every group of configs that differ only in
   ``num_stages`` (two or more counts of at least 2) has one SMEM figure, and the spec leaves
   something unstated that decides pipelining (an int without a value, so without the
   runtime's divisibility; an assumed pointer dtype, so maybe a load of the wrong width). A
   spec that states every value is trusted: a runtime whose strides are not multiples of 16
   does not pipeline either, and a user who gave those values must be able to get a verdict.
   ``num_stages=1`` is
   left out: on sm_120 a pipelined matmul measured the same SMEM at 1 and 2 stages (8,192 B)
   and grew from 3 on (16,384, 24,576 B), so 1 vs 2 alone proves nothing.
2. ``NoSmemWithDot``: every compiled config has 0 B of SMEM although the kernel always runs a
   ``tl.dot``, whose operands always pass through shared memory.
3. ``StaticAssertEveryConfig`` / 4. ``EveryConfigRejected``: every config fails to compile in
   the kernel's own source (a ``static_assert``; any other rejection except ptxas, which
   rejects a config for its resources). Not a compiler crash: that proves nothing about the
   spec either and stays ``compile_crashed``. Only with two or more configs: a lone config's
   rejection cannot tell the config from the spec.

Pure: verdicts and source facts in, typed findings out (``output/explain.py`` words them).
"""

from __future__ import annotations

from collections.abc import Sequence
from autotune_rewrite.evidence import REJECTED, ConfigVerdict
from autotune_rewrite.findings import (
    EveryConfigRejected,
    FlatSmemAcrossStages,
    NoSmemWithDot,
    StaticAssertEveryConfig,
    Suspicion,
)
from autotune_rewrite.isolate.kernel_facts import KernelFacts, PipelinedLoop

STATIC_ASSERT = "static_assert failed:"  # how crosscompile.one_line words CompileTimeAssertionFailure


def suspicions(verdicts: Sequence[ConfigVerdict], facts: KernelFacts,
               unstated: Sequence[str] = ()) -> tuple[Suspicion, ...]:
    """Why these verdicts probably reflect the spec rather than the configs; () when nothing does.
    ``unstated``: the spec's parameters nobody gave (ints without a value, assumed dtypes)."""
    if not verdicts:
        return ()
    found = _every_config_fails(verdicts)
    if found is not None:
        return (found,)
    out: list[Suspicion] = []
    flat = _flat_smem(verdicts, facts, tuple(unstated)) if unstated else None
    if flat is not None:
        out.append(flat)
    empty = _no_smem_with_dot(verdicts, facts)
    if empty is not None:
        out.append(empty)
    return tuple(out)


def _every_config_fails(verdicts: Sequence[ConfigVerdict]) -> Suspicion | None:
    configs = {v.config.label() for v in verdicts}
    outcomes = [v.outcome for v in verdicts]
    if len(configs) < 2 or not all(o.error is not None and o.error_kind == REJECTED for o in outcomes):
        return None
    if any(o.error.lstrip().lower().startswith("ptxas") for o in outcomes):
        return None  # ptxas rejects a config for its registers or size: the configs may well be at fault
    first = outcomes[0]
    if all(o.error.startswith(STATIC_ASSERT) for o in outcomes):
        return StaticAssertEveryConfig(len(configs), first.error, first.error_file, first.error_line)
    return EveryConfigRejected(len(configs), first.error, first.error_file, first.error_line)


def _runtime(loop: PipelinedLoop, signature: dict[str, str]) -> bool:
    """The loop's bounds are runtime values under this spec (an int of 1 becomes a constexpr)."""
    return loop.runtime or any(signature.get(p, "constexpr") != "constexpr" for p in loop.bound_params)


def _flat_smem(verdicts: Sequence[ConfigVerdict], facts: KernelFacts,
               unstated: tuple[str, ...]) -> FlatSmemAcrossStages | None:
    compiled = [v for v in verdicts if v.outcome.shared_bytes is not None]
    if not compiled:
        return None
    signature = dict(compiled[0].outcome.job.signature)
    loop = next((lp for lp in facts.pipelined_loops if _runtime(lp, signature)), None)
    if loop is None:
        return None
    groups: dict[str, list[ConfigVerdict]] = {}
    for v in compiled:
        if v.outcome.job.num_stages >= 2:  # see the module docstring
            j = v.outcome.job  # the same compile but for num_stages
            key = repr((v.arch, j.signature, j.constexprs, j.divisible_by_16, j.num_warps, j.num_ctas, j.maxnreg))
            groups.setdefault(key, []).append(v)
    staged = [g for g in groups.values() if len({v.outcome.job.num_stages for v in g}) >= 2]
    if not staged or any(len({v.outcome.shared_bytes for v in g}) > 1 for g in staged):
        return None
    first = staged[0]
    return FlatSmemAcrossStages(first[0].arch, tuple(v.config.label() for v in first),
                                tuple(v.outcome.job.num_stages for v in first), first[0].outcome.shared_bytes,
                                len(staged), loop.place.file, loop.place.line, unstated)


def _no_smem_with_dot(verdicts: Sequence[ConfigVerdict], facts: KernelFacts) -> NoSmemWithDot | None:
    dot = facts.unconditional_dot
    compiled = [v for v in verdicts if v.outcome.shared_bytes is not None]
    if dot is None or not compiled or any(v.outcome.shared_bytes for v in compiled):
        return None
    return NoSmemWithDot(tuple(dict.fromkeys(v.arch for v in compiled)), len({v.config.label() for v in compiled}),
                         dot.file, dot.line)


__all__ = ["suspicions"]
