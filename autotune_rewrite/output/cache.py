"""Rendering of ``cache stats`` and ``cache prune``: a table or one line on stderr, or JSON on
stdout.

JSON (``--format json``)::

    stats: {"schema_version": 1, "root", "entries", "bytes", "limit" (bytes | null: none),
            "limit_source", "temporary", "oldest", "newest" (last use, ISO 8601 UTC | null),
            "kinds": [{"kind", "entries", "bytes", "oldest", "newest"}]}
    prune: {"schema_version": 1, "root", "removed", "freed", "temporary_removed", "entries",
            "bytes", "max_size", "older_than_days", "seconds"}
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

from rich.table import Table

from autotune_rewrite import output
from autotune_rewrite.cache_admin import CacheStats, PruneResult

SCHEMA_VERSION = 1


def size(n: int | None) -> str:
    """Bytes in the decimal units the limit is written in: ``28.9 MB``; None: ``no limit``."""
    if n is None:
        return "no limit"
    for unit, scale in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:,} B"


def _when(t: float | None) -> str | None:
    return None if t is None else datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="seconds")


def _shown_when(t: float | None) -> str:
    return "-" if t is None else datetime.fromtimestamp(t).strftime("%Y-%m-%d %H:%M")


def _limit(limit: int | None, source: str) -> str:
    return f"limit {size(limit)}" + ("" if source == "default" else f", from {source}")


def stats_json(s: CacheStats) -> str:
    return json.dumps({
        "schema_version": SCHEMA_VERSION, "root": s.root, "entries": s.entries, "bytes": s.bytes,
        "limit": s.limit, "limit_source": s.limit_source, "temporary": s.temporary,
        "oldest": _when(s.oldest), "newest": _when(s.newest),
        "kinds": [{"kind": k.kind, "entries": k.entries, "bytes": k.bytes, "oldest": _when(k.oldest),
                   "newest": _when(k.newest)} for k in s.kinds],
    }, indent=2) + "\n"


def print_stats(s: CacheStats, as_json: bool) -> None:
    if as_json:
        output.write_raw(stats_json(s))
        return
    console = output.stderr()
    table = Table(title=f"cache {output.escape(s.root)}", title_justify="left")
    table.add_column("kind", no_wrap=True)
    for col in ("entries", "bytes"):
        table.add_column(col, justify="right", no_wrap=True)
    for col in ("least recent use", "most recent use"):
        table.add_column(col, no_wrap=True)
    for k in s.kinds:
        table.add_row(k.kind, f"{k.entries:,}", size(k.bytes), _shown_when(k.oldest), _shown_when(k.newest))
    if s.kinds:
        output.print_unwrapped(console, table)
    console.print(f"{s.entries:,} entries, {size(s.bytes)} ({_limit(s.limit, s.limit_source)})", markup=False)
    if s.temporary:
        console.print(f"{s.temporary} temporary file(s): writes in progress, or left by a run that was killed "
                      "(prune removes those over an hour old)", markup=False)


def prune_json(r: PruneResult) -> str:
    return json.dumps({
        "schema_version": SCHEMA_VERSION, "root": r.root, "removed": r.removed, "freed": r.freed,
        "temporary_removed": r.temporary_removed, "entries": r.entries, "bytes": r.bytes, "max_size": r.max_size,
        "older_than_days": r.older_than_days, "seconds": round(r.seconds, 3),
    }, indent=2) + "\n"


def print_prune(r: PruneResult, as_json: bool) -> None:
    if as_json:
        output.write_raw(prune_json(r))
        return
    why = []
    if r.older_than_days is not None:
        why.append(f"unused for {r.older_than_days:g} days")
    if r.max_size is not None:
        why.append(f"least recently used, down to {size(r.max_size)}")
    line = f"pruned {r.root}: removed {r.removed:,} entries ({size(r.freed)})"
    if why:
        line += f" [{'; '.join(why)}]"
    if r.temporary_removed:
        line += f" and {r.temporary_removed} stale temporary file(s)"
    line += f"; {r.entries:,} entries, {size(r.bytes)} left, {r.seconds:.2f} s"
    output.stderr().print(line, markup=False)


__all__ = ["print_prune", "print_stats", "prune_json", "size", "stats_json"]
