"""What each argument of a ``kernel[grid](...)`` call is, read statically from the wrapper around it.

Triton types a kernel's parameters from the arguments at launch (a bf16 tensor -> ``*bf16``, a
Python int -> ``i32``) and specializes on their values. The wrapper that launches the kernel
usually says most of that in plain code: ``out = torch.empty(..., dtype=torch.float32)``,
``q.stride(-1)``, ``BLOCK=64``, ``bias is not None``, ``chunk_size: int = 64``. This module reads
it, per argument, into an ``ArgFact`` (see ``model.py``): its kind (tensor, int, float, bool,
None, dtype), a tensor's torch dtype name, a known value, and, when the fact rests on something
the code does not guarantee (a wrapper default the caller may override, a tensor assumed
contiguous), that assumption in words. Nothing is executed; what is not plain stays ``unknown``.

Torch dtype names are kept as torch spells them (``float32``); ``check`` maps them to Triton's
types with Triton's own table, so the locator never imports Triton.
"""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from autotune_rewrite.evaluate.literals import literal
from autotune_rewrite.wrapper.context_fields import context_field, spread_fields
from autotune_rewrite.wrapper.tensor_ranks import tensor_ranks
from autotune_rewrite.wrapper.torch_names import (
    CASTS, FACTORIES, FLOAT_CALLS, INT_ATTRS, INT_CALLS, INT_METHODS, LEGACY_INT_DTYPES, LEGACY_TENSORS, LIKE, NEW,
    SAME, SAME_FRESH, TENSOR_HINTS, dtype_name,
)
from autotune_rewrite.wrapper.asserts import OPTION_CALLS, over_options, pin, stated_sets
from autotune_rewrite.wrapper.bindings import SHAPE_ITEM, Wrapper, is_shape, spelled_kwargs
from autotune_rewrite.model import ArgFact

_MAX_DEPTH = 12
_INT32_MAX = 2**31 - 1
_ORDER = (cst.GreaterThan, cst.GreaterThanEqual, cst.LessThan, cst.LessThanEqual)


def _unknown(text: str, why: str = "") -> ArgFact:
    return ArgFact(slot=0, text=text, kind="unknown", why=why)


def _kwarg(call: cst.Call, name: str) -> cst.BaseExpression | None:
    for a in call.args:
        if a.keyword is not None and a.keyword.value == name:
            return a.value
    return None


class ArgReader:
    """Reads launch arguments in one wrapper. ``fact(expr)`` never raises."""

    def __init__(self, wrapper: Wrapper, module_value=None, stated=None, resolve=None):
        self.w = wrapper
        self.module_value = module_value  # name -> (known, value) for module-level constants
        self.stated = stated or {}  # subject text -> StatedSet (``assert Lk in {64, 128}``)
        self.resolve = resolve  # another module's name -> value, for context objects (``context_fields``)
        self._active: set[str] = set()  # names being followed (``x = x.contiguous()``)

    def fact(self, expr: cst.BaseExpression) -> ArgFact:
        try:
            return self._fact(expr, 0)
        except RecursionError:
            return _unknown(self.w.code(expr), "nested too deeply")

    # ---------------------------------------------------------------------------------------
    def _fact(self, e: cst.BaseExpression, depth: int) -> ArgFact:
        text = self.w.code(e) if e is not SHAPE_ITEM else "x.shape[i]"
        if depth > _MAX_DEPTH:
            return _unknown(text, "followed too far")
        method = getattr(self, "_f_" + type(e).__name__, None)
        if method is None:
            return _unknown(text)
        out = method(e, depth + 1)
        if isinstance(e, cst.Name) and e is not SHAPE_ITEM and text in self.stated:
            out = pin(out, text, self.stated[text])  # ``assert Lk in {64, 128}`` / ``assert K <= 256``
        return replace(out, text=text)

    def _f_Integer(self, e, d):
        return ArgFact(0, "", "int", value=literal(e), value_known=True, why="literal")

    def _f_SimpleString(self, e, d):
        value = literal(e)
        if not isinstance(value, str):
            return _unknown("", "a bytes literal")
        return ArgFact(0, "", "str", value=value, value_known=True, why="literal")

    def _f_Float(self, e, d):
        return ArgFact(0, "", "float", value=literal(e), value_known=True, why="literal")

    def _f_Name(self, e, d):
        if e is SHAPE_ITEM:
            return ArgFact(0, "", "int", why="a tensor's size")
        if e.value in ("True", "False"):
            return ArgFact(0, "", "bool", value=e.value == "True", value_known=True, why="literal")
        if e.value == "None":
            return ArgFact(0, "", "none", value=None, value_known=True, why="literal")
        values = self.w.assigned.get(e.value)
        if values and e.value not in self._active:
            # A local binding: what every assignment agrees on. Inside one (``x = x.contiguous()``)
            # the name means its earlier binding: the wrapper's parameter.
            self._active.add(e.value)
            try:
                facts = [self._fact(v, d) if isinstance(v, cst.BaseExpression) else _unknown(e.value)
                         for v in values]
            finally:
                self._active.discard(e.value)
            joined = _join(facts, e.value)
            if len(values) == 1 and isinstance(values[0], cst.BaseExpression) and values[0] is not SHAPE_ITEM:
                code = self.w.code(values[0])
                joined = replace(joined, why=f"{e.value} = {code}",
                                 expr="" if joined.value_known else joined.expr or code)
            return joined
        if e.value in self.w.params:
            return self._param(e.value, d)
        if self.module_value is not None:
            known, value = self.module_value(e.value)
            if known:
                return _of_value(value, f"module constant {e.value}")
        return _unknown("", f"{e.value} is not known statically")

    def _param(self, name: str, d: int) -> ArgFact:
        """A wrapper parameter: its type hint, else the kind of its default. A default's value is
        what the launch sees only when the caller leaves it out: an assumption, said so."""
        param = self.w.params[name]
        hint = param.annotation.annotation if param.annotation is not None else None
        kind, optional = _hint_kind(self.w, hint)
        default = None
        if param.default is not None:
            default = self._fact(param.default, d)
        if default is not None and default.value_known and default.kind in ("int", "float", "bool", "dtype", "str"):
            if kind in (None, default.kind) or (kind == "float" and default.kind == "int"):
                return replace(default, kind=kind or default.kind,
                               assumption=f"the caller leaves {name} at its default {self.w.code(param.default)}",
                               why=f"wrapper default {name}={self.w.code(param.default)}")
        if kind is not None:
            legacy = self.w.code(hint).split(".")[-1] if hint is not None else ""
            return ArgFact(0, "", kind, dtype=LEGACY_INT_DTYPES.get(legacy), why=f"type hint of {name}",
                           optional=optional or (default is not None and default.kind == "none"))
        if default is not None and default.kind == "none":
            return ArgFact(0, "", "unknown", optional=True, why=f"{name} defaults to None")
        return _unknown("", f"wrapper parameter {name} has no type hint")

    def _f_Attribute(self, e, d):
        dtype = dtype_name(e)
        if dtype is not None:
            # The value as the runtime passes it: a ``tl.dtype`` stays one, a torch dtype stays torch's.
            base = self.w.code(e.value)
            spelled = f"torch.{e.attr.value}" if base in ("torch", "th") else f"tl.{e.attr.value}"
            return ArgFact(0, "", "dtype", dtype=dtype, value=spelled, value_known=True, why="dtype literal")
        attr = e.attr.value
        if attr in INT_ATTRS:
            return ArgFact(0, "", "int", why=f".{attr}")
        if attr == "dtype":
            base = self._fact(e.value, d)
            if base.kind == "tensor" and base.dtype:
                return ArgFact(0, "", "dtype", dtype=base.dtype, value=f"torch.{base.dtype}", value_known=True,
                               why=f"dtype of {self.w.code(e.value)}", assumption=base.assumption)
            return ArgFact(0, "", "dtype", why=f"dtype of {self.w.code(e.value)}")
        if attr in ("T", "mT"):
            base = self._fact(e.value, d)
            return replace(base, fresh=False) if base.kind == "tensor" else _unknown("")
        read = context_field(self.w, e, self.resolve) if self.resolve is not None else None
        if read is not None:
            return replace(_of_value(read.value, read.why), assumption=read.assumption)
        return _unknown("")

    def _f_Subscript(self, e, d):
        if is_shape(e):
            return ArgFact(0, "", "int", why="a tensor's size")
        base = self._fact(e.value, d)
        if base.kind == "tensor":
            return replace(base, fresh=False, why=f"a slice of {self.w.code(e.value)}")
        return _unknown("")

    def _f_Call(self, e, d):
        func = e.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
        if name is None:
            return _unknown("")
        on = func.value if isinstance(func, cst.Attribute) else None
        on_torch = on is not None and self.w.code(on) in ("torch", "th")
        if name in FACTORIES and (on_torch or on is None):
            given = _kwarg(e, "dtype")
            if given is not None:
                dt = self._dtype_of(given, d)
                return ArgFact(0, "", "tensor", dtype=dt, fresh=True, why=f"torch.{name}(dtype=...)")
            if name in ("arange", "randint"):
                return ArgFact(0, "", "tensor", dtype="int64", fresh=True, why=f"torch.{name} of ints")
            if name in ("tensor", "full"):
                return ArgFact(0, "", "tensor", fresh=True, why=f"torch.{name} without dtype")
            return ArgFact(0, "", "tensor", dtype="float32", fresh=True, why=f"torch.{name}: the default dtype",
                           assumption="torch's default dtype is float32")
        if name in LIKE and e.args:
            given = _kwarg(e, "dtype")
            if given is not None:
                return ArgFact(0, "", "tensor", dtype=self._dtype_of(given, d), fresh=True, why=f"{name}(dtype=...)")
            base = self._fact(e.args[0].value, d)
            return ArgFact(0, "", "tensor", dtype=base.dtype if base.kind == "tensor" else None, fresh=True,
                           why=f"{name}({self.w.code(e.args[0].value)})", assumption=base.assumption)
        if on is not None and name in NEW:
            base = self._fact(on, d)
            given = _kwarg(e, "dtype")
            dt = self._dtype_of(given, d) if given is not None else (base.dtype if base.kind == "tensor" else None)
            return ArgFact(0, "", "tensor", dtype=dt, fresh=True, why=f".{name}",
                           assumption=base.assumption if given is None else "")
        if on is not None and name == "to":
            base = self._fact(on, d)
            target = _kwarg(e, "dtype") or next((a.value for a in e.args if a.keyword is None), None)
            dt = self._dtype_of(target, d) if target is not None else None
            if dt is None and target is not None and self._fact(target, d).kind == "tensor":
                dt = self._fact(target, d).dtype
            if dt is None and (target is None or self._fact(target, d).kind not in ("dtype", "tensor")):
                dt = base.dtype if base.kind == "tensor" else None  # .to(device)
            return ArgFact(0, "", "tensor", dtype=dt, why=".to(...)")
        if on is not None and name in CASTS and not e.args:
            return ArgFact(0, "", "tensor", dtype=CASTS[name], fresh=False, why=f".{name}()")
        if on is not None and (name in SAME_FRESH or name in SAME):
            base = self._fact(on, d)
            if base.kind != "tensor":
                return _unknown("")
            if name == "view" and e.args and (dt := self._dtype_of(e.args[0].value, d)):
                return replace(base, dtype=dt, fresh=False, why=".view(dtype)")
            return replace(base, fresh=name in SAME_FRESH, why=f".{name}()")
        if on is not None and name in INT_METHODS:
            if name == "stride" and e.args:
                return self._stride(on, e.args[0].value, d)
            return ArgFact(0, "", "int", why=f".{name}()")
        if name in INT_CALLS:
            return self._int_call(name, e, d)
        if name in FLOAT_CALLS:
            return ArgFact(0, "", "float", why=f"{name}(...)")
        if name == "bool":
            return ArgFact(0, "", "bool", why="bool(...)")
        if name in ("max", "min") and e.args:
            facts = [self._fact(a.value, d) for a in e.args]
            if any(f.kind == "int" for f in facts) and all(f.kind in ("int", "unknown") for f in facts):
                facts = [f if f.kind == "int" else replace(f, kind="int") for f in facts]  # min(128, x): an int
                vals = [f.value for f in facts]
                if all(f.value_known for f in facts):
                    return ArgFact(0, "", "int", value=(max if name == "max" else min)(vals), value_known=True,
                                   why=f"{name}(...)", assumption=_assumptions(facts))
                mapped = over_options(facts, max if name == "max" else min, f"{name}(...)")
                if mapped is not None:
                    return mapped
                # A clamp bounds the value: ``min(128, x)`` is at most 128.
                bounds = [_upper(f) for f in facts]
                upper = (min(b for b in bounds if b is not None) if name == "min" and any(b is not None for b in bounds)
                         else max(bounds) if name == "max" and None not in bounds else None)
                return ArgFact(0, "", "int", why=f"{name}(...)", upper=upper)
            if all(f.kind in ("int", "float") for f in facts):
                return ArgFact(0, "", "float", why=f"{name}(...)")
        return _unknown("")

    def _int_call(self, name: str, e: cst.Call, d: int) -> ArgFact:
        facts = [self._fact(a.value, d) for a in e.args if a.keyword is None]
        if facts and all(f.value_known and isinstance(f.value, (int, float)) and not isinstance(f.value, bool)
                         for f in facts):
            import math

            vals = [f.value for f in facts]
            fns = {"int": lambda v: int(v[0]), "len": None, "cdiv": lambda v: -(-v[0] // v[1]),
                   "next_power_of_2": lambda v: 1 if v[0] <= 1 else 1 << (int(v[0]) - 1).bit_length(),
                   "ceil": lambda v: math.ceil(v[0]), "floor": lambda v: math.floor(v[0]),
                   "round": lambda v: round(v[0])}
            fn = fns.get(name)
            try:
                if fn is not None:
                    return ArgFact(0, "", "int", value=int(fn(vals)), value_known=True, why=f"{name}(...)",
                                   assumption=_assumptions(facts))
            except (IndexError, ZeroDivisionError, ValueError, OverflowError):
                pass
        mapped = over_options(facts, OPTION_CALLS[name], f"{name}(...)") if name in OPTION_CALLS else None
        if mapped is not None:
            return mapped
        if name == "next_power_of_2" and len(facts) == 1 and _upper(facts[0]) is not None:
            bound = _upper(facts[0])
            return ArgFact(0, "", "int", why=f"{name}(...)", upper=1 if bound <= 1 else 1 << (bound - 1).bit_length())
        return ArgFact(0, "", "int", why=f"{name}(...)")

    def _stride(self, tensor: cst.BaseExpression, index: cst.BaseExpression, d: int) -> ArgFact:
        """``t.stride(-1)`` is 1 for a contiguous tensor: exact when ``t`` is freshly allocated or
        ``.contiguous()``, else assumed (the serving case: last dims are contiguous)."""
        base = self._fact(tensor, d)
        last = isinstance(index, cst.UnaryOperation) and isinstance(index.operator, cst.Minus) \
            and isinstance(index.expression, cst.Integer) and index.expression.value == "1"
        if not last:
            return ArgFact(0, "", "int", why="a stride")
        if base.kind == "tensor" and base.fresh:
            return ArgFact(0, "", "int", value=1, value_known=True, why=f"{self.w.code(tensor)} is contiguous")
        return ArgFact(0, "", "int", value=1, value_known=True, why="last-dim stride",
                       assumption=f"{self.w.code(tensor)} is contiguous in its last dim")

    def _dtype_of(self, node: cst.BaseExpression | None, d: int) -> str | None:
        if node is None:
            return None
        f = self._fact(node, d)
        return f.dtype if f.kind == "dtype" else None

    def _f_BinaryOperation(self, e, d):
        left, right = self._fact(e.left, d), self._fact(e.right, d)
        kinds = {left.kind, right.kind}
        if "tensor" in kinds:
            return ArgFact(0, "", "tensor", why="tensor arithmetic")
        if isinstance(e.operator, cst.Divide) and kinds <= {"int", "float"}:
            return ArgFact(0, "", "float", why="a division")
        if kinds == {"int"}:
            if left.value_known and right.value_known:
                try:
                    value = _binop(e.operator, left.value, right.value)
                except (ArithmeticError, TypeError, ValueError):
                    value = None
                if isinstance(value, int):
                    return ArgFact(0, "", "int", value=value, value_known=True, why="arithmetic",
                                   assumption=_assumptions([left, right]))
            mapped = over_options([left, right], lambda v: _binop(e.operator, v[0], v[1]), "int arithmetic")
            if mapped is not None:
                return mapped
            return ArgFact(0, "", "int", why="int arithmetic")
        if kinds <= {"int", "float"}:
            return ArgFact(0, "", "float", why="float arithmetic")
        return _unknown("")

    def _f_UnaryOperation(self, e, d):
        if isinstance(e.operator, cst.Not):
            inner = self._fact(e.expression, d)
            if inner.kind == "bool" and inner.value_known:
                return replace(inner, value=not inner.value)
            return ArgFact(0, "", "bool", why="not ...")
        inner = self._fact(e.expression, d)
        if isinstance(e.operator, cst.Minus) and inner.kind in ("int", "float") and inner.value_known:
            return replace(inner, value=-inner.value)
        return inner if inner.kind in ("int", "float") else _unknown("")

    def _f_Comparison(self, e, d):
        # ``x is not None`` on a wrapper parameter defaulting to None: False at the default.
        if len(e.comparisons) == 1 and isinstance(e.comparisons[0].comparator, cst.Name) \
                and e.comparisons[0].comparator.value == "None" \
                and isinstance(e.comparisons[0].operator, (cst.Is, cst.IsNot)):
            subject = self._fact(e.left, d)
            negate = isinstance(e.comparisons[0].operator, cst.IsNot)
            if subject.kind == "none":
                return ArgFact(0, "", "bool", value=not negate, value_known=True, why="is None",
                               assumption=subject.assumption)
            if subject.kind == "tensor" and not subject.optional:
                return ArgFact(0, "", "bool", value=negate, value_known=True, why=subject.why or "a tensor")
            if isinstance(e.left, cst.Name) and e.left.value in self.w.params and \
                    self.w.params[e.left.value].default is not None and \
                    self.w.code(self.w.params[e.left.value].default) == "None" and \
                    not self.w.assigned.get(e.left.value):
                return ArgFact(0, "", "bool", value=not negate, value_known=True, why="is None",
                               assumption=f"the caller leaves {e.left.value} at its default None")
        if len(e.comparisons) == 1 and isinstance(e.comparisons[0].operator, _ORDER):
            guard = self._int64_guard(e.left, e.comparisons[0].operator, e.comparisons[0].comparator, d)
            if guard is not None:
                return guard
        if len(e.comparisons) == 1:
            known = self._known_comparison(e.left, e.comparisons[0].operator, e.comparisons[0].comparator, d)
            if known is not None:
                return known
        return ArgFact(0, "", "bool", why="a comparison")

    def _known_comparison(self, left, op, right, d) -> ArgFact | None:
        """``k_major is False`` with ``k_major: bool = True`` by default, ``MODE == 2`` with
        ``MODE = 2``: both sides known, so is the result (resting on what they rest on)."""
        import operator as o

        table = {cst.Equal: o.eq, cst.NotEqual: o.ne, cst.Is: o.is_, cst.IsNot: o.is_not, cst.LessThan: o.lt,
                 cst.LessThanEqual: o.le, cst.GreaterThan: o.gt, cst.GreaterThanEqual: o.ge}
        fn = table.get(type(op))
        a, b = self._fact(left, d), self._fact(right, d)
        if fn is None or not (a.value_known and b.value_known) or "dtype" in (a.kind, b.kind):
            return None
        if isinstance(op, (cst.Is, cst.IsNot)) and not all(v is None or isinstance(v, bool) for v in (a.value, b.value)):
            return None  # ``is`` on ints or strings is identity, not a value
        try:
            value = bool(fn(a.value, b.value))
        except TypeError:
            return None
        return ArgFact(0, "", "bool", value=value, value_known=True, why="a comparison of known values",
                       assumption=_assumptions([a, b]))

    def _int64_guard(self, left, op, right, d) -> ArgFact | None:
        """``x.numel() > 2**31 - 1``: a switch to 64-bit indexing, off at serving sizes. (Left
        to the flag rule it would be assumed on, and 64-bit offsets are another kernel.)"""
        size, bound = self._fact(left, d), self._fact(right, d)
        if not (size.kind == "int" and not size.value_known and bound.kind == "int" and bound.value_known
                and isinstance(bound.value, int) and bound.value >= _INT32_MAX):
            return None
        above = isinstance(op, (cst.GreaterThan, cst.GreaterThanEqual))
        return ArgFact(0, "", "bool", value=not above, value_known=True, why="a 64-bit indexing guard",
                       assumption=f"sizes below 2**31 ({self.w.code(left)} <= {bound.value}), as at serving shapes")

    def _f_BooleanOperation(self, e, d):
        left, right = self._fact(e.left, d), self._fact(e.right, d)
        if left.kind == right.kind == "bool":
            if left.value_known and right.value_known:
                value = (left.value and right.value) if isinstance(e.operator, cst.And) else (left.value or right.value)
                return ArgFact(0, "", "bool", value=value, value_known=True, why="and/or",
                               assumption=_assumptions([left, right]))
            return ArgFact(0, "", "bool", why="and/or")
        return _unknown("")

    def _f_IfExp(self, e, d):
        # A test the wrapper decides (``m.numel() if m is not None else 0`` with ``m=None`` by
        # default) picks between two values of one kind, resting on what the test rests on. Not
        # between a tensor and None (``idx if cu_seqlens is not None else None``): the tensor
        # passed beside it is typed present, so a None here would contradict the spec.
        body, orelse = self._fact(e.body, d), self._fact(e.orelse, d)
        test = self._fact(e.test, d)
        if test.kind == "bool" and test.value_known and body.kind == orelse.kind and body.kind in ("int", "float",
                                                                                                   "bool", "str"):
            chosen = body if test.value else orelse
            return replace(chosen, assumption=_assumptions([test, chosen]),
                           why=f"`{self.w.code(e.test)}` is {test.value}" + (f" ({test.why})" if test.why else ""))
        return _join([body, orelse], "")


def _upper(f: ArgFact) -> int | None:
    """The largest value an int fact can have, when the code bounds it."""
    if f.kind != "int":
        return None
    if f.value_known and isinstance(f.value, int):
        return f.value
    if f.options and all(isinstance(o, int) and not isinstance(o, bool) for o in f.options):
        return max(f.options)  # ``4096 if x.dtype == torch.float32 else 8192``
    return f.upper


def _binop(op, a, b):
    import operator as o

    table = {cst.Add: o.add, cst.Subtract: o.sub, cst.Multiply: o.mul, cst.FloorDivide: o.floordiv,
             cst.Modulo: o.mod, cst.LeftShift: o.lshift, cst.RightShift: o.rshift, cst.Power: o.pow,
             cst.BitAnd: o.and_, cst.BitOr: o.or_, cst.BitXor: o.xor}
    fn = table.get(type(op))
    if fn is None or (isinstance(op, cst.Power) and abs(b) > 64):
        return None
    return fn(a, b)


def _hint_kind(w: Wrapper, hint) -> tuple[str | None, bool]:
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


def _of_value(value, why: str) -> ArgFact:
    if isinstance(value, bool):
        return ArgFact(0, "", "bool", value=value, value_known=True, why=why)
    if isinstance(value, int):
        return ArgFact(0, "", "int", value=value, value_known=True, why=why)
    if isinstance(value, float):
        return ArgFact(0, "", "float", value=value, value_known=True, why=why)
    if value is None:
        return ArgFact(0, "", "none", value=None, value_known=True, why=why)
    return _unknown("", why)


def _assumptions(facts) -> str:
    return "; ".join(dict.fromkeys(f.assumption for f in facts if f.assumption))


def _join(facts: list[ArgFact], name: str) -> ArgFact:
    """Several bindings of one name (branches, reassignments): what they all agree on."""
    if len(facts) == 1:
        return facts[0]
    kinds = {f.kind for f in facts}
    if len(kinds) != 1 or "unknown" in kinds:
        non_none = [f for f in facts if f.kind != "none"]
        if {f.kind for f in non_none} == {"tensor"} and len(non_none) < len(facts):
            return replace(_join(non_none, name), optional=True)
        return _unknown("", f"{name or 'the value'} is bound to different kinds of values")
    first = facts[0]
    same_value = all(f.value_known and f.value == first.value for f in facts)
    if not same_value and all(f.value_known or f.options for f in facts):
        # ``tl.float32 if a.is_floating_point() else tl.int32``: one of these; each is a spec.
        options = tuple(dict.fromkeys(o for f in facts for o in (f.options or (f.value,))))
        if len(options) <= 4:
            return ArgFact(0, "", first.kind, options=options, why="one of its branches",
                           assumption=_assumptions(facts))
    dtypes = {f.dtype for f in facts}
    uppers = [_upper(f) for f in facts]
    return ArgFact(0, "", first.kind, dtype=first.dtype if len(dtypes) == 1 else None,
                   upper=max(uppers) if first.kind == "int" and None not in uppers else None,
                   value=first.value if same_value else None, value_known=same_value,
                   fresh=all(f.fresh for f in facts), optional=any(f.optional for f in facts),
                   why=first.why if len(facts) == 1 else "every binding agrees" if same_value else first.why,
                   assumption=_assumptions(facts))


def _last_strides(pm, call: cst.Call, fn: cst.FunctionDef | None) -> dict[cst.BaseExpression, str]:
    """``t.stride(i)`` arguments where ``i`` is the highest index the launch passes for ``t``
    (at least 1): ``t``'s last dim, whose stride is 1 for a contiguous tensor; never when the
    wrapper ``fn`` gives ``t`` more dims than that (see ``tensor_ranks``, read only then)."""
    by_tensor: dict[str, list[tuple[int, cst.BaseExpression]]] = {}
    for a in call.args:
        v = a.value
        if (isinstance(v, cst.Call) and isinstance(v.func, cst.Attribute) and v.func.attr.value == "stride"
                and len(v.args) == 1 and isinstance(v.args[0].value, cst.Integer)):
            by_tensor.setdefault(pm.code(v.func.value).strip(), []).append((int(v.args[0].value.value), v))
    out = {}
    ranks = tensor_ranks(pm, fn) if by_tensor else {}
    for tensor, uses in by_tensor.items():
        top = max(i for i, _ in uses)
        if ranks.get(tensor, top + 1) != top + 1:
            continue
        if top >= 1 and len({i for i, _ in uses}) == top + 1:  # every dim up to it passed
            out.update({v: tensor for i, v in uses if i == top})
    return out


def launch_arguments(pm, call: cst.Call, fn: cst.FunctionDef | None, module_value=None,
                     resolve=None) -> tuple[ArgFact, ...]:
    """One ``ArgFact`` per argument of ``call`` (positional: slot = index; keyword: slot = name);
    ``*args`` gives none, ``**kwargs`` only the keys of a dict the wrapper spells out (``spelled_kwargs``)
    or of a config it builds (``**config.all_kwargs()``). ``resolve``: another module's name -> its
    value (or raises), for the context objects a field is read from."""
    wrapper = Wrapper.of(pm, fn)
    reader = ArgReader(wrapper, module_value, stated_sets(wrapper, pm.span(call).start_line, module_value), resolve)
    last = _last_strides(pm, call, fn)
    out = []
    index = 0
    after_star = False
    spelled: list[cst.Arg] = []
    for a in call.args:
        if a.star != "**":
            continue
        keys = spelled_kwargs(wrapper, a.value)
        if keys:
            spelled.extend(cst.Arg(v, keyword=cst.Name(k)) for k, v in keys)
        elif resolve is not None:
            # ``**config.all_kwargs()`` of a config the wrapper builds: each name it passes.
            spread = spread_fields(reader.w, a.value, resolve) or {}
            for key, read in spread.items():
                fact = (replace(_of_value(read.value, read.why), assumption=read.assumption) if read is not None
                        else _unknown("", f"passed by **{reader.w.code(a.value)}, only known at run time"))
                out.append(replace(fact, slot=key, text=f"**{reader.w.code(a.value)}[{key!r}]"))
    for a in [*call.args, *spelled]:
        if a.star:
            after_star = after_star or a.star == "*"  # positions after ``*args`` are not known
            continue
        if a.keyword is None and after_star:
            continue
        fact = reader.fact(a.value)
        if not fact.value_known and not fact.expr:
            fact = replace(fact, expr=fact.text)  # what an ``assume`` value may still decide
        if a.value in last and not fact.value_known:
            # Exact for a tensor freshly allocated or made contiguous here; assumed otherwise.
            fresh = reader.fact(a.value.func.value).fresh
            fact = replace(fact, value=1, value_known=True, why="its tensor's last-dim stride",
                           assumption="" if fresh else f"{last[a.value]} is contiguous in its last dim")
        if a.keyword is None:
            out.append(replace(fact, slot=index))
            index += 1
        else:
            out.append(replace(fact, slot=a.keyword.value))
    return tuple(out)


__all__ = ["ArgReader", "Wrapper", "launch_arguments"]
