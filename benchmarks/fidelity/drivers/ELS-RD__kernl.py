"""Drives kernl's decoding attention (``attention_vec_mat_forward``: one query token against a KV
cache, as two vector-matrix products, the second with a fused softmax) and its batched matmul
(``batched_matmul``), fp16.

Shapes: decoding with batch 4, 32 heads, head dim 128 over a 1024-token KV cache; the batched
matmul is the attention-score product of 32 heads x 2048 tokens x head dim 128
((32, 2048, 128) @ (32, 128, 2048)).

Cases and the autotuned kernels each launches:
- attention_vec_mat: src/kernl/implementations/attention_vec_mat.py::vec_mat (twice, with two
  different autotune keys: q @ K^T, then softmax(scores) @ V)
- batched_matmul: src/kernl/implementations/batched_matmul.py::matmul_kernel

Skipped: src/kernl/implementations/linear_layer.py::kernel_fma imports
``triton.ops.matmul_perf_model``, which stock Triton 3.x no longer ships.
"""

from __future__ import annotations

REPO = "ELS-RD__kernl"
SOURCE_ROOT = "src"


def cases(load):
    import torch

    vm = load("kernl/implementations/attention_vec_mat.py")
    bmm = load("kernl/implementations/batched_matmul.py")
    dev, dt = "cuda", torch.float16

    def attention_vec_mat():
        batch, heads, cache, head_dim = 4, 32, 1024, 128
        q = torch.randn(batch, heads, 1, head_dim, device=dev, dtype=dt)
        k = torch.randn(batch, heads, cache, head_dim, device=dev, dtype=dt)
        v = torch.randn(batch, heads, cache, head_dim, device=dev, dtype=dt)
        out = torch.empty(batch, heads, 1, head_dim, device=dev, dtype=dt)
        vm.attention_vec_mat_forward(q, k, v, out, head_dim**-0.5)

    def batched_matmul():
        a = torch.randn(32, 2048, 128, device=dev, dtype=dt)
        b = torch.randn(32, 128, 2048, device=dev, dtype=dt)
        bmm.batched_matmul(a, b)

    return {"attention_vec_mat": attention_vec_mat, "batched_matmul": batched_matmul}
