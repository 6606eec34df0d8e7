"""Where a generated config came from: the literal elements its loops iterated over.

A comprehension or a helper's ``for`` loop over a list or tuple written in the source
(``for bm, bn in [(64, 64), (128, 64)]``, ``itertools.product([64, 128], [2, 3])``, a
module-level name bound to such a literal, or the branch of ``[1] if is_hip() else [3, 4, 7]``
the target takes) makes one config per element (or per combination).
Recording which element each config was made from lets the rewriter remove a dead config
where it is written, by removing that element, instead of copying the whole list inline.
"""

from __future__ import annotations

import math
from typing import Callable

import libcst as cst

from autotune_rewrite.evaluate.values import Unresolved
from autotune_rewrite.model import ElementChoice

Choices = Callable[[int], tuple[ElementChoice, ...]]
_NONE: Choices = lambda k: ()  # noqa: E731 - an iterable we cannot point into


def _literal(node) -> bool:
    return isinstance(node, (cst.List, cst.Tuple)) and not any(
        isinstance(el, cst.StarredElement) for el in node.elements
    )


def _module_literal(pm, node, env, taken):
    """``node`` itself, or the literal a module-level name (not shadowed locally) is bound to once;
    through ``a if c else b``, the branch ``taken`` says this target takes."""
    try:
        node = taken(node, env)
        if isinstance(node, cst.Name) and node.value not in env and hasattr(pm, "module_bindings"):
            found = pm.module_bindings().get(node.value) or []
            if len(found) == 1:
                value = taken(found[0], {})  # a module-level test reads no loop variable
                if _literal(value):
                    return value
    except Unresolved:  # the test did not evaluate again here: no elements to point into
        pass
    return node


def _as_is(node, env):
    return node


def choices_of(pm, node, env, count: int, taken: Callable = _as_is) -> Choices:
    """For the iterable ``node`` (which evaluated to ``count`` items): item k -> its elements.
    ``taken(node, env)``: the branch a conditional expression takes (the evaluator's)."""
    node = _module_literal(pm, node, env, taken)
    if _literal(node):
        if len(node.elements) != count:
            return _NONE
        seq = pm.span(node)
        return lambda k: (ElementChoice(pm.path, seq, k),)
    if isinstance(node, cst.Call) and "itertools.product" in pm.names(node.func):
        pools = [_module_literal(pm, a.value, env, taken) for a in node.args]
        if any(a.keyword is not None or a.star for a in node.args) or not all(_literal(p) for p in pools):
            return _NONE
        sizes = [len(p.elements) for p in pools]
        if math.prod(sizes) != count:
            return _NONE
        spans = [pm.span(p) for p in pools]

        def product(k: int) -> tuple[ElementChoice, ...]:
            out = []
            for span, size in zip(reversed(spans), reversed(sizes)):  # the last pool varies fastest
                k, i = divmod(k, size)
                out.append(ElementChoice(pm.path, span, i))
            return tuple(reversed(out))

        return product
    return _NONE


__all__ = ["Choices", "choices_of"]
