"""Proof against the hardware: what ``check`` predicted on a CPU equals what the driver reports.

Input: JSON written here (no GPU) by ``autotune-rewrite check ... --arch sm_90 --format json``.
On the GPU machine (needs torch and triton only: no libcst, no autotune_rewrite import), for
every config row of every kernel in the JSON:

1. import the kernel's module normally and take the ``@triton.jit`` function under the
   autotune wrapper (``.fn`` until a JITFunction);
2. launch it normally through Triton's JIT (grid (1, 1, 1)) with arguments that give the same
   specialization the static compile used: pointers are fresh zeroed torch allocations (16-byte
   aligned), ints take the value from the launch spec (``int_values``) or, when it had none,
   17 (the "unknown value" choice of launch_spec: not divisible by 16, not 1); constexprs come
   from the row (config meta-parameters and spec constexprs);
3. read the compiled kernel's ``n_regs``, ``n_spills``, ``metadata.shared`` and the driver's
   ``cuOccupancyMaxActiveBlocksPerMultiprocessor`` for the function with that dynamic shared
   memory (cuda-python's ``cuda.bindings.driver`` when installed, else libcuda through ctypes);
4. compare with the static row: shared_bytes, registers, spills, blocks_per_sm.

Prints JSON; exits 1 on any mismatch, 2 on a setup problem. Usage (repository root):

    python benchmarks/device/driver_proof.py benchmarks/results/gpu_proofs/check_sm90_example.json \\
        benchmarks/results/gpu_proofs/check_sm90_tiled_matmul.json > benchmarks/results/gpu_proofs/h200_driver_proof.json

Before each launch the arguments go through Triton's own runtime binder (on the CPU too) and the
specialization it derives must equal the one the static compile used. ``--dry-run`` does only
that, on CPU tensors, and launches nothing (how the script is checked where there is no GPU).
"""

from __future__ import annotations

import argparse
import ctypes
import importlib.util
import json
import sys
from pathlib import Path

UNKNOWN_INT = 17  # launch_spec's choice for ints without a known value: no divisibility, not 1
ELEMENTS = 1 << 22  # elements per pointer argument: large enough that grid (1,1,1) stays in bounds

_TORCH_DTYPES = {
    "fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64",
    "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8",
    "u1": "bool", "fp8e4nv": "float8_e4m3fn", "fp8e5": "float8_e5m2",
}


def _module(root: Path, rel: str):
    """Import ``root/rel`` as a module, with ``root`` on sys.path for its package imports."""
    path = (root / rel).resolve()
    sys.path.insert(0, str(root.resolve()))
    name = "proof_" + rel.replace("/", "_").removesuffix(".py")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _jit_function(obj):
    from triton.runtime.jit import JITFunction

    while not isinstance(obj, JITFunction):
        obj = obj.fn  # Autotuner / Heuristics wrap the JITFunction as .fn
    return obj


def build_args(kernel: dict, row: dict, device: str):
    """Positional arguments for the launch, in parameter order."""
    import torch

    values = kernel.get("int_values") or {}
    args = []
    for name, ty in row["signature"].items():
        if ty == "constexpr":
            args.append(row["constexprs"][name])
        elif ty.startswith("*"):
            base = ty.lstrip("*").removeprefix("k")
            dtype = getattr(torch, _TORCH_DTYPES[base])
            args.append(torch.zeros(ELEMENTS, dtype=dtype, device=device))
        elif ty.startswith(("i", "u")) and ty != "u1":
            args.append(int(values.get(name, UNKNOWN_INT)))
        elif ty == "u1":
            args.append(False)
        else:  # fp16/bf16/fp32 scalars: never specialized
            args.append(0.5)
    return args


def runtime_specialization(fn, args) -> dict:
    """What Triton's runtime binder derives from ``args`` (signature, constexprs, divisibility):
    must equal what the static compile used, or the comparison would be between two kernels."""
    from triton.backends.nvidia.compiler import CUDABackend
    from triton.runtime.jit import create_function_from_signature

    _, spec, _ = create_function_from_signature(fn.signature, fn.params, CUDABackend)(*args)
    names = [p.name for p in fn.params]
    return {
        "signature": {n: s[0] for n, s in zip(names, spec)},
        "constexprs": {n: a for n, s, a in zip(names, spec, args) if s[0] == "constexpr"},
        "divisible_by_16": sorted(n for n, s in zip(names, spec) if s[1] == "D"),
    }


def _occupancy(function: int, threads: int, dynamic_smem: int) -> int | str:
    try:
        from cuda.bindings import driver as cu

        err, blocks = cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(cu.CUfunction(function), threads, dynamic_smem)
        return blocks if err == cu.CUresult.CUDA_SUCCESS else f"CUresult {err}"
    except ImportError:
        libcuda = ctypes.CDLL("libcuda.so.1")
        blocks = ctypes.c_int(0)
        rc = libcuda.cuOccupancyMaxActiveBlocksPerMultiprocessor(
            ctypes.byref(blocks), ctypes.c_void_p(function), ctypes.c_int(threads), ctypes.c_size_t(dynamic_smem))
        return blocks.value if rc == 0 else f"CUresult {rc}"


def prove(path: Path, dry_run: bool) -> tuple[list[dict], dict]:
    data = json.loads(path.read_text())
    root = Path(data["root"])
    rows = []
    for kernel in data["kernels"]:
        if kernel.get("skipped"):
            continue
        fn = _jit_function(getattr(_module(root, kernel["kernel_path"]), kernel["kernel"]))
        for row in kernel["configs"]:
            args = build_args(kernel, row, "cpu" if dry_run else "cuda")
            entry = {"kernel": f"{kernel['path']}::{kernel['kernel']}", "spec": kernel["spec"], "arch": row["arch"],
                     "config": row["label"],
                     "static": {k: row[k] for k in ("shared_bytes", "registers", "spills", "blocks_per_sm")}}
            got = runtime_specialization(fn, args)
            want = {"signature": row["signature"], "constexprs": row["constexprs"],
                    "divisible_by_16": sorted(row["divisible_by_16"])}
            entry["same_specialization"] = got == want
            if got != want:
                entry["runtime_specialization"] = got
            if dry_run:
                entry["args"] = [f"tensor({a.dtype}, {a.numel()})" if hasattr(a, "dtype") else a for a in args]
                rows.append(entry)
                continue
            import torch

            compiled = fn[(1, 1, 1)](*args, num_warps=row["num_warps"], num_stages=row["num_stages"])
            torch.cuda.synchronize()
            driver = {
                "shared_bytes": compiled.metadata.shared,
                "registers": compiled.n_regs,
                "spills": compiled.n_spills,
                "blocks_per_sm": _occupancy(compiled.function, 32 * row["num_warps"], compiled.metadata.shared),
            }
            entry["driver"] = driver
            entry["match"] = driver == entry["static"] and entry["same_specialization"]
            rows.append(entry)
    return rows, data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("json", nargs="+", type=Path, help="check --format json output(s) for this GPU's arch")
    parser.add_argument("--dry-run", action="store_true", help="build the arguments on the CPU, launch nothing")
    opts = parser.parse_args(argv)
    import triton

    device, arch = "none (dry run)", None
    if not opts.dry_run:
        import torch

        if not torch.cuda.is_available():
            print("no CUDA device visible", file=sys.stderr)
            return 2
        major, minor = torch.cuda.get_device_capability()
        device, arch = torch.cuda.get_device_name(), f"sm_{major}{minor}"
    all_rows, sources = [], []
    for path in opts.json:
        rows, data = prove(path, opts.dry_run)
        if arch is not None and any(r["arch"] != arch for r in rows):
            print(f"{path}: rows for {sorted({r['arch'] for r in rows})}, but this GPU is {arch}", file=sys.stderr)
            return 2
        if data["triton_version"] != triton.__version__:
            print(f"{path}: static figures from Triton {data['triton_version']}, this machine has "
                  f"{triton.__version__}", file=sys.stderr)
            return 2
        sources.append({"file": str(path), "triton_version": data["triton_version"],
                        "ptxas_versions": {t["arch"]: t["ptxas_version"] for t in data["targets"]}})
        all_rows += rows
    ok = all(r.get("match", True) and r["same_specialization"] for r in all_rows)
    print(json.dumps({"device": device, "arch": arch, "triton_version": triton.__version__,
                      "static_from": sources, "configs": len(all_rows),
                      "all_match": ok if not opts.dry_run else None, "rows": all_rows}, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
