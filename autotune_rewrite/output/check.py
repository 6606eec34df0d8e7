"""Rendering of ``check``: a rich table per kernel x spec x target on stderr; JSON or Markdown on
stdout (GitHub annotations: ``output/github``, SARIF: ``output/sarif``). Every number is printed
with the Triton version, the ptxas version and the target it was compiled for.

JSON (``schema_version`` 1; keys are only ever added)::

    {"schema_version", "root", "triton_version", "compiled", "cached", "exit_code",
     "targets": [{"name", "arch", "capability", "product", "sm_count", "smem_optin_per_block",
                  "ptxas_version"}],
     "outcomes": {"exit_code", "judged", "kernels", "statuses": {status: count}},
     "kernels": [{"path", "kernel", "kernel_path", "line", "spec", "spec_family", "spec_ranged",
                  "spec_source", "types",
                  "spec_constexprs", "int_values", "assumed", "do_not_specialize", "for_targets",
                  "configs_chosen_by", "skipped",
                  "status", "assumptions": [{"parameter", "value", "source"}],
                  "problem": {"reason", "detail", "missing", "traceback_file", "places"} | null, "message",
                  "suspicions": [{"kind", ...}] (spec_suspect: why the spec is probably wrong),
                  "configs": [verdict, see output/outcomes.py verdict_json],
                  "smem_model": {"text", "coefficients", "max_residual", "points"} | null,
                  "smem_models": {arch: model | null}, "largest_fit": {arch: text},
                  "largest_fits": [{"kind", "arch", "param", "value", "held", "predicted_bytes",
                                    "limit"}],
                  "notes": [text], "note_facts": [{"kind", ...}],
                  "first_use": [{"arch", "configs", "compile_s", "bench_s", "at_least"}]: what the
                  autotuner pays at the kernel's first use (compile_s measured here; bench_s from
                  do_bench's defaults, 25 + 100 ms per launchable config per key value)}],
     "errors": [{"path", "message"}],
     "depends": [{"kernel", "spec_family", "config", "arch", "names", "launches_at": [{name: value}],
                  "cannot_at": [{"values": {name: value}, "reason", "shared_bytes"}], "message"}],
     "slowest_compiles": [{"kernel", "spec", "config", "arch", "seconds", "over_budget", "peak_mb"}],
     "changed_since": {"ref", "sites", "judged", "line", "selected": [{"kernel", "why", "path",
                       "detail", "reason"}]} | null (null without ``--changed-since``)}

One ``kernels`` entry per kernel x launch spec; ``configs`` holds one row per config x target
(target-major); ``smem_model`` is the first target's. ``status`` is one of the closed set in
``autotune_rewrite/outcomes.py``; a kernel that was not judged has ``problem`` (and, kept for
older readers, ``skipped``: the same message) and no configs, except ``spec_suspect``, whose
``configs`` are kept as the evidence (the flat SMEM, the errors) and are not verdicts.
``depends``: the config x target verdicts that change inside an assumed range (``check/ranges``):
the specs of one ``spec_family`` are one launch judged at each value of the range.
"""

from __future__ import annotations

import json

from rich.table import Table

from autotune_rewrite import output
from autotune_rewrite.evidence import ConfigVerdict, KernelReport, SmemModel
from autotune_rewrite.check import compile_cost
from autotune_rewrite.check.check_result import CheckResult, RunInfo
from autotune_rewrite.model import to_jsonable
from autotune_rewrite.outcomes import Status
from autotune_rewrite.output import explain
from autotune_rewrite.output.changed import changed_json, changed_line
from autotune_rewrite.output.ranges import DEPENDS_HEAD, depends_json, print_depending
from autotune_rewrite.output.farm import farm_warnings
from autotune_rewrite.output.outcomes import judged_line, outcome_json, problem_text, report_json, stanzas, verdict_json
from autotune_rewrite.targets import Target

SCHEMA_VERSION = 1


# --------------------------------------------------------------------------- shared helpers

def run_warnings(result: CheckResult) -> list[str]:
    """The run's warnings: the stages' own, then what the compile farm did."""
    return list(result.warnings) + farm_warnings(result.farm_events)

def _kb(n: int | None) -> str:
    return "-" if n is None else f"{n:,}"


def verdict_text(v: ConfigVerdict) -> str:
    if v.outcome.error is not None:
        return explain.verdict_reason(v)
    if v.launchable:
        return "launches"
    return f"cannot launch: {explain.verdict_reason(v)}"


def _short_verdict(v: ConfigVerdict) -> str:
    if v.outcome.error is not None:
        return "compiler crashed" if v.crashed else "over budget" if v.over_budget else "compile error"
    limiter = v.occupancy.limiter if v.occupancy else "?"
    return f"cannot launch ({limiter})"


def _spec_label(report: KernelReport) -> str:
    if report.spec is None:
        return "-"
    label = report.spec.name
    if report.spec.assumptions:
        label += f" (ASSUMED: {len(report.spec.assumptions)} values, listed below)"
    return label


def versions_line(result: RunInfo | CheckResult, target: Target) -> str:
    ptxas = dict(result.ptxas_versions).get(target.arch.name) or "unknown"
    return f"Triton {result.triton_version}, ptxas {ptxas}"


def _target_label(target: Target) -> str:
    if target.product:
        return f"{target.product} ({target.arch.name}, {target.sm_count} SMs)"
    return f"{target.arch.name} (CC {target.arch.dotted})"


def _targets_of(result: RunInfo | CheckResult, report: KernelReport) -> list[Target]:
    archs = {v.arch for v in report.verdicts}
    return [t for t in result.targets if t.arch.name in archs]


def _model_line(model: SmemModel | None) -> str | None:
    if model is None:
        return None
    return f"{model.text} (max residual {model.max_residual:,} B over {model.points} compiled points)"


# --------------------------------------------------------------------------- JSON
def _model_json(model: SmemModel | None) -> dict | None:
    if model is None:
        return None
    return {
        "text": model.text,
        "coefficients": {term: c for term, c in model.coefficients},
        "max_residual": model.max_residual,
        "points": model.points,
    }


def _report_json(report: KernelReport) -> dict:
    site, spec = report.site, report.spec
    return {
        "path": site.path,
        "kernel": site.kernel,
        "kernel_path": site.kernel_path,
        "line": site.line,
        "spec": spec.name if spec else None,
        "spec_family": spec.family or None if spec else None,
        "spec_ranged": dict(spec.ranged) if spec else {},
        "spec_source": spec.source if spec else None,
        "types": dict(spec.types) if spec else None,
        "spec_constexprs": dict(spec.constexprs) if spec else None,
        "int_values": dict(spec.int_values) if spec else None,
        "assumed": list(spec.assumed) if spec else [],
        "do_not_specialize": list(site.do_not_specialize),
        # configs chosen by a device query: the targets this entry is for, and what chose them
        "for_targets": list(site.view_targets),
        "configs_chosen_by": list(site.configs_by_target[0].queries) if site.view_targets else [],
        "skipped": problem_text(report) if report.problem is not None else None,
        **outcome_json(report),
        "configs": [verdict_json(v) for v in report.verdicts],
        "smem_model": _model_json(report.smem_model),
        "smem_models": {arch: _model_json(m) for arch, m in report.smem_models},
        "largest_fit": explain.largest_fits(report.largest_fit),
        "largest_fits": [to_jsonable(f) for f in report.largest_fit],
        "notes": [explain.note(n) for n in report.notes],
        "note_facts": [to_jsonable(n) for n in report.notes],
        "first_use": [to_jsonable(f) for f in compile_cost.first_use(report)],
    }


def check_json(result: CheckResult, strict: bool = False) -> str:
    payload = {
        "schema_version": SCHEMA_VERSION,
        "root": result.root,
        "targets": [
            {
                "name": t.name,
                "arch": t.arch.name,
                "capability": t.arch.capability,
                "product": t.product,
                "sm_count": t.sm_count,
                "smem_optin_per_block": t.arch.smem_optin_per_block,
                "ptxas_version": dict(result.ptxas_versions).get(t.arch.name),
            }
            for t in result.targets
        ],
        "triton_version": result.triton_version,
        "kernels": [_report_json(r) for r in result.reports],
        "errors": [{"path": e.path, "message": e.message} for e in result.errors],
        "depends": [depends_json(rv) for rv in result.depending],
        "slowest_compiles": [to_jsonable(c) for c in compile_cost.slowest(result.reports)],
        "warnings": run_warnings(result),
        "compiled": result.compiled,
        "cached": result.cached,
        "exit_code": int(result.report(strict).exit_code),
        "outcomes": report_json(result.report(strict)),
        "changed_since": changed_json(result.changed),
    }
    return json.dumps(payload, indent=2, default=str) + "\n"


def print_json(result: CheckResult, strict: bool = False) -> None:
    output.write_raw(check_json(result, strict))


# --------------------------------------------------------------------------- table (stderr)
def _not_judged(report: KernelReport) -> str:
    spec = f" [{report.spec.name}]" if report.spec is not None and report.spec.name != "default" else ""
    return f"{report.status.value} {report.site.ident}{spec}{_on_targets(report)}: {problem_text(report)}"


def _on_targets(report: KernelReport) -> str:
    """`` on sm_90`` for a report of the configs some targets see (they ask the device)."""
    view = report.site.view_targets
    return f" on {', '.join(view)}" if view else ""


def _chosen_by(report: KernelReport) -> str:
    site = report.site
    if not site.view_targets:
        return ""
    return "\n[dim]configs chosen by: " + output.escape("; ".join(site.configs_by_target[0].queries)) + "[/]"


def print_table(result: CheckResult, strict: bool = False, streamed: bool = False) -> None:
    """Every kernel's table (unless ``streamed``: ``print_kernel`` printed each one as it was
    judged), then, always in the same order, the scan's errors, the stanzas and the summary."""
    console = output.stderr()
    if not streamed:
        for report in result.reports:
            print_kernel(report, result)
    for e in result.errors:
        output.warning(f"{e.path}: {e.message}")
    for w in run_warnings(result):
        output.warning(w)
    for stanza in stanzas(result.reports):
        console.print(stanza, markup=False)
    print_depending(result.depending)
    _print_slowest(result)
    if result.changed is not None:
        console.print(changed_line(result.changed), markup=False)
    console.print(summary(result, strict), markup=False)


def _print_slowest(result: CheckResult) -> None:
    slow = compile_cost.slowest(result.reports)
    if not slow:
        return
    console = output.stderr()
    console.print(f"slowest compiles (over {compile_cost.SLOW_COMPILE_S:g} s; the autotuner pays them at the "
                  "kernel's first use):", markup=False)
    for c in slow:
        spec = f" [{c.spec}]" if c.spec and c.spec != "default" else ""
        stop = " (stopped at its budget)" if c.over_budget else ""
        mb = f"  {c.peak_mb:,} MB" if c.peak_mb is not None else ""
        console.print(f"  {c.seconds:6.1f} s{mb}  {c.kernel}{spec} {c.config} on {c.arch}{stop}", markup=False)


def print_kernel(report: KernelReport, run: RunInfo | CheckResult) -> None:
    """One kernel x spec on stderr: its table per target, or the line saying why it was not
    judged. ``check``'s ``on_report`` in table mode, so a big repository shows its first
    verdicts while the rest still compile."""
    console = output.stderr()
    esc = output.escape
    if report.problem is not None:
        (output.error if report.status is Status.INTERNAL_ERROR else output.warning)(_not_judged(report))
        return
    for target in _targets_of(run, report):
        rows = [v for v in report.verdicts if v.arch == target.arch.name]
        title = (f"{esc(report.site.ident)}  spec {esc(_spec_label(report))}\n"
                 f"{esc(_target_label(target))}, {esc(versions_line(run, target))}{_chosen_by(report)}")
        table = Table(title=title, title_justify="left")
        table.add_column("config", no_wrap=True)
        for col in ("SMEM (B)", "regs", "spills", "blocks/SM", "warps/SM", "occupancy"):
            table.add_column(col, justify="right", no_wrap=True)
        table.add_column("verdict", no_wrap=True)
        for v in rows:
            occ = v.occupancy
            spills = _kb(v.outcome.spills)
            if v.outcome.spills:
                spills = f"[yellow]{spills}[/]"
            verdict = "[green]launches[/]" if v.launchable else f"[bold red]{_short_verdict(v)}[/]"
            if report.spec is not None and report.spec.assumptions:
                verdict += " [yellow]assumed[/]"
            table.add_row(
                esc(v.config.label()),
                _kb(v.outcome.shared_bytes),
                _kb(v.outcome.registers),
                spills,
                "-" if occ is None else str(occ.blocks_per_sm),
                "-" if occ is None else str(occ.warps_per_sm),
                "-" if occ is None else f"{occ.occupancy:.1%}",
                verdict,
            )
        output.print_unwrapped(console, table)
        for v in rows:
            if not v.launchable:
                console.print(f"  [red]x[/] {esc(v.config.label())}: {esc(verdict_text(v))}")
        model = _model_line(dict(report.smem_models).get(target.arch.name))
        console.print(f"  SMEM model ({target.arch.name}): {esc(model or 'not determined from the compiled points')}")
        cost = next((f for f in compile_cost.first_use(report) if f.arch == target.arch.name), None)
        if cost is not None and cost.compile_s >= compile_cost.SLOW_COMPILE_S:
            console.print(f"  autotuning at first use ({target.arch.name}): {cost.configs} compiles, "
                          f"{'at least ' if cost.at_least else ''}{cost.compile_s:.1f} s here, then "
                          f"~{cost.bench_s:.2f} s of do_bench per key value (Triton's 25 + 100 ms per launchable "
                          "config, not measured)", markup=False)
        fit = explain.largest_fits(report.largest_fit).get(target.arch.name)
        if fit:
            console.print(f"  largest fitting tile ({target.arch.name}, "
                          f"{target.arch.smem_optin_per_block:,} B opt-in): {esc(fit)}")
    if report.status in (Status.COMPILE_CRASHED, Status.NO_LAUNCHABLE):
        output.warning(_not_judged(report))
    for note in report.notes:
        output.warning(f"{report.site.ident}: {explain.note(note)}")


def summary(result: CheckResult, strict: bool = False) -> str:
    verdicts = [v for r in result.reports for v in r.verdicts]
    # A spec_suspect kernel's refusals are the spec's, not the configs': not counted as "cannot launch".
    bad = sum(1 for r in result.reports if not r.suspicions for v in r.verdicts if not v.launchable and v.known)
    unknown = sum(1 for r in result.reports for v in r.verdicts if v.over_budget)
    targets = ", ".join(t.arch.name for t in result.targets)
    depending = len(result.depending)
    return (f"{judged_line(result.report(strict))}. {len(verdicts)} config x target verdict(s) on {targets}: "
            f"{bad} cannot launch" + (f" ({depending} config x target depend on an assumed value)" if depending else "")
            + (f"; {unknown} not known (compile over its time or memory budget)" if unknown else "")
            + f"; {result.compiled} compiled, {result.cached} from cache, {result.seconds:.1f} s")


# --------------------------------------------------------------------------- markdown (stdout)
def check_markdown(result: CheckResult, strict: bool = False) -> str:
    out: list[str] = []
    for report in result.reports:
        if report.problem is not None:
            out.append(f"> **{report.status.value}** `{report.site.ident}`: {problem_text(report)}\n")
            continue
        for target in _targets_of(result, report):
            out.append(f"### `{report.site.ident}` spec `{_spec_label(report)}` on {_target_label(target)}\n")
            out.append(f"_{versions_line(result, target)}_\n")
            out.append("| config | SMEM (B) | regs | spills | blocks/SM | warps/SM | occupancy | verdict |")
            out.append("|---|---:|---:|---:|---:|---:|---:|---|")
            for v in (v for v in report.verdicts if v.arch == target.arch.name):
                occ = v.occupancy
                verdict = "launches" if v.launchable else f"**{verdict_text(v)}**"
                out.append("| " + " | ".join([
                    f"`{v.config.label()}`", _kb(v.outcome.shared_bytes), _kb(v.outcome.registers),
                    _kb(v.outcome.spills), "-" if occ is None else str(occ.blocks_per_sm),
                    "-" if occ is None else str(occ.warps_per_sm),
                    "-" if occ is None else f"{occ.occupancy:.1%}", verdict.replace("|", "\\|"),
                ]) + " |")
            model = _model_line(dict(report.smem_models).get(target.arch.name))
            out.append("")
            out.append(f"SMEM model: `{model}`" if model else "SMEM model: not determined from the compiled points")
            fit = explain.largest_fits(report.largest_fit).get(target.arch.name)
            if fit:
                out.append(f"\nLargest fitting tile ({target.arch.smem_optin_per_block:,} B opt-in): {fit}")
            out.append("")
        for note in report.notes:
            out.append(f"> note: {explain.note(note)}\n")
    if result.depending:
        out.append(f"**{DEPENDS_HEAD}**\n")
        out.extend(f"- `{rv.kernel}` {explain.depends(rv)}".replace("|", "\\|") for rv in result.depending)
        out.append("")
    out.append(summary(result, strict))
    return "\n".join(out) + "\n"


def print_markdown(result: CheckResult, strict: bool = False) -> None:
    output.write_raw(check_markdown(result, strict))


# --------------------------------------------------------------------------- progress
def progress_bar():
    """A callback ``(done, total)`` for the compiles; a bar only when stderr is a terminal."""
    return output.progress_bar("compiling", "configs", before="scanning and isolating kernels")
