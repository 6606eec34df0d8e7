"""Triton kernels for sparse MLA decode (DeepSeek-V3.2 style "DSA" attention).

Each decode query attends to ``topk`` tokens picked by an indexer. The KV cache is the MLA
latent cache: one row of ``D_LATENT`` (512) compressed-KV values plus ``D_ROPE`` (64) rotary
key values per token, shared by every head. With the up-projections absorbed into q and the
output projection, a head's key is the whole 576-wide row and its value is the first 512
columns of that same row, so one gathered tile serves both ``QK^T`` and ``PV``.

The cache is fp8 (e4m3) with per-tensor ``k_scale`` / ``v_scale``, as serving engines store it
(or plain bf16). With fp8 each gathered tile is dequantized to bf16 twice (K side, V side)
before the MMAs, so every step holds the staged fp8 tile plus two bf16 copies in shared memory.

The decode is split-K: ``_mma_sparse_decode_split_kernel`` handles ``BLOCK_H`` heads x one
slice of the top-k list per program and writes an fp32 partial output plus its log-sum-exp;
``_sparse_decode_combine_kernel`` merges the slices.
"""

import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_T": 16}, num_warps=4, num_stages=2),
        triton.Config({"BLOCK_T": 32}, num_warps=4, num_stages=2),
        triton.Config({"BLOCK_T": 32}, num_warps=8, num_stages=2),
    ],
    key=["topk_rounded"],
)
@triton.jit
def _mma_sparse_decode_split_kernel(
    Q,  # [B, H, D_LATENT + D_ROPE] bf16 (or fp16)
    KV,  # [num_slots, D_LATENT + D_ROPE] fp8 (e4m3) or Q's dtype; latent cache shared by all heads
    Idx,  # [B, topk] int32 slot indices; -1 marks an unused entry
    PartO,  # [B, num_splits, H, D_LATENT] fp32 partial outputs
    PartLse,  # [B, num_splits, H] fp32 partial log-sum-exp (natural log)
    sm_scale,
    k_scale,  # per-tensor dequant scales of an fp8 cache (unused otherwise)
    v_scale,
    stride_qb,
    stride_qh,
    stride_kv,
    stride_ib,
    stride_ob,
    stride_os,
    stride_oh,
    stride_lb,
    stride_ls,
    num_heads,
    topk,
    topk_rounded,  # topk rounded up to a multiple of every BLOCK_T: few distinct autotune keys
    tokens_per_split,
    BLOCK_H: tl.constexpr,
    BLOCK_T: tl.constexpr,
    D_LATENT: tl.constexpr,
    D_ROPE: tl.constexpr,
):
    pid_b = tl.program_id(0)
    pid_h = tl.program_id(1)
    pid_s = tl.program_id(2)

    offs_h = pid_h * BLOCK_H + tl.arange(0, BLOCK_H)
    mask_h = offs_h < num_heads
    offs_c = tl.arange(0, D_LATENT)
    offs_r = tl.arange(0, D_ROPE)

    # The query block stays resident for the whole slice: latent and rope halves kept apart so
    # each feeds its own MMA with a power-of-two K.
    q_base = Q + pid_b * stride_qb + offs_h[:, None] * stride_qh
    q_c = tl.load(q_base + offs_c[None, :], mask=mask_h[:, None], other=0.0)
    q_r = tl.load(q_base + D_LATENT + offs_r[None, :], mask=mask_h[:, None], other=0.0)

    # Work in base 2 so the softmax uses exp2.
    qk_scale = sm_scale * 1.4426950408889634

    m_i = tl.full([BLOCK_H], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_H], dtype=tl.float32)
    acc = tl.zeros([BLOCK_H, D_LATENT], dtype=tl.float32)

    t_start = pid_s * tokens_per_split
    t_end = tl.minimum(t_start + tokens_per_split, topk_rounded)
    idx_base = Idx + pid_b * stride_ib

    # Entries past topk (the rounding) or past this slice are masked like -1 entries; the
    # slice bound also keeps a BLOCK_T that does not divide tokens_per_split correct.
    t_valid_end = tl.minimum(t_end, topk)

    # The indices of step i+1 are fetched during step i. The gathers then depend only on a
    # loop-carried value, so Triton's software pipeliner issues them early (cp.async into
    # shared memory, num_stages - 1 buffers deep) instead of leaving them behind a dependent
    # index load every step.
    offs_t = t_start + tl.arange(0, BLOCK_T)
    slot_next = tl.load(idx_base + offs_t, mask=offs_t < t_valid_end, other=-1)
    for t0 in range(t_start, t_end, BLOCK_T):
        slot = slot_next
        offs_n = t0 + BLOCK_T + tl.arange(0, BLOCK_T)
        slot_next = tl.load(idx_base + offs_n, mask=offs_n < t_valid_end, other=-1)

        valid = slot >= 0
        row = KV + slot.to(tl.int64)[:, None] * stride_kv
        kv_c = tl.load(row + offs_c[None, :], mask=valid[:, None], other=0.0)  # [BLOCK_T, D_LATENT]
        kv_r = tl.load(row + D_LATENT + offs_r[None, :], mask=valid[:, None], other=0.0)
        if KV.dtype.element_ty.is_fp8():
            # One gathered tile serves as K and as V; each side gets its own scale.
            k_c = (kv_c.to(tl.float32) * k_scale).to(Q.dtype.element_ty)
            k_r = (kv_r.to(tl.float32) * k_scale).to(Q.dtype.element_ty)
            v = (kv_c.to(tl.float32) * v_scale).to(Q.dtype.element_ty)
        else:
            k_c = kv_c
            k_r = kv_r
            v = kv_c

        qk = tl.dot(q_c, tl.trans(k_c))
        qk = tl.dot(q_r, tl.trans(k_r), acc=qk)
        qk = tl.where(valid[None, :], qk * qk_scale, float("-inf"))

        m_new = tl.maximum(m_i, tl.max(qk, axis=1))
        # A head that has seen only masked tokens keeps m = -inf; shift by 0 so exp2 gives 0, not NaN.
        m_shift = tl.where(m_new == float("-inf"), 0.0, m_new)
        p = tl.math.exp2(qk - m_shift[:, None])
        alpha = tl.math.exp2(m_i - m_shift)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None]
        acc = tl.dot(p.to(v.dtype), v, acc=acc)
        m_i = m_new

    # An empty slice (every index masked) writes zeros and lse = -inf so the combine ignores it.
    has_mass = l_i > 0.0
    l_safe = tl.where(has_mass, l_i, 1.0)
    out = acc / l_safe[:, None]
    lse = tl.where(has_mass, (m_i + tl.math.log2(l_safe)) * 0.6931471805599453, float("-inf"))

    o_ptrs = PartO + pid_b * stride_ob + pid_s * stride_os + offs_h[:, None] * stride_oh + offs_c[None, :]
    tl.store(o_ptrs, out, mask=mask_h[:, None])
    tl.store(PartLse + pid_b * stride_lb + pid_s * stride_ls + offs_h, lse, mask=mask_h)


@triton.jit
def _sparse_decode_combine_kernel(
    PartO,  # [B, num_splits, H, D_LATENT] fp32
    PartLse,  # [B, num_splits, H] fp32
    Out,  # [B, H, D_LATENT] in q's dtype
    stride_ob,
    stride_os,
    stride_oh,
    stride_lb,
    stride_ls,
    stride_outb,
    stride_outh,
    num_splits,
    BLOCK_S: tl.constexpr,
    D_LATENT: tl.constexpr,
):
    pid_b = tl.program_id(0)
    pid_h = tl.program_id(1)
    offs_s = tl.arange(0, BLOCK_S)
    offs_c = tl.arange(0, D_LATENT)
    mask_s = offs_s < num_splits

    lse = tl.load(PartLse + pid_b * stride_lb + offs_s * stride_ls + pid_h, mask=mask_s, other=float("-inf"))
    lse_max = tl.max(lse, axis=0)
    # No valid token at all (every index was -1): the output is defined as zeros.
    lse_max = tl.where(lse_max == float("-inf"), 0.0, lse_max)
    w = tl.exp(lse - lse_max)
    w_sum = tl.sum(w, axis=0)
    w = w / tl.where(w_sum > 0.0, w_sum, 1.0)

    o = tl.load(
        PartO + pid_b * stride_ob + offs_s[:, None] * stride_os + pid_h * stride_oh + offs_c[None, :],
        mask=mask_s[:, None],
        other=0.0,
    )
    out = tl.sum(o * w[:, None], axis=0)
    tl.store(Out + pid_b * stride_outb + pid_h * stride_outh + offs_c, out.to(Out.dtype.element_ty))
