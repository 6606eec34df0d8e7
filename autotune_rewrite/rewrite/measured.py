"""Bench timings as evidence for a variant's choice (read from what ``bench`` saved; no GPU here).

``bench`` saves its timings per kernel under ``<git dir>/autotune-rewrite/bench/<kernel>.json``
(``rewrite/bench_results``). A variant that must choose among several launchable tiles uses them
only when they were measured on the target GPU itself: timings from another GPU say nothing
about which tile wins on the target.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from autotune_rewrite.model import AutotuneSite


@dataclass(frozen=True)
class BenchTimes:
    """One saved bench run of one kernel: per config label, the time at each batch size."""

    ident: str  # path::name the bench timed
    capability: str  # the GPU it ran on, e.g. "sm_120"
    metric: str  # which time ("graph_ms")
    batches: tuple[int, ...]
    times: tuple[tuple[str, tuple[tuple[int, float | None], ...]], ...]  # (label, ((batch, ms), ...))
    path: str  # the JSON it was read from

    def complete(self) -> list[tuple[str, dict[int, float]]]:
        """The configs timed at every batch (a config that did not run somewhere is no candidate)."""
        out = []
        for label, per in self.times:
            got = dict(per)
            if self.batches and all(got.get(b) is not None for b in self.batches):
                out.append((label, {b: float(got[b]) for b in self.batches}))
        return out


def from_saved(data: dict | None, path: str) -> BenchTimes | None:
    """A saved result (``results.load``'s JSON) as timings; None when it lacks what is needed."""
    if not data:
        return None
    try:
        metric = str(data["metric"])
        batches = tuple(int(b) for b in data["batches"])
        per: dict[str, list[tuple[int, float | None]]] = {}
        for m in data["measurements"]:
            ms = m.get(metric)
            per.setdefault(str(m["config"]), []).append((int(m["batch"]), None if ms is None else float(ms)))
        return BenchTimes(str(data["ident"]), str(data["capability"]), metric, batches,
                          tuple((label, tuple(v)) for label, v in per.items()), path)
    except (KeyError, TypeError, ValueError):
        return None


def saved_for(root: Path, site: AutotuneSite) -> BenchTimes | None:
    """The latest bench of ``site``'s kernel saved in the checkout holding ``root``, if any."""
    from autotune_rewrite.timings import bench_results as results

    git_dir = results.git_common_dir(Path(root))
    if git_dir is None:
        return None
    path = results.result_path(git_dir.joinpath(*results.SUBDIR), site.kernel)
    found = from_saved(results.load(path), str(path))
    return found if found is not None and found.ident == site.ident else None


__all__ = ["BenchTimes", "from_saved", "saved_for"]
