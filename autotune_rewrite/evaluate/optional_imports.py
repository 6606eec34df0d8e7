"""``try: import x`` / ``except ImportError: <fallback>``: what such a block imports and binds.

Code that must import without a package guards the import (and often defines stand-ins in the
handler: a ``triton`` stub module whose ``autotune`` is the identity). Where the tool runs with
the package installed, the body is what runs, so the evaluator takes it (``statements``: a helper's
``try``; ``scopes``: a module name bound by such a block is the import's). A package not
installed here leaves the fallback, which is not evaluated.
"""

from __future__ import annotations

import libcst as cst
from libcst.helpers import get_full_name_for_node

from autotune_rewrite.module_resolver import installed


def _imports(block):
    body = block.body if isinstance(block, cst.IndentedBlock) else []
    return [small for stmt in body if isinstance(stmt, cst.SimpleStatementLine) for small in stmt.body
            if isinstance(small, (cst.Import, cst.ImportFrom))]


def imported_modules(block) -> list[str]:
    """The absolute modules a block's import statements name (``import a.b``, ``from a import b``)."""
    out = []
    for small in _imports(block):
        if isinstance(small, cst.Import):
            out += [get_full_name_for_node(a.name) for a in small.names]
        elif not small.relative and small.module is not None:
            out.append(get_full_name_for_node(small.module))
    return list(dict.fromkeys(out))


def has_imports(block) -> bool:
    return bool(_imports(block))


def bound_names(block) -> set[str]:
    """The names a block's imports bind: ``import a.b`` binds ``a``, ``... as c`` binds ``c``."""
    out: set[str] = set()
    for small in _imports(block):
        if isinstance(small.names, cst.ImportStar):
            continue
        for alias in small.names:
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                out.add(alias.asname.name.value)
            elif isinstance(small, cst.Import):
                out.add((get_full_name_for_node(alias.name) or "").split(".")[0])
            else:
                out.add(get_full_name_for_node(alias.name) or "")
    return out


def missing(block) -> list[str]:
    """The modules the block imports that are not installed where the tool runs."""
    return [m for m in imported_modules(block) if not installed(m)]


def taken_note(block) -> str:
    return "optional import taken: " + ", ".join(imported_modules(block)) + " installed where the tool runs"


__all__ = ["bound_names", "has_imports", "imported_modules", "missing", "taken_note"]
