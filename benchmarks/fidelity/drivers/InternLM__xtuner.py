"""Drives xtuner v1's Triton ops the way its training of a Mixtral-sized MoE (2048 tokens, top-2 of
8 experts = 4096 routed rows, hidden 4096, FFN 14336 with gate and up fused to 28672 columns, bf16)
and its Muon optimizer call them.

Cases and the autotuned kernels (under xtuner/v1/) each should launch:

- ``ns_line_1_4096x4096``, ``ns_line_1_4096x14336``: ``ns_line_1`` (A = X X^T), the first of
  the two Triton launchers ``newton_schulz_triton`` (Muon) calls each iteration, on a normalized
  square attention-weight update and a wide FFN one, bf16, batched the way that op batches
  (a leading dimension of 1): optim/newton_schulz_triton.py::ns_line_1_kernel.
- ``ns_line_2_4096``: ``ns_line_2`` (B = b A + c A A^T) on the 4096 x 4096 Gram matrix (the same
  size for both weights): optim/newton_schulz_triton.py::ns_line_2_kernel.
  (One launcher per case rather than the whole op: 30 + 30 configs to compile per call of it;
  its third line is torch.baddbmm, no kernel.)
- ``m_grouped_gemm``: ``m_grouped_gemm`` (torch custom op moe::m_grouped_gemm) with B [8, 4096,
  28672] (N-major, trans_b=False), the expert gate/up forward:
  ops/moe/cuda/triton_kernels/m_grouped_gemm_TMA_triton3_4.py::m_grouped_gemm_bNmajor_kernel.
- ``m_grouped_gemm_trans_b``: the same op with B [8, 4096, 14336] (K-major, trans_b=True), the
  expert down projection: ...m_grouped_gemm_TMA_triton3_4.py::m_grouped_gemm_bKmajor_kernel.
- ``k_grouped_gemm``: ``k_grouped_gemm`` (moe::k_grouped_gemm), the gate/up weight gradient
  x^T dy per expert, x [4096, 4096], dy [4096, 28672]:
  ops/moe/cuda/triton_kernels/k_grouped_gemm_TMA_triton3_4.py::k_grouped_gemm_kernel.
- ``per_tile_quant``: ``per_tile_quant`` (float8::per_tile_quant, 1 x 128 tiles to fp8 e4m3) of a
  [4096, 4096] activation: float8/triton_kernels/per_tile_quant.py::per_tile_quant_kernel.
- ``trans_per_tile_quant_gemm``: ``trans_per_tile_quant_gemm`` (quantize along the token dim and
  transpose) of a [4096, 4096] gradient:
  float8/triton_kernels/trans_per_tile_quant_gemm.py::trans_per_tile_quant_gemm_kernel.
- ``trans_per_tile_quant_expand_128x``: ``trans_per_tile_quant_expand_128x`` (per-expert
  transpose + quantize, each expert's rows padded to 128) of the [4096, 4096] routed activation:
  float8/triton_kernels/trans_quant_per_tile.py::trans_per_tile_quant_expand_128x_kernel.

Both grouped GEMMs set ``triton.set_allocator`` themselves (device-side tensor descriptors).

Skipped: ops/moe/cuda/triton_kernels/m_grouped_gemm_TMA.py and k_grouped_gemm_TMA.py, the
pre-3.4 variants: they use ``tl._experimental_descriptor_load`` and the driver's
``fill_2d_tma_descriptor``, gone from Triton 3.6 (xtuner's own package __init__ picks the
``_triton3_4`` files for Triton >= 3.4); loading them would also register the same torch custom
op names a second time. The xtuner/v1/__init__.py site is a call, not a kernel.
"""

from __future__ import annotations

REPO = "InternLM__xtuner"
SOURCE_ROOT = ""


def cases(load):
    import torch

    ns = load("xtuner/v1/optim/newton_schulz_triton.py")
    gg = "xtuner/v1/ops/moe/cuda/triton_kernels/"
    mgg = load(gg + "m_grouped_gemm_TMA_triton3_4.py")
    kgg = load(gg + "k_grouped_gemm_TMA_triton3_4.py")
    f8 = "xtuner/v1/float8/triton_kernels/"
    ptq = load(f8 + "per_tile_quant.py")
    tptq = load(f8 + "trans_per_tile_quant_gemm.py")
    tq = load(f8 + "trans_quant_per_tile.py")

    tokens, hidden, ffn, experts, top_k = 2048, 4096, 14336, 8, 2
    routes = tokens * top_k
    dev, dt = "cuda", torch.bfloat16

    def size_per_group():
        route = torch.randn(tokens, experts, device=dev).topk(top_k, dim=-1).indices.flatten()
        return route.bincount(minlength=experts)  # int64, sums to `routes`

    def normalized(rows, cols):
        x = torch.randn(1, rows, cols, device=dev, dtype=torch.float32)
        return (x / x.norm(dim=(-2, -1), keepdim=True)).to(dt)

    def ns_line_1(rows, cols):
        def case():
            ns.ns_line_1(normalized(rows, cols))

        return case

    def ns_line_2():
        x = normalized(4096, 14336)
        ns.ns_line_2(x @ x.mT, alpha=2.1790, beta=-6.0861)

    def m_grouped_gemm():
        a = torch.randn(routes, hidden, device=dev, dtype=dt)
        b = torch.randn(experts, hidden, 2 * ffn, device=dev, dtype=dt) / hidden**0.5
        mgg.m_grouped_gemm(a, b, size_per_group(), trans_b=False)

    def m_grouped_gemm_trans_b():
        a = torch.randn(routes, ffn, device=dev, dtype=dt)
        b = torch.randn(experts, hidden, ffn, device=dev, dtype=dt) / ffn**0.5
        mgg.m_grouped_gemm(a, b, size_per_group(), trans_b=True)

    def k_grouped_gemm():
        x = torch.randn(routes, hidden, device=dev, dtype=dt)
        dy = torch.randn(routes, 2 * ffn, device=dev, dtype=dt)
        kgg.k_grouped_gemm(x, dy, size_per_group())

    def per_tile_quant():
        ptq.per_tile_quant(torch.randn(routes, hidden, device=dev, dtype=dt), 128, torch.float8_e4m3fn)

    def trans_per_tile_quant_gemm():
        tptq.trans_per_tile_quant_gemm(torch.randn(routes, hidden, device=dev, dtype=dt), 128, torch.float8_e4m3fn)

    def trans_per_tile_quant_expand_128x():
        x = torch.randn(routes, hidden, device=dev, dtype=dt)
        tq.trans_per_tile_quant_expand_128x(x, size_per_group())

    return {
        "ns_line_1_4096x4096": ns_line_1(4096, 4096),
        "ns_line_1_4096x14336": ns_line_1(4096, 14336),
        "ns_line_2_4096": ns_line_2,
        "m_grouped_gemm": m_grouped_gemm,
        "m_grouped_gemm_trans_b": m_grouped_gemm_trans_b,
        "k_grouped_gemm": k_grouped_gemm,
        "per_tile_quant": per_tile_quant,
        "trans_per_tile_quant_gemm": trans_per_tile_quant_gemm,
        "trans_per_tile_quant_expand_128x": trans_per_tile_quant_expand_128x,
    }
