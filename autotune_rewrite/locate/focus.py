"""The part of a file the locator hands to LibCST: the top-level statements that can matter.

Why: LibCST's parse, and above all its scope and position passes, cost many times Python's own
parser (C; about a sixth of LibCST's parse), and most of a kernel library's file is kernel
bodies (the locator reads only their signatures) and plain functions that no site or launch
reaches. So Python's parser sorts the top-level statements first:

- a kernel (a ``def`` under a kernel decorator, ``KERNEL_DECORATOR_TAILS``) is kept up to its
  signature, with ``...`` as its body;
- a ``def`` or ``class`` is left out when nothing in it can be a site, a launch or a name the
  site finder records (no ``k[grid](...)`` call, no name for ``autotune``, no decorator call
  or ``f(...)(...)`` whose callee may come from the tree's own modules) and no kept statement
  names it (followed to a fixed point: a helper of a kept helper is kept). Its name goes into
  ``dropped``, so a lookup from another module can ask for the whole file instead;
- everything else is kept verbatim.

A kept statement is whole lines of the file (with the comments and blank lines above it), so
a node keeps its column and its line moves by one constant per statement: ``statements`` are
Python's view of them, with their real lines, for ``ParsedModule`` to map positions back.
"""

from __future__ import annotations

import ast
import io
from dataclasses import dataclass

from autotune_rewrite.triton_names import KERNEL_DECORATOR_TAILS

_DEF = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass(frozen=True)
class Want:
    """What the focus keeps beyond kernels and module-level statements."""

    words: tuple[str, ...] = ()  # names other modules bind to ``triton.autotune``
    tree_names: frozenset[str] = frozenset()  # the tree's module names (``scan._tree_names``)
    launches: bool = True  # False: defs that only launch are left out (a site's retry needs none)


@dataclass(frozen=True)
class Focus:
    text: str  # what LibCST parses
    statements: tuple[ast.stmt, ...]  # the file's top-level statements that ``text`` holds, in order
    dropped: frozenset[str]  # names of the top-level defs and classes left out


def lines_of(source: str) -> list[str]:
    """The file's lines as Python's tokenizer counts them (``\\n``, ``\\r\\n``, ``\\r``; not the
    form feeds and other separators ``str.splitlines`` also breaks at), ends kept."""
    return io.StringIO(source, newline="").readlines()


def _tail(expr: ast.expr) -> str | None:
    if isinstance(expr, ast.Call):
        expr = expr.func
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return None


def _leftmost(expr: ast.expr) -> str | None:
    while isinstance(expr, (ast.Attribute, ast.Call, ast.Subscript)):
        expr = expr.func if isinstance(expr, ast.Call) else expr.value
    return expr.id if isinstance(expr, ast.Name) else None


def _is_kernel(stmt: ast.stmt) -> bool:
    return isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
        _tail(d) in KERNEL_DECORATOR_TAILS for d in stmt.decorator_list)


def _names(node: ast.AST) -> set[str]:
    """Every name ``node`` reads or binds (``global x`` included)."""
    out: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            out.update(n.names)
    return out


def _imports(stmt: ast.stmt):
    """(local name, imported module's first part, from the tree for sure) of each import in a
    module-level statement (under ``if``/``try`` too)."""
    for n in ast.walk(stmt):
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            module = n.module if isinstance(n, ast.ImportFrom) else None
            for a in n.names:
                top = (module if module is not None else a.name).split(".", 1)[0]
                relative = isinstance(n, ast.ImportFrom) and n.level > 0
                yield (a.asname or a.name).split(".", 1)[0], top, relative or a.name == "*"


def _outside_tree(stmts: list[ast.stmt], tree_names: frozenset[str]) -> set[str]:
    """Names bound at module level only by imports of modules outside the tree (``torch``,
    ``functools``): a call of one of them can never be a tree module's ``autotune``."""
    outside: set[str] = set()
    other: set[str] = set()
    for stmt in stmts:
        if isinstance(stmt, _DEF):
            other.add(stmt.name)
            continue
        for local, top, ours in _imports(stmt):
            (other if ours or top in tree_names else outside).add(local)
        other.update(n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    return outside - other


def _read(stmt: ast.stmt, words: set[str], outside: set[str], launches: bool) -> tuple[set[str], bool]:
    """The names a def or class reads or binds, and whether it may hold what the per-file
    analysis reports: a launch, a name for ``autotune``, a decorator call or ``f(...)(...)``
    whose callee may be a tree module's (the site finder looks at those), a ``global``
    statement (it binds a module-level name from inside)."""
    names: set[str] = set()
    wanted = False
    for n in ast.walk(stmt):
        if isinstance(n, ast.Name):
            names.add(n.id)
            continue
        if isinstance(n, ast.Attribute):
            wanted = wanted or n.attr in words
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            names.update(n.names)
            wanted = True
        elif isinstance(n, ast.Call):
            func = n.func
            wanted = wanted or (launches and isinstance(func, ast.Subscript)) or (
                isinstance(func, ast.Call) and _leftmost(func) not in outside)
        if isinstance(n, _DEF) and not wanted:
            wanted = any(isinstance(d, ast.Call) and _leftmost(d) not in outside for d in n.decorator_list)
    return names, wanted or bool(names & words)


def _alias_words(stmts: list[ast.stmt], words: set[str]) -> set[str]:
    """``words`` and the module-level names bound from them (``tuner = triton.autotune(...)``,
    ``_AT = autotune``), to a fixed point."""
    words = set(words)
    simple = []
    for stmt in stmts:
        if isinstance(stmt, _DEF):
            continue
        said = _names(stmt) | {n.attr for n in ast.walk(stmt) if isinstance(n, ast.Attribute)}
        said.update(a.name.rsplit(".", 1)[-1] for n in ast.walk(stmt)
                    if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names)
        bound = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        bound.update(local for local, _, _ in _imports(stmt))
        simple.append((said, bound))
    grew = True
    while grew:
        grew = False
        for said, bound in simple:
            if said & words and not bound <= words:
                words |= bound
                grew = True
    return words


def _kernel_stub(stmt: ast.stmt, lines: list[str], first: int) -> str | None:
    """The kernel's lines up to its signature, then ``...`` at the body's indent; None when the
    body does not start on a line of its own (``def k(x): return x``)."""
    body = stmt.body[0]
    line = lines[body.lineno - 1]
    indent = line.encode("utf-8")[: body.col_offset]
    if body.lineno <= stmt.lineno or indent.strip():
        return None
    return "".join(lines[first - 1: body.lineno - 1]) + indent.decode("utf-8") + "...\n"


def focus(source: str, want: Want = Want()) -> Focus | None:
    """The statements of ``source`` the locator needs (see the module's docstring); None when
    Python's parser does not take the file (the caller analyses it whole, as before)."""
    try:
        stmts = ast.parse(source).body
    except (SyntaxError, ValueError, RecursionError):
        return None
    lines = lines_of(source)
    # Statements that share a line (``a = 1; b = 2``) go together: one chunk of whole lines.
    chunks: list[list[ast.stmt]] = []
    for stmt in stmts:
        if chunks and stmt.lineno <= chunks[-1][-1].end_lineno:
            chunks[-1].append(stmt)
        else:
            chunks.append([stmt])
    word_set = _alias_words(stmts, {"autotune", *want.words})
    outside = _outside_tree(stmts, want.tree_names)
    texts: list[str] = []
    refs: set[str] = set()
    optional: dict[int, set[str]] = {}
    previous_end = 0
    for i, chunk in enumerate(chunks):
        first, last = previous_end + 1, chunk[-1].end_lineno
        previous_end = last
        texts.append("".join(lines[first - 1: last]))
        only = chunk[0] if len(chunk) == 1 else None
        if only is not None and _is_kernel(only):
            stub = _kernel_stub(only, lines, first)  # a one-line kernel is kept as it is
            texts[i] = stub or texts[i]
            refs |= set().union(*(_names(d) for d in only.decorator_list), _names(only.args),
                                _names(only.returns) if only.returns is not None else set())
            continue
        if only is not None and isinstance(only, _DEF):
            names, wanted = _read(only, word_set, outside, want.launches)
            if not wanted:
                optional[i] = names
                continue
            refs |= names
            continue
        refs |= set().union(*(_names(s) for s in chunk))
    # A left-out def comes back when a kept statement names it; its own names may bring more.
    grew = True
    while grew:
        grew = False
        for i in [i for i in optional if chunks[i][0].name in refs]:
            refs |= optional.pop(i)
            grew = True
    kept = [i for i in range(len(chunks)) if i not in optional]
    return Focus(text="".join(texts[i] for i in kept),
                 statements=tuple(s for i in kept for s in chunks[i]),
                 dropped=frozenset(chunks[i][0].name for i in optional))


__all__ = ["Focus", "Want", "focus", "lines_of"]
