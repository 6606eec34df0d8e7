"""Which of a module's ``def``s of one name a site means (twins under ``if``/``else``).

A module may define a kernel twice, one ``def`` per branch of a module-level ``if`` (or ``try``);
LibCST's scopes list both, without positions. The site's line tells them apart, read from
Python's ``ast``, which sees the same defs in the same source order. Separate from the loader
because it is a question about one parsed module's source lines, asked once per bundle before
any dependency is followed.
"""

from __future__ import annotations

import ast

import libcst as cst

from autotune_rewrite.isolate.parsed_modules import ScopedModule


def def_at(mod: ScopedModule, defs: list[cst.FunctionDef], kernel: str, line: int | None) -> cst.FunctionDef:
    """The ``def`` a site means. Twins (two defs of one name under ``if``/``else``) are told apart
    by the site's def line; without a line, or when no def spans it, the last def wins, as it
    would when the module runs."""
    if line is None or len(defs) < 2:
        return defs[-1]
    # LibCST's scopes carry no positions; Python's ast lists the same module-level defs in the
    # same source order, with their decorator and ``def`` lines.
    found = [n for n in _module_level_defs(ast.parse(mod.text)) if n.name == kernel]
    if len(found) != len(defs):
        return defs[-1]
    for node, fn in zip(found, defs):
        first = min([d.lineno for d in node.decorator_list] + [node.lineno])
        if first <= line <= node.lineno:
            return fn
    return defs[-1]


def _module_level_defs(tree: ast.Module) -> list[ast.FunctionDef]:
    """Function defs at module level (also under ``if``/``try``/``with``), in source order."""
    out: list[ast.FunctionDef] = []
    todo = list(tree.body)
    while todo:
        node = todo.pop(0)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append(node)
        elif not isinstance(node, ast.ClassDef):
            todo[:0] = [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.stmt)]
    return sorted(out, key=lambda n: n.lineno)


__all__ = ["def_at"]
