"""Turning LibCST's qualified names into absolute dotted names.

Matching is by what a name *is* (LibCST's ``QualifiedNameProvider``), never by spelling, so
``import triton as tt``, ``from triton import autotune`` and
``from triton.runtime.autotuner import autotune as x`` all resolve to the same thing while a
repo's own ``autotune`` or ``@libtuner`` do not.
"""

from __future__ import annotations

from libcst.metadata import QualifiedNameSource

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
