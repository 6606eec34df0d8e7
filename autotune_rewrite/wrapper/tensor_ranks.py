"""How many dimensions a wrapper's tensors have, where its code says so.

``t.stride(i)`` is 1 for the last dim of a contiguous tensor; which dim is last needs the rank.
A launch passing ``t.stride(0), t.stride(1)`` of ``B, S, N, H = t.shape`` passes the strides
of its two outer dims, not the last one (the kernel takes the inner ones as given), so taking
the highest stride passed for the last would be a wrong value presented as inferred.
"""

from __future__ import annotations

import libcst as cst


def tensor_ranks(pm, fn: cst.FunctionDef | None) -> dict[str, int]:
    """Tensor (by its source text) -> rank, from ``a, b, c = t.shape`` / ``t.size()`` unpacking and
    ``assert t.dim() == 3`` / ``t.ndim == 3`` / ``len(t.shape) == 3``. A tensor given two ranks
    (reassigned to a view) is left out: its rank at the launch is not known. A rank compared in a
    branch's test (``if t.dim() == 2: t = t.unsqueeze(0)``) says nothing of the rank at the launch:
    the branch exists because the rank varies, and it usually makes the rank the launch passes, so
    only an ``assert`` states one."""
    if fn is None:
        return {}
    reader = _Ranks(pm)
    fn.body.visit(reader)
    return {t: next(iter(r)) for t, r in reader.found.items() if len(r) == 1}


class _Ranks(cst.CSTVisitor):
    # A plain visitor, not ``matchers.findall``: this runs on every wrapper that passes strides,
    # and the matcher walk cost about 0.1 s per wrapper on FBGEMM's.
    def __init__(self, pm):
        self.pm = pm
        self.found: dict[str, set[int]] = {}
        self._asserts = 0  # inside an ``assert``: a comparison there states a rank

    def visit_Assert(self, node: cst.Assert) -> None:
        self._asserts += 1

    def leave_Assert(self, original_node: cst.Assert) -> None:
        self._asserts -= 1

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, (cst.Tuple, cst.List)):
            return
        tensor = _tensor_of_shape(node.value)
        if tensor is None:
            return
        elements = node.targets[0].target.elements
        if not any(isinstance(e.value, cst.StarredElement) or isinstance(e, cst.StarredElement) for e in elements):
            self.found.setdefault(self._text(tensor), set()).add(len(elements))

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if not self._asserts or len(node.comparisons) != 1:
            return
        target = node.comparisons[0]
        if not isinstance(target.operator, cst.Equal) or not isinstance(target.comparator, cst.Integer):
            return
        left = node.left
        tensor = _tensor_of_dim(left)
        if tensor is None and (isinstance(left, cst.Call) and isinstance(left.func, cst.Name) and left.func.value == "len"
                               and len(left.args) == 1 and left.args[0].keyword is None and not left.args[0].star):
            inner = left.args[0].value
            tensor = inner.value if isinstance(inner, cst.Attribute) and inner.attr.value == "shape" else None
        if tensor is not None:
            self.found.setdefault(self._text(tensor), set()).add(int(target.comparator.value))

    def _text(self, node: cst.BaseExpression) -> str:
        return self.pm.code(node).strip()


def _tensor_of_shape(node: cst.BaseExpression) -> cst.BaseExpression | None:
    """``t`` of ``t.shape`` or ``t.size()``."""
    return _tensor_of(node, "shape", "size")


def _tensor_of_dim(node: cst.BaseExpression) -> cst.BaseExpression | None:
    """``t`` of ``t.ndim`` or ``t.dim()``."""
    return _tensor_of(node, "ndim", "dim")


def _tensor_of(node: cst.BaseExpression, attribute: str, method: str) -> cst.BaseExpression | None:
    """``t`` of ``t.<attribute>`` or ``t.<method>()``; None for anything else."""
    if isinstance(node, cst.Attribute) and node.attr.value == attribute:
        return node.value
    if isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute) and node.func.attr.value == method:
        return node.func.value
    return None


__all__ = ["tensor_ranks"]
