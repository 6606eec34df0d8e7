"""Compile engine overhead, measured side by side in one run; prints JSON.

Each variant runs in a fresh Python process (timed from the parent: interpreter start, imports
and all) over the same jobs of the test kernel tests/fixtures/engine/tiled_dot.py for sm_120:
- ``bare_loop``: ASTSource + triton.compile in a loop, Triton cache in a fresh directory
  (what a hand-written script would do; no resource reading);
- ``engine_j1`` / ``engine_j2``: compile_many(workers=1 / 2) on an empty outcome cache
  (compile + cuobjdump + cache writes);
- ``warm_100``: compile_many over 100 jobs that are all cached (each of the configs listed
  twice when fewer than 100 exist), which must not import triton;
- ``interleaved``: per-job overhead of compile_job over a bare triton.compile in one process,
  alternating the order job by job, which stays meaningful on a busy machine.

Usage: python benchmarks/compile_pool_bench.py [--configs 48]
Goals (issue 3): engine_j1 / bare_loop <= 1.05, engine_j1 / engine_j2 >= 1.7 on 2 cores,
warm_100 <= 0.5 s.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

JOBS_CODE = """
import itertools
from pathlib import Path
from autotune_rewrite.evidence import CompileJob, KernelBundle
SRC = Path({fixture!r}).read_text()
BUNDLE = KernelBundle("tiled_dot_kernel", SRC, "tiled_dot.py::tiled_dot_kernel")
SIG = (("a_ptr", "*fp16"), ("b_ptr", "*fp16"), ("c_ptr", "*fp32"), ("M", "i32"), ("N", "i32"),
       ("K", "i32"), ("stride_am", "i32"), ("stride_bk", "i32"), ("stride_cm", "i32"),
       ("BLOCK_M", "constexpr"), ("BLOCK_N", "constexpr"), ("BLOCK_K", "constexpr"))
DIV = ("a_ptr", "b_ptr", "c_ptr", "K", "stride_am", "stride_bk", "stride_cm")
GRID = itertools.product((32, 64, 128), (32, 64), (32, 64), (2, 3, 4), (4, 8))
JOBS = [CompileJob(BUNDLE, SIG, (("BLOCK_M", m), ("BLOCK_N", n), ("BLOCK_K", k)), DIV, w, s, 1, None, 120)
        for m, n, k, s, w in GRID][:{count}]
"""

BARE = """
import os, tempfile
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp()
import linecache, triton
from triton.compiler import ASTSource
from triton.backends.compiler import GPUTarget
name = "<bench bundle>"
linecache.cache[name] = (len(SRC), None, SRC.splitlines(True), name)
ns = {"__name__": "bench_bundle"}
exec(compile(SRC, name, "exec"), ns)
fn = ns["tiled_dot_kernel"]
for job in JOBS:
    attrs = {(fn.arg_names.index(p),): [["tt.divisibility", 16]] for p in job.divisible_by_16}
    src = ASTSource(fn, signature=dict(job.signature), constexprs=dict(job.constexprs), attrs=attrs)
    triton.compile(src, target=GPUTarget("cuda", job.capability, 32),
                   options={"num_warps": job.num_warps, "num_stages": job.num_stages})
"""

# Per-job overhead, robust to a busy machine: in one process, each job is compiled both ways
# (bare triton.compile, and compile_job: + cuobjdump, scoped environment, output capture),
# alternating which goes first; each compile gets its own empty Triton cache.
INTERLEAVED = """
import os, tempfile, time, json, linecache
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp()
import triton
from triton.compiler import ASTSource
from triton.backends.compiler import GPUTarget
from autotune_rewrite.compile.crosscompile import compile_job, load_kernel

def bare(job):
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp()
    fn = load_kernel(job.bundle)
    attrs = {(fn.arg_names.index(p),): [["tt.divisibility", 16]] for p in job.divisible_by_16}
    src = ASTSource(fn, signature=dict(job.signature), constexprs=dict(job.constexprs), attrs=attrs)
    triton.compile(src, target=GPUTarget("cuda", job.capability, 32),
                   options={"num_warps": job.num_warps, "num_stages": job.num_stages})

def engine(job):
    compile_job(job, triton_cache_dir=Path(tempfile.mkdtemp()))

bare(JOBS[-1]); engine(JOBS[-1])  # first-compile costs (imports, triton_key) out of the way
t_bare = t_engine = 0.0
for i, job in enumerate(JOBS):
    for which in ((bare, engine) if i % 2 == 0 else (engine, bare)):
        t = time.perf_counter(); which(job); dt = time.perf_counter() - t
        if which is bare:
            t_bare += dt
        else:
            t_engine += dt
print(json.dumps([t_bare, t_engine]))
"""

ENGINE = """
import sys
from autotune_rewrite.compile.compile_pool import compile_many
jobs = JOBS
while len(jobs) < {at_least}:
    jobs = jobs + JOBS
out = compile_many(jobs, workers={workers}, cache_dir=Path({cache!r}))
assert all(o.error is None for o in out), [o.error for o in out if o.error]
if {warm}:
    assert all(o.cached for o in out) and "triton" not in sys.modules
"""


def run(code: str) -> float:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    return time.perf_counter() - start


def run_json(code: str) -> list[float]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--configs", type=int, default=48)
    args = parser.parse_args()
    fixture = str(ROOT / "tests" / "fixtures" / "engine" / "tiled_dot.py")
    jobs = textwrap.dedent(JOBS_CODE).format(fixture=fixture, count=args.configs)
    with tempfile.TemporaryDirectory() as tmp:
        c1, c2 = Path(tmp) / "j1", Path(tmp) / "j2"
        bare = run(jobs + textwrap.dedent(BARE))
        j1 = run(jobs + textwrap.dedent(ENGINE).format(workers=1, cache=str(c1), warm=False, at_least=0))
        j2 = run(jobs + textwrap.dedent(ENGINE).format(workers=2, cache=str(c2), warm=False, at_least=0))
        warm = run(jobs + textwrap.dedent(ENGINE).format(workers=2, cache=str(c2), warm=True, at_least=100))
        inter_bare, inter_engine = run_json(jobs + textwrap.dedent(INTERLEAVED))
    import triton  # only for the version in the report

    print(json.dumps({
        "triton_version": triton.__version__,
        "python": platform.python_version(),
        "cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "configs": args.configs,
        "target": "sm_120",
        "seconds": {"bare_loop": round(bare, 3), "engine_j1": round(j1, 3), "engine_j2": round(j2, 3),
                    "warm_100": round(warm, 3)},
        "interleaved_seconds": {"bare": round(inter_bare, 3), "compile_job": round(inter_engine, 3),
                                "extra_ms_per_job": round((inter_engine - inter_bare) / args.configs * 1000, 1)},
        "ratios": {"engine_j1_over_bare": round(j1 / bare, 3), "j1_over_j2": round(j1 / j2, 3),
                   "interleaved_compile_job_over_bare": round(inter_engine / inter_bare, 3)},
        "goals": {"engine_j1_over_bare": "<= 1.05", "j1_over_j2": ">= 1.7 (2 cores)", "warm_100": "<= 0.5 s"},
    }, indent=2))


if __name__ == "__main__":
    main()
