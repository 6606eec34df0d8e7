"""``check --format sarif``: SARIF 2.1.0 on stdout, so GitHub code scanning (or any SARIF
viewer) shows each config that cannot launch as an alert on its line of the decorator.

One ``result`` per dead config x target, located on the config's ``triton.Config(...)`` (in
the helper module it comes from, when that is where it is written; on the ``configs=``
argument when the list is generated); a warning per launchable config that spills; an error
on the decorator of a kernel where no config launches; a note on the decorator of every
kernel that was not judged (needs_spec, unresolved, spec_suspect, compile_crashed, ...), so a
gate never looks clean because it could not look. ``ruleId`` names the kind of finding; the
message words come from ``explain`` and ``outcomes``, as in every other format. Paths are
relative to the repository root (``uriBaseId`` ``%SRCROOT%``), which is where GitHub's
``upload-sarif`` resolves them. The exit code is the run's, as for the other formats.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

from autotune_rewrite import output
from autotune_rewrite import findings as cf
from autotune_rewrite.check import ranges
from autotune_rewrite.check.check_result import CheckResult
from autotune_rewrite.evidence import ConfigVerdict, KernelReport
from autotune_rewrite.model import AutotuneSite, Span
from autotune_rewrite.outcomes import Status
from autotune_rewrite.output import explain
from autotune_rewrite.output.check import run_warnings
from autotune_rewrite.output.outcomes import judged_line, kernel_name, problem_text

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"

# (id, name, short description, full description, level). Ids are hierarchical (SARIF 3.27.5):
# every "cannot-launch/..." is a kind of "the autotuner will time this config as inf".
_RULES = (
    ("cannot-launch/shared-memory", "SharedMemoryOverLimit",
     "Config needs more shared memory than the target GPU gives one block",
     "The compiled kernel asks for more dynamic shared memory than the target's opt-in per-block limit (or its "
     "allocation, with static and reserved shared memory, exceeds the block limit): the launch fails with "
     "OutOfResources and Triton's autotuner silently times the config as inf.", "error"),
    ("cannot-launch/registers", "RegistersOverLimit",
     "Config needs more registers than the target GPU gives a thread or a block",
     "The compiled kernel's registers per thread, times its threads, do not fit the target's register file: "
     "no block can be resident, the launch fails and the autotuner prunes the config.", "error"),
    ("cannot-launch/threads", "ThreadsOverLimit",
     "Config has more threads per block than the GPU allows",
     "num_warps x 32 threads exceed the 1,024 threads a block may have: the config cannot launch.", "error"),
    ("cannot-launch/tensor-memory", "TensorMemoryOverLimit",
     "Config needs more tensor memory than the target GPU has",
     "The compiled kernel asks for more tensor-memory columns than one SM has: the config cannot launch.", "error"),
    ("cannot-launch/compile-rejected", "CompileRejected",
     "Config is rejected when compiled for the target GPU",
     "Compiling the config for the target fails in the kernel's own terms (a static_assert, a ptxas resource "
     "error, a compilation error of the kernel's source for these meta-parameters): Triton's autotuner prunes "
     "such a config without a word.", "error"),
    ("no-launchable-config", "NoLaunchableConfig",
     "No autotune config of the kernel launches on the target GPUs",
     "Every config of this autotune site is refused on some target: the kernel cannot run there at all. The "
     "message names the largest tile the fitted shared-memory model says fits, when it is known.", "error"),
    ("spills", "RegisterSpills",
     "Config spills registers to local memory on the target GPU",
     "The config launches, but its compiled kernel spills registers to local memory (cuobjdump's STACK), which "
     "usually costs bandwidth; a config with more warps or fewer stages may not.", "warning"),
    ("not-judged", "KernelNotJudged",
     "Kernel not judged: its configs were not proved to launch or not",
     "The kernel could not be judged (its launch spec lacks types or values, its configs are not statically "
     "known, the spec is probably wrong, or the compiler crashed): nothing is claimed about its configs. The "
     "message says what is missing.", "note"),
)
_RULE_INDEX = {rule[0]: i for i, rule in enumerate(_RULES)}

# The refusal's ``kind`` (findings.py) -> the rule it breaks.
_RULE_OF_REFUSAL = {
    "smem_over_optin": "cannot-launch/shared-memory",
    "smem_per_block": "cannot-launch/shared-memory",
    "registers_per_thread": "cannot-launch/registers",
    "registers_per_block": "cannot-launch/registers",
    "threads_per_block": "cannot-launch/threads",
    "tensor_memory": "cannot-launch/tensor-memory",
    "compile_failed": "cannot-launch/compile-rejected",
}


def _rules() -> list[dict]:
    return [{
        "id": rid,
        "name": name,
        "shortDescription": {"text": short},
        "fullDescription": {"text": full},
        "help": {"text": full},
        "defaultConfiguration": {"level": level},
        # GitHub ranks alerts by precision: a refusal is proved by the compile, a spill measured.
        "properties": {"tags": ["triton", "autotune", "gpu"], "precision": "medium" if level == "note" else "very-high"},
    } for rid, name, short, full, level in _RULES]


def _region(span: Span) -> dict:
    # LibCST: lines 1-based, columns 0-based with the end exclusive; SARIF: both 1-based, the end
    # column the one after the last character.
    return {"startLine": span.start_line, "startColumn": span.start_col + 1,
            "endLine": span.end_line, "endColumn": span.end_col + 1}


def _location(prefix: str, path: str, span: Span | None, line: int) -> dict:
    region = _region(span) if span is not None else {"startLine": line}
    return {"physicalLocation": {
        "artifactLocation": {"uri": quote(prefix + path), "uriBaseId": SRCROOT},
        "region": region,
    }}


def _kernel_location(prefix: str, site: AutotuneSite) -> dict:
    loc = _location(prefix, site.path, site.span, site.line)
    loc["logicalLocations"] = [{"name": site.kernel, "fullyQualifiedName": site.ident, "kind": "function"}]
    return loc


def _config_location(prefix: str, site: AutotuneSite, v: ConfigVerdict) -> dict:
    """The config's own ``triton.Config(...)`` when it is written out (perhaps in a helper
    module); else the ``configs=`` argument that generates it; else the decorator."""
    if v.config.span is not None:
        loc = _location(prefix, v.config.path or site.path, v.config.span, v.config.span.start_line)
    else:
        loc = _location(prefix, site.path, site.configs_span or site.span, site.line)
    loc["logicalLocations"] = [{"name": site.kernel, "fullyQualifiedName": site.ident, "kind": "function"}]
    return loc


def _result(rule: str, text: str, location: dict, properties: dict, level: str | None = None) -> dict:
    out = {"ruleId": rule, "ruleIndex": _RULE_INDEX[rule], "level": level or _RULES[_RULE_INDEX[rule]][4],
           "message": {"text": text}, "locations": [location]}
    if properties:
        out["properties"] = properties
    return out


def _verdict_properties(report: KernelReport, v: ConfigVerdict, result: CheckResult) -> dict:
    o = v.outcome
    return {
        "kernel": report.site.ident, "spec": report.spec.name if report.spec else None, "arch": v.arch,
        "config": v.config.label(), "sharedBytes": o.shared_bytes, "registers": o.registers, "spills": o.spills,
        "reasonCode": v.reason_code, "tritonVersion": result.triton_version,
        "ptxasVersion": dict(result.ptxas_versions).get(v.arch),
        "assumptions": [f"{a.parameter} = {a.value} ({a.source})" for a in report.assumptions],
    }


def _spills_note(report: KernelReport, v: ConfigVerdict) -> cf.Spills | None:
    return next((n for n in report.notes if isinstance(n, cf.Spills)
                 and n.arch == v.arch and n.config == v.config.label()), None)


def _kernel_results(report: KernelReport, result: CheckResult, prefix: str, soft: set, alive: dict) -> list[dict]:
    """``soft``: the keys of verdicts that fail at some values of an assumed range only, and
    ``alive`` (``ranges.launch_alive``) the launches with a launchable config at some value:
    warnings, not errors."""
    site = report.site
    name = kernel_name(site.kernel, report.spec.name if report.spec else None)
    out: list[dict] = []
    if report.problem is None:  # a spec_suspect kernel's verdicts are its spec's, not its configs'
        assumed = f"; {problem_text(report)}" if report.status is Status.ASSUMED else ""
        for v in report.verdicts:
            props = _verdict_properties(report, v, result)
            if not v.launchable and v.known:
                depends = ranges.key_of(report, v) in soft
                text = (f"{name}: {v.config.label()} cannot launch on {v.arch}: {explain.verdict_reason(v)}{assumed}"
                        + ("; it launches at other values of the assumed range (it depends on them)" if depends else ""))
                out.append(_result(_RULE_OF_REFUSAL[v.refusal.kind], text, _config_location(prefix, site, v), props,
                                   level="warning" if depends else None))
            elif v.launchable and v.outcome.spills:
                note = _spills_note(report, v)
                if note is not None:
                    out.append(_result("spills", f"{name}: {explain.note(note)}", _config_location(prefix, site, v),
                                       props))
    status = report.status
    props = {"kernel": site.ident, "spec": report.spec.name if report.spec else None, "status": status.value}
    if status is Status.NO_LAUNCHABLE:
        level = None if ranges.unlaunchable_at_every_value(report, alive) else "warning"
        out.append(_result("no-launchable-config", f"{name}: {problem_text(report)}", _kernel_location(prefix, site),
                           props, level=level))
    elif not status.judged:
        out.append(_result("not-judged", f"{name}: not judged ({status.value}): {problem_text(report)}",
                           _kernel_location(prefix, site), props))
    return out


def _notifications(result: CheckResult, prefix: str) -> tuple[list[dict], list[dict]]:
    """Files the scan could not read (execution) and settings warnings (configuration)."""
    execution = [{"level": "warning", "message": {"text": f"{e.path}: {e.message}"},
                  "locations": [{"physicalLocation": {"artifactLocation": {"uri": quote(prefix + e.path),
                                                                           "uriBaseId": SRCROOT}}}]}
                 for e in result.errors]
    configuration = [{"level": "warning", "message": {"text": w}} for w in run_warnings(result)]
    return execution, configuration


def check_sarif(result: CheckResult, strict: bool = False, prefix: str = "", srcroot: str | None = None) -> str:
    """The SARIF log of one check run. ``prefix``: the project root relative to the repository
    root ("" when they are the same, "sub/" in a monorepo); ``srcroot``: the repository root as
    an absolute path, recorded in ``originalUriBaseIds`` when given."""
    from autotune_rewrite import __version__

    report = result.report(strict)
    exit_code = int(report.exit_code)
    execution, configuration = _notifications(result, prefix)
    soft, alive = {rv.key for rv in result.depending}, ranges.launch_alive(result.reports)
    invocation = {"executionSuccessful": exit_code != 2, "exitCode": exit_code}
    if execution:
        invocation["toolExecutionNotifications"] = execution
    if configuration:
        invocation["toolConfigurationNotifications"] = configuration
    run = {
        "tool": {"driver": {"name": "autotune-rewrite", "version": __version__, "semanticVersion": __version__,
                            "rules": _rules()}},
        "invocations": [invocation],
        "columnKind": "unicodeCodePoints",
        "results": [r for kr in result.reports for r in _kernel_results(kr, result, prefix, soft, alive)],
        "properties": {
            "tritonVersion": result.triton_version,
            "targets": [{"arch": t.arch.name, "name": t.name, "ptxasVersion": dict(result.ptxas_versions).get(t.arch.name)}
                        for t in result.targets],
            "summary": judged_line(report),
        },
    }
    if srcroot is not None:
        run["originalUriBaseIds"] = {SRCROOT: {"uri": Path(srcroot).resolve().as_uri() + "/"}}
    log = {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}
    return json.dumps(log, indent=2) + "\n"


def print_sarif(result: CheckResult, strict: bool = False) -> None:
    from autotune_rewrite import gitrepo

    root = Path(result.root)
    top = gitrepo.top_level(root)
    output.write_raw(check_sarif(result, strict, prefix=gitrepo.prefix(root) if top else "",
                                 srcroot=str(top or root)))


__all__ = ["SCHEMA_URI", "check_sarif", "print_sarif"]
