"""Turning LibCST's qualified names into absolute dotted names, star imports included.

Matching is by what a name *is* (LibCST's ``QualifiedNameProvider``), never by spelling, so
``import triton as tt``, ``from triton import autotune`` and
``from triton.runtime.autotuner import autotune as x`` all resolve to the same thing while a
repo's own ``autotune`` or ``@libtuner`` do not.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import QualifiedNameSource

from autotune_rewrite.triton_names import STAR_EXPORTED, is_triton_module

def absolutize(name: str, module: str, is_package: bool) -> str:
    """``.kernels._k`` seen in module ``pkg.caller`` -> ``pkg.kernels._k``."""
    if not name.startswith("."):
        return name
    dots = len(name) - len(name.lstrip("."))
    package = module.split(".") if is_package else module.split(".")[:-1]
    if dots > 1:
        package = package[: len(package) - (dots - 1)] if dots - 1 <= len(package) else []
    rest = name[dots:]
    return ".".join([*package, rest] if rest else package)


def absolute_names(qnames, module: str, is_package: bool) -> frozenset[str]:
    """LibCST ``QualifiedName``s -> absolute dotted names; module-level locals get the module
    prefix, function locals (``f.<locals>.x``) are dropped (they name nothing outside)."""
    out = set()
    for q in qnames:
        if q.source == QualifiedNameSource.IMPORT:
            out.add(absolutize(q.name, module, is_package))
        elif q.source == QualifiedNameSource.BUILTIN:
            out.add(q.name)
        elif "<locals>" not in q.name:
            out.add(f"{module}.{q.name}" if module else q.name)
    return frozenset(out)


def star_names(dotted: str, stars: tuple[str, ...]) -> frozenset[str]:
    """What an unbound ``dotted`` name may be in a file with star imports: ``autotune`` after
    ``from triton import *`` is ``triton.autotune`` (only the Triton names the tool knows:
    Triton's ``__all__`` is not read, Triton is never imported); after ``from .utils import *``
    it is ``pkg.utils.autotune``, which the linking pass follows (``__all__`` respected)."""
    out = set()
    for mod in stars:
        fq = f"{mod}.{dotted}"
        if not is_triton_module(mod) or fq in STAR_EXPORTED:
            out.add(fq)
    return frozenset(out)


def star_modules(module: cst.Module, module_name: str, is_package: bool) -> tuple[str, ...]:
    """Absolute names of the modules a file star-imports (``from m import *``), in order; at
    module level, also inside a top-level ``if``/``try`` (``try: from triton import *``)."""
    out: list[str] = []
    for stmt in module_statements(module.body):
        for small in stmt.body:
            if isinstance(small, cst.ImportFrom) and isinstance(small.names, cst.ImportStar):
                base = "." * len(small.relative) + (module.code_for_node(small.module) if small.module else "")
                out.append(absolutize(base, module_name, is_package))
    return tuple(dict.fromkeys(out))


def module_statements(body):
    """The simple statement lines Python runs at import: the module's own, and those inside
    top-level ``if``/``else`` and ``try``/``except``/``else``/``finally`` blocks (guarded
    imports and fallbacks), in source order."""
    for stmt in module_level(body):
        if isinstance(stmt, cst.SimpleStatementLine):
            yield stmt


def module_level(body):
    """Every statement that runs at import, ``if``/``try`` blocks entered (their headers are
    not yielded): simple statement lines, ``def``s, classes, loops."""
    for stmt in body:
        if isinstance(stmt, cst.If):
            yield from _if_statements(stmt)
        elif isinstance(stmt, cst.Try):
            for block in (stmt.body, *(h.body for h in stmt.handlers),
                          *(b.body for b in (stmt.orelse, stmt.finalbody) if b is not None)):
                yield from _block(block)
        else:
            yield stmt


def _if_statements(stmt: cst.If):
    yield from _block(stmt.body)
    orelse = stmt.orelse
    if isinstance(orelse, cst.If):
        yield from _if_statements(orelse)
    elif orelse is not None:
        yield from _block(orelse.body)


def _block(block):
    if isinstance(block, cst.IndentedBlock):
        yield from module_level(block.body)
    elif isinstance(block, cst.SimpleStatementSuite):
        yield cst.SimpleStatementLine(body=block.body)
