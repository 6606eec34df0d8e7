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
from autotune_rewrite.spec.spec_draft import SHAPE_SWEEP, Context, Draft

# The compiles (specs x configs) a shape sweep may make one kernel cost in all: a sweep multiplies
# what the user's configs already cost, and a cold check of a repository must stay within CI time.
SWEEP_COMPILES = 240


def specs_per_draft(drafts: int, configs: int) -> int:
    """How many specs each of ``drafts`` launch specs may become under ``SWEEP_COMPILES`` (at
    least one, at most ``spec_cases.MAX_SWEEP``)."""
    return max(1, min(cases.MAX_SWEEP, SWEEP_COMPILES // max(1, drafts * configs)))


def sweep_shapes(ctx: Context, draft: Draft, tile_dims: frozenset[str], limit: int = cases.MAX_SWEEP) -> list[Draft]:
    """``draft`` as one spec per swept value of its lacking tile extents (those in ``tile_dims``)
    and of its assumed ranges (``Draft.ranges``: a bounded value, judged below its bound too), at
    most ``limit`` specs (``_bounded``); ``[draft]`` when there is none or ``--exact`` is on. The
    specs made are one family: a verdict that differs between them depends on the swept values."""
    # A name the wrapper pins to sets too large to sweep stays needed: its values are the
    # wrapper's, not the default table's.
    lacking = [n for n in draft.lacking if n in tile_dims and cases.TOO_MANY not in draft.why.get(n, "")]
    if ctx.exact or not (lacking or draft.ranges):
        return [draft]
    from autotune_rewrite.evaluate import Known, free_names
    from autotune_rewrite.spec.expression_text import evaluate_text

    swept: dict[str, str] = {}  # the name swept -> the parameter it gives
    full: dict[str, tuple] = {}  # the name swept -> its values
    bounds: dict[str, list[tuple[str, int]]] = {}  # a wrapper name swept -> (expression, its bound)
    bounded_words: list[str] = []
    floors: dict[str, str] = {}  # a wrapper name swept from below the sweep -> the clamp that allows it
    for name in [*lacking, *draft.ranges]:
        text = draft.exprs.get(name)
        free = free_names(text) if text else set()
        # The wrapper's names, when the expression evaluates on every swept value of them: one
        # head dim then gives every parameter computed from it, as at run time.
        if free and all(isinstance(evaluate_text(text, dict.fromkeys(free, v)), Known) for v in SHAPE_SWEEP):
            below = _below_sweep(text, free)
            for f in sorted(free):
                swept.setdefault(f, name)
                full[f] = tuple(sorted({*full.get(f, SHAPE_SWEEP), *below}))
                if below:
                    floors.setdefault(f, text)
                if name in draft.ranges:
                    bounds.setdefault(f, []).append((text, max(draft.ranges[name][0])))
                    bounded_words.append(f"{name} <= {max(draft.ranges[name][0])}")
        else:
            swept.setdefault(name, name)
            full.setdefault(name, draft.ranges[name][0] if name in draft.ranges else SHAPE_SWEEP)
    for f, rules in bounds.items():
        # A wrapper name that gives bounded values takes the values (the sweep's and the bounds)
        # at which every value it gives stays within its bound (``assert Lk <= 96`` keeps
        # ``next_power_of_2(Lk)`` at 128 at most, and Lk itself at 96).
        def within(v: int) -> bool:
            for text, bound in rules:
                got = evaluate_text(text, dict.fromkeys(free_names(text), v))
                if not (isinstance(got, Known) and isinstance(got.value, int) and got.value <= bound):
                    return False
            return True

        full[f] = tuple(v for v in sorted({*full[f], *(b for _, b in rules)}) if within(v)) or (min(full[f]),)
    values = _bounded(full, limit)
    narrowed = {n: f"narrowed to {_words(values[n])}: the full sweep would cost more than {SWEEP_COMPILES} "
                   "compiles of this kernel" for n in values if values[n] != full[n]}

    def origin(n: str) -> str:
        given = swept.get(n, n)
        cut = f", {narrowed[n]}" if n in narrowed else ""
        if given in draft.ranges and given == n:
            return f"{n}: {draft.ranges[n][1]}{cut} (the assume table gives the true value)"
        of = "" if given == n else f" (it gives {given})"
        why = f" of the default sweep {_words(full[n])}{cut}" if cut else (
            ", the default sweep of a dimension used as a tile extent")
        if n in floors:
            why += _floor_words(floors[n])
        return f"{n}{of}: a tile extent no code gives a value; swept over {_words(values[n])}{why} (the assume table narrows it)"

    table = "default shape sweep" + (f", kept where {' and '.join(dict.fromkeys(bounded_words))} (the bounds the "
                                     "code states)" if bounded_words else "") + (
        "".join(dict.fromkeys(_floor_words(t) for t in floors.values()))) + (
        f" ({'; '.join(dict.fromkeys(narrowed.values()))})" if narrowed else "")
    return cases.sweep(ctx, draft, values, origin, fill=set(swept) & {*lacking, *draft.ranges}, table=table,
                       ranged=True)


def _floor_words(text: str) -> str:
    return f", from the smallest value `{text}` allows"


def _below_sweep(text: str, free: set[str]) -> tuple[int, ...]:
    """The powers of two below the sweep that an expression clamped from below allows: with
    ``max(16, rank)`` the code says ranks that small occur, so {16, 32} are swept too (a LoRA
    rank of 32 judged only at 64 and up looked dead where it launches)."""
    from autotune_rewrite.evaluate import Known
    from autotune_rewrite.spec.expression_text import evaluate_text

    got = evaluate_text(text, dict.fromkeys(free, 1))
    if not (isinstance(got, Known) and type(got.value) is int and 1 < got.value < SHAPE_SWEEP[0]):
        return ()
    out, v = [], 1 << (got.value - 1).bit_length()
    while v < SHAPE_SWEEP[0]:
        out.append(v)
        v *= 2
    return tuple(out)


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
