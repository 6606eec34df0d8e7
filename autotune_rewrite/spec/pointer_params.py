"""Which kernel parameters are pointers or descriptors, read from the kernel body, and the ``ast``
helpers the readers of a kernel's use share (``pointer_dtypes``, ``param_uses``).

Read with the standard ``ast``: nothing is rewritten here, and a warm ``check`` should not have
to import LibCST.
"""

from __future__ import annotations

import ast
import functools
import re

POINTER_CALLS = {"load", "store", "make_block_ptr", "make_tensor_descriptor", "atomic_add", "atomic_max",
                  "atomic_min", "atomic_cas", "atomic_xchg", "atomic_and", "atomic_or", "atomic_xor"}


def pointer_params(kernel_source: str | None, kernel: str) -> tuple[str, ...]:
    """Parameters used as pointers in the kernel body, for ``--assume-dtype`` (a heuristic).

    A parameter is a pointer when it is the leftmost term of the address given to ``tl.load``,
    ``tl.store``, an atomic, ``make_block_ptr`` or ``make_tensor_descriptor``, directly or through
    local variables; or when its name ends in ``ptr``/``ptrs``. (Read with the standard ``ast``:
    nothing is rewritten here, and a warm ``check`` should not have to import LibCST.)
    """
    fn = kernel_def(kernel_source, kernel)
    if fn is None:
        return ()
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    addresses: list[ast.expr] = []
    assigned: dict[str, list[ast.expr]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in POINTER_CALLS and (node.args or node.keywords):
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
        for name in leftmosts(pending.pop()):
            if name in seen:
                continue
            seen.add(name)
            if name in params:
                found.add(name)
            pending += assigned.get(name, [])
    return tuple(p for p in params if p in found)


def module_functions(source: str | None) -> dict[str, ast.FunctionDef]:
    module = _parse(source or "")
    return {s.name: s for s in module.body if isinstance(s, ast.FunctionDef)} if module is not None else {}


def pointer_root(name: str | None, params: set[str], assigned: dict[str, list[ast.expr]]) -> str | None:
    """The pointer parameter an address's leftmost name comes from, through the locals assigned
    to it (``a_ptrs = a_ptr + offs``, ``a_ptrs += BLOCK_K * stride``); None when it is not one, or
    when a local is reused for two pointers (``ptr = a + i`` ... ``ptr = b + i``)."""

    def roots(name: str | None, depth: int) -> set[str]:
        if name is None or depth > 16:
            return set()
        if name in params:
            return {name}
        return set().union(*(roots(leftmost(v), depth + 1) for v in assigned.get(name, ())))

    found = roots(name, 0)
    return next(iter(found)) if len(found) == 1 else None


def local_assignments(fn: ast.FunctionDef) -> dict[str, list[ast.expr]]:
    """Every value assigned to each local name (``=`` and augmented assignments)."""
    assigned: dict[str, list[ast.expr]] = {}
    for node in ast.walk(fn):
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).append(node.value)
    return assigned


def call_name_of(expr: ast.expr | None) -> str | None:
    return call_name(expr) if isinstance(expr, ast.Call) else None


def descriptor_params(kernel_source: str | None, kernel: str) -> tuple[str, ...]:
    """Parameters the kernel uses as TMA tensor descriptors (``desc.load(...)``/``.store``),
    itself or in the ``@triton.jit`` helpers it passes them to: their type carries a block shape
    that only the host code knows."""
    fn = kernel_def(kernel_source, kernel)
    if fn is None:
        return ()
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    found = _descriptor_uses(fn, module_functions(kernel_source), 0)
    return tuple(p for p in params if p in found)


def _descriptor_uses(fn: ast.FunctionDef, helpers: dict[str, ast.FunctionDef], depth: int) -> set[str]:
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    found = set()
    for node in ast.walk(fn):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
            if node.func.attr in ("load", "store", "atomic_add", "gather", "scatter") and node.func.value.id in params:
                found.add(node.func.value.id)
            if node.func.attr in ("_experimental_descriptor_load", "_experimental_descriptor_store",
                                  "experimental_descriptor_load") and node.args and isinstance(node.args[0], ast.Name):
                found.add(node.args[0].id)
        elif isinstance(node.func, ast.Name) and node.func.id in helpers and depth < 3 and helpers[node.func.id] is not fn:
            helper = helpers[node.func.id]
            inner = _descriptor_uses(helper, helpers, depth + 1)
            names = [a.arg for a in helper.args.posonlyargs + helper.args.args]
            for i, arg in enumerate(node.args):
                if i < len(names) and names[i] in inner and isinstance(arg, ast.Name) and arg.id in params:
                    found.add(arg.id)
    return found


def call_name(node: ast.Call) -> str | None:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)


def loaded_from(expr: ast.expr) -> str | None:
    """``tl.load(P + ...)`` (also ``.to(...)`` or ``[None, :]`` of it) -> ``P``'s leftmost name; an
    atomic's result too (``tl.atomic_add(P + i, n)`` returns what ``P`` held)."""
    while (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "to"
           or isinstance(expr, ast.Subscript)):
        expr = expr.func.value if isinstance(expr, ast.Call) else expr.value
    name = call_name(expr) if isinstance(expr, ast.Call) else None
    if name is not None and (name == "load" or name.startswith("atomic_")) and expr.args:
        return leftmost(expr.args[0])
    return None


def names_in(expr: ast.expr) -> set[str]:
    return {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}


def kernel_def(kernel_source: str | None, kernel: str) -> ast.FunctionDef | None:
    if not kernel_source:
        return None
    module = _parse(kernel_source)
    return next((s for s in module.body if isinstance(s, ast.FunctionDef) and s.name == kernel), None) \
        if module is not None else None


@functools.lru_cache(maxsize=8)
def _parse(source: str) -> ast.Module | None:
    """One parse per module source: every use reader asks for its kernel and helpers (read-only)."""
    try:
        return ast.parse(source)
    except SyntaxError:
        return None


def leftmosts(expr: ast.expr) -> set[str]:
    """The names an address may start from: ``leftmost``, and both branches of a conditional
    (``iptr = a if A_TO_B else b``: either parameter is a pointer)."""
    if isinstance(expr, ast.IfExp):
        return leftmosts(expr.body) | leftmosts(expr.orelse)
    name = leftmost(expr)
    return {name} if name is not None else set()


def leftmost(expr: ast.expr) -> str | None:
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


__all__ = ["POINTER_CALLS", "call_name", "call_name_of", "descriptor_params", "kernel_def", "leftmost", "leftmosts",
           "loaded_from", "local_assignments", "module_functions", "names_in", "pointer_params", "pointer_root"]
