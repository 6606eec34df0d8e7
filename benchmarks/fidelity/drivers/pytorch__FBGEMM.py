"""Drives FBGEMM's Triton ops (experimental gemm, gen_ai MoE, simplicial attention, IKBO) through
their public Python wrappers with LLM-sized inputs on one sm_90 GPU.

Shapes: dense fp8 GEMMs are Llama-3-8B FFN projections over 2048 tokens (up: M=2048, N=14336,
K=4096; down: M=2048, N=4096, K=14336); quantize/dequantize ops work on 4096 tokens x hidden
4096 bf16 activations; the MoE ops use a Llama-4-Scout-like layer (hidden 5120, expert FFN 8192,
16 experts, top-1 routing, 4096 routed tokens); simplicial attention uses 32 query heads of
dim 128 over 2048 tokens; IKBO attention uses its benchmark's recsys layout (fp16, 2 heads of
dim 128, 64 seeds per candidate, 64 candidates per user, user sequence 2048).

Cases and the autotuned kernels (file::kernel) each one launches:

- matmul_fp8_row            fp8_gemm.py::_kernel_matmul_fp8_row  (fast accum, tma_persistent=False)
- matmul_fp8_row_no_fast_acc fp8_gemm.py::_kernel_matmul_fp8_row_no_fast_acc
- matmul_fp8_row_imprecise_acc fp8_gemm.py::_kernel_matmul_fp8_row_imprecise_acc  (down-proj shape)
- matmul_fp8_block_fastacc  fp8_gemm.py::_kernel_matmul_fp8_block_fastacc  (256x256 scale blocks)
- matmul_fp8_block_slowacc  fp8_gemm.py::_kernel_matmul_fp8_block_slowacc
- quantize_fp8_row          fp8_gemm.py::_kernel_quantize_fp8_row
- quantize_fp8_packed_row   fp8_gemm.py::_kernel_quantize_fp8_packed_row
- quantize_fp8_group        fp8_gemm.py::_kernel_quantize_fp8_group  (group 128)
- scale_fp8_row             fp8_gemm.py::_kernel_scale_fp8_row  (N=8192: the kernel loads w_scale
                            unmasked, so N is a multiple of every BLOCK_SIZE)
- dequantize_fp8_row        fp8_gemm.py::_kernel_dequantize_fp8_row
- dequantize_fp8_packed_row fp8_gemm.py::_kernel_dequantize_fp8_packed_row
- grouped_gemm              grouped_gemm.py::_fbgemm_grouped_gemm  (bf16, device-side TMA loads)
- grouped_gemm_fp8_rowwise  grouped_gemm.py::_fbgemm_grouped_gemm_fp8_rowwise
- gather_scale_quant_dense_tokens
                            gen_ai/moe/gather_scatter.py::_fbgemm_gather_scale_fp8_rowwise_quant_dense_tokens
- scatter_add_padded_tokens gen_ai/moe/gather_scatter.py::_fbgemm_scatter_add_padded_tokens  (EP=4)
- combine_shuffling         gen_ai/moe/shuffling.py::_fbgemm_combine_or_split_shuffling  (COMBINE=True)
- split_shuffling           gen_ai/moe/shuffling.py::_fbgemm_combine_or_split_shuffling  (COMBINE=False)
- simplicial_fwd            simplicial/ops/triton/fwd.py::_gqa_pack_fwd_kernel  (w1=32, w2=256)
- simplicial_bwd            simplicial/ops/triton/fwd.py::_gqa_pack_fwd_kernel (to get o and the
                            log-sum-exp), then simplicial/ops/triton/bwd.py::simplicial_bwd_kv1_kernel
                            and ::simplicial_bwd_kv2q_kernel (two passes); triton_bwd asserts
                            w2 == 32, wants k/v with one head per query head, and its
                            (untuned) bwd_pre kernel offsets d by dO's batch stride, so B=1
- ikbo_flash_attn           ikbo/ops/triton_ikbo_fa.py::_attn_fwd_tma  (host TensorDescriptors)

Paths are relative to fbgemm_gpu/experimental/. The simplicial kernels have one config unless
SIMPLICIAL_AUTOTUNE=1 is set before import. The block-wise GEMMs' prune (matmul_perf_model) reads
the SM clock through nvidia-smi (or pynvml). Importing these modules needs no GPU and no FBGEMM
C++ extension.

Skipped, and why:
- fp8_gemm.py::_kernel_matmul_fp8_row_tma_persistent (the matmul_fp8_row default,
  tma_persistent=True) and ::_kernel_matmul_fp8_row_tma_persistent_ws_cooperative use
  tl._experimental_descriptor_load/store and tl.async_task, absent from stock Triton 3.6, so the
  row-wise cases pass tma_persistent=False.
- fp8_gemm.py::_kernel_matmul_fp8_row_non_persistent (no_use_persistent=True) is AMD-only: its
  configs carry waves_per_eu/matrix_instr_nonkdim/kpack, which the CUDA backend rejects.
- grouped_gemm.py::_fbgemm_grouped_gemm_ws and ::_fbgemm_grouped_gemm_fp8_rowwise_ws need
  warp specialization (tl.async_task); the wrapper falls back to the non-WS kernels on stock
  Triton, so the cases pass _use_warp_specialization=False.
- ikbo triton_ikbo_lce.py imports tlx_ikbo_lce (triton.language.extra.tlx); every tlx_* file and
  the TLX simplicial/proton kernels need the TLX Triton fork.
"""

from __future__ import annotations

REPO = "pytorch__FBGEMM"
SOURCE_ROOT = ""


def cases(load):
    import torch

    fp8_gemm = load("fbgemm_gpu/experimental/gemm/triton_gemm/fp8_gemm.py")
    grouped = load("fbgemm_gpu/experimental/gemm/triton_gemm/grouped_gemm.py")
    gather_scatter = load("fbgemm_gpu/experimental/gen_ai/gen_ai/moe/gather_scatter.py")
    shuffling = load("fbgemm_gpu/experimental/gen_ai/gen_ai/moe/shuffling.py")
    simplicial_fwd = load(
        "fbgemm_gpu/experimental/simplicial_attention/simplicial/ops/triton/fwd.py"
    )
    simplicial_bwd = load(
        "fbgemm_gpu/experimental/simplicial_attention/simplicial/ops/triton/bwd.py"
    )
    ikbo_fa = load("fbgemm_gpu/experimental/ikbo/ikbo/ops/triton_ikbo_fa.py")

    dev, bf16, fp8 = "cuda", torch.bfloat16, torch.float8_e4m3fn
    fp8_max = torch.finfo(fp8).max

    # Dense (Llama-3-8B FFN) sizes.
    tokens, hidden, ffn = 2048, 4096, 14336
    # MoE (Llama-4-Scout-like) sizes.
    moe_tokens, moe_hidden, moe_ffn, experts = 4096, 5120, 8192, 16

    def rowwise_fp8(x):
        # x ~= q * scale[:, None]: the reciprocal row-wise scale FBGEMM's ops take.
        xf = x.float()
        scale = xf.abs().amax(dim=-1).clamp(min=1e-12) / fp8_max
        q = (xf / scale[:, None]).to(fp8)
        return q, scale.contiguous()

    def dense_fp8(m, n, k):
        x = torch.randn(m, k, device=dev, dtype=bf16)
        w = torch.randn(n, k, device=dev, dtype=bf16) / k**0.5
        xq, xs = rowwise_fp8(x)
        wq, ws = rowwise_fp8(w)
        return xq, wq, xs, ws

    def matmul_fp8_row():
        xq, wq, xs, ws = dense_fp8(tokens, ffn, hidden)
        fp8_gemm.matmul_fp8_row(xq, wq, xs, ws, tma_persistent=False)

    def matmul_fp8_row_no_fast_acc():
        xq, wq, xs, ws = dense_fp8(tokens, ffn, hidden)
        fp8_gemm.matmul_fp8_row(
            xq, wq, xs, ws, fp8_fast_accum=False, tma_persistent=False
        )

    def matmul_fp8_row_imprecise_acc():
        xq, wq, xs, ws = dense_fp8(tokens, hidden, ffn)
        fp8_gemm.matmul_fp8_row(
            xq, wq, xs, ws, imprecise_acc=True, tma_persistent=False
        )

    def block_fp8(m, n, k, blk=256):
        a = torch.randn(m, k, device=dev).to(fp8)
        b = torch.randn(n, k, device=dev).to(fp8)
        a_scale = torch.rand(-(-m // blk), -(-k // blk), device=dev) * 0.01 + 0.005
        b_scale = torch.rand(-(-n // blk), -(-k // blk), device=dev) * 0.01 + 0.005
        return a, b, a_scale, b_scale

    def matmul_fp8_block_fastacc():
        a, b, a_scale, b_scale = block_fp8(tokens, ffn, hidden)
        fp8_gemm.matmul_fp8_block(a, b, a_scale, b_scale, 256, 256, 256, fp8_fast_accum=True)

    def matmul_fp8_block_slowacc():
        a, b, a_scale, b_scale = block_fp8(tokens, ffn, hidden)
        fp8_gemm.matmul_fp8_block(a, b, a_scale, b_scale, 256, 256, 256, fp8_fast_accum=False)

    def activations():
        return torch.randn(2 * tokens, hidden, device=dev, dtype=bf16)

    def quantize_fp8_row():
        fp8_gemm.quantize_fp8_row(activations())

    def quantize_fp8_packed_row():
        fp8_gemm.quantize_fp8_packed_row(activations())

    def quantize_fp8_group():
        fp8_gemm.quantize_fp8_group(activations(), group_size=128)

    def scale_fp8_row():
        n = 8192
        acc = torch.randn(tokens, n, device=dev, dtype=bf16)
        x_scale = torch.rand(tokens, device=dev) * 0.01 + 0.005
        w_scale = torch.rand(n, device=dev) * 0.01 + 0.005
        fp8_gemm.scale_fp8_row(acc, x_scale, w_scale)

    def dequantize_fp8_row():
        xq, xs = rowwise_fp8(activations())
        fp8_gemm.dequantize_fp8_row(xq, xs)

    def dequantize_fp8_packed_row():
        xq, xs = rowwise_fp8(activations())
        rows, k = xq.shape
        # Each row is K fp8 values followed by its fp32 scale's 4 bytes.
        packed = torch.empty(rows, k + 4, device=dev, dtype=torch.uint8)
        packed[:, :k] = xq.view(torch.uint8)
        packed[:, k:] = xs.view(rows, 1).view(torch.uint8)
        fp8_gemm.dequantize_fp8_packed_row(packed.view(fp8))

    def expert_sizes(rows, groups):
        choice = torch.randint(0, groups, (rows,), device=dev)
        return choice.bincount(minlength=groups).to(torch.int32)

    def grouped_gemm():
        m_sizes = expert_sizes(moe_tokens, experts)
        x = torch.randn(moe_tokens, moe_hidden, device=dev, dtype=bf16)
        w = torch.randn(experts * moe_ffn, moe_hidden, device=dev, dtype=bf16) / moe_hidden**0.5
        grouped.grouped_gemm(x, w, m_sizes, _use_warp_specialization=False)

    def grouped_gemm_fp8_rowwise():
        m_sizes = expert_sizes(moe_tokens, experts)
        x = torch.randn(moe_tokens, moe_hidden, device=dev, dtype=bf16)
        w = torch.randn(experts * moe_ffn, moe_hidden, device=dev, dtype=bf16) / moe_hidden**0.5
        xq, xs = rowwise_fp8(x)
        wq, ws = rowwise_fp8(w)
        grouped.grouped_gemm_fp8_rowwise(
            xq, wq, m_sizes, xs, ws, _use_warp_specialization=False
        )

    def gather_scale_quant_dense_tokens():
        x = torch.randn(moe_tokens, moe_hidden, device=dev, dtype=bf16)
        logits = torch.randn(moe_tokens, experts, device=dev)
        scores = logits.sigmoid().to(bf16).contiguous()  # [T, E]
        top1 = logits.argmax(dim=-1)
        expert_indices, token_indices = top1.sort()
        gather_scatter.gather_scale_quant_dense_tokens(
            x,
            token_indices.to(torch.int32).contiguous(),
            expert_indices.contiguous(),
            scores,
        )

    def scatter_add_padded_tokens():
        ep = 4
        in_tokens = torch.randn(ep, moe_tokens, moe_hidden, device=dev, dtype=bf16)
        out_tokens = torch.randn(moe_tokens, moe_hidden, device=dev, dtype=bf16)
        token_counts = expert_sizes(moe_tokens, experts)
        token_indices = torch.randperm(moe_tokens, device=dev).to(torch.int32)
        gather_scatter.scatter_add_padded_tokens(
            in_tokens, token_counts, token_indices, out_tokens
        )

    def shuffle_inputs(ranks=8):
        # Each rank sends moe_tokens / ranks tokens, laid out rank-major, to `experts` local
        # experts; token_counts[r, e] is how many of rank r's tokens go to expert e.
        per_rank = moe_tokens // ranks
        tokens_ = torch.randn(moe_tokens, moe_hidden, device=dev, dtype=bf16)
        choice = torch.randint(0, experts, (ranks, per_rank), device=dev)
        choice += experts * torch.arange(ranks, device=dev)[:, None]
        counts = choice.flatten().bincount(minlength=ranks * experts)
        return tokens_, counts.view(ranks, experts).to(torch.int32).contiguous()

    def combine_shuffling():
        tokens_, counts = shuffle_inputs()
        shuffling.combine_shuffling(tokens_, counts)

    def split_shuffling():
        tokens_, counts = shuffle_inputs()
        shuffling.split_shuffling(tokens_, counts)

    heads, head_dim, seq = 32, 128, 2048

    def simplicial_qkv(batch, kv_heads):
        q = torch.randn(batch, seq, heads, head_dim, device=dev, dtype=bf16) * 0.5
        kv = [
            torch.randn(batch, seq, 1, head_dim, device=dev, dtype=bf16)
            .mul_(0.5)
            .expand(batch, seq, kv_heads, head_dim)
            .contiguous()
            for _ in range(4)
        ]
        return q, kv

    def simplicial_fwd_case():
        q, (k1, k2, v1, v2) = simplicial_qkv(2, 1)
        simplicial_fwd.triton_fwd(q, k1, k2, v1, v2, w1=32, w2=256)

    def simplicial_bwd_case():
        # Forward on the packed (one kv head) layout, backward on the same k/v repeated per
        # query head, the layout triton_bwd indexes.
        q, (k1, k2, v1, v2) = simplicial_qkv(1, heads)
        w1, w2 = 64, 32
        o, m = simplicial_fwd.triton_fwd(
            q, k1[:, :, :1], k2[:, :, :1], v1[:, :, :1], v2[:, :, :1], w1=w1, w2=w2
        )
        do = torch.randn_like(o)
        simplicial_bwd.triton_bwd(q, k1, k2, v1, v2, o, do, m, w1, w2)

    def ikbo_flash_attn():
        cands, seeds, cands_per_user, h, d, user_seq = 1024, 64, 64, 2, 128, 2048
        users = cands // cands_per_user
        f16 = torch.float16
        query = torch.randn(cands * seeds, h, d, device=dev, dtype=f16)
        key = torch.randn(users * user_seq, h, d, device=dev, dtype=f16)
        value = torch.randn(users * user_seq, h, d, device=dev, dtype=f16)
        cand_to_user = torch.arange(users, device=dev, dtype=torch.int32).repeat_interleave(
            cands_per_user
        )
        ikbo_fa.triton_flash_attn_ikbo_tma(query, key, value, cand_to_user, seeds, user_seq)

    return {
        "matmul_fp8_row": matmul_fp8_row,
        "matmul_fp8_row_no_fast_acc": matmul_fp8_row_no_fast_acc,
        "matmul_fp8_row_imprecise_acc": matmul_fp8_row_imprecise_acc,
        "matmul_fp8_block_fastacc": matmul_fp8_block_fastacc,
        "matmul_fp8_block_slowacc": matmul_fp8_block_slowacc,
        "quantize_fp8_row": quantize_fp8_row,
        "quantize_fp8_packed_row": quantize_fp8_packed_row,
        "quantize_fp8_group": quantize_fp8_group,
        "scale_fp8_row": scale_fp8_row,
        "dequantize_fp8_row": dequantize_fp8_row,
        "dequantize_fp8_packed_row": dequantize_fp8_packed_row,
        "grouped_gemm": grouped_gemm,
        "grouped_gemm_fp8_rowwise": grouped_gemm_fp8_rowwise,
        "gather_scale_quant_dense_tokens": gather_scale_quant_dense_tokens,
        "scatter_add_padded_tokens": scatter_add_padded_tokens,
        "combine_shuffling": combine_shuffling,
        "split_shuffling": split_shuffling,
        "simplicial_fwd": simplicial_fwd_case,
        "simplicial_bwd": simplicial_bwd_case,
        "ikbo_flash_attn": ikbo_flash_attn,
    }
