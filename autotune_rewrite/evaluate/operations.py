"""The evaluator's operations on values: operators, comparisons, attributes of known values,
size guards, and the short source text a reason quotes."""

from __future__ import annotations

from typing import Any, Callable

import libcst as cst

from autotune_rewrite.evaluate.device import DeviceRecord
from autotune_rewrite.evaluate.values import MAX_ITEMS, ConfigObj, Unresolved
from autotune_rewrite.model import DEFAULT_NUM_CTAS, DEFAULT_NUM_STAGES, DEFAULT_NUM_WARPS

BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    cst.Add: lambda a, b: a + b, cst.Subtract: lambda a, b: a - b, cst.Multiply: lambda a, b: a * b,
    cst.FloorDivide: lambda a, b: a // b, cst.Divide: lambda a, b: a / b, cst.Modulo: lambda a, b: a % b,
    cst.Power: lambda a, b: a ** b, cst.LeftShift: lambda a, b: a << b, cst.RightShift: lambda a, b: a >> b,
    cst.BitOr: lambda a, b: a | b, cst.BitAnd: lambda a, b: a & b,
}
CMPOPS: dict[type, Callable[[Any, Any], bool]] = {
    cst.Equal: lambda a, b: a == b, cst.NotEqual: lambda a, b: a != b, cst.LessThan: lambda a, b: a < b,
    cst.LessThanEqual: lambda a, b: a <= b, cst.GreaterThan: lambda a, b: a > b,
    cst.GreaterThanEqual: lambda a, b: a >= b, cst.In: lambda a, b: a in b, cst.NotIn: lambda a, b: a not in b,
    cst.Is: lambda a, b: a is b, cst.IsNot: lambda a, b: a is not b,
}


def check_size(op: type, left, right) -> None:
    """Refuse before computing what would be huge (``"x" * 10**9``, ``2 ** 10**9``)."""
    too_big = False
    if op is cst.Power and isinstance(right, int) and isinstance(left, int):
        too_big = abs(right) > 256 and abs(left) > 1
    elif op is cst.LeftShift and isinstance(right, int):
        too_big = right > 256
    elif op is cst.Multiply:
        for seq, k in ((left, right), (right, left)):
            if isinstance(seq, (list, tuple, str)) and isinstance(k, int) and len(seq) * k > MAX_ITEMS:
                too_big = True
    if too_big:
        raise Unresolved("too large to evaluate statically")


class BoundMethod:
    def __init__(self, fn):
        self.fn = fn

    def __call__(self, args, kwargs):
        try:
            return self.fn(*args, **kwargs)
        except Exception:
            raise Unresolved("method call does not evaluate") from None


# Methods of builtin values that give plain data and cannot grow without bound (no ``zfill``,
# ``center``, ``ljust``: a width is unbounded); a list's own list also changes in place, as the
# code's would.
_LIST_METHODS = ("append", "extend", "insert", "copy", "index", "count", "pop", "remove", "reverse")
_STR_METHODS = ("lower", "upper", "casefold", "title", "capitalize", "strip", "lstrip", "rstrip", "split", "rsplit",
                "splitlines", "startswith", "endswith", "replace", "join", "find", "rfind", "index", "count",
                "partition", "rpartition", "isdigit", "isalpha", "isalnum", "isnumeric", "isupper", "islower",
                "removeprefix", "removesuffix")  # not format: a width in a format spec is unbounded
_SET_METHODS = ("union", "intersection", "difference", "symmetric_difference", "issubset", "issuperset",
                "isdisjoint", "copy")
_PURE_METHODS = {str: _STR_METHODS, tuple: ("index", "count"), set: _SET_METHODS + ("add", "discard", "update"),
                 frozenset: _SET_METHODS}

_CONFIG_DEFAULTS = {"num_warps": DEFAULT_NUM_WARPS, "num_stages": DEFAULT_NUM_STAGES, "num_ctas": DEFAULT_NUM_CTAS}


def attribute(obj, attr: str):
    if isinstance(obj, DeviceRecord):
        return obj.field(attr)
    if isinstance(obj, ConfigObj) and attr in ("kwargs", "num_warps", "num_stages", "num_ctas", "maxnreg"):
        value = getattr(obj, attr)
        # A field left out of ``triton.Config(...)`` reads as Triton's default, as on the real object.
        return _CONFIG_DEFAULTS.get(attr) if value is None else value
    if isinstance(obj, ConfigObj) and attr == "all_kwargs":
        return BoundMethod(lambda: _all_kwargs(obj))
    if isinstance(obj, list) and attr in _LIST_METHODS:
        return BoundMethod(getattr(obj, attr))
    if type(obj) in _PURE_METHODS and attr in _PURE_METHODS[type(obj)]:
        return BoundMethod(getattr(obj, attr))
    if isinstance(obj, dict) and attr in ("setdefault", "update", "pop"):
        return BoundMethod(getattr(obj, attr))
    if isinstance(obj, dict) and attr in ("items", "keys", "values", "get", "copy"):
        m = getattr(obj, attr)
        return BoundMethod(lambda *a, **k: list(m(*a, **k)) if attr in ("items", "keys", "values") else m(*a, **k))
    raise Unresolved(f"attribute `{attr}` is not evaluated")


def _all_kwargs(obj: ConfigObj) -> dict:
    """``Config.all_kwargs()`` as Triton builds it: the meta-parameters, then num_warps,
    num_ctas, num_stages (their defaults when left out) and maxnreg when set; a field only
    known at run time (``obj.unknown``) is an ``Opaque`` value under its name."""
    from autotune_rewrite.evaluate.values import Opaque

    unknown = dict(obj.unknown)
    out = {k: Opaque(unknown[k]) if k in unknown else v for k, v in obj.kwargs.items()}
    for k in ("num_warps", "num_ctas", "num_stages", "maxnreg"):
        value = attribute(obj, k)
        if k in unknown:
            out[k] = Opaque(unknown[k])
        elif value is not None:
            out[k] = value
    return out


def short(pm, node) -> str:
    text = pm.code(node).strip() if pm is not None and node is not None else "expression"
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."
