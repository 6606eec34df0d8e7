"""What of the Triton API a kernel uses that the installed Triton does not have.

A kernel written for another Triton (``tl._experimental_descriptor_load``, removed in 3.4; a
fork's ``tlx`` module) cannot compile here whatever its launch spec, so asking for a spec would
waste the user's time: the kernel is reported as needing that Triton instead. Read off the
bundle's source (the kernel and the helpers it reaches), once per bundle (bundles are cached).
"""

from __future__ import annotations

import ast
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
        for node in _unconditional(defs[name]):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                pending.append(node.func.id)
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules
                    and not _has(modules[node.value.id], node.attr)):
                path, line = where.get(name, ("", None))
                out.setdefault(f"{modules[node.value.id]}.{node.attr}", (path, line))
    return [(name, path, line) for name, (path, line) in out.items()]


def _unconditional(fn: ast.FunctionDef):
    """The nodes of ``fn`` outside every ``if``'s branches: Triton compiles only the branch a
    constexpr takes, so an old API under ``if ACTIVATION == "gelu":`` is harmless when the
    spec takes the other one (the compile says so if not)."""
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.If, ast.IfExp)):
            stack.append(node.test)
        else:
            stack.extend(ast.iter_child_nodes(node))


__all__ = ["absent_attributes"]
