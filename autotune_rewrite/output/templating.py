"""Commit messages and PR bodies, rendered from the Jinja2 templates in ``templates/``.

The templates ship inside the package as ``autotune_rewrite/templates`` (pyproject
force-includes the top-level folder); in a source checkout they are read from the repository's
top-level ``templates/``. ``context`` turns one kernel's rewrite into plain values, so the
templates only lay them out.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import jinja2

from autotune_rewrite.evidence import ConfigVerdict, KernelReport
from autotune_rewrite.output import explain, explain_rewrite
from autotune_rewrite.rewrite import fleet
from autotune_rewrite.rewrite.decision import Decision, config_key

TOOL = "autotune-rewrite"


def templates_dir() -> Path:
    here = Path(__file__).resolve().parent
    for candidate in (here.parent / "templates", here.parent.parent / "templates"):
        if (candidate / "commit_message.j2").is_file():
            return candidate
    raise RuntimeError(f"templates not found next to {here} (broken install?)")


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )


def _row(v: ConfigVerdict, spec: str) -> dict:
    o, occ = v.outcome, v.occupancy
    return {
        "config": v.config.label(),
        "spec": spec,
        "arch": v.arch,
        "smem": f"{o.shared_bytes:,}" if o.shared_bytes is not None else "-",
        "regs": "-" if o.registers is None else str(o.registers),
        "spills": "-" if o.spills is None else str(o.spills),
        "occupancy": f"{occ.occupancy:.1%} ({occ.warps_per_sm} warps/SM)" if occ and occ.blocks_per_sm else "-",
        "verdict": "launches" if v.launchable else f"cannot launch: {explain.verdict_reason(v)}",
    }


def _warmup(decision: Decision, buckets: tuple[int, ...]) -> str:
    n = len(decision.configs)
    key = list(decision.site.key or ())
    if n == 1:
        return "none: with a single config the autotuner never benchmarks, whatever the key"
    if decision.add_bs_bucket:
        key = key + ["bs_bucket"]
        return (
            f"{n} configs benchmarked once per distinct key ({', '.join(key)}); bs_bucket takes "
            f"{len(buckets) + 1} values, so at most {len(buckets) + 1} x (distinct values of the rest) x {n} benchmark runs"
        )
    return f"{n} configs benchmarked once per distinct key ({', '.join(key) or 'no key arguments'}): distinct keys x {n} runs"


def _capture(decision: Decision) -> str:
    if len(decision.configs) == 1:
        return (
            "safe at any time: a single config is never benchmarked (Triton's autotuner skips keying, "
            "pruning and benchmarking when `len(configs) == 1`), so nothing runs inside a CUDA graph capture"
        )
    return (
        "capture after warm-up: with several configs the autotuner benchmarks on the first launch of each "
        "new key, and benchmarking inside a CUDA graph capture fails (cudaErrorStreamCaptureInvalidated); "
        "run every captured shape eagerly once before capturing"
    )


def _us(ms) -> str:
    return "-" if ms is None else f"{ms * 1e3:,.1f}"


def bench_context(data: dict | None, variant: str) -> dict | None:
    """The PR body's "Measured" section from a saved ``bench`` result (JSON data), or None."""
    if not data:
        return None
    rec = data.get("recommendation") or {}
    batches = list(data.get("batches") or [])
    metric = data.get("metric", "graph_ms")
    cell = {(m["config"], m["batch"]): m for m in data.get("measurements") or []}
    rows = []
    for c in data.get("configs") or []:
        tags = (["orig"] if c.get("original") else []) + list(c.get("variants") or [])
        cells = []
        for b in batches:
            m = cell.get((c["label"], b))
            cells.append("-" if m is None else (m.get("error") or "").split(":")[0] or _us(m.get(metric)))
        rows.append({"config": c["label"], "in": ", ".join(tags) or "extra", "cells": cells})
    scores = {s["variant"]: s for s in rec.get("variants") or []}
    mine = scores.get(variant)
    gap = "-" if not mine or mine.get("worst_gap") is None else f"{mine['worst_gap']:+.1%}"
    return {
        "device": f"{data.get('device')} ({data.get('capability')})",
        "triton": data.get("triton_version"),
        "timed": data.get("timed"),
        "how": "CUDA graph replay" if metric == "graph_ms" else "triton.testing.do_bench",
        "batches": batches,
        "rows": rows,
        "recommended": rec.get("variant") or "none",
        "reason": rec.get("reason", ""),
        "this_gap": gap,
        "command": data.get("command", ""),
    }


def context(kr, run, bench: dict | None = None) -> dict:
    """Plain values for the templates from one ``KernelRewrite`` of a ``RewriteRun``; ``bench``: the
    latest saved ``bench`` result for the kernel (JSON data), quoted in the PR body when given."""
    command, triton_version, buckets, prefix = run.command, run.triton_version, run.buckets, run.prefix
    d: Decision = kr.decision
    reports: tuple[KernelReport, ...] = kr.reports
    before = [_row(v, r.spec.name if r.spec else "default") for r in reports for v in r.verdicts]
    guarded = {(config_key(g.config), a) for g in d.guarded for a in g.archs}
    after = [_row(e.verdict, e.spec) if (config_key(p.config), e.verdict.arch) not in guarded
             else {**_row(e.verdict, e.spec), "verdict": "pruned on this GPU by the device guard"}
             for p in d.configs for e in p.evidence]
    per_target, per_spec = fleet.effects(d, reports)
    rechecked = [_row(v, r.spec.name if r.spec else "default") for r in kr.recheck for v in r.verdicts]
    models = []
    for r in reports:
        for arch, model in r.smem_models or ((d.targets[0], r.smem_model),):
            if model is not None:
                models.append({"spec": r.spec.name if r.spec else "default", "arch": arch, "text": model.text,
                               "points": model.points, "residual": f"{model.max_residual:,}"})
    trailer = {
        "variant": d.variant,
        "kernel": f"{prefix}{d.site.ident}",
        "arch": list(d.targets),
        "configs": [p.config.label() for p in d.configs],
        "dropped": [x.config.label() for x in d.dropped],
        "guarded": {a: [g.config.label() for g in d.guarded if a in g.archs] for a in d.targets
                    if any(a in g.archs for g in d.guarded)} or None,
        "bs_bucket": list(buckets) if d.add_bs_bucket else None,
        "triton": triton_version,
        "tool": TOOL,
    }
    bucket_rule = ""
    if d.add_bs_bucket:
        from autotune_rewrite.rewrite.bucket import HELPER, bucket_values

        values = bucket_values(buckets)
        ranges = [f"B <= {buckets[0]} -> {values[0]}"]
        ranges += [f"{lo} < B <= {hi} -> {v}" for lo, hi, v in zip(buckets, buckets[1:], values[1:])]
        ranges.append(f"B > {buckets[-1]} -> {values[-1]}")
        bucket_rule = (
            f"every launch passes `bs_bucket={HELPER}(B)` ({'; '.join(ranges)}); `bs_bucket` is in "
            "`do_not_specialize`, so its values never cause a recompile"
        )
    return {
        "bench": bench_context(bench, d.variant),
        "bucket_rule": bucket_rule,
        "subject": explain_rewrite.subject(d),
        "kernel": d.site.kernel,
        "ident": f"{prefix}{d.site.ident}",
        "variant": d.variant,
        "targets": ", ".join(d.targets),
        "explanation": explain_rewrite.explanation(d),
        "per_target": [explain_rewrite.fact(f) for f in per_target],
        "per_spec": [explain_rewrite.fact(f) for f in per_spec],
        "notes": [explain_rewrite.rewrite_note(n) for n in kr.notes],
        "assumptions": [{"spec": r.spec.name, "parameter": a.parameter, "value": a.value, "source": a.source}
                        for r in reports if r.spec is not None for a in r.spec.assumptions],
        "files": [f"{prefix}{c.path}" for c in kr.changes],
        "before": before,
        "after": after,
        "rechecked": rechecked,
        "models": models,
        "capture": _capture(d),
        "warmup": _warmup(d, buckets),
        "command": command,
        "triton_version": triton_version,
        "trailer": json.dumps(trailer, sort_keys=True),
    }


def render(name: str, ctx: dict) -> str:
    return _env().get_template(name).render(**ctx)


def commit_message(ctx: dict) -> str:
    return render("commit_message.j2", ctx)


def pr_body(ctx: dict) -> str:
    return render("pr_body.md.j2", ctx)


def group_subject(path: str | None, count: int, run) -> str:
    """A group branch's title: ``prune for sm_120: 2 kernels of ops/gemm.py`` (``path`` None: the
    repository's)."""
    where = f"{run.prefix}{path}" if path is not None else "the repository"
    return f"{run.variant} for {', '.join(run.targets)}: {count} kernels of {where}"


def group_pr_body(title: str, members: list[tuple[object, dict]], run) -> str:
    """One PR body for a group's branch (``apply --group``): a table of its kernels (configs
    before and after, what was dropped and guarded), then each kernel's own body as a section.
    ``members``: (its ``KernelRewrite``, its ``context``) in commit order."""
    rows = []
    for kr, ctx in members:
        d = kr.decision
        guarded = {}
        for g in d.guarded:
            for arch in g.archs:
                guarded[arch] = guarded.get(arch, 0) + 1
        rows.append({"ident": ctx["ident"], "before": len(kr.site.configs or ()), "after": len(d.configs),
                     "dropped": len(d.dropped), "guarded": ", ".join(f"{n} on {a}" for a, n in guarded.items()) or "-",
                     "subject": ctx["subject"]})
    first = members[0][1]
    return render("group_pr_body.md.j2", {
        "title": title, "kernels": rows, "variant": first["variant"], "targets": first["targets"],
        "triton_version": first["triton_version"], "command": run.command,
        "bodies": [pr_body(ctx) for _, ctx in members]})
