"""What of the Triton API a kernel uses that the installed Triton does not have.

A kernel written for another Triton (``tl._experimental_descriptor_load``, removed in 3.4; a
fork's ``tlx`` module) cannot compile here whatever its launch spec, so asking for a spec would
waste the user's time: the kernel is reported as needing that Triton instead. Read off the
bundle's source (the kernel and the helpers it reaches), once per bundle (bundles are cached).
"""

from __future__ import annotations

import ast

from autotune_rewrite.isolate.kernel_ast import constexpr_params, params
from autotune_rewrite.triton_names import installed_has as _has
from autotune_rewrite.triton_names import is_triton_module


def absent_attributes(source: str, kernel: str, import_targets: dict[str, str],
                      functions: tuple[tuple[str, str, int], ...]) -> list[tuple[str, str, int | None]]:
    """``(triton.language.NAME, user path, line)`` for each ``tl.NAME`` that the kernel, or a
    helper it always calls, reads outside every ``if`` (``tl`` bound to a Triton module) and the
    installed module lacks; the place is the ``def`` of the function that reads it."""
    modules = {bound: target for bound, target in import_targets.items() if is_triton_module(target)}
    if not modules:
        return []
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    where = {name: (path, line) for name, path, line in functions}
    defs = {fn.name: fn for fn in tree.body if isinstance(fn, ast.FunctionDef)}
    out: dict[str, tuple[str, int | None]] = {}
    # From the kernel through the helpers it always calls.
    pending, seen = [kernel], set()
    while pending:
        name = pending.pop()
        if name is None or name in seen or name not in defs:
            continue
        seen.add(name)
        for node in _unconditional(defs[name], params_run_time=name == kernel):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                pending.append(node.func.id)
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules
                    and not _has(modules[node.value.id], node.attr)):
                path, line = where.get(name, ("", None))
                out.setdefault(f"{modules[node.value.id]}.{node.attr}", (path, line))
    return [(name, path, line) for name, (path, line) in out.items()]


def _unconditional(fn: ast.FunctionDef, params_run_time: bool):
    """The nodes of ``fn`` that every compile of it reaches: Triton compiles only the branch a
    constexpr takes, so an old API under ``if ACTIVATION == "gelu":`` is harmless when the spec
    takes the other one (the compile says so if not); but both branches of an ``if`` on a run-time
    value (``if m_size > 0:`` after a load) are compiled, so those count."""
    runtime = _runtime_names(fn, params_run_time)
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.If, ast.IfExp)) and not _names(node.test) & runtime:
            stack.append(node.test)
        else:
            stack.extend(ast.iter_child_nodes(node))


_RUNTIME_CALLS = {"load", "program_id", "num_programs"}


def _runtime_names(fn: ast.FunctionDef, params_run_time: bool) -> set[str]:
    """Names that hold run-time values: the kernel's parameters not annotated ``constexpr`` (a
    helper's may be constexprs its caller passes, annotated or not), and locals computed from
    them or from a load or the program id (a few rounds, for chains)."""
    runtime = set(params(fn)) - constexpr_params(fn) if params_run_time else set()
    assigns = [n for n in ast.walk(fn) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and n.value is not None
               and not (isinstance(n, ast.AnnAssign) and "constexpr" in ast.unparse(n.annotation))]
    for _ in range(4):
        for node in assigns:
            reads = _names(node.value) & runtime or any(
                isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr in _RUNTIME_CALLS
                for c in ast.walk(node.value))
            if reads:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                runtime |= {n for t in targets for n in _names(t)}
    return runtime


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


__all__ = ["absent_attributes"]
