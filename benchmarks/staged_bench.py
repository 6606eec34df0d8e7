"""Cold ``check`` with and without the staged compile, against a bare ``triton.compile`` loop over
the same jobs, in one run; prints JSON.

For the example (examples/sm120_mla_decode: 6 jobs on sm_120, 4 of them over the SMEM limit)
and the 24-config synthetic row-norm kernel of ``check_bench`` (nothing over the limit: what the
stage hook costs when it never stops):

- ``bare_s``: ``triton.compile`` over exactly the jobs ``check`` compiles (fresh Triton cache);
- ``check_full_j1_s``: ``check --full -j1`` without SMEM probes, empty cache (every job to the cubin);
- ``check_staged_j1_s``: ``check -j1`` without probes, empty cache (over-limit jobs stop at SMEM);
- ``check_*_with_probes_s``: the command as a user runs it (probes on, default -j), both ways.
Rounds alternate; ratios compare the best of each (and CPU seconds for the -j1 runs, steadier
on a shared machine).

    PYTHONPATH=. python benchmarks/staged_bench.py [--rounds 2] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from check_bench import EXAMPLE, EXAMPLE_KERNEL, _cpu, _jobs, bare_loop, synthetic_repo  # noqa: E402

from autotune_rewrite.check import check as check_stage  # noqa: E402


def timed(root: Path, kernel: str, workers: int | None, probes: bool, full: bool) -> dict:
    with tempfile.TemporaryDirectory() as cache:
        start, start_cpu = time.perf_counter(), _cpu()
        result = check_stage.check(root, kernel=kernel, workers=workers, cache_dir=Path(cache), fit_model=probes,
                                   full=full)
        wall, cpu = time.perf_counter() - start, _cpu() - start_cpu
    stopped = sum(1 for r in result.reports for v in r.verdicts if v.outcome.stopped_early)
    verdicts = sorted((r.spec.name if r.spec else "", v.arch, v.config.label(), v.launchable, v.reason_code)
                      for r in result.reports for v in r.verdicts)
    return {"wall": wall, "cpu": cpu, "compiled": result.compiled, "stopped_early": stopped, "verdicts": verdicts}


def compare(root: Path, kernel: str, rounds: int) -> dict:
    jobs = _jobs(root, kernel)
    bare, bare_cpu, full, staged, full_p, staged_p = [], [], [], [], [], []
    for _ in range(rounds):
        bare.append(bare_loop(jobs, bare_cpu))
        full.append(timed(root, kernel, 1, probes=False, full=True))
        staged.append(timed(root, kernel, 1, probes=False, full=False))
        full_p.append(timed(root, kernel, None, probes=True, full=True))
        staged_p.append(timed(root, kernel, None, probes=True, full=False))
    best = lambda runs, k="wall": min(r[k] for r in runs)  # noqa: E731
    return {
        "jobs": len(jobs),
        "rounds": rounds,
        "stopped_early": staged[0]["stopped_early"],
        "same_verdicts": all(r["verdicts"] == full[0]["verdicts"] for r in (*full, *staged, *full_p, *staged_p)),
        "bare_triton_compile_loop_s": [round(x, 2) for x in bare],
        "check_full_j1_s": [round(r["wall"], 2) for r in full],
        "check_staged_j1_s": [round(r["wall"], 2) for r in staged],
        "ratio_full_over_bare": round(best(full) / min(bare), 3),
        "ratio_staged_over_bare": round(best(staged) / min(bare), 3),
        "ratio_staged_over_full": round(best(staged) / best(full), 3),
        "cpu_bare_s": [round(x, 2) for x in bare_cpu],
        "cpu_full_j1_s": [round(r["cpu"], 2) for r in full],
        "cpu_staged_j1_s": [round(r["cpu"], 2) for r in staged],
        "cpu_ratio_staged_over_bare": round(best(staged, "cpu") / min(bare_cpu), 3),
        "cpu_ratio_full_over_bare": round(best(full, "cpu") / min(bare_cpu), 3),
        "check_full_with_probes_s": [round(r["wall"], 2) for r in full_p],
        "check_staged_with_probes_s": [round(r["wall"], 2) for r in staged_p],
        "compiles_with_probes": full_p[0]["compiled"],
        "stopped_early_with_probes": staged_p[0]["stopped_early"],
        "ratio_staged_over_full_with_probes": round(best(staged_p) / best(full_p), 3),
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None)
    opts = parser.parse_args()
    import triton

    out: dict = {"triton_version": triton.__version__, "python": platform.python_version(), "cpus": os.cpu_count(),
                 "load_average_at_start": os.getloadavg(), "target": "sm_120"}
    with tempfile.TemporaryDirectory() as tmp:
        bare_loop(_jobs(synthetic_repo(Path(tmp) / "warmup", 1), "row_norm_kernel"))  # LLVM start-up paid once
        example = Path(tmp) / "example"
        shutil.copytree(EXAMPLE, example)
        out["example"] = compare(example, EXAMPLE_KERNEL, opts.rounds)
        out["row_norm_24_configs_none_over"] = compare(synthetic_repo(Path(tmp) / "synth", 24), "row_norm_kernel",
                                                       opts.rounds)
    out["load_average_at_end"] = os.getloadavg()
    text = json.dumps(out, indent=2)
    print(text)
    target = opts.out or (Path(os.environ["OUT"]) / "staged_bench.json" if os.environ.get("OUT") else None)
    if target is not None:
        target.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
