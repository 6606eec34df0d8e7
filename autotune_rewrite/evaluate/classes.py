"""Classes of the tree, statically: a module-level loader instance and its methods.

``_loader = ConfigLoader(); @triton.autotune(configs=_loader.get("gemm"))`` is answered by
running ``ConfigLoader.__init__`` and ``get`` as helpers (``statements``) on an ``Instance``
whose attributes the methods set (``self.table = {...}``). Only plain classes: no base
classes other than ``object``, no class decorators (a ``@dataclass`` builds an ``__init__``
the source does not show), no metaclass.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from autotune_rewrite.evaluate.values import Function, Unresolved


@dataclass
class ClassValue:
    pm: Any
    node: cst.ClassDef

    @property
    def name(self) -> str:
        return self.node.name.value


@dataclass
class Instance:
    cls: ClassValue
    attrs: dict = field(default_factory=dict)


@dataclass
class BoundFunction:
    """A method of the tree bound to its instance (or class, for a ``classmethod``)."""

    fn: Function
    obj: Any


def set_attribute(obj, attr: str, value) -> None:
    if not isinstance(obj, Instance):
        raise Unresolved(f"assignment to attribute `{attr}` of something that is not an instance of the tree's classes")
    obj.attrs[attr] = value


def _decorator_names(fn: cst.FunctionDef) -> set[str]:
    out = set()
    for d in fn.decorators:
        expr = d.decorator
        if isinstance(expr, cst.Name):
            out.add(expr.value)
        elif isinstance(expr, cst.Attribute):
            out.add(expr.attr.value)
        else:
            out.add("?")
    return out


class ClassCalls:
    """Mixin for ``Evaluator``: class values, instances and their attributes."""

    def class_value(self, pm, node: cst.ClassDef) -> ClassValue:
        bases = [pm.code(a.value).strip() for a in node.bases]
        if node.decorators or node.keywords or any(b != "object" for b in bases):
            raise Unresolved(f"`{node.name.value}` is a class with base classes or decorators, not evaluated")
        return ClassValue(pm, node)

    def instantiate(self, cls: ClassValue, args: list, kwargs: dict) -> Instance:
        inst = Instance(cls)
        init = self._member(cls, "__init__")
        if init is not None:
            self.call(Function(cls.pm, init), [inst, *args], kwargs)
        elif args or kwargs:
            raise Unresolved(f"`{cls.name}()` takes no arguments")
        self.note("instance of a class of the tree")
        return inst

    def get_attribute(self, obj, attr: str, fallback):
        """``obj.attr`` for instances and classes of the tree; ``fallback(obj, attr)`` else."""
        if isinstance(obj, Instance):
            if attr in obj.attrs:
                return obj.attrs[attr]
            return self._class_attribute(obj.cls, attr, obj)
        if isinstance(obj, ClassValue):
            return self._class_attribute(obj, attr, None)
        return fallback(obj, attr)

    def _class_attribute(self, cls: ClassValue, attr: str, inst: Instance | None):
        member = self._member(cls, attr)
        if member is None:
            raise Unresolved(f"`{cls.name}.{attr}` is not set")
        if isinstance(member, cst.FunctionDef):
            fn = Function(cls.pm, member)
            kinds = _decorator_names(member)
            if kinds - {"staticmethod", "classmethod", "property"}:
                raise Unresolved(f"method `{cls.name}.{attr}` has a decorator the evaluator does not run")
            if "staticmethod" in kinds:
                return fn
            if "classmethod" in kinds:
                return BoundFunction(fn, cls)
            if inst is None:
                return fn
            if "property" in kinds:
                return self.call(fn, [inst], {})
            return BoundFunction(fn, inst)
        if isinstance(member, cst.ClassDef):
            return self.class_value(cls.pm, member)
        return self.eval(cls.pm, member, {})

    def _member(self, cls: ClassValue, attr: str):
        """The last ``def`` or ``attr = value`` of the class body named ``attr``."""
        found = None
        for stmt in cls.node.body.body if isinstance(cls.node.body, cst.IndentedBlock) else ():
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) and stmt.name.value == attr:
                found = stmt
            elif isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign) and any(
                            isinstance(t.target, cst.Name) and t.target.value == attr for t in small.targets):
                        found = small.value
                    elif isinstance(small, cst.AnnAssign) and small.value is not None \
                            and isinstance(small.target, cst.Name) and small.target.value == attr:
                        found = small.value
        return found


__all__ = ["BoundFunction", "ClassCalls", "ClassValue", "Instance", "set_attribute"]
