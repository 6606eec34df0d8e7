"""A one-kernel package written for a test: ``pkg/kernels.py`` (the kernel) and ``pkg/ops.py``
(the wrapper that launches it), scanned with the real locator."""

from __future__ import annotations

from pathlib import Path

from autotune_rewrite.locate.scan import scan


def write_package(root: Path, kernel: str, wrapper: str) -> Path:
    """Write the package under ``root``; returns ``root``."""
    pkg = root / "pkg"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "kernels.py").write_text(kernel)
    (pkg / "ops.py").write_text(wrapper)
    return root


def one_site(root: Path, kernel: str, wrapper: str):
    """Write the package under ``root`` and return its one autotune site."""
    (site,) = scan(write_package(root, kernel, wrapper), jobs=1).sites
    return site


__all__ = ["one_site", "write_package"]
