"""Verdicts over a sweep instead of ``needs_spec``: a shape value that no code gives.

A constexpr the kernel uses as a tile extent (``tl.arange(0, D)``, a block shape; ``param_uses.
tile_extents``) whose value nothing gives (no config, launch literal, default, ``assume`` table)
is a shape the caller chooses: a head dim, a hidden size, a LoRA rank. Instead of stopping, the
kernel is judged over a stated sweep, one spec per value of ``SHAPE_SWEEP`` (powers of two, as
``tl.arange`` needs). Where the launch computes the constexpr from the wrapper's own names
(``BLOCK_D=triton.next_power_of_2(D)``), those names are swept and the constexpr is evaluated on
each value, as for an ``assume`` table. Every swept value is an assumption of its spec (status
``assumed``, listed). A rewrite drops a config only when it cannot launch for any spec
(``rewrite/variants``), so only when it is dead at every swept value, and v1 picks only a config
that launches at every one. ``--exact`` sweeps nothing; the ``assume`` table (given first) narrows
a sweep to the user's shapes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from autotune_rewrite.spec import spec_cases as cases
from autotune_rewrite.spec.spec_draft import Context, Draft

# The default sweep of a dimension used as a tile extent: the head dims and hidden-size tiles
# LLM serving uses. One home for it; the words in the output name it.
SHAPE_SWEEP = (64, 128, 256)
# The compiles (specs x configs) a shape sweep may make one kernel cost in all: a sweep multiplies
# what the user's configs already cost, and a cold check of a repository must stay within CI time.
SWEEP_COMPILES = 240


def specs_per_draft(drafts: int, configs: int) -> int:
    """How many specs each of ``drafts`` launch specs may become under ``SWEEP_COMPILES`` (at
    least one, at most ``spec_cases.MAX_SWEEP``)."""
    return max(1, min(cases.MAX_SWEEP, SWEEP_COMPILES // max(1, drafts * configs)))


def sweep_shapes(ctx: Context, draft: Draft, tile_dims: frozenset[str], limit: int = cases.MAX_SWEEP) -> list[Draft]:
    """``draft`` as one spec per swept value of its lacking tile extents (those in ``tile_dims``),
    at most ``limit`` specs (``_bounded``); ``[draft]`` when none lacks or ``--exact`` is on."""
    # A name the wrapper pins to sets too large to sweep stays needed: its values are the
    # wrapper's, not the default table's.
    lacking = [n for n in draft.lacking if n in tile_dims and cases.TOO_MANY not in draft.why.get(n, "")]
    if ctx.exact or not lacking:
        return [draft]
    from autotune_rewrite.evaluate import Known, free_names
    from autotune_rewrite.spec.expression_text import evaluate_text

    swept: dict[str, str] = {}  # the name swept -> the parameter it gives
    for name in lacking:
        text = draft.exprs.get(name)
        free = free_names(text) if text else set()
        # The wrapper's names, when the expression evaluates on every swept value of them.
        if free and all(isinstance(evaluate_text(text, dict.fromkeys(free, v)), Known) for v in SHAPE_SWEEP):
            for f in sorted(free):
                swept.setdefault(f, name)
        else:
            swept.setdefault(name, name)
    values = _bounded({n: SHAPE_SWEEP for n in swept}, limit)
    taken = values[next(iter(values))]  # every name is swept over the same values
    narrowed = (f"narrowed to {_words(taken)}: the full sweep would cost more than {SWEEP_COMPILES} compiles of "
                "this kernel") if taken != SHAPE_SWEEP else ""

    def origin(n: str) -> str:
        given = swept.get(n, n)
        of = "" if given == n else f" (it gives {given})"
        why = f" of the default sweep {_words(SHAPE_SWEEP)}, {narrowed}" if narrowed else (
            ", the default sweep of a dimension used as a tile extent")
        return f"{n}{of}: a tile extent no code gives a value; swept over {_words(taken)}{why} (the assume table narrows it)"

    table = "default shape sweep" + (f" ({narrowed})" if narrowed else "")
    return cases.sweep(ctx, draft, values, origin, fill=set(swept) & set(lacking), table=table)


def _bounded(sweep: dict[str, Sequence[int]], limit: int) -> dict[str, tuple[int, ...]]:
    """The sweep within ``limit`` specs: every value, else each name at its extremes (the smallest
    and the largest decide launchability in nearly every kernel), else each at its smallest. Shared
    memory grows with a tile extent, so a config that cannot launch at the smallest cannot at any
    (a prune on that spec drops only what is dead at every value); what launches there is stated as
    launching at that value only."""
    full = {n: tuple(v) for n, v in sweep.items()}
    if math.prod(len(v) for v in full.values()) <= limit:
        return full
    if 2 ** len(full) <= limit:
        return {n: (min(v), max(v)) for n, v in full.items()}
    return {n: (min(v),) for n, v in full.items()}


def _words(values: Sequence[int]) -> str:
    return "{" + ", ".join(map(str, values)) + "}"


__all__ = ["SHAPE_SWEEP", "SWEEP_COMPILES", "specs_per_draft", "sweep_shapes"]
