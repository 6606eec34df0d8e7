"""Run sparse_mla_decode for a few batch sizes and check it against the torch reference.

    python drive.py                          # CUDA: B = 1, 8, 32, 96, fp8 cache, autotuned
    python drive.py --each-config            # ... and every autotune config pinned in turn
    python drive.py --interpret --batch 2 --heads 16 --topk 100 --max-context 160

Prints one JSON object per checked run and exits 1 when any output is out of tolerance.
``--interpret`` runs the kernels in Triton's interpreter on the CPU; the autotuner needs a GPU
to benchmark, so there every config is pinned in turn (a single config skips benchmarking).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import sys

# 16-bit operands (q, the dequantized K/V tiles, the probabilities fed to PV) and a 16-bit
# output: a few ulps of bf16 (2**-8) relative, plus an absolute floor for outputs near 0.
ATOL = 1e-2
RTOL = 2e-2


def _parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, nargs="+", default=[1, 8, 32, 96])
    ap.add_argument("--heads", type=int, default=128)
    ap.add_argument("--topk", type=int, default=2048)
    ap.add_argument("--max-context", type=int, default=8192)
    ap.add_argument("--page-size", type=int, default=64)
    ap.add_argument("--kv-dtype", choices=["fp8", "act"], default="fp8", help="fp8 e4m3, or q's dtype")
    ap.add_argument(
        "--act-dtype",
        choices=["bf16", "fp16"],
        default=None,
        help="q / output dtype (default bf16; fp16 under --interpret, which cannot run bf16 MMAs)",
    )
    ap.add_argument("--padding-requests", type=int, default=0, help="trailing rows with no valid index")
    ap.add_argument(
        "--v-scale-ratio",
        type=float,
        default=1.0,
        help="v_scale / k_scale (1 in serving; another value proves each side uses its own scale)",
    )
    ap.add_argument("--num-splits", type=int, default=None, help="force the number of top-k slices")
    ap.add_argument("--each-config", action="store_true", help="also pin every autotune config")
    ap.add_argument("--interpret", action="store_true", help="TRITON_INTERPRET=1 on the CPU")
    ap.add_argument("--seed", type=int, default=0)
    return ap.parse_args(argv)


def _backport_interpreter_index_fix() -> None:
    """Triton 3.6's interpreter turns a scalar tensor into an int with ``int(array)``, which
    numpy >= 2.4 rejects for 1-element arrays, so any loop with a runtime bound fails
    (triton-lang/triton#9171, fixed upstream by #9172). Re-apply that one-line fix."""
    from triton.runtime import interpreter

    patch_tensor = getattr(interpreter, "_patch_lang_tensor", None)
    if patch_tensor is None or getattr(patch_tensor, "_index_fix", False):
        return

    def patched(tensor, scope):
        patch_tensor(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.reshape(-1)[0]))

    patched._index_fix = True
    interpreter._patch_lang_tensor = patched


@contextlib.contextmanager
def only_config(autotuned, config):
    """Run ``autotuned`` with ``config`` alone (no benchmarking), then restore it."""
    saved = autotuned.configs, autotuned.cache
    autotuned.configs, autotuned.cache = [config], {}
    try:
        yield
    finally:
        autotuned.configs, autotuned.cache = saved


def compare(out, ref) -> dict:
    """Error figures of ``out`` against the fp32 reference, and whether they are in tolerance."""
    err = (out.float() - ref).abs()
    bound = ATOL + RTOL * ref.abs()
    return {
        "max_abs_err": float(err.max()),
        "max_abs_ref": float(ref.abs().max()),
        "worst_err_over_bound": float((err / bound).max()),
        "ok": bool((err <= bound).all()),
    }


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    if args.interpret:
        os.environ["TRITON_INTERPRET"] = "1"  # read when the kernels are decorated
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

    import torch
    import triton

    if args.interpret:
        _backport_interpreter_index_fix()
    from bench_inputs import make_inputs
    from mla_decode import sparse_mla_decode, sparse_mla_decode_reference
    from mla_decode.kernels import _mma_sparse_decode_split_kernel as split_kernel

    if args.interpret:
        device = "cpu"
    elif torch.cuda.is_available():
        device = "cuda"
    else:
        print("no CUDA device: use --interpret", file=sys.stderr)
        return 2
    act_name = args.act_dtype or ("fp16" if args.interpret else "bf16")
    if args.interpret and act_name == "bf16":
        # The interpreter keeps bf16 as uint16 bit patterns and tl.dot multiplies those
        # (triton-lang/triton#11584), so bf16 numerics can only be checked on a GPU.
        print("--interpret cannot run bf16 tl.dot; use --act-dtype fp16", file=sys.stderr)
        return 2
    act_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[act_name]
    kv_dtype = torch.float8_e4m3fn if args.kv_dtype == "fp8" else act_dtype
    env = {
        "triton": triton.__version__,
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name() if device == "cuda" else "cpu (TRITON_INTERPRET=1)",
    }

    all_ok = True
    for batch in args.batch:
        inputs = make_inputs(
            batch,
            heads=args.heads,
            topk=args.topk,
            max_context=args.max_context,
            page_size=args.page_size,
            kv_dtype=kv_dtype,
            act_dtype=act_dtype,
            device=device,
            seed=args.seed,
            padding_requests=min(args.padding_requests, batch),
        )
        if args.v_scale_ratio != 1.0:
            inputs = dataclasses.replace(inputs, v_scale=inputs.v_scale * args.v_scale_ratio)
        ref = sparse_mla_decode_reference(**inputs.kwargs())
        runs = []
        if not args.interpret:
            runs.append(("autotuned", contextlib.nullcontext()))
        if args.each_config or args.interpret:
            runs += [(str(cfg), only_config(split_kernel, cfg)) for cfg in list(split_kernel.configs)]
        for label, ctx in runs:
            with ctx:
                out = sparse_mla_decode(**inputs.kwargs(), num_splits=args.num_splits)
                if device == "cuda":
                    torch.cuda.synchronize()
                chosen = str(split_kernel.best_config) if label == "autotuned" else label
            result = {
                "batch": batch,
                "heads": args.heads,
                "topk": args.topk,
                "act_dtype": act_name,
                "kv_dtype": str(kv_dtype).removeprefix("torch."),
                "run": label,
                "config": chosen,
                **compare(out, ref),
                **env,
            }
            all_ok &= result["ok"]
            print(json.dumps(result), flush=True)
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
