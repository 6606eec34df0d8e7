"""Which modules of the repository cannot even be imported on the installed Triton.

A repository written for its own Triton fork (a distributed-ops dialect, say) keeps the fork's
helpers in modules that import the fork's native module at the top
(``from triton._C.libtriton.distributed import ir``). A kernel that calls such a helper cannot be
isolated, and no launch spec would help: it needs that Triton. So when the loader cannot provide
a name, it asks here whether importing the name's module would fail on this Triton, following the
module's unconditional top-level imports through the repository (packages' ``__init__`` too),
and reports the absent Triton module with the file and line that imports it.

Only unconditional top-level imports count: one under ``try``/``if`` is a fallback the author
meant to survive without the module. Read with ``ast``; nothing is imported but Triton itself,
and that only for a name imported from a Triton module the installed one has.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

from autotune_rewrite.module_resolver import ModuleResolver
from autotune_rewrite.triton_names import installed_has, is_triton_module

Absent = tuple[str, str, int]  # (Triton module the installed one lacks, importing file, line)
_BUSY = object()  # being followed: an import cycle ends here


class ForkImports:
    """``needed_by(rel)``: the first absent Triton module importing ``rel`` would import."""

    def __init__(self, root: Path, resolver: ModuleResolver, has_module: Callable[[str], bool]):
        self.root = Path(root)
        self.resolver = resolver
        self.has_module = has_module
        self._memo: dict[str, object] = {}
        self.read: list[Path] = []  # every file read: the cached bundle's verdict depends on them

    def needed_by(self, rel: str) -> Absent | None:
        found = self._memo.get(rel)
        if found is _BUSY:
            return None
        if rel not in self._memo:
            self._memo[rel] = _BUSY
            found = self._memo[rel] = self._first_absent(rel)
        return found  # type: ignore[return-value]

    def _first_absent(self, rel: str) -> Absent | None:
        self.read.append(self.root / rel)
        try:
            tree = ast.parse((self.root / rel).read_bytes())
        except (OSError, SyntaxError, ValueError):
            return None  # the loader reports an unreadable module itself
        for stmt in tree.body:
            for triton_module, repo_modules in self._imports(stmt, rel):
                if triton_module is not None:
                    return triton_module, rel, stmt.lineno
                for dep in repo_modules:
                    found = self.needed_by(dep)
                    if found is not None:
                        return found
        return None

    def _imports(self, stmt: ast.stmt, rel: str):
        """(absent Triton module or None, repo files it runs) for each import ``stmt`` makes."""
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if is_triton_module(alias.name):
                    yield (None if self.has_module(alias.name) else alias.name), ()
                else:
                    yield None, self.resolver.runs(alias.name, rel)
        elif isinstance(stmt, ast.ImportFrom):
            source = stmt.module or ""
            if stmt.level == 0 and is_triton_module(source):
                yield self._absent_from(source, [a.name for a in stmt.names]), ()
                return
            yield None, self.resolver.imported_by(stmt, rel)

    def _absent_from(self, source: str, names: list[str]) -> str | None:
        if not self.has_module(source):
            return source
        for name in names:
            if name != "*" and not self.has_module(f"{source}.{name}") and not installed_has(source, name):
                return f"{source}.{name}"
        return None


__all__ = ["ForkImports"]
