"""Rendering of ``diff`` and ``apply``: diffs and branch lines on stdout, the summary (what each
variant chose and why, with the compiled numbers) on stderr."""

from __future__ import annotations

import json

from rich.markup import escape

from autotune_rewrite import output
from autotune_rewrite.findings import Assumed
from autotune_rewrite.output import explain, explain_rewrite
from autotune_rewrite.outcomes import Report, Status
from autotune_rewrite.output.changed import changed_json, changed_line
from autotune_rewrite.output.outcomes import judged_line, kernel_name, outcome_json, problem_text, report_json, stanzas, verdict_json
from autotune_rewrite.rewrite.applied import ApplyResult
from autotune_rewrite.rewrite import fleet
from autotune_rewrite.rewrite.rewrite_run import RewriteRun


def print_diff(run: RewriteRun) -> None:
    output.write_raw(run.diff)


SCHEMA_VERSION = 2  # 2: evidence entries are check's verdict shape; per-kernel "outcomes"


def _outcomes_json(run: RewriteRun) -> list[dict]:
    return [{"kernel": run.prefix + r.site.ident, "spec": r.spec.name if r.spec else None, **outcome_json(r)}
            for r in run.reports]


def print_json(run: RewriteRun, report: Report | None = None) -> None:
    """``diff --format json``: the decisions, their evidence (check's verdict shape), every
    kernel's outcome, and the diff itself."""
    report = report or run.report()
    kernels = []
    for kr in run.kernels:
        d = kr.decision
        effects = fleet.effects(d, kr.reports)
        kernels.append({
            "kernel": run.prefix + d.site.ident,
            "variant": d.variant,
            "targets": list(d.targets),
            "specs": list(d.specs),
            "configs": [
                {
                    "config": p.config.label(),
                    "kept": p.kept is not None,
                    "evidence": [{"spec": e.spec, **verdict_json(e.verdict)} for e in p.evidence],
                }
                for p in d.configs
            ],
            "dropped": [{"config": x.config.label(), "why": explain_rewrite.dropped_why(x), "reason": x.reason,
                         "fact": explain_rewrite.fact_json(x)} for x in d.dropped],
            "guarded": [{"config": g.config.label(), "archs": list(g.archs), "fact": explain_rewrite.fact_json(g)}
                        for g in d.guarded],
            "per_target": [{**explain_rewrite.fact_json(f), "line": explain_rewrite.fact(f)} for f in effects[0]],
            "per_spec": [{**explain_rewrite.fact_json(f), "line": explain_rewrite.fact(f)} for f in effects[1]],
            "bs_bucket": d.add_bs_bucket,
            "explanation": explain_rewrite.explanation(d),
            "facts": [explain_rewrite.fact_json(f) for f in d.explanation],
            "files": [run.prefix + c.path for c in kr.changes],
            "rechecked": bool(kr.recheck),
        })
    doc = {
        "schema": SCHEMA_VERSION,
        "variant": run.variant,
        "targets": list(run.targets),
        "triton_version": run.triton_version,
        "kernels": kernels,
        "skipped": [{"kernel": run.prefix + k, "why": explain_rewrite.why(why), "fact": explain_rewrite.fact_json(why)}
                    for k, why in run.skipped],
        "failed": [{"kernel": run.prefix + k, "why": explain_rewrite.why(why)} for k, why in run.failed],
        "outcomes": _outcomes_json(run),
        "summary": {**report_json(report), "line": judged_line(report)},
        "notes": [explain_rewrite.rewrite_note(n) for n in run.notes],
        "changed_files": [run.prefix + c.path for c in run.changes],
        "diff": run.diff,
        "changed_since": changed_json(run.changed),
    }
    output.write_raw(json.dumps(doc, indent=2) + "\n")


def _not_judged(run: RewriteRun) -> None:
    for r in run.reports:
        if r.status.judged and r.status is not Status.NO_LAUNCHABLE:
            continue
        name = kernel_name(run.prefix + r.site.ident, r.spec.name if r.spec else None)
        say = output.error if r.status is Status.INTERNAL_ERROR else output.warning
        say(f"{r.status.value} {name}: {problem_text(r)}")
    for stanza in stanzas(run.reports):
        output.stderr().print(stanza, markup=False)


def print_summary(run: RewriteRun, report: Report | None = None) -> None:
    report = report or run.report()
    err = output.stderr()
    versions = f"Triton {run.triton_version}, {', '.join(run.targets)}"
    for kr in run.kernels:
        d = kr.decision
        state = "changes" if kr.changes else "no change"
        err.print(f"[bold]{escape(run.prefix + d.site.ident)}[/] {d.variant} ({state}; {escape(versions)})", markup=True)
        for line in explain_rewrite.explanation(d):
            err.print(f"  - {escape(line)}", markup=True)
        if len(d.targets) > 1 or d.guarded:  # the fleet: what each target's autotuner times now
            per_target, per_spec = fleet.effects(d, kr.reports)
            for f in (*per_target, *per_spec):
                err.print(f"  - {escape(explain_rewrite.fact(f))}", markup=True)
        for r in kr.reports:  # what the verdicts behind this decision rest on
            if r.spec is not None and r.spec.assumptions:
                err.print(f"  - {escape(explain.note(Assumed(r.spec.name, r.spec.assumptions)))}", markup=True)
        for r in kr.recheck:
            spec = f" ({r.spec.name})" if r.spec is not None and len(kr.recheck) > 1 else ""
            for v in r.verdicts:
                o = v.outcome
                # A config kept for the specs that launch it (the fleet rule) is re-checked on all.
                state = "launches" if v.launchable else "cannot launch for this spec, as decided"
                err.print(
                    f"  - re-checked {escape(v.config.label())} on {v.arch}{escape(spec)}: {o.shared_bytes:,} B SMEM, "
                    f"{o.registers} regs, {o.spills} spills, {state}",
                    markup=True,
                )
    for ident, why in run.skipped:
        output.warning(f"{run.prefix}{ident}: skipped: {explain_rewrite.why(why)}")
    for ident, why in run.failed:
        output.warning(f"{run.prefix}{ident}: cannot be changed: {explain_rewrite.why(why)}")
    _not_judged(run)
    for note in run.notes:
        output.warning(explain_rewrite.rewrite_note(note))
    n = len(run.changes)
    if n:
        err.print(f"{run.variant}: {n} file{'s' if n != 1 else ''} would change: " + ", ".join(run.prefix + c.path for c in run.changes))
    else:
        err.print(f"{run.variant}: nothing to change")
    if run.changed is not None:
        err.print(changed_line(run.changed), markup=False)
    err.print(judged_line(report), markup=False)


def print_apply(result: ApplyResult, report: Report | None = None) -> None:
    report = report or result.report()
    for b in result.branches:
        output.write_raw(f"{b.name}\t{b.pr_body_path}\n")
    err = output.stderr()
    for b in result.branches:
        err.print(f"created {escape(b.name)} ({b.commit[:12]}): {escape(b.subject)}", markup=True)
        err.print(f"  PR body: {escape(b.pr_body_path)}", markup=True)
    for ident, variant in result.unchanged:
        err.print(f"{escape(ident)} {variant}: nothing to change, no branch", markup=True)
    for ident, why in result.skipped:
        output.warning(f"{ident}: skipped: {explain_rewrite.why(why)}")
    if result.runs:
        _not_judged(result.runs[0])
        for run in result.runs[1:]:  # a bug in a later variant's run only
            for r in run.reports:
                if r.status is Status.INTERNAL_ERROR:
                    output.error(f"{r.status.value} {run.prefix}{r.site.ident} ({run.variant}): {problem_text(r)}")
    if not result.branches:
        err.print("no branch created")
    err.print(judged_line(report), markup=False)
