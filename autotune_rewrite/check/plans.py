"""Compile plans: the jobs of each (kernel, launch spec) per (target, config), compiled together
in one run, and the reports their outcomes make.

``build_jobs`` specializes each config as Triton's runtime would (``launch_spec.specialize``);
``CompileRun`` compiles a batch through one ``compile_many`` call, or streams a whole run's
plans through one ``CompileStream`` (``check``); ``verdicts_of`` turns a plan's outcomes into
verdicts, ``probes_of`` names the SMEM probes to compile next, ``report_of`` makes its report.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from autotune_rewrite import tempdirs
from autotune_rewrite.spec import launch_spec
from autotune_rewrite.check import smem_probe
from autotune_rewrite.check import spec_sanity
from autotune_rewrite.isolate.bundle_cache import lookup
from autotune_rewrite.compile.compile_farm import FarmEvent
from autotune_rewrite.settings.schema import FarmChoice
from autotune_rewrite.compile.compile_pool import compile_many
from autotune_rewrite.compile.compile_stream import CompileStream
from autotune_rewrite.evidence import (
    CompileBudget,
    CompileJob,
    CompileOutcome,
    ConfigVerdict,
    KernelBundle,
    KernelReport,
    LaunchSpec,
    skipped_report,
)
from autotune_rewrite.findings import Assumed, Note, Spills, UnknownInts
from autotune_rewrite.isolate.kernel_facts import facts_of
from autotune_rewrite.check.occupancy import max_launchable_smem, occupancy_of
from autotune_rewrite.resources import triton_version
from autotune_rewrite.disk_cache import default_cache_dir
from autotune_rewrite.internal_errors import internal_error
from autotune_rewrite.model import AutotuneSite, ConfigValue
from autotune_rewrite.outcomes import Problem, Reason
from autotune_rewrite.targets import DEFAULT_TARGET, Target, resolve_target

Progress = Callable[[int, int], None]


def kernel_bundle(root: Path, site: AutotuneSite, cache_dir: Path | None = None) -> KernelBundle:
    """The kernel cut out of its module: from the bundle cache when its files are unchanged."""
    path = site.kernel_path or site.path
    line = twin_line(site)
    hit = lookup(root, path, site.kernel, cache_dir, line) if cache_dir is not None else None
    if hit is not None:
        return hit
    from autotune_rewrite.isolate.kernel_loader import load_bundle  # LibCST only when a bundle is built

    return load_bundle(root, path, site.kernel, cache_dir, line=line)


def twin_line(site: AutotuneSite) -> int | None:
    """The def line that tells twin defs (``if``/``else``) apart; None for a kernel defined once."""
    if site.ident_line is None or site.kernel_span is None:
        return None
    return site.kernel_span.start_line


class RunBundles:
    """``kernel_bundle`` for the many sites of one run: the modules they are cut from are parsed
    once per run (``parsed_modules.ParsedModules``), not once per kernel."""

    def __init__(self, root: Path, cache_dir: Path | None):
        self.root, self.cache_dir = root, cache_dir
        self._parsed = None  # made on the first miss: a warm run never imports LibCST

    def __call__(self, site: AutotuneSite) -> KernelBundle:
        path = site.kernel_path or site.path
        line = twin_line(site)
        hit = lookup(self.root, path, site.kernel, self.cache_dir, line) if self.cache_dir is not None else None
        if hit is not None:
            return hit
        from autotune_rewrite.isolate.kernel_loader import load_bundle
        from autotune_rewrite.isolate.parsed_modules import ParsedModules

        if self._parsed is None:
            self._parsed = ParsedModules(self.root)
        return load_bundle(self.root, path, site.kernel, self.cache_dir, self._parsed, line=line)


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
    stop_early: bool = False,
    budget: CompileBudget | None = None,
) -> list[CompileJob]:
    """One job per (target, config), target-major, specialized as the runtime would.
    ``bundle``: the isolated kernel (built from ``root`` when not given). ``stop_early``: a job
    stops at its shared memory when that is over what every judged target of its capability can
    launch (``check`` without ``--full``). ``budget``: what each compile may take (``compile/budget``;
    None: not limited)."""
    bundle = bundle or kernel_bundle(Path(root), site)
    targets = resolve_targets(archs)
    stops = {t.arch.capability: min(max_launchable_smem(u.arch) for u in targets
                                     if u.arch.capability == t.arch.capability) for t in targets}
    jobs = []
    for target in targets:
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
                    stop_smem_above=stops[target.arch.capability] if stop_early else None,
                    budget=budget,
                )
            )
    return jobs


def verdict(config: ConfigValue, target: Target, outcome: CompileOutcome) -> ConfigVerdict:
    """Occupancy rules applied to one compile outcome."""
    return ConfigVerdict(config=config, arch=target.arch.name, outcome=outcome,
                         occupancy=occupancy_of(outcome, target.arch))


class CompileRun:
    """The jobs of one run, compiled together (one pool, one cache lookup)."""

    def __init__(self, workers: int | None, cache_dir: Path | None, use_cache: bool, progress: Progress | None,
                 farm: FarmChoice | None = None, stop_early: bool = False, budget: CompileBudget | None = None):
        self.workers = workers
        self.farm = farm  # compile the misses on a Dask cluster (``compile_farm``) instead of the local pool
        self.farm_events: list[FarmEvent] = []
        self.stop_early = stop_early  # plans' jobs stop at an over-limit SMEM (``check`` without --full)
        self.budget = budget  # what one compile may take (``compile/budget``)
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
        if self.farm is not None:  # the stream owns the farm's connection, retries and events
            got: list[CompileOutcome] = []
            with self.stream() as stream:
                stream.add(jobs, got.extend)
                stream.drain()
            return self.tally(got)
        if self.use_cache:
            outcomes = compile_many(jobs, workers=self.workers, cache_dir=self.cache_dir, progress=self.progress)
        else:
            # --no-cache: neither read nor write the user's cache; a private one is dropped after.
            with tempdirs.temp_dir("nocache") as scratch:
                outcomes = compile_many(jobs, workers=self.workers, cache_dir=scratch, progress=self.progress)
        return self.tally(outcomes)

    def tally(self, outcomes: Sequence[CompileOutcome]) -> Sequence[CompileOutcome]:
        self.cached += sum(1 for o in outcomes if o.cached)
        self.compiled += sum(1 for o in outcomes if not o.cached)
        return outcomes

    @contextlib.contextmanager
    def stream(self) -> Iterator[CompileStream]:
        """One pool for the run that answers kernel by kernel (``CompileStream``); callers
        ``tally`` the outcomes they get."""
        with contextlib.ExitStack() as stack:
            cache = self.cache_dir if self.use_cache else stack.enter_context(tempdirs.temp_dir("nocache"))
            stream = stack.enter_context(CompileStream(self.workers, cache, self.progress, self.farm))
            stack.callback(lambda: self.farm_events.extend(stream.farm_events))
            yield stream


# --------------------------------------------------------------------------- per kernel
@dataclass(frozen=True)
class Plan:
    site: AutotuneSite
    spec: LaunchSpec
    bundle: KernelBundle
    configs: tuple[ConfigValue, ...]
    targets: tuple[Target, ...]
    jobs: tuple[CompileJob, ...]


def make_plan(site, spec, bundle, configs, targets, stop_early: bool = False,
              budget: CompileBudget | None = None) -> Plan:
    return Plan(site, spec, bundle, tuple(configs), tuple(targets),
                 tuple(build_jobs(site, spec, configs, targets, bundle, stop_early=stop_early,
                                  budget=budget)))


def verdicts_of(plan: Plan, outcomes: Sequence[CompileOutcome]) -> tuple[ConfigVerdict, ...]:
    out = []
    it = iter(outcomes)
    for target in plan.targets:
        for config in plan.configs:
            out.append(verdict(config, target, next(it)))
    return tuple(out)


def notes_of(plan: Plan, verdicts: Sequence[ConfigVerdict]) -> tuple[Note, ...]:
    spec = plan.spec.name
    notes: list[Note] = [Spills(spec, v.arch, v.config.label(), v.outcome.spills, v.outcome.registers)
                         for v in verdicts if v.outcome.spills]
    if plan.spec.assumptions:
        notes.append(Assumed(spec, plan.spec.assumptions))
    unknown = launch_spec.unknown_ints(plan.site, plan.spec)
    if unknown:
        notes.append(UnknownInts(spec, tuple(unknown)))
    return tuple(notes)


def probes_of(plan: Plan, verdicts: Sequence[ConfigVerdict], i: int = 0) -> list:
    """(i, target, probe) for every SMEM probe one plan needs, compiled once its configs are."""
    return [(i, target, p) for target in plan.targets for p in smem_probe.probes(plan.site, plan.spec, target, verdicts)]


def likely_probe_jobs(plan: Plan) -> list[CompileJob]:
    """The probe jobs ``probes_of`` asks for when every config compiles: queued beside the
    configs, the probe round no longer waits for the kernel's slowest config (the last kernel's
    probes were a serial tail of every run). A kernel whose configs fail, or that is settled
    early, wastes these few compiles; the probes it does need still follow its configs."""
    per_target = len(plan.configs)
    jobs = []
    for t, target in enumerate(plan.targets):
        pairs = list(zip(plan.configs, plan.jobs[t * per_target:(t + 1) * per_target]))
        jobs += [p.job for p in smem_probe.probes_from(plan.site, plan.spec, pairs)]
    return jobs


def early_report(plan: Plan, verdicts: Sequence[ConfigVerdict], run: "CompileRun") -> KernelReport | None:
    """The kernel's report when its compiled configs already settle it, before any SMEM probe:
    a global our loading could not provide (nothing judged), or numbers that say the launch spec
    is probably wrong (``spec_sanity``; an SMEM model fitted on them would only mislead)."""
    unloadable = not_loadable(plan, verdicts) or api_absent(plan, verdicts)
    if unloadable is not None:
        return unloadable
    try:
        unstated = launch_spec.unknown_ints(plan.site, plan.spec) + tuple(a.parameter for a in plan.spec.assumptions)
        found = spec_sanity.suspicions(verdicts, facts_of(plan.bundle), unstated)
    except Exception as exc:  # noqa: BLE001 - one kernel's bug is its outcome
        return internal_report(plan.site, plan.spec, exc, "the spec sanity checks", run)
    if not found:
        return None
    return KernelReport(site=plan.site, spec=plan.spec, verdicts=tuple(verdicts),
                        problem=Problem(Reason.SPEC_PROBABLY_WRONG), suspicions=found, notes=notes_of(plan, verdicts))


# How Python words a missing ``tl.X`` (``tl.libdevice`` is gone since Triton 3.0).
_ABSENT = re.compile(r"module '(triton\.language[\w.]*)' has no attribute '(\w+)'")


def api_absent(plan: Plan, verdicts: Sequence[ConfigVerdict]) -> KernelReport | None:
    """The kernel's report when every config failed on one Triton attribute this Triton lacks:
    another Triton version's API (reached in a branch the spec takes), not a spec problem."""
    found = {m.groups() if (m := _ABSENT.search(v.outcome.error or "")) else None for v in verdicts}
    if len(found) != 1 or None in found or not verdicts:
        return None
    ((module, name),) = found
    first = verdicts[0].outcome
    return skipped_report(plan.site, Reason.TRITON_MODULE_ABSENT, spec=plan.spec, detail=triton_version(),
                          missing=(f"{module}.{name}",),
                          places=(f"{first.error_file}:{first.error_line}" if first.error_file else "",))


def not_loadable(plan: Plan, verdicts: Sequence[ConfigVerdict]) -> KernelReport | None:
    """The kernel's report when some compile failed on a global the loader could not provide
    (a NameError for it): our loading failed, not the kernel, so nothing is judged."""
    hit: dict[str, str] = {}
    for v in verdicts:
        record = plan.bundle.unprovided_global(v.outcome.undefined_name)
        if record is not None:
            name, path, line = record
            hit.setdefault(name, f"{path}:{line}" if line else path)
    if not hit:
        return None
    return skipped_report(plan.site, Reason.KERNEL_NOT_ISOLATED, spec=plan.spec, missing=tuple(hit),
                          places=tuple(hit.values()))


def report_of(plan: Plan, verdicts, wanted, probed, i: int, run: CompileRun, model: bool) -> KernelReport:
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
        notes=notes_of(plan, verdicts),
    )


def internal_report(site: AutotuneSite, spec: LaunchSpec | None, exc: BaseException, stage: str, run: "CompileRun | None") -> KernelReport:
    cache = run.cache_dir if run is not None else None
    return KernelReport(site=site, spec=spec, problem=internal_error(site.ident, exc, stage, cache))


__all__ = ["CompileRun", "Plan", "RunBundles", "build_jobs", "internal_report", "kernel_bundle", "make_plan", "probes_of", "report_of", "resolve_targets",
           "verdict", "verdicts_of"]
