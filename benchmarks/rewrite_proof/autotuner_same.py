"""On a GPU: the autotuner times the same launchable configs before and after a prune, chooses
the same one, and every config computes bit-identical outputs in both versions.

    python benchmarks/rewrite_proof/autotuner_same.py BEFORE.py AFTER.py [--kernel gemm_kernel]

BEFORE/AFTER: one module each (the file as written, and as ``diff --variant prune`` patched it),
holding a GEMM kernel ``kernel(a, b, c, M, N, K)`` with BLOCK_M/BLOCK_N meta-parameters (the
fleet fixture's shape, ``product_*.py`` here). Prints one JSON object: per version the configs
Triton's autotuner timed (``configs_timings``: launchable ones with their ms, the rest inf), its
choice, and per launchable config whether the outputs of the two versions are equal bit for bit.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import sys

import torch
import triton


def _load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _label(c) -> str:
    kw = " ".join(f"{k}={v}" for k, v in sorted(c.kwargs.items()))
    return f"{kw} w{c.num_warps} s{c.num_stages}"


def _grid(M, N):
    return lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--kernel", default="gemm_kernel")
    ap.add_argument("--size", type=int, default=1024)
    args = ap.parse_args()
    M = N = K = args.size
    torch.manual_seed(0)
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    out = {"gpu": torch.cuda.get_device_name(), "capability": list(torch.cuda.get_device_capability()),
           "triton": triton.__version__, "torch": torch.__version__, "size": [M, N, K], "versions": {}}
    tuned, pinned = {}, {}
    for tag, path in (("before", args.before), ("after", args.after)):
        kern = getattr(_load(path, f"proof_{tag}"), args.kernel)
        c = torch.empty(M, N, device="cuda", dtype=torch.float32)
        kern[_grid(M, N)](a, b, c, M, N, K)
        torch.cuda.synchronize()
        timings = {_label(cfg): (t[0] if isinstance(t, (list, tuple)) else t) for cfg, t in kern.configs_timings.items()}
        tuned[tag] = c.clone()
        launchable = [cfg for cfg, t in kern.configs_timings.items()
                      if math.isfinite(t[0] if isinstance(t, (list, tuple)) else t)]
        pinned[tag] = {}
        for cfg in launchable:  # each launchable config pinned, outside the autotuner
            y = torch.empty(M, N, device="cuda", dtype=torch.float32)
            kern.fn[_grid(M, N)](a, b, y, M, N, K, num_warps=cfg.num_warps, num_stages=cfg.num_stages, **cfg.kwargs)
            pinned[tag][_label(cfg)] = y
        out["versions"][tag] = {"timed": {k: (round(v, 4) if math.isfinite(v) else "inf") for k, v in timings.items()},
                                "chosen": _label(kern.best_config)}
    before, after = out["versions"]["before"], out["versions"]["after"]
    launch_before = sorted(k for k, v in before["timed"].items() if v != "inf")
    out["same_launchable_configs_timed"] = launch_before == sorted(after["timed"])
    out["dropped_were_inf_before"] = sorted(set(before["timed"]) - set(after["timed"]))
    out["same_choice"] = before["chosen"] == after["chosen"]
    out["autotuned_outputs_bit_identical"] = bool(torch.equal(tuned["before"], tuned["after"]))
    out["pinned_outputs_bit_identical"] = {k: bool(torch.equal(pinned["before"][k], pinned["after"][k]))
                                           for k in pinned["before"] if k in pinned["after"]}
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
