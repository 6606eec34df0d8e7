"""Tensor layouts the wrapper itself checks before a launch.

Triton specializes an int argument equal to 1, and a stride of 1 changes the code (vectorized
loads, the shared-memory layout): whether ``x.stride(-1)`` is 1 decides figures. Without a
statement the tool assumes the serving case, a tensor contiguous in its last dim, and says so. A
wrapper often states the layout instead, and then it is a fact, not an assumption:

- ``assert x.is_contiguous()``: every stride of a contiguous tensor; its last dim's is 1;
- ``assert x.stride(1) == 1`` or ``assert x.is_contiguous(memory_format=torch.channels_last)``
  (channels-last, NHWC in memory): dim 1's stride is 1, so the last dim's is not (unless the
  tensor is one element wide there, which a launch over it does not expect).

Only top-level ``assert`` / ``if ...: raise`` statements above the launch count, for a tensor
the function does not bind again, as for the value sets of ``asserts``.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from autotune_rewrite.evaluate.literals import literal
from autotune_rewrite.wrapper.asserts import conditions_before

# memory formats whose dim 1 (channels) is the unit-stride one
CHANNELS_LAST = {"channels_last", "channels_last_3d"}


@dataclass(frozen=True)
class Layout:
    """What the wrapper states about one tensor's strides."""

    unit_dims: frozenset[int]  # dims whose stride is stated to be 1, as written (``-1`` for the last)
    contiguous: bool  # ``x.is_contiguous()``: the last dim's stride is 1, exactly
    statement: str  # the statement, for the fact's words

    def last_is_unit(self, rank: int | None) -> bool | None:
        """Is the last dim's stride 1? True, False (another dim is the unit one), None (not stated).
        ``rank``: the tensor's, where known (``tensor_ranks``, or every dim's stride passed);
        unknown, a stated dim other than ``-1`` is taken as not the last."""
        if self.contiguous or -1 in self.unit_dims or (rank is not None and rank - 1 in self.unit_dims):
            return True
        return False if self.unit_dims else None


def stated_layouts(wrapper, before_line: int) -> dict[str, Layout]:
    """Tensor (source text) -> its stated layout, from the checks above ``before_line``."""
    found: dict[str, tuple[set[int], bool, list[str]]] = {}
    for test, words in conditions_before(wrapper, before_line):
        for tensor, dim, contiguous in _facts(wrapper, test):
            if wrapper.assigned.get(tensor):
                continue  # bound again in the function: the check may be about another tensor
            dims, whole, said = found.setdefault(tensor, (set(), False, []))
            if dim is not None:
                dims.add(dim)
            found[tensor] = (dims, whole or contiguous, said if words in said else [*said, words])
    return {t: Layout(frozenset(d), c, "; ".join(s)) for t, (d, c, s) in found.items()}


def _facts(wrapper, test: cst.BaseExpression):
    """(tensor, unit-stride dim or None, contiguous?) of each conjunct that holds."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        yield from _facts(wrapper, test.left)
        yield from _facts(wrapper, test.right)
        return
    if isinstance(test, cst.Call) and _method(test) == "is_contiguous":
        fmt = next((a.value for a in test.args if a.keyword is not None and a.keyword.value == "memory_format"),
                   test.args[0].value if test.args and test.args[0].keyword is None else None)
        name = fmt.attr.value if isinstance(fmt, cst.Attribute) else None
        tensor = wrapper.code(test.func.value)
        if fmt is None or name == "contiguous_format":
            yield tensor, None, True
        elif name in CHANNELS_LAST:
            yield tensor, 1, False
        return
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 \
            and isinstance(test.comparisons[0].operator, cst.Equal):
        left, right = test.left, test.comparisons[0].comparator
        for side, other in ((left, right), (right, left)):
            if isinstance(other, cst.Integer) and literal(other) == 1 and isinstance(side, cst.Call) \
                    and _method(side) == "stride" and len(side.args) == 1:
                dim = _dim(side.args[0].value)
                if dim is not None:
                    yield wrapper.code(side.func.value), dim, False


def _method(call: cst.Call) -> str | None:
    return call.func.attr.value if isinstance(call.func, cst.Attribute) else None


def _dim(node: cst.BaseExpression) -> int | None:
    if isinstance(node, cst.Integer):
        return literal(node)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) \
            and isinstance(node.expression, cst.Integer):
        return -literal(node.expression)
    return None


__all__ = ["Layout", "stated_layouts"]
