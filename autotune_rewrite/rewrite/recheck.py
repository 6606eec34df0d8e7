"""The ``diff`` pipeline's last step: compile the rewritten kernels again.

``recheck_kernels`` writes the rewritten files into a private copy of the scan root, scans it
again and compiles every rewritten kernel with its new configs, per target where a device
guard makes them differ: each must parse, carry exactly the decided configs, launch where the
decision expected it to, and (a branch of a kernel whose configs are chosen per target) leave
the other targets' configs as they were. Separate from ``diff`` because it is a pipeline of its
own (copy, scan, compile) that proves a rewrite rather than making one."""

from __future__ import annotations

import shutil
from dataclasses import replace

from autotune_rewrite.check import check as check_stage
from autotune_rewrite.errors import UserError
from autotune_rewrite.evidence import KernelReport
from autotune_rewrite.isolate.kernel_loader import KernelLoadError
from autotune_rewrite.locate.kernel_names import after_edit
from autotune_rewrite.model import AutotuneSite
from autotune_rewrite.rewrite import bucket
from autotune_rewrite.rewrite.facts import RecheckRefused
from autotune_rewrite.rewrite.rewrite_run import KernelRewrite
from autotune_rewrite.rewrite.decision import config_key

_IGNORE = shutil.ignore_patterns(".git", "__pycache__", "*.pyc", ".venv", "venv", "node_modules", ".autotune-rewrite-cache")


def recheck_kernels(root, kernels, changes, targets, edges, workers, cache_dir, use_cache, settings):
    """Write the rewritten files into a private copy of ``root``, scan it again and compile
    every rewritten kernel with its new configs: each must parse, carry exactly the decided
    configs, and launch. -> (kernels that passed, [(ident, the error, the same error when it is a bug of ours, else None)])."""
    from autotune_rewrite import tempdirs
    from autotune_rewrite.locate.scan import scan

    with tempdirs.temp_dir("recheck") as tmp:
        copy = tmp / "root"
        shutil.copytree(root, copy, ignore=_IGNORE, symlinks=True)
        for c in changes:
            with open(copy / c.path, "w", encoding="utf-8", newline="") as fh:
                fh.write(c.after)
        rescanned = scan(copy, jobs=1, settings=settings)  # the copy's settings are the root's
        # A branch rewritten in this run (a list its kernel's branches share, decided together)
        # must show its own decision; the other branches what they showed before.
        branches = {(kr.site.ident, kr.site.view_targets): kr.decision for kr in kernels if kr.changes}
        out, lost = [], []
        for kr in kernels:
            if not kr.changes:
                out.append(kr)
                continue
            try:
                edited = next((c for c in changes if c.path == kr.site.path), None)
                again = _recheck_one(copy, kr, rescanned.sites, targets, workers, cache_dir, use_cache, edited, branches)
            except UserError as exc:
                lost.append((kr.site.ident, exc, None))
                continue
            except Exception as exc:  # noqa: BLE001 - a rewrite bug is that kernel's outcome
                lost.append((kr.site.ident, exc, exc))
                continue
            out.append(replace(kr, recheck=again))
        return out, lost


def _recheck_one(copy, kr: KernelRewrite, sites, targets, workers, cache_dir, use_cache,
                 edited=None, branches=None) -> tuple[KernelReport, ...]:
    d = kr.decision
    ident = d.site.ident
    # A twin (``path::name:LINE``) may have moved: ``after_edit`` follows it through the edit.
    new = after_edit(sites, d.site, edited and edited.before, edited and edited.after)
    branch = d.site.view_targets
    if new is not None and branch:  # a branch: the others must read what they read before
        _same_elsewhere(ident, d.site, kr, new, branch, branches or {})
        # Each of the branch's targets is checked on its own view (a device guard may split them).
        targets = [t for t in targets if t.name in branch]
    if new is None or (new.configs is None and not new.target_dependent):
        raise RuntimeError(f"{ident}: the rewritten file no longer yields the autotune site (rewrite bug)")
    specs = []
    for r in kr.reports:
        spec = r.spec
        if d.add_bs_bucket and bucket.PARAM not in dict(spec.types):
            spec = replace(spec, types=spec.types + ((bucket.PARAM, "i32"),))
        specs.append(spec)
    # A config may stay where it cannot launch for one spec when another spec launches it (the
    # fleet rule): only what the decision expected to launch must launch again.
    expected = {(config_key(p.config), e.spec, e.verdict.arch): e.verdict.launchable for p in d.configs for e in p.evidence}
    reports = []
    for views, mine in _recheck_views(new, targets):
        # A device guard: each target's autotuner must see the decided configs less those guarded there.
        want = [config_key(p.config) for p in d.configs_on(mine[0].arch.name)]
        got = [config_key(c) for c in views.configs or ()]
        if views.configs is None or got != want:
            raise RuntimeError(f"{ident}: rewritten configs {got} on {mine[0].name} differ from the decided {want} (rewrite bug)")
        for spec in specs:
            try:
                verdicts = check_stage.evaluate_configs(
                    copy, views, spec, views.configs, mine, workers=workers, cache_dir=cache_dir, use_cache=use_cache
                )
            except KernelLoadError as exc:
                raise UserError(f"{ident}: the rewritten kernel could not be compiled again: {exc}") from None
            for v in verdicts:
                if not v.launchable and expected.get((config_key(v.config), spec.name, v.arch), True):
                    raise RecheckRefused(ident, v.config, v.arch, v.refusal)
            reports.append(KernelReport(site=views, spec=spec, verdicts=tuple(verdicts)))
    return tuple(reports)


def _recheck_views(new: AutotuneSite, targets):
    """(site as some targets see it, those targets): one pair for all targets unless the
    rewritten configs depend on the target (a device guard), then one per target."""
    if not new.target_dependent:
        return [(new, tuple(targets))]
    return [(new.on_targets(e) if (e := new.entry_for(t.name)) else replace(new, configs=None), (t,)) for t in targets]


def _same_elsewhere(ident, view: AutotuneSite, kr: "KernelRewrite", new: AutotuneSite, branch, branches) -> None:
    """The targets outside ``branch`` see the same configs after the edit as before, or, where
    their own branch is rewritten too, what its decision chose."""
    def want(e, t):
        d = branches.get((ident, tuple(e.targets)))
        return [config_key(p.config) for p in d.configs_on(t)] if d is not None else [
            config_key(c) for c in (e.configs or ())]

    before = {t: want(e, t) for e in kr.others for t in e.targets}
    for target, keys in before.items():
        entry = new.entry_for(target)
        after = [config_key(c) for c in (entry.configs or ())] if entry is not None else None
        if after != keys:
            raise RuntimeError(f"{ident}: editing the list for {', '.join(branch)} changed the configs "
                               f"{target} sees (rewrite bug)")


__all__ = ["recheck_kernels"]
