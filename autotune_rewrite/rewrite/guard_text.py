"""The device-aware guard's table as text: its comments and its rows, per compute capability.

They are part of the code the rewrite emits (as ``config_text`` writes a ``triton.Config``), so
they are written here, tersely, from the compiled numbers; the terminal's and the PR body's
sentences for the same refusals stay in ``output/explain.py``. Every line fits the file's line
length: comments are wrapped, rows split as the formatters split them (``line_split``). The
same rows start a new guard (``device_guard``) and extend an existing one (``guard_extend``)."""

from __future__ import annotations

import textwrap
from functools import singledispatch
from typing import Sequence

from autotune_rewrite import findings as cf
from autotune_rewrite.line_split import bracketed
from autotune_rewrite.rewrite import config_text
from autotune_rewrite.rewrite.decision import Decision
from autotune_rewrite.rewrite.facts import Guarded
from autotune_rewrite.targets import ARCHS


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
    kept = (f"; kept in the list for {g.kept_for.name}" if g.kept_for else
            "; the list has no edit that drops it alone" if g.in_place is not None else "")
    return "; ".join(dict.fromkeys(parts)) + kept


def comment(text: str, indent: str, nl: str, width: int) -> str:
    """``text`` as ``# `` lines within ``width`` (formatters leave comments as written)."""
    lines = textwrap.wrap(text, max(width - len(indent) - 2, 20), break_long_words=False, break_on_hyphens=False)
    return "".join(f"{indent}# {line}{nl}" for line in lines)


def guard_comment(triton_version: str, nl: str, width: int) -> str:
    """The comment over the generated guard's table."""
    with_triton = f", Triton {triton_version}" if triton_version else ""
    text = ("Configs that cannot launch on some of the GPUs this kernel serves, by the compute capability Triton "
            f"reports (cross-compiled by autotune-rewrite{with_triton}): the autotuner skips them there and times "
            "every config elsewhere.")
    return comment(text, "", nl, width) + f"# (meta-parameters, num_warps, num_stages){nl}"


def by_capability(decision: Decision) -> dict[int, list[Guarded]]:
    """The guarded configs under each capability they cannot launch on, lowest first."""
    out: dict[int, list[Guarded]] = {}
    for g in decision.guarded:
        for arch in g.archs:
            out.setdefault(ARCHS[arch].capability, []).append(g)
    return dict(sorted(out.items()))


def entry_key(kwargs: dict, num_warps: int, num_stages: int) -> tuple:
    """What the generated pruner compares: (meta-parameters, num_warps, num_stages)."""
    return tuple(sorted(kwargs.items())), num_warps, num_stages


def rows(guards: Sequence[Guarded], cap: int, many_specs: bool, quote: str, indent: str, unit: str, nl: str,
         width: int) -> str:
    """Each config's reason comment and ``(meta-parameters, num_warps, num_stages)`` row; rows
    that follow one with the same reason share its comment (a product's dead row is often ten)."""
    out, said = [], None
    for g in guards:
        reason = guard_reason(g, f"sm_{cap}", many_specs)
        if reason != said:
            out.append(comment(reason, indent, nl, width))
            said = reason
        c, inner = g.config, indent + unit
        items = [f"{config_text._literal(k, quote)}: {config_text._literal(v, quote)}" for k, v in c.kwargs.items()]
        # A row that does not fit is a tuple display: one item per line, its dict exploded too
        # when it does not fit either (the dict's line ends with a comma: one column less).
        meta = bracketed("{", items, "}", at=len(inner), indent=inner, unit=unit, nl=nl, width=width - 1,
                         collection=True)
        numbers = [str(c.effective_num_warps), str(c.effective_num_stages)]
        row = bracketed("(", [meta, *numbers], "),", at=len(indent), indent=indent, unit=unit, nl=nl, width=width,
                        collection=True)
        out.append(f"{indent}{row}{nl}")
    return "".join(out)


def capability_block(guards: Sequence[Guarded], cap: int, many_specs: bool, quote: str, indent: str, unit: str,
                     nl: str, width: int) -> str:
    """One capability's entry of the table: ``120: [  # sm_120``, its rows, ``],``."""
    body = rows(guards, cap, many_specs, quote, indent + unit, unit, nl, width)
    return f"{indent}{cap}: [  # sm_{cap}{nl}{body}{indent}],{nl}"


__all__ = ["by_capability", "capability_block", "comment", "entry_key", "guard_comment", "guard_reason", "rows"]
