"""The comments the device-aware guard writes into the user's source, above its table.

They are part of the code the rewrite emits (as ``config_text`` writes a ``triton.Config``), so
they are written here, tersely, from the compiled numbers; the terminal's and the PR body's
sentences for the same refusals stay in ``output/explain.py``."""

from __future__ import annotations

from functools import singledispatch

from autotune_rewrite import findings as cf
from autotune_rewrite.rewrite.facts import Guarded


@singledispatch
def _short(x) -> str:
    return "cannot launch"


@_short.register
def _(x: cf.SmemOverOptin) -> str:
    return f"{x.shared_bytes:,} B shared memory > {x.limit:,} B opt-in"


@_short.register
def _(x: cf.SmemOverBlock) -> str:
    return f"{x.allocated:,} B shared memory allocated > {x.limit:,} B per block"


@_short.register
def _(x: cf.TooManyThreads) -> str:
    return f"{x.threads:,} threads > {x.limit:,} per block"


@_short.register
def _(x: cf.TooManyRegistersPerThread) -> str:
    return f"{x.registers} registers/thread > {x.limit}"


@_short.register
def _(x: cf.TooManyRegistersPerBlock) -> str:
    return f"{x.held:,} registers per block > {x.limit:,}"


@_short.register
def _(x: cf.TmemOver) -> str:
    return f"{x.columns:,} tensor-memory columns > {x.limit}"


@_short.register
def _(x: cf.CompileFailed) -> str:
    return "the compiler crashed" if x.crashed else "does not compile"


def guard_reason(g: Guarded, arch: str, many_specs: bool) -> str:
    """The comment above a guarded config in the generated table: why it cannot launch on ``arch``."""
    parts = []
    for r in g.refused:
        if r.arch != arch:
            continue
        text = _short(r.refusal) if r.refusal is not None else "cannot launch"
        parts.append(f"{text} ({r.spec})" if many_specs else text)
    kept = f"; kept in the list for {g.kept_for.split(',')[0]}" if g.kept_for else ""
    return "; ".join(dict.fromkeys(parts)) + kept


def guard_comment(triton_version: str) -> list[str]:
    """The comment lines over the generated guard's table."""
    with_triton = f", Triton {triton_version}" if triton_version else ""
    return [
        "Configs that cannot launch on some of the GPUs this kernel serves, by the compute",
        f"capability Triton reports (cross-compiled by autotune-rewrite{with_triton}): the",
        "autotuner skips them there and times every config elsewhere.",
        "(meta-parameters, num_warps, num_stages)",
    ]


__all__ = ["guard_comment", "guard_reason"]
