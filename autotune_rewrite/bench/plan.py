"""Which configs to bench: every original config plus what each variant would emit.

The variants' configs come from the rewrite pipeline's own decision (``rewrite.diff.decide_compiled``
over ``check_stage.check``), for the target GPUs of the settings or ``--arch``, so bench times
exactly the lists ``diff``/``apply`` would write. Nothing is decided here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from autotune_rewrite.errors import UserError
from autotune_rewrite.model import AutotuneSite, ConfigValue
from autotune_rewrite.rewrite.facts import VariantRefused
from autotune_rewrite.rewrite.decision import config_key
from autotune_rewrite.rewrite.variants import VARIANTS


@dataclass(frozen=True)
class BenchPlan:
    root: str
    site: AutotuneSite
    targets: tuple[str, ...]
    triton_version: str
    configs: tuple[ConfigValue, ...]  # distinct; originals first, in source order
    original: tuple[str, ...]  # labels written in the source
    launchable: tuple[str, ...]  # labels that launch on every target (per the compiles)
    variants: dict[str, tuple[str, ...]]  # variant -> labels it emits
    notes: tuple[str, ...] = ()


def parse_config(text: str) -> ConfigValue:
    """An ``--also`` config from its label, e.g. ``"BLOCK_T=16 w8 s3"`` (``ConfigValue.from_label``)."""
    try:
        return ConfigValue.from_label(text)
    except ValueError as exc:
        if str(exc) == "num_warps and num_stages":
            raise UserError(f"--also {text!r}: give num_warps and num_stages, e.g. \"BLOCK_T=16 w8 s3\"") from None
        raise UserError(f"--also {text!r}: write a config as its label, e.g. \"BLOCK_T=16 w8 s3\"") from None


def plan(path: Path, kernel: str, variants: Sequence[str], archs: Sequence[str] | None = None,
         workers: int | None = None, progress=None, also: Sequence[ConfigValue] = (), settings=None) -> BenchPlan:
    from autotune_rewrite.check import check as check_stage
    from autotune_rewrite.rewrite.diff import decide_compiled

    for v in variants:
        if v not in VARIANTS:
            raise UserError(f"unknown variant {v!r}; choose from {', '.join(VARIANTS)}")
    result = check_stage.check(path, kernel=kernel, archs=archs, workers=workers, progress=progress, settings=settings)
    sites = {r.site.ident: r.site for r in result.reports}
    if not sites:
        raise UserError(f"{path}: no autotuned kernel matches --kernel {kernel}")
    if len(sites) > 1:
        raise UserError(f"--kernel {kernel} matches {len(sites)} kernels ({', '.join(sorted(sites))}); give path::name")
    (ident, site), = sites.items()
    reports = [r for r in result.reports if r.site.ident == ident]
    unjudged = [r for r in reports if not r.status.judged]
    if unjudged:  # bench times one kernel: without its verdicts there is nothing to compare
        from autotune_rewrite.output.outcomes import problem_text

        raise UserError(f"{ident}: cannot be checked ({unjudged[0].status.value}): {problem_text(unjudged[0])}")
    root = Path(result.root)
    configs: dict[tuple, ConfigValue] = {config_key(c): c for c in site.configs or ()}
    verdicts = [v for r in reports for v in r.verdicts]
    launchable = {k for k in configs if all(v.launchable for v in verdicts if config_key(v.config) == k)}
    chosen: dict[str, tuple[str, ...]] = {}
    notes = []
    for v in variants:
        try:
            decision, _ = decide_compiled(v, site, reports, root, result.targets, workers, None, True)
        except VariantRefused as refused:  # several tiles and no timings yet: this bench decides
            from autotune_rewrite.output.explain_rewrite import fact

            notes.append(fact(refused.fact))
            continue
        if decision.skipped:
            from autotune_rewrite.output.explain_rewrite import fact  # the words live in output/

            notes.append(f"{v}: not applicable ({fact(decision.skipped)})")
            continue
        for p in decision.configs:
            configs.setdefault(config_key(p.config), p.config)
            launchable.add(config_key(p.config))  # a variant only emits configs proven to launch
        chosen[v] = tuple(p.config.label() for p in decision.configs)
    extra = [c for c in also if config_key(c) not in configs]
    if extra:  # timed for the exhaustive best; compiled for the targets so the table can say if they launch there
        verdicts = [v for r in reports for v in check_stage.evaluate_configs(root, site, r.spec, extra, result.targets,
                                                                             workers=workers)]
        for c in extra:
            configs[config_key(c)] = c
            if all(v.launchable for v in verdicts if config_key(v.config) == config_key(c)):
                launchable.add(config_key(c))
    return BenchPlan(
        root=str(root),
        site=site,
        targets=tuple(t.arch.name for t in result.targets),
        triton_version=result.triton_version,
        configs=tuple(configs.values()),
        original=tuple(c.label() for c in site.configs or ()),
        launchable=tuple(c.label() for k, c in configs.items() if k in launchable),
        variants=chosen,
        notes=tuple(notes),
    )


__all__ = ["BenchPlan", "parse_config", "plan"]
