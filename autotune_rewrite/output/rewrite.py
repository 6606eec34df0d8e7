"""Rendering of ``diff`` and ``apply``: diffs and branch lines on stdout, the summary (what each
variant chose and why, with the compiled numbers) on stderr."""

from __future__ import annotations

import json

from rich.markup import escape

from autotune_rewrite import output
from autotune_rewrite.rewrite.apply import ApplyResult
from autotune_rewrite.rewrite.diff import RewriteRun


def print_diff(run: RewriteRun) -> None:
    output.write_raw(run.diff)


SCHEMA_VERSION = 1


def print_json(run: RewriteRun) -> None:
    """``diff --format json``: the decisions, their evidence in short, and the diff itself."""
    kernels = []
    for kr in run.kernels:
        d = kr.decision
        kernels.append({
            "kernel": run.prefix + d.site.ident,
            "variant": d.variant,
            "targets": list(d.targets),
            "specs": list(d.specs),
            "configs": [
                {
                    "config": p.config.label(),
                    "kept": p.kept is not None,
                    "evidence": [
                        {"spec": e.spec, "arch": e.verdict.arch, "smem": e.verdict.outcome.shared_bytes,
                         "registers": e.verdict.outcome.registers, "spills": e.verdict.outcome.spills,
                         "occupancy": e.verdict.occupancy.occupancy if e.verdict.occupancy else None}
                        for e in p.evidence
                    ],
                }
                for p in d.configs
            ],
            "dropped": [{"config": c.label(), "why": why} for c, why in d.dropped],
            "bs_bucket": d.add_bs_bucket,
            "explanation": list(d.explanation),
            "files": [run.prefix + c.path for c in kr.changes],
            "rechecked": bool(kr.recheck),
        })
    doc = {
        "schema": SCHEMA_VERSION,
        "variant": run.variant,
        "targets": list(run.targets),
        "triton_version": run.triton_version,
        "kernels": kernels,
        "skipped": [{"kernel": run.prefix + k, "why": why} for k, why in run.skipped],
        "notes": list(run.notes),
        "changed_files": [run.prefix + c.path for c in run.changes],
        "diff": run.diff,
    }
    output.write_raw(json.dumps(doc, indent=2) + "\n")


def print_summary(run: RewriteRun) -> None:
    err = output.stderr()
    versions = f"Triton {run.triton_version}, {', '.join(run.targets)}"
    for kr in run.kernels:
        d = kr.decision
        state = "changes" if kr.changes else "no change"
        err.print(f"[bold]{escape(run.prefix + d.site.ident)}[/] {d.variant} ({state}; {escape(versions)})", markup=True)
        for line in d.explanation:
            err.print(f"  - {escape(line)}", markup=True)
        for r in kr.recheck:
            spec = f" ({r.spec.name})" if r.spec is not None and len(kr.recheck) > 1 else ""
            for v in r.verdicts:
                o = v.outcome
                err.print(
                    f"  - re-checked {escape(v.config.label())} on {v.arch}{escape(spec)}: {o.shared_bytes:,} B SMEM, "
                    f"{o.registers} regs, {o.spills} spills, launches",
                    markup=True,
                )
    for ident, why in run.skipped:
        output.warning(f"{run.prefix}{ident}: skipped: {why}")
    for note in run.notes:
        output.warning(note)
    n = len(run.changes)
    if n:
        err.print(f"{run.variant}: {n} file{'s' if n != 1 else ''} would change: " + ", ".join(run.prefix + c.path for c in run.changes))
    else:
        err.print(f"{run.variant}: nothing to change")


def print_apply(result: ApplyResult) -> None:
    for b in result.branches:
        output.write_raw(f"{b.name}\t{b.pr_body_path}\n")
    err = output.stderr()
    for b in result.branches:
        err.print(f"created {escape(b.name)} ({b.commit[:12]}): {escape(b.subject)}", markup=True)
        err.print(f"  PR body: {escape(b.pr_body_path)}", markup=True)
    for ident, variant in result.unchanged:
        err.print(f"{escape(ident)} {variant}: nothing to change, no branch", markup=True)
    for ident, why in result.skipped:
        output.warning(f"{ident}: skipped: {why}")
    if not result.branches:
        err.print("no branch created")
