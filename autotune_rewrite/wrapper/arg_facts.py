"""Small facts about launch arguments and the rules that combine them (``ArgFact``, ``model.py``):
an unknown argument, a fact of a known value, the largest value an int can have, what several
bindings of one name agree on, a wrapper parameter's type hint. Shared by the readers of
``launch_args`` (leaves and names), ``call_facts`` (calls) and ``operator_facts`` (operators)."""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from autotune_rewrite.model import ArgFact
from autotune_rewrite.wrapper.bindings import Wrapper
from autotune_rewrite.wrapper.torch_names import LEGACY_TENSORS, TENSOR_HINTS

MAX_DEPTH = 12  # how deep a launch argument's expression is followed
INT32_MAX = 2**31 - 1
ORDER = (cst.GreaterThan, cst.GreaterThanEqual, cst.LessThan, cst.LessThanEqual)



def unknown(text: str, why: str = "") -> ArgFact:
    return ArgFact(slot=0, text=text, kind="unknown", why=why)


def kwarg(call: cst.Call, name: str) -> cst.BaseExpression | None:
    for a in call.args:
        if a.keyword is not None and a.keyword.value == name:
            return a.value
    return None


def upper_bound(f: ArgFact) -> int | None:
    """The largest value an int fact can have, when the code bounds it."""
    if f.kind != "int":
        return None
    if f.value_known and isinstance(f.value, int):
        return f.value
    if f.options and all(isinstance(o, int) and not isinstance(o, bool) for o in f.options):
        return max(f.options)  # ``4096 if x.dtype == torch.float32 else 8192``
    return f.upper


def binop(op, a, b):
    import operator as o

    table = {cst.Add: o.add, cst.Subtract: o.sub, cst.Multiply: o.mul, cst.FloorDivide: o.floordiv,
             cst.Modulo: o.mod, cst.LeftShift: o.lshift, cst.RightShift: o.rshift, cst.Power: o.pow,
             cst.BitAnd: o.and_, cst.BitOr: o.or_, cst.BitXor: o.xor}
    fn = table.get(type(op))
    if fn is None or (isinstance(op, cst.Power) and abs(b) > 64):
        return None
    return fn(a, b)


def hint_kind(w: Wrapper, hint) -> tuple[str | None, bool]:
    """(kind, optional) of a wrapper parameter's type hint."""
    if hint is None:
        return None, False
    text = w.code(hint).replace(" ", "").strip("'\"")
    optional = False
    for wrap in ("Optional[", "typing.Optional["):
        if text.startswith(wrap) and text.endswith("]"):
            text, optional = text[len(wrap):-1], True
    parts = [p for p in text.split("|")]
    if "None" in parts:
        optional = True
        parts = [p for p in parts if p != "None"]
    if len(parts) != 1:
        return None, optional
    text = parts[0]
    if text in TENSOR_HINTS or text.endswith(".Tensor") or text.split(".")[-1] in LEGACY_TENSORS:
        return "tensor", optional
    if text in ("int", "float", "bool"):
        return text, optional
    if text in ("torch.dtype", "dtype", "tl.dtype"):
        return "dtype", optional
    return None, optional


def of_value(value, why: str) -> ArgFact:
    if isinstance(value, bool):
        return ArgFact(0, "", "bool", value=value, value_known=True, why=why)
    if isinstance(value, int):
        return ArgFact(0, "", "int", value=value, value_known=True, why=why)
    if isinstance(value, float):
        return ArgFact(0, "", "float", value=value, value_known=True, why=why)
    if value is None:
        return ArgFact(0, "", "none", value=None, value_known=True, why=why)
    return unknown("", why)


def assumptions_of(facts) -> str:
    return "; ".join(dict.fromkeys(f.assumption for f in facts if f.assumption))


def join(facts: list[ArgFact], name: str) -> ArgFact:
    """Several bindings of one name (branches, reassignments): what they all agree on."""
    if len(facts) == 1:
        return facts[0]
    kinds = {f.kind for f in facts}
    if len(kinds) != 1 or "unknown" in kinds:
        non_none = [f for f in facts if f.kind != "none"]
        if {f.kind for f in non_none} == {"tensor"} and len(non_none) < len(facts):
            return replace(join(non_none, name), optional=True)
        return unknown("", f"{name or 'the value'} is bound to different kinds of values")
    first = facts[0]
    same_value = all(f.value_known and f.value == first.value for f in facts)
    if not same_value and all(f.value_known or f.options for f in facts):
        # ``tl.float32 if a.is_floating_point() else tl.int32``: one of these; each is a spec.
        options = tuple(dict.fromkeys(o for f in facts for o in (f.options or (f.value,))))
        if len(options) <= 4:
            return ArgFact(0, "", first.kind, options=options, why="one of its branches",
                           assumption=assumptions_of(facts))
    dtypes = {f.dtype for f in facts}
    uppers = [upper_bound(f) for f in facts]
    return ArgFact(0, "", first.kind, dtype=first.dtype if len(dtypes) == 1 else None,
                   upper=max(uppers) if first.kind == "int" and None not in uppers else None,
                   value=first.value if same_value else None, value_known=same_value,
                   fresh=all(f.fresh for f in facts), optional=any(f.optional for f in facts),
                   why=first.why if len(facts) == 1 else "every binding agrees" if same_value else first.why,
                   assumption=assumptions_of(facts))


__all__ = ["INT32_MAX", "MAX_DEPTH", "ORDER", "assumptions_of", "binop", "hint_kind", "join", "kwarg", "of_value",
           "unknown", "upper_bound"]
