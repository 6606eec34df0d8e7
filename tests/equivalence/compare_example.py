"""Run the example's original and rewritten decode on the same inputs and compare outputs.

    python tests/equivalence/compare_example.py ORIG_DIR v1=V1_DIR v3=V3_DIR --interpret --batch 1 9 49
    python tests/equivalence/compare_example.py ORIG_DIR v1=V1_DIR ... --batch 1 8 32 96     # CUDA

ORIG_DIR is a copy of examples/sm120_mla_decode, each LABEL=DIR a copy with that variant's
diff applied. The original runs pinned to its first config; the rewritten one runs pinned to each
of its configs in turn, and on a GPU also autotuned (benchmarking, keys, bs_bucket and all).
Prints one JSON object per run; exits 1 when any output differs beyond the example's tolerance.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import sys
from pathlib import Path


def _load_package(name: str, folder: Path):
    """Import ``folder/mla_decode`` under another top-level name, so both copies coexist."""
    pkg = folder / "mla_decode"
    spec = importlib.util.spec_from_file_location(name, pkg / "__init__.py", submodule_search_locations=[str(pkg)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _load_file(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("orig", type=Path)
    ap.add_argument("new", nargs="+", help="LABEL=DIR of a rewritten copy")
    ap.add_argument("--batch", type=int, nargs="+", default=[1, 9, 49])
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--topk", type=int, default=64)
    ap.add_argument("--max-context", type=int, default=128)
    ap.add_argument("--interpret", action="store_true")
    args = ap.parse_args(argv)
    if args.interpret:
        os.environ["TRITON_INTERPRET"] = "1"

    import torch
    import triton

    drive = _load_file("example_drive", args.orig / "drive.py")
    if args.interpret:
        drive._backport_interpreter_index_fix()
    bench = _load_file("bench_inputs", args.orig / "bench_inputs.py")
    orig = _load_package("mla_orig", args.orig)
    orig_kernel = orig.kernels._mma_sparse_decode_split_kernel
    variants = []
    for item in args.new:
        label, _, folder = item.partition("=")
        variants.append((label, _load_package(f"mla_{label}", Path(folder))))

    device = "cpu" if args.interpret else "cuda"
    act = torch.float16 if args.interpret else torch.bfloat16  # the interpreter cannot run bf16 tl.dot
    ok_all = True
    for batch in args.batch:
        inputs = bench.make_inputs(batch, heads=args.heads, topk=args.topk, max_context=args.max_context,
                                   act_dtype=act, device=device, seed=batch)
        with drive.only_config(orig_kernel, orig_kernel.configs[0]):
            expected = orig.sparse_mla_decode(**inputs.kwargs())
        for variant, new in variants:
            new_kernel = new.kernels._mma_sparse_decode_split_kernel
            runs = [(str(c), drive.only_config(new_kernel, c)) for c in list(new_kernel.configs)]
            if not args.interpret:
                runs.append(("autotuned", contextlib.nullcontext()))
            for label, ctx in runs:
                with ctx:
                    out = new.sparse_mla_decode(**inputs.kwargs())
                if device == "cuda":
                    torch.cuda.synchronize()
                diff = (out.float() - expected.float()).abs()
                bound = drive.ATOL + drive.RTOL * expected.float().abs()
                ok = bool((diff <= bound).all())
                ok_all &= ok
                print(json.dumps({
                    "variant": variant, "batch": batch, "run": label,
                    "chosen": str(new_kernel.best_config) if label == "autotuned" else label,
                    "max_abs_diff": float(diff.max()), "identical": bool(torch.equal(out, expected)), "ok": ok,
                    "triton": triton.__version__, "torch": torch.__version__,
                    "device": torch.cuda.get_device_name() if device == "cuda" else "cpu (TRITON_INTERPRET=1)",
                }), flush=True)
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
