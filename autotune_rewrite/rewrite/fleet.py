"""What a decision does to each fleet target and launch spec: the PR body's per-target lines.

Pure: from the decision (its configs, the ones guarded per target) and the check stage's
reports (which config launched where before), ``effects`` returns one ``TargetEffect`` per
target ("sm_90: unchanged, 14 configs"; "sm_120: 4 configs removed") and, with several launch
specs, one ``SpecEffect`` per (spec, target). ``output/explain_rewrite.py`` words them.
"""

from __future__ import annotations

from typing import Sequence

from autotune_rewrite.evidence import KernelReport
from autotune_rewrite.rewrite.facts import SpecEffect, TargetEffect
from autotune_rewrite.rewrite.decision import Decision, config_key


def effects(decision: Decision, reports: Sequence[KernelReport]) -> tuple[tuple[TargetEffect, ...], tuple[SpecEffect, ...]]:
    before = decision.site.configs or ()
    launched: dict[tuple, bool] = {}  # (config key, spec, arch) -> launches, before the change
    for r in reports:
        spec = r.spec.name if r.spec else "default"
        for v in r.verdicts:
            launched[(config_key(v.config), spec, v.arch)] = v.launchable
    targets, specs = [], []
    for arch in decision.targets:
        after = decision.configs_on(arch)
        kept = {config_key(p.config) for p in after}
        removed = tuple(c for c in before if config_key(c) not in kept)
        live = sum(1 for c in removed if any(launched.get((config_key(c), s, arch)) for s in decision.specs))
        targets.append(TargetEffect(arch, len(before), len(after), removed, live))
        if len(decision.specs) < 2:
            continue
        for spec in decision.specs:
            was = sum(1 for c in before if launched.get((config_key(c), spec, arch)))
            now = sum(1 for p in after for e in p.evidence
                      if e.spec == spec and e.verdict.arch == arch and e.verdict.launchable)
            specs.append(SpecEffect(spec, arch, was, len(before), now, len(after)))
    return tuple(targets), tuple(specs)


__all__ = ["effects"]
