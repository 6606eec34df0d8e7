"""A scan of an unchanged tree is not repeated: ``check`` reuses the last ``ScanResult``.

On a warm rerun the compile outcomes and the bundles come from their caches; what remained was
the scan itself (LibCST parses of every candidate file, ~0.2-0.6 s, plus ~0.3 s to import
LibCST at all). The key is everything the scan reads: the locator's own code, the tree's root,
the exclude globs, the explicit paths, and the name and SHA-256 of every file the scan would
look at (git's file list or the walk). Nothing heavy is imported on a hit.

Entries are pickles of our own frozen dataclasses in the ``scans`` namespace of ``disk_cache``
(the same trust as the compile cache beside them; LibCST's version is part of every key).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

from autotune_rewrite import disk_cache, stopwatch
from autotune_rewrite.files import discover
from autotune_rewrite.locate.locator_digest import locator_digest
from autotune_rewrite.model import ScanResult
from autotune_rewrite.settings import Settings

# 3: launch arguments (ArgFact) on each LaunchSite; 4: AutotuneSite.bound_to, ident_line;
# 5: pre_hook descriptor shapes on configs; 6: configs_by_target (keyed by arch and env too);
# 7: ConfigValue.choices (the literal elements a generated config came from), AutotuneSite.data_files
#    (a hit re-hashes them: they are not in the file list); 8: AutotuneSite.environment
SCHEMA = 8


def _key(root: Path, paths: tuple[Path, ...], settings: Settings) -> str:
    fileset = discover(root, settings.exclude, paths)
    h = hashlib.sha256(f"{locator_digest()}\0{Path(root).resolve()}".encode())
    h.update(repr((settings.exclude, [str(p) for p in paths], settings.arch, settings.env)).encode())
    for rel in fileset.project:  # a limited scan also reads the rest of the project
        h.update(rel.encode() + b"\0")
        try:
            h.update(hashlib.sha256((fileset.root / rel).read_bytes()).digest())
        except OSError:
            h.update(b"unreadable")
    return disk_cache.make_key(_NAMESPACE, SCHEMA, h.hexdigest())


_NAMESPACE = "scans"


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
    store = disk_cache.namespace(_NAMESPACE, SCHEMA, cache_dir, suffix=".pickle")
    with stopwatch.stage("scan_cache"):
        key = _key(root, explicit, settings)
        result = store.read_pickle(key, ScanResult)
        # Data files the configs were read from are not in the file list: the entry holds only
        # while they are unchanged (a second entry keyed by their contents says so).
        if result is not None and _data_files(result) and store.read_pickle(_data_key(key, root, result), ScanResult) is None:
            result = None
    if result is not None:
        return result
    from autotune_rewrite.locate.scan import scan  # LibCST is imported only when a scan really runs

    # A miss: only the files whose facts are not cached are analysed again (``facts_cache``).
    result = scan(root, paths=explicit or None, jobs=jobs, settings=settings, cache_dir=cache_dir)
    store.write_pickle(key, result)
    if _data_files(result):
        store.write_pickle(_data_key(key, root, result), result)
    return result


def _data_files(result: ScanResult) -> tuple[str, ...]:
    return tuple(sorted({f for site in result.sites for f in site.data_files}))


def _data_key(key: str, root: Path, result: ScanResult) -> str:
    base = Path(root) if Path(root).is_dir() else Path(root).parent
    h = hashlib.sha256(key.encode())
    for rel in _data_files(result):
        h.update(rel.encode() + b"\0")
        try:
            h.update(hashlib.sha256((base / rel).read_bytes()).digest())
        except OSError:
            h.update(b"unreadable")
    return disk_cache.make_key(_NAMESPACE, SCHEMA, h.hexdigest())


__all__ = ["cached_scan"]
