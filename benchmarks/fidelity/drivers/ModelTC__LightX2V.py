"""Drives LightX2V's quantized linear layers and its SVG2 k-means assignment the way the model
code calls them (``MMWeight...Triton.apply`` in lightx2v/common/ops/mm/mm_weight.py: per-token
activation quantization, then a per-channel-scaled GEMM against an (N, K) weight).

Shapes: 2048 tokens, hidden 4096; the no-bias GEMMs project 4096 -> 4096 (attention out), the
bias GEMMs 4096 -> 14336 (FFN up) with an fp32 bias (``bias_force_fp32``); output bf16. The
activation is quantized by the repository's own (non-autotuned) ``int8_quantize_triton`` /
``fp8_quantize_triton``; weights are int8 / float8_e4m3fn tensors with fp32 per-channel scales.
SVG2's ``euclid_assign_triton`` assigns 32 heads x 4096 tokens x 128 dims (bf16) to 300 query
centroids (``num_q_centroids`` in svg2_attn.py), centroids gathered from the points.

Cases and the autotuned kernels each launches:
- int8_gemm:      lightx2v/common/ops/mm/triton_kernels.py::int8_gemm_kernel
- int8_gemm_bias: lightx2v/common/ops/mm/triton_kernels.py::int8_gemm_bias_kernel
- fp8_gemm:       lightx2v/common/ops/mm/triton_kernels.py::fp8_gemm_kernel
- fp8_gemm_bias:  lightx2v/common/ops/mm/triton_kernels.py::fp8_gemm_bias_kernel
- euclid_assign:  lightx2v/common/ops/attn/svg2_attn_utils.py::_euclid_assign_kernel

The fp8 kernels load the per-row / per-column scales and the bias without masks, so M and N are
kept multiples of the largest tile (256 x 128).
"""

from __future__ import annotations

REPO = "ModelTC__LightX2V"
SOURCE_ROOT = ""


def cases(load):
    import torch

    mm = load("lightx2v/common/ops/mm/triton_kernels.py")
    svg2 = load("lightx2v/common/ops/attn/svg2_attn_utils.py")
    tokens, hidden, ffn = 2048, 4096, 14336
    dev, dt = "cuda", torch.bfloat16

    def activations():
        return torch.randn(tokens, hidden, device=dev, dtype=dt)

    def int8_weight(n):
        w = torch.randint(-127, 128, (n, hidden), device=dev, dtype=torch.int8)
        scale = torch.rand(n, device=dev, dtype=torch.float32) / 127.0
        return w, scale

    def fp8_weight(n):
        w = (torch.randn(n, hidden, device=dev) * 0.5).to(torch.float8_e4m3fn)
        scale = torch.rand(n, device=dev, dtype=torch.float32) / 448.0
        return w, scale

    def int8_gemm():
        xq, xs = mm.int8_quantize_triton(activations())
        w, ws = int8_weight(hidden)
        mm.int8_gemm_triton(xq, w, xs, ws, output_dtype=dt)

    def int8_gemm_bias():
        xq, xs = mm.int8_quantize_triton(activations())
        w, ws = int8_weight(ffn)
        bias = torch.randn(ffn, device=dev, dtype=torch.float32)
        mm.int8_gemm_bias_triton(xq, w, bias, xs, ws, output_dtype=dt)

    def fp8_gemm():
        xq, xs = mm.fp8_quantize_triton(activations())
        w, ws = fp8_weight(hidden)
        mm.fp8_gemm_triton(xq, w, xs, ws, output_dtype=dt)

    def fp8_gemm_bias():
        xq, xs = mm.fp8_quantize_triton(activations())
        w, ws = fp8_weight(ffn)
        bias = torch.randn(ffn, device=dev, dtype=torch.float32)
        mm.fp8_gemm_bias_triton(xq, w, bias, xs, ws, output_dtype=dt)

    def euclid_assign():
        heads, points, dim, clusters = 32, 4096, 128, 300
        x = torch.randn(heads, points, dim, device=dev, dtype=dt)
        idx = torch.randint(0, points, (heads, clusters), device=dev)
        centroids = torch.gather(x, 1, idx[..., None].expand(-1, -1, dim)).contiguous()
        x_sq = (x.float() ** 2).sum(dim=-1)
        svg2.euclid_assign_triton(x, centroids, x_sq)

    return {
        "int8_gemm": int8_gemm,
        "int8_gemm_bias": int8_gemm_bias,
        "fp8_gemm": fp8_gemm,
        "fp8_gemm_bias": fp8_gemm_bias,
        "euclid_assign": euclid_assign,
    }
