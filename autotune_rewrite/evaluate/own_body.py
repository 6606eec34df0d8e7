"""A visitor of one function's own statements: nested defs, classes and lambdas are other scopes
(their assignments and returns are not the function's)."""

from __future__ import annotations

import libcst as cst


class OwnBodyVisitor(cst.CSTVisitor):
    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False


__all__ = ["OwnBodyVisitor"]
