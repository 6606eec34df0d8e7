"""How many dimensions a wrapper's tensors have, where its code says so.

``t.stride(i)`` is 1 for the last dim of a contiguous tensor; which dim is last needs the rank.
A launch passing ``t.stride(0), t.stride(1)`` of ``B, S, N, H = t.shape`` passes the strides
of its two outer dims, not the last one (the kernel takes the inner ones as given), so taking
the highest stride passed for the last would be a wrong value presented as inferred.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

_SHAPE = m.Attribute(attr=m.Name("shape")) | m.Call(func=m.Attribute(attr=m.Name("size")), args=())
_DIM = m.Attribute(attr=m.Name("ndim")) | m.Call(func=m.Attribute(attr=m.Name("dim")), args=())
_LEN_SHAPE = m.Call(func=m.Name("len"), args=[m.Arg(m.Attribute(attr=m.Name("shape")))])


def tensor_ranks(pm, fn: cst.FunctionDef | None) -> dict[str, int]:
    """Tensor (by its source text) -> rank, from ``a, b, c = t.shape`` / ``t.size()`` unpacking and
    ``assert t.dim() == 3`` / ``t.ndim == 3`` / ``len(t.shape) == 3``. A tensor given two ranks
    (reassigned to a view) is left out: its rank at the launch is not known."""
    if fn is None:
        return {}
    found: dict[str, set[int]] = {}
    for node in m.findall(fn.body, m.Assign(targets=[m.AssignTarget(m.Tuple() | m.List())], value=_SHAPE)):
        elements = node.targets[0].target.elements
        if not any(isinstance(e.value, cst.StarredElement) or isinstance(e, cst.StarredElement) for e in elements):
            found.setdefault(_tensor(pm, node.value), set()).add(len(elements))
    for cmp in m.findall(fn.body, m.Comparison(comparisons=[m.ComparisonTarget(m.Equal(), m.Integer())])):
        left = cmp.left
        if m.matches(left, _DIM):
            found.setdefault(_tensor(pm, left), set()).add(int(cmp.comparisons[0].comparator.value))
        elif m.matches(left, _LEN_SHAPE):
            found.setdefault(_tensor(pm, left.args[0].value), set()).add(int(cmp.comparisons[0].comparator.value))
    return {t: next(iter(r)) for t, r in found.items() if len(r) == 1}


def _tensor(pm, node: cst.BaseExpression) -> str:
    """``t`` of ``t.shape``, ``t.size()``, ``t.dim()``, ``t.ndim``."""
    inner = node.func.value if isinstance(node, cst.Call) else node.value
    return pm.code(inner).strip()


__all__ = ["tensor_ranks"]
