"""The ``diff`` pipeline: check -> decide (compiling candidates) -> rewrite -> re-check.

``run_rewrites`` is pure with respect to the user's files: it reads them, and writes only into
a private temporary copy where the rewritten kernels are scanned and compiled again (the
rewrite must parse, carry exactly the decided configs, and launch with each of them). The
``apply`` command (``branches``) runs the same pipeline inside a temporary worktree.
"""

from __future__ import annotations

import shlex
import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from typing import Sequence

from autotune_rewrite.changed import Selection
from autotune_rewrite.check import check as check_stage
from autotune_rewrite.rewrite.unified_diff import combined_diff
from autotune_rewrite.errors import ExitCode, UserError
from autotune_rewrite.evidence import KernelReport
from autotune_rewrite.isolate.kernel_loader import KernelLoadError
from autotune_rewrite.internal_errors import internal_error
from autotune_rewrite.locate.kernel_names import after_edit
from autotune_rewrite.model import AutotuneSite
from autotune_rewrite.outcomes import Report, Status
from autotune_rewrite.rewrite import bucket, measured
from autotune_rewrite.rewrite.facts import (
    Failed, InPlaceRefused, LaunchesUnseen, NoSecondWarpCount, Note, RecheckRefused, VariantRefused,
)
from autotune_rewrite.rewrite.transform import FileChange, rewrite, rewrite_all
from autotune_rewrite.rewrite.variants import VARIANTS, Decision, config_key, decide

MAX_ROUNDS = 4  # candidate rounds: v1 raises warps (1), v2 adds a stage (2); one spare


@dataclass(frozen=True)
class KernelRewrite:
    """One kernel under one variant: the decision, its evidence and its edits."""

    site: AutotuneSite
    decision: Decision
    reports: tuple[KernelReport, ...]  # the source's configs, one report per launch spec
    candidates: tuple[KernelReport, ...]  # configs compiled for the decision (not in the source)
    changes: tuple[FileChange, ...]  # this kernel alone (paths relative to the scan root)
    notes: tuple[Note, ...] = ()
    recheck: tuple[KernelReport, ...] = ()  # the rewritten kernel compiled with its new configs
    others: tuple = ()  # a branch's kernel: the site's other TargetConfigs, to prove them unchanged


@dataclass(frozen=True)
class RewriteRun:
    root: str  # the scanned folder
    prefix: str  # root relative to the git top level ("" outside git): diff paths start with it
    variant: str
    targets: tuple[str, ...]
    kernels: tuple[KernelRewrite, ...]
    skipped: tuple[tuple[str, NoSecondWarpCount], ...]  # (kernel ident, why the variant does not apply)
    changes: tuple[FileChange, ...]  # every kernel together, paths relative to ``root``
    notes: tuple[Note, ...]
    triton_version: str
    command: str  # how to reproduce
    buckets: tuple[int, ...] = bucket.DEFAULT_BUCKETS  # v3's bucket edges, as used
    # Every kernel x launch spec's outcome (check's reports; a site whose diff stage hit a bug
    # of ours is replaced by its internal-error report).
    reports: tuple[KernelReport, ...] = ()
    failed: tuple[tuple[str, Failed], ...] = ()  # (kernel ident, why): a change was needed but cannot be made
    changed: Selection | None = None  # ``--changed-since``: the sites judged and rewritten, and why

    def report(self, gate: bool = True, strict: bool = False) -> Report:
        """``found``: a change, a kernel that needs one but cannot get it, or no launchable config."""
        found = bool(self.changes or self.failed) or any(r.status is Status.NO_LAUNCHABLE for r in self.reports)
        return Report(tuple(r.outcome for r in self.reports), found=found, gate=gate, strict=strict)

    @property
    def diff(self) -> str:
        return combined_diff(replace(c, path=self.prefix + c.path) for c in self.changes)

    @property
    def exit_code(self) -> ExitCode:
        """``diff --check``: 1 when the variant would change something (see ``report``)."""
        return self.report().exit_code


def git_prefix(root: Path) -> str:
    """``root`` relative to its git top level, with a trailing slash ('' at the top or outside git)."""
    from autotune_rewrite import gitrepo

    return gitrepo.prefix(root)


def reproduce_command(variant: str, path: str, kernel: str | None, archs: Sequence[str], batch_expr: str | None,
                      buckets: Sequence[int] | None) -> str:
    parts = ["autotune-rewrite", "diff", "--variant", variant]
    if kernel:
        parts += ["--kernel", kernel]
    for a in archs:
        parts += ["--arch", a]
    if batch_expr:
        parts += ["--batch-expr", batch_expr]
    if buckets:
        parts += ["--buckets", ",".join(str(b) for b in buckets)]
    return shlex.join(parts + [path])


def _read(root: Path):
    def read(path: str) -> str:
        with open(root / path, encoding="utf-8", newline="") as fh:  # keep CRLF as written
            return fh.read()

    return read


def decide_compiled(variant, site, reports, root, targets, workers, cache_dir, use_cache, bench=None):
    """``variants.decide``, with the candidate configs it asks for compiled for ``targets``
    (a round per ask): -> (the decision, the candidates' reports). Bench planning decides the
    same way, so the configs it times are the ones the rewrite would emit."""
    candidates: list[KernelReport] = []
    for _ in range(MAX_ROUNDS):
        decision = decide(variant, site, reports, candidates, bench)
        if not decision.needs:
            return decision, tuple(candidates)
        for report in reports:
            verdicts = check_stage.evaluate_configs(
                root, site, report.spec, decision.needs, targets, workers=workers, cache_dir=cache_dir, use_cache=use_cache
            )
            candidates.append(KernelReport(site=site, spec=report.spec, verdicts=tuple(verdicts)))
    raise RuntimeError(f"{site.ident}: {variant} still needs candidates after {MAX_ROUNDS} rounds")


def run_rewrites(
    path: Path | str,
    variant: str,
    kernel: str | None = None,
    archs: Sequence[str] | None = None,
    batch_expr: str | None = None,
    buckets: Sequence[int] | None = None,
    workers: int | None = None,
    recheck: bool = True,
    cache_dir: Path | None = None,
    use_cache: bool = True,
    display_path: str | None = None,
    assume_dtype: str | None = None,
    progress=None,
    assume: Sequence[tuple[str, Any]] = (),
    exact: bool = False,
    changed_since: str | None = None,
    allow_unseen_launches: bool = False,
    env: Sequence[tuple[str, str]] = (),
    executor: tuple[str | None, str | None, str | None] = (None, None, None),
    inline_configs: bool | None = None,
) -> RewriteRun:
    """Decide and rewrite every autotuned kernel under ``path`` (or ``kernel``) for ``variant``.

    Raises UserError (exit 2, nothing written) for bad run-level input (unknown kernel or
    variant, bad buckets). Per kernel, nothing raises: a kernel that was not judged keeps its
    outcome, one with no launchable config, a refused variant (v3 with launches it cannot follow,
    unless ``allow_unseen_launches``) or an edit that cannot be made is in ``failed``, a
    bug of ours becomes its internal-error report; every other kernel is still rewritten.
    Configs are edited where they are written; ``inline_configs`` (default: the setting
    ``variants.inline_configs``) writes ``configs=`` out as a literal list where that is not exact.
    A kernel whose configs are chosen per target is rewritten per branch: only the list the
    targets of that branch take is edited, never inlined (the other branches stay as written).
    """
    if variant not in VARIANTS:
        raise UserError(f"unknown variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    from autotune_rewrite.settings import load_settings

    path = Path(path)
    settings = load_settings(path).with_env(env).with_executor(*executor)  # (--executor, --address, --fallback)
    edges = bucket.parse_buckets(buckets if buckets is not None else (settings.variants.buckets or bucket.DEFAULT_BUCKETS))
    inline = settings.variants.inline_configs if inline_configs is None else inline_configs
    result = check_stage.check(path, kernel=kernel, archs=archs, workers=workers, assume_dtype=assume_dtype,
                               cache_dir=cache_dir, use_cache=use_cache, progress=progress, settings=settings,
                               assume=assume, exact=exact, changed_since=changed_since)
    root = Path(result.root)
    targets = result.targets
    settings = settings.with_arch([t.name for t in targets])  # the re-check's scan answers as check's did
    # One group per site, or per branch of a site whose configs are chosen per target.
    by_site: dict[tuple[str, tuple[str, ...]], list[KernelReport]] = {}
    sites: dict[str, AutotuneSite] = {}
    views: dict[tuple[str, tuple[str, ...]], AutotuneSite] = {}
    for r in result.reports:
        group = (r.site.ident, r.site.view_targets)
        by_site.setdefault(group, []).append(r)
        sites[r.site.ident] = r.site
        views[group] = r.site
    everyone = result.sites

    read = _read(root)
    python_texts = _python_texts(root)
    kernels: list[KernelRewrite] = []
    skipped: list[tuple[str, NoSecondWarpCount]] = []
    failed: list[tuple[str, Failed]] = []
    bugs: dict[str, KernelReport] = {}  # site ident -> its internal-error report
    for (ident, branch), reports in by_site.items():
        site = views[(ident, branch)]
        # Only a kernel judged for every launch spec is rewritten; the others keep their
        # outcome (a config judged for one spec only proves nothing for the next).
        if not all(r.status.judged and r.status is not Status.NO_LAUNCHABLE for r in reports):
            continue
        # A branch's candidates are compiled for the targets that take it.
        mine = tuple(t for t in targets if t.name in branch) if branch else targets
        try:
            # A bench saved in this checkout may decide what v1/v2/v3 would otherwise refuse.
            bench = measured.saved_for(root, site) if variant != "prune" else None
            decision, cands = decide_compiled(variant, site, reports, root, mine, workers, cache_dir, use_cache, bench)
            if decision.skipped:
                skipped.append((ident, decision.skipped))
                continue
            if decision.add_bs_bucket and not allow_unseen_launches:
                _refuse_unseen(root, site, settings)
            # An inline list would replace every branch: a branch is only edited in place.
            own = rewrite(decision, read, batch_expr=batch_expr, buckets=edges, sites=everyone,
                          inline=inline and not branch, repo_texts=python_texts)
        except InPlaceRefused as exc:
            failed.append((ident, Failed(exc, branch, site.data_files, inline_hint=not branch)))
            continue
        except UserError as exc:  # cannot be changed (no common launchable config, a refused variant, an edit)
            failed.append((ident, Failed(exc, branch)))
            continue
        except Exception as exc:  # noqa: BLE001 - one kernel's bug is its outcome
            bugs[ident] = KernelReport(site, None, problem=internal_error(ident, exc, f"deciding {variant}", cache_dir))
            continue
        others = ()
        if branch:
            whole = next((s for s in everyone if s.ident == ident), None)
            others = tuple(e for e in (whole.configs_by_target if whole else ()) if not set(e.targets) & set(branch))
        kernels.append(KernelRewrite(site, decision, tuple(reports), cands, own.changes, own.notes, others=others))

    changes, notes = _combined(kernels, read, batch_expr, edges, everyone, inline, python_texts)
    if recheck and changes:
        kernels, lost = _recheck(root, kernels, changes, targets, edges, workers, cache_dir, use_cache, settings)
        for ident, why, bug in lost:
            if bug is not None:
                bugs[ident] = KernelReport(sites[ident], None, problem=internal_error(ident, bug, "re-checking the rewrite", cache_dir))
            else:
                failed.append((ident, Failed(why)))
        if lost:  # their edits must not reach the diff
            changes, notes = _combined(kernels, read, batch_expr, edges, everyone, inline, python_texts)
    outcomes = []
    for r in result.reports:
        if r.site.ident in bugs:
            if bugs[r.site.ident] not in outcomes:
                outcomes.append(bugs[r.site.ident])
        else:
            outcomes.append(r)
    shown = display_path if display_path is not None else str(path)
    return RewriteRun(
        root=str(root),
        prefix=git_prefix(root),
        variant=variant,
        targets=tuple(t.arch.name for t in targets),
        kernels=tuple(kernels),
        skipped=tuple(skipped),
        changes=changes,
        notes=notes,
        triton_version=result.triton_version,
        command=reproduce_command(variant, shown, kernel, archs or (), batch_expr, buckets),
        buckets=edges,
        reports=tuple(outcomes),
        failed=tuple(failed),
        changed=result.changed,
    )


def _refuse_unseen(root: Path, site: AutotuneSite, settings) -> None:
    """v3 changes the kernel's signature: refuse when a use of it may launch it unseen."""
    from autotune_rewrite.locate.unseen_launches import unseen_launches

    unseen = unseen_launches(root, site, settings.exclude)
    if unseen:
        raise VariantRefused(LaunchesUnseen(site.ident, unseen))


def _combined(kernels: Sequence[KernelRewrite], read, batch_expr, edges, sites=(), inline=False, repo_texts=None):
    """One set of edits per file for the kernels that are rewritten."""
    if len(kernels) == 1:  # the kernel's own edits are the combined ones
        return kernels[0].changes, kernels[0].notes
    return rewrite_all([k.decision for k in kernels], read, batch_expr=batch_expr, buckets=edges, sites=sites,
                       inline=inline and not any(k.site.view_targets for k in kernels), repo_texts=repo_texts)


def _python_texts(root: Path):
    """Every Python file of the checkout (git's view), read once when first asked: an inline list
    removes a helper only when no other file names it."""
    cache: dict[str, str] = {}

    def texts() -> dict[str, str]:
        if not cache:
            from autotune_rewrite.files import discover

            # Not the scan's excludes: an excluded file may still call the helper.
            for rel in discover(root).files:
                if rel.endswith(".py"):
                    try:
                        cache[rel] = (root / rel).read_bytes().decode("utf-8", errors="replace")
                    except OSError:
                        cache[rel] = ""
        return cache

    return texts


# --------------------------------------------------------------------------- re-check
_IGNORE = shutil.ignore_patterns(".git", "__pycache__", "*.pyc", ".venv", "venv", "node_modules", ".autotune-rewrite-cache")


def _recheck(root, kernels, changes, targets, edges, workers, cache_dir, use_cache, settings):
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
        out, lost = [], []
        for kr in kernels:
            if not kr.changes:
                out.append(kr)
                continue
            try:
                edited = next((c for c in changes if c.path == kr.site.path), None)
                again = _recheck_one(copy, kr, rescanned.sites, targets, workers, cache_dir, use_cache, edited)
            except UserError as exc:
                lost.append((kr.site.ident, exc, None))
                continue
            except Exception as exc:  # noqa: BLE001 - a rewrite bug is that kernel's outcome
                lost.append((kr.site.ident, exc, exc))
                continue
            out.append(replace(kr, recheck=again))
        return out, lost


def _recheck_one(copy, kr: KernelRewrite, sites, targets, workers, cache_dir, use_cache,
                 edited=None) -> tuple[KernelReport, ...]:
    d = kr.decision
    ident = d.site.ident
    # A twin (``path::name:LINE``) may have moved: ``after_edit`` follows it through the edit.
    new = after_edit(sites, d.site, edited and edited.before, edited and edited.after)
    branch = d.site.view_targets
    if new is not None and branch:  # a branch: the others must read what they read before
        _same_elsewhere(ident, d.site, kr, new, branch)
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


def _same_elsewhere(ident, view: AutotuneSite, kr: "KernelRewrite", new: AutotuneSite, branch) -> None:
    """The targets outside ``branch`` see the same configs after the edit as before."""
    before = {t: [config_key(c) for c in (e.configs or ())] for e in kr.others for t in e.targets}
    for target, keys in before.items():
        entry = new.entry_for(target)
        after = [config_key(c) for c in (entry.configs or ())] if entry is not None else None
        if after != keys:
            raise RuntimeError(f"{ident}: editing the list for {', '.join(branch)} changed the configs "
                               f"{target} sees (rewrite bug)")


__all__ = ["KernelRewrite", "RewriteRun", "decide_compiled", "git_prefix", "reproduce_command", "run_rewrites"]
