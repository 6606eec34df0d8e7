"""Drives axolotl's autotuned Triton kernels through the repo's own ops and autograd functions: the
ScatterMoE(+LoRA) expert GEMMs, multi-adapter LoRA, the fp8 grouped dX GEMM, and the DeepSeek-V4 /
GLM-5.2 helper kernels (gated pooling, Lightning-Indexer scoring, mHC hyper-connection), bf16,
forward and backward wherever an autograd function exists.

Cases, shapes and the autotuned kernels each should launch (paths under src/):

* ``parallel_linear`` -- ``ParallelLinear`` (base ScatterMoE, W trainable), Mixtral-sized first
  projection: 2048 tokens, hidden 4096, 8 experts top-2, FFN 14336, grouped output, fwd + bwd.
  - axolotl/integrations/kernels/libs/scattermoe_lora/kernels/ops.py::_scatter2scatter
  - axolotl/integrations/kernels/libs/scattermoe_lora/kernels/ops.py::_group
  - axolotl/integrations/kernels/libs/scattermoe_lora/kernels/ops.py::_groupXtY
* ``lora_split_mixtral`` -- ``parallel_linear_lora`` with default flags on the same Mixtral shape,
  rank 16 (few large experts -> the split base+LoRA forward; backward through group, the grouped
  Gram dA/dB and base scatter2scatter dX), fwd + bwd.
  - .../scattermoe_lora/kernels/ops.py::_scatter2scatter
  - .../scattermoe_lora/kernels/ops.py::_group
  - .../scattermoe_lora/kernels/grouped_gram.py::_grouped_gram_kernel
* ``lora_fused_finegrained`` -- ``parallel_linear_lora`` with ``use_fused_dX`` and
  ``use_fused_gather`` on a fine-grained MoE (Qwen1.5-MoE-A2.7B gate/up: 1024 tokens, hidden 2048,
  60 experts top-4, N 2816, rank 16). 60 experts selects the fused forward and the small gathered
  workload (4096 x 2816 < 2^24) the fused dA/dB kernel; fwd + bwd.
  - .../scattermoe_lora/kernels/lora_ops.py::_scatter2scatter_lora
  - .../scattermoe_lora/kernels/lora_ops.py::_group_bwd_lora_fused
  - .../scattermoe_lora/kernels/lora_ops.py::_scatter2scatter_lora_dX
* ``lora_mxfp4`` -- ``parallel_linear_lora`` with ``MXWeights`` (packed FP4 + E8M0 scales, random
  bytes) on a gpt-oss-20b gate/up shape: 1024 tokens, hidden 2880, 32 experts top-4, N 5760, rank
  16, fwd + bwd (MX forces fused dX; the gathered workload is too big for the fused gather, so dA/dB
  go through group + scatter2scatter + grouped Gram).
  - .../scattermoe_lora/kernels/lora_ops.py::_scatter2scatter_lora_mx
  - .../scattermoe_lora/kernels/ops.py::_group
  - .../scattermoe_lora/kernels/ops.py::_scatter2scatter
  - .../scattermoe_lora/kernels/grouped_gram.py::_grouped_gram_kernel
  - .../scattermoe_lora/kernels/lora_ops.py::_scatter2scatter_lora_dX_mx
* ``group_bwd_lora_split`` -- ``lora_ops.group_bwd_lora`` (split dA and dB kernels, no atomics)
  on the fine-grained shape above: 4096 grouped rows, K 2048, N 2816, 60 experts, rank 16.
  - .../scattermoe_lora/kernels/lora_ops.py::_group_bwd_lora_split
* ``multi_lora`` -- ``scatter2scatter_multilora`` with ``build_multilora_routing``: Mixtral shape
  (2048 tokens, hidden 4096, 8 experts top-2, FFN 14336), 4 tenants, rank 16, fwd + bwd.
  - .../scattermoe_lora/kernels/ops.py::_scatter2scatter
  - .../scattermoe_lora/kernels/ops.py::_group
  - .../scattermoe_lora/multi_lora.py::_grouped_gram_kernel
* ``grouped_dx_fp8`` -- ``dequant_grouped.grouped_dx_fp8``: down-projection dX of 8 experts, 4096
  routed rows in 128-row tiles, grad [4096, 4096] bf16 against e4m3 weights [8, 4096, 14336].
  - .../scattermoe_lora/dequant_grouped.py::_grouped_dx_fp8_kernel
* ``dsv4_gated_pool`` -- ``gated_softmax_pool`` as the DeepSeek-V4 CSA compressor (4096 tokens,
  ratio 4 with overlap -> 1024 windows of 8, head dim 512), fwd + bwd.
  - axolotl/integrations/kernels/libs/dsv4/gated_pool.py::_pool_fwd_kernel
  - axolotl/integrations/kernels/libs/dsv4/gated_pool.py::_pool_bwd_kernel
* ``dsv4_indexer`` -- DeepSeek-V4 ``indexer_scores``: 4096 queries, 64 index heads x 128, 1024
  compressed keys (forward only by design).
  - axolotl/integrations/kernels/libs/dsv4/indexer.py::_indexer_score_kernel
* ``dsv4_hyperconnection`` -- ``hyperconnection_forward`` (mHC): 2048 tokens, 4 streams of hidden
  4096, 20 Sinkhorn iterations, fwd + bwd through all three fused autograd functions.
  - axolotl/integrations/kernels/libs/dsv4/mhc.py::_rmsln_fwd_kernel
  - axolotl/integrations/kernels/libs/dsv4/mhc.py::_mhc_fwd_kernel
  - axolotl/integrations/kernels/libs/dsv4/mhc.py::_collapse_fwd_kernel
  - axolotl/integrations/kernels/libs/dsv4/mhc.py::_collapse_bwd_kernel
  - axolotl/integrations/kernels/libs/dsv4/mhc.py::_mhc_bwd_kernel
  - axolotl/integrations/kernels/libs/dsv4/mhc.py::_rmsln_bwd_kernel
* ``glm_indexer_topk`` -- GLM-5.2 DSA ``indexer_topk``: 4096 tokens, 32 index heads x 128, top-2048
  (forward only by design).
  - axolotl/integrations/kernels/libs/glm_dsa/indexer.py::_indexer_score_kernel

Not driven: ``lora_ops.py::_group_bwd_lora`` (nothing launches it). Every module that imports
``axolotl.kernels.op_registry`` (dsv4 attention / attention_csa / attention_gather, glm_dsa
attention_mla_absorb / attention_topk, monkeypatch/attention/flash_attn_d512) pulls in
``axolotl.utils.logging`` -> ``axolotl.utils.distributed`` -> accelerate + transformers, which are not
installed on the device; ``kernels/gemma4_fused_rope.py`` needs liger_kernel. ``grouped_gram.py``
queries CUDA shared memory at import (it falls back to a big-SMEM config without CUDA).
"""

from __future__ import annotations

REPO = "axolotl-ai-cloud__axolotl"
SOURCE_ROOT = "src"


def cases(load):
    import types

    import torch

    lib = "axolotl/integrations/kernels/libs"
    sm = f"{lib}/scattermoe_lora"
    pe = load(f"{sm}/parallel_experts.py")
    pll = load(f"{sm}/parallel_linear_lora.py")
    mxw = load(f"{sm}/mx_weights.py")
    lops = load(f"{sm}/kernels/lora_ops.py")
    ml = load(f"{sm}/multi_lora.py")
    dqg = load(f"{sm}/dequant_grouped.py")
    pool = load(f"{lib}/dsv4/gated_pool.py")
    dsv4_idx = load(f"{lib}/dsv4/indexer.py")
    mhc = load(f"{lib}/dsv4/mhc.py")
    glm_idx = load(f"{lib}/glm_dsa/indexer.py")

    dev, dt = "cuda", torch.bfloat16
    rank, scaling = 16, 2.0

    def routing(tokens, experts, k):
        idx = torch.randn(tokens, experts, device=dev).topk(k, dim=-1).indices
        sorted_experts, sorted_scattered = idx.flatten().sort()
        offsets = sorted_experts.bincount(minlength=experts).cumsum(-1)
        return idx, sorted_experts, sorted_scattered, offsets

    def leaf(*shape, scale=1.0, dtype=dt):
        return (torch.randn(*shape, device=dev, dtype=dtype) * scale).requires_grad_()

    def expert_weight(experts, k_dim, n_dim, trainable=False):
        # stored [E, out, in] like the module parameter; the op takes the [E, in, out] view
        w = torch.randn(experts, n_dim, k_dim, device=dev, dtype=dt) * 0.02
        if trainable:
            w.requires_grad_()
        return w.permute(0, 2, 1)

    def lora(experts, k_dim, n_dim):
        return leaf(experts * rank, k_dim, scale=0.01), leaf(n_dim, experts * rank, scale=0.01)

    def parallel_linear():
        tokens, hidden, ffn, experts, k = 2048, 4096, 14336, 8, 2
        _, se, ss, off = routing(tokens, experts, k)
        x = leaf(tokens, hidden)
        w = expert_weight(experts, hidden, ffn, trainable=True)
        y = pe.parallel_linear(x, w, k, se, ss, off, grouped_out=True)
        y.backward(torch.randn_like(y))

    def lora_split_mixtral():
        tokens, hidden, ffn, experts, k = 2048, 4096, 14336, 8, 2
        _, se, ss, off = routing(tokens, experts, k)
        x = leaf(tokens, hidden)
        w = expert_weight(experts, hidden, ffn)
        a, b = lora(experts, hidden, ffn)
        y = pll.parallel_linear_lora(x, w, k, se, ss, off, lora_A=a, lora_B=b, scaling=scaling, grouped_out=True)
        y.backward(torch.randn_like(y))

    def lora_fused_finegrained():
        tokens, hidden, n_dim, experts, k = 1024, 2048, 2816, 60, 4
        _, se, ss, off = routing(tokens, experts, k)
        x = leaf(tokens, hidden)
        w = expert_weight(experts, hidden, n_dim)
        a, b = lora(experts, hidden, n_dim)
        y = pll.parallel_linear_lora(
            x, w, k, se, ss, off, lora_A=a, lora_B=b, scaling=scaling,
            grouped_out=True, use_fused_dX=True, use_fused_gather=True,
        )
        y.backward(torch.randn_like(y))

    def lora_mxfp4():
        tokens, hidden, n_dim, experts, k = 1024, 2880, 5760, 32, 4
        _, se, ss, off = routing(tokens, experts, k)
        x = leaf(tokens, hidden)
        packed = torch.randint(0, 256, (experts, n_dim, hidden // 2), device=dev, dtype=torch.uint8)
        scales = torch.randint(119, 124, (experts, n_dim, hidden // 32), device=dev, dtype=torch.uint8)
        w = mxw.MXWeights(packed=packed, scales=scales, K=hidden, N=n_dim)
        a, b = lora(experts, hidden, n_dim)
        y = pll.parallel_linear_lora(x, w, k, se, ss, off, lora_A=a, lora_B=b, scaling=scaling, grouped_out=True)
        y.backward(torch.randn_like(y))

    def group_bwd_lora_split():
        tokens, hidden, n_dim, experts, k = 1024, 2048, 2816, 60, 4
        _, _, _, off = routing(tokens, experts, k)
        dy = torch.randn(tokens * k, n_dim, device=dev, dtype=dt)
        x = torch.randn(tokens * k, hidden, device=dev, dtype=dt)
        a = torch.randn(experts * rank, hidden, device=dev, dtype=dt) * 0.01
        b = torch.randn(n_dim, experts * rank, device=dev, dtype=dt) * 0.01
        lops.group_bwd_lora(dy, x, a, b, off, experts, scaling)

    def multi_lora():
        tokens, hidden, ffn, experts, k, tenants = 2048, 4096, 14336, 8, 2, 4
        idx, _, _, _ = routing(tokens, experts, k)
        tenant = torch.randint(0, tenants, (tokens,), device=dev).repeat_interleave(k)
        se, sc, ss, eoff, coff = ml.build_multilora_routing(idx.flatten(), tenant, experts, tenants)
        x = leaf(tokens, hidden)
        w = expert_weight(experts, hidden, ffn)
        a, b = lora(experts * tenants, hidden, ffn)
        y = ml.scatter2scatter_multilora(x, w, k, se, sc, ss, eoff, coff, a, b, scaling=scaling)
        y.backward(torch.randn_like(y))

    def grouped_dx_fp8():
        experts, rows, hidden, ffn, block_m = 8, 4096, 4096, 14336, 128
        grad = torch.randn(rows, hidden, device=dev, dtype=dt)
        w = (torch.randn(experts, hidden, ffn, device=dev, dtype=dt) * 0.05).to(torch.float8_e4m3fn)
        m_indices = torch.arange(experts, device=dev, dtype=torch.int32).repeat_interleave(rows // block_m // experts)
        dqg.grouped_dx_fp8(grad, w, m_indices, block_m=block_m)

    def dsv4_gated_pool():
        windows, width, head_dim = 1024, 8, 512
        kv = leaf(1, windows, width, head_dim)
        gate = leaf(1, windows, width, head_dim)
        out = pool.gated_softmax_pool(kv, gate)
        out.backward(torch.randn_like(out))

    def dsv4_indexer():
        seq, compressed, heads, head_dim = 4096, 1024, 64, 128
        q = torch.randn(1, seq, heads, head_dim, device=dev, dtype=dt)
        ck = torch.randn(1, compressed, head_dim, device=dev, dtype=dt)
        weights = torch.randn(1, seq, heads, device=dev) * heads**-0.5
        dsv4_idx.indexer_scores(q, ck, weights, head_dim**-0.5)

    def dsv4_hyperconnection():
        tokens, hc, hidden, iters = 2048, 4, 4096, 20
        mix = hc * (2 + hc)
        streams = leaf(1, tokens, hc, hidden)
        fn = leaf(mix, hc * hidden, scale=(hc * hidden) ** -0.5, dtype=torch.float32)
        base = leaf(mix, scale=0.1, dtype=torch.float32)
        scale = leaf(3, scale=0.1, dtype=torch.float32)
        norm = types.SimpleNamespace(eps=1e-6)
        post, comb, collapsed = mhc.hyperconnection_forward(streams, norm, fn, base, scale, hc, iters, 1e-6)
        outs = (post, comb, collapsed)
        torch.autograd.backward(outs, [torch.randn_like(t) for t in outs])

    def glm_indexer_topk():
        seq, heads, head_dim, topk = 4096, 32, 128, 2048
        q = torch.randn(1, seq, heads, head_dim, device=dev, dtype=dt)
        k = torch.randn(1, seq, head_dim, device=dev, dtype=dt)
        weights = torch.randn(1, seq, heads, device=dev) * heads**-0.5
        glm_idx.indexer_topk(q, k, weights, head_dim**-0.5, topk)

    return {
        "parallel_linear": parallel_linear,
        "lora_split_mixtral": lora_split_mixtral,
        "lora_fused_finegrained": lora_fused_finegrained,
        "lora_mxfp4": lora_mxfp4,
        "group_bwd_lora_split": group_bwd_lora_split,
        "multi_lora": multi_lora,
        "grouped_dx_fp8": grouped_dx_fp8,
        "dsv4_gated_pool": dsv4_gated_pool,
        "dsv4_indexer": dsv4_indexer,
        "dsv4_hyperconnection": dsv4_hyperconnection,
        "glm_indexer_topk": glm_indexer_topk,
    }
