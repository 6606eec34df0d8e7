"""What a statement that does not evaluate may have changed, for the forgiving runs of
``classes`` (``opaque_arguments`` mode: a context's constructor or factory, one statement at a
time).

``self.workspace = torch.empty(...)`` does not evaluate; it changes ``workspace`` and nothing
else, so ``BLOCK_M`` set on the next line stays known. The rule is syntactic and errs on the
side of unknown: every local the statement binds, every mutable local it changes in place or
hands to a call, every attribute of ``self`` it assigns or changes becomes ``Opaque``; a
statement that hands ``self`` itself to a call or calls one of its methods makes every
attribute unknown (``Instance.unknown_rest``); one that may leave the function or a loop
(``leaves``) stops the run.
"""

from __future__ import annotations

import libcst as cst

from autotune_rewrite.evaluate.own_body import OwnBodyVisitor
from autotune_rewrite.evaluate.values import Opaque


class _Touched(cst.CSTVisitor):
    """What one statement may change: local names it binds or hands to a call, attributes of
    ``self`` it assigns or changes in place, and whether ``self`` itself leaves its hands."""

    def __init__(self, me: str | None):
        self.me = me
        self.names: set[str] = set()  # bound by the statement
        self.handed: set[str] = set()  # changed in place or handed to a call
        self.attrs: set[str] = set()
        self.whole = False

    def _target(self, node) -> None:
        if isinstance(node, cst.Name):
            self.names.add(node.value)
        elif isinstance(node, (cst.Tuple, cst.List)):
            for el in node.elements:
                self._target(el.value)
        elif isinstance(node, (cst.Attribute, cst.Subscript)):
            self._changed(node)

    def _changed(self, node) -> None:
        """``x.a = ...``, ``x[k] = ...``, ``x.a.append(...)``: the object at the chain's root."""
        chain = node
        while isinstance(chain, (cst.Attribute, cst.Subscript)):
            if isinstance(chain.value, cst.Name) and chain.value.value == self.me and isinstance(chain, cst.Attribute):
                self.attrs.add(chain.attr.value)
                return
            chain = chain.value
        if isinstance(chain, cst.Name):
            self.handed.add(chain.value)

    def visit_Assign(self, node) -> None:
        for t in node.targets:
            self._target(t.target)

    def visit_AnnAssign(self, node) -> None:
        self._target(node.target)

    def visit_AugAssign(self, node) -> None:
        self._target(node.target)

    def visit_For(self, node) -> None:
        self._target(node.target)

    def visit_AsName(self, node) -> None:
        self._target(node.name)

    def visit_NamedExpr(self, node) -> None:
        self._target(node.target)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute):
            if isinstance(func.value, cst.Name) and func.value.value == self.me:
                self.whole = True  # a method of its own may set anything
            else:
                self._changed(func.value)  # ``self.bufs.append(x)``, ``xs.extend(...)``
        for a in node.args:
            if isinstance(a.value, cst.Name):
                if a.value.value == self.me:
                    self.whole = True
                else:
                    self.handed.add(a.value.value)  # a callee may change a list or instance passed


class _Exits(OwnBodyVisitor):
    def __init__(self):
        self.found = False

    def visit_Return(self, node) -> None:
        self.found = True

    visit_Raise = visit_Break = visit_Continue = visit_Return


def leaves(stmt: cst.CSTNode) -> bool:
    """The statement holds a ``return``/``raise``/``break``/``continue`` of its own function."""
    seen = _Exits()
    stmt.visit(seen)
    return seen.found


def forget(stmt: cst.CSTNode, me: str | None, inst, env: dict, reason: str) -> None:
    """``stmt`` did not evaluate: what it may have changed is unknown from now on (``inst``:
    the ``classes.Instance`` bound to ``me``, the method's first parameter, or None)."""
    seen = _Touched(me)
    stmt.visit(seen)
    for name in seen.names - {me}:
        env[name] = Opaque(reason)
    for name in seen.handed - {me}:
        if name in env and not isinstance(env[name], (int, float, str, bool, type(None), Opaque)):
            env[name] = Opaque(reason)  # an immutable value cannot have been changed
    if inst is None:
        return
    for attr in seen.attrs:
        inst.attrs[attr] = Opaque(reason)
    if seen.whole:
        for attr in list(inst.attrs):
            inst.attrs[attr] = Opaque(reason)
        inst.unknown_rest = reason


__all__ = ["forget", "leaves"]
