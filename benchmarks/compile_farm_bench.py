"""Compile throughput: the local process pool vs the Dask farm (``--executor dask``), one run, JSON.

The jobs are exactly what ``check`` compiles (configs and SMEM probes) for the bundled example
(``examples/sm120_mla_decode``) and ``benchmarks/kernels`` on sm_120, sm_90 and sm_80, recorded
from a real cold ``check`` run, deduplicated by cache key, topped up to ``--count`` with tiled-dot
jobs (``tests/fixtures/engine/tiled_dot.py``) when short. Every timed run compiles them all into
a fresh, empty outcome cache:

- ``pool``: ``CompileStream(workers=N)`` (the default executor) for each N of ``--workers``;
- ``dask``: the same stream with ``farm=`` a ``LocalCluster(n_workers=N, threads_per_worker=1)``
  (processes; started and warmed before the clock starts: a farm is long-lived);
- ``nodes``: a real ``dask scheduler`` plus K ``dask worker --nworkers P --nthreads 1``
  processes over TCP (``--nodes KxP``), as K machines of P cores would run it;
- ``check_e2e``: a whole cold ``check`` over the same inputs at the largest N, local pool and
  farm, with its stages (``stopwatch``): the serial parts around the compiles (scan, loading,
  the SMEM probe round).

Per run: wall, speedup over the local pool at N=1 (T1), parallel efficiency (T1 / (N * TN)),
``overhead_ms_per_job`` = (N * wall - sum of the jobs' own compile seconds) / jobs (scheduling,
IPC, idle workers at the tail), and for Dask the ratio to the pool at the same N (goal <= 1.05).
What the efficiency lost is split in two: ``compile_inflation`` (the jobs' own seconds at N over
those at N=1: the cores slow each other down) and ``efficiency_bound`` (the best any scheduler could
reach with these jobs' serial times on N workers: the tail of a small batch). ``--count 400`` adds
the recorded jobs for sm_86/89/100 (a fleet run) to measure where the tail matters less.

Device machine (16 cores), one call, under 5 minutes (the lead's command, see docs/ci.md):
    python3 benchmarks/compile_farm_bench.py --out $OUT/compile_farm_bench.json
Here (2 cores), a quick check of the script:
    PYTHONPATH=. python benchmarks/compile_farm_bench.py --workers 1,2 --nodes 2x1 --count 12
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

INPUTS = (ROOT / "examples" / "sm120_mla_decode", ROOT / "benchmarks" / "kernels")
ARCHS = ("sm_120", "sm_90", "sm_80")


def record_jobs(cache: Path, workers: int) -> list:
    """The jobs a real cold ``check`` of ``INPUTS`` compiles (configs, then probes), by cache key."""
    from autotune_rewrite.compile import compile_stream
    from autotune_rewrite.check.check import check
    from autotune_rewrite.compile.compile_cache import current_toolchain, job_key
    from autotune_rewrite.compile.crosscompile import fp_fusion_setting

    seen: list = []
    real_add = compile_stream.CompileStream.add

    def add(self, jobs, on_done, priority=0):
        seen.extend(jobs)
        return real_add(self, jobs, on_done, priority)

    compile_stream.CompileStream.add = add
    try:
        for repo in INPUTS:
            check(repo, archs=ARCHS, workers=workers, cache_dir=cache)
    finally:
        compile_stream.CompileStream.add = real_add
    toolchain = current_toolchain({j.capability for j in seen}, fp_fusion_setting())
    unique = {}
    for job in seen:
        unique.setdefault(job_key(job, toolchain), job)
    return list(unique.values())


def tiled_dot_jobs() -> list:
    from autotune_rewrite.evidence import CompileJob, KernelBundle

    src = (ROOT / "tests" / "fixtures" / "engine" / "tiled_dot.py").read_text()
    bundle = KernelBundle("tiled_dot_kernel", src, "tiled_dot.py::tiled_dot_kernel")
    sig = (("a_ptr", "*fp16"), ("b_ptr", "*fp16"), ("c_ptr", "*fp32"), ("M", "i32"), ("N", "i32"), ("K", "i32"),
           ("stride_am", "i32"), ("stride_bk", "i32"), ("stride_cm", "i32"),
           ("BLOCK_M", "constexpr"), ("BLOCK_N", "constexpr"), ("BLOCK_K", "constexpr"))
    div = ("a_ptr", "b_ptr", "c_ptr", "K", "stride_am", "stride_bk", "stride_cm")
    grid = itertools.product((32, 64, 128), (32, 64), (32, 64), (2, 3), (4, 8))
    return [CompileJob(bundle, sig, (("BLOCK_M", m), ("BLOCK_N", n), ("BLOCK_K", k)), div, w, s, 1, None, 120)
            for m, n, k, s, w in grid]


def compile_all(jobs: list, workers: int, farm=None) -> dict:
    """Every job into a fresh cache through one ``CompileStream``; wall and the jobs' own seconds."""
    from autotune_rewrite import stopwatch
    from autotune_rewrite.compile.compile_stream import CompileStream

    got: list = []
    with tempfile.TemporaryDirectory(prefix="farm-bench-") as cache:
        stopwatch.reset()
        start = time.perf_counter()
        with CompileStream(workers=workers, cache_dir=Path(cache), farm=farm) as stream:
            stream.add(jobs, got.extend)
            stream.drain()
            events = [e.kind for e in stream.farm_events]
        wall = time.perf_counter() - start
    assert len(got) == len(jobs) and not any(o.cached for o in got)
    compile_s = sum(o.seconds or 0.0 for o in got)
    return {"per_job_s": [o.seconds or 0.0 for o in got], "workers": workers, "jobs": len(jobs), "wall_s": round(wall, 3), "jobs_compile_s": round(compile_s, 3),
            "overhead_ms_per_job": round((workers * wall - compile_s) / len(jobs) * 1000, 1),
            "errors": sum(1 for o in got if o.error), "farm_events": events,
            "connect_s": stopwatch.totals().get("farm_connect", {}).get("wall_s", 0.0)}


def lpt_makespan(seconds: list[float], workers: int) -> float:
    """Longest-first onto the least-loaded worker: the wall a perfect scheduler that knew every
    job's serial time would reach (within 4/3 of optimal), with no per-job slowdown."""
    loads = [0.0] * workers
    for s in sorted(seconds, reverse=True):
        loads[loads.index(min(loads))] += s
    return max(loads)


def more_targets(jobs: list, capabilities: tuple[int, ...]) -> list:
    """The same jobs for more targets (a fleet run judges each config per target): distinct
    compiles with the real kernels' cost profile, to measure at a scale where the tail matters less.
    A recorded config appears once per recorded target: it is taken once, compiled in full."""
    import dataclasses

    configs = {dataclasses.replace(j, capability=0, stop_smem_above=None): None for j in jobs}
    return [dataclasses.replace(j, capability=c) for c in capabilities for j in configs]


def warm(address: str, capabilities: tuple[int, ...]) -> float:
    """Import Triton and hash it on every worker before the clock starts (a farm is long-lived)."""
    from distributed import Client

    from autotune_rewrite.compile.compile_farm import worker_facts

    start = time.perf_counter()
    with Client(address, set_as_default=False) as client:
        client.run(worker_facts, capabilities)
    return round(time.perf_counter() - start, 3)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def node_cluster(nodes: int, procs: int):
    """A real scheduler and ``nodes`` worker commands (each ``--nworkers procs``) over TCP."""
    from distributed import Client

    address = f"tcp://127.0.0.1:{_free_port()}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env}
    started = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                 "--port", address.rsplit(":", 1)[1], "--dashboard-address", ":0",
                                 "--no-show"], **quiet)]
    try:
        for _ in range(nodes):
            started.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address,
                                             "--nworkers", str(procs), "--nthreads", "1", "--no-dashboard"], **quiet))
        with Client(address, timeout=60, set_as_default=False) as client:
            client.wait_for_workers(nodes * procs, timeout=120)
        yield address
    finally:
        for proc in reversed(started):  # ours only, by handle
            proc.terminate()
        for proc in started:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()


def check_e2e(workers: int, farm=None) -> dict:
    from autotune_rewrite import stopwatch
    from autotune_rewrite.check.check import check

    with tempfile.TemporaryDirectory(prefix="farm-e2e-") as cache:
        stopwatch.reset()
        start = time.perf_counter()
        compiled = 0
        for repo in INPUTS:
            kwargs = {"executor": "dask", "address": farm} if farm else {}
            compiled += check(repo, archs=ARCHS, workers=workers, cache_dir=Path(cache), **kwargs).compiled
        return {"workers": workers, "executor": "dask" if farm else "local", "wall_s": round(time.perf_counter() - start, 3),
                "compiled": compiled, "stages": stopwatch.totals()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", default="1,2,4,8,16")
    parser.add_argument("--nodes", default="4x4,2x8", help="KxP: K worker commands of P processes each")
    parser.add_argument("--count", type=int, default=80,
                        help="jobs per run (recorded check jobs, topped up with tiled-dot jobs, then the recorded ones for sm_86/89/100)")
    parser.add_argument("--budget-s", type=float, default=230.0, help="skip what would start after this")
    parser.add_argument("--quick", action="store_true", help="no recorded check jobs and no check_e2e: tiled-dot only (a test of the script)")
    parser.add_argument("--no-e2e", action="store_true", help="skip the whole-check runs")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    t0 = time.perf_counter()
    counts = [int(n) for n in args.workers.split(",")]
    import triton
    from distributed import LocalCluster

    from autotune_rewrite.settings.schema import FarmChoice

    recorded = []
    if not args.quick:
        with tempfile.TemporaryDirectory(prefix="farm-record-") as rec:
            recorded = record_jobs(Path(rec), max(counts))
    extra = more_targets(recorded, (86, 89, 100)) if args.count > len(recorded) + 48 else []
    jobs = (recorded + tiled_dot_jobs() + extra)[:args.count]
    caps = tuple(sorted({j.capability for j in jobs}))
    result: dict = {
        "triton_version": triton.__version__, "python": platform.python_version(),
        "cpus": len(os.sched_getaffinity(0)), "jobs": len(jobs), "recorded_check_jobs": len(recorded),
        "kernels": sorted({j.bundle.kernel for j in jobs}), "capabilities": list(caps),
        "record_s": round(time.perf_counter() - t0, 1), "pool": [], "dask": [], "nodes": [], "skipped": [],
    }

    def budget_left(what: str) -> bool:
        if time.perf_counter() - t0 < args.budget_s:
            return True
        result["skipped"].append(what)
        return False

    def pool(n: int) -> None:
        result["pool"].append(compile_all(jobs, n))

    def dask(n: int) -> None:
        start = time.perf_counter()
        with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
            started = round(time.perf_counter() - start, 3)
            warm_s = warm(cluster.scheduler_address, caps)
            run = compile_all(jobs, n, FarmChoice(cluster.scheduler_address))
        result["dask"].append({**run, "cluster_start_s": started, "warm_s": warm_s})

    def nodes(spec: str) -> None:
        k, p = (int(x) for x in spec.split("x"))
        start = time.perf_counter()
        with node_cluster(k, p) as address:
            started = round(time.perf_counter() - start, 3)
            warm_s = warm(address, caps)
            run = compile_all(jobs, k * p, FarmChoice(address))
        result["nodes"].append({**run, "nodes": k, "procs_per_node": p, "cluster_start_s": started, "warm_s": warm_s})

    # Most telling first, so a slow machine that hits the budget loses the least: the serial
    # baseline, then the largest count on every executor, then the counts between.
    top = max(counts)
    node_specs = [n for n in args.nodes.split(",") if n]
    plan = [("pool", 1)] if 1 in counts else []
    plan += [("pool", top), ("dask", top)] + [("nodes", node_specs[0])] * bool(node_specs)
    for n in sorted(set(counts) - {1, top}, reverse=True):
        plan += [("pool", n), ("dask", n)]
    plan += [("dask", 1)] * (1 in counts and top != 1) + [("nodes", n) for n in node_specs[1:]]
    for kind, arg in plan:
        if budget_left(f"{kind} {arg}"):
            print(f"[{time.perf_counter() - t0:6.1f} s] {kind} {arg}", file=sys.stderr, flush=True)
            {"pool": pool, "dask": dask, "nodes": nodes}[kind](arg)
    for name in ("pool", "dask", "nodes"):
        result[name].sort(key=lambda r: r["workers"])
    if not (args.quick or args.no_e2e) and budget_left("check_e2e"):
        print(f"[{time.perf_counter() - t0:6.1f} s] check_e2e", file=sys.stderr, flush=True)
        with LocalCluster(n_workers=top, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
            warm(cluster.scheduler_address, caps)
            result["check_e2e"] = [check_e2e(top), check_e2e(top, cluster.scheduler_address)]

    # Speedup and efficiency against the serial local pool (T1): what the farm buys over one core.
    # The loss splits into the jobs' own slowdown when N run at once (compile_inflation: shared
    # caches, memory bandwidth, clocks) and the tail (efficiency_bound: the best packing of these
    # jobs' serial times onto N workers, no slowdown): neither is scheduling overhead.
    serial = next((r for r in result["pool"] if r["workers"] == 1), None)
    one = serial["wall_s"] if serial else None
    for r in result["pool"] + result["dask"] + result["nodes"]:
        if one:
            r["speedup"] = round(one / r["wall_s"], 2)
            r["efficiency"] = round(one / (r["workers"] * r["wall_s"]), 3)
            r["compile_inflation"] = round(r["jobs_compile_s"] / serial["jobs_compile_s"], 3)
            r["efficiency_bound"] = round(sum(serial["per_job_s"]) / (r["workers"] * lpt_makespan(serial["per_job_s"], r["workers"])), 3)
    for r in result["pool"] + result["dask"] + result["nodes"]:
        r.pop("per_job_s")
    pool_at = {r["workers"]: r["wall_s"] for r in result["pool"]}
    for r in result["dask"] + result["nodes"]:
        if r["workers"] in pool_at:
            r["over_pool"] = round(r["wall_s"] / pool_at[r["workers"]], 3)
    result["goals"] = {"efficiency_at_16": ">= 0.9", "dask_over_pool": "<= 1.05 (per-job overhead <= 5%)"}
    result["total_s"] = round(time.perf_counter() - t0, 1)
    text = json.dumps(result, indent=2)
    print(text)
    out = args.out or (Path(os.environ["OUT"]) / "compile_farm_bench.json" if os.environ.get("OUT") else None)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n")


if __name__ == "__main__":
    main()
