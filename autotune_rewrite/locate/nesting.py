"""Which function or class a node sits in, for the batched visitors that need it."""

from __future__ import annotations


import libcst as cst

_METHODS: dict[type, tuple[str, ...]] = {}


class NestingVisitor(cst.BatchableCSTVisitor):
    """Keeps ``self.stack``: the names of the enclosing functions and classes, outermost first
    (empty at module level). Subclasses that visit ``FunctionDef`` themselves call ``super()``."""

    def __init__(self) -> None:
        self.stack: list[str] = []

    def get_visitors(self):
        """LibCST's own answer (``visit_*``/``leave_*`` methods other than its empty stubs),
        worked out once per class: LibCST asks ``inspect.getmembers`` on every traversal, about
        10 ms each over the visitor's hundreds of stubs."""
        names = _METHODS.get(type(self))
        if names is None:
            names = _METHODS[type(self)] = tuple(super().get_visitors())
        return {name: getattr(self, name) for name in names}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.stack.append(node.name.value)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.stack.pop()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.stack.append(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.stack.pop()
