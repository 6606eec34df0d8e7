"""v1's choice, which v2 and v3 build on: measured on the target, else forced, else refused.

``choose`` takes a bench run's timings on the one target when there are any (the launchable
config fastest at its worst batch); else, when exactly one tile (``block_key``) launches
everywhere, that tile at the highest occupancy reachable by raising num_warps (up to
``MAX_WARPS``) without more spills; else it raises ``VariantRefused``. Configs it has no
verdicts for yet come back as candidates to compile.

Separate from ``variants``, which applies each variant's rule around this choice: this module
is only the search for the one config (and the candidates that search needs)."""

from __future__ import annotations

from dataclasses import replace

from autotune_rewrite.model import AutotuneSite, ConfigValue
from autotune_rewrite.rewrite.measured import BenchTimes
from autotune_rewrite.rewrite.facts import BenchChosen, Fact, NotForced, VariantRefused, WarpsRejected, WarpsSpill
from autotune_rewrite.rewrite.decision import ConfigFacts, PlannedConfig, config_key, refused, tile_key

MAX_WARPS = 16  # 512 threads: past this ptxas caps a thread at 128 registers or fewer


def _raised(c: ConfigValue, warps: int) -> ConfigValue:
    return replace(c, num_warps=warps, span=None, path=None)


def _rank(p: PlannedConfig, tile_order: int) -> tuple:
    c = p.config
    return (-p.min_occupancy, p.max_spills, c.effective_num_stages, tile_order, c.effective_num_warps)


def block_key(c: ConfigValue) -> tuple:
    """A config's tile as the forcing rule counts it: its block sizes (meta-parameters, CTAs,
    maxnreg, pre-hook), without warps or stages. Stage counts of one tile are not separate tiles,
    so v2's own output (a tile at two stage counts) is decided again the same way."""
    k = config_key(c)
    return (k[0],) + k[3:]


def _tiles(kept: list[PlannedConfig]) -> dict[tuple, list[PlannedConfig]]:
    tiles: dict[tuple, list[PlannedConfig]] = {}
    for p in kept:
        tiles.setdefault(block_key(p.config), []).append(p)
    return tiles


def choose(variant: str, site: AutotuneSite, kept: list[PlannedConfig], facts: ConfigFacts,
           targets: tuple[str, ...], bench: BenchTimes | None):
    """v1's choice (v2 and v3 build on it): (PlannedConfig, candidates still needed, facts).
    Measured on the target first; else forced (one launchable tile); else refused."""
    on_target = bench is not None and targets == (bench.capability,)
    if on_target:
        choice, needs, notes = _bench_choice(site, facts, bench)
        if needs or choice is not None:
            return choice, needs, notes
    tiles = _tiles(kept)
    if len(tiles) == 1:
        return _best_raised(site, kept, facts)
    lowest = tuple(min(m, key=lambda p: (p.config.effective_num_warps, p.config.effective_num_stages)).config
                   for m in tiles.values())
    raise VariantRefused(NotForced(variant, site.ident, targets, lowest,
                                   bench_capability=bench.capability if bench is not None and not on_target else None,
                                   bench_incomplete=on_target))


def _bench_choice(site: AutotuneSite, facts: ConfigFacts, bench: BenchTimes):
    """The launchable config whose measured time is closest to the fastest launchable one at its
    worst batch (ties: source order). (None, [], []) when no launchable config was timed at
    every batch; configs the bench timed that were never compiled for the targets are asked for."""
    originals = {c.label(): c for c in site.configs or ()}
    timed: list[tuple[ConfigValue, dict[int, float]]] = []
    for label, per in bench.complete():
        c = originals.get(label)
        if c is None:
            try:
                c = ConfigValue.from_label(label)
            except ValueError:
                continue  # a label this reader cannot rebuild is no candidate
        timed.append((c, per))
    needs = [c for c, _ in timed if facts.evidence(c) is None]
    if needs:
        return None, needs, []
    ok = [(c, per) for c, per in timed if facts.launchable(c)]
    if not ok:
        return None, [], []
    fastest = {b: min(per[b] for _, per in ok) for b in bench.batches}
    order = {config_key(c): i for i, c in enumerate(site.configs or ())}
    gap, _, c = min((max(per[b] / fastest[b] - 1.0 for b in bench.batches), order.get(config_key(c), len(order)), c)
                    for c, per in ok)
    kept_at = order.get(config_key(c))
    same_kwargs = next((i for i, o in enumerate(site.configs or ()) if config_key(o)[0] == config_key(c)[0]), None)
    p = PlannedConfig(c, kept_at, None if kept_at is not None else same_kwargs, facts.evidence(c))
    return p, [], [BenchChosen(c, bench.capability, bench.metric, bench.batches, gap, bench.path)]


def _best_raised(site: AutotuneSite, kept: list[PlannedConfig], facts: ConfigFacts):
    """v1's choice: (PlannedConfig, candidates still needed, the candidates it passed over)."""
    tiles: dict[tuple, list[PlannedConfig]] = {}
    for p in kept:
        tiles.setdefault(tile_key(p.config), []).append(p)
    originals = {config_key(c): i for i, c in enumerate(site.configs or ())}
    needs: list[ConfigValue] = []
    options: list[tuple[tuple, PlannedConfig]] = []
    notes: list[Fact] = []
    for order, (tile, members) in enumerate(tiles.items()):
        low = min(members, key=lambda p: p.config.effective_num_warps)
        options.append((_rank(low, order), low))
        w = low.config.effective_num_warps * 2
        while w <= MAX_WARPS:
            cand = _raised(low.config, w)
            ev = facts.evidence(cand)
            if ev is None:
                needs.append(cand)
            elif all(e.verdict.launchable for e in ev):
                kept_at = originals.get(config_key(cand))
                p = PlannedConfig(cand, kept_at, None if kept_at is not None else low.kept, ev)
                if p.max_spills > low.max_spills:
                    notes.append(WarpsSpill(cand, p.max_spills, low.max_spills, low.config.effective_num_warps))
                else:
                    options.append((_rank(p, order), p))
            else:
                notes.append(WarpsRejected(cand, refused(ev)))
            w *= 2
    if needs:
        return None, needs, []
    best = min(options, key=lambda o: o[0])[1]
    return best, [], notes


__all__ = ["MAX_WARPS", "block_key", "choose"]
