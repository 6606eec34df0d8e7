"""How long ``check`` takes to say its first verdict on a big repository, and where the time goes.

For the synthetic 200-site repository (``synthetic_repo.py``: 40 modules x 5 autotuned kernels,
10-30 configs each, 8 of them with a launch spec) and for FBGEMM from the corpus (33 sites, none
configured), each COLD (empty cache folder) and then WARM (the same folder again), in a fresh
process each time so nothing is imported or memoized beforehand. Prints JSON, one entry per
(repo, cache state)::

    {"repo", "sites", "cache", "time_to_first_verdict_s", "time_to_first_judged_s", "total_s",
     "cpu_s", "reports", "judged", "stages": {stage: {"wall_s", "cpu_s"}}}

Times are wall seconds from the process launch (Python start and imports included), as a user
sees them; ``cpu_all_s`` is the CPU of the run and all its workers (steady on a shared machine,
where wall times move with other users' load: ``load_average_before`` says how busy it was). A verdict is any kernel's final report (a ``needs_spec`` line counts: it is what the
user acts on); "judged" is the first kernel with compiled numbers. Stages (``autotune_rewrite.
stopwatch``, time goes to the innermost): scan_cache (hashing the tree for the scan cache),
scan (LibCST passes, in worker processes: wall only), link, bundles, specs, plans, pool_start,
reports (verdicts, SMEM probes and fits, printing), compile_wait (waiting for the pool).

``--baseline TREE``: also run another checkout's CLI (e.g. ``/work/main`` before this change)
on the same repositories, timing its first stderr line and its exit, for comparison.

    PYTHONPATH=. python benchmarks/first_verdict.py [--corpus /tmp/corpus] [--baseline /work/main]
        [-j N] [--out benchmarks/results/first_verdict/first_verdict.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def one_run(repo: Path, cache: Path, jobs: int | None, t0: float) -> dict:
    """In this (fresh) process: ``check`` with a stopwatch and a report hook."""
    from autotune_rewrite import stopwatch
    from autotune_rewrite.check.check import check

    seen: list[tuple[float, bool]] = []
    stopwatch.reset()
    cpu = time.process_time()
    result = check(repo, workers=jobs, cache_dir=cache,
                   on_report=lambda report, _info: seen.append((time.time() - t0, bool(report.verdicts))))
    total = time.time() - t0
    judged = [t for t, has in seen if has]
    return {
        "time_to_first_verdict_s": round(seen[0][0], 2) if seen else None,
        "time_to_first_judged_s": round(judged[0], 2) if judged else None,
        "total_s": round(total, 2),
        "cpu_s": round(time.process_time() - cpu, 2),  # this process only (not the workers)
        "reports": len(result.reports),
        "judged": sum(1 for r in result.reports if r.verdicts),
        "sites": len({r.site.ident for r in result.reports}),
        "compiled": result.compiled,
        "stages": stopwatch.totals(),
    }


def measure(repo: Path, cache: Path, jobs: int | None) -> dict:
    cmd = [sys.executable, __file__, "--one", str(repo), "--cache", str(cache), "--t0", repr(time.time())]
    if jobs:
        cmd += ["-j", str(jobs)]
    env = dict(os.environ, PYTHONPATH=str(ROOT), AUTOTUNE_REWRITE_HEARTBEAT_S="0")
    load, before = os.getloadavg()[0], _children_cpu()
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    return {**json.loads(out.strip().splitlines()[-1]), "cpu_all_s": round(_children_cpu() - before, 2),
            "load_average_before": round(load, 2)}


def _children_cpu() -> float:
    """CPU seconds of finished child processes and theirs (the compile and scan workers): the
    run's whole work, which, unlike wall time, other users of a shared machine do not inflate."""
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def baseline(tree: Path, repo: Path, cache: Path, jobs: int | None) -> dict:
    """Another checkout's CLI: wall time to its first stderr line and to its exit."""
    cmd = [sys.executable, "-m", "autotune_rewrite", "check", str(repo)] + (["-j", str(jobs)] if jobs else [])
    env = dict(os.environ, PYTHONPATH=str(tree), AUTOTUNE_REWRITE_HEARTBEAT_S="0",
               AUTOTUNE_REWRITE_CACHE_DIR=str(cache))
    load, before = os.getloadavg()[0], _children_cpu()
    t0 = time.time()
    # cwd=tree: ``python -m`` puts the working folder first on sys.path, so it picks the package.
    proc = subprocess.Popen(cmd, env=env, cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    first, line = None, ""
    for text in proc.stderr:
        if first is None:
            first, line = time.time() - t0, text.strip()[:80]
    proc.wait()
    return {"tree": str(tree), "time_to_first_verdict_s": round(first, 2) if first else None, "first_line": line,
            "total_s": round(time.time() - t0, 2), "cpu_all_s": round(_children_cpu() - before, 2),
            "exit_code": proc.returncode, "load_average_before": round(load, 2)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=Path("/tmp/corpus"))
    ap.add_argument("--baseline", type=Path)
    ap.add_argument("-j", type=int)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--only", choices=["synthetic", "fbgemm"])
    ap.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--cache", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--t0", type=float, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one_run(args.one, args.cache, args.j, args.t0)))
        return

    sys.path.insert(0, str(Path(__file__).parent))
    from synthetic_repo import make_repo

    entries = []
    with tempfile.TemporaryDirectory(prefix="first-verdict-") as tmp:
        repos = {}
        if args.only in (None, "synthetic"):
            repos["synthetic-200"] = make_repo(Path(tmp) / "synthetic")
        fbgemm = args.corpus / "pytorch__FBGEMM"
        if args.only in (None, "fbgemm") and fbgemm.is_dir():
            repos["pytorch__FBGEMM"] = fbgemm
        for name, repo in repos.items():
            cache = Path(tmp) / f"cache-{name}"
            for state in ("cold", "warm"):
                entry = {"repo": name, "cache": state, **measure(repo, cache, args.j)}
                print(json.dumps(entry), file=sys.stderr)
                entries.append(entry)
            if args.baseline:
                base_cache = Path(tmp) / f"baseline-{name}"
                for state in ("cold", "warm"):
                    entry = {"repo": name, "cache": state, "baseline": baseline(args.baseline, repo, base_cache, args.j)}
                    print(json.dumps(entry), file=sys.stderr)
                    entries.append(entry)
    payload = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "load_average_at_end": list(os.getloadavg())},
        "workers": args.j,
        "runs": entries,
    }
    text = json.dumps(payload, indent=2) + "\n"
    if args.out:
        args.out.write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
