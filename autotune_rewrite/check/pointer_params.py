"""Which kernel parameters are pointers, read from the kernel body (for ``--assume-dtype``).

Read with the standard ``ast``: nothing is rewritten here, and a warm ``check`` should not have
to import LibCST.
"""

from __future__ import annotations

import ast
import re

_POINTER_CALLS = {"load", "store", "make_block_ptr", "make_tensor_descriptor", "atomic_add", "atomic_max",
                  "atomic_min", "atomic_cas", "atomic_xchg", "atomic_and", "atomic_or", "atomic_xor"}


def pointer_params(kernel_source: str | None, kernel: str) -> tuple[str, ...]:
    """Parameters used as pointers in the kernel body, for ``--assume-dtype`` (a heuristic).

    A parameter is a pointer when it is the leftmost term of the address given to ``tl.load``,
    ``tl.store``, an atomic, ``make_block_ptr`` or ``make_tensor_descriptor``, directly or through
    local variables; or when its name ends in ``ptr``/``ptrs``. (Read with the standard ``ast``:
    nothing is rewritten here, and a warm ``check`` should not have to import LibCST.)
    """
    if not kernel_source:
        return ()
    try:
        module = ast.parse(kernel_source)
    except SyntaxError:
        return ()
    fn = next((s for s in module.body if isinstance(s, ast.FunctionDef) and s.name == kernel), None)
    if fn is None:
        return ()
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    addresses: list[ast.expr] = []
    assigned: dict[str, list[ast.expr]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in _POINTER_CALLS and (node.args or node.keywords):
                keyword = next((k.value for k in node.keywords if k.arg in ("pointer", "base")), None)
                addresses.append(keyword if keyword is not None else node.args[0])
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).append(node.value)
    found: set[str] = {p for p in params if re.search(r"ptrs?$", p, re.IGNORECASE)}
    pending, seen = list(addresses), set()
    while pending:
        name = _leftmost(pending.pop())
        if name is None or name in seen:
            continue
        seen.add(name)
        if name in params:
            found.add(name)
        pending += assigned.get(name, [])
    return tuple(p for p in params if p in found)


def _leftmost(expr: ast.expr) -> str | None:
    while True:
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
            expr = expr.left
        elif isinstance(expr, ast.Subscript):
            expr = expr.value
        elif isinstance(expr, ast.Call):  # tl.make_block_ptr(base=..), tl.advance(p, ..), tl.multiple_of(p, ..)
            base = next((k.value for k in expr.keywords if k.arg == "base"), None)
            if base is None and not expr.args:
                return None
            expr = base if base is not None else expr.args[0]
        elif isinstance(expr, ast.Name):
            return expr.id
        else:
            return None
