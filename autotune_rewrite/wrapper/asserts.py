"""Finite sets of values, and upper bounds, the wrapper itself states before a launch.

Serving wrappers often pin a shape-derived value to a few supported ones before they launch:
``assert Lk in {16, 32, 64, 128}``, ``assert head_dim in (64, 128, 256), "..."``,
``if D not in SUPPORTED_DIMS: raise ValueError(...)``. Past that statement the value is one of
those: not known, but not a guess either. ``stated_sets`` reads them, so that a constexpr derived
from such a value (``HEAD_DIM=Lk``, ``BLOCK_D=triton.next_power_of_2(Lk)``) can be one spec per
value, each listed as an assumption that names the statement.

Only statements at the function's top level that come before the launch count (one under an
``if`` holds only in its branch), only for a subject the function does not bind again, and only
for sets of int or str literals (or a module constant holding one). A bound
(``assert K <= 256, "head dim"``, ``if D > MAX_D: raise``) is an upper bound: a tile computed
from it is assumed at its largest, as one clamped by ``min(..., 256)`` is.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

import libcst as cst

from autotune_rewrite.evaluate.literals import literal
from autotune_rewrite.wrapper.bindings import SHAPE_ITEM
from autotune_rewrite.model import ArgFact

MAX_VALUES = 8  # a longer list is not a handful of specs


@dataclass(frozen=True)
class StatedSet:
    """A name (``Lk``, ``head_dim``) is one of ``values`` after ``line``."""

    values: tuple  # empty when only bounded
    statement: str  # ``assert Lk in {16, 32, 64, 128}`` / ``if D not in SUPPORTED: raise`` (no message)
    line: int
    upper: int | None = None  # ``assert K <= 256``: at most this (a tile from it is assumed at its largest)


def stated_sets(wrapper, before_line: int, module_value=None) -> dict[str, StatedSet]:
    """Name -> the set the wrapper's top-level asserts / raises pin it to before ``before_line``."""
    out: dict[str, StatedSet] = {}
    for test, negated, line, words in _checks(wrapper, before_line):
        for subject, values, upper in _memberships(wrapper, test, negated, module_value):
            name = wrapper.code(subject)
            if _rebound(wrapper, subject, line) or (not values and out.get(name, StatedSet((), "", 0)).values):
                continue  # a set says more than a bound
            out[name] = StatedSet(values, words, line, upper)
    return out


def conditions_before(wrapper, before_line: int):
    """(condition, the statement in words) of each top-level ``assert c`` above ``before_line``;
    ``if c: raise`` gives ``not c`` when ``c`` is one ``not ...`` (``if not x.is_contiguous():
    raise``) or one ``!=`` / ``not in`` comparison. What holds at the launch."""
    for test, negated, _, words in _checks(wrapper, before_line):
        if not negated:
            yield test, words
        elif isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            yield test.expression, words
        elif isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(
                test.comparisons[0].operator, (cst.NotEqual, cst.NotIn)):
            # ``if x.dtype != torch.int64: raise``: afterwards ``x.dtype == torch.int64``
            flipped = cst.Equal() if isinstance(test.comparisons[0].operator, cst.NotEqual) else cst.In()
            yield test.with_changes(comparisons=[test.comparisons[0].with_changes(operator=flipped)]), words


def _checks(wrapper, before_line: int):
    """(condition, negated?, line, words) of the top-level checks above ``before_line``."""
    fn = wrapper.fn
    if fn is None or not isinstance(fn.body, cst.IndentedBlock):
        return
    for stmt in fn.body.body:
        line = wrapper.pm.span(stmt).start_line
        if line >= before_line:
            break
        for test, negated in _tests(stmt):
            words = f"if {wrapper.code(test)}: raise" if negated else f"assert {wrapper.code(test)}"
            yield test, negated, line, words


def _tests(stmt: cst.CSTNode):
    """(condition that holds afterwards, negated?) of ``assert c`` and ``if c: raise ...``."""
    if isinstance(stmt, cst.SimpleStatementLine):
        for small in stmt.body:
            if isinstance(small, cst.Assert):
                yield small.test, False
    elif isinstance(stmt, cst.If) and stmt.orelse is None and _only_raises(stmt.body):
        yield stmt.test, True  # ``if D not in S: raise``: afterwards ``not (D not in S)``


def _only_raises(body: cst.BaseSuite) -> bool:
    stmts = getattr(body, "body", ())
    return bool(stmts) and all(isinstance(s, cst.SimpleStatementLine) and all(isinstance(x, cst.Raise) for x in s.body)
                               for s in stmts)


def _memberships(wrapper, test: cst.BaseExpression, negated: bool, module_value):
    """(name, set, upper bound) of the ``x in S`` / ``x <= n`` conjuncts of a condition that holds
    (``negated``: of one whose negation holds, so ``x not in S`` / ``x > n`` disjuncts)."""
    if isinstance(test, cst.BooleanOperation):
        # assert a and b: both hold; if a or b: raise -> afterwards neither a nor b.
        if isinstance(test.operator, cst.Or if negated else cst.And):
            yield from _memberships(wrapper, test.left, negated, module_value)
            yield from _memberships(wrapper, test.right, negated, module_value)
        return
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return
    op = test.comparisons[0].operator
    right = test.comparisons[0].comparator
    if isinstance(op, cst.NotIn if negated else cst.In):
        values = _literal_set(right, module_value)
        if values:
            yield test.left, values, None
        return
    bound = _upper_bound(test.left, op, right, negated, module_value)
    if bound is not None:
        yield bound[0], (), bound[1]


# ``x OP n`` that holds -> x <= n + shift (for ``n OP x`` the mirrored operator)
_AT_MOST = {cst.LessThanEqual: 0, cst.LessThan: -1}
_MIRROR = {cst.GreaterThanEqual: cst.LessThanEqual, cst.GreaterThan: cst.LessThan,
           cst.LessThanEqual: cst.GreaterThanEqual, cst.LessThan: cst.GreaterThan}
_NEGATE = {cst.GreaterThan: cst.LessThanEqual, cst.GreaterThanEqual: cst.LessThan,
           cst.LessThan: cst.GreaterThanEqual, cst.LessThanEqual: cst.GreaterThan}


def _upper_bound(left, op, right, negated: bool, module_value) -> tuple[cst.Name, int] | None:
    """``assert K <= 256`` / ``assert 256 > K`` / ``if K > 256: raise`` -> (K, 256 or 255)."""
    kind = type(op)
    if kind not in _NEGATE:
        return None
    if negated:
        kind = _NEGATE[kind]
    if not isinstance(left, cst.Name):
        left, right, kind = right, left, _MIRROR[kind]
    n = _int_of(right, module_value)
    if not isinstance(left, cst.Name) or n is None or kind not in _AT_MOST:
        return None
    return left, n + _AT_MOST[kind]


def _int_of(node, module_value) -> int | None:
    if isinstance(node, cst.Integer):
        return literal(node)
    if isinstance(node, cst.Name) and module_value is not None:
        known, value = module_value(node.value)
        if known and isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _literal_set(node: cst.BaseExpression, module_value) -> tuple | None:
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        values = []
        for el in node.elements:
            if isinstance(el, cst.StarredElement):
                return None
            v = el.value
            if isinstance(v, cst.Integer):
                values.append(literal(v))
            elif isinstance(v, cst.SimpleString) and isinstance(literal(v), str):
                values.append(literal(v))
            else:
                return None
        return _handful(values)
    if isinstance(node, cst.Name) and module_value is not None:
        known, value = module_value(node.value)
        if known and isinstance(value, (tuple, list, set, frozenset)) and all(
                isinstance(v, (int, str)) and not isinstance(v, bool) for v in value):
            return _handful(sorted(value, key=repr) if isinstance(value, (set, frozenset)) else list(value))
    return None


def _handful(values: list) -> tuple | None:
    values = list(dict.fromkeys(values))
    return tuple(values) if 0 < len(values) <= MAX_VALUES else None


def _rebound(wrapper, subject: cst.BaseExpression, line: int) -> bool:
    """Only a plain name that the function binds once, before the check (``Lk = q.shape[-1]``),
    or a parameter it never binds: one bound again may hold another value at the launch."""
    if not isinstance(subject, cst.Name):
        return True
    bindings = wrapper.assigned.get(subject.value, ())
    if subject.value in wrapper.params:
        return bool(bindings)
    if len(bindings) != 1 or bindings[0] is None:
        return True
    value = bindings[0]
    return value is not SHAPE_ITEM and wrapper.pm.span(value).start_line >= line


def pin(fact: ArgFact, name: str, pinned: StatedSet) -> ArgFact:
    """``name``'s fact as the check before the launch leaves it: a value of the set (``check``
    sweeps the name, so that every value computed from it stays consistent with the others),
    or bounded by ``upper`` as ``min(name, upper)`` would be."""
    if fact.value_known:
        return fact
    words = f"`{pinned.statement}` (line {pinned.line})"
    if not pinned.values:
        if fact.kind not in ("int", "unknown"):
            return fact
        upper = pinned.upper if fact.upper is None else min(fact.upper, pinned.upper)
        return replace(fact, kind="int", upper=upper, why=f"at most {upper} by {words}")
    kind = "str" if all(isinstance(v, str) for v in pinned.values) else "int"
    if fact.kind not in ("int", "str", "unknown") or kind == "int" and not all(isinstance(v, int) for v in pinned.values):
        return fact
    return replace(fact, kind=kind, options=pinned.values, upper=None, expr=name, stated=((name, pinned.values, words),))


# Int calls an option maps through (``BLOCK_D = triton.next_power_of_2(Lk)``).
OPTION_CALLS = {"int": lambda v: int(v[0]), "cdiv": lambda v: -(-v[0] // v[1]),
                "next_power_of_2": lambda v: 1 if v[0] <= 1 else 1 << (int(v[0]) - 1).bit_length()}


def over_options(facts: list[ArgFact], fn, why: str) -> ArgFact | None:
    """An int computed from values the wrapper pins to a few (``next_power_of_2(Lk)`` after
    ``assert Lk in {48, 64}``): one of the values it takes on them. None unless some input is
    so pinned and every other one is known."""
    if not any(f.stated for f in facts) or not all(
            f.kind == "int" and (f.value_known or f.options) and not isinstance(f.value, bool) for f in facts):
        return None
    values = []
    for combo in itertools.islice(itertools.product(*(f.options or (f.value,) for f in facts)), 64):
        try:
            v = fn(list(combo))
        except (ArithmeticError, TypeError, ValueError):
            return None
        if not isinstance(v, int) or isinstance(v, bool):
            return None
        values.append(v)
    values = list(dict.fromkeys(values))
    if len(values) > MAX_VALUES:
        return None
    stated = tuple(dict.fromkeys(s for f in facts for s in f.stated))
    assumption = "; ".join(dict.fromkeys(f.assumption for f in facts if f.assumption))
    return ArgFact(0, "", "int", options=tuple(values), why=why, stated=stated, assumption=assumption)


__all__ = ["MAX_VALUES", "OPTION_CALLS", "StatedSet", "conditions_before", "over_options", "pin", "stated_sets"]
