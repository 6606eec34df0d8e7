"""Import one module of a checked-out repository without running its packages' ``__init__``.

A kernel library's package ``__init__`` usually imports the whole library and its optional
dependencies (transformers, CUDA extensions, distributed runtimes), none of which a driver needs
to call one op. Each parent package is made a namespace-like module whose ``__path__`` is its
folder, so ``import pkg.sub.mod`` runs ``mod`` and what ``mod`` itself imports, nothing else.
The module's ``__file__`` is its real path, so ``capture`` names its kernels by their place in
the repository.
"""

from __future__ import annotations

import importlib
import sys
import types
from pathlib import Path


def loader(repo: Path, source_root: str = ""):
    """A ``load("pkg/sub/mod.py")`` for modules under ``repo/source_root`` (``src`` layouts)."""
    base = (repo / source_root).resolve()
    if str(base) not in sys.path:
        sys.path.insert(0, str(base))

    def load(relpath: str) -> types.ModuleType:
        parts = Path(relpath).with_suffix("").parts
        for depth in range(1, len(parts)):
            name = ".".join(parts[:depth])
            if name not in sys.modules:
                package = types.ModuleType(name)
                package.__path__ = [str(base.joinpath(*parts[:depth]))]
                sys.modules[name] = package
        return importlib.import_module(".".join(parts))

    return load
