"""A kernel that fixes its operands to fp16 in its own code (a dequantized weight cast to
``tl.float16``) cannot compile with the default ``--assume-dtype bf16``: every config fails with
Triton's dot dtype mismatch. ``check`` compiles the assumed pointers once more with the dtype
the compiler named, and says so (real compiles through the CLI)."""

from __future__ import annotations

import json

import pytest

from autotune_rewrite.spec.dtype_retry import retyped
from autotune_rewrite.evidence import LaunchSpec
from autotune_rewrite.outcomes import Assumption
from rewrite_e2e import cli, commit_tree

KERNEL = '''
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 32}, num_warps=4), triton.Config({"BLOCK": 64}, num_warps=4)],
                 key=["n"])
@triton.jit
def dequant_dot(a_ptr, q_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tile = offs[:, None] * BLOCK + offs[None, :]
    a = tl.load(a_ptr + tile)
    w = tl.load(q_ptr + tile).to(tl.float16)  # the kernel's own dtype for the weights
    tl.store(c_ptr + tile, tl.dot(a, w))


def run(a, q, c):
    dequant_dot[(1,)](a, q, c, a.numel())
'''


def test_the_assumed_dtype_is_retried_with_the_one_the_kernel_fixes(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    (root / "k.py").write_text(KERNEL)
    commit_tree(root)
    proc = cli("check", ".", "--format", "json", cwd=root, cache=tmp_path / "cache")
    assert proc.returncode in (0, 1), proc.stderr
    (kernel,) = json.loads(proc.stdout)["kernels"]
    assert kernel["status"] == "assumed" and len(kernel["configs"]) == 2
    fixed = {a["parameter"]: a for a in kernel["assumptions"] if "the dtype the kernel's own code fixes" in a["source"]}
    assert set(fixed) == {"a_ptr", "q_ptr", "c_ptr"} and {a["value"] for a in fixed.values()} == {"*fp16"}
    assert "Got bf16 and fp16" in fixed["a_ptr"]["source"]


SPEC = LaunchSpec("default", (("a_ptr", "*bf16"), ("s_ptr", "*fp32"), ("n", "i32")), (), assumed=("a_ptr", "s_ptr"),
                  assumptions=(Assumption("a_ptr", "*bf16", "pointer dtype not in the code"),))


@pytest.mark.parametrize("error, types", [
    ("Both operands must be same dtype. Got bf16 and fp16", {"a_ptr": "*fp16", "s_ptr": "*fp32"}),
    ("Both operands must be same dtype. Got bf16 and fp32", None),  # fp32 comes from a scale: not retried
    ("Both operands must be same dtype. Got fp16 and fp8e4nv", None),
    ("Unsupported lhs dtype fp64", None),
])
def test_only_a_mismatch_of_the_assumed_half_dtype_is_retried(error, types):
    out = retyped(SPEC, error)
    assert (dict(out.types) if out else None) == (types and {**types, "n": "i32"})
    if out is not None:
        assert out.assumptions[0].value == "*fp16"
