"""The binding of a name in force at one place of a block: what Python has bound to it when the
statement at that line runs.

A module (or a function body) may bind a name several times, unpack it from a tuple, or grow
it after binding it (``CONFIGS += [...]``, ``CONFIGS.append(...)``, a ``for`` loop appending);
a decorator sees what was bound last *above* it. ``in_force(pm, body, name, line)`` walks the
block's statements that end before ``line`` (``None``: the whole block, what an importer
sees), descending into the ``if``/``for``/``with``/``try`` block that holds ``line`` (a
decorator under ``if __name__ == "__main__":`` runs only in that branch, so the branch's
bindings are in force there), and returns the last binding and the statements after it that
change the name. The evaluator evaluates the binding, then runs those statements on it.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from autotune_rewrite.evaluate.module_ifs import branch_bindings

_MUTATORS = ("append", "extend", "insert")
KIND_VALUE, KIND_DEF, KIND_IF, KIND_RUN, KIND_PARAM = "value", "def", "if", "run", "param"


@dataclass(frozen=True)
class Binding:
    """``kind``: ``value`` (``node`` is the assigned expression; ``path`` indexes into it for a
    tuple unpacking), ``def`` (a def/class), ``if`` (a module-level ``if`` binding it in some
    branch: ``node`` is the ``If``), ``run`` (a compound statement that binds it: run it)."""

    kind: str
    node: cst.CSTNode
    line: int
    path: tuple[int, ...] = ()


@dataclass(frozen=True)
class InForce:
    binding: Binding | None
    changes: tuple[tuple[cst.CSTNode, int], ...] = ()  # statements (with their line) that change it after


def _target_path(target: cst.BaseExpression, name: str) -> tuple[int, ...] | None:
    """Where ``name`` sits in an assignment target: () for the name itself, (i, j) inside
    ``a, (b, c) = ...``; None when the target does not bind it."""
    if isinstance(target, cst.Name):
        return () if target.value == name else None
    if isinstance(target, (cst.Tuple, cst.List)):
        for i, el in enumerate(target.elements):
            if isinstance(el, cst.StarredElement):
                continue
            inner = _target_path(el.value, name)
            if inner is not None:
                return (i, *inner)
    return None


def _small_binding(small: cst.BaseSmallStatement, name: str, line: int) -> Binding | None:
    if isinstance(small, cst.Assign):
        for t in reversed(small.targets):  # ``a = b = v``: every target gets ``v``
            path = _target_path(t.target, name)
            if path is not None:
                return Binding(KIND_VALUE, small.value, line, path)
    elif isinstance(small, cst.AnnAssign) and small.value is not None:
        path = _target_path(small.target, name)
        if path is not None:
            return Binding(KIND_VALUE, small.value, line, path)
    return None


def _changes(small: cst.BaseSmallStatement, name: str) -> bool:
    """``name += ...`` or ``name.append/extend/insert(...)``."""
    if isinstance(small, cst.AugAssign):
        return isinstance(small.target, cst.Name) and small.target.value == name
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        func = small.value.func
        return (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                and func.value.value == name and func.attr.value in _MUTATORS)
    return False


class _Mentions(cst.CSTVisitor):
    def __init__(self, name: str):
        self.name, self.binds, self.changes = name, False, False

    def visit_FunctionDef(self, node) -> bool:
        return False  # a def's body runs later (and has its own scope)

    def visit_ClassDef(self, node) -> bool:
        return False

    def visit_SimpleStatementLine(self, node) -> bool:
        for small in node.body:
            self.binds = self.binds or _small_binding(small, self.name, 0) is not None
            self.changes = self.changes or _changes(small, self.name)
        return False

    def visit_For(self, node) -> None:
        self.binds = self.binds or _target_path(node.target, self.name) is not None


def _mentions(stmt: cst.CSTNode, name: str) -> _Mentions:
    seen = _Mentions(name)
    stmt.visit(seen)
    return seen


def _blocks(stmt: cst.CSTNode) -> list:
    """The blocks of a compound statement, in source order."""
    out = [stmt.body]
    if isinstance(stmt, cst.If):
        orelse = stmt.orelse
        if isinstance(orelse, cst.If):
            out += _blocks(orelse)
        elif orelse is not None:
            out.append(orelse.body)
    elif isinstance(stmt, cst.Try):
        out += [h.body for h in stmt.handlers]
        out += [b.body for b in (stmt.orelse, stmt.finalbody) if b is not None]
    elif isinstance(stmt, (cst.For, cst.While)) and stmt.orelse is not None:
        out.append(stmt.orelse.body)
    return out


def _statements(block) -> list:
    return list(block.body) if isinstance(block, cst.IndentedBlock) else []


def in_force(pm, body, name: str, line: int | None) -> InForce:
    """The binding of ``name`` that the statement at ``line`` of the block ``body`` sees
    (kept per module: a module's names are looked up once per site and target)."""
    cache = pm.__dict__.setdefault("_in_force", {})
    key = (id(body[0]) if body else None, len(body), name, line)
    if key not in cache:
        cache[key] = _in_force(pm, body, name, line)
    return cache[key]


def _in_force(pm, body, name: str, line: int | None) -> InForce:
    found: Binding | None = None
    changes: list = []
    for stmt in body:
        span = pm.span(stmt)
        if line is not None and span.start_line >= line:
            break
        if line is not None and span.end_line >= line:  # the statement holding ``line``
            if isinstance(stmt, (cst.If, cst.For, cst.While, cst.With, cst.Try)):
                for block in _blocks(stmt):
                    stmts = _statements(block)
                    if stmts and pm.span(stmts[0]).start_line <= line <= pm.span(stmts[-1]).end_line:
                        inner = in_force(pm, stmts, name, line)
                        if inner.binding is not None:
                            return inner
                        return InForce(found, (*changes, *inner.changes))
            break
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            if stmt.name.value == name:
                found, changes = Binding(KIND_DEF, stmt, span.start_line), []
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                bound = _small_binding(small, name, span.start_line)
                if bound is not None:
                    found, changes = bound, []
                elif _changes(small, name):
                    changes.append((cst.SimpleStatementLine(body=[small]), span.start_line))
        else:
            seen = _mentions(stmt, name)
            if isinstance(stmt, cst.If) and branch_bindings([stmt], name) is not None:
                found, changes = Binding(KIND_IF, stmt, span.start_line), []
            elif seen.binds:
                found, changes = Binding(KIND_RUN, stmt, span.start_line), []
            elif seen.changes:
                changes.append((stmt, span.start_line))
    return InForce(found, tuple(changes))


__all__ = ["Binding", "InForce", "KIND_DEF", "KIND_IF", "KIND_RUN", "KIND_VALUE", "in_force"]
