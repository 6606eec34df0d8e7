"""Decide each variant's new config list from the compiler's verdicts (pure; nothing is edited).

A config counts as launchable only when it launches for every (launch spec, target) the check
stage compiled it for; a variant never emits a config without such evidence. Configs that are
not in the source yet (more warps, one more stage) are *candidates*: ``decide`` lists the ones
it still needs in ``Decision.needs``, the pipeline compiles them (``check.check.evaluate_configs``)
and calls ``decide`` again with their verdicts, until nothing more is needed.

The fleet the kernels serve is every target of the run (``arch`` / ``--arch``). For ``prune``
and ``v2`` a config is removed only when it launches on no target for any launch spec; one that
cannot launch on some targets only stays in the list and is ``Guarded`` there (the rewriter
emits a device-aware ``early_config_prune``, ``rewrite/device_guard``); one that cannot launch
for some launch specs only, where another spec launches it, stays (``KeptForSpec``: the
autotuner times it as inf for that spec and moves on), so an fp8 config is not lost to an fp16
spec that does not fit.

The variants (DOMAIN.md section 1, generalised):

* ``prune``: drop every config that cannot launch anywhere, guard the ones that cannot launch
  on some targets; nothing else.
* ``v1``: one config. Chosen only where the choice is forced or measured, never by occupancy
  among tiles: (a) a bench run on the target GPU saved timings (``rewrite.measured``): the
  launchable config fastest at its worst batch; else (b) exactly one tile (``block_key``: its
  block sizes) launches on every target, as in the case where the SMEM cap leaves one: that tile at the
  highest occupancy reachable by raising num_warps (powers of two up to ``MAX_WARPS``), with no
  more spills than at its lowest launchable warp count. Otherwise v1 does not apply
  (``VariantRefused``: the surviving tiles and the bench run that would decide).
  One config = the autotuner never benchmarks = CUDA-graph capture safe.
* ``v2``: the launchable configs, plus v1's choice and its num_stages+1 sibling when that
  launches without more spills and its loop pipelines (the extra stage changes the compiled
  shared memory); refused where v1 is.
* ``v3``: v1's tile at its lowest launchable warp count and at v1's warp count, plus a
  ``bs_bucket`` key (the rewriter adds the parameter and the caller change); refused where v1 is.

Every rule compares only numbers the compiler produced, so applying a variant to its own output
chooses the same configs again (idempotence); the candidate search is bounded by ``MAX_WARPS``
for that reason too.

This module applies each variant's rule (``decide``); v1's choice, which v2 and v3 build on, is
``choice``, and what a decision is made of (``Decision``, ``PlannedConfig``, the evidence per
config, ``config_key``) is ``decision``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping, Sequence

from autotune_rewrite.errors import UserError
from autotune_rewrite.evidence import KernelReport
from autotune_rewrite.model import AutotuneSite, ConfigValue
from autotune_rewrite.rewrite.measured import BenchTimes
from autotune_rewrite.rewrite.facts import (
    CANNOT_LAUNCH,
    SINGLE_CONFIG,
    TWO_WARP_COUNTS,
    BenchChosen,
    BenchmarkedAtWarmup,
    BucketKeyed,
    Dropped,
    Fact,
    Guarded,
    KeptForSpec,
    Keeper,
    KeptNotKnown,
    KeptLaunchable,
    Measured,
    NoCommonConfig,
    NoInPlaceEdit,
    NoSecondWarpCount,
    SingleConfig,
    StageAdded,
    StageRejected,
    StageNotPipelined,
    StageSpill,
    WarpsRaised,
)
from autotune_rewrite.rewrite.decision import (
    ConfigFacts, Decision, Evidence, PlannedConfig, config_key, refused, source_key, tile_key,
)
from autotune_rewrite.rewrite.choice import choose

VARIANTS = ("prune", "v1", "v2", "v3")
# Variants that keep every config some target can launch (the fleet rule): a config dead on some
# targets only stays for the others behind a device-aware guard; one dead for some launch specs
# only stays. v1 and v3 keep configs that launch everywhere by design, so they drop the rest.
FLEET_VARIANTS = ("prune", "v2")


def dead_targets(ev: Sequence[Evidence], targets: Sequence[str]) -> tuple[str, ...]:
    """The targets where a config launches for no launch spec (in ``targets``' order)."""
    return tuple(t for t in targets if not any(e.verdict.launchable for e in ev if e.verdict.arch == t))


def _measured(p: PlannedConfig) -> tuple[Measured, ...]:
    """The numbers a chosen config is explained with, per (spec, target)."""
    return tuple(Measured(e.spec, e.verdict.arch, e.verdict.occupancy.occupancy, e.verdict.occupancy.warps_per_sm,
                          e.verdict.occupancy.limiter, e.verdict.outcome.registers, e.verdict.outcome.spills,
                          e.verdict.outcome.shared_bytes) for e in p.evidence)


def _plus_stage(c: ConfigValue) -> ConfigValue:
    return replace(c, num_stages=c.effective_num_stages + 1, num_warps=c.effective_num_warps, span=None, path=None)


def decide(
    variant: str,
    site: AutotuneSite,
    reports: Sequence[KernelReport],
    candidates: Sequence[KernelReport] = (),
    bench: BenchTimes | None = None,
    kept_elsewhere: Mapping[tuple, Keeper] | None = None,
    guard_instead: NoInPlaceEdit | None = None,
) -> Decision:
    """Choose ``variant``'s config list for ``site`` from the check stage's reports.

    ``reports``: one KernelReport per launch spec (verdicts for the configs in the source, per
    target). ``candidates``: reports holding verdicts for configs ``decide`` asked for before.
    ``bench``: saved timings of this kernel (used only when measured on the one target).
    ``kept_elsewhere``: configs (``source_key``) another reader of the same written list keeps,
    by reader: for the fleet variants one dead on every target stays in the list for that
    reader and is guarded here on every target (``rewrite/shared_lists``).
    ``guard_instead``: why the list has no edit that drops this kernel's dead configs; for the
    fleet variants they then stay in it and are guarded on every target.
    Raises ``NoCommonConfig`` (a UserError) when no config can launch on every (spec, target),
    with the check stage's largest fitting tiles, and ``VariantRefused`` when v1/v2/v3 would
    have to choose among tiles without a measurement.
    """
    if variant not in VARIANTS:
        raise UserError(f"unknown variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    if site.configs is None:
        raise UserError(f"{site.ident}: configs are not statically known ({site.unresolved_reason}); nothing to rewrite")
    usable = [r for r in reports if r.problem is None and r.verdicts]
    if not usable:
        why = next((r.status.value for r in reports if r.problem is not None), "no verdicts")
        raise UserError(f"{site.ident}: cannot decide without compiled verdicts ({why})")
    facts = ConfigFacts(usable, candidates)
    targets = tuple(dict.fromkeys(a for _, a in facts.pairs))
    specs = tuple(dict.fromkeys(s for s, _ in facts.pairs))
    base = dict(variant=variant, site=site, targets=targets, specs=specs)

    kept: list[PlannedConfig] = []  # launches on every (spec, target)
    retained: list[PlannedConfig] = []  # the fleet rule's list: kept + launches somewhere for some spec
    dropped: list[Dropped] = []
    guarded: list[Guarded] = []
    partial: list[Fact] = []
    for i, c in enumerate(site.configs):
        ev = facts.evidence(c)
        if ev is None:
            raise UserError(f"{site.ident}: config {c.label()} was not compiled for every target/spec; re-run check")
        p = PlannedConfig(c, i, None, ev)
        if all(e.verdict.launchable for e in ev):
            kept.append(p)
            retained.append(p)
            continue
        if any(e.verdict.over_budget for e in ev):  # not known there: never dropped for it, never chosen
            retained.append(p)
            partial.append(KeptNotKnown(c, tuple((e.spec, e.verdict.arch, e.verdict.outcome.error)
                                                 for e in ev if e.verdict.over_budget)))
            continue
        dead = dead_targets(ev, targets)
        reader = (kept_elsewhere or {}).get(source_key(c, site.path)) if variant in FLEET_VARIANTS else None
        if len(dead) == len(targets) and (reader or (guard_instead and variant in FLEET_VARIANTS)):
            retained.append(p)
            guarded.append(Guarded(c, dead, refused(ev), kept_for=reader, in_place=None if reader else guard_instead))
            continue
        if len(dead) == len(targets) or variant not in FLEET_VARIANTS:
            dropped.append(Dropped(c, CANNOT_LAUNCH, refused(ev)))
            continue
        retained.append(p)
        if dead:
            guarded.append(Guarded(c, dead, tuple(r for r in refused(ev) if r.arch in dead)))
        live = tuple(r for r in refused(ev) if r.arch not in dead)
        if live:  # cannot launch for some spec on a target where another spec launches it
            partial.append(KeptForSpec(c, live, tuple((e.spec, e.verdict.arch) for e in ev if e.verdict.launchable)))
    if not (kept if variant not in FLEET_VARIANTS else retained):
        archs = tuple(sorted({v.arch for r in usable for v in r.verdicts}))
        raise NoCommonConfig(site.ident, archs, tuple(f for r in usable for f in r.largest_fit))
    base["guarded"] = tuple(guarded)

    lines: list[Fact] = [*dropped, *guarded, *partial]
    if variant == "prune":
        lines.append(KeptLaunchable(tuple(p.config for p in kept)))
        return Decision(**base, configs=tuple(retained), dropped=tuple(dropped), explanation=tuple(lines))
    if not kept:  # v2 builds on v1's choice, which must launch everywhere
        archs = tuple(sorted({v.arch for r in usable for v in r.verdicts}))
        raise NoCommonConfig(site.ident, archs, tuple(f for r in usable for f in r.largest_fit))

    choice, needs, notes = choose(variant, site, kept, facts, targets, bench)
    if needs:
        return Decision(**base, needs=tuple(needs))
    lines += notes

    if variant == "v1":
        if not any(isinstance(f, BenchChosen) for f in notes):
            lines.append(SingleConfig(choice.config, _measured(choice)))
        dropped += [Dropped(p.config, SINGLE_CONFIG) for p in kept if config_key(p.config) != config_key(choice.config)]
        return Decision(**base, configs=(choice,), dropped=tuple(dropped), explanation=tuple(lines))

    if variant == "v2":
        out = list(retained)
        have = {config_key(p.config) for p in out}
        if config_key(choice.config) not in have:
            out.append(choice)
            low = min(p.config.effective_num_warps for p in kept if tile_key(p.config) == tile_key(choice.config))
            lines.append(WarpsRaised(choice.config, low, _measured(choice)))
        plus = _plus_stage(choice.config)
        ev = facts.evidence(plus)
        if ev is None:
            return Decision(**base, needs=(plus,))
        if config_key(plus) in have:
            pass
        elif not all(e.verdict.launchable for e in ev):
            lines.append(StageRejected(plus, refused(ev)))
        elif _same_shared(ev, choice.evidence):
            lines.append(StageNotPipelined(plus, ev[0].verdict.outcome.shared_bytes, choice.config.effective_num_stages))
        else:
            p = PlannedConfig(plus, None, choice.kept if choice.kept is not None else choice.template, ev)
            if p.max_spills > choice.max_spills:
                lines.append(StageSpill(plus, p.max_spills, choice.max_spills, choice.config.effective_num_stages))
            else:
                out.append(p)
                lines.append(StageAdded(plus, choice.config.effective_num_stages, _measured(p)))
        lines.append(BenchmarkedAtWarmup(len(out)))
        return Decision(**base, configs=tuple(out), dropped=tuple(dropped), explanation=tuple(lines))

    # v3
    tile = tile_key(choice.config)
    lower = min((p for p in kept if tile_key(p.config) == tile), key=lambda p: p.config.effective_num_warps)
    if config_key(lower.config) == config_key(choice.config):
        return Decision(**base, skipped=NoSecondWarpCount(choice.config))
    pair = sorted([lower, choice], key=lambda p: (p.kept is None, p.kept if p.kept is not None else 0))
    dropped += [Dropped(p.config, TWO_WARP_COUNTS) for p in kept if config_key(p.config) not in {config_key(lower.config), config_key(choice.config)}]
    lines.append(BucketKeyed(lower.config, choice.config))
    return Decision(**base, configs=tuple(pair), dropped=tuple(dropped), add_bs_bucket=True, explanation=tuple(lines))


def _same_shared(ev: tuple[Evidence, ...], base: tuple[Evidence, ...]) -> bool:
    """One more stage compiled to the same shared memory on every (spec, target): nothing in the
    kernel is software-pipelined (no loop, or none whose loads the pipeliner stages)."""
    a = [e.verdict.outcome.shared_bytes for e in ev]
    b = [e.verdict.outcome.shared_bytes for e in base]
    return None not in a and a == b


