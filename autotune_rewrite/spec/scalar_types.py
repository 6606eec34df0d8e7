"""Runtime scalar arguments the kernel computes with as floats: a softmax scale, an epsilon.

A scalar argument whose kind nothing states is assumed an int (``general_assumptions``), which
specializes as Triton's runtime would for an int (divisibility by 16, the value 1). One the kernel
combines with a float literal (``qk_scale = sm_scale; qk_scale *= 1.44269504``, ``x + eps`` next
to ``1e-6``... only the literal case is read) is a Python float at every real launch, so it is
``fp32`` and never specialized. Read with the standard ``ast``: the parameter, and locals bound
to it alone (``s = sm_scale``), beside a float constant in an arithmetic operation or a
comparison."""

from __future__ import annotations

import ast

from autotune_rewrite.spec.pointer_params import kernel_def

_ARITH = (ast.BinOp, ast.AugAssign, ast.Compare)


def float_scalar_params(kernel_source: str | None, kernel: str, names: frozenset[str]) -> tuple[str, ...]:
    """Those of ``names`` (runtime, non-pointer parameters) used beside a float literal."""
    fn = kernel_def(kernel_source, kernel)
    if fn is None or not names:
        return ()
    alias = {n: n for n in names}  # a local bound to a parameter alone stands for it
    for node in ast.walk(fn):
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in alias
                and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            alias.setdefault(node.targets[0].id, alias[node.value.id])
    found = []
    for node in ast.walk(fn):
        if not isinstance(node, _ARITH):
            continue
        operands = ([node.left, *node.comparators] if isinstance(node, ast.Compare) else
                    [node.target, node.value] if isinstance(node, ast.AugAssign) else [node.left, node.right])
        if any(isinstance(o, ast.Constant) and type(o.value) is float for o in operands):
            found += [alias[o.id] for o in operands if isinstance(o, ast.Name) and o.id in alias]
    return tuple(dict.fromkeys(found))


def float_scalars(site, kernel_source: str | None, pointers) -> frozenset[str]:
    """The site's runtime scalar parameters (not constexpr, not pointers) used as floats."""
    names = frozenset(p.name for p in site.params if not p.is_constexpr) - frozenset(pointers)
    return frozenset(float_scalar_params(kernel_source, site.kernel, names))


__all__ = ["float_scalar_params", "float_scalars"]
