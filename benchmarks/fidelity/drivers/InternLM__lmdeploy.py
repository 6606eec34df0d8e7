"""Drives lmdeploy's PyTorch-engine CUDA ops (lmdeploy/pytorch/kernels/cuda/) the way a
Llama/Mixtral-sized model calls them: 2048 tokens, hidden 4096, FFN 14336, 8 experts top-2 (gate
and up fused: 28672 rows), bf16/fp16 activations, int8 / fp8 e4m3 / AWQ int4 weights.

Cases and the autotuned kernels (lmdeploy/pytorch/kernels/cuda/FILE::NAME) each should launch:

- ``w8a8_linear_int8``: ``rms_norm_dynamic_quant`` (int8, not autotuned) then
  ``matmul_kernel_dynamic_quant`` 4096 -> 14336, fp16 out: w8a8_triton_kernels.py::_linear.
- ``w8a8_linear_add_fp8``: ``per_token_quant_int8`` to fp8 e4m3 (not autotuned) then
  ``matmul_kernel_dynamic_quant`` 4096 -> 4096 with a bf16 residual (an o_proj):
  w8a8_triton_kernels.py::_linear_add.
- ``blocked_fp8_gemm_tma``: ``quant_fp8`` (128-wide groups, transposed scales; not autotuned)
  then ``blocked_gemm_fp8`` 4096 -> 14336 with a K-major weight (``B.T`` contiguous), which on
  sm_90 with Triton >= 3.4 takes the host tensor-descriptor path:
  blocked_gemm_fp8.py::_gemm_fp8_tma_kernel.
- ``blocked_fp8_gemm``: the same op 14336 -> 4096 with a row-major [K, N] weight, so ``B.T`` is
  not contiguous and it takes the pointer path: blocked_gemm_fp8.py::_gemm_fp8_kernel.
- ``awq_linear``: ``awq_linear`` (AWQ int4, group 128, fp16) 4096 -> 14336:
  awq_kernels.py::awq_linear_kernel.
- ``fused_lora``: ``fused_lora`` over 4 sequences of 512 tokens, two adapters of rank 16 and 32,
  4096 -> 4096, bf16: fused_lora.py::_fused_lora_kernel.
- ``fused_moe_gate_up``: ``fused_moe_kernel_launcher`` for the gate/up projection of 8 experts,
  top-2 (expert-sorted routes built with torch), bf16: fused_moe.py::fused_moe_kernel (on sm_9x
  its prune keeps the first two configs). Called directly because ``fused_moe`` itself takes the
  non-autotuned compact kernels on sm_90 once an expert averages >= 32 routes, as here.
- ``fused_moe_w8a8``: ``fused_moe_w8a8`` (int8 weights and per-token int8 activations, both
  projections, silu-and-mul, int8 re-quantization, top-k reduce):
  w8a8_fused_moe.py::fused_moe_w8a8_kernel (two tunings: gate/up and down).
- ``noaux_tc_routing``: ``fused_noaux_tc_routing`` with DeepSeek-V3 routing (256 experts, 8
  groups, 4 groups kept, top-8; the op requires a multiple of 32 experts, so not 8) over 4096
  tokens: fused_noaux_tc.py::_fused_noaux_tc_kernel.

Import notes: kernels/cuda/utils.py (imported by blocked_gemm_fp8.py and, through activation.py,
by fused_moe.py and w8a8_fused_moe.py) calls ``supports_tma()`` at import, which asks Triton's
active driver and torch for the device capability, so ``cases`` fails on a machine without a GPU.
w8a8_triton_kernels.py and activation.py import ``packaging.version``, so the device needs the
``packaging`` distribution besides torch, triton and numpy. blocked_gemm_fp8.py imports
``get_logger`` from lmdeploy/utils.py, which imports ``transformers`` at module level; the driver
puts a one-function stand-in module (``get_logger`` = ``logging.getLogger``; the logger is never
used by the ops driven here) under ``lmdeploy.utils`` before loading it, unless the real module is
already imported.

Not driven: none of the autotuned sites listed for the repository is left out.
"""

from __future__ import annotations

REPO = "InternLM__lmdeploy"
SOURCE_ROOT = ""


def cases(load):
    import logging
    import sys
    import types

    import torch

    if "lmdeploy.utils" not in sys.modules:
        stand_in = types.ModuleType("lmdeploy.utils")
        stand_in.get_logger = logging.getLogger
        sys.modules["lmdeploy.utils"] = stand_in

    base = "lmdeploy/pytorch/kernels/cuda/"
    w8a8 = load(base + "w8a8_triton_kernels.py")
    fp8 = load(base + "blocked_gemm_fp8.py")
    awq = load(base + "awq_kernels.py")
    lora = load(base + "fused_lora.py")
    moe = load(base + "fused_moe.py")
    moe_w8a8 = load(base + "w8a8_fused_moe.py")
    noaux = load(base + "fused_noaux_tc.py")

    tokens, hidden, ffn, experts, top_k = 2048, 4096, 14336, 8, 2
    dev, bf16, fp16 = "cuda", torch.bfloat16, torch.float16
    e4m3 = torch.float8_e4m3fn

    def routing():
        logits = torch.randn(tokens, experts, device=dev)
        weights, ids = logits.softmax(-1).topk(top_k, dim=-1)
        return weights, ids

    def w8a8_linear_int8():
        x = torch.randn(tokens, hidden, device=dev, dtype=fp16)
        norm_w = torch.rand(hidden, device=dev, dtype=fp16) + 0.5
        xq, x_scale = w8a8.rms_norm_dynamic_quant(x, norm_w, 1e-5, quant_dtype=torch.int8)
        wq, w_scale = w8a8.per_channel_quant(torch.randn(ffn, hidden, device=dev, dtype=fp16), torch.int8)
        w8a8.matmul_kernel_dynamic_quant(xq, wq, x_scale, w_scale, output_dtype=fp16)

    def w8a8_linear_add_fp8():
        x = torch.randn(tokens, hidden, device=dev, dtype=bf16)
        xq, x_scale = w8a8.per_token_quant_int8(x, 1e-7, quant_dtype=e4m3)
        wq, w_scale = w8a8.per_channel_quant(torch.randn(hidden, hidden, device=dev, dtype=bf16), e4m3)
        residual = torch.randn(tokens, hidden, device=dev, dtype=bf16)
        w8a8.matmul_kernel_dynamic_quant(xq, wq, x_scale, w_scale, residual=residual, output_dtype=bf16)

    def blocked_weight(k, n):
        w = torch.randn(n, k, device=dev).to(e4m3)  # [N, K] row-major
        scale = torch.rand(k // 128, n // 128, device=dev) * 1e-3 + 1e-4
        return w, scale

    def blocked_fp8_gemm_tma():
        x = torch.randn(tokens, hidden, device=dev, dtype=bf16)
        xq, x_scale = fp8.quant_fp8(x, 128, dtype=e4m3, trans_scale=True)
        w, w_scale = blocked_weight(hidden, ffn)
        fp8.blocked_gemm_fp8(xq, x_scale, w.t(), w_scale, out_dtype=bf16)

    def blocked_fp8_gemm():
        x = torch.randn(tokens, ffn, device=dev, dtype=bf16)
        xq, x_scale = fp8.quant_fp8(x, 128, dtype=e4m3)
        w, w_scale = blocked_weight(ffn, hidden)
        fp8.blocked_gemm_fp8(xq, x_scale, w.t().contiguous(), w_scale, out_dtype=bf16)

    def awq_linear():
        group = 128
        x = torch.randn(tokens, hidden, device=dev, dtype=fp16)
        qweight = torch.randint(0, 256, (hidden, ffn // 2), device=dev, dtype=torch.uint8).view(torch.int32)
        scales = (torch.rand(hidden // group, ffn, device=dev) * 0.01 + 1e-3).to(fp16)
        qzeros = torch.randint(0, 256, (hidden // group, ffn // 2), device=dev, dtype=torch.uint8)
        awq.awq_linear(x, qweight, scales, qzeros.view(torch.int32))

    def fused_lora():
        seq_len, num_seqs = 512, 4
        ranks = torch.tensor([16, 32], device=dev)
        x = torch.randn(seq_len * num_seqs, hidden, device=dev, dtype=bf16)
        lora_a = torch.randn(int(ranks.sum()), hidden, device=dev, dtype=bf16) / hidden**0.5
        lora_b = torch.randn(int(ranks.sum()), hidden, device=dev, dtype=bf16) / 32**0.5
        seq_lens = torch.full((num_seqs,), seq_len, device=dev, dtype=torch.int64)
        lora.fused_lora(
            x, lora_a, lora_b,
            scaling=torch.tensor([2.0, 0.5], device=dev),
            rank_start=ranks.cumsum(0) - ranks,
            ranks=ranks,
            seq_start=seq_lens.cumsum(0) - seq_lens,
            seq_lens=seq_lens,
            adapter_ids=torch.arange(num_seqs, device=dev) % 2,
            max_rank=32,
            max_seqlen=seq_len,
        )

    def fused_moe_gate_up():
        _, ids = routing()
        flat = ids.flatten()
        sorted_idx = flat.argsort(stable=True)
        counts = flat.bincount(minlength=experts)
        exp_end = counts.cumsum(0)
        exp_start = exp_end - counts
        x = torch.randn(tokens, hidden, device=dev, dtype=bf16)
        w1 = torch.randn(experts, 2 * ffn, hidden, device=dev, dtype=bf16) / hidden**0.5
        out = torch.empty(tokens, top_k, 2 * ffn, device=dev, dtype=bf16)
        moe.fused_moe_kernel_launcher(x, w1, out, sorted_idx, exp_start, exp_end, top_k=top_k,
                                      num_tokens=tokens, reindex_a=True, reindex_c=False)

    def fused_moe_w8a8():
        weights, ids = routing()
        x = torch.randn(tokens, hidden, device=dev, dtype=bf16)
        xq, x_scale = w8a8.per_token_quant_int8(x, 1e-7, quant_dtype=torch.int8)
        w1 = torch.randint(-127, 128, (experts, 2 * ffn, hidden), device=dev, dtype=torch.int8)
        w2 = torch.randint(-127, 128, (experts, hidden, ffn), device=dev, dtype=torch.int8)
        w1_scale = torch.rand(experts, 2 * ffn, 1, device=dev) * 1e-3 + 1e-4
        w2_scale = torch.rand(experts, hidden, 1, device=dev) * 1e-3 + 1e-4
        moe_w8a8.fused_moe_w8a8(xq, x_scale, w1, w1_scale, w2, w2_scale, weights, ids, top_k,
                                out_dtype=bf16, quant_dtype=torch.int8)

    def noaux_tc_routing():
        logits = torch.randn(4096, 256, device=dev, dtype=bf16)
        bias = torch.randn(256, device=dev) * 0.1
        noaux.fused_noaux_tc_routing(logits, bias, num_experts=256, n_group=8, topk_group=4, top_k=8)

    return {
        "w8a8_linear_int8": w8a8_linear_int8,
        "w8a8_linear_add_fp8": w8a8_linear_add_fp8,
        "blocked_fp8_gemm_tma": blocked_fp8_gemm_tma,
        "blocked_fp8_gemm": blocked_fp8_gemm,
        "awq_linear": awq_linear,
        "fused_lora": fused_lora,
        "fused_moe_gate_up": fused_moe_gate_up,
        "fused_moe_w8a8": fused_moe_w8a8,
        "noaux_tc_routing": noaux_tc_routing,
    }
