"""Fleet-safe prune, checked on the GPU: the H200's autotuner times the same configs after the
patch as before, and the kernel's outputs are bit-identical (issue 10, "Check on the GPU").

1. Copy ``benchmarks/kernels/fleet/`` (a matmul with two configs that launch on sm_90 but not on
   sm_120) to ``<work>/original`` and ``<work>/patched``; run the ``prune`` variant for the fleet
   ``sm_120 + sm_90`` on the patched copy (``run_rewrites``, real cross-compiles) and write its
   edits there: the device-aware ``early_config_prune`` guard.
2. ``check`` both copies for both targets (CPU): which configs each target's autotuner would
   time and whether they launch (``check_before`` / ``check_after``).
3. On the GPU (skipped with ``--no-gpu``): import both copies, run the autotuned kernel with
   ``TRITON_PRINT_AUTOTUNING=1`` on the same fp16 inputs, read the configs the autotuner timed
   (``configs_timings``) and its choice, compare outputs with ``torch.equal``, and run every
   timed config of both copies explicitly to compare their outputs bit for bit too (the
   autotuned outputs can only be equal when both runs choose the same config).

Prints one JSON document (also written to ``$OUT/fleet_check.json`` when ``OUT`` is set); exits
1 when the configs timed differ or an output is not bit-identical, 2 on a setup problem.

    python benchmarks/device/fleet_check.py [--work DIR] [--no-gpu]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
KERNELS = HERE.parent / "kernels" / "fleet"
MODULE = "fleet_gemm.py"
KERNEL = "fleet_gemm_kernel"
FLEET = ("sm_120", "sm_90")
SIZE = 1024  # M = N = K: the launch spec's values (multiples of every tile)


def label(kwargs: dict, num_warps: int, num_stages: int) -> str:
    """A config as ``check`` labels it (``ConfigValue.label``): ``BLOCK_M=64 ... w4 s2``."""
    meta = " ".join(f"{k}={v}" for k, v in kwargs.items())
    return f"{meta} w{num_warps} s{num_stages}".strip()


# ``--product``: the same kernel with its configs written as kernel libraries and Triton's
# fused-attention tutorial write them, a product of loops filtered by a test of the device (sm_90
# times only the 8-warp tiles), so each target takes its own list and no loop element can go
# alone: the prune adds a condition for the tile dead on both targets and a guard for the one
# dead on sm_120 only.
PRODUCT = '''def _keep(c):  # sm_90 times only the 8-warp tiles
    return torch.cuda.get_device_capability()[0] != 9 or c.num_warps == 8


CONFIGS = [
    triton.Config({"BLOCK_M": n // r, "BLOCK_N": n, "BLOCK_K": 32 if n == 64 else 64},
                  num_warps=4 if n == 64 else 8, num_stages=4 if n == 256 else 2)
    for n in [64, 128, 256]
    for r in [1, 2]
    if r == 1 or n == 256
]


@triton.autotune(configs=list(filter(_keep, CONFIGS)), key=["M", "N", "K"])
'''


def as_product(text: str) -> str:
    """``MODULE``'s text with its written config list replaced by ``PRODUCT``."""
    decorator = re.compile(r"@triton\.autotune\(\n.*?\n\)\n", re.S)
    assert decorator.search(text), f"{MODULE}: no multi-line @triton.autotune(...) to replace"
    text = decorator.sub(lambda _: PRODUCT, text, count=1)
    return text.replace("import triton\n", "import torch\nimport triton\n", 1)


def patch(work: Path, archs=FLEET, product: bool = False) -> dict:
    """Copies the kernel folder to ``work/original`` and ``work/patched`` (its configs as
    ``PRODUCT`` with ``product``) and writes the fleet prune into the patched one. -> what was
    decided and the diff."""
    from autotune_rewrite.rewrite.diff import run_rewrites

    for name in ("original", "patched"):
        shutil.rmtree(work / name, ignore_errors=True)
        shutil.copytree(KERNELS, work / name, ignore=shutil.ignore_patterns("__pycache__"))
        if product:
            path = work / name / MODULE
            path.write_text(as_product(path.read_text()))
    run = run_rewrites(work / "patched", "prune", archs=list(archs))
    for c in run.changes:
        with open(work / "patched" / c.path, "w", encoding="utf-8", newline="") as fh:
            fh.write(c.after)
    decisions = [{"kernel": k.site.ident, "kept": [p.config.label() for p in k.decision.configs],
                  "dropped": [d.config.label() for d in k.decision.dropped],
                  "guarded": {a: [g.config.label() for g in k.decision.guarded if a in g.archs]
                              for a in k.decision.targets}}
                 for k in run.kernels]
    return {"decisions": decisions, "failed": [list(f) for f in run.failed], "diff": run.diff}


def launches(root: Path, archs=FLEET) -> dict[str, dict[str, bool]]:
    """``check`` of ``root``: {target: {config: launches}}, the configs each target's autotuner
    would time (after the site's early pruner, as the scan runs it per target)."""
    from autotune_rewrite.check.check import check

    result = check(root, archs=list(archs))
    out: dict[str, dict[str, bool]] = {}
    for r in result.reports:
        if r.problem is not None:
            raise SystemExit(f"check of {root}: {r.site.ident} not judged ({r.status.value})")
        for v in r.verdicts:
            out.setdefault(v.arch, {})[v.config.label()] = v.launchable
    return out


def compare_timed(before: list[str], after: list[str]) -> dict:
    """The GPU's verdict on the patch: the same configs timed, in the same order."""
    return {"timed_before": before, "timed_after": after, "timed_identical": before == after}


def _module(root: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, root / MODULE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _finite(t) -> bool:
    return all(x == x and x != float("inf") for x in (t if isinstance(t, (list, tuple)) else [t]))


def _config_label(c) -> str:
    return label(c.kwargs, c.num_warps, c.num_stages)


def gpu(work: Path) -> dict:
    os.environ["TRITON_PRINT_AUTOTUNING"] = "1"
    import torch
    import triton

    original = _module(work / "original", "fleet_original")
    patched = _module(work / "patched", "fleet_patched")
    gen = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn((SIZE, SIZE), device="cuda", dtype=torch.float16, generator=gen)
    b = torch.randn((SIZE, SIZE), device="cuda", dtype=torch.float16, generator=gen)
    outs, timed, best, failed = {}, {}, {}, {}
    for name, mod in (("before", original), ("after", patched)):
        c = torch.empty((SIZE, SIZE), device="cuda", dtype=torch.float32)
        mod.launch(a, b, c)
        torch.cuda.synchronize()
        tuner = getattr(mod, KERNEL)
        outs[name] = c
        # The configs it timed that launch (one that cannot is timed as inf: the patch drops those).
        timed[name] = [_config_label(cfg) for cfg, t in tuner.configs_timings.items() if _finite(t)]
        failed[name] = [_config_label(cfg) for cfg, t in tuner.configs_timings.items() if not _finite(t)]
        best[name] = _config_label(tuner.best_config)
    per_config = {}
    for cfg in getattr(original, KERNEL).configs:  # every config the source lists, run explicitly
        lab = _config_label(cfg)
        if lab not in timed["after"]:
            continue
        got = []
        for mod in (original, patched):
            c = torch.zeros((SIZE, SIZE), device="cuda", dtype=torch.float32)
            grid = (triton.cdiv(SIZE, cfg.kwargs["BLOCK_M"]), triton.cdiv(SIZE, cfg.kwargs["BLOCK_N"]))
            getattr(mod, KERNEL).fn[grid](a, b, c, SIZE, SIZE, SIZE, num_warps=cfg.num_warps,
                                          num_stages=cfg.num_stages, **cfg.kwargs)
            got.append(c)
        torch.cuda.synchronize()
        per_config[lab] = bool(torch.equal(got[0], got[1]))
    reference = (a.float() @ b.float())
    here = triton.runtime.driver.active.get_current_target()
    guard = getattr(patched, f"_prune_{KERNEL}", None)
    return {
        "device": torch.cuda.get_device_name(), "capability": f"sm_{here.arch}", "torch": torch.__version__,
        "triton": triton.__version__,
        **compare_timed(timed["before"], timed["after"]),
        "timed_as_inf_before": failed["before"], "timed_as_inf_after": failed["after"],
        "best_before": best["before"], "best_after": best["after"],
        "best_identical": best["before"] == best["after"],
        "outputs_bit_identical": bool(torch.equal(outs["before"], outs["after"])),
        "per_config_bit_identical": per_config,
        "max_abs_error_vs_fp32_matmul": float((outs["after"] - reference).abs().max()),
        "guard_keeps_here": [_config_label(c) for c in guard(getattr(patched, KERNEL).configs, {})] if guard else None,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, help="folder for the two copies (default: a temporary one)")
    ap.add_argument("--no-gpu", action="store_true", help="patch and check only (no GPU needed)")
    ap.add_argument("--product", action="store_true",
                    help="the kernel's configs as a device-filtered product of loops (PRODUCT)")
    args = ap.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="fleet-check-"))
    work.mkdir(parents=True, exist_ok=True)
    doc: dict = {"fleet": list(FLEET), "kernel": f"{MODULE}::{KERNEL}",
                 "configs": "product" if args.product else "list"}
    doc["patch"] = patch(work, product=args.product)
    if doc["patch"]["failed"] or not doc["patch"]["diff"]:
        print(json.dumps(doc, indent=2))
        return 2
    doc["check_before"] = launches(work / "original")
    doc["check_after"] = launches(work / "patched")
    # sm_120 launches all it times now; sm_90 times what launched there before, and nothing else.
    launched_on_90 = {k: v for k, v in doc["check_before"]["sm_90"].items() if v}
    ok = all(doc["check_after"]["sm_120"].values()) and doc["check_after"]["sm_90"] == launched_on_90
    if not args.no_gpu:
        doc["gpu"] = gpu(work)
        g = doc["gpu"]
        ok = ok and g["timed_identical"] and all(g["per_config_bit_identical"].values()) \
            and (g["outputs_bit_identical"] or not g["best_identical"])
    doc["ok"] = ok
    text = json.dumps(doc, indent=2)
    print(text)
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], "fleet_check.json").write_text(text + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
