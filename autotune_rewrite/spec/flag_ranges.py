"""Flags compiled on and off: the two ends of an assumed flag's range.

A flag the code does not decide (``HAS_BIAS`` nobody passes, ``x is not None`` of an argument that
may be None) is compiled with its feature on (``general_assumptions.feature_on``): the most code,
usually the most shared memory. On alone, a config the flag's feature puts over the limit looks
dead for a caller who never turns it on, and a prune would drop it. So each such launch is also
judged with every assumed flag off, the other end: one family of two specs (``check/ranges``),
and a verdict that differs between them depends on the flags. Both ends rather than every
combination: 2^k specs for k flags would cost what the staged compile saves, and shared memory
grows with each feature, so the extremes bound what is between.

Only where it fits the kernel's sweep budget (``shape_sweep.SWEEP_COMPILES``), never with
``--exact`` (which assumes no flag), and only when the kernel's own rules over its flags
(``tl.static_assert``) allow them all off.
"""

from __future__ import annotations

import dataclasses

from autotune_rewrite.outcomes import Assumption
from autotune_rewrite.spec.spec_draft import Context, Draft, ParamSpec

FEATURE_ON = "assumed True (its feature on)"  # the words of ``general_assumptions.feature_on``


def assumed_on(draft: Draft) -> list[str]:
    """The flags ``draft`` compiles on because nothing decides them."""
    return [n for n, s in draft.params.items()
            if s.source == "assumed" and s.value is True and s.assumption is not None
            and s.assumption.source.endswith(FEATURE_ON)]


def both_ends(ctx: Context, draft: Draft) -> list[Draft]:
    """``draft`` (its assumed flags on) and its twin with them all off, one family; ``[draft]``
    when no flag is assumed, under ``--exact``, or when the kernel's rules forbid all off."""
    flags = assumed_on(draft)
    if ctx.exact or not flags:
        return [draft]
    from autotune_rewrite.spec.param_uses import rule_holds, rule_names

    values = {n: s.value for n, s in draft.params.items() if isinstance(s.value, bool)}
    off = {**values, **dict.fromkeys(flags, False)}
    if not all(rule_holds(r, off) for r in ctx.flag_rules if all(n in off for n in rule_names(r))):
        return [draft]
    key = "/".join(flags)
    family = draft.family or draft.name
    on_draft = dataclasses.replace(draft, family=family, ranged={**draft.ranged, key: True},
                                   params=dict(draft.params))
    twin = dataclasses.replace(draft, name=f"{draft.name} {key}=False", family=family,
                               ranged={**draft.ranged, key: False}, params=dict(draft.params),
                               lacking=list(draft.lacking), why=dict(draft.why))
    for n in flags:
        was = draft.params[n].assumption.source.removesuffix(FEATURE_ON)
        twin.params[n] = ParamSpec("constexpr", False, source="assumed", assumption=Assumption(
            n, "False", f"{was}assumed False, the other end of its range (one spec with it on, one off)"))
    return [on_draft, twin]


__all__ = ["FEATURE_ON", "assumed_on", "both_ends"]
