"""What a call in a launch argument is: a tensor factory's dtype (``torch.empty(..., dtype=)``,
``x.new_zeros``, ``torch.empty_like``), a cast, an int-valued call (``x.size(0)``, ``triton.
cdiv``, ``max``), a stride (``x.stride(-1)`` of a contiguous tensor). A mixin of ``ArgReader``
(``launch_args``), which reads the other forms."""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from autotune_rewrite.model import ArgFact
from autotune_rewrite.wrapper.arg_facts import assumptions_of, kwarg, unknown, upper_bound
from autotune_rewrite.wrapper.asserts import OPTION_CALLS, over_options
from autotune_rewrite.wrapper.tensor_ranks import tensor_ranks
from autotune_rewrite.wrapper.torch_names import (
    CASTS, FACTORIES, FLOAT_CALLS, INT64_REDUCTIONS, INT_CALLS, INT_METHODS, JOINS, LIKE, NEW, REDUCTIONS, SAME,
    SAME_FRESH,
)


class CallFacts:
    """``ArgReader``'s readers of calls (``self._fact`` reads their arguments)."""

    def _f_Call(self, e, d):
        func = e.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
        if name is None:
            return unknown("")
        on = func.value if isinstance(func, cst.Attribute) else None
        on_torch = on is not None and self.w.code(on) in ("torch", "th")
        if name in FACTORIES and (on_torch or on is None):
            given = kwarg(e, "dtype")
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
            given = kwarg(e, "dtype")
            if given is not None:
                return ArgFact(0, "", "tensor", dtype=self._dtype_of(given, d), fresh=True, why=f"{name}(dtype=...)")
            base = self._fact(e.args[0].value, d)
            return ArgFact(0, "", "tensor", dtype=base.dtype if base.kind == "tensor" else None, fresh=True,
                           why=f"{name}({self.w.code(e.args[0].value)})", assumption=base.assumption)
        if on is not None and name in NEW:
            base = self._fact(on, d)
            given = kwarg(e, "dtype")
            dt = self._dtype_of(given, d) if given is not None else (base.dtype if base.kind == "tensor" else None)
            return ArgFact(0, "", "tensor", dtype=dt, fresh=True, why=f".{name}",
                           assumption=base.assumption if given is None else "")
        if on is not None and name == "to":
            base = self._fact(on, d)
            target = kwarg(e, "dtype") or next((a.value for a in e.args if a.keyword is None), None)
            dt = self._dtype_of(target, d) if target is not None else None
            if dt is None and target is not None and self._fact(target, d).kind == "tensor":
                dt = self._fact(target, d).dtype
            if dt is None and (target is None or self._fact(target, d).kind not in ("dtype", "tensor")):
                dt = base.dtype if base.kind == "tensor" else None  # .to(device)
            return ArgFact(0, "", "tensor", dtype=dt, why=".to(...)")
        if on is not None and not on_torch and name in REDUCTIONS:  # ``dq.sum(0)``
            return self._reduced(self._fact(on, d), name, e, d)
        first = e.args[0].value if on_torch and e.args and e.args[0].keyword is None and not e.args[0].star else None
        if first is not None and name in REDUCTIONS:  # ``torch.sum(dq, 0)``
            return self._reduced(self._fact(first, d), name, e, d)
        if first is not None and (name in SAME or name in SAME_FRESH):  # ``torch.transpose(x, 0, 1)``
            base = self._fact(first, d)
            return replace(base, fresh=name in SAME_FRESH, why=f"torch.{name}()") if base.kind == "tensor" else unknown("")
        if first is not None and name in JOINS:
            return self._joined(first, name, d)
        if on is not None and name in CASTS and not e.args:
            return ArgFact(0, "", "tensor", dtype=CASTS[name], fresh=False, why=f".{name}()")
        if on is not None and (name in SAME_FRESH or name in SAME):
            base = self._fact(on, d)
            if base.kind != "tensor":
                return unknown("")
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
                                   why=f"{name}(...)", assumption=assumptions_of(facts))
                mapped = over_options(facts, max if name == "max" else min, f"{name}(...)")
                if mapped is not None:
                    return mapped
                # A clamp bounds the value: ``min(128, x)`` is at most 128.
                bounds = [upper_bound(f) for f in facts]
                upper = (min(b for b in bounds if b is not None) if name == "min" and any(b is not None for b in bounds)
                         else max(bounds) if name == "max" and None not in bounds else None)
                return ArgFact(0, "", "int", why=f"{name}(...)", upper=upper)
            if all(f.kind in ("int", "float") for f in facts):
                return ArgFact(0, "", "float", why=f"{name}(...)")
        return unknown("")

    def _reduced(self, base: ArgFact, name: str, e: cst.Call, d: int) -> ArgFact:
        if base.kind != "tensor":
            return unknown("")
        given = kwarg(e, "dtype")
        integral = base.dtype is not None and (base.dtype == "bool" or base.dtype.startswith(("int", "uint")))
        dtype = (self._dtype_of(given, d) if given is not None else
                 "int64" if integral and name in INT64_REDUCTIONS else base.dtype)
        return ArgFact(0, "", "tensor", dtype=dtype, fresh=True, why=f".{name}(...)",
                       assumption=base.assumption if given is None else "")

    def _joined(self, tensors: cst.BaseExpression, name: str, d: int) -> ArgFact:
        listed = isinstance(tensors, (cst.List, cst.Tuple)) and tensors.elements and \
            not any(isinstance(el, cst.StarredElement) for el in tensors.elements)
        parts = [self._fact(el.value, d) for el in tensors.elements] if listed else []
        dtypes = {p.dtype if p.kind == "tensor" else None for p in parts}
        dtype = dtypes.pop() if len(dtypes) == 1 else None  # mixed dtypes: torch promotes, not read here
        return ArgFact(0, "", "tensor", dtype=dtype, fresh=True, why=f"torch.{name}(...)",
                       assumption=assumptions_of(parts) if dtype else "")

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
                                   assumption=assumptions_of(facts))
            except (IndexError, ZeroDivisionError, ValueError, OverflowError):
                pass
        mapped = over_options(facts, OPTION_CALLS[name], f"{name}(...)") if name in OPTION_CALLS else None
        if mapped is not None:
            return mapped
        if name == "next_power_of_2" and len(facts) == 1 and upper_bound(facts[0]) is not None:
            bound = upper_bound(facts[0])
            return ArgFact(0, "", "int", why=f"{name}(...)", upper=1 if bound <= 1 else 1 << (bound - 1).bit_length())
        return ArgFact(0, "", "int", why=f"{name}(...)")

    def _stride(self, tensor: cst.BaseExpression, index: cst.BaseExpression, d: int) -> ArgFact:
        """``t.stride(-1)`` is 1 for a contiguous tensor: exact when ``t`` is freshly allocated or
        ``.contiguous()``, else assumed (the serving case: last dims are contiguous)."""
        base = self._fact(tensor, d)
        last = isinstance(index, cst.UnaryOperation) and isinstance(index.operator, cst.Minus) \
            and isinstance(index.expression, cst.Integer) and index.expression.value == "1"
        layout = self.layouts.get(self.w.code(tensor))
        if layout is not None and not last and isinstance(index, cst.Integer) and int(index.value) in layout.unit_dims:
            return ArgFact(0, "", "int", value=1, value_known=True, why=f"stated by `{layout.statement}`")
        unit = layout.last_is_unit(self._rank(tensor)) if layout is not None else None
        if not last or unit is False:
            return ArgFact(0, "", "int", why="a stride")
        if base.kind == "tensor" and (base.fresh or unit):
            return ArgFact(0, "", "int", value=1, value_known=True, why=f"{self.w.code(tensor)} is contiguous")
        return ArgFact(0, "", "int", value=1, value_known=True, why="last-dim stride",
                       assumption=f"{self.w.code(tensor)} is contiguous in its last dim")

    def _rank(self, tensor: cst.BaseExpression) -> int | None:
        return tensor_ranks(self.w.pm, self.w.fn).get(self.w.code(tensor))

    def _dtype_of(self, node: cst.BaseExpression | None, d: int) -> str | None:
        if node is None:
            return None
        f = self._fact(node, d)
        return f.dtype if f.kind == "dtype" else None


__all__ = ["CallFacts"]
