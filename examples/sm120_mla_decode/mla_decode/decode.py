"""Sparse MLA decode: the host side that sizes and launches the split-K kernels.

``sparse_mla_decode`` is what the attention backend calls once per decode step and layer.
"""

from __future__ import annotations

import functools

import torch
import triton

from .kernels import _mma_sparse_decode_split_kernel, _sparse_decode_combine_kernel

_D_LATENT = 512
_D_ROPE = 64
_D_QK = _D_LATENT + _D_ROPE

# Heads per program. Every head reads the same latent rows, so a block of heads turns the
# per-token work into a real MMA (M = BLOCK_H) and reads each gathered row once per block.
_MMA_BLOCK_H = 16

# topk is rounded up to a multiple of this before it becomes the autotune key and the split
# size unit. It must stay a multiple of every BLOCK_T in the kernel's configs, so every slice
# is a whole number of steps.
_TOPK_ALIGN = 64

# A slice shorter than this spends more on the combine than it saves in parallelism.
_MIN_TOKENS_PER_SPLIT = 64

_ACT_DTYPES = (torch.bfloat16, torch.float16)


@functools.lru_cache(maxsize=None)
def _num_sms(device: torch.device) -> int:
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    # CPU tensors only reach here under TRITON_INTERPRET=1 (tests); any fixed value will do.
    return 132


def _split_plan(batch: int, head_blocks: int, topk_rounded: int, num_sms: int) -> tuple[int, int]:
    """Choose (num_splits, tokens_per_split) so the grid covers about two waves of the GPU.

    Small batches need many slices of the top-k list to keep every SM busy; large batches
    already have ``batch * head_blocks`` programs and keep one slice.
    """
    max_splits = max(1, topk_rounded // _MIN_TOKENS_PER_SPLIT)
    wanted = triton.cdiv(2 * num_sms, batch * head_blocks)
    num_splits = min(max(wanted, 1), max_splits)
    tokens_per_split = triton.cdiv(triton.cdiv(topk_rounded, num_splits), _TOPK_ALIGN) * _TOPK_ALIGN
    # Rounding each slice up can leave the last one empty; drop it.
    num_splits = triton.cdiv(topk_rounded, tokens_per_split)
    return num_splits, tokens_per_split


def sparse_mla_decode(
    q: torch.Tensor,
    kv_cache: torch.Tensor,
    topk_indices: torch.Tensor,
    sm_scale: float,
    *,
    k_scale: float = 1.0,
    v_scale: float = 1.0,
    num_splits: int | None = None,
) -> torch.Tensor:
    """Attention of one decode token per request over its top-k cache slots.

    Args:
        q: ``[B, H, 576]`` query (bf16; fp16 also works), up-projection absorbed: 512 latent +
            64 rope dims.
        kv_cache: the latent cache, ``[num_slots, 576]`` or paged ``[num_pages, page_size, 576]``
            / ``[num_pages, page_size, 1, 576]``; q's dtype, or fp8 e4m3 dequantized with
            ``k_scale`` (K side) and ``v_scale`` (V side).
        topk_indices: ``[B, topk]`` int32 flat slot ids (``page * page_size + offset``);
            ``-1`` marks an unused entry.
        sm_scale: softmax scale.
        num_splits: force the number of top-k slices (default: sized to the GPU).

    Returns:
        ``[B, H, 512]`` attention output in the latent space, in q's dtype.
    """
    assert q.dim() == 3 and q.shape[-1] == _D_QK, f"q must be [B, H, {_D_QK}], got {tuple(q.shape)}"
    assert q.dtype in _ACT_DTYPES, f"q must be bf16 or fp16, got {q.dtype}"
    assert q.stride(-1) == 1, "q's last dim must be contiguous"
    assert kv_cache.shape[-1] == _D_QK, f"kv_cache rows must be {_D_QK} wide, got {kv_cache.shape[-1]}"
    assert kv_cache.dtype in (q.dtype, torch.float8_e4m3fn), (
        f"kv_cache must be {q.dtype} or float8_e4m3fn, got {kv_cache.dtype}"
    )
    assert kv_cache.is_contiguous(), "kv_cache must be contiguous"
    assert topk_indices.dim() == 2 and topk_indices.dtype == torch.int32, "topk_indices must be [B, topk] int32"
    assert topk_indices.stride(-1) == 1, "topk_indices' last dim must be contiguous"
    assert q.device == kv_cache.device == topk_indices.device, "all inputs must be on one device"

    B, H = q.shape[:2]
    topk = topk_indices.shape[1]
    assert topk_indices.shape[0] == B, f"topk_indices has {topk_indices.shape[0]} rows for batch {B}"
    kv = kv_cache.view(-1, _D_QK)

    block_h = min(_MMA_BLOCK_H, H)
    assert block_h & (block_h - 1) == 0, f"H={H} below {_MMA_BLOCK_H} must be a power of two"
    head_blocks = triton.cdiv(H, block_h)
    topk_rounded = triton.cdiv(topk, _TOPK_ALIGN) * _TOPK_ALIGN

    if num_splits is None:
        num_splits, tokens_per_split = _split_plan(B, head_blocks, topk_rounded, _num_sms(q.device))
    else:
        assert num_splits >= 1, "num_splits must be positive"
        tokens_per_split = triton.cdiv(triton.cdiv(topk_rounded, num_splits), _TOPK_ALIGN) * _TOPK_ALIGN
        num_splits = triton.cdiv(topk_rounded, tokens_per_split)

    part_o = torch.empty((B, num_splits, H, _D_LATENT), dtype=torch.float32, device=q.device)
    part_lse = torch.empty((B, num_splits, H), dtype=torch.float32, device=q.device)
    out = torch.empty((B, H, _D_LATENT), dtype=q.dtype, device=q.device)

    grid = (B, head_blocks, num_splits)
    _mma_sparse_decode_split_kernel[grid](
        q,
        kv,
        topk_indices,
        part_o,
        part_lse,
        sm_scale,
        k_scale,
        v_scale,
        q.stride(0),
        q.stride(1),
        kv.stride(0),
        topk_indices.stride(0),
        part_o.stride(0),
        part_o.stride(1),
        part_o.stride(2),
        part_lse.stride(0),
        part_lse.stride(1),
        H,
        topk,
        topk_rounded,
        tokens_per_split,
        BLOCK_H=block_h,
        D_LATENT=_D_LATENT,
        D_ROPE=_D_ROPE,
    )

    _sparse_decode_combine_kernel[(B, H)](
        part_o,
        part_lse,
        out,
        part_o.stride(0),
        part_o.stride(1),
        part_o.stride(2),
        part_lse.stride(0),
        part_lse.stride(1),
        out.stride(0),
        out.stride(1),
        num_splits,
        BLOCK_S=triton.next_power_of_2(num_splits),
        D_LATENT=_D_LATENT,
        num_warps=4,
    )
    return out
