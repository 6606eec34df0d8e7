"""Constexprs the kernel computes with and compares with numbers (``if SPLIT_K > 1:``): judged
at a value on each side of every comparison.

Such a value is no tile extent and no flag: a split factor, a group count. The wrapper computes
it from sizes the code does not give (``SPLIT_K = max(1, K // 4096)``), so it had no value and
the kernel stayed ``needs_spec``. Which side of each comparison it falls on decides what is
compiled (an atomic add or a store); its exact value beyond that only enters arithmetic. So the
kernel is judged on each side, one spec per value, and a verdict that differs between them
"depends" on it (``check/ranges``).
"""

from __future__ import annotations

import ast

from autotune_rewrite.spec.param_uses import arithmetic_only

MAX_THRESHOLD_VALUES = 4


class LiteralTests:
    """What ``arithmetic_only`` also accepts: a name compared with a number literal as the whole or
    a conjunct of a compile-time test; ``found``: name -> {(op, literal)} (``NAME > 1`` for
    ``1 < NAME`` too)."""

    def __init__(self) -> None:
        self.found: dict[str, set[tuple[type, int | float]]] = {}

    def read(self, node: ast.Name, parents: dict[int, ast.AST]) -> tuple[type, int | float] | None:
        cmp = parents.get(id(node))
        if not (isinstance(cmp, ast.Compare) and len(cmp.ops) == 1 and type(cmp.ops[0]) in _FLIPPED):
            return None
        if cmp.left is node:
            other, op = cmp.comparators[0], type(cmp.ops[0])
        else:
            other, op = cmp.left, _FLIPPED[type(cmp.ops[0])]
        if not (isinstance(other, ast.Constant) and type(other.value) in (int, float)):
            return None
        child, parent = cmp, parents.get(id(cmp))
        while isinstance(parent, (ast.BoolOp, ast.UnaryOp)):
            child, parent = parent, parents.get(id(parent))
        if isinstance(parent, (ast.If, ast.While, ast.IfExp)) and child is parent.test:
            return op, other.value
        return None


_FLIPPED = {ast.Gt: ast.Lt, ast.Lt: ast.Gt, ast.GtE: ast.LtE, ast.LtE: ast.GtE, ast.Eq: ast.Eq, ast.NotEq: ast.NotEq}


def thresholds_of(kernel_source: str | None, kernel: str, names: set[str]) -> dict[str, tuple[int | float, ...]]:
    """Those of ``names`` used in arithmetic and in such comparisons, each with its values: one
    on each side of every comparison (``> 1``: {1, 2}; ``>= 2``: {1, 2}), no negative one, at
    most ``MAX_THRESHOLD_VALUES``, the smallest first."""
    tests = LiteralTests()
    kept = arithmetic_only(kernel_source, kernel, names, tests=tests)
    return {n: _sides(tests.found[n]) for n in sorted(kept) if tests.found.get(n)}


def _sides(tests: set[tuple[type, int | float]]) -> tuple[int | float, ...]:
    values: set[int | float] = set()
    for op, c in tests:
        values |= {c - 1, c} if op in (ast.GtE, ast.Lt) else {c, c + 1}
    return tuple(sorted(v for v in values if v >= 0))[:MAX_THRESHOLD_VALUES]


__all__ = ["LiteralTests", "MAX_THRESHOLD_VALUES", "thresholds_of"]
