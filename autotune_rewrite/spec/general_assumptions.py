"""Step 6 of spec inference, the general assumptions (``spec_inference`` lists the steps): what a
parameter is taken to be when nothing states it and the code does not say. Each is an
``Assumption`` listed with the verdict it produced; ``exact`` turns them off. A pointer's element
type from how the kernel uses its tiles, else ``--assume-dtype``; an int of unknown value
divisible by 16 and not 1; a flag on; a mode at the value that guards the most code; a dtype
constexpr fp32; an arithmetic-only constexpr ``ASSUMED_INT``."""

from __future__ import annotations

from typing import Any

from autotune_rewrite.constexpr_values import read_constexpr
from autotune_rewrite.model import ArgFact, KernelParam
from autotune_rewrite.outcomes import Assumption
from autotune_rewrite.spec.dot_operands import is_scale_name
from autotune_rewrite.spec.spec_draft import ASSUMED_DTYPE, ASSUMED_INT, SHAPE_SWEEP, Context, ParamSpec
from autotune_rewrite.spec.specialization import do_not_specialize, is_int_type


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
            return ParamSpec("constexpr", typed(ASSUMED_DTYPE), source="assumed", assumption=Assumption(
                p.name, ASSUMED_DTYPE, f"a dtype constexpr the code does not give: assumed {ASSUMED_DTYPE}"))
        if p.name in ctx.arithmetic:
            return ParamSpec("constexpr", ASSUMED_INT, source="assumed", assumption=Assumption(
                p.name, str(ASSUMED_INT), "a constexpr of unknown value that the kernel uses only in "
                f"arithmetic (no tile shape, no branch): assumed {ASSUMED_INT}"))
        return None
    if p.name in ctx.pointers:
        return _pointer_by_use(ctx, p, f"pointer dtype not in the code: assumed {ctx.assume_dtype_name} (--assume-dtype)")
    if p.name in ctx.float_scalars:  # a Python float at every launch: fp32, never specialized
        return ParamSpec("fp32", source="assumed", assumption=Assumption(
            p.name, "fp32", "a scalar the kernel computes with beside a float literal: assumed a float (fp32)"))
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


FLAG_NOT_SET = "a flag the code does not set"


def feature_on(p: KernelParam, why: str) -> ParamSpec:
    """An undecided flag is compiled with its feature on: the most code, usually the largest
    footprint. (Compiling both values doubled the compiles per flag: a kernel with three flags
    cost 8x.) Listed with the verdict; the assume table or --assume gives the other value."""
    return ParamSpec("constexpr", True, source="assumed", assumption=Assumption(
        p.name, "True", f"{why}: assumed True (its feature on)"))


def mode_with_most_code(p: KernelParam, values: tuple) -> ParamSpec:
    """A mode the code does not set (``ACTIVATION``, compared with ``"relu"``, ``"gelu"``...) is
    compiled at the value that guards the most code, as an undecided flag is compiled on."""
    others = ", ".join(map(repr, values[1:]))
    return ParamSpec("constexpr", values[0], source="assumed", assumption=Assumption(
        p.name, repr(values[0]), "a mode the code does not set: assumed the value the kernel tests that guards "
                                 "the most code" + (f" (it also tests {others})" if others else "")))


def bounded_range(p: KernelParam, fact: ArgFact, where: str) -> tuple[tuple[int, ...], str] | None:
    """The values a constexpr the code bounds but does not give (``min(next_power_of_2(D), 256)``,
    ``assert BK <= 128``) is judged at: the default sweep's values below the bound, and the bound.
    Judging it at the bound alone (the most shared memory) made a config that launches at the
    smaller values a user's head dim gives look dead, and a prune drop it. None when only the
    bound is left (it is then the one value, as before)."""
    upper = fact.upper
    if not p.is_constexpr or fact.kind != "int" or fact.value_known or upper is None:
        return None
    values = tuple(v for v in SHAPE_SWEEP if v < upper) + (upper,)
    if len(values) < 2:
        return None
    said = f"{fact.text} at {where}" + (f", {fact.why}" if fact.why.startswith("at most") else "")
    return values, f"a value the code bounds but does not give ({said}): judged at each of " \
                   "{" + ", ".join(map(str, values)) + "}, the default sweep up to its bound"


def threshold_range(values: tuple, fact: ArgFact | None, where: str | None) -> tuple[tuple, str]:
    """The values a constexpr the kernel compares with numbers (``if SPLIT_K > 1:``) and
    otherwise only computes with is judged at (``thresholds``), and why."""
    given = f" (`{fact.text}` at {where or 'the launch'})" if fact is not None and fact.text else ""
    return values, (f"a value the code does not give{given}, which the kernel compares with numbers: judged at "
                    "each of {" + ", ".join(map(str, values)) + "}, a value on each side of every comparison")


QUANTIZED_OPERAND = "*fp8e4nv"  # the 8-bit end of a scaled GEMM operand's range (fp8 e4m3, CUDA's)


def quantized_range(assumed: str) -> tuple[tuple[str, str], str]:
    """A ``tl.dot`` operand of a kernel that takes scale tensors, whose dtype the code does not
    state: judged at the assumed dtype and at fp8 (its partner follows, ``dot_partners``)."""
    return (assumed, QUANTIZED_OPERAND), (
        f"a tl.dot operand of a kernel that takes scale tensors (a quantized GEMM), its dtype not in the code: "
        f"judged at {assumed} and at {QUANTIZED_OPERAND}, the element sizes such operands come in")


def typed(value: Any) -> Any:
    """A dtype spelled as launch code spells it (``tl.float32``) as the spec holds it."""
    try:
        return read_constexpr(value)
    except ValueError:
        return value


def assumed_pointer(ctx: Context, p: KernelParam, fact: ArgFact, where: str | None) -> ParamSpec | None:
    if ctx.exact:
        return None
    return _pointer_by_use(ctx, p, f"{fact.text}'s dtype is not in the code: assumed {ctx.assume_dtype_name} "
                                   "(--assume-dtype)")


def _pointer_by_use(ctx: Context, p: KernelParam, otherwise: str) -> ParamSpec:
    """A pointer's element type from how the kernel uses its tiles, else ``--assume-dtype``."""
    if p.name in ctx.address_tables:
        ty, why = "*i64", "what the kernel loads from it becomes a pointer (.to(tl.pointer_type(...))): assumed *i64"
    elif p.name in ctx.int8_dots:
        ty, why = "*i8", "its tiles go into a tl.dot with an int32 accumulator: assumed *i8"
    elif p.name in ctx.masks:
        ty, why = "*i1", "what the kernel loads from it is a load's or store's mask=: assumed *i1 (torch.bool)"
    elif p.name in ctx.index_pointers:
        ty, why = "*i32", "a tensor whose loaded values the kernel uses as ints: assumed *i32"
    elif p.name in ctx.fp32_loads:
        ty, why = "*fp32", "its tiles go uncast into fp32-only math (tl.fdiv beside an fp32 value, tl.exp, ...): assumed *fp32"
    elif is_scale_name(p.name):
        # Quantized GEMMs take their scales in fp32 (torch._scaled_mm requires it), and a bf16
        # scale changes what the kernel computes in (``scale / scale_next`` is fp32 either way).
        ty, why = "*fp32", "a scale tensor, by its name: assumed *fp32, the dtype quantized kernels take scales in"
    else:
        ty, why = ctx.assume_dtype, otherwise
    return ParamSpec(ty, source="assumed", assumption=Assumption(p.name, ty, why))


__all__ = ["FLAG_NOT_SET", "QUANTIZED_OPERAND", "assumed_pointer", "bounded_range", "feature_on", "general",
           "mode_with_most_code", "quantized_range", "threshold_range", "typed"]
