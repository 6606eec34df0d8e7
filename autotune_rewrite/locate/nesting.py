"""Which function or class a node sits in, for the batched visitors that need it."""

from __future__ import annotations

import libcst as cst


class NestingVisitor(cst.BatchableCSTVisitor):
    """Keeps ``self.stack``: the names of the enclosing functions and classes, outermost first
    (empty at module level). Subclasses that visit ``FunctionDef`` themselves call ``super()``."""

    def __init__(self) -> None:
        self.stack: list[str] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.stack.append(node.name.value)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.stack.pop()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.stack.append(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.stack.pop()
