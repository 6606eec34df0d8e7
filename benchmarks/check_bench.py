"""How fast ``check`` is, measured side by side in one run; prints JSON.

For the example (examples/sm120_mla_decode) and a synthetic kernel with 50 configs:

- ``cold``: ``check`` with an empty cache, serially (-j1, no SMEM probes so both sides compile
  exactly the same jobs), against a bare loop of ``triton.compile`` over the same jobs (same
  signature, constexprs, divisibility, options, target), each with a fresh Triton cache.
  Goal: check / bare <= 1.05. The full command's cold time (with probes, default -j) is given too.
- ``warm``: the CLI rerun on an unchanged tree with the cache filled, as a user runs it
  (subprocess wall time, Python start included), for a synthetic kernel with 100 configs.
  Goal: <= 0.5 s.
- ``parallel``: cold check -j2 vs -j1 on the 50-config kernel. Goal: >= 1.7x.

Run from the repository root: ``PYTHONPATH=. python benchmarks/check_bench.py [--quick]``
(``--quick``: 12 and 24 configs, for a smoke run). Needs 2 free cores for the -j2 figure.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autotune_rewrite.check import check as check_stage  # noqa: E402
from autotune_rewrite.spec import launch_spec  # noqa: E402
from autotune_rewrite.compile.crosscompile import load_kernel  # noqa: E402
from autotune_rewrite.isolate.kernel_loader import load_bundle  # noqa: E402
from autotune_rewrite.locate.scan import find_site, scan  # noqa: E402
from autotune_rewrite.settings import load_settings  # noqa: E402

EXAMPLE = ROOT / "examples" / "sm120_mla_decode"
EXAMPLE_KERNEL = "_mma_sparse_decode_split_kernel"

SYNTH_KERNEL = '''\
import triton
import triton.language as tl


@triton.autotune(
    configs=[
{configs}
    ],
    key=["n_rows", "n_cols"],
)
@triton.jit
def row_norm_kernel(x_ptr, y_ptr, n_rows, n_cols, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    acc = tl.zeros((BLOCK_R,), dtype=tl.float32)
    for c in tl.range(0, n_cols, BLOCK_C):
        cols = c + tl.arange(0, BLOCK_C)
        mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
        x = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=0.0)
        acc += tl.sum(x.to(tl.float32) * x.to(tl.float32), axis=1)
    tl.store(y_ptr + rows, tl.sqrt(acc), mask=rows < n_rows)
'''

SYNTH_SETTINGS = '''\
arch = ["sm_120"]

[[kernels]]
kernel = "ops/row_norm.py::row_norm_kernel"
spec = "bf16"
types = { x_ptr = "*bf16", y_ptr = "*fp32", n_rows = "i32", n_cols = "i32" }
'''


def synthetic_repo(dst: Path, n: int) -> Path:
    """A repo with one kernel of ``n`` distinct literal configs."""
    shapes = itertools.product((1, 2, 4, 8, 16), (64, 128, 256, 512, 1024), (2, 4, 8), (1, 2, 3, 4))
    configs = list(itertools.islice(shapes, n))
    lines = "\n".join(f'        triton.Config({{"BLOCK_R": {r}, "BLOCK_C": {c}}}, num_warps={w}, num_stages={s}),'
                      for r, c, w, s in configs)
    (dst / "ops").mkdir(parents=True)
    (dst / "ops" / "row_norm.py").write_text(SYNTH_KERNEL.format(configs=lines))
    (dst / "autotune-rewrite.toml").write_text(SYNTH_SETTINGS)
    return dst


def _jobs(root: Path, kernel: str, archs=("sm_120",)):
    """Exactly the jobs ``check`` compiles for the configs (every launch spec), without probes."""
    settings = load_settings(root)
    site = find_site(scan(root, jobs=1, settings=settings), kernel)
    bundle = load_bundle(root, site.kernel_path, site.kernel)
    specs = launch_spec.resolve_specs(site, settings.kernels, kernel_source=bundle.source).specs
    return [job for spec in specs for job in check_stage.build_jobs(site, spec, site.configs, archs, bundle)]


def _cpu() -> float:
    """CPU seconds of this process and its finished children (ptxas, cuobjdump): steadier than
    wall time on a shared machine, and comparable when both sides compile in this process."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def bare_loop(jobs, cpu: list | None = None) -> float:
    """triton.compile over the jobs, nothing else, with a fresh Triton cache."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    fn = load_kernel(jobs[0].bundle)
    with tempfile.TemporaryDirectory() as tdir:
        os.environ["TRITON_CACHE_DIR"] = tdir
        try:
            start, start_cpu = time.perf_counter(), _cpu()
            for job in jobs:
                attrs = {(fn.arg_names.index(n),): [["tt.divisibility", 16]] for n in job.divisible_by_16}
                src = ASTSource(fn, signature=dict(job.signature), constexprs=dict(job.constexprs), attrs=attrs)
                triton.compile(src, target=GPUTarget("cuda", job.capability, 32),
                               options={"num_warps": job.num_warps, "num_stages": job.num_stages,
                                        "num_ctas": job.num_ctas})
            if cpu is not None:
                cpu.append(_cpu() - start_cpu)
            return time.perf_counter() - start
        finally:
            os.environ.pop("TRITON_CACHE_DIR", None)


def timed_check(root: Path, kernel: str, workers: int | None, fit_model: bool,
                cpu: list | None = None) -> tuple[float, object]:
    with tempfile.TemporaryDirectory() as cache:
        start, start_cpu = time.perf_counter(), _cpu()
        result = check_stage.check(root, kernel=kernel, workers=workers, cache_dir=Path(cache), fit_model=fit_model)
        if cpu is not None:  # meaningful for workers=1 only: everything runs in this process
            cpu.append(_cpu() - start_cpu)
        return time.perf_counter() - start, result


def cold(root: Path, kernel: str, rounds: int) -> dict:
    """Bare loop and check alternate, ``rounds`` times each; the best of each is compared (on a
    shared machine the minimum is the run least disturbed by other work)."""
    jobs = _jobs(root, kernel)
    bare, checks, bare_cpu, check_cpu = [], [], [], []
    for _ in range(rounds):
        bare.append(bare_loop(jobs, bare_cpu))
        checks.append(timed_check(root, kernel, 1, fit_model=False, cpu=check_cpu)[0])
    full_s, full = timed_check(root, kernel, None, fit_model=True)
    return {
        "jobs": len(jobs),
        "rounds": rounds,
        "bare_triton_compile_loop_s": [round(x, 2) for x in bare],
        "check_j1_no_probes_s": [round(x, 2) for x in checks],
        "ratio_check_over_bare_best": round(min(checks) / min(bare), 3),
        "bare_cpu_s": [round(x, 2) for x in bare_cpu],
        "check_j1_cpu_s": [round(x, 2) for x in check_cpu],
        "ratio_cpu_best": round(min(check_cpu) / min(bare_cpu), 3),
        "goal_ratio_max": 1.05,
        "check_full_default_j_s": round(full_s, 2),
        "full_compiles_incl_probes": full.compiled,
    }


def warm(root: Path, kernel: str, configs: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with tempfile.TemporaryDirectory() as cache:
        env["AUTOTUNE_REWRITE_CACHE_DIR"] = cache
        cmd = [sys.executable, "-m", "autotune_rewrite", "check", str(root), "--kernel", kernel, "--format", "json"]
        subprocess.run(cmd, env=env, capture_output=True, check=False)  # fills the cache
        runs = []
        for _ in range(3):
            start = time.perf_counter()
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
            runs.append(time.perf_counter() - start)
        data = json.loads(proc.stdout)
        start = time.perf_counter()
        check_stage.check(root, kernel=kernel, cache_dir=Path(cache))
        in_process = time.perf_counter() - start
    return {
        "jobs": configs,
        "compiled_on_rerun": data["compiled"],
        "cli_rerun_s_best_of_3": round(min(runs), 3),
        "in_process_check_s": round(in_process, 3),
        "goal_s_max": 0.5,
    }


def parallel(root: Path, kernel: str, rounds: int) -> dict:
    j1, j2 = [], []
    for _ in range(rounds):
        j1.append(timed_check(root, kernel, 1, fit_model=False)[0])
        j2.append(timed_check(root, kernel, 2, fit_model=False)[0])
    return {"check_j1_s": [round(x, 2) for x in j1], "check_j2_s": [round(x, 2) for x in j2],
            "speedup_best": round(min(j1) / min(j2), 3), "goal_speedup_min": 1.7, "cpus": os.cpu_count(),
            "load_average_at_end": os.getloadavg()}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=2, help="alternating repetitions per comparison")
    opts = parser.parse_args()
    n, n_warm = (12, 24) if opts.quick else (50, 100)
    import triton

    out: dict = {"load_average_at_start": os.getloadavg(), "triton_version": triton.__version__, "python": platform.python_version(),
                 "machine": platform.machine(), "cpus": os.cpu_count(), "target": "sm_120"}
    # Warm the compiler once so neither side of the first comparison pays LLVM's start-up alone.
    with tempfile.TemporaryDirectory() as tmp:
        repo = synthetic_repo(Path(tmp) / "warmup", 1)
        bare_loop(_jobs(repo, "row_norm_kernel"))
    with tempfile.TemporaryDirectory() as tmp:
        synth = synthetic_repo(Path(tmp) / "synth", n)
        out["synthetic"] = {"cold": cold(synth, "row_norm_kernel", opts.rounds),
                            "parallel": parallel(synth, "row_norm_kernel", opts.rounds)}
        synth100 = synthetic_repo(Path(tmp) / "synth100", n_warm)
        out["synthetic"]["warm"] = warm(synth100, "row_norm_kernel", n_warm)
    if (EXAMPLE / "pyproject.toml").exists() or (EXAMPLE / "autotune-rewrite.toml").exists():
        with tempfile.TemporaryDirectory() as tmp:
            example = Path(tmp) / "example"
            shutil.copytree(EXAMPLE, example)
            out["example"] = {"cold": cold(example, EXAMPLE_KERNEL, opts.rounds),
                              "warm": warm(example, EXAMPLE_KERNEL, len(_jobs(example, EXAMPLE_KERNEL)))}
    else:
        out["example"] = "no launch spec in examples/sm120_mla_decode yet"
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
