"""The check pipeline: which configs of which kernels can launch on which targets, proved by compiling.

Pure functions over frozen data (the compile plans themselves are in ``plans``):

- ``evaluate_configs(root, site, spec, configs, archs)``: verdicts for any configs, including
  candidates that are not in the source (the rewriter's w8 or s+1 variants);
- ``check_site(root, site, specs, archs)``: one ``KernelReport`` per spec, with the SMEM model;
- ``check(root, kernel=None, archs=...)``: the whole ``check`` command as a ``CheckResult``.

All compiles of a run go through one ``CompileRun``: ``check`` streams them through one pool,
kernel by kernel (``compile_stream``), while it is still cutting out and resolving the next
kernels, and hands each report to ``on_report`` as soon as it is final, so a repository of 200
kernels shows its first verdicts (``needs_spec`` ones before any compile) within seconds of the
scan rather than after the last compile. The result keeps the scan's order.

The parts it runs are their own modules: ``site_reports`` streams sites into reports,
``check_result`` holds what a run gives, ``assume`` the ``--assume`` table.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from autotune_rewrite import cache_admin, stopwatch
from autotune_rewrite.spec import launch_spec
from autotune_rewrite.isolate.bundle_cache import KernelLoadError
from autotune_rewrite.evidence import (
    CompileBudget, ConfigVerdict, KernelBundle, KernelReport, LaunchSpec, skipped_report,
)
from autotune_rewrite.check.assume import assume_table, unused_assume_names
from autotune_rewrite.check.check_result import CheckResult, RunInfo
from autotune_rewrite.check.plans import (  # noqa: F401  (build_jobs, verdict: part of check's API)
    CompileRun,
    RunBundles,
    build_jobs,
    internal_report,
    kernel_bundle,
    make_plan,
    resolve_targets,
    verdict,
    verdicts_of,
)
from autotune_rewrite.check.site_reports import check_sites, per_target_views
from autotune_rewrite.changed import Selection
from autotune_rewrite.resources import ptxas_version, triton_version
from autotune_rewrite.disk_cache import default_cache_dir
from autotune_rewrite.errors import UserError
from autotune_rewrite.files import scope_of
from autotune_rewrite.locate.kernel_names import select_sites
from autotune_rewrite.locate.scan_cache import cached_scan
from autotune_rewrite.model import AutotuneSite, ConfigValue
from autotune_rewrite.outcomes import Reason
from autotune_rewrite.settings import Settings, load_settings
from autotune_rewrite.targets import DEFAULT_TARGET, Target
from autotune_rewrite.triton_names import HEURISTICS

Progress = Callable[[int, int], None]
OnReport = Callable[[KernelReport, "RunInfo"], None]


def evaluate_configs(
    root: Path | str,
    site: AutotuneSite,
    spec: LaunchSpec,
    configs: Sequence[ConfigValue],
    archs: Sequence[str | Target] = (DEFAULT_TARGET,),
    workers: int | None = None,
    cache_dir: Path | None = None,
    use_cache: bool = True,
    bundle: KernelBundle | None = None,
) -> list[ConfigVerdict]:
    """Verdicts for ``configs`` (from the source or not) on every target, target-major.

    Raises ``KernelLoadError`` when the kernel cannot be isolated from its module."""
    run = CompileRun(workers, cache_dir, use_cache, None)
    bundle = bundle or kernel_bundle(Path(root), site, run.derived_cache)
    plan = make_plan(site, spec, bundle, configs, resolve_targets(archs))
    return list(verdicts_of(plan, run.compile(plan.jobs)))


def check_site(
    root: Path | str,
    site: AutotuneSite,
    specs: Sequence[LaunchSpec],
    archs: Sequence[str | Target] = (DEFAULT_TARGET,),
    workers: int | None = None,
    cache_dir: Path | None = None,
    use_cache: bool = True,
) -> list[KernelReport]:
    """One report per spec for the site's own configs (an error report when it is skipped)."""
    run = CompileRun(workers, cache_dir, use_cache, None)
    return list(check_sites(Path(root), [(site, tuple(specs))], resolve_targets(archs), run))


# --------------------------------------------------------------------------- the command
def _select(sites: Sequence[AutotuneSite], kernel: str | None) -> list[AutotuneSite]:
    return select_sites(sites, kernel)  # ``--kernel``'s one reading, shared with the locator


def check(
    root: Path | str,
    kernel: str | None = None,
    archs: Sequence[str] | None = None,
    workers: int | None = None,
    assume_dtype: str | None = None,
    cache_dir: Path | None = None,
    use_cache: bool = True,
    progress: Progress | None = None,
    fit_model: bool = True,
    settings: Settings | None = None,
    assume: Sequence[tuple[str, Any]] = (),
    exact: bool = False,
    on_report: OnReport | None = None,
    changed_since: str | None = None,
    env: Sequence[tuple[str, str]] = (),
    executor: str | None = None,
    address: str | None = None,
    fallback: str | None = None,
    full: bool = False,
    compile_timeout: str | None = None,
    compile_memory: str | None = None,
) -> CheckResult:
    """The ``check`` command: scan ``root``, resolve launch specs, compile, apply occupancy rules.

    Raises ``UserError`` (exit 2, nothing written) for an unknown target, a kernel not found, a
    malformed settings table, a launch spec naming no kernel, or a bad flag. A kernel that cannot
    be judged (missing spec values, unresolved configs, a compile crash, a bug of ours) is a report
    with its status instead. ``settings``: already loaded by the caller. ``assume``: values by
    parameter name from ``--assume`` (over the settings' ``assume`` table); ``exact``: assume
    nothing else (no pointer dtypes, no int divisibility). ``on_report``: called with each
    kernel's report as soon as it is final (completion order); the result holds them in the
    scan's order. ``changed_since``: judge only the sites whose inputs changed between that git
    ref and the working tree (``changed``); a ref that names no commit is a UserError. ``full``:
    compile every config to the cubin; by default a config whose shared memory is over every
    judged target's limit stops there (``early_smem``: registers not compiled, cannot launch).
    ``compile_timeout`` / ``compile_memory``: ``--compile-timeout`` / ``--compile-memory`` over the
    settings (seconds / megabytes, or "none")."""
    start = time.perf_counter()
    path = Path(root)
    if not path.exists():
        raise UserError(f"{root}: no such file or folder; pass a checkout, folder or .py file")
    # A file or subfolder is checked from its project root so its paths (and the settings' keys)
    # read as they do when the whole checkout is checked.
    settings = (settings or load_settings(path)).with_env(env).with_executor(
        executor, address, fallback, compile_timeout, compile_memory)
    base = Path(settings.root)
    cache_limit, _ = cache_admin.limit_in_force(settings.cache.max_size, settings.where().file)
    settings_file = settings.where().file
    targets = resolve_targets(archs or settings.arch)
    entries = settings.kernels
    scope = scope_of(base, path)
    changes = _changes(base, changed_since) if changed_since is not None else None  # a bad ref fails first
    # The scan answers the configs' device queries for exactly these targets (``per_target``).
    result = cached_scan(base, list(scope) or None, workers, replace(settings, arch=tuple(t.name for t in targets)),
                         (cache_dir or default_cache_dir()) if use_cache else None)
    launch_spec.check_spec_kernels(settings, result, scope)
    sites = _select(result.sites, kernel)

    run = CompileRun(workers, cache_dir, use_cache, progress, settings.farm(), stop_early=not full,
                     budget=CompileBudget(settings.check.compile_timeout, settings.check.compile_memory))
    bundle_of = RunBundles(base, run.derived_cache)
    bundles: dict[int, KernelBundle] = {}
    inputs_of = _inputs_of(base, bundle_of, bundles) if changes is not None or use_cache else None
    selection = None
    if changes is not None:
        with stopwatch.stage("changed"):
            selection = _changed(sites, changes, inputs_of)
        sites = list(selection.sites)
    launch_spec.check_assume_dtype(assume_dtype)  # a bad flag is the run's error, not a kernel's
    assumed_values, assume_origin = assume_table(settings, assume)
    warnings = list(unused_assume_names(assumed_values, sites))
    info = RunInfo(str(base), targets, triton_version(),
                   tuple((t.arch.name, ptxas_version(t.arch.capability)) for t in targets))
    # A kernel whose reports are stored under exactly its inputs is not resolved, planned or
    # looked up again (``report_cache``): a warm run of an unchanged kernel costs a file hash.
    reuse = _report_cache(cache_dir or default_cache_dir(), base, inputs_of, info, settings, assume_dtype,
                          assumed_values, exact, fit_model, full) if use_cache else None
    fresh: dict[int, tuple[AutotuneSite, str]] = {}  # views computed now: id -> (view, key)
    site_warnings: dict[int, list[str]] = {}
    reused = [0]
    heuristic_modules: dict = {}  # (path, bytes) -> parsed module, for @triton.heuristics

    def work():
        # A generator: check_sites plans site k+1 only after site k's compiles are queued, so
        # the pool is busy while the rest of the repository is still being cut and resolved.
        for site, mine in per_target_views(sites, targets):
            key = None
            if reuse is not None and site.configs:
                with stopwatch.stage("report cache"):
                    key = reuse.key(site, mine)
                    hit = reuse.get(key)
                if hit is not None:
                    warnings.extend(hit.warnings)
                    reused[0] += hit.outcomes
                    yield site, hit.reports, mine
                    continue
            if key is not None:
                fresh[id(site)] = (site, key)
            yield from (item + (mine,) for item in site_work(site))

    def site_work(site):
        # One site as some targets see it: its bundle, then its specs (per view: they read its configs).
        if site.configs is None or not site.configs:
            yield site, ()  # reported by check_sites as skipped
            return
        try:
            with stopwatch.stage("bundles"):
                bundles[id(site)] = bundles.get(id(site)) or bundle_of(site)
        except KernelLoadError:
            yield site, ()  # reported by check_sites with the loader's message
            return
        except Exception as exc:  # noqa: BLE001 - one kernel's bug is its outcome
            yield site, (internal_report(site, None, exc, "isolating the kernel", run),)
            return
        if bundles[id(site)].absent_modules:
            yield site, ()  # reported by check_sites: no spec is asked for
            return
        try:
            with stopwatch.stage("specs"):
                resolution = launch_spec.resolve_specs(
                    site, entries, assume_dtype, bundles[id(site)].source, settings_file, assumed_values, exact,
                    assume_origin, _heuristics(base, site, heuristic_modules))
        except UserError:
            raise
        except Exception as exc:  # noqa: BLE001
            yield site, (internal_report(site, None, exc, "resolving the launch specs", run),)
            return
        if resolution.not_compiled:
            warnings.append(f"{site.ident}: {len(resolution.not_compiled)} more distinct launches not compiled "
                            f"(at most {len(resolution.specs)} per kernel): {', '.join(resolution.not_compiled)}")
            site_warnings.setdefault(id(site), []).append(warnings[-1])
        yield site, _specs_or_needs(resolution, launch_spec.settings_destination(settings.source))

    emit = (lambda report: on_report(report, info)) if on_report is not None else None
    counts: dict[int, int] = {}
    reports = check_sites(base, work(), targets, run, model=fit_model, bundles=bundles, on_report=emit,
                          counts=counts)
    if reuse is not None:
        with stopwatch.stage("report cache"):
            _store_reports(reuse, reports, fresh, site_warnings, counts)
    if use_cache:  # a shared CI cache stays under its limit: least recently used entries go first
        with stopwatch.stage("cache trim"):
            cache_admin.trim(cache_dir or default_cache_dir(), cache_limit)
    return CheckResult(
        root=info.root,
        targets=targets,
        reports=tuple(reports),
        errors=tuple(result.errors),
        warnings=tuple(warnings),
        farm_events=tuple(run.farm_events),
        triton_version=info.triton_version,
        ptxas_versions=info.ptxas_versions,
        compiled=run.compiled,
        cached=run.cached + reused[0],
        seconds=time.perf_counter() - start,
        changed=selection,
        sites=tuple(result.sites),
    )


def _changes(base: Path, ref: str):
    from autotune_rewrite.changed_inputs import changes_since

    with stopwatch.stage("changed"):
        return changes_since(base, ref)


def _inputs_of(base: Path, bundle_of: RunBundles, bundles: dict[int, KernelBundle]):
    """Each site's inputs (``changed_inputs``); the bundles cut for them are kept for the run."""
    from autotune_rewrite.changed_inputs import SiteInputsOf

    def cut(site: AutotuneSite) -> KernelBundle:
        if id(site) not in bundles:
            bundles[id(site)] = bundle_of(site)
        return bundles[id(site)]

    return SiteInputsOf(base, cut)


def _changed(sites: Sequence[AutotuneSite], changes, inputs_of) -> Selection:
    """The sites whose inputs changed (``changed``)."""
    from autotune_rewrite.changed import changed_sites

    return changed_sites(sites, changes, inputs_of)


def _report_cache(cache_dir: Path, base: Path, inputs_of, info: RunInfo, settings: Settings, assume_dtype,
                  assumed_values, exact: bool, fit_model: bool, full: bool):
    """The run's ``ReportCache``, keyed by everything of the run a report reads."""
    from autotune_rewrite import gitrepo
    from autotune_rewrite.compile.compile_cache import compiler_environment
    from autotune_rewrite.compile.crosscompile import fp_fusion_setting
    from autotune_rewrite.check.report_cache import ReportCache

    run = {"targets": info.targets, "triton": info.triton_version, "ptxas": info.ptxas_versions,
           "settings": settings, "assume_dtype": assume_dtype, "assume": assumed_values, "exact": exact,
           "fit_model": fit_model, "full": full, "environment": compiler_environment(),
           "fp_fusion": fp_fusion_setting()}
    listed: list = []  # git's file list, asked once and only when a site needs it

    def tree_files():
        if not listed:
            listed.append(gitrepo.ls_files(base))
        return listed[0]

    # A --full report is what the default run computes once the full outcomes are cached.
    return ReportCache(cache_dir, base, inputs_of, tree_files, run, serves=[{**run, "full": False}] if full else [])


def _store_reports(reuse, reports: Sequence[KernelReport], fresh: dict, site_warnings: dict,
                   counts: dict[int, int]) -> None:
    """Store the reports of each view computed now (``report_cache`` keeps only final outcomes)."""
    from autotune_rewrite.check.report_cache import Entry

    by_view: dict[int, list[int]] = {}
    for i, report in enumerate(reports):
        by_view.setdefault(id(report.site), []).append(i)
    for view_id, (_view, key) in fresh.items():
        slots = by_view.get(view_id)
        if slots:
            reuse.put(key, Entry(tuple(reports[i] for i in slots), tuple(site_warnings.get(view_id, ())),
                                 sum(counts.get(i, 0) for i in slots)))



def _heuristics(base: Path, site: AutotuneSite, parsed: dict | None = None) -> tuple:
    """The kernel's ``@triton.heuristics``; the module (and LibCST with it) is imported only for a
    kernel that has some, so a warm rerun of other kernels does not pay for it. ``parsed``: the
    run's parsed modules (one parse per file, however many such kernels it holds)."""
    if not any(d in HEURISTICS for d in site.decorators):
        return ()
    from autotune_rewrite.spec.heuristics import heuristics_of

    return heuristics_of(base, site, parsed)



def _specs_or_needs(resolution: launch_spec.SpecResolution, destination: str) -> tuple[LaunchSpec | KernelReport, ...]:
    """Complete specs stay specs; an incomplete one becomes its kernel's needs_spec report
    (naming exactly the missing parameters, with the site's stanza), so the rest go on."""
    missing = dict(resolution.missing)
    return tuple(
        skipped_report(resolution.site, Reason.MISSING_SPEC_VALUES, spec=spec, missing=tuple(missing[spec.name]),
                       stanza=resolution.stanza, detail=destination)
        if spec.name in missing else spec
        for spec in resolution.specs
    )


__all__ = ["CheckResult", "RunInfo", "build_jobs", "check", "check_site", "evaluate_configs", "resolve_targets",
           "verdict"]
