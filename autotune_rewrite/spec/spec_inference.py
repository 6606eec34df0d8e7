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
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from autotune_rewrite.constexpr_values import read_constexpr
from autotune_rewrite.triton_types import normalize_type
from autotune_rewrite.model import ArgFact, AutotuneSite, KernelParam, LaunchSite
from autotune_rewrite.outcomes import Assumption
from autotune_rewrite.spec.specialization import do_not_specialize, is_int_type

MAX_LAUNCH_SPECS = 4  # distinct launches compiled per kernel; more are listed, not compiled
# The value assumed for an int of unknown value where a value is needed: a constexpr the kernel
# uses only in arithmetic (a stride, a loop bound; ``param_uses``), an input of a heuristic.
# Divisible by 16, not 1, and large, so that no loop gets too short to pipeline.
ASSUMED_INT = 4096
ASSUMED_DTYPE = "tl.float32"  # a dtype constexpr nobody gives (accumulators are fp32 in nearly every kernel)

_UNSET = object()


@dataclass(frozen=True)
class ParamSpec:
    """One parameter in one spec: its Triton type, value, and what it rests on."""

    type: str  # "*bf16", "i32", "fp32", "u1", "constexpr"
    value: Any = _UNSET  # a constexpr's value, or a runtime int's (for specialization)
    divisible: bool = False  # an int of unknown value assumed divisible by 16 (and not 1)
    assumption: Assumption | None = None
    source: str = ""  # "launch", "annotation", "default", "settings", "assume"

    @property
    def has_value(self) -> bool:
        return self.value is not _UNSET


@dataclass
class Draft:
    """A spec being built: one parameter at a time."""

    name: str
    params: dict[str, ParamSpec] = field(default_factory=dict)
    lacking: list[str] = field(default_factory=list)
    why: dict[str, str] = field(default_factory=dict)  # lacking parameter -> where its value comes from
    options: dict[str, tuple] = field(default_factory=dict)  # constexpr -> the values it may take
    option_why: dict[str, str] = field(default_factory=dict)  # constexpr -> why those values
    exprs: dict[str, str] = field(default_factory=dict)  # value unknown -> the launch expression it comes from
    # Names the wrapper pins to a few values before the launch (``assert Lk in {64, 128}``):
    # name -> (values, the statement in words); and the parameters computed from them -> expression.
    stated: dict[str, tuple[tuple, str]] = field(default_factory=dict)
    stated_exprs: dict[str, str] = field(default_factory=dict)
    stated_where: str = ""


def int_type(value: int) -> str:
    """The runtime's type for a Python int (``native_specialize_impl``)."""
    if -(2**31) <= value < 2**31:
        return "i32"
    if -(2**63) <= value < 2**63:
        return "i64"
    return "u64"


def value_type(value: Any) -> str | None:
    if isinstance(value, bool):
        return "u1"
    if isinstance(value, int):
        return int_type(value)
    if isinstance(value, float):
        return "fp32"
    return None


def annotation_type(param: KernelParam) -> str | None:
    """The type an annotation pins (Triton's ``KernelParam.annotation_type``), else None."""
    if param.annotation is None or param.is_constexpr:
        return None
    ty = normalize_type(param.annotation)
    return None if ty in (None, "constexpr") else ty


def triton_dtype(torch_name: str) -> str | None:
    """``float32`` -> ``fp32``, with Triton's own table (``triton._utils``)."""
    from triton._utils import type_canonicalisation_dict

    return type_canonicalisation_dict.get(torch_name)


def bind(site: AutotuneSite, launch: LaunchSite) -> dict[str, ArgFact]:
    """The launch's argument facts by kernel parameter (positional by index, keywords by name)."""
    names = [p.name for p in site.params]
    out: dict[str, ArgFact] = {}
    for fact in launch.arguments:
        if isinstance(fact.slot, int):
            if fact.slot < len(names):
                out[names[fact.slot]] = fact
        elif fact.slot in names:
            out[fact.slot] = fact
    return out


@dataclass(frozen=True)
class Context:
    """What every spec of one kernel shares."""

    site: AutotuneSite
    meta: frozenset[str]  # set by every config
    pointers: frozenset[str]  # used as pointers in the kernel body
    index_pointers: frozenset[str]  # pointers whose loaded values are used as ints
    assume_dtype: str  # "*bf16"
    assume_dtype_name: str  # "bf16", for the words
    exact: bool
    heuristics: frozenset[str] = frozenset()  # set by @triton.heuristics
    arithmetic: frozenset[str] = frozenset()  # constexprs used only in arithmetic (param_uses)
    descriptors: frozenset[str] = frozenset()  # used as TMA tensor descriptors: typed only from a pre_hook
    int8_dots: frozenset[str] = frozenset()  # pointers feeding a tl.dot with an int32 accumulator
    fp32_loads: frozenset[str] = frozenset()  # pointers whose tiles go into fp32-only math
    address_tables: frozenset[str] = frozenset()  # pointers whose loaded values become pointers
    flags: frozenset[str] = frozenset()  # constexprs the kernel only tests (``if HAS_BIAS:``)
    dtypes: frozenset[str] = frozenset()  # constexprs the kernel only uses as a dtype
    modes: Mapping[str, tuple] = field(default_factory=dict)  # compared only with literals: their values
    flag_rules: tuple[str, ...] = ()  # the kernel's static_asserts over flags alone
    required: Mapping[str, tuple[tuple, str]] = field(default_factory=dict)  # static_assert(D == 64 or D == 128)


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
            return ParamSpec("constexpr", _typed(fact.value), assumption=assumed(fact.value), source="launch")
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


def general(ctx: Context, p: KernelParam, known: ParamSpec | None) -> ParamSpec | None:
    """Step 6, the general assumptions; None when nothing may be assumed (a constexpr)."""
    if ctx.exact:
        return known  # an int without a value compiles as a generic one would (noted: UnknownInts)
    if known is not None:
        if _needs_int_assumption(ctx, p, known):
            return ParamSpec(known.type, divisible=True, source=known.source or "assumed", assumption=Assumption(
                p.name, "divisible by 16", "an int of unknown value: assumed divisible by 16 and not 1"))
        return known
    if p.name in ctx.descriptors:
        return _descriptor_from_pre_hook(ctx, p)  # else its block shape, set by the host, must be stated
    if p.is_constexpr:
        if p.name in ctx.dtypes:
            return ParamSpec("constexpr", _typed(ASSUMED_DTYPE), source="assumed", assumption=Assumption(
                p.name, ASSUMED_DTYPE, f"a dtype constexpr the code does not give: assumed {ASSUMED_DTYPE}"))
        if p.name in ctx.arithmetic:
            return ParamSpec("constexpr", ASSUMED_INT, source="assumed", assumption=Assumption(
                p.name, str(ASSUMED_INT), "a constexpr of unknown value that the kernel uses only in "
                f"arithmetic (no tile shape, no branch): assumed {ASSUMED_INT}"))
        return None
    if p.name in ctx.pointers:
        return _pointer_by_use(ctx, p, f"pointer dtype not in the code: assumed {ctx.assume_dtype_name} (--assume-dtype)")
    return ParamSpec("i32", divisible=True, source="assumed", assumption=Assumption(
        p.name, "i32, divisible by 16", "an argument of unknown kind, not used as a pointer: assumed an int "
                                        "divisible by 16 and not 1"))


def _descriptor_from_pre_hook(ctx: Context, p: KernelParam) -> ParamSpec | None:
    """A TMA descriptor whose block shape every config's ``pre_hook`` sets alike
    (``nargs["a_desc"].block_shape = [BLOCK_M, BLOCK_K]``): its type names those parameters, bound
    per config at compile time; the element type is ``--assume-dtype``'s."""
    shapes = {dict(c.descriptor_shapes).get(p.name) for c in ctx.site.configs or ()}
    if len(shapes) != 1 or None in shapes:
        return None
    (dims,) = shapes
    ty = f"tensordesc<{ctx.assume_dtype_name}[{', '.join(map(str, dims))}]>"
    return ParamSpec(ty, source="assumed", assumption=Assumption(
        p.name, ty, "a TMA descriptor whose block shape the configs' pre_hook sets; its dtype is not in the "
                    f"code: assumed {ctx.assume_dtype_name} (--assume-dtype)"))


def _needs_int_assumption(ctx: Context, p: KernelParam, spec: ParamSpec) -> bool:
    return (is_int_type(spec.type) and not spec.has_value and not spec.divisible
            and p.name not in do_not_specialize(ctx.site) and p.name not in ctx.meta)


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
        if spec is None and p.name in facts:
            spec = from_fact(ctx, p, facts[p.name], where or "the launch")
            fact = facts[p.name]
            if spec is None and p.is_constexpr and fact.options and not fact.stated:
                draft.options[p.name] = tuple(_typed(o) for o in fact.options)
                draft.option_why[p.name] = f"one spec per branch of `{fact.text}` at {where}"
                continue  # one spec per value (``branches``)
            if spec is None and p.is_constexpr and fact.kind == "bool" and not ctx.exact:
                spec = _feature_on(p, f"`{fact.text}` at {where} is not decided statically")
            if spec is None and facts[p.name].kind == "tensor" and not p.is_constexpr:
                spec = _assumed_pointer(ctx, p, facts[p.name], where)
        if spec is None:
            spec = _from_source(p, passed=p.name in facts)
        set_elsewhere = spec is not None and spec.source in ("configs", "heuristics")
        if spec is not None and spec.type == "constexpr" and not spec.has_value and not set_elsewhere:
            spec = None
        resolved = spec if set_elsewhere else general(ctx, p, spec)
        if resolved is None and p.name in ctx.flags and not ctx.exact:
            resolved = _feature_on(p, _ON)
        if resolved is None and p.is_constexpr and p.name in ctx.required:
            values, test = ctx.required[p.name]
            draft.options[p.name] = values
            draft.option_why[p.name] = (f"{p.name} in {{{', '.join(map(repr, values))}}}: the only values the kernel's "
                                        f"`tl.static_assert({test})` compiles; one spec per value")
            continue
        if resolved is None and ctx.modes.get(p.name) and not ctx.exact:
            resolved = _mode_with_most_code(p, ctx.modes[p.name])
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


_ON = "a flag the code does not set"


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
    from autotune_rewrite.spec.param_uses import rule_holds

    assumed = [n for n, spec in draft.params.items()
               if spec.assumption is not None and spec.assumption.source.startswith(_ON)]
    values = {n: spec.value for n, spec in draft.params.items() if isinstance(spec.value, bool)}
    rules = [r for r in ctx.flag_rules if all(n in values for n in _rule_names(r))]
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
                        name, "False", f"{_ON}: assumed False, as the kernel's {broken} rules out the others on"))
            return


def _rule_names(rule: str) -> set[str]:
    import ast

    return {n.id for n in ast.walk(ast.parse(rule, mode="eval")) if isinstance(n, ast.Name)}


def _feature_on(p: KernelParam, why: str) -> ParamSpec:
    """An undecided flag is compiled with its feature on: the most code, usually the largest
    footprint. (Compiling both values doubled the compiles per flag: a kernel with three flags
    cost 8x.) Listed with the verdict; the assume table or --assume gives the other value."""
    return ParamSpec("constexpr", True, source="assumed", assumption=Assumption(
        p.name, "True", f"{why}: assumed True (its feature on)"))


def _mode_with_most_code(p: KernelParam, values: tuple) -> ParamSpec:
    """A mode the code does not set (``ACTIVATION``, compared with ``"relu"``, ``"gelu"``...) is
    compiled at the value that guards the most code, as an undecided flag is compiled on."""
    others = ", ".join(map(repr, values[1:]))
    return ParamSpec("constexpr", values[0], source="assumed", assumption=Assumption(
        p.name, repr(values[0]), "a mode the code does not set: assumed the value the kernel tests that guards "
                                 "the most code" + (f" (it also tests {others})" if others else "")))


def _typed(value: Any) -> Any:
    """A dtype spelled as launch code spells it (``tl.float32``) as the spec holds it."""
    try:
        return read_constexpr(value)
    except ValueError:
        return value


def _assumed_pointer(ctx: Context, p: KernelParam, fact: ArgFact, where: str | None) -> ParamSpec | None:
    if ctx.exact:
        return None
    return _pointer_by_use(ctx, p, f"{fact.text}'s dtype is not in the code: assumed {ctx.assume_dtype_name} "
                                   "(--assume-dtype)")


_SCALE_NAME = re.compile(r"(^|_)scales?(_|$)", re.IGNORECASE)


def _pointer_by_use(ctx: Context, p: KernelParam, otherwise: str) -> ParamSpec:
    """A pointer's element type from how the kernel uses its tiles, else ``--assume-dtype``."""
    if p.name in ctx.address_tables:
        ty, why = "*i64", "what the kernel loads from it becomes a pointer (.to(tl.pointer_type(...))): assumed *i64"
    elif p.name in ctx.int8_dots:
        ty, why = "*i8", "its tiles go into a tl.dot with an int32 accumulator: assumed *i8"
    elif p.name in ctx.index_pointers:
        ty, why = "*i32", "a tensor whose loaded values the kernel uses as ints: assumed *i32"
    elif p.name in ctx.fp32_loads:
        ty, why = "*fp32", "its tiles go uncast into fp32-only math (tl.fdiv beside an fp32 value, tl.exp, ...): assumed *fp32"
    elif _SCALE_NAME.search(p.name):
        # Quantized GEMMs take their scales in fp32 (torch._scaled_mm requires it), and a bf16
        # scale changes what the kernel computes in (``scale / scale_next`` is fp32 either way).
        ty, why = "*fp32", "a scale tensor, by its name: assumed *fp32, the dtype quantized kernels take scales in"
    else:
        ty, why = ctx.assume_dtype, otherwise
    return ParamSpec(ty, source="assumed", assumption=Assumption(p.name, ty, why))


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
    return ParamSpec(ty, value if isinstance(value, int) and not isinstance(value, bool) else _UNSET,
                     source="default")


def distinct(drafts: Sequence[Draft]) -> list[Draft]:
    """Launches that give the same spec are one spec."""
    seen: dict[tuple, Draft] = {}
    for d in drafts:
        key = (tuple(sorted((n, s.type, repr(s.value), s.divisible) for n, s in d.params.items())),
               tuple(d.lacking), tuple(sorted(d.stated_exprs.items())), repr(sorted(d.stated.items())))
        seen.setdefault(key, d)
    return list(seen.values())


__all__ = ["ASSUMED_INT", "Context", "Draft", "MAX_LAUNCH_SPECS", "ParamSpec", "annotation_type", "bind", "distinct",
           "int_type", "one_draft", "triton_dtype", "value_type"]
