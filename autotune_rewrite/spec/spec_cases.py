"""One spec becomes several cases, or gains per-config values: sweeps, branches, heuristics.

- ``sweep``: the ``assume`` table / ``--assume`` fills what a spec does not know; a list of
  values is one spec per combination (at most ``MAX_SWEEP``);
- ``branches``: a constexpr the launch gives as ``a if c else b``, or a flag nothing sets, is
  one spec per value;
- ``stated``: a name the wrapper pins to a few values (``assert Lk in {64, 128}``) is one spec
  per value, every parameter computed from it evaluated on that value;
- ``heuristic_values``: each ``@triton.heuristics`` value per config, evaluated on the spec.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from autotune_rewrite.constexpr_values import read_constexpr
from autotune_rewrite.spec.runtime_types import int_type
from autotune_rewrite.spec.spec_draft import ASSUMED_INT, Context, Draft, ParamSpec
from autotune_rewrite.triton_types import normalize_type
from autotune_rewrite.errors import UserError
from autotune_rewrite.outcomes import Assumption

MAX_SWEEP = 8  # specs one sweep may make of one launch's spec
TOO_MANY = f"over more than {MAX_SWEEP} combinations"  # a stated set too large to sweep (``stated``)


def branches(ctx: Context, draft: Draft) -> list[Draft]:
    """One spec per value a constexpr's branches give (``a if c else b`` at the launch)."""
    if not draft.options:
        return [draft]
    return sweep(ctx, draft, draft.options, draft.option_why.get, fill=set(draft.options))


def stated(ctx: Context, draft: Draft, assume: Mapping[str, tuple[Any, ...]] | None = None) -> list[Draft]:
    """One spec per value of the names the wrapper pins before the launch (``assert Lk in {64,
    128}``, ``if D not in SUPPORTED: raise``), each parameter computed from them
    (``HEAD_DIM=Lk``, ``BLOCK_D=triton.next_power_of_2(Lk)``) evaluated on the same value and
    listed with the statement it rests on. More than ``MAX_SWEEP`` combinations: those
    parameters stay missing, saying so. The ``assume`` table narrows a set: ``HEAD_DIM = 128``
    for ``HEAD_DIM=Lk`` sweeps ``Lk`` over {128} only (the user's serving shape)."""
    if not draft.stated_exprs:
        return [draft]
    from autotune_rewrite.evaluate import Known, free_names
    from autotune_rewrite.spec.expression_text import evaluate_text

    draft = _narrowed(draft, assume or {})
    keys = list(draft.stated)
    sizes = [len(draft.stated[k][0]) for k in keys]
    plain = dataclasses.replace(draft, stated={}, stated_exprs={})
    if math.prod(sizes) > MAX_SWEEP:
        plain = _copy(plain, draft.name)
        for n, text in draft.stated_exprs.items():
            plain.lacking.append(n)
            plain.why[n] = (f"`{text}` at {draft.stated_where}, {TOO_MANY} of "
                            + ", ".join(f"{k} in {_set(draft.stated[k][0])}" for k in keys))
        return [plain]
    out = []
    for combo in itertools.product(*(draft.stated[k][0] for k in keys)):
        env = dict(zip(keys, combo))
        new = _copy(plain, " ".join([draft.name, *(f"{k}={v}" for k, v in env.items() if len(draft.stated[k][0]) > 1)]))
        for n, text in draft.stated_exprs.items():
            used = sorted(free_names(text))
            result = evaluate_text(text, {k: env[k] for k in used})
            value = result.value if isinstance(result, Known) else None
            if value is None or isinstance(value, bool) or not isinstance(value, (int, str)):
                new.lacking.append(n)
                new.why[n] = f"`{text}` at {draft.stated_where} does not evaluate statically"
                continue
            said = "; ".join(f"{k} = {env[k]!r}, one of {_set(draft.stated[k][0])} by the wrapper's {draft.stated[k][1]}"
                             for k in used)
            a = Assumption(n, repr(value), f"`{text}` at {draft.stated_where} with {said}: one spec per value")
            new.params[n] = ParamSpec("constexpr", value, assumption=a, source="launch")
        out.append(new)
    return out


def _narrowed(draft: Draft, assume: Mapping[str, tuple[Any, ...]]) -> Draft:
    """The stated sets cut to what the ``assume`` table gives a parameter passed as the pinned
    name itself (``HEAD_DIM=Lk``); values outside the set are the user's word and replace it."""
    sets = dict(draft.stated)
    for param, text in draft.stated_exprs.items():
        if param in assume and text.strip() in sets:
            values, words = sets[text.strip()]
            given = tuple(assume[param])
            kept = tuple(v for v in values if v in given) or given
            sets[text.strip()] = (kept, words + f", narrowed to {_set(kept)} by the assume table's {param}")
    return dataclasses.replace(draft, stated=sets) if sets != draft.stated else draft


def _set(values: tuple) -> str:
    return "{" + ", ".join(map(repr, values)) + "}"


def _copy(draft: Draft, name: str) -> Draft:
    return dataclasses.replace(draft, name=name, params=dict(draft.params), lacking=list(draft.lacking),
                               why=dict(draft.why), options=dict(draft.options), option_why=dict(draft.option_why),
                               exprs=dict(draft.exprs), ranges=dict(draft.ranges), ranged=dict(draft.ranged))


def sweep(ctx: Context, draft: Draft, assume: Mapping[str, tuple[Any, ...]], origin: str | Callable[[str], str],
          fill: set[str] | None = None, table: str | None = None, ranged: bool = False) -> list[Draft]:
    """Fill what is unknown from the ``assume`` table: lacking constexprs and ints of unknown
    value (and ``fill``: these names whatever they hold), by parameter name, or through the launch
    expression they come from (``BK = 128 if K == 96 else K`` with ``K`` assumed). A list of values
    gives one spec per combination (at most ``MAX_SWEEP``). ``table`` names where the values come
    from in the words of a derived parameter (default: the assume table). ``ranged``: the values
    are an assumed range, not values the code or the user states: the specs made stay one family
    (``Draft.family``/``ranged``)."""
    if not assume:
        return [draft]
    # The evaluator is LibCST's; importing it lazily keeps a warm rerun from paying for it.
    from autotune_rewrite.evaluate import Known, free_names
    from autotune_rewrite.spec.expression_text import evaluate_text

    unknown = lambda n: ((fill and n in fill) or n in draft.lacking or n in draft.ranges or (  # noqa: E731
        n in draft.params and (draft.params[n].source == "assumed" or draft.params[n].divisible)))
    names = [p.name for p in ctx.site.params if p.name in assume and unknown(p.name)]
    derived = {p.name: draft.exprs[p.name] for p in ctx.site.params
               if p.name not in assume and p.name in draft.exprs and unknown(p.name)
               and (free := free_names(draft.exprs[p.name])) and free <= set(assume)}
    keys = list(dict.fromkeys([*names, *sorted(n for e in derived.values() for n in free_names(e))]))
    if not keys:
        return [draft]
    combos = list(itertools.islice(itertools.product(*(assume[n] for n in keys)), MAX_SWEEP))
    by_param = {p.name: p for p in ctx.site.params}
    out = []
    for combo in combos:
        env = dict(zip(keys, combo))
        swept = [f"{n}={v}" for n, v in env.items() if len(assume[n]) > 1]
        done = set(names) | set(derived)
        new = Draft(" ".join([draft.name, *swept]),
                    dict(draft.params), [n for n in draft.lacking if n not in done], dict(draft.why),
                    {k: v for k, v in draft.options.items() if k not in done},
                    {k: v for k, v in draft.option_why.items() if k not in done}, dict(draft.exprs),
                    ranges={k: v for k, v in draft.ranges.items() if k not in done},
                    family=draft.family, ranged=dict(draft.ranged))
        if ranged:
            new.family = draft.family or draft.name
            new.ranged.update((n, v) for n, v in env.items() if len(assume[n]) > 1)
        for n in names:
            v = env[n]
            a = Assumption(n, repr(v), origin(n) if callable(origin) else f"{origin} assume table")
            if by_param[n].is_constexpr:
                try:
                    typed = read_constexpr(v)
                except ValueError as exc:
                    raise UserError(f"{_where(origin, n)} {exc}") from None
                new.params[n] = ParamSpec("constexpr", typed, assumption=a, source="assume")
            else:
                new.params[n] = _runtime_value(ctx, new.params.get(n), n, v, a, _where(origin, n))
        for n, text in derived.items():
            result = evaluate_text(text, env)
            if not isinstance(result, Known) or isinstance(result.value, bool) and not by_param[n].is_constexpr:
                if n not in new.lacking and n not in new.params:
                    new.lacking.append(n)
                continue
            used = ", ".join(f"{k} = {env[k]!r}" for k in sorted(free_names(text)))
            source = (f"the {table}" if table else f"the {origin} assume table" if isinstance(origin, str)
                      else "the assume table")
            a = Assumption(n, repr(result.value), f"`{text}` at the launch, with {used} from {source}")
            if by_param[n].is_constexpr:
                new.params[n] = ParamSpec("constexpr", result.value, assumption=a, source="assume")
            elif isinstance(result.value, int):
                new.params[n] = _runtime_value(ctx, new.params.get(n), n, result.value, a, _where(origin, n))
        out.append(new)
    return out


def int8_operands(ctx: Context, draft: Draft, kernel_source: str | None) -> None:
    """In a spec whose accumulator dtype constexpr is ``tl.int32`` (one branch of
    ``tl.float32 if a.is_floating_point() else tl.int32``), the dot's operands are int8: pointers
    whose dtype was only assumed become ``*i8``, so the spec is consistent with itself. They are
    decided, so a quantized operand's dtype range (bf16 or fp8) is not swept for them: run before
    the sweep (an fp8 or bf16 operand into an int32 accumulator does not compile)."""
    from autotune_rewrite.spec.pointer_dtypes import int8_dot_params

    int32 = frozenset(n for n, s in draft.params.items() if s.type == "constexpr" and repr(s.value) == "tl.int32")
    if not int32:
        return
    for name in int8_dot_params(kernel_source, ctx.site.kernel, int32):
        current = draft.params.get(name)
        if current is not None and current.source == "assumed" and current.type.startswith("*"):
            draft.ranges.pop(name, None)
            draft.params[name] = ParamSpec("*i8", source="assumed", assumption=Assumption(
                name, "*i8", f"its tiles go into a tl.dot accumulating in {', '.join(sorted(int32))} = tl.int32: "
                             "assumed *i8"))


def dot_partners(ctx: Context, draft: Draft, kernel_source: str | None) -> None:
    """A ``tl.dot`` takes two operands of one dtype: where the code states one operand's pointer
    type (``assert a.dtype == torch.float8_e4m3fn``) and the other's was only assumed, the other
    takes the stated one (an fp8 GEMM's weight assumed bf16 doubled its tiles' shared memory)."""
    from autotune_rewrite.spec.dot_operands import dot_operand_pairs

    for a, b in dot_operand_pairs(kernel_source, ctx.site.kernel):
        for known, other in ((a, b), (b, a)):
            k, o = draft.params.get(known), draft.params.get(other)
            if (k is not None and o is not None and k.type.startswith("*") and k.source != "assumed"
                    and o.source == "assumed" and o.type.startswith("*") and o.type != k.type):
                draft.params[other] = ParamSpec(k.type, source="assumed", assumption=Assumption(
                    other, k.type, f"the other operand of a tl.dot with {known} ({k.type}, stated by the code): "
                                   "assumed the same dtype"))


def _where(origin: str | Callable[[str], str], name: str) -> str:
    return f"{origin}: assume.{name}" if isinstance(origin, str) else f"assume.{name}"


def _runtime_value(ctx: Context, current: ParamSpec | None, name: str, value: Any, a: Assumption,
                   where: str) -> ParamSpec:
    """An ``assume`` value for a runtime parameter: a dtype for a pointer (``"*fp16"``), an int
    for an int, a number for a float. Anything else is the user's mistake (exit 2)."""
    kind = "" if current is None or current.source == "assumed" and not current.divisible else current.type
    if current is not None and current.type.startswith("*"):
        ty = normalize_type(value) if isinstance(value, str) else None
        if ty is None or not ty.startswith("*"):
            raise UserError(f"{where} = {value!r}: {ctx.site.kernel} takes {name} as a pointer; give its type, "
                            'e.g. "*fp16"')
        return ParamSpec(ty, assumption=a, source="assume")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UserError(f"{where} = {value!r}: {ctx.site.kernel} takes {name} as a number; give an int or a float")
    if kind.startswith("fp") or kind.startswith("bf") or isinstance(value, float):
        return ParamSpec(kind or "fp32", assumption=a, source="assume")
    return ParamSpec(kind or int_type(value), value, assumption=a, source="assume")


def meta_key(config) -> str:
    """A config's meta-parameters, as a key (``heuristic_values`` are stored by it and by label)."""
    return repr(sorted(config.kwargs.items()))


def heuristic_values(ctx: Context, draft: Draft, heuristics: Sequence[Any]) -> tuple[tuple, list[Assumption]]:
    """Each heuristic's value per config (``site.configs`` order), evaluated on the draft's
    values; a heuristic that cannot be evaluated makes its parameter lacking."""
    if not heuristics:
        return (), []
    from autotune_rewrite.spec.heuristics import ScalarArg, TensorArg, config_args, evaluate, reads, reads_config

    base: dict[str, Any] = {}
    guessed: list[str] = []
    for name, spec in draft.params.items():
        if spec.has_value:
            base[name] = spec.value
        elif spec.type.startswith("*"):
            base[name] = TensorArg()
        elif spec.divisible:
            base[name] = ASSUMED_INT
            guessed.append(name)
        elif spec.type != "constexpr":
            base[name] = ScalarArg(name)
    out, assumptions = [], []
    for h in heuristics:
        values, why = [], ""
        for config in ctx.site.configs or (None,):
            args = {**base, **config_args(config), **{n: v[len(values)][2] for n, v in out}}
            known, value, why = evaluate(h, args)
            if not known:
                break
            values.append(value)
        given = draft.params.get(h.name)
        if len(values) != len(ctx.site.configs or (None,)) and given is not None and given.has_value \
                and given.source in ("settings", "assume"):
            # The spec states it (a captured spec holds what the lambda gave at that launch): used as
            # given, for every config. Exact unless the lambda reads a config's values.
            if reads_config(h, ctx.meta):
                assumptions.append(Assumption(h.name, repr(given.value), "as the spec gives it, for every config: "
                                              "its @triton.heuristics lambda reads the config and does not "
                                              f"evaluate statically here ({why})"))
            continue
        if len(values) != len(ctx.site.configs or (None,)):
            draft.params.pop(h.name, None)
            draft.lacking.append(h.name)
            draft.why[h.name] = f"set by @triton.heuristics, which does not evaluate statically here ({why})"
            continue
        configs = ctx.site.configs or ()
        out.append((h.name, tuple((c.label(), meta_key(c), v) for c, v in zip(configs, values))))
        used = reads(h, guessed)
        if used:
            assumptions.append(Assumption(h.name, "per config", "@triton.heuristics evaluated with "
                                          + ", ".join(f"{n} = {ASSUMED_INT}" for n in used)
                                          + " (ints of unknown value)"))
    return tuple(out), assumptions


__all__ = ["MAX_SWEEP", "branches", "heuristic_values", "dot_partners", "int8_operands", "meta_key", "stated", "sweep"]
