"""Plain PyTorch sparse MLA decode: the definition the Triton kernels are checked against."""

from __future__ import annotations

import torch

_D_LATENT = 512
_D_QK = 576


def sparse_mla_decode_reference(
    q: torch.Tensor,
    kv_cache: torch.Tensor,
    topk_indices: torch.Tensor,
    sm_scale: float,
    *,
    k_scale: float = 1.0,
    v_scale: float = 1.0,
) -> torch.Tensor:
    """Same contract as ``sparse_mla_decode``, computed in fp32; returns ``[B, H, 512]`` fp32.

    Each head's key is the dequantized 576-wide cache row, its value the row's first 512
    columns; ``-1`` indices are left out; a query with no valid index gets zeros.
    """
    kv = kv_cache.reshape(-1, _D_QK).float()
    idx = topk_indices.long()
    valid = idx >= 0
    rows = kv[idx.clamp(min=0)]  # [B, topk, 576]
    keys = rows * k_scale
    values = rows[..., :_D_LATENT] * v_scale

    scores = torch.einsum("bhd,btd->bht", q.float(), keys) * sm_scale
    scores = scores.masked_fill(~valid[:, None, :], float("-inf"))
    probs = torch.softmax(scores, dim=-1)
    probs = torch.nan_to_num(probs, nan=0.0)  # all -inf rows: no valid index
    return torch.einsum("bht,btd->bhd", probs, values)
