"""Where a generated config came from: the literal elements its loops iterated over.

A comprehension or a helper's ``for`` loop over a list or tuple written in the source
(``for bm, bn in [(64, 64), (128, 64)]``, ``itertools.product([64, 128], [2, 3])``, or a
module-level name bound to such a literal) makes one config per element (or per combination).
Recording which element each config was made from lets the rewriter remove a dead config
where it is written, by removing that element, instead of copying the whole list inline.
"""

from __future__ import annotations

import math
from typing import Callable

import libcst as cst

from autotune_rewrite.model import ElementChoice

Choices = Callable[[int], tuple[ElementChoice, ...]]
_NONE: Choices = lambda k: ()  # noqa: E731 - an iterable we cannot point into


def _literal(node) -> bool:
    return isinstance(node, (cst.List, cst.Tuple)) and not any(
        isinstance(el, cst.StarredElement) for el in node.elements
    )


def _module_literal(pm, node, env):
    """``node`` itself, or the literal a module-level name (not shadowed locally) is bound to once."""
    if isinstance(node, cst.Name) and node.value not in env and hasattr(pm, "module_bindings"):
        found = pm.module_bindings().get(node.value) or []
        if len(found) == 1 and _literal(found[0]):
            return found[0]
    return node


def choices_of(pm, node, env, count: int) -> Choices:
    """For the iterable ``node`` (which evaluated to ``count`` items): item k -> its elements."""
    node = _module_literal(pm, node, env)
    if _literal(node):
        if len(node.elements) != count:
            return _NONE
        seq = pm.span(node)
        return lambda k: (ElementChoice(pm.path, seq, k),)
    if isinstance(node, cst.Call) and "itertools.product" in pm.names(node.func):
        pools = [_module_literal(pm, a.value, env) for a in node.args]
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
