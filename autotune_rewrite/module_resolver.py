"""Which file of the repository a module name means: the one module resolver.

The locator's linking pass asks for absolute names (``pkg.kernels``) over the scanned file list;
the kernel loader asks for imports as written in a file (``from ..helpers import f``, level 2)
and checks the disk. Both ask this one resolver, in the order Python's import system would look
for a checkout: a relative import from the importer's package; else the module name relative to
the root, a ``src/`` layout, and the folders above the importer (scripts run from there); else,
over the file list (given, or listed when the disk has no answer), the one file whose module
name ends with the name (scanning a subfolder of the package root; a script outside the package,
``tutorials/x.py`` importing one kept under ``python/``). Asking the disk, an installed package
is what Python would import: its files when it is installed from the checkout (``pip install -e
python``), else nothing of the repo. Nothing outside the root is ever returned, and nothing is
imported.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
from collections.abc import Callable, Iterable
from pathlib import Path, PurePosixPath

from autotune_rewrite.files import module_name


class ModuleResolver:
    """Module names -> files under ``root`` (POSIX paths relative to it).

    ``files``: the files known to be in the tree (the scan's list); without it the disk is asked.
    """

    def __init__(self, root: Path, files: Iterable[str] | None = None,
                 tree_files: Callable[[], Iterable[str]] | None = None):
        self.root = Path(root).resolve()
        self._known: set[str] | None = None
        self._by_name: dict[str, str] = {}
        self._suffix: dict[str, list[str]] | None = None
        # Asking the disk: a script outside the package (``tutorials/x.py`` importing a package
        # kept under ``python/``) still finds it by the end of its name, as over a file list;
        # the tree is listed only when that fallback is first needed.
        self._tree_files = tree_files
        if files is not None:
            self._known = set()
            for f in files:
                self._known.add(f)
                self._by_name.setdefault(module_name(f), f)

    def find(self, dotted: str, importer: str | None = None, level: int = 0) -> str | None:
        """The file of module ``dotted`` imported from ``importer`` (relative when ``level`` > 0)."""
        parts = [p for p in dotted.split(".") if p]
        if level:
            if importer is None:
                return None
            base = PurePosixPath(importer).parent
            for _ in range(level - 1):
                if base == PurePosixPath("."):
                    return None  # above the root
                base = base.parent
            return self._first(base, parts)
        if self._known is not None and dotted in self._by_name:
            return self._by_name[dotted]
        bases = [PurePosixPath("."), PurePosixPath("src")]
        if importer is not None:
            d = PurePosixPath(importer).parent
            while d != PurePosixPath("."):
                bases.append(d)
                d = d.parent
        for base in bases:
            hit = self._first(base, parts)
            if hit is not None:
                return hit
        if self._known is not None:
            return self._by_suffix(dotted)
        if self._tree_files is None:
            return None
        installed, where = _installed_at(parts[0]) if parts else (False, None)
        if installed:
            # An installed package is what Python imports: the repo's own when it is installed
            # from the checkout (``pip install -e python``), else none of the repo's files, not
            # even one that ends the same way (``pkg/check_env/torch.py`` is not ``torch``).
            base = self._relative(where) if where is not None else None
            return self._first(base, parts) if base is not None else None
        if len(parts) < 2:
            return None  # a bare name could be any file of that name
        if not self._by_name:  # asked only by this fallback while the disk is asked
            self._by_name = {module_name(f): f for f in reversed(list(self._tree_files()))}
        return self._by_suffix(dotted)

    def runs(self, dotted: str, importer: str, level: int = 0) -> list[str]:
        """The files importing ``dotted`` runs: the module and the packages above it (importing
        ``a.b.c`` runs ``a`` and ``a.b``), in that order, those of the tree only."""
        parts = dotted.split(".") if dotted else []
        hits = (self.find(".".join(parts[:i]), importer, level) for i in range(0 if level else 1, len(parts) + 1))
        return [h for h in dict.fromkeys(hits) if h is not None and h != importer]

    def imported_by(self, node: ast.Import | ast.ImportFrom, importer: str) -> list[str]:
        """The tree's files one import statement of ``importer`` runs, in source order: each
        module with its packages, and for ``from pkg import name`` the submodule ``pkg.name``."""
        if isinstance(node, ast.Import):
            hits = [h for alias in node.names for h in self.runs(alias.name, importer)]
        else:
            base = node.module or ""
            hits = self.runs(base, importer, node.level) + [
                self.find(f"{base}.{alias.name}" if base else alias.name, importer, node.level) for alias in node.names]
        return [h for h in dict.fromkeys(hits) if h is not None and h != importer]

    def _relative(self, folder: Path) -> PurePosixPath | None:
        """``folder`` as a base under the root; None outside it."""
        try:
            return PurePosixPath(folder.relative_to(self.root).as_posix())
        except ValueError:
            return None

    def _first(self, base: PurePosixPath, parts: list[str]) -> str | None:
        stem = base.joinpath(*parts) if parts else base
        candidates = ([str(stem) + ".py"] if parts else []) + [str(stem / "__init__.py")]
        for cand in candidates:
            cand = str(PurePosixPath(cand))
            if self._exists(cand):
                return cand
        return None

    def _exists(self, rel: str) -> bool:
        if self._known is not None:
            return rel in self._known
        path = self.root / rel
        try:
            return path.is_file() and self.root in path.resolve().parents
        except OSError:
            return False

    def _by_suffix(self, dotted: str) -> str | None:
        if self._suffix is None:
            self._suffix = {}
            for name, path in self._by_name.items():
                parts = name.split(".")
                for i in range(1, len(parts)):
                    self._suffix.setdefault(".".join(parts[i:]), []).append(path)
        hits = self._suffix.get(dotted, [])
        return hits[0] if len(hits) == 1 else None


@functools.cache
def _installed_at(top: str) -> tuple[bool, Path | None]:
    """Whether the environment has a top-level module ``top``, and the folder it is found in
    (found, not imported; None for a built-in or namespace package)."""
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return False, None
    if spec is None:
        return False, None
    if spec.submodule_search_locations and spec.origin:
        return True, Path(spec.origin).resolve().parent.parent  # the folder holding the package
    return True, Path(spec.origin).resolve().parent if spec.origin and spec.has_location else None


def installed(module: str) -> bool:
    """Whether ``module``'s top-level package is installed where the tool runs (found, not imported)."""
    return _installed_at(module.split(".")[0])[0]


__all__ = ["ModuleResolver", "installed"]
