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
from autotune_rewrite.spec.spec_inference import Context, Draft

# The default sweep of a dimension used as a tile extent: the head dims and hidden-size tiles
# LLM serving uses. One home for it; the words in the output name it.
SHAPE_SWEEP = (64, 128, 256)


def sweep_shapes(ctx: Context, draft: Draft, tile_dims: frozenset[str]) -> list[Draft]:
    """``draft`` as one spec per swept value of its lacking tile extents (those in ``tile_dims``);
    ``[draft]`` when none lacks, ``--exact`` is on, or the sweep would need more than
    ``spec_cases.MAX_SWEEP`` specs even at each value's extremes (then it stays ``needs_spec``)."""
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
    values = _bounded({n: SHAPE_SWEEP for n in swept})
    if values is None:
        return [draft]

    def origin(n: str) -> str:
        given = swept.get(n, n)
        of = "" if given == n else f" (it gives {given})"
        return (f"{n}{of}: a tile extent no code gives a value; swept over {_words(values[n])}, the default sweep of a "
                f"dimension used as a tile extent (the assume table narrows it)")

    return cases.sweep(ctx, draft, values, origin, fill=set(swept) & set(lacking), table="default shape sweep")


def _bounded(sweep: dict[str, Sequence[int]]) -> dict[str, tuple[int, ...]] | None:
    """The sweep within ``MAX_SWEEP`` specs: every value, else each name at its extremes (the
    smallest and the largest decide launchability in nearly every kernel), else None."""
    full = {n: tuple(v) for n, v in sweep.items()}
    if math.prod(len(v) for v in full.values()) <= cases.MAX_SWEEP:
        return full
    ends = {n: (min(v), max(v)) for n, v in full.items()}
    return ends if 2 ** len(ends) <= cases.MAX_SWEEP else None


def _words(values: Sequence[int]) -> str:
    return "{" + ", ".join(map(str, values)) + "}"


__all__ = ["SHAPE_SWEEP", "sweep_shapes"]
