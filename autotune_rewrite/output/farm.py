"""Words for what the compile farm did (``compile/compile_farm.FarmEvent``), as summary warnings."""

from __future__ import annotations

from collections.abc import Iterable

from autotune_rewrite.compile.compile_farm import FarmEvent


def farm_warnings(events: Iterable[FarmEvent]) -> list[str]:
    """One line per event kind: a run that lost 40 jobs says so once, not 40 times."""
    events = list(events)
    out = []
    for e in events:
        if e.kind == "unreachable":
            out.append(f"compiled on the local pool (--fallback local): {e.detail}")
        elif e.kind == "lost":
            out.append(f"lost the Dask scheduler at {e.address} mid-run ({e.detail}): the {e.jobs} unfinished "
                       "compiles ran on the local pool; the finished ones are in the cache")
    lost = [e for e in events if e.kind == "job_lost"]
    if lost:
        out.append(f"{len(lost)} compile(s) lost on the Dask cluster ran again on the local pool "
                   f"(first: {lost[0].detail})")
    return out


__all__ = ["farm_warnings"]
