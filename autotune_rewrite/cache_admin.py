"""Keeping the tool's disk cache (``disk_cache``) a good citizen as a shared CI directory: what it
holds, a size limit with least-recently-used eviction, and pruning.

An entry is ``<root>/<namespace>/<xx>/<key><suffix>``; its modification time is its last use
(``disk_cache`` touches an entry when it reads it, and ``actions/cache``'s tar keeps mtimes
across a restore), so evicting the oldest mtimes first is LRU without an index to keep
consistent between concurrent processes. Temporary files of writers that were killed
(``.tmp-*``, never renamed into place) are removed once they are an hour old: a younger one may
still be being written. Removing an entry another process is reading or replacing at the same
moment is harmless: a vanished entry is a miss, and ``os.replace`` puts a fresh one in place.

The limit: ``$AUTOTUNE_REWRITE_CACHE_MAX``, else ``[tool.autotune-rewrite.cache] max_size``,
else 2 GB ("0" or "none": no limit). A run that wrote to the cache trims it at its end, to 90%
of the limit when over it, so a cache at its limit is not trimmed again by every run (ccache's
habit). Nothing here imports LibCST or Triton.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from autotune_rewrite import disk_cache
from autotune_rewrite.sizes import parse_size
from autotune_rewrite.errors import UserError
from autotune_rewrite.settings import load_settings

ENV_MAX = "AUTOTUNE_REWRITE_CACHE_MAX"
DEFAULT_MAX = 2_000_000_000  # "2GB"
TRIM_TO = 0.9  # of the limit, when a run finds the cache over it
STALE_TEMP_S = 3600.0
TEMP_PREFIX = disk_cache.TEMP_PREFIX
_NOT_ENTRIES = frozenset({"errors"})  # internal-error tracebacks live beside the caches; not entries

@dataclass(frozen=True)
class Entry:
    path: Path
    kind: str  # the namespace: outcomes, bundles, scans, file-facts, links, reports, smem-models
    size: int
    used: float  # mtime: written or last read


def _scan(root: Path) -> tuple[list[Entry], list[tuple[Path, float]]]:
    """Every entry, and every writer's temporary file with its mtime (os.scandir: one stat each)."""
    entries: list[Entry] = []
    temps: list[tuple[Path, float]] = []
    try:
        kinds = [d for d in os.scandir(root) if d.is_dir(follow_symlinks=False) and d.name not in _NOT_ENTRIES]
    except OSError:
        return entries, temps
    for kind in kinds:
        try:
            shards = [d for d in os.scandir(kind.path) if d.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        for shard in shards:
            try:
                files = list(os.scandir(shard.path))
            except OSError:
                continue
            for f in files:
                try:
                    st = f.stat(follow_symlinks=False)
                except OSError:
                    continue  # removed meanwhile by another process
                if not f.is_file(follow_symlinks=False):
                    continue
                if f.name.startswith(TEMP_PREFIX):
                    temps.append((Path(f.path), st.st_mtime))
                else:
                    entries.append(Entry(Path(f.path), kind.name, st.st_size, st.st_mtime))
    return entries, temps


# --------------------------------------------------------------------------- stats
@dataclass(frozen=True)
class KindStats:
    kind: str
    entries: int
    bytes: int
    oldest: float | None  # least recent use (epoch seconds)
    newest: float | None


@dataclass(frozen=True)
class CacheStats:
    root: str
    entries: int
    bytes: int
    kinds: tuple[KindStats, ...]  # by name
    oldest: float | None
    newest: float | None
    limit: int | None  # bytes; None: no limit
    limit_source: str  # where the limit came from: the variable, the settings file, or "default"
    temporary: int  # writers' temporary files (in progress, or left by a killed run)


def _kind_stats(kind: str, group: list[Entry]) -> KindStats:
    used = [e.used for e in group]
    return KindStats(kind, len(group), sum(e.size for e in group), min(used, default=None), max(used, default=None))


def stats(root: Path, limit: int | None = None, limit_source: str = "default") -> CacheStats:
    entries, temps = _scan(Path(root))
    by_kind: dict[str, list[Entry]] = {}
    for e in entries:
        by_kind.setdefault(e.kind, []).append(e)
    used = [e.used for e in entries]
    return CacheStats(str(root), len(entries), sum(e.size for e in entries),
                      tuple(_kind_stats(k, by_kind[k]) for k in sorted(by_kind)),
                      min(used, default=None), max(used, default=None), limit, limit_source, len(temps))


# --------------------------------------------------------------------------- prune / evict
@dataclass(frozen=True)
class PruneResult:
    root: str
    removed: int  # entries
    freed: int  # bytes of those entries
    temporary_removed: int
    entries: int  # what is left
    bytes: int
    seconds: float
    max_size: int | None  # the bound applied (None: none)
    older_than_days: float | None


def _unlink(path: Path) -> bool:
    try:
        path.unlink()
        return True
    except FileNotFoundError:
        return False  # another process evicted or replaced it first
    except OSError:
        return False


def prune(root: Path, max_size: int | None = None, older_than_days: float | None = None,
          now: float | None = None) -> PruneResult:
    """Remove entries not used for ``older_than_days``, then the least recently used ones until
    at most ``max_size`` bytes remain; and writers' temporary files over an hour old."""
    start = time.perf_counter()
    entries, temps = _scan(Path(root))
    return _evict(root, entries, temps, max_size, older_than_days, time.time() if now is None else now, start)


def _evict(root, entries: list[Entry], temps, max_size, older_than_days, now: float, start: float) -> PruneResult:
    temp_removed = sum(_unlink(p) for p, mtime in temps if now - mtime > STALE_TEMP_S)
    entries = sorted(entries, key=lambda e: e.used)  # least recently used first
    keep_from = 0
    if older_than_days is not None:
        cutoff = now - older_than_days * 86400
        while keep_from < len(entries) and entries[keep_from].used < cutoff:
            keep_from += 1
    total = sum(e.size for e in entries[keep_from:])
    if max_size is not None:
        while keep_from < len(entries) and total > max_size:
            total -= entries[keep_from].size
            keep_from += 1
    removed, freed = 0, 0
    for e in entries[:keep_from]:
        if _unlink(e.path):
            removed += 1
            freed += e.size
    left = entries[keep_from:]
    return PruneResult(str(root), removed, freed, temp_removed, len(left), sum(e.size for e in left),
                       time.perf_counter() - start, max_size, older_than_days)


def limit_in_force(configured: int | None = None, source: str = "settings") -> tuple[int | None, str]:
    """(bytes, or None for no limit; where it came from): ``$AUTOTUNE_REWRITE_CACHE_MAX`` over
    the settings' ``cache.max_size`` (``configured``: None when not set, 0 for no limit) over
    2 GB. A bad variable is a usage error (exit 2), before any work."""
    env = os.environ.get(ENV_MAX)
    if env:
        try:
            return parse_size(env) or None, ENV_MAX
        except ValueError as exc:
            raise UserError(f"{ENV_MAX}={env}: {exc}") from None
    if configured is not None:
        return configured or None, source
    return DEFAULT_MAX, "default"


def trim(root: Path, limit: int | None) -> PruneResult | None:
    """At the end of a run that wrote to the cache: when it is over ``limit``, evict the least
    recently used entries down to 90% of it. None when nothing had to go."""
    if limit is None or disk_cache.bytes_written() == 0:
        return None
    start = time.perf_counter()
    entries, temps = _scan(Path(root))
    if sum(e.size for e in entries) <= limit:
        return None
    return _evict(root, entries, temps, int(limit * TRIM_TO), None, time.time(), start)


# --------------------------------------------------------------------------- the two commands
def project_limit(folder: Path) -> tuple[int | None, str]:
    """The limit in force for the project holding ``folder`` (its settings, the variable)."""
    settings = load_settings(folder)
    return limit_in_force(settings.cache.max_size, f"{settings.source} cache.max_size" if settings.source else "settings")


def cache_stats(folder: Path, root: Path | None = None) -> CacheStats:
    """``cache stats``: what the cache (default ``disk_cache.default_cache_dir()``) holds."""
    limit, source = project_limit(folder)
    return stats(root or disk_cache.default_cache_dir(), limit, source)


def cache_prune(folder: Path, max_size: str | None = None, older_than_days: float | None = None,
                root: Path | None = None) -> PruneResult:
    """``cache prune``: entries unused for ``older_than_days``, then the least recently used ones
    over ``max_size`` (default: the limit in force when neither bound is given)."""
    if older_than_days is not None and older_than_days < 0:
        raise UserError(f"--older-than {older_than_days:g}: must be a number of days >= 0")
    if max_size is not None:
        try:
            bound = parse_size(max_size) or None
        except ValueError as exc:
            raise UserError(f"--max-size {max_size}: {exc}") from None
    elif older_than_days is None:
        bound, _ = project_limit(folder)
    else:
        bound = None
    return prune(root or disk_cache.default_cache_dir(), bound, older_than_days)


__all__ = ["CacheStats", "cache_prune", "cache_stats", "project_limit", "DEFAULT_MAX", "ENV_MAX", "Entry", "KindStats", "PruneResult", "limit_in_force",
           "prune", "stats", "trim"]
