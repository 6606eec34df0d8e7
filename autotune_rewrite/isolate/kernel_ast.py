"""Plain ``ast`` helpers shared by the readers of an isolated kernel's source (``kernel_facts``,
``pipelined_loads``): how the bundle spells Triton, what a name is assigned from, what it derives
from. No Triton knowledge beyond the spelling of ``triton.language``."""

from __future__ import annotations

import ast

# Calls whose result is a tensor (or a block pointer / descriptor standing for one).
TENSOR_MAKERS = frozenset({"arange", "make_block_ptr", "advance", "zeros", "full", "broadcast_to", "reshape",
                           "expand_dims", "make_tensor_descriptor"})


def aliases(tree: ast.Module) -> dict[str, str]:
    """The bundle's top-level imports: local name -> dotted name."""
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for a in node.names:
                out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                out[a.asname or a.name] = f"{node.module}.{a.name}"
    out.setdefault("tl", "triton.language")  # the loader's spelling when a re-export is not followed
    return out


def dotted(expr: ast.expr, names: dict[str, str]) -> str | None:
    if isinstance(expr, ast.Name):
        return names.get(expr.id, expr.id)
    if isinstance(expr, ast.Attribute):
        base = dotted(expr.value, names)
        return None if base is None else f"{base}.{expr.attr}"
    return None


def is_triton(func: ast.expr, names: frozenset[str], spelled: dict[str, str]) -> bool:
    """``func`` is ``triton.language.<one of names>`` in the bundle's spelling."""
    full = dotted(func, spelled)
    if full is None or "." not in full:
        return False
    module, name = full.rsplit(".", 1)
    return name in names and (module == "triton.language" or module.endswith(".language"))


def params(fn: ast.FunctionDef) -> list[str]:
    return [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]


def constexpr_params(fn: ast.FunctionDef) -> set[str]:
    return {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs
            if a.annotation is not None and "constexpr" in ast.unparse(a.annotation)}


def targets(target: ast.expr) -> list[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


def assignments(node: ast.AST) -> dict[str, list[ast.expr]]:
    """Every name assigned anywhere under ``node`` -> the expressions it is assigned from
    (flow-insensitive: what a name may hold somewhere, which only widens what it derives from)."""
    out: dict[str, list[ast.expr]] = {}
    for n in ast.walk(node):
        pairs = []
        if isinstance(n, ast.Assign):
            pairs = [(t, n.value) for t in n.targets]
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign)) and n.value is not None:
            pairs = [(n.target, n.value)] + ([(n.target, n.target)] if isinstance(n, ast.AugAssign) else [])
        elif isinstance(n, ast.For):
            pairs = [(n.target, n.iter)]
        for target, value in pairs:
            for name in targets(target):
                out.setdefault(name, []).append(value)
    return out


def closure(assigned, seeds: dict[str, set[str]], own) -> dict[str, set[str]]:
    """Per name, the sources it derives from: ``seeds`` plus ``own(expr)`` of each expression
    assigned to it, carried through the names those expressions read, to a fixed point."""
    # Each expression's own sources and the names it reads, once: the fixed point only unions sets.
    edges = {name: [(own(v), {n.id for n in ast.walk(v) if isinstance(n, ast.Name)}) for v in values]
             for name, values in assigned.items()}
    out = {k: set(v) for k, v in seeds.items()}
    changed = True
    while changed:
        changed = False
        for name, values in edges.items():
            got = set(out.get(name, ()))
            for mine, names in values:
                got |= mine
                for n in names:
                    got |= out.get(n, set())
            if got != out.get(name, set()):
                out[name] = got
                changed = True
    return out


def reads(expr: ast.AST, sources: dict[str, set[str]]) -> set[str]:
    return set().union(*(sources.get(n.id, set()) for n in ast.walk(expr) if isinstance(n, ast.Name)))


def broadcasts(expr: ast.AST) -> bool:
    """``x[:, None]``: only a tensor is indexed with None."""
    return any(isinstance(n, ast.Subscript) and any(isinstance(c, ast.Constant) and c.value is None
                                                    for c in ast.walk(n.slice)) for n in ast.walk(expr))
