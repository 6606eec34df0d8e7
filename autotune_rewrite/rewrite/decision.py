"""What a variant's decision is made of, and which configs are the same config.

``config_key``/``tile_key`` say when two configs are the same (where they are written does not
count); ``Evidence`` is one compiled verdict of a config, ``ConfigFacts`` every verdict of the
reports grouped by config over their (launch spec, target) pairs, ``refused`` the pairs where a
config cannot launch; ``PlannedConfig`` and ``Decision`` are the new list a variant chose.

Separate from the deciding (``variants``, ``choice``) because the rewriter (``transform``,
``configs``, ``device_guard``), the fleet summary, the re-check, ``bench`` and ``output`` read
decisions and compare configs without deciding anything."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from autotune_rewrite.evidence import ConfigVerdict, KernelReport
from autotune_rewrite.model import AutotuneSite, ConfigValue
from autotune_rewrite.rewrite.facts import Dropped, Fact, Guarded, NoSecondWarpCount, Refused


def config_key(c: ConfigValue) -> tuple:
    """What makes two configs the same config (where they are written does not)."""
    return (
        tuple(sorted((str(k), repr(v)) for k, v in c.kwargs.items())),
        c.effective_num_warps,
        c.effective_num_stages,
        c.effective_num_ctas,
        c.maxnreg,
        c.has_pre_hook,
    )


def source_key(c: ConfigValue, site_path: str) -> tuple:
    """One written config: the same config (``config_key``) made in the same place (its call in
    its file, or the loop elements that made it). Kernels reading one list share these keys."""
    where = (c.path or site_path, c.span) if c.span is not None else None  # generated: its choices say where
    return config_key(c), where, c.choices


def tile_key(c: ConfigValue) -> tuple:
    """A config without its warp count: what raising num_warps keeps."""
    k = config_key(c)
    return (k[0],) + k[2:]


@dataclass(frozen=True)
class Evidence:
    """One compiled fact about a config: (launch spec, target) -> verdict."""

    spec: str
    verdict: ConfigVerdict


@dataclass(frozen=True)
class PlannedConfig:
    config: ConfigValue
    kept: int | None  # index in site.configs: the element stays exactly as written
    template: int | None  # index in site.configs this new config is derived from (same tile)
    evidence: tuple[Evidence, ...]

    @property
    def min_occupancy(self) -> float:
        return min(e.verdict.occupancy.occupancy for e in self.evidence if e.verdict.occupancy)

    @property
    def max_spills(self) -> int:
        return max((e.verdict.outcome.spills or 0) for e in self.evidence)


@dataclass(frozen=True)
class Decision:
    variant: str
    site: AutotuneSite
    targets: tuple[str, ...]  # ("sm_120",) or every arch compiled for
    specs: tuple[str, ...]
    configs: tuple[PlannedConfig, ...] = ()  # the new list, in order
    dropped: tuple[Dropped, ...] = ()
    guarded: tuple[Guarded, ...] = ()  # in ``configs``, but pruned on some targets by a device guard
    add_bs_bucket: bool = False
    explanation: tuple[Fact, ...] = ()  # in order; output/explain_rewrite.py words each
    needs: tuple[ConfigValue, ...] = ()  # candidates to compile before deciding
    skipped: NoSecondWarpCount | None = None  # the variant does not apply to this kernel (why)

    def configs_on(self, arch: str) -> tuple[PlannedConfig, ...]:
        """The configs ``arch``'s autotuner times: ``configs`` less those guarded there."""
        out = {config_key(g.config) for g in self.guarded if arch in g.archs}
        return tuple(p for p in self.configs if config_key(p.config) not in out)

    @property
    def changes_configs(self) -> bool:
        originals = self.site.configs or ()
        return [c.kept for c in self.configs] != list(range(len(originals)))


class ConfigFacts:
    """Verdicts grouped by config, over every (spec, target) pair the reports cover."""

    def __init__(self, reports: Sequence[KernelReport], candidates: Sequence[KernelReport]):
        self.pairs: list[tuple[str, str]] = []
        self.by_config: dict[tuple, list[Evidence]] = {}
        for is_source, group in ((True, reports), (False, candidates)):
            for r in group:
                spec = r.spec.name if r.spec else "default"
                for v in r.verdicts:
                    if is_source and (spec, v.arch) not in self.pairs:
                        self.pairs.append((spec, v.arch))
                    self.by_config.setdefault(config_key(v.config), []).append(Evidence(spec, v))

    def evidence(self, c: ConfigValue) -> tuple[Evidence, ...] | None:
        """One verdict per (spec, target), or None when some pair was not compiled yet."""
        got = {(e.spec, e.verdict.arch): e for e in self.by_config.get(config_key(c), [])}
        if not all(p in got for p in self.pairs):
            return None
        return tuple(got[p] for p in self.pairs)

    def launchable(self, c: ConfigValue) -> bool:
        ev = self.evidence(c)
        return ev is not None and all(e.verdict.launchable for e in ev)


def refused(ev: tuple[Evidence, ...]) -> tuple[Refused, ...]:
    return tuple(Refused(e.spec, e.verdict.arch, e.verdict.refusal) for e in ev if not e.verdict.launchable)


__all__ = ["ConfigFacts", "Decision", "Evidence", "PlannedConfig", "config_key", "refused", "tile_key"]
