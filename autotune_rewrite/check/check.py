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
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from autotune_rewrite import cache_admin, stopwatch
from autotune_rewrite.spec import dtype_retry, launch_spec
from autotune_rewrite.isolate.bundle_cache import KernelLoadError
from autotune_rewrite.compile.compile_farm import FarmEvent
from autotune_rewrite.evidence import ConfigVerdict, KernelBundle, KernelReport, LaunchSpec, skipped_report
from autotune_rewrite.findings import EveryConfigRejected
from autotune_rewrite.check.plans import (  # noqa: F401  (build_jobs, verdict: part of check's API)
    CompileRun,
    Plan,
    RunBundles,
    build_jobs,
    internal_report,
    kernel_bundle,
    make_plan,
    early_report,
    likely_probe_jobs,
    probes_of,
    report_of,
    resolve_targets,
    verdict,
    verdicts_of,
)
from autotune_rewrite.changed import Selection
from autotune_rewrite.resources import ptxas_version, triton_version
from autotune_rewrite.disk_cache import default_cache_dir
from autotune_rewrite.errors import ExitCode, UserError
from autotune_rewrite.files import scope_of
from autotune_rewrite.locate.kernel_names import select_sites
from autotune_rewrite.locate.scan_cache import cached_scan
from autotune_rewrite.model import AutotuneSite, ConfigValue, FileError
from autotune_rewrite.outcomes import Reason, Report
from autotune_rewrite.settings import Settings, load_settings
from autotune_rewrite.targets import DEFAULT_TARGET, Target
from autotune_rewrite.triton_names import HEURISTICS

Progress = Callable[[int, int], None]
OnReport = Callable[[KernelReport, "RunInfo"], None]


@dataclass(frozen=True)
class RunInfo:
    """What every report of a run is printed with; known before the first compile, so reports
    can be printed as they come (``check``'s ``on_report``)."""

    root: str
    targets: tuple[Target, ...]
    triton_version: str
    ptxas_versions: tuple[tuple[str, str | None], ...]  # arch -> ptxas version


@dataclass(frozen=True)
class CheckResult:
    """Everything ``check`` found; the output package renders it, ``exit_code`` gates CI."""

    root: str
    targets: tuple[Target, ...]
    reports: tuple[KernelReport, ...]
    errors: tuple[FileError, ...]  # files the scan could not read
    triton_version: str
    ptxas_versions: tuple[tuple[str, str | None], ...]  # arch -> ptxas version
    warnings: tuple[str, ...] = ()  # e.g. an ``assume`` name that no kernel has
    farm_events: tuple[FarmEvent, ...] = ()  # what the compile farm did (worded by output/farm.py)
    compiled: int = 0  # compiles run now
    cached: int = 0  # outcomes read from the cache
    seconds: float = 0.0
    changed: Selection | None = None  # ``--changed-since``: which sites were judged, and why
    sites: tuple[AutotuneSite, ...] = ()  # every site the scan found (not only the judged ones)

    def report(self, strict: bool = False) -> Report:
        """The outcomes; ``found`` when some judged config cannot launch on some target (a
        crashed compile proves nothing, so it is not "cannot launch"; nor is any config of a kernel
        whose spec is probably wrong: its numbers are the spec's)."""
        found = any(not v.launchable and not v.crashed for r in self.reports if not r.suspicions for v in r.verdicts)
        return Report(tuple(r.outcome for r in self.reports), found=found, gate=True, strict=strict)

    @property
    def exit_code(self) -> ExitCode:
        """1 when some compiled config cannot launch on some target (the CI gate), 2 on an
        internal error, else 0. Kernels not judged are listed, not failed (``--strict`` fails them)."""
        return self.report().exit_code


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
    return list(_check_sites(Path(root), [(site, tuple(specs))], resolve_targets(archs), run))


def per_target_views(sites: Sequence[AutotuneSite], targets: tuple[Target, ...]):
    """(site, targets) pairs: a site whose configs ask the device once per group of targets that
    see the same configs (``AutotuneSite.on_targets``), with just those targets; any other once."""
    for site in sites:
        if not site.configs_by_target:
            yield site, targets
            continue
        for entry in site.configs_by_target:
            mine = tuple(t for t in targets if t.name in entry.targets)
            if mine:
                yield site.on_targets(entry), mine


def _check_sites(root: Path, work, targets, run: CompileRun, model: bool = True,
                 bundles: dict[int, KernelBundle] | None = None,
                 on_report: Callable[[KernelReport], None] | None = None,
                 counts: dict[int, int] | None = None) -> list[KernelReport]:
    """``work``: (site, specs) pairs, possibly a generator that plans the next site only when
    asked (its compiles start while it does); sites without configs or bundle come back as
    skips. ``bundles``: already built, by ``id(site)``. Every site ends as reports, in ``work``'s
    order, never an exception; ``on_report`` gets each one as soon as it is final (a kernel that
    cannot be judged before any compile, a compiled one when its last compile is in).
    ``counts``: filled with the compile outcomes each report was built from, by its index."""
    slots: list[KernelReport | None] = []
    bundle_of = RunBundles(root, run.derived_cache)

    def settle(i: int, report: KernelReport) -> None:
        slots[i] = report
        if on_report is not None:
            on_report(report)

    with run.stream() as stream:
        for site, specs, *mine in work:  # ``mine``: the targets of a per-target view (else all)
            for item in _site_items(root, site, specs, mine[0] if mine else targets, run, bundles, bundle_of):
                slots.append(None)
                if isinstance(item, KernelReport):
                    settle(len(slots) - 1, item)
                else:
                    _submit(stream, len(slots) - 1, item, run, model, settle, counts=counts)
            stream.pump()  # take in what has finished meanwhile: its reports go out now
        stream.drain()
    return slots  # type: ignore[return-value]


def _site_items(root: Path, site: AutotuneSite, specs, targets, run: CompileRun, bundles, bundle_of):
    """A site's reports decided without compiling, and a plan per complete spec."""
    if site.configs is None or site.partly_unknown:  # a config with a runtime field is never judged
        yield skipped_report(site, Reason.CONFIGS_UNRESOLVED, detail=site.unresolved_reason or site.partly_unknown)
        return
    if not site.configs:
        yield skipped_report(site, Reason.CONFIGS_EMPTY)
        return
    try:
        with stopwatch.stage("bundles"):
            bundle = (bundles or {}).get(id(site)) or bundle_of(site)
    except KernelLoadError as exc:
        yield skipped_report(site, Reason.KERNEL_NOT_ISOLATED, detail=str(exc))
        return
    except Exception as exc:  # noqa: BLE001 - one kernel's bug is its outcome
        yield internal_report(site, None, exc, "isolating the kernel", run)
        return
    if bundle.absent_modules:  # no spec helps: this Triton cannot compile the kernel
        yield skipped_report(site, Reason.TRITON_MODULE_ABSENT, detail=triton_version(),
                             missing=tuple(m for m, _, _ in bundle.absent_modules),
                             places=tuple(f"{p}:{line}" if line else p for _, p, line in bundle.absent_modules))
        return
    if not specs:
        yield skipped_report(site, Reason.NO_SPEC)
        return
    for spec in specs:
        if isinstance(spec, KernelReport):  # decided before (needs_spec, internal error)
            yield spec
            continue
        try:
            with stopwatch.stage("plans"):
                plan = make_plan(site, spec, bundle, site.configs, targets, stop_early=run.stop_early)
        except Exception as exc:  # noqa: BLE001
            yield internal_report(site, spec, exc, "building the compile jobs", run)
            continue
        yield plan


def _submit(stream, i: int, plan: Plan, run: CompileRun, model: bool, settle, retry: bool = True,
            counts: dict[int, int] | None = None) -> None:
    """Compile a plan's configs, then its SMEM probes, then settle its report (slot ``i``,
    which is also its priority: earlier kernels finish first). The probes that every config
    compiling would ask for are queued with the configs (``likely_probe_jobs``). A spec whose
    assumed dtype every config's compile contradicts is compiled once more with the dtype the
    compiler named (``dtype_retry``)."""
    answered = []

    def count(outcomes) -> None:
        if counts is not None:
            counts[i] = counts.get(i, 0) + len(outcomes)

    def configs_done(outcomes) -> None:
        answered.append(True)
        count(outcomes)
        with stopwatch.stage("reports"):
            verdicts = verdicts_of(plan, run.tally(outcomes))
            early = early_report(plan, verdicts, run)
            again = _retyped_plan(plan, early, run) if early is not None and retry else None
            if again is not None:
                _submit(stream, i, again, run, model, settle, retry=False, counts=counts)
                return
            if early is not None:
                settle(i, early)
                return
            try:
                wanted = probes_of(plan, verdicts) if model else []
            except Exception as exc:  # noqa: BLE001 - one kernel's bug is its outcome
                settle(i, internal_report(plan.site, plan.spec, exc, "the SMEM probes", run))
                return
        stream.add([p.job for _, _, p in wanted], lambda probed: probes_done(verdicts, wanted, probed), priority=i)

    def probes_done(verdicts, wanted, probed) -> None:
        count(probed)
        with stopwatch.stage("reports"):
            try:
                report = report_of(plan, verdicts, wanted, run.tally(probed), 0, run, model)
            except Exception as exc:  # noqa: BLE001
                report = internal_report(plan.site, plan.spec, exc, "the report", run)
        settle(i, report)

    stream.add(plan.jobs, configs_done, priority=i)
    if model and not answered:  # not all cached: start the likely probes now, not after the slowest config
        try:
            likely = likely_probe_jobs(plan)
        except Exception:  # noqa: BLE001 - only a head start: configs_done asks again and reports a bug
            likely = []
        stream.add(likely, lambda _: None, priority=i)


def _retyped_plan(plan: Plan, early: KernelReport, run: CompileRun) -> Plan | None:
    rejected = [f for f in early.suspicions if isinstance(f, EveryConfigRejected)]
    spec = dtype_retry.retyped(plan.spec, rejected[0].error) if rejected else None
    return make_plan(plan.site, spec, plan.bundle, plan.configs, plan.targets,
                     stop_early=run.stop_early) if spec is not None else None


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
    judged target's limit stops there (``early_smem``: registers not compiled, cannot launch)."""
    start = time.perf_counter()
    path = Path(root)
    if not path.exists():
        raise UserError(f"{root}: no such file or folder; pass a checkout, folder or .py file")
    # A file or subfolder is checked from its project root so its paths (and the settings' keys)
    # read as they do when the whole checkout is checked.
    settings = (settings or load_settings(path)).with_env(env).with_executor(executor, address, fallback)
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

    run = CompileRun(workers, cache_dir, use_cache, progress, settings.farm(), stop_early=not full)
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
        # A generator: _check_sites plans site k+1 only after site k's compiles are queued, so
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
            yield site, ()  # reported by _check_sites as skipped
            return
        try:
            with stopwatch.stage("bundles"):
                bundles[id(site)] = bundles.get(id(site)) or bundle_of(site)
        except KernelLoadError:
            yield site, ()  # reported by _check_sites with the loader's message
            return
        except Exception as exc:  # noqa: BLE001 - one kernel's bug is its outcome
            yield site, (internal_report(site, None, exc, "isolating the kernel", run),)
            return
        if bundles[id(site)].absent_modules:
            yield site, ()  # reported by _check_sites: no spec is asked for
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
    reports = _check_sites(base, work(), targets, run, model=fit_model, bundles=bundles, on_report=emit,
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


def assume_table(settings: Settings, given: Sequence[tuple[str, Any]]) -> tuple[dict[str, tuple], str]:
    """The ``assume`` values by parameter name: ``--assume`` over the settings' table. Each value
    is a tuple of cases (a list in the settings is a sweep)."""
    table = {name: value if isinstance(value, tuple) else (value,) for name, value in settings.assume}
    for name, value in given:
        table[name] = value if isinstance(value, tuple) else (value,)
    origin = settings.where().file if settings.assume else "--assume"
    if settings.assume and given:
        origin = f"{origin} / --assume"
    return table, origin or "--assume"


def _heuristics(base: Path, site: AutotuneSite, parsed: dict | None = None) -> tuple:
    """The kernel's ``@triton.heuristics``; the module (and LibCST with it) is imported only for a
    kernel that has some, so a warm rerun of other kernels does not pay for it. ``parsed``: the
    run's parsed modules (one parse per file, however many such kernels it holds)."""
    if not any(d in HEURISTICS for d in site.decorators):
        return ()
    from autotune_rewrite.spec.heuristics import heuristics_of

    return heuristics_of(base, site, parsed)


def unused_assume_names(table: dict[str, tuple], sites: Sequence[AutotuneSite]) -> tuple[str, ...]:
    """A warning per ``assume`` name that no checked kernel has (a typo, or a renamed parameter)."""
    if not table:
        return ()
    from difflib import get_close_matches

    from autotune_rewrite.evaluate import free_names

    # A kernel parameter, or a name of the code that launches one (``K`` in ``BK = min(K, 64)``).
    have = sorted({p.name for s in sites for p in s.params}
                  | {n for s in sites for launch in s.launches for f in launch.arguments for n in free_names(f.expr)})
    out = []
    for name in table:
        if name not in have:
            close = get_close_matches(name, have, n=1)
            out.append(f"assume {name}: no checked kernel has a parameter of that name, nor uses it at a launch"
                       + (f"; did you mean {close[0]!r}?" if close else ""))
    return tuple(out)


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
