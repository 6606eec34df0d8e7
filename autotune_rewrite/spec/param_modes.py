"""Constexprs the kernel only compares with literals in a test (``if ACTIVATION == "gelu":``):
modes, each value one kernel. Read with the standard ``ast``, as ``param_uses`` reads the other
uses; a mode nobody sets is compiled at the value that guards the most code
(``general_assumptions.mode_with_most_code``)."""

from __future__ import annotations

import ast

from autotune_rewrite.spec.param_uses import used_only
from autotune_rewrite.spec.pointer_params import module_functions

_OTHER = object()  # a mode's value that none of the compared literals names


def modes_of(kernel_source: str | None, kernel: str, names: set[str]) -> dict[str, tuple]:
    """Those of ``names`` the kernel only compares with literals in a test (``if ACTIVATION ==
    "gelu":``, ``elif MODE != 2:``), itself or in the module's ``@triton.jit`` helpers it passes
    them to: modes, each value one kernel. Each maps to the values it is compared with, the one
    guarding the most code first (the largest kernel, as for flags)."""
    sizes = _mode_sizes(kernel_source, kernel, names, 0)
    ranked = {n: sorted(sizes[n], key=lambda v: -sizes[n][v]) for n in sorted(sizes)}
    # When "some other value" guards the most code, no literal gives the largest kernel.
    return {n: tuple(v for v in values if v is not _OTHER) for n, values in ranked.items() if values[0] is not _OTHER}


def _mode_sizes(source: str | None, fn_name: str, names: set[str], depth: int) -> dict[str, dict]:
    """For each of ``names`` used only as a mode: value -> size of the code it guards."""
    sizes: dict[str, dict] = {}
    helpers = module_functions(source) if depth < 3 else {}

    def merge(name: str, found: dict) -> None:
        seen = sizes.setdefault(name, {})
        for value, size in found.items():
            seen[value] = max(seen.get(value, 0), size)

    def passed_on(occ: ast.Name, call: ast.Call) -> bool:
        """``_activation(x, ACT)`` / ``_activation(x, ACTIVATION=ACT)``: a mode in the helper."""
        target = helpers.get(getattr(call.func, "id", None))
        if target is None or target.name == fn_name:
            return False
        positional = [a.arg for a in target.args.posonlyargs + target.args.args]
        param = next((positional[i] for i, a in enumerate(call.args) if a is occ and i < len(positional)),
                     next((k.arg for k in call.keywords if k.value is occ), None))
        inner = _mode_sizes(source, target.name, {param}, depth + 1) if param else {}
        if param not in inner:
            return False
        merge(occ.id, inner[param])
        return True

    def mode_use(occ: ast.Name, parents: dict[int, ast.AST]) -> bool:
        cmp = parents.get(id(occ))
        if isinstance(cmp, ast.keyword):
            cmp = parents.get(id(cmp))
        if isinstance(cmp, ast.Call):
            return passed_on(occ, cmp)
        if not (isinstance(cmp, ast.Compare) and len(cmp.ops) == 1 and isinstance(cmp.ops[0], (ast.Eq, ast.NotEq))):
            return False
        other = cmp.comparators[0] if cmp.left is occ else cmp.left
        if not (isinstance(other, ast.Constant) and isinstance(other.value, (str, int))
                and not isinstance(other.value, bool)):
            return False
        child, parent = cmp, parents.get(id(cmp))
        while isinstance(parent, (ast.BoolOp, ast.UnaryOp)):
            child, parent = parent, parents.get(id(parent))
        if not (isinstance(parent, (ast.If, ast.IfExp)) and child is parent.test):
            return False
        equal = isinstance(cmp.ops[0], ast.Eq)
        # ``!= v``: the body runs for any value but v, which no literal names (``_OTHER``).
        found = {}
        for value, guarded in ((other.value, parent.body if equal else parent.orelse),
                               *(() if equal else ((_OTHER, parent.body),))):
            found[value] = sum(1 for stmt in (guarded if isinstance(guarded, list) else [guarded]) for _ in ast.walk(stmt))
        merge(occ.id, found)
        return True

    kept = used_only(source, fn_name, names, mode_use)
    return {n: sizes[n] for n in kept if n in sizes}


__all__ = ["modes_of"]
