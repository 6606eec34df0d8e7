"""Launch the parameter-kind fixture kernels on a real GPU and record what Triton's runtime compiled.

For every compile: the signature, constexprs and divisibility attrs the runtime chose (through
``knobs.runtime.jit_post_compile_hook``) and the driver's SMEM / registers / spills, so they can be
compared with ``check --arch sm_90`` on tests/fixtures/paramkinds/repo (``paramkinds_compare.py``).
Also records what a launch does with a torch dtype passed as a constexpr. JSON on stdout.
Needs a CUDA GPU, torch and triton (3.6.0 when recorded).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl
from triton import knobs
from triton.tools.tensor_descriptor import TensorDescriptor

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "paramkinds" / "repo"))
from kernels import kinds  # noqa: E402

_seen: list[dict] = []
_case = {"name": None}


def _plain(v):
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return str(v)


def _hook(*, key, repr, fn, compile, is_manual_warmup, already_compiled):
    jit = fn.jit_function
    names = [p.name for p in jit.params]
    _seen.append({
        "case": _case["name"], "kernel": jit.fn.__name__, "key": key, "jit": jit,
        "signature": {k: _plain(v) for k, v in compile["signature"].items()},
        "constants": {".".join([names[p[0]], *map(str, p[1:])]): _plain(v) for p, v in compile["constants"].items()},
        "divisible": sorted(".".join([names[p[0]], *map(str, p[1:])]) for p, a in compile["configs"][0].items()
                            if ["tt.divisibility", 16] in [list(x) for x in a]),
        "num_warps": compile["num_warps"], "num_stages": compile["num_stages"],
    })


def _case_run(name, launch):
    _case["name"] = name
    try:
        launch()
        torch.cuda.synchronize()
        return {"case": name, "ok": True}
    except Exception as exc:  # noqa: BLE001 - the point: what a launch raises
        return {"case": name, "ok": False, "error": f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1][:200]}"}


def main() -> None:
    knobs.runtime.jit_post_compile_hook = _hook
    dev = "cuda"
    n = 1000  # not 1, not divisible by 16: what check compiles for an int without a value
    grid = lambda meta: (triton.cdiv(n, meta.get("BLOCK", 64)),)  # noqa: E731
    x16 = torch.randn(1024, device=dev, dtype=torch.float16)
    x32 = torch.randn(1024, device=dev, dtype=torch.float32)
    xb = torch.randn(1024, device=dev, dtype=torch.bfloat16)
    out = torch.empty_like(xb)
    a = torch.randn(256, 64, device=dev, dtype=torch.bfloat16)
    b = torch.empty_like(a)
    results = [
        _case_run("optional_bias/default", lambda: kinds.optional_bias[grid](x16, n)),
        _case_run("optional_bias/with bias", lambda: kinds.optional_bias[grid](x16, n, x16.clone(), SCALE=0.5)),
        _case_run("optional_bias/bias None", lambda: kinds.optional_bias[grid](x16, n, None, None)),
        _case_run("flags/default", lambda: kinds.flags[grid](x32, n, True, RELU=True)),
        _case_run("flags/i1", lambda: kinds.flags[grid](x32, n, False, RELU=False)),
        _case_run("desc_copy/default", lambda: kinds.desc_copy[lambda m: (triton.cdiv(256, m["BM"]),)](
            TensorDescriptor.from_tensor(a, [64, 64]), TensorDescriptor.from_tensor(b, [64, 64]), 250)),
        _case_run("tuple_args/default", lambda: kinds.tuple_args[grid]((x16, x16.clone()), (n, (3, 7)))),
        _case_run("accumulate/default", lambda: kinds.accumulate[grid](xb, out, n, ACC=tl.float32, OUT=tl.bfloat16)),
        _case_run("accumulate/torch", lambda: kinds.accumulate[grid](xb, out, n, ACC=torch.float32, OUT=tl.bfloat16)),
        _case_run("compares_dtype/default", lambda: kinds.compares_dtype[grid](x32, n, DT=torch.float32)),
    ]
    torch.testing.assert_close(b, a * 2)  # the TMA copy really ran
    compiles = []
    for rec in _seen:
        jit = rec.pop("jit")
        kernel = jit.device_caches[torch.cuda.current_device()][0].get(rec.pop("key"))
        if kernel is not None:
            kernel._init_handles()
            rec.update(shared=kernel.metadata.shared, n_regs=kernel.n_regs, n_spills=kernel.n_spills)
        compiles.append(rec)
    print(json.dumps({"triton": triton.__version__, "torch": torch.__version__,
                      "gpu": torch.cuda.get_device_name(), "launches": results, "compiles": compiles}, indent=1))


if __name__ == "__main__":
    main()
