"""From sites and their launch specs to reports, through one compile stream.

``check_sites`` plans each (site, spec) as it is asked for (``plans``), queues its compiles on
the run's ``CompileRun`` stream, compiles the SMEM probes a plan's outcomes ask for, retries a
spec whose assumed dtype every config's compile contradicts (``dtype_retry``), and settles each
report as soon as its last compile is in. A site that cannot be judged (no configs, no bundle,
no spec) is a skip report, a bug of ours its internal-error report: never an exception.

Separate from the command (``check``), which scans, resolves the specs, reuses cached reports
and assembles the ``CheckResult``: this module is only the streaming of compiles into reports,
shared by ``check``, ``check_site`` and ``evaluate_configs``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from autotune_rewrite import stopwatch
from autotune_rewrite.spec import dtype_retry
from autotune_rewrite.isolate.bundle_cache import KernelLoadError
from autotune_rewrite.evidence import KernelBundle, KernelReport, skipped_report
from autotune_rewrite.findings import EveryConfigRejected
from autotune_rewrite.check.plans import (
    CompileRun,
    Plan,
    RunBundles,
    internal_report,
    make_plan,
    early_report,
    likely_probe_jobs,
    probes_of,
    report_of,
    verdicts_of,
)
from autotune_rewrite.resources import triton_version
from autotune_rewrite.model import AutotuneSite
from autotune_rewrite.outcomes import Reason
from autotune_rewrite.targets import Target


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


def check_sites(root: Path, work, targets, run: CompileRun, model: bool = True,
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
                plan = make_plan(site, spec, bundle, site.configs, targets, stop_early=run.stop_early,
                                 budget=run.budget)
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
                     stop_early=run.stop_early, budget=run.budget) if spec is not None else None


__all__ = ["check_sites", "per_target_views"]
