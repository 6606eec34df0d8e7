"""What ``from M import *`` binds, read off M's source as Python's import system would bind it.

Python's rule (the language reference, "The import statement"): when M defines ``__all__``, the
star import binds exactly those names; otherwise every name of M's namespace that does not
start with an underscore, which includes the names M itself imported (``tl``, a helper from a
sibling module) and, transitively, what M's own star imports bound. The kernel loader asks these
functions which module a name read by a kernel comes from when no statement of the kernel's
module binds it; following the chain (a package ``__init__`` re-exporting ``from .utils import *``)
is the loader's job, since it needs the modules parsed. Nothing here runs user code.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass

import libcst as cst

from autotune_rewrite.isolate.loader_syntax import dotted


@dataclass(frozen=True)
class StarImport:
    """One ``from <source> import *`` statement (``level`` leading dots)."""

    source: str
    level: int


def star_imports(body) -> tuple[StarImport, ...]:
    """The module's star imports in source order, looking into module-level if/try/with blocks
    (``try: from ._fast import *``); an ``except`` branch is listed first so that the ``try``
    body, which normally runs, wins as the later binding does."""
    out: list[StarImport] = []
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.ImportFrom) and isinstance(small.names, cst.ImportStar):
                    out.append(StarImport(dotted(small.module) if small.module else "", len(small.relative)))
        elif isinstance(stmt, cst.Try):
            for handler in stmt.handlers:
                out.extend(star_imports(handler.body.body))
            out.extend(star_imports(stmt.body.body))
        elif isinstance(stmt, (cst.If, cst.With)) and isinstance(stmt.body, cst.IndentedBlock):
            out.extend(star_imports(stmt.body.body))
            orelse = getattr(stmt, "orelse", None)
            while isinstance(orelse, cst.If):
                out.extend(star_imports(orelse.body.body))
                orelse = orelse.orelse
            if isinstance(orelse, cst.Else):
                out.extend(star_imports(orelse.body.body))
    return tuple(out)


def declared_all(body) -> frozenset[str] | None:
    """The names of a module-level ``__all__`` built from string literals (``=``, ``+=``,
    ``.extend``, ``.append``); None when there is none or it is computed (then the caller falls
    back to the public names, a superset)."""
    names: set[str] | None = None
    for stmt in body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Assign) and any(_is_all(t.target) for t in small.targets):
                names = _strings(small.value)
                if names is None:
                    return None
            elif isinstance(small, cst.AugAssign) and _is_all(small.target):
                more = _strings(small.value)
                if names is None or more is None or not isinstance(small.operator, cst.AddAssign):
                    return None
                names |= more
            elif isinstance(small, cst.Expr) and _is_all_method(small.value):
                call = small.value
                more = _strings(call.args[0].value) if call.func.attr.value == "extend" else _strings(
                    cst.List([cst.Element(call.args[0].value)]))
                if names is None or more is None:
                    return None
                names |= more
    return None if names is None else frozenset(names)


def exported(name: str, declared: frozenset[str] | None, bound: bool) -> bool:
    """Whether ``from M import *`` binds ``name``, given M's ``__all__`` and whether M binds it."""
    if declared is not None:
        return name in declared
    return bound and not name.startswith("_")


def _is_all(target: cst.BaseExpression) -> bool:
    return isinstance(target, cst.Name) and target.value == "__all__"


def _is_all_method(expr: cst.BaseExpression) -> bool:
    return (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and _is_all(expr.func.value)
            and expr.func.attr.value in ("extend", "append") and len(expr.args) == 1)


def _strings(expr: cst.BaseExpression) -> set[str] | None:
    if not isinstance(expr, (cst.List, cst.Tuple)):
        return None
    out = set()
    for el in expr.elements:
        if not isinstance(el, cst.Element) or not isinstance(el.value, cst.SimpleString):
            return None
        value = el.value.evaluated_value
        if not isinstance(value, str):
            return None
        out.add(value)
    return out


@functools.lru_cache(maxsize=256)
def triton_exports(module: str, name: str) -> bool:
    """Whether ``from <a triton module> import *`` binds ``name`` (Triton is ours to import)."""
    try:
        mod = importlib.import_module(module)
    except Exception:  # noqa: BLE001 - a module this Triton does not have binds nothing
        return False
    public = getattr(mod, "__all__", None)
    return name in public if public is not None else (hasattr(mod, name) and not name.startswith("_"))


__all__ = ["StarImport", "declared_all", "exported", "star_imports", "triton_exports"]
