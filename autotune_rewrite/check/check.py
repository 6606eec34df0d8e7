"""The check pipeline: which configs of which kernels can launch on which targets, proved by compiling.

Pure functions over frozen data:

- ``build_jobs(site, spec, configs, archs)``: the ``CompileJob`` per (target, config),
  specialized as Triton's runtime would (``launch_spec.specialize``);
- ``evaluate_configs(root, site, spec, configs, archs)``: verdicts for any configs, including
  candidates that are not in the source (the rewriter's w8 or s+1 variants);
- ``check_site(root, site, specs, archs)``: one ``KernelReport`` per spec, with the SMEM model;
- ``check(root, kernel=None, archs=...)``: the whole ``check`` command as a ``CheckResult``.

All compiles of a run go through one ``compile_many`` call so the process pool and the outcome
cache see every job at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from autotune_rewrite.check import launch_spec
from autotune_rewrite.check import smem_probe
from autotune_rewrite import tempdirs
from autotune_rewrite.disk_cache import default_cache_dir
from autotune_rewrite.check.compile_pool import compile_many
from autotune_rewrite.errors import ExitCode, UserError
from autotune_rewrite.check.evidence import (
    CompileJob,
    CompileOutcome,
    ConfigVerdict,
    KernelBundle,
    KernelReport,
    LaunchSpec,
    skipped_report,
)
from autotune_rewrite.check.findings import AssumedDtype, Note, Spills, UnknownInts
from autotune_rewrite.internal_errors import internal_error
from autotune_rewrite.outcomes import Reason, Report
from autotune_rewrite.check.bundle_cache import KernelLoadError, lookup
from autotune_rewrite.model import AutotuneSite, ConfigValue, FileError
from autotune_rewrite.check.occupancy import occupancy_of
from autotune_rewrite.check.resources import ptxas_version, triton_version
from autotune_rewrite.locate.scan_cache import cached_scan
from autotune_rewrite.files import scope_of
from autotune_rewrite.settings import Settings
from autotune_rewrite.targets import DEFAULT_TARGET, Target, resolve_target

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class CheckResult:
    """Everything ``check`` found; the output package renders it, ``exit_code`` gates CI."""

    root: str
    targets: tuple[Target, ...]
    reports: tuple[KernelReport, ...]
    errors: tuple[FileError, ...]  # files the scan could not read
    triton_version: str
    ptxas_versions: tuple[tuple[str, str | None], ...]  # arch -> ptxas version
    compiled: int = 0  # compiles run now
    cached: int = 0  # outcomes read from the cache
    seconds: float = 0.0

    def report(self, strict: bool = False) -> Report:
        """The outcomes; ``found`` when some judged config cannot launch on some target (a
        crashed compile proves nothing, so it is not "cannot launch")."""
        found = any(not v.launchable and not v.crashed for r in self.reports for v in r.verdicts)
        return Report(tuple(r.outcome for r in self.reports), found=found, gate=True, strict=strict)

    @property
    def exit_code(self) -> ExitCode:
        """1 when some compiled config cannot launch on some target (the CI gate), 2 on an
        internal error, else 0. Kernels not judged are listed, not failed (``--strict`` fails them)."""
        return self.report().exit_code


# --------------------------------------------------------------------------- targets
def resolve_targets(archs: Sequence[str | Target] | None) -> tuple[Target, ...]:
    """Targets by name (``sm_120``, ``rtx-pro-6000``); duplicates dropped; default sm_120."""
    out: list[Target] = []
    for a in archs or (DEFAULT_TARGET,):
        target = a if isinstance(a, Target) else resolve_target(str(a))
        if all(t.arch.name != target.arch.name or t.name != target.name for t in out):
            out.append(target)
    return tuple(out)


# --------------------------------------------------------------------------- jobs
def build_jobs(
    site: AutotuneSite,
    spec: LaunchSpec,
    configs: Sequence[ConfigValue],
    archs: Sequence[str | Target],
    bundle: KernelBundle | None = None,
    root: Path | str = ".",
) -> list[CompileJob]:
    """One job per (target, config), target-major, specialized as the runtime would.
    ``bundle``: the isolated kernel (built from ``root`` when not given)."""
    bundle = bundle or _bundle(Path(root), site)
    jobs = []
    for target in resolve_targets(archs):
        for config in configs:
            spz = launch_spec.specialize(site, spec, config)
            jobs.append(
                CompileJob(
                    bundle=bundle,
                    signature=spz.signature,
                    constexprs=spz.constexprs,
                    divisible_by_16=spz.divisible_by_16,
                    num_warps=config.effective_num_warps,
                    num_stages=config.effective_num_stages,
                    num_ctas=config.effective_num_ctas,
                    maxnreg=config.maxnreg,
                    capability=target.arch.capability,
                )
            )
    return jobs


def verdict(config: ConfigValue, target: Target, outcome: CompileOutcome) -> ConfigVerdict:
    """Occupancy rules applied to one compile outcome."""
    return ConfigVerdict(config=config, arch=target.arch.name, outcome=outcome,
                         occupancy=occupancy_of(outcome, target.arch))


class _Run:
    """The jobs of one run, compiled together (one pool, one cache lookup)."""

    def __init__(self, workers: int | None, cache_dir: Path | None, use_cache: bool, progress: Progress | None):
        self.workers = workers
        self.cache_dir = cache_dir
        self.use_cache = use_cache
        self.progress = progress
        self.compiled = 0
        self.cached = 0
        # Bundles, scans and SMEM fits are cached beside the compile outcomes (never with --no-cache).
        self.derived_cache = (cache_dir or default_cache_dir()) if use_cache else None

    def compile(self, jobs: Sequence[CompileJob]) -> list[CompileOutcome]:
        if not jobs:
            return []
        if self.use_cache:
            outcomes = compile_many(jobs, workers=self.workers, cache_dir=self.cache_dir, progress=self.progress)
        else:
            # --no-cache: neither read nor write the user's cache; a private one is dropped after.
            with tempdirs.temp_dir("nocache") as scratch:
                outcomes = compile_many(jobs, workers=self.workers, cache_dir=scratch, progress=self.progress)
        self.cached += sum(1 for o in outcomes if o.cached)
        self.compiled += sum(1 for o in outcomes if not o.cached)
        return outcomes


# --------------------------------------------------------------------------- per kernel
@dataclass(frozen=True)
class _Plan:
    site: AutotuneSite
    spec: LaunchSpec
    bundle: KernelBundle
    configs: tuple[ConfigValue, ...]
    targets: tuple[Target, ...]
    jobs: tuple[CompileJob, ...]


def _plan(site, spec, bundle, configs, targets) -> _Plan:
    return _Plan(site, spec, bundle, tuple(configs), tuple(targets),
                 tuple(build_jobs(site, spec, configs, targets, bundle)))


def _verdicts(plan: _Plan, outcomes: Sequence[CompileOutcome]) -> tuple[ConfigVerdict, ...]:
    out = []
    it = iter(outcomes)
    for target in plan.targets:
        for config in plan.configs:
            out.append(verdict(config, target, next(it)))
    return tuple(out)


def _notes(plan: _Plan, verdicts: Sequence[ConfigVerdict]) -> tuple[Note, ...]:
    spec = plan.spec.name
    notes: list[Note] = [Spills(spec, v.arch, v.config.label(), v.outcome.spills, v.outcome.registers)
                         for v in verdicts if v.outcome.spills]
    if plan.spec.assumed:
        notes.append(AssumedDtype(spec, tuple(plan.spec.assumed)))
    unknown = launch_spec.unknown_ints(plan.site, plan.spec)
    if unknown:
        notes.append(UnknownInts(spec, tuple(unknown)))
    return tuple(notes)


def _reports(plans: Sequence[_Plan], outcomes: Sequence[CompileOutcome], run: _Run, model: bool) -> list[KernelReport]:
    """Verdicts per plan, then (second compile round, all plans together) the SMEM probes."""
    it = iter(outcomes)
    verdicts = [_verdicts(plan, [next(it) for _ in plan.jobs]) for plan in plans]
    failed: dict[int, KernelReport] = {}  # plan index -> its internal-error report
    wanted = []  # (plan index, target, probe)
    if model:
        for i, plan in enumerate(plans):
            try:
                mine = [(i, target, p) for target in plan.targets
                        for p in smem_probe.probes(plan.site, plan.spec, target, verdicts[i])]
            except Exception as exc:  # noqa: BLE001 - one kernel's bug is its outcome
                failed[i] = _internal(plan.site, plan.spec, exc, "the SMEM probes", run)
                continue
            wanted += mine
    probed = run.compile([p.job for _, _, p in wanted])
    reports = []
    for i, plan in enumerate(plans):
        if i in failed:
            reports.append(failed[i])
            continue
        try:
            reports.append(_report(plan, verdicts[i], wanted, probed, i, run, model))
        except Exception as exc:  # noqa: BLE001
            reports.append(_internal(plan.site, plan.spec, exc, "the report", run))
    return reports


def _report(plan: _Plan, verdicts, wanted, probed, i: int, run: _Run, model: bool) -> KernelReport:
    models, fits = [], []
    if model:
        for target in plan.targets:
            mine = [(p, o) for (j, t, p), o in zip(wanted, probed) if j == i and t is target]
            fitted, largest = smem_probe.fit(plan.site, plan.spec, target, verdicts, mine, run.derived_cache)
            models.append((target.arch.name, fitted))
            fits += largest
    return KernelReport(
        site=plan.site,
        spec=plan.spec,
        verdicts=verdicts,
        smem_model=models[0][1] if models else None,
        smem_models=tuple(models),
        largest_fit=tuple(fits),
        notes=_notes(plan, verdicts),
    )


def _internal(site: AutotuneSite, spec: LaunchSpec | None, exc: BaseException, stage: str, run: "_Run | None") -> KernelReport:
    cache = run.cache_dir if run is not None else None
    return KernelReport(site=site, spec=spec, problem=internal_error(site.ident, exc, stage, cache))


def _bundle(root: Path, site: AutotuneSite, cache_dir: Path | None = None) -> KernelBundle:
    path = site.kernel_path or site.path
    hit = lookup(root, path, site.kernel, cache_dir) if cache_dir is not None else None
    if hit is not None:
        return hit
    from autotune_rewrite.check.kernel_loader import load_bundle  # LibCST only when a bundle is built

    return load_bundle(root, path, site.kernel, cache_dir)


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
    run = _Run(workers, cache_dir, use_cache, None)
    bundle = bundle or _bundle(Path(root), site, run.derived_cache)
    plan = _plan(site, spec, bundle, configs, resolve_targets(archs))
    return list(_verdicts(plan, run.compile(plan.jobs)))


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
    run = _Run(workers, cache_dir, use_cache, None)
    return list(_check_sites(Path(root), [(site, tuple(specs))], resolve_targets(archs), run))


def specs_for(root: Path | str, site: AutotuneSite, assume_dtype: str | None = None,
              settings: Settings | None = None) -> tuple[LaunchSpec, ...]:
    """The launch specs of ``site`` from the settings of ``root``'s project and the source (for
    callers such as the rewriter that evaluate configs of one site). Raises ``UserError`` with the
    ready-to-paste stanza when types or values are missing, ``KernelLoadError`` when the kernel
    cannot be isolated."""
    settings = settings or Settings.find(root)
    bundle = _bundle(Path(root), site)
    resolution = launch_spec.resolve_specs(site, settings.kernels, assume_dtype, bundle.source, settings.where().file)
    if not resolution.ok:
        raise launch_spec.missing_error([resolution], settings.source)
    return resolution.specs


def _check_sites(root: Path, work, targets, run: _Run, model: bool = True,
                 bundles: dict[int, KernelBundle] | None = None) -> list[KernelReport]:
    """``work``: (site, specs) pairs; sites without configs or bundle come back as skips.
    ``bundles``: already built, by ``id(site)``. Every site ends as reports, never an exception."""
    plans: list[_Plan] = []
    reports: list[KernelReport | _Plan] = []
    for site, specs in work:
        if site.configs is None:
            reports.append(skipped_report(site, Reason.CONFIGS_UNRESOLVED, detail=site.unresolved_reason or ""))
            continue
        if not site.configs:
            reports.append(skipped_report(site, Reason.CONFIGS_EMPTY))
            continue
        try:
            bundle = (bundles or {}).get(id(site)) or _bundle(root, site, run.derived_cache)
        except KernelLoadError as exc:
            reports.append(skipped_report(site, Reason.KERNEL_NOT_ISOLATED, detail=str(exc)))
            continue
        except Exception as exc:  # noqa: BLE001 - one kernel's bug is its outcome
            reports.append(_internal(site, None, exc, "isolating the kernel", run))
            continue
        if not specs:
            reports.append(skipped_report(site, Reason.NO_SPEC))
            continue
        for spec in specs:
            if isinstance(spec, KernelReport):  # decided before (needs_spec, internal error)
                reports.append(spec)
                continue
            try:
                plan = _plan(site, spec, bundle, site.configs, targets)
            except Exception as exc:  # noqa: BLE001
                reports.append(_internal(site, spec, exc, "building the compile jobs", run))
                continue
            plans.append(plan)
            reports.append(plan)
    outcomes = run.compile([job for plan in plans for job in plan.jobs])
    done = dict(zip((id(p) for p in plans), _reports(plans, outcomes, run, model)))
    return [r if isinstance(r, KernelReport) else done[id(r)] for r in reports]


# --------------------------------------------------------------------------- the command
def _select(sites: Sequence[AutotuneSite], kernel: str | None) -> list[AutotuneSite]:
    if kernel is None:
        return list(sites)
    chosen = [s for s in sites if kernel in (s.kernel, s.ident, f"{s.kernel_path}::{s.kernel}")]
    if not chosen:
        found = ", ".join(sorted({s.ident for s in sites})) or "none"
        raise UserError(f"kernel '{kernel}' not found among the autotuned kernels; found: {found}")
    return chosen


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
) -> CheckResult:
    """The ``check`` command: scan ``root``, resolve launch specs, compile, apply occupancy rules.

    Raises ``UserError`` (exit 2, nothing written) for an unknown target, a kernel not found, a
    malformed settings table, a launch spec naming no kernel, or a bad flag. A kernel that cannot
    be judged (missing spec values, unresolved configs, a compile crash, a bug of ours) is a report
    with its status instead. ``settings``: already loaded by the caller."""
    start = time.perf_counter()
    path = Path(root)
    if not path.exists():
        raise UserError(f"{root}: no such file or folder; pass a checkout, folder or .py file")
    # A file or subfolder is checked from its project root so its paths (and the settings' keys)
    # read as they do when the whole checkout is checked.
    settings = settings or Settings.find(path)
    base = Path(settings.root)
    settings_file = settings.where().file
    targets = resolve_targets(archs or settings.arch)
    entries = settings.kernels
    scope = scope_of(base, path)
    result = cached_scan(base, list(scope) or None, workers, settings,
                         (cache_dir or default_cache_dir()) if use_cache else None)
    launch_spec.check_spec_kernels(settings, result, scope)
    sites = _select(result.sites, kernel)

    run = _Run(workers, cache_dir, use_cache, progress)
    launch_spec.check_assume_dtype(assume_dtype)  # a bad flag is the run's error, not a kernel's
    specs, bundles = {}, {}
    for site in sites:
        if site.configs is None or not site.configs:
            continue  # reported by _check_sites as skipped
        try:
            bundles[id(site)] = _bundle(base, site, run.derived_cache)
        except KernelLoadError:
            continue  # reported by _check_sites with the loader's message
        except Exception as exc:  # noqa: BLE001 - one kernel's bug is its outcome
            specs[id(site)] = (_internal(site, None, exc, "isolating the kernel", run),)
            continue
        try:
            resolution = launch_spec.resolve_specs(site, entries, assume_dtype, bundles[id(site)].source,
                                                   settings_file)
        except UserError:
            raise
        except Exception as exc:  # noqa: BLE001
            specs[id(site)] = (_internal(site, None, exc, "resolving the launch specs", run),)
            continue
        specs[id(site)] = _specs_or_needs(resolution, launch_spec.settings_destination(settings.source))

    work = [(s, specs.get(id(s), ())) for s in sites]
    reports = _check_sites(base, work, targets, run, model=fit_model, bundles=bundles)
    return CheckResult(
        root=str(base),
        targets=targets,
        reports=tuple(reports),
        errors=tuple(result.errors),
        triton_version=triton_version(),
        ptxas_versions=tuple((t.arch.name, ptxas_version(t.arch.capability)) for t in targets),
        compiled=run.compiled,
        cached=run.cached,
        seconds=time.perf_counter() - start,
    )


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


__all__ = ["CheckResult", "build_jobs", "check", "check_site", "evaluate_configs", "resolve_targets", "specs_for",
           "verdict"]
