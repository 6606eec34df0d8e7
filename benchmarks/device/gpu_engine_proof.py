"""Proof against the hardware (run on a CUDA machine): the engine's static numbers equal the driver's.

For every config of the test kernel tests/fixtures/engine/tiled_dot.py (including ones that
spill and ones over 48 KB of shared memory), for the GPU this runs on:
- static: ``compile_many`` cross-compiles the job (metadata.shared, cuobjdump REG and STACK/4)
  and ``occupancy`` applies the cuda_occupancy.h rules for the target table entry;
- driver: the kernel is launched normally through Triton's JIT (same constexprs, num_warps,
  num_stages, and the specialization the runtime derives from the real arguments), then the
  CompiledKernel's ``n_regs`` / ``n_spills`` / ``metadata.shared`` and the driver's own
  ``cuOccupancyMaxActiveBlocksPerMultiprocessor`` are read, plus the function's static shared
  size (``CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES``, which the occupancy model assumes is 0).
The result is checked numerically against torch.matmul too (the launch really ran).

Prints JSON; exit 1 when any number differs. Usage (repo root, CUDA visible):
    PYTHONPATH=. python benchmarks/device/gpu_engine_proof.py
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import sys
import tempfile
from pathlib import Path

import torch
import triton
from triton.runtime.errors import OutOfResources

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from autotune_rewrite.compile.compile_pool import compile_many  # noqa: E402
from autotune_rewrite.evidence import CompileJob, KernelBundle  # noqa: E402
from autotune_rewrite.check.occupancy import occupancy  # noqa: E402
from autotune_rewrite.output import explain  # noqa: E402
from autotune_rewrite.targets import resolve_target  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "engine" / "tiled_dot.py"
SIZE = 256  # M = N = K; every int argument is then divisible by 16, as is every pointer
SIGNATURE = (
    ("a_ptr", "*fp16"), ("b_ptr", "*fp16"), ("c_ptr", "*fp32"),
    ("M", "i32"), ("N", "i32"), ("K", "i32"),
    ("stride_am", "i32"), ("stride_bk", "i32"), ("stride_cm", "i32"),
    ("BLOCK_M", "constexpr"), ("BLOCK_N", "constexpr"), ("BLOCK_K", "constexpr"),
)
DIVISIBLE = ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm")
# (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages): small, register-heavy (spills at 2 warps),
# and shared-memory-heavy (> 48 KB, so the launcher opts in) configs.
CONFIGS = [
    (32, 32, 32, 4, 2), (64, 64, 32, 4, 2), (64, 64, 32, 4, 3), (64, 64, 64, 4, 4),
    (128, 64, 32, 4, 3), (128, 64, 64, 8, 3), (128, 128, 64, 8, 3), (128, 128, 64, 4, 4),
    (128, 128, 64, 2, 2), (256, 128, 64, 8, 3), (64, 64, 128, 4, 5),
    # exactly 49,152 B (48 KB, the launcher does not opt in) and shared-memory-limited: blocks/SM
    # would be 0 if the function carried 1 KB of static shared memory (cuobjdump prints
    # SHARED:1024 for sm_90 cubins); the occupancy model says it carries none
    (64, 64, 64, 8, 3), (64, 64, 64, 4, 3),
    # over the sm_90 opt-in limit (about 240 KB > 232,448 B): Triton must refuse it at launch
    (256, 128, 64, 8, 5),
]

CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1


def main() -> int:
    major, minor = torch.cuda.get_device_capability()
    target = resolve_target(f"{major}.{minor}")
    cap = target.arch.capability
    bundle = KernelBundle("tiled_dot_kernel", FIXTURE.read_text(), "tiled_dot.py::tiled_dot_kernel")
    jobs = [
        CompileJob(bundle, SIGNATURE, (("BLOCK_M", m), ("BLOCK_N", n), ("BLOCK_K", k)), DIVISIBLE, w, s, 1, None, cap)
        for m, n, k, w, s in CONFIGS
    ]
    with tempfile.TemporaryDirectory() as cache:
        static = compile_many(jobs, cache_dir=Path(cache))

    spec = importlib.util.spec_from_file_location("tiled_dot_fixture", FIXTURE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    kernel = module.tiled_dot_kernel

    libcuda = ctypes.CDLL("libcuda.so.1")
    a = torch.randn(SIZE, SIZE, device="cuda", dtype=torch.float16)
    b = torch.randn(SIZE, SIZE, device="cuda", dtype=torch.float16)
    want = (a.float() @ b.float())
    rows, all_match = [], True
    for (m, n, k, w, s), out in zip(CONFIGS, static):
        c = torch.empty(SIZE, SIZE, device="cuda", dtype=torch.float32)
        grid = (triton.cdiv(SIZE, m), triton.cdiv(SIZE, n))
        occ = occupancy(target.arch, w, out.registers, out.shared_bytes) if out.error is None else None
        try:
            compiled = kernel[grid](a, b, c, SIZE, SIZE, SIZE, SIZE, SIZE, SIZE,
                                    BLOCK_M=m, BLOCK_N=n, BLOCK_K=k, num_warps=w, num_stages=s)
            torch.cuda.synchronize()
        except OutOfResources as exc:  # the autotuner's "inf": our verdict must say it cannot launch
            row = {"config": {"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "num_warps": w, "num_stages": s},
                   "static": {"shared": out.shared_bytes, "blocks_per_sm": occ.blocks_per_sm if occ else None,
                              "reason": explain.occupancy_reason(occ.blocked) if occ else out.error},
                   "driver": {"OutOfResources": str(exc)}}
            row["match"] = occ is not None and occ.blocks_per_sm == 0
            all_match &= row["match"]
            rows.append(row)
            continue
        blocks = ctypes.c_int(0)
        rc = libcuda.cuOccupancyMaxActiveBlocksPerMultiprocessor(
            ctypes.byref(blocks), ctypes.c_void_p(compiled.function), ctypes.c_int(32 * w),
            ctypes.c_size_t(compiled.metadata.shared))
        static_shared = ctypes.c_int(-1)
        libcuda.cuFuncGetAttribute(ctypes.byref(static_shared), CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                   ctypes.c_void_p(compiled.function))
        row = {
            "config": {"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "num_warps": w, "num_stages": s},
            "static": {"shared": out.shared_bytes, "registers": out.registers, "spills": out.spills,
                       "blocks_per_sm": occ.blocks_per_sm if occ else None, "error": out.error},
            "driver": {"shared": compiled.metadata.shared, "registers": compiled.n_regs,
                       "spills": compiled.n_spills, "blocks_per_sm": blocks.value if rc == 0 else f"CUresult {rc}",
                       "static_shared": static_shared.value},
            "result_ok": bool(torch.allclose(c, want, atol=1e-1, rtol=1e-2)),
        }
        row["match"] = (
            out.error is None
            and (out.shared_bytes, out.registers, out.spills, occ.blocks_per_sm)
            == (compiled.metadata.shared, compiled.n_regs, compiled.n_spills, blocks.value)
        )
        all_match &= row["match"] and row["result_ok"]
        rows.append(row)
    print(json.dumps({
        "device": torch.cuda.get_device_name(), "target": target.arch.name,
        "triton_version": triton.__version__, "torch_version": torch.__version__,
        "ptxas_version": static[0].ptxas_version, "all_match": all_match, "rows": rows,
    }, indent=2))
    return 0 if all_match else 1


if __name__ == "__main__":
    raise SystemExit(main())
