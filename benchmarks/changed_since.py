"""``check --changed-since HEAD`` vs a full warm ``check`` on a corpus repository with one kernel touched.

A pull-request job judges only the kernels it touches; this measures what that saves once the
cache is warm. On a clone of the corpus repository (the corpus folder itself is never written):
one untimed full ``check`` warms the caches; then, ``--rounds`` times, side by side in the same
run: a comment is appended to one kernel file (a new one each time, so both timed commands pay
the same re-scan and re-cut of that file) and the full ``check`` is timed; another comment, and
``check --changed-since HEAD`` is timed. Each command is a fresh CLI process, wall seconds as a
user sees them. Prints JSON::

    {"repo", "touched", "sites", "rounds", "full_s": [...], "changed_s": [...],
     "full_median_s", "changed_median_s", "ratio" (changed / full), "full_cpu_s", "changed_cpu_s"
     (user + sys seconds of each command and its workers), "judged_changed", "line",
     "load_average_before", "cpu_count", "triton"}

    PYTHONPATH=. python benchmarks/changed_since.py --repo /tmp/corpus-changed/pytorch__FBGEMM \
        [--touch path/in/repo.py] [--rounds 3] [-j N] [--out benchmarks/results/changed_since/changed_since.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _cli(repo: Path, *args: str) -> tuple[float, subprocess.CompletedProcess]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "NO_COLOR": "1", "AUTOTUNE_REWRITE_HEARTBEAT_S": "0"}
    start, cpu = time.perf_counter(), _children_cpu()
    done = subprocess.run([sys.executable, "-m", "autotune_rewrite", *args], cwd=repo, env=env,
                          capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(args)}: exit {done.returncode}\n{done.stderr[-2000:]}")
    _CPU.append(_children_cpu() - cpu)
    return time.perf_counter() - start, done


_CPU: list[float] = []  # CPU seconds (user + sys, the command and its workers) of each _cli call


def _children_cpu() -> float:
    # CPU time does not grow with the box's load as wall time does: on a shared 2-core box it is
    # the figure to compare between runs made at different loads.
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _first_kernel_file(repo: Path, jobs: list[str]) -> str:
    _, done = _cli(repo, "scan", ".", "--format", "json", *jobs)
    sites = json.loads(done.stdout)["sites"]
    with_configs = [s for s in sites if s.get("configs")]
    return (with_configs or sites)[0]["path"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, required=True, help="a corpus repository (a git checkout)")
    ap.add_argument("--touch", help="the kernel file to touch (default: the first site's file with configs)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("-j", "--jobs", type=int)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    jobs = ["-j", str(args.jobs)] if args.jobs else []
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="changed-since-bench-") as tmp:
        clone = Path(tmp) / args.repo.name
        subprocess.run(["git", "clone", "-q", str(args.repo), str(clone)], check=True)
        touched = args.touch or _first_kernel_file(clone, jobs)
        _cli(clone, "check", ".", *jobs)  # warm every cache for this clone (untimed)
        full, changed, line, judged = [], [], "", None
        full_cpu, changed_cpu = [], []
        for i in range(args.rounds):
            with (clone / touched).open("a") as fh:
                fh.write(f"# touched for the benchmark, full run {i}\n")
            full.append(_cli(clone, "check", ".", *jobs)[0])
            full_cpu.append(_CPU[-1])
            with (clone / touched).open("a") as fh:
                fh.write(f"# touched for the benchmark, changed run {i}\n")
            seconds, done = _cli(clone, "check", ".", "--changed-since", "HEAD", "--format", "json", *jobs)
            changed.append(seconds)
            changed_cpu.append(_CPU[-1])
            doc = json.loads(done.stdout)["changed_since"]
            line, judged, sites = doc["line"], doc["judged"], doc["sites"]
    from autotune_rewrite.resources import triton_version

    result = {
        "repo": args.repo.name,
        "touched": touched,
        "sites": sites,
        "rounds": args.rounds,
        "jobs": args.jobs,
        "full_s": [round(s, 2) for s in full],
        "changed_s": [round(s, 2) for s in changed],
        "full_median_s": round(statistics.median(full), 2),
        "changed_median_s": round(statistics.median(changed), 2),
        "ratio": round(statistics.median(changed) / statistics.median(full), 3),
        "full_cpu_s": [round(s, 2) for s in full_cpu],
        "changed_cpu_s": [round(s, 2) for s in changed_cpu],
        "judged_changed": judged,
        "line": line,
        "load_average_before": round(load, 2),
        "cpu_count": os.cpu_count(),
        "triton": triton_version(),
    }
    text = json.dumps(result, indent=2) + "\n"
    print(text, end="")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
