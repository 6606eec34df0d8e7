"""What an operator in a launch argument gives: arithmetic on known ints (``BLOCK * 2``), a
comparison or boolean test (``x.numel() > 2**31 - 1``: an int64 guard), a conditional expression
(one fact per branch). A mixin of ``ArgReader`` (``launch_args``)."""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from autotune_rewrite.model import ArgFact
from autotune_rewrite.wrapper.arg_facts import INT32_MAX, ORDER, assumptions_of, binop, join, unknown
from autotune_rewrite.wrapper.asserts import over_options


class OperatorFacts:
    """``ArgReader``'s readers of operators (``self._fact`` reads their operands)."""

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
                    value = binop(e.operator, left.value, right.value)
                except (ArithmeticError, TypeError, ValueError):
                    value = None
                if isinstance(value, int):
                    return ArgFact(0, "", "int", value=value, value_known=True, why="arithmetic",
                                   assumption=assumptions_of([left, right]))
            mapped = over_options([left, right], lambda v: binop(e.operator, v[0], v[1]), "int arithmetic")
            if mapped is not None:
                return mapped
            return ArgFact(0, "", "int", why="int arithmetic")
        if kinds <= {"int", "float"}:
            return ArgFact(0, "", "float", why="float arithmetic")
        return unknown("")

    def _f_UnaryOperation(self, e, d):
        if isinstance(e.operator, cst.Not):
            inner = self._fact(e.expression, d)
            if inner.kind == "bool" and inner.value_known:
                return replace(inner, value=not inner.value)
            return ArgFact(0, "", "bool", why="not ...")
        inner = self._fact(e.expression, d)
        if isinstance(e.operator, cst.Minus) and inner.kind in ("int", "float") and inner.value_known:
            return replace(inner, value=-inner.value)
        return inner if inner.kind in ("int", "float") else unknown("")

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
        if len(e.comparisons) == 1 and isinstance(e.comparisons[0].operator, ORDER):
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
                       assumption=assumptions_of([a, b]))

    def _int64_guard(self, left, op, right, d) -> ArgFact | None:
        """``x.numel() > 2**31 - 1``: a switch to 64-bit indexing, off at serving sizes. (Left
        to the flag rule it would be assumed on, and 64-bit offsets are another kernel.)"""
        size, bound = self._fact(left, d), self._fact(right, d)
        if not (size.kind == "int" and not size.value_known and bound.kind == "int" and bound.value_known
                and isinstance(bound.value, int) and bound.value >= INT32_MAX):
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
                               assumption=assumptions_of([left, right]))
            return ArgFact(0, "", "bool", why="and/or")
        return unknown("")

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
            return replace(chosen, assumption=assumptions_of([test, chosen]),
                           why=f"`{self.w.code(e.test)}` is {test.value}" + (f" ({test.why})" if test.why else ""))
        return join([body, orelse], "")


__all__ = ["OperatorFacts"]
