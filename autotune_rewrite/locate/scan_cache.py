"""A scan of an unchanged tree is not repeated: ``check`` reuses the last ``ScanResult``.

On a warm rerun the compile outcomes and the bundles come from their caches; what remained was
the scan itself (LibCST parses of every candidate file, ~0.2-0.6 s, plus ~0.3 s to import
LibCST at all). The key is everything the scan reads: the locator's own code, the tree's root,
the exclude globs, the explicit paths, and the name and SHA-256 of every file the scan would
look at (git's file list or the walk). Nothing heavy is imported on a hit.

Entries are pickles of our own frozen dataclasses, written atomically under the user's cache
folder (the same trust as the compile cache beside them).
"""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Iterable
from pathlib import Path

from autotune_rewrite.atomic_write import write_atomic
from autotune_rewrite.files import discover
from autotune_rewrite.model import ScanResult
from autotune_rewrite.settings import Settings

SCHEMA = 1
_PACKAGE = Path(__file__).parent.parent
# The locator's code: a change in any of these may change what a scan returns.
_LOCATOR_FILES = ("files.py", "model.py")


def _locator_digest() -> str:
    h = hashlib.sha256()
    for path in sorted([*(_PACKAGE / n for n in _LOCATOR_FILES), *(_PACKAGE / "locate").glob("*.py"),
                          *(_PACKAGE / "settings").glob("*.py")]):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _key(root: Path, paths: tuple[Path, ...], settings: Settings) -> str:
    fileset = discover(root, settings.exclude, paths)
    h = hashlib.sha256(f"{SCHEMA}\0{_locator_digest()}\0{Path(root).resolve()}".encode())
    h.update(repr((settings.exclude, [str(p) for p in paths])).encode())
    for rel in fileset.files:
        h.update(rel.encode() + b"\0")
        try:
            h.update(hashlib.sha256((fileset.root / rel).read_bytes()).digest())
        except OSError:
            h.update(b"unreadable")
    return h.hexdigest()


def cached_scan(
    root: Path,
    paths: Iterable[Path] | None,
    jobs: int | None,
    settings: Settings,
    cache_dir: Path | None,
) -> ScanResult:
    """``scan.scan(root, paths, jobs, settings)``, reused while nothing it reads has changed.
    ``cache_dir`` None scans every time."""
    explicit = tuple(paths or ())
    if cache_dir is None:
        from autotune_rewrite.locate.scan import scan

        return scan(root, paths=explicit or None, jobs=jobs, settings=settings)
    entry = Path(cache_dir) / "scans" / f"{_key(root, explicit, settings)}.pickle"
    try:
        result = pickle.loads(entry.read_bytes())
        if isinstance(result, ScanResult):
            return result
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError, ValueError):
        pass
    from autotune_rewrite.locate.scan import scan  # LibCST is imported only when a scan really runs

    result = scan(root, paths=explicit or None, jobs=jobs, settings=settings)
    _store(entry, result)
    return result


def _store(entry: Path, result: ScanResult) -> None:
    try:
        data = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
    except pickle.PicklingError:
        return
    write_atomic(entry, data)


__all__ = ["cached_scan"]
