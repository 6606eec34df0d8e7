"""A comprehension evaluated row by row: each combination of its loop variables and the item it makes.

``[triton.Config({"BLOCK_M": m}, num_stages=s) for m in [64, 128] for s in [3, 4, 7]]`` is six
rows, ``(m=64, s=3) -> Config(...)`` and so on. The rewriter drops dead configs of such a list
with a condition over the loop variables (``rewrite/dead_filter``), so it needs the table, not
just the list: the same evaluator runs it (``Comprehensions``), so every item is exactly what
the scan saw, with the literal elements it came from on ``choices`` (``provenance``). Rows the
comprehension's own ``if`` drops are not rows: they make nothing, whatever a new condition says.
"""

from __future__ import annotations

from collections import ChainMap
from dataclasses import dataclass
from typing import Any

import libcst as cst

from autotune_rewrite.evaluate.values import MAX_ITEMS, Unresolved, bind

COMPREHENSIONS = (cst.ListComp, cst.GeneratorExp, cst.SetComp)


@dataclass(frozen=True)
class Row:
    values: tuple[tuple[str, Any], ...]  # (loop variable, its value), outermost loop first
    item: Any  # what the element evaluated to for these values

    @property
    def bindings(self) -> dict[str, Any]:
        return dict(self.values)


def loop_names(target: cst.BaseExpression) -> list[str]:
    """The names a ``for`` target binds (``m``; ``(stages, warps)``; ``a, *rest``)."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for el in target.elements for n in loop_names(el.value)]
    raise Unresolved("a loop target other than names")


def fors(comp) -> list[cst.CompFor]:
    """The comprehension's ``for`` clauses, outermost first."""
    out, f = [], comp.for_in
    while f is not None:
        out.append(f)
        f = f.inner_for_in
    return out


def rows(ev, pm, comp, env=None) -> tuple[Row, ...]:
    """Every row of ``comp`` (a list/generator/set comprehension of ``pm``) evaluated by ``ev``
    (an ``Evaluator``); raises ``Unresolved`` as evaluating the comprehension would."""
    out: list[Row] = []
    ev.loop_depth += 1  # configs made here are generated (no span, with their choices)
    mark = len(ev.choices)
    try:
        _walk(ev, pm, comp, comp.for_in, ChainMap({}, dict(env or {})), [], out)
    finally:
        ev.loop_depth -= 1
        del ev.choices[mark:]
    return tuple(out)


def _walk(ev, pm, comp, f: cst.CompFor, env, names: list[str], out: list[Row]) -> None:
    mine = list(dict.fromkeys([*names, *loop_names(f.target)]))  # a rebound name keeps its first place
    for item in ev.looping(pm, f.iter, env):
        ev._tick()
        scope = env.new_child()
        bind(f.target, item, scope)
        if not all(ev.eval(pm, c.test, scope) for c in f.ifs):
            continue
        if f.inner_for_in is not None:
            _walk(ev, pm, comp, f.inner_for_in, scope, mine, out)
            continue
        out.append(Row(tuple((n, scope[n]) for n in mine), ev.eval(pm, comp.elt, scope)))
        if len(out) > MAX_ITEMS:
            raise Unresolved("too large to evaluate statically")


__all__ = ["COMPREHENSIONS", "Row", "fors", "loop_names", "rows"]
