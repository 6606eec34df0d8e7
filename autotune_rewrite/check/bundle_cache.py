"""On-disk cache of isolated kernels (``KernelBundle``), so a warm ``check`` parses nothing.

Cutting a kernel out of its module costs a LibCST parse and a scope analysis per module it
touches (~0.1-0.2 s). A bundle is stored with the SHA-256 of every file it was cut from and is
reused only while all of them keep their bytes; the loader's own source is part of the key, so
a changed loader rebuilds everything. This module imports nothing heavy (no LibCST): a cache
hit must stay cheap.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path

from autotune_rewrite.atomic_write import write_atomic
from autotune_rewrite.check.evidence import KernelBundle

_LOADER = Path(__file__).with_name("kernel_loader.py")


class KernelLoadError(Exception):
    """The kernel cannot be cut out of its module (message names the file and what is wrong)."""


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _entry(root: Path, path: str, kernel: str, cache_dir: Path) -> Path:
    blob = f"{_digest(_LOADER)}\0{root.resolve()}\0{path}\0{kernel}".encode()
    return Path(cache_dir) / "bundles" / (hashlib.sha256(blob).hexdigest() + ".json")


def lookup(root: Path, path: str, kernel: str, cache_dir: Path) -> KernelBundle | None:
    """The cached bundle, if every file it was cut from is unchanged."""
    try:
        data = json.loads(_entry(root, path, kernel, cache_dir).read_text(encoding="utf-8"))
        if any(_digest(root / rel) != sha for rel, sha in data["deps"].items()):
            return None
        return KernelBundle(kernel=data["kernel"], source=data["source"], origin=data["origin"],
                            functions=tuple(tuple(f) for f in data.get("functions", ())))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def store(root: Path, path: str, kernel: str, cache_dir: Path, bundle: KernelBundle, files: Iterable[Path]) -> None:
    """Atomic write; a cache we cannot write only keeps the next run cold."""
    base = root.resolve()
    deps = {}
    for f in files:
        try:
            deps[Path(f).resolve().relative_to(base).as_posix()] = _digest(Path(f))
        except ValueError:
            deps[str(f)] = _digest(Path(f))
    data = {"deps": deps, "kernel": bundle.kernel, "source": bundle.source, "origin": bundle.origin,
            "functions": [list(f) for f in bundle.functions]}
    write_atomic(_entry(root, path, kernel, cache_dir), json.dumps(data).encode("utf-8"))


__all__ = ["KernelLoadError", "lookup", "store"]
