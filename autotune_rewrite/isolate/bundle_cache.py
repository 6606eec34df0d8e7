"""On-disk cache of isolated kernels (``KernelBundle``), so a warm ``check`` parses nothing.

Cutting a kernel out of its module costs a LibCST parse and a scope analysis per module it
touches (~0.1-0.2 s). A bundle is stored with the SHA-256 of every file it was cut from and is
reused only while all of them keep their bytes; the loader's own source is part of the key, so
a changed loader rebuilds everything (and ``disk_cache`` adds the schema and the LibCST/Triton/tool
versions). This module imports nothing heavy (no LibCST): a cache hit must stay cheap.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from pathlib import Path

from autotune_rewrite import disk_cache
from autotune_rewrite import resources
from autotune_rewrite.evidence import KernelBundle
from autotune_rewrite.disk_cache import file_digest as _digest

# 2: disk_cache's envelope and key; 3: where each function came from; 4: the globals not provided;
# 5: the Triton modules this Triton lacks; 6: and its attributes (``tl.NAME``)
SCHEMA = 6
# The loader's code: a change in any of these may change what a bundle holds.
_LOADER_FILES = tuple(Path(__file__).with_name(f) for f in (
    "kernel_loader.py", "parsed_modules.py", "twin_defs.py", "loader_syntax.py", "star_imports.py",
    "bundle_constants.py", "absent_api.py", "fork_imports.py", "kernel_ast.py", "installed_branch.py")) + (
    Path(__file__).parent.parent / "module_resolver.py",
    Path(__file__).parent.parent / "triton_names.py",  # installed_has: what absent_api asks
    # call-built globals are computed by the static evaluator and its answers
    *sorted((Path(__file__).parent.parent / "evaluate").glob("*.py")))


class KernelLoadError(Exception):
    """The kernel cannot be cut out of its module (message names the file and what is wrong)."""


def _entry(root: Path, path: str, kernel: str, cache_dir: Path,
           line: int | None = None) -> tuple[disk_cache.Namespace, str]:
    store = disk_cache.namespace("bundles", SCHEMA, cache_dir)
    # Triton's version too: which of its modules exist decides what a bundle may import. The def
    # line only when given (twin defs), so the other kernels' entries keep their keys.
    parts = (path, kernel) if line is None else (path, kernel, line)
    return store, store.key(_loader_digests(), resources.triton_version(), str(root.resolve()), *parts)


@functools.lru_cache(maxsize=1)
def _loader_digests() -> tuple[str | None, ...]:
    # Once per process: the tool's own files do not change under a running check.
    return tuple(_digest(f) for f in _LOADER_FILES)


def lookup(root: Path, path: str, kernel: str, cache_dir: Path, line: int | None = None) -> KernelBundle | None:
    """The cached bundle, if every file it was cut from is unchanged."""
    ns, key = _entry(root, path, kernel, cache_dir, line)
    data = ns.read_json(key)
    try:
        if any(_digest(root / rel) != sha for rel, sha in data["deps"].items()):
            return None
        return KernelBundle(kernel=data["kernel"], source=data["source"], origin=data["origin"],
                            functions=tuple(tuple(f) for f in data.get("functions", ())),
                            unprovided=tuple(tuple(u) for u in data.get("unprovided", ())),
                            absent_modules=tuple(tuple(m) for m in data.get("absent_modules", ())),
                            files=tuple(data["deps"]))
    except (KeyError, TypeError, AttributeError):
        return None


def dep_names(root: Path, files: Iterable[Path]) -> tuple[str, ...]:
    """The files a bundle was cut from, as its entry names them: root-relative where they can be."""
    base = root.resolve()
    out = []
    for f in files:
        try:
            out.append(Path(f).resolve().relative_to(base).as_posix())
        except ValueError:
            out.append(str(f))
    return tuple(out)


def store(root: Path, path: str, kernel: str, cache_dir: Path, bundle: KernelBundle, files: Iterable[Path],
          line: int | None = None) -> None:
    """Atomic write; a cache we cannot write only keeps the next run cold."""
    files = list(files)
    deps = {name: _digest(Path(f)) for name, f in zip(dep_names(root, files), files)}
    data = {"deps": deps, "kernel": bundle.kernel, "source": bundle.source, "origin": bundle.origin,
            "functions": [list(f) for f in bundle.functions],
            "unprovided": [list(u) for u in bundle.unprovided],
            "absent_modules": [list(m) for m in bundle.absent_modules]}
    ns, key = _entry(root, path, kernel, cache_dir, line)
    ns.write_json(key, data)


__all__ = ["KernelLoadError", "dep_names", "lookup", "store"]
