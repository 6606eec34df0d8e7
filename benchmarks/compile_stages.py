"""Where a cross-compile spends its time, per Triton stage; prints JSON.

For the example (examples/sm120_mla_decode, both launch specs), ``benchmarks/kernels``'s tiled
matmul, and the 12-config synthetic row-norm kernel of ``check_bench``, every job ``check``
compiles is run through ``triton.compile`` with a fresh Triton cache and
``triton.knobs.compilation.listener``, which reports Triton's own ``CompileTimes``: IR
initialisation (Python AST -> TTIR builder), then each lowering stage (``ttir``, ``ttgir``,
``llir`` = the TTGIR -> LLVM MLIR passes plus LLVM's O3, ``ptx`` = LLVM's NVPTX back end,
``cubin`` = ptxas), then storing the results. ``smem_probe_ms`` is what the staged compile adds
before ``llir`` (re-parsing the TTGIR and running the passes up to shared-memory allocation,
``compile/early_smem.py``), and ``cuobjdump_ms`` what reading registers from the cubin costs.

    PYTHONPATH=. python benchmarks/compile_stages.py [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from check_bench import EXAMPLE, EXAMPLE_KERNEL, _jobs, synthetic_repo  # noqa: E402

from autotune_rewrite.compile import crosscompile, early_smem
from autotune_rewrite import resources  # noqa: E402

STAGES = ("ir_initialization", "ttir", "ttgir", "llir", "ptx", "cubin", "store_results")


def stage_times(jobs) -> list[dict]:
    """One row per job: milliseconds per stage, from Triton's own compile timer."""
    import triton
    from triton import knobs

    rows: list[dict] = []
    seen: dict = {}

    def listener(*, src, metadata, metadata_group, times, cache_hit):
        seen["times"] = times

    cuobjdump = resources.find_cuobjdump()
    with tempfile.TemporaryDirectory() as tdir:
        saved = knobs.compilation.listener
        knobs.compilation.listener = listener
        try:
            for n, job in enumerate(jobs):
                cache = Path(tdir) / str(n)
                with crosscompile.triton_environment(cache, True):
                    _, kernel = crosscompile._compile(job, True)
                    start = time.perf_counter()
                    resources.read_resource_usage(kernel.asm["cubin"], kernel.metadata.name, cuobjdump)
                    cuobjdump_ms = (time.perf_counter() - start) * 1000
                    ttgir = kernel.asm["ttgir"]
                    start = time.perf_counter()
                    early = early_smem.allocated_from_text(ttgir, job.capability)
                    probe_ms = (time.perf_counter() - start) * 1000
                t = seen.pop("times")
                row = {"config": f"w{job.num_warps} s{job.num_stages} " + " ".join(
                    f"{k}={v}" for k, v in job.constexprs if k.isupper() and isinstance(v, int)),
                    "capability": job.capability, "shared": int(kernel.metadata.shared),
                    "early_shared": early.shared if early else None,
                    "ir_initialization": t.ir_initialization / 1000,
                    **{name: us / 1000 for name, us in t.lowering_stages},
                    "store_results": t.store_results / 1000,
                    "smem_probe_ms": round(probe_ms, 2), "cuobjdump_ms": round(cuobjdump_ms, 2)}
                rows.append(row)
        finally:
            knobs.compilation.listener = saved
    del triton
    return rows


def summary(rows: list[dict]) -> dict:
    keys = (*STAGES, "smem_probe_ms", "cuobjdump_ms")
    total = sum(sum(r[k] for k in keys) for r in rows)
    out = {"jobs": len(rows), "total_ms": round(total, 1)}
    for k in keys:
        s = sum(r[k] for r in rows)
        out[k] = {"mean_ms": round(s / len(rows), 1), "median_ms": round(statistics.median(r[k] for r in rows), 1),
                  "share": round(s / total, 3)}
    before = sum(sum(r[k] for k in ("ir_initialization", "ttir", "ttgir", "smem_probe_ms")) for r in rows)
    out["up_to_smem_share"] = round(before / total, 3)
    out["early_equals_final"] = sum(1 for r in rows if r["early_shared"] == r["shared"])
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=None)
    opts = parser.parse_args()
    import triton

    out: dict = {"triton_version": triton.__version__, "python": platform.python_version(),
                 "machine": platform.machine(), "cpus": os.cpu_count(), "load_average_at_start": os.getloadavg(),
                 "unit": "milliseconds per job", "kernels": {}}
    with tempfile.TemporaryDirectory() as tmp:
        warm = synthetic_repo(Path(tmp) / "warmup", 1)
        stage_times(_jobs(warm, "row_norm_kernel"))  # LLVM / ptxas start-up paid before measuring
        example = Path(tmp) / "example"
        shutil.copytree(EXAMPLE, example)
        matmul = Path(tmp) / "matmul"
        shutil.copytree(ROOT / "benchmarks" / "kernels", matmul)
        synth = synthetic_repo(Path(tmp) / "synth", 12)
        for name, root, kernel, archs in (
            ("example_mla_decode", example, EXAMPLE_KERNEL, ("sm_120",)),
            ("tiled_matmul", matmul, "matmul_kernel", ("sm_90", "sm_120")),
            ("row_norm_synthetic", synth, "row_norm_kernel", ("sm_120",)),
        ):
            rows = stage_times(_jobs(root, kernel, archs))
            out["kernels"][name] = {"summary": summary(rows), "jobs": rows}
    out["load_average_at_end"] = os.getloadavg()
    text = json.dumps(out, indent=2)
    print(text)
    target = opts.out or (Path(os.environ["OUT"]) / "compile_stages.json" if os.environ.get("OUT") else None)
    if target is not None:
        target.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
