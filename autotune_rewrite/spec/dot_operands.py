"""The operands of a kernel's ``tl.dot``: which pointer parameters' tiles meet in one, and which
are a quantized GEMM's (a kernel that also takes scale tensors). Read with the standard ``ast``,
as ``pointer_dtypes`` reads the other uses: a dot takes two operands of one dtype
(``spec_cases.dot_partners``), and a quantized GEMM's operands come 8-bit or 16-bit
(``general_assumptions.quantized_range``)."""

from __future__ import annotations

import ast
import re

from autotune_rewrite.spec.pointer_params import (
    call_name, call_name_of, kernel_def, leftmost, local_assignments, pointer_params, pointer_root,
)

def dot_operand_pairs(kernel_source: str | None, kernel: str) -> tuple[tuple[str, str], ...]:
    """(a, b) pointer parameters whose loaded tiles are the two operands of one ``tl.dot``."""
    fn = kernel_def(kernel_source, kernel)
    if fn is None:
        return ()
    params = set(pointer_params(kernel_source, kernel))
    loads = {t.id: leftmost(node.value.args[0]) for node in ast.walk(fn) if isinstance(node, ast.Assign)
             and call_name_of(node.value) == "load" and node.value.args
             for t in node.targets if isinstance(t, ast.Name)}
    assigned = local_assignments(fn)
    pairs = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and call_name(node) == "dot" and len(node.args) >= 2 and all(
                isinstance(a, ast.Name) for a in node.args[:2]):
            a, b = (pointer_root(loads.get(x.id), params, assigned) for x in node.args[:2])
            if a is not None and b is not None and a != b:
                pairs.append((a, b))
    return tuple(dict.fromkeys(pairs))


_SCALE_NAME = re.compile(r"(^|_)scales?(_|$)", re.IGNORECASE)


def is_scale_name(name: str) -> bool:
    """``a_scale``, ``x_scales_ptr``, ``B_SCALE``: a tensor named as a quantization scale."""
    return bool(_SCALE_NAME.search(name))


def scaled_dot_operands(kernel_source: str | None, kernel: str) -> tuple[str, ...]:
    """The first operand pointer of each ``tl.dot`` of a kernel that also takes scale tensors
    (pointer parameters named as scales): a quantized GEMM's, 8-bit or 16-bit."""
    if not any(is_scale_name(p) for p in pointer_params(kernel_source, kernel)):
        return ()
    return tuple(dict.fromkeys(a for a, _ in dot_operand_pairs(kernel_source, kernel)))


__all__ = ["dot_operand_pairs", "is_scale_name", "scaled_dot_operands"]
