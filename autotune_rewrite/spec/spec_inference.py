"""One launch spec per distinct launch, from what is stated, what the code says, and what is assumed.

For each kernel parameter the first of these that knows it wins:

1. the ``kernels`` table of the settings (a spec written by hand or by ``capture``): exact;
2. a config meta-parameter: every config sets it;
3. the launch call and the wrapper around it (``wrapper/launch_args``): literals, allocations'
   dtypes, ``x is not None``, type hints, wrapper defaults, ``.stride(-1)`` of a contiguous
   tensor; exact unless the fact itself rests on something (a wrapper default, contiguity);
4. the kernel's own signature: annotations, defaults of parameters the launch leaves out;
5. the repo's ``assume`` table / ``--assume NAME=VALUE``, by parameter name (a list: a sweep);
6. the general assumptions, each listed with the verdict it produced: a pointer whose dtype
   the code does not give is ``--assume-dtype`` (bf16), or ``i32`` when the kernel uses what it
   loads as an index or with bit operations; an int of unknown value is divisible by 16 and not 1
   (what the runtime sees for serving shapes, and the specialization with the pipelined copies);
   an argument of unknown kind that the kernel does not use as a pointer is an int.

A constexpr whose value none of these knows is what the kernel still needs: ``needs_spec``,
naming exactly those parameters. ``exact=True`` turns step 6 off: a pointer without a dtype is
then a missing value, and an int without a value compiles as a generic int would (no
divisibility, not folded; noted with the verdict).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

from autotune_rewrite.model import ArgFact, AutotuneSite, KernelParam, LaunchSite
from autotune_rewrite.outcomes import Assumption
from autotune_rewrite.spec.general_assumptions import (
    FLAG_NOT_SET, assumed_pointer, bounded_range, feature_on, general, mode_with_most_code, quantized_range,
    threshold_range, typed,
)
from autotune_rewrite.spec.runtime_types import annotation_type, int_type, triton_dtype, value_type
from autotune_rewrite.spec.spec_draft import UNSET, Context, Draft, ParamSpec

MAX_LAUNCH_SPECS = 4  # distinct launches compiled per kernel; more are listed, not compiled


def bind(site: AutotuneSite, launch: LaunchSite, meta: frozenset[str] = frozenset()) -> dict[str, ArgFact]:
    """The launch's argument facts by kernel parameter (positional by index, keywords by name).

    Arguments after a ``*args`` (slot -k: k-th from the end) bind to the last parameters that
    neither a keyword nor a config (``meta``) gives: positional arguments fill parameters in
    order, and every parameter without a default must be filled, so when none of those has a
    default the tail ends at the last of them. With a default among them it could end earlier:
    not bound (the parameter stays what the kernel needs, as before)."""
    names = [p.name for p in site.params]
    out: dict[str, ArgFact] = {}
    tail = [f for f in launch.arguments if isinstance(f.slot, int) and f.slot < 0]
    for fact in launch.arguments:
        if isinstance(fact.slot, int):
            if 0 <= fact.slot < len(names):
                out[names[fact.slot]] = fact
        elif fact.slot in names:
            out[fact.slot] = fact
    if tail:
        keywords = {f.slot for f in launch.arguments if isinstance(f.slot, str)}
        free = [p for p in site.params if p.name not in keywords and p.name not in meta]
        if len(tail) <= len(free) and not any(p.default is not None for p in free):
            for fact in tail:
                out.setdefault(free[fact.slot].name, fact)
    return out


def from_fact(ctx: Context, p: KernelParam, fact: ArgFact, where: str) -> ParamSpec | None:
    """A parameter from its launch argument; None when the argument says too little."""
    said = f"{fact.text} at {where}"
    assumption = Assumption(p.name, "", f"{fact.assumption} ({said})") if fact.assumption else None

    def assumed(value_text: str) -> Assumption | None:
        return Assumption(p.name, value_text, assumption.source) if assumption else None

    constexpr = p.is_constexpr
    if fact.kind == "none":
        return ParamSpec("constexpr", None, source="launch")
    if fact.kind == "dtype":
        if constexpr and fact.value_known and isinstance(fact.value, str):
            return ParamSpec("constexpr", typed(fact.value), assumption=assumed(fact.value), source="launch")
        return None
    if fact.kind == "tensor":
        if constexpr:
            return None
        ty = triton_dtype(fact.dtype) if fact.dtype else None
        if ty is None:
            return None  # dtype unknown: the general assumption decides (step 6)
        return ParamSpec("*" + ty, assumption=assumed("*" + ty), source="launch")
    if fact.kind == "str":
        # Only a constexpr can be a string; for another parameter the launch itself would fail.
        return ParamSpec("constexpr", fact.value, assumption=assumed(repr(fact.value)), source="launch") \
            if constexpr and fact.value_known else None
    if fact.kind in ("int", "float", "bool"):
        if constexpr:
            if not fact.value_known and fact.kind == "int" and fact.upper is not None and not ctx.exact:
                return ParamSpec("constexpr", fact.upper, source="launch", assumption=Assumption(
                    p.name, str(fact.upper), f"the largest value the code allows ({said}"
                    + (f", {fact.why}" if fact.why.startswith("at most") else "") + "): the most shared memory"))
            if not fact.value_known:
                return None
            return ParamSpec("constexpr", fact.value, assumption=assumed(repr(fact.value)), source="launch")
        if fact.kind == "bool":
            return ParamSpec("u1", source="launch")  # bools are never specialized
        if fact.kind == "float":
            return ParamSpec("fp32", source="launch")
        if fact.value_known and isinstance(fact.value, int):
            return ParamSpec(int_type(fact.value), fact.value, assumption=assumed(str(fact.value)), source="launch")
        return ParamSpec("i32", source="launch")  # value unknown: step 6 may assume divisibility
    return None


def one_draft(ctx: Context, name: str, stated: Mapping[str, ParamSpec], facts: Mapping[str, ArgFact],
              where: str | None) -> Draft:
    """A spec from the stated parameters (settings), one launch's facts, and the kernel's own source."""
    draft = Draft(name)
    for p in ctx.site.params:
        spec = stated.get(p.name)
        if spec is None and (p.name in ctx.meta):
            spec = ParamSpec("constexpr", source="configs")
        if spec is None and p.name in ctx.heuristics:
            spec = ParamSpec("constexpr", source="heuristics")  # valued per config by heuristic_values
        if spec is None and p.name in facts and _pinned(draft, p, facts[p.name], where):
            continue  # one spec per value the wrapper allows (``spec_cases.stated``)
        if spec is None and p.name in facts and not ctx.exact and (
                bounded := bounded_range(p, facts[p.name], where or "the launch")):
            draft.ranges[p.name] = bounded  # one spec per value (``shape_sweep``)
            if facts[p.name].expr:
                draft.exprs[p.name] = facts[p.name].expr
            continue
        if spec is None and p.name in facts:
            spec = from_fact(ctx, p, facts[p.name], where or "the launch")
            fact = facts[p.name]
            if spec is None and p.is_constexpr and fact.options and not fact.stated:
                draft.options[p.name] = tuple(typed(o) for o in fact.options)
                draft.option_why[p.name] = f"one spec per branch of `{fact.text}` at {where}"
                continue  # one spec per value (``branches``)
            if spec is None and p.is_constexpr and fact.kind == "bool" and not ctx.exact:
                spec = feature_on(p, f"`{fact.text}` at {where} is not decided statically")
            if spec is None and facts[p.name].kind == "tensor" and not p.is_constexpr:
                spec = assumed_pointer(ctx, p, facts[p.name], where)
        if spec is None:
            spec = _from_source(p, passed=p.name in facts)
        set_elsewhere = spec is not None and spec.source in ("configs", "heuristics")
        if spec is not None and spec.type == "constexpr" and not spec.has_value and not set_elsewhere:
            spec = None
        resolved = spec if set_elsewhere else general(ctx, p, spec)
        if resolved is None and p.name in ctx.flags and not ctx.exact:
            resolved = feature_on(p, FLAG_NOT_SET)
        if resolved is None and p.is_constexpr and p.name in ctx.required:
            values, test = ctx.required[p.name]
            draft.options[p.name] = values
            draft.option_why[p.name] = (f"{p.name} in {{{', '.join(map(repr, values))}}}: the only values the kernel's "
                                        f"`tl.static_assert({test})` compiles; one spec per value")
            continue
        if resolved is None and ctx.modes.get(p.name) and not ctx.exact:
            resolved = mode_with_most_code(p, ctx.modes[p.name])
        if resolved is None and p.is_constexpr and ctx.thresholds.get(p.name) and not ctx.exact:
            draft.ranges[p.name] = threshold_range(ctx.thresholds[p.name], facts.get(p.name), where)
            continue  # one spec per value (``shape_sweep``), the value itself: never the wrapper's names
        if (resolved is not None and p.name in ctx.scaled_operands and not ctx.exact and resolved.source == "assumed"
                and resolved.type == ctx.assume_dtype):
            draft.params[p.name] = resolved  # the range's first value, and what the sweep replaces
            draft.ranges[p.name] = quantized_range(resolved.type)
            continue  # the value itself is swept, never the wrapper's names
        if p.name in facts and facts[p.name].expr and (resolved is None or resolved.divisible):
            draft.exprs[p.name] = facts[p.name].expr  # an assume value may still decide it (spec_cases)
        if resolved is None:
            draft.lacking.append(p.name)
            fact = facts.get(p.name)
            draft.why[p.name] = (f"`{fact.text}` at {where}" + (f" ({fact.why})" if " = " in fact.why else "")
                                 if fact is not None else
                                 "passed through *args at the launch" if facts and ctx.site.launches and
                                 any(launch.has_star_args for launch in ctx.site.launches) else
                                 "set by @triton.heuristics" if p.name in ctx.heuristics else
                                 "a TMA tensor descriptor (e.g. \"tensordesc<bf16[64, 64]>\")" if p.name in ctx.descriptors else
                                 "not passed at the launch, no default" if facts else "no launch found, no default")
        else:
            draft.params[p.name] = resolved
    _obey_flag_rules(ctx, draft)
    return draft


def _pinned(draft: Draft, p: KernelParam, fact: ArgFact, where: str | None) -> bool:
    """A constexpr computed only from names the wrapper pins to a few values
    (``BLOCK_D=triton.next_power_of_2(Lk)`` after ``assert Lk in {48, 64}``): swept over those
    names, so that every parameter computed from one name takes the same value in one spec."""
    if not fact.stated or not fact.expr or not p.is_constexpr:  # a runtime int: step 6 (divisibility) as any
        return False
    from autotune_rewrite.evaluate import free_names

    subjects = {name: (values, words) for name, values, words in fact.stated}
    free = free_names(fact.expr)
    if not free or not free <= set(subjects):
        return False
    for name in free:
        draft.stated[name] = subjects[name]
    draft.stated_exprs[p.name] = fact.expr
    draft.stated_where = where or "the launch"
    return True


def _obey_flag_rules(ctx: Context, draft: Draft) -> None:
    """Flags assumed on must not break the kernel's own rules between them
    (``tl.static_assert(not (FUSE_SCATTER and TMA_STORE))``): keep as many on as the rules allow,
    the earlier parameters first."""
    from autotune_rewrite.spec.param_uses import rule_holds, rule_names

    assumed = [n for n, spec in draft.params.items()
               if spec.assumption is not None and spec.assumption.source.startswith(FLAG_NOT_SET)]
    values = {n: spec.value for n, spec in draft.params.items() if isinstance(spec.value, bool)}
    rules = [r for r in ctx.flag_rules if all(n in values for n in rule_names(r))]
    if not assumed or len(assumed) > 8 or not rules or all(rule_holds(r, values) for r in rules):
        return
    # Most flags on first; among those, the earlier parameters on.
    for combo in sorted(itertools.product((True, False), repeat=len(assumed)), key=lambda c: (-sum(c), [not v for v in c])):
        trial = {**values, **dict(zip(assumed, combo))}
        if all(rule_holds(r, trial) for r in rules):
            broken = " and ".join(f"`tl.static_assert({r})`" for r in rules if not rule_holds(r, values))
            for name, on in zip(assumed, combo):
                if not on:
                    draft.params[name] = ParamSpec("constexpr", False, source="assumed", assumption=Assumption(
                        name, "False", f"{FLAG_NOT_SET}: assumed False, as the kernel's {broken} rules out the others on"))
            return


def _from_source(p: KernelParam, passed: bool) -> ParamSpec | None:
    """Annotations, and the kernel's defaults for parameters the launch leaves out."""
    ann = annotation_type(p)
    if ann is not None:
        return ParamSpec(ann, source="annotation")
    if passed or not p.default_known:
        return None
    value = p.default_value
    if p.is_constexpr:
        return ParamSpec("constexpr", value, source="default")
    if value is None:
        return ParamSpec("constexpr", None, source="default")  # None is always a constexpr at runtime
    ty = value_type(value)
    if ty is None:
        return None
    return ParamSpec(ty, value if isinstance(value, int) and not isinstance(value, bool) else UNSET,
                     source="default")


def distinct(drafts: Sequence[Draft]) -> list[Draft]:
    """Launches that give the same spec are one spec."""
    seen: dict[tuple, Draft] = {}
    for d in drafts:
        key = (tuple(sorted((n, s.type, repr(s.value), s.divisible) for n, s in d.params.items())),
               tuple(d.lacking), tuple(sorted(d.stated_exprs.items())), repr(sorted(d.stated.items())),
               repr(sorted(d.ranges.items())))
        seen.setdefault(key, d)
    return list(seen.values())


__all__ = ["MAX_LAUNCH_SPECS", "bind", "distinct", "from_fact", "one_draft"]
