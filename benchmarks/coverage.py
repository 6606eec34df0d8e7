"""Coverage on real repositories: how many kernels `check` judges with zero configuration, and
with one repo-level ``assume`` table (``benchmarks/coverage/<repo>.toml``, at most 10 names).

    python benchmarks/coverage.py [CORPUS_DIR] [--repo NAME] [--jobs N] > results.json

CORPUS_DIR: the unpacked ``../shared/corpus`` (``unpack.sh``; default /tmp/corpus). Runs the
real CLI (``check --format json``) once per repo and setting; prints one JSON object. A kernel
(autotune site) counts as judged exactly when every spec of it is ``judged``/``no_launchable``
with no assumption, as judged with assumptions when every spec is judged and some rest on
assumptions; else by its first not-judged status. Kernels that need another Triton (a fork's
module such as TLX or a distributed-ops dialect, or an API this Triton removed: reason
``triton_module_absent``) are counted apart: the ``_stock_triton`` shares leave them out of the
denominator, since no spec makes them compile on the installed Triton. What a check cost is
beside it: ``compile_jobs`` (compiled + cached) and what the shape sweep added (``swept_specs``,
``swept_verdicts``: one compile each).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
JUDGED = {"judged", "assumed", "no_launchable"}


def run_check(repo: Path, assume: dict, jobs: int | None, cache: Path, timeout: float | None = None) -> tuple[dict, float]:
    cmd = [sys.executable, "-m", "autotune_rewrite", "check", str(repo), "--format", "json"]
    for name, value in assume.items():
        cmd += ["--assume", f"{name}={json.dumps(value)}"]
    if jobs:
        cmd += ["-j", str(jobs)]
    env = dict(os.environ, AUTOTUNE_REWRITE_CACHE_DIR=str(cache))
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True, env=env, start_new_session=True)
        rusage = _wait(proc, timeout)
        wall = time.perf_counter() - start
        if rusage is None:
            return {"error": [f"check did not finish in {timeout:.0f} s"]}, wall
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if proc.returncode not in (0, 1):
        return {"error": stderr.strip().splitlines()[-1:] or ["exit %d" % proc.returncode]}, wall
    result = json.loads(stdout)
    # wait4's figure covers the check and the compile workers it reaped (Linux: kilobytes): the
    # largest resident set of one process of the run, not the sum of those running at once.
    result["peak_rss_mb"] = rusage.ru_maxrss // 1024
    return result, wall


def _wait(proc: subprocess.Popen, timeout: float | None):
    """The child's resource usage once it exits, or None (killed) past ``timeout``."""
    deadline = time.monotonic() + timeout if timeout else None
    while True:
        pid, status, rusage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return rusage
        if deadline and time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)  # its compile workers too
            os.wait4(proc.pid, 0)
            return None
        time.sleep(0.2)


def scan_resolved(repo: Path, cache: Path, dump: Path | None, timeout: float | None = None) -> dict:
    """The locator's own share: sites whose configs ``scan --arch sm_120`` resolves."""
    cmd = [sys.executable, "-m", "autotune_rewrite", "scan", str(repo), "--arch", "sm_120", "--format", "json"]
    env = dict(os.environ, AUTOTUNE_REWRITE_CACHE_DIR=str(cache))
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": [f"scan did not finish in {timeout:.0f} s"]}
    if proc.returncode not in (0, 1):
        return {"error": proc.stderr.strip().splitlines()[-1:] or ["exit %d" % proc.returncode]}
    if dump:
        (dump / f"{repo.name}.scan.json").write_text(proc.stdout)
    sites = json.loads(proc.stdout)["sites"]
    return {"sites": len(sites), "resolved": sum(1 for s in sites if not s.get("unresolved_reason"))}


def tally(result: dict) -> dict:
    by_site: dict[str, list[dict]] = collections.defaultdict(list)
    for k in result.get("kernels", []):
        by_site[f"{k['path']}::{k['kernel']}"].append(k)
    counts = collections.Counter()
    missing = collections.Counter()
    for reports in by_site.values():
        statuses = [r["status"] for r in reports]
        if all(s in JUDGED for s in statuses):
            counts["judged_assumed" if any(r.get("assumptions") for r in reports) else "judged_exact"] += 1
        else:
            first = next(s for s in statuses if s not in JUDGED)
            counts[first] += 1
            for r in reports:
                for name in (r.get("problem") or {}).get("missing") or ():
                    missing[name] += 1
    # Resolved configs: everything but the locator's "configs not statically known / empty" (a
    # kernel whose module cannot be loaded has resolved configs and counts as not judged).
    resolved = sum(1 for reports in by_site.values()
                   if (reports[0].get("problem") or {}).get("reason") not in ("configs_unresolved", "configs_empty"))
    judged = counts["judged_exact"] + counts["judged_assumed"]
    # Need another Triton (a fork's module, a removed API): no spec makes them compile on this one.
    fork = sum(1 for reports in by_site.values()
               if (reports[0].get("problem") or {}).get("reason") == "triton_module_absent")
    # What the shape sweep costs: its specs and their (config, target) verdicts, each one compile.
    swept = [k for k in result.get("kernels", [])
             if any("default shape sweep" in (a.get("source") or "") for a in k.get("assumptions") or ())]
    return {
        "compile_jobs": result.get("compiled", 0) + result.get("cached", 0),
        "peak_rss_mb": result.get("peak_rss_mb"),
        "slowest_compiles": result.get("slowest_compiles", [])[:3],
        "swept_specs": len(swept),
        "swept_verdicts": sum(len(k.get("configs") or ()) for k in swept),
        # Specs made from an assumed range (a sweep or a bounded value) and the (config, target)
        # verdicts that change inside their range (check/ranges).
        "ranged_specs": sum(1 for k in result.get("kernels", []) if k.get("spec_family")),
        "depends": len(result.get("depends") or ()),
        "kernels": len(by_site),
        "kernels_with_resolved_configs": resolved,
        "judged_exact": counts["judged_exact"],
        "judged_with_assumptions": counts["judged_assumed"],
        "judged_share_of_resolved": round(judged / resolved, 3) if resolved else None,
        "need_another_triton": fork,
        "judged_share_of_resolved_stock_triton": round(judged / (resolved - fork), 3) if resolved > fork else None,
        "needs_spec": counts["needs_spec"],
        "needs_spec_top_missing": missing.most_common(8),
        "unresolved_configs": len(by_site) - resolved,
        "not_loadable": counts["unresolved"] - (len(by_site) - resolved) - fork,
        "failed": sum(counts[s] for s in ("compile_crashed", "internal_error", "spec_suspect")),
        "other": {s: n for s, n in counts.items() if s not in (
            "judged_exact", "judged_assumed", "needs_spec", "unresolved", "compile_crashed", "internal_error",
            "spec_suspect")},
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", nargs="?", default="/tmp/corpus")
    ap.add_argument("--repo", action="append")
    ap.add_argument("--jobs", type=int)
    ap.add_argument("--cache", default="/tmp/coverage-cache")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds one repo's check may take (then: error)")
    ap.add_argument("--dump", type=Path, help="write each repo's raw scan/check JSON here")
    args = ap.parse_args()
    if args.dump:
        args.dump.mkdir(parents=True, exist_ok=True)
    corpus = Path(args.corpus)
    # --repo's order when given (a bounded device run measures the repos it names first), else by name.
    repos = [corpus / r for r in args.repo if (corpus / r).is_dir()] if args.repo else sorted(
        p for p in corpus.iterdir() if p.is_dir())
    out = {"triton": _triton_version(), "target": "sm_120 (default)", "cpus": os.cpu_count(), "jobs": args.jobs,
           "cache": "as found in --cache (delete it for a cold run)", "repos": []}
    for repo in repos:
        table_file = HERE / "coverage" / f"{repo.name}.toml"
        table = tomllib.loads(table_file.read_text())["assume"] if table_file.exists() else {}
        row = {"repo": repo.name, "scan_sm_120": scan_resolved(repo, Path(args.cache), args.dump, args.timeout)}
        for label, assume in (("zero_config", {}), ("assume_table", table)):
            if label == "assume_table" and not table:
                continue
            result, wall = run_check(repo, assume, args.jobs, Path(args.cache), args.timeout)
            if args.dump and "error" not in result:
                (args.dump / f"{repo.name}.{label}.check.json").write_text(json.dumps(result, indent=1, sort_keys=True))
            row[label] = {"wall_s": round(wall, 1), "assume": assume, **(
                {"error": result["error"]} if "error" in result else tally(result))}
            row.setdefault("sites", row[label].get("kernels"))
        out["repos"].append(row)
        print(json.dumps(row), file=sys.stderr)
    totals = collections.Counter()
    for row in out["repos"]:
        for label in ("zero_config", "assume_table"):
            r = row.get(label) or row.get("zero_config")
            if "error" in r:
                continue
            totals[f"{label}_resolved"] += r["kernels_with_resolved_configs"]
            totals[f"{label}_judged"] += r["judged_exact"] + r["judged_with_assumptions"]
            totals[f"{label}_need_another_triton"] += r["need_another_triton"]
        scan = row["scan_sm_120"]
        if "error" not in scan:
            totals["scan_sites"] += scan["sites"]
            totals["scan_resolved"] += scan["resolved"]
    out["totals"] = dict(totals)
    kernels = sum(r["zero_config"].get("kernels", 0) for r in out["repos"])
    out["totals"]["kernels"] = kernels
    if kernels:
        out["totals"]["zero_config_share_of_all_sites"] = round(totals["zero_config_judged"] / kernels, 3)
    if totals["scan_sites"]:
        out["totals"]["scan_resolved_share"] = round(totals["scan_resolved"] / totals["scan_sites"], 3)
    for label in ("zero_config", "assume_table"):
        if totals[f"{label}_resolved"]:
            out["totals"][f"{label}_share"] = round(totals[f"{label}_judged"] / totals[f"{label}_resolved"], 3)
            stock = totals[f"{label}_resolved"] - totals[f"{label}_need_another_triton"]
            out["totals"][f"{label}_share_stock_triton"] = round(totals[f"{label}_judged"] / stock, 3)
    print(json.dumps(out, indent=1))


def _triton_version() -> str:
    try:
        import triton

        return triton.__version__
    except ImportError:
        return "?"


if __name__ == "__main__":
    main()
