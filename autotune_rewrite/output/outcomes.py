"""Words for per-kernel outcomes, and the one JSON shape of a verdict, for check, diff and apply.

The stages hand over data (a ``Status``, a ``Problem`` with a reason code, a ``ConfigVerdict``);
the sentences are chosen here, once, so the three commands say the same thing the same way.
"""

from __future__ import annotations

from autotune_rewrite.evidence import ConfigVerdict, KernelReport
from autotune_rewrite.model import to_jsonable
from autotune_rewrite.outcomes import Problem, Reason, Report, Status
from autotune_rewrite.output import explain


# --------------------------------------------------------------------------- verdict JSON
def verdict_json(v: ConfigVerdict) -> dict:
    """One config on one target: what was compiled, the numbers, and whether it launches."""
    c, o, occ = v.config, v.outcome, v.occupancy
    return {
        "arch": v.arch,
        "label": c.label(),
        "params": dict(c.kwargs),
        "num_warps": c.effective_num_warps,
        "num_stages": c.effective_num_stages,
        "num_ctas": c.effective_num_ctas,
        "maxnreg": c.maxnreg,
        "line": c.span.start_line if c.span else None,
        "path": c.path,
        "shared_bytes": o.shared_bytes,
        "tmem_bytes": o.tmem_bytes,
        "registers": o.registers,
        "spills": o.spills,
        "stopped_early": o.stopped_early,  # compiled to its SMEM only: registers/spills not compiled
        "compile_seconds": round(o.seconds, 3),  # the compile's own, where it ran (a cached outcome: its first run)
        "compile_peak_mb": o.peak_mb,  # its peak resident set (compiler or ptxas), where measured
        "blocks_per_sm": occ.blocks_per_sm if occ else None,
        "warps_per_sm": occ.warps_per_sm if occ else None,
        "occupancy": round(occ.occupancy, 4) if occ else None,
        "limiter": occ.limiter if occ else None,
        "launchable": v.launchable,
        "reason_code": v.reason_code,
        "reason": explain.verdict_reason(v),
        "refusal": to_jsonable(v.refusal),
        "compile_error": o.error,
        "compile_error_kind": o.error_kind,
        "compile_error_at": f"{o.error_file}:{o.error_line}" if o.error_file else None,
        "cached": o.cached,
        # What was compiled, so the numbers can be reproduced (and checked on a GPU).
        "signature": dict(o.job.signature),
        "constexprs": {k: val for k, val in o.job.constexprs},
        "divisible_by_16": list(o.job.divisible_by_16),
    }


def outcome_json(report: KernelReport) -> dict:
    """``status``, ``assumptions`` and ``problem`` of one kernel x launch spec."""
    p = report.problem
    return {
        "status": report.status.value,
        "assumptions": [{"parameter": a.parameter, "value": a.value, "source": a.source} for a in report.assumptions],
        "problem": None if p is None else {
            "reason": p.reason.value, "detail": explain.suspicions(report.suspicions) or p.detail,
            "missing": list(p.missing), "traceback_file": p.traceback_file, "places": list(p.places),
        },
        "suspicions": [to_jsonable(s) for s in report.suspicions],
        "message": problem_text(report),
    }


def report_json(report: Report) -> dict:
    return {
        "exit_code": int(report.exit_code),
        "judged": len(report.judged),
        "kernels": len(report.outcomes),
        "statuses": {s.value: n for s, n in report.counts.items()},
    }


# --------------------------------------------------------------------------- words
def problem_text(report: KernelReport) -> str | None:
    """Why this kernel was not judged (or judged to have no launchable config), in one line."""
    status = report.status
    if report.suspicions:
        return "launch spec probably wrong, so no config is judged: " + explain.suspicions(report.suspicions)
    if report.problem is not None:
        return _problem(report.problem)
    if status is Status.COMPILE_CRASHED:
        v = report.crash
        where = f" at {v.outcome.error_file}:{v.outcome.error_line}" if v.outcome.error_file else ""
        return f"the compiler crashed on {v.config.label()} for {v.arch}{where}: {v.outcome.error}"
    if status is Status.NO_LAUNCHABLE:
        dead = report.dead_targets
        fits = "; ".join(f"{arch}: {text}" for arch, text in explain.largest_fits(report.largest_fit).items()
                         if arch in dead)
        hint = (f"largest fitting tile by the SMEM model (an estimate): {fits}" if fits
                else "add a smaller tile (fewer stages or a smaller BLOCK_*)")
        return f"no config launches on {', '.join(dead)}{_elsewhere(report, dead)}; {hint}"
    if status is Status.ASSUMED:
        return "judged with assumptions: " + ", ".join(f"{a.parameter} = {a.value} ({a.source})"
                                                         for a in report.assumptions)
    return None


def _elsewhere(report: KernelReport, dead: tuple[str, ...]) -> str:
    """How many configs launch on the other targets: ``" (sm_90: 1 of 1 launch)"``."""
    counts: dict[str, list[int]] = {}
    for v in report.verdicts:
        if v.arch not in dead:
            n = counts.setdefault(v.arch, [0, 0])
            n[0] += v.launchable
            n[1] += 1
    if not counts:
        return ""
    return " (" + ", ".join(f"{arch}: {ok} of {n} launch" for arch, (ok, n) in sorted(counts.items())) + ")"


def problem_line(p: Problem) -> str:
    """A problem outside any one kernel (a bug of ours in the command itself), as one line."""
    return _problem(p)


def _problem(p: Problem) -> str:
    if p.reason is Reason.CONFIGS_UNRESOLVED:
        return f"configs not statically known: {p.detail or 'unresolved'}"
    if p.reason is Reason.CONFIGS_EMPTY:
        return "the autotune config list is empty"
    if p.reason is Reason.KERNEL_NOT_ISOLATED and p.missing:
        names = ", ".join(f"global {n} ({where})" if where else f"global {n}"
                          for n, where in zip(p.missing, p.places or ("",) * len(p.missing)))
        return f"kernel not loadable: {names} could not be provided"
    if p.reason is Reason.KERNEL_NOT_ISOLATED:
        return f"kernel not loadable: {p.detail}"
    if p.reason is Reason.TRITON_MODULE_ABSENT:
        mods = ", ".join(f"{m} ({where})" if where else m for m, where in zip(p.missing, p.places or ("",) * len(p.missing)))
        return (f"needs {mods}, which Triton {p.detail} does not have (another Triton version's API, or a "
                "fork's); run check with that Triton installed to judge it")
    if p.reason is Reason.NO_SPEC:
        return "no launch spec: give its parameter types in the settings"
    if p.reason is Reason.MISSING_SPEC_VALUES:
        return f"missing launch spec values for {', '.join(p.missing)}: add them to {p.detail or 'the settings'}"
    if p.reason is Reason.COMPILE_CRASHED:
        return f"the compiler crashed: {p.detail}"
    if p.reason is Reason.SPEC_PROBABLY_WRONG:
        return f"launch spec probably wrong: {p.detail}"
    where = f"; traceback in {p.traceback_file}" if p.traceback_file else "; the traceback could not be written"
    return f"internal error ({p.detail}){where}; please report it"


def kernel_name(ident: str, spec: str | None) -> str:
    return ident if spec in (None, "default") else f"{ident} [{spec}]"


def judged_line(report: Report) -> str:
    """"judged N of M kernels", then every other kernel by outcome: a gate never passes silently."""
    judged = report.judged
    assumed = sum(1 for o in judged if o.status is Status.ASSUMED)
    head = f"judged {len(judged)} of {len(report.outcomes)} kernel{'s' if len(report.outcomes) != 1 else ''}"
    if assumed:
        head += f" ({assumed} with assumptions)"
    groups: dict[Status, list[str]] = {}
    for o in report.unjudged:
        groups.setdefault(o.status, []).append(kernel_name(o.kernel, o.spec))
    if groups:
        head += "; not judged: " + "; ".join(f"{s.value} {', '.join(names)}" for s, names in groups.items())
        if not report.strict:
            head += " (--strict fails the run on these)"
    return head


MAX_STANZA_LINES = 20


def stanzas(reports) -> list[str]:
    """What the kernels that need a spec still lack, as one ``assume`` table to fill in: a line
    per parameter name (a name several kernels lack is one line), most needed first, one screen
    at most (JSON has every kernel's own table)."""
    header, by_name = None, {}
    for r in reports:
        p = r.problem
        if p is None or not p.stanza:
            continue
        lines = p.stanza.splitlines()
        header = header or lines[0]
        for line in lines[1:]:
            name = line[2:].split("=", 1)[0].strip()
            by_name.setdefault(name, []).append((r.site.kernel, line))
    if header is None:
        return []
    ordered = sorted(by_name.items(), key=lambda item: -len({k for k, _ in item[1]}))
    out = [header]
    for name, uses in ordered[:MAX_STANZA_LINES]:
        kernels = sorted({k for k, _ in uses})
        line = uses[0][1]
        if len(kernels) > 1:
            line = f"# {name} =    # needed by {len(kernels)} kernels: {', '.join(kernels[:4])}" + \
                   (", ..." if len(kernels) > 4 else "")
        out.append(line)
    if len(ordered) > MAX_STANZA_LINES:
        out.append(f"# ... and {len(ordered) - MAX_STANZA_LINES} more names (--format json lists each kernel's)")
    return ["\n".join(out)]


__all__ = ["judged_line", "kernel_name", "outcome_json", "problem_text", "report_json", "stanzas", "verdict_json"]
