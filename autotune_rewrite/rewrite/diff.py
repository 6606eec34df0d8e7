"""The ``diff`` pipeline: check -> decide (compiling candidates) -> rewrite -> re-check.

``run_rewrites`` is pure with respect to the user's files: it reads them, and writes only into
a private temporary copy where the rewritten kernels are scanned and compiled again (the
rewrite must parse, carry exactly the decided configs, and launch with each of them). The
``apply`` command (``branches``) runs the same pipeline inside a temporary worktree. The
re-check is its own module (``recheck``), and so are the types the pipeline gives
(``rewrite_run``: ``RewriteRun``, ``KernelRewrite``).
"""

from __future__ import annotations

import shlex
from functools import partial
from pathlib import Path
from typing import Any
from typing import Sequence

from autotune_rewrite.check import check as check_stage
from autotune_rewrite.errors import UserError
from autotune_rewrite.evidence import KernelReport
from autotune_rewrite.internal_errors import internal_error
from autotune_rewrite.model import AutotuneSite
from autotune_rewrite.outcomes import Status
from autotune_rewrite.rewrite import bucket, measured, shared_lists
from autotune_rewrite.rewrite.decision import source_key
from autotune_rewrite.rewrite.facts import Failed, InPlaceRefused, LaunchesUnseen, NoSecondWarpCount, VariantRefused
from autotune_rewrite.rewrite.recheck import recheck_kernels
from autotune_rewrite.rewrite.rewrite_run import KernelRewrite, RewriteRun
from autotune_rewrite.rewrite.transform import rewrite, rewrite_all
from autotune_rewrite.rewrite.variants import FLEET_VARIANTS, VARIANTS, decide
from autotune_rewrite.settings.formatter import line_lengths

MAX_ROUNDS = 4  # candidate rounds: v1 raises warps (1), v2 adds a stage (2); one spare


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
    executor: tuple[str | None, ...] = (None, None, None, None, None),
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
    settings = load_settings(path).with_env(env).with_executor(*executor)  # (--executor, --address, --fallback, --compile-timeout, --compile-memory)
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
    prefix = git_prefix(root)
    top = root.parents[prefix.count("/") - 1] if prefix else root  # the checkout: formatter settings stop there
    widths = line_lengths(top, root)
    python_texts = _python_texts(root)
    kernels: list[KernelRewrite] = []
    skipped: list[tuple[str, NoSecondWarpCount]] = []
    failed: list[tuple[str, Failed]] = []
    bugs: dict[str, KernelReport] = {}  # site ident -> its internal-error report
    # Every kernel is decided before any list is edited: a list several kernels read loses only
    # what all of them drop, and each guards the rest for itself (shared_lists).
    # group -> (decision, candidates, bench, what other readers keep)
    decided: dict[tuple[str, tuple[str, ...]], tuple] = {}
    for group, reports in by_site.items():
        site = views[group]
        if not _rewritable(variant, reports):
            continue
        # A branch's candidates are compiled for the targets that take it.
        mine = tuple(t for t in targets if t.name in group[1]) if group[1] else targets
        try:
            # A bench saved in this checkout may decide what v1/v2/v3 would otherwise refuse.
            bench = measured.saved_for(root, site) if variant != "prune" else None
            decided[group] = (*decide_compiled(variant, site, reports, root, mine, workers, cache_dir, use_cache, bench),
                              bench, {})
        except UserError as exc:  # cannot be changed (no common launchable config, a refused variant)
            failed.append((group[0], Failed(exc, group[1])))
        except Exception as exc:  # noqa: BLE001 - one kernel's bug is its outcome
            bugs[group[0]] = KernelReport(site, None, problem=internal_error(group[0], exc, f"deciding {variant}", cache_dir))
    decided = _shared_lists_decided(variant, decided, by_site, everyone)
    decisions = {group: d for group, (d, *_) in decided.items()}

    def rewritten(d, branch):  # an inline list would replace every branch: a branch is only edited in place
        return rewrite(d, read, batch_expr=batch_expr, buckets=edges, sites=everyone, inline=inline and not branch,
                       repo_texts=python_texts, decided=decisions, line_length=widths)

    for group, (decision, cands, bench, keep) in decided.items():
        ident, branch = group
        site = views[group]
        try:
            if decision.skipped:
                skipped.append((ident, decision.skipped))
                continue
            if decision.add_bs_bucket and not allow_unseen_launches:
                _refuse_unseen(root, site, settings)
            decision, own = _rewrite_or_guard(variant, decision, by_site[group], cands, bench, keep,
                                              partial(rewritten, branch=branch))
            decisions[group] = decision
        except InPlaceRefused as exc:
            failed.append((ident, Failed(exc, branch, site.data_files, inline_hint=not branch)))
            continue
        except UserError as exc:  # an edit that cannot be made
            failed.append((ident, Failed(exc, branch)))
            continue
        except Exception as exc:  # noqa: BLE001 - one kernel's bug is its outcome
            bugs[ident] = KernelReport(site, None, problem=internal_error(ident, exc, f"rewriting {variant}", cache_dir))
            continue
        others = ()
        if branch:
            whole = next((s for s in everyone if s.ident == ident), None)
            others = tuple(e for e in (whole.configs_by_target if whole else ()) if not set(e.targets) & set(branch))
        kernels.append(KernelRewrite(site, decision, tuple(by_site[group]), cands, own.changes, own.notes, others=others))

    changes, notes = _combined(kernels, read, batch_expr, edges, everyone, inline, python_texts, decisions, widths)
    if recheck and changes:
        kernels, lost = recheck_kernels(root, kernels, changes, targets, edges, workers, cache_dir, use_cache, settings)
        for ident, why, bug in lost:
            if bug is not None:
                bugs[ident] = KernelReport(sites[ident], None, problem=internal_error(ident, bug, "re-checking the rewrite", cache_dir))
            else:
                failed.append((ident, Failed(why)))
        if lost:  # their edits must not reach the diff
            changes, notes = _combined(kernels, read, batch_expr, edges, everyone, inline, python_texts, decisions,
                                       widths)
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
        prefix=prefix,
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


def _rewritable(variant: str, reports: Sequence[KernelReport]) -> bool:
    """Only a kernel judged for every launch spec is rewritten; the others keep their outcome (a
    config judged for one spec only proves nothing for the next). A spec where no config launches
    (a swept head dim too large for the target) does not stop the fleet variants, which drop a
    config only when it launches for no spec: that spec cannot launch before or after. A variant
    that keeps only configs launching for every spec has nothing to choose from there."""
    if not all(r.status.judged for r in reports):
        return False
    none = [r.status is Status.NO_LAUNCHABLE for r in reports]
    return not any(none) or (variant in FLEET_VARIANTS and not all(none))


def _refuse_unseen(root: Path, site: AutotuneSite, settings) -> None:
    """v3 changes the kernel's signature: refuse when a use of it may launch it unseen."""
    from autotune_rewrite.locate.unseen_launches import unseen_launches

    unseen = unseen_launches(root, site, settings.exclude)
    if unseen:
        raise VariantRefused(LaunchesUnseen(site.ident, unseen))


def _combined(kernels: Sequence[KernelRewrite], read, batch_expr, edges, sites=(), inline=False, repo_texts=None,
              decided=None, widths=None):
    """One set of edits per file for the kernels that are rewritten."""
    if len(kernels) == 1:  # the kernel's own edits are the combined ones
        return kernels[0].changes, kernels[0].notes
    return rewrite_all([k.decision for k in kernels], read, batch_expr=batch_expr, buckets=edges, sites=sites,
                       inline=inline and not any(k.site.view_targets for k in kernels), repo_texts=repo_texts,
                       decided=decided, line_length=widths)


def _rewrite_or_guard(variant, decision, reports, cands, bench, keep, rewritten):
    """-> (the decision, its rewrite). Where no edit of the list drops the kernel's dead configs
    alone, the fleet variants keep them in it and guard them on every target instead, where a
    guard can say it (no configs added; not read from a data file, which is where those change).
    Raises the in-place refusal when neither can be written."""
    try:
        return decision, rewritten(decision)
    except InPlaceRefused as exc:
        site = decision.site
        if variant not in FLEET_VARIANTS or any(p.kept is None for p in decision.configs) or site.data_files:
            raise
        guarded = decide(variant, site, reports, cands, bench, kept_elsewhere=keep, guard_instead=exc.fact)
        try:
            return guarded, rewritten(guarded)
        except UserError:
            raise exc from None


def _shared_lists_decided(variant, decided, by_site, sites):
    """The decisions again where another reader of the same list keeps a config this one drops:
    decided with what the others keep (``shared_lists.kept_elsewhere``), from the same verdicts
    and candidates (nothing is compiled again)."""
    everyone = shared_lists.readers(sites, {g: d for g, (d, *_) in decided.items()})
    out = dict(decided)
    for group, (d, cands, bench, _) in decided.items():
        keep = shared_lists.kept_elsewhere(group, everyone) if d.dropped else {}
        if any(source_key(x.config, d.site.path) in keep for x in d.dropped):
            d = decide(variant, d.site, by_site[group], cands, bench, kept_elsewhere=keep)
        out[group] = (d, cands, bench, keep)
    return out


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


__all__ = ["KernelRewrite", "RewriteRun", "decide_compiled", "git_prefix", "reproduce_command", "run_rewrites"]
