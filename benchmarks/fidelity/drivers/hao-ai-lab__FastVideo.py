"""Drives FastVideo's Triton attention kernels for video DiTs: VSA block-sparse attention and
sliding-tile attention (fastvideo-kernel/python/fastvideo_kernel/triton_kernels/), and the
LongCat-Video block-sparse attention it vendors
(fastvideo/third_party/longcat_video/block_sparse_attention/), forward and backward.

Shapes (bf16, head dim 128):
- VSA ``triton_block_sparse_attn_forward``: 1 x 32 heads x 4096 tokens, 64 x 64 tiles, each query
  tile attending 16 of the 64 KV tiles (int32 index lists, all KV tiles full, 64 tokens).
- STA ``sliding_tile_attention_triton``: Wan's 18x48x80 latent (69120 tokens, the only shape it
  accepts without text), 1 x 2 heads, windows (3, 3, 3) and (3, 5, 5) tiles of 6x8x8.
- LongCat ``attn_fwd_bsa_varlen_triton`` / ``attn_bwd_bsa_varlen_triton``: 1 x 32 heads x 8192
  tokens, sparsity 0.875, query chunks of 128 tokens and key chunks of 128 (the ``*_align``
  kernels) or 256 (the general kernels); block indices are the sorted top-k of a random
  chunk-level score, as ``get_select_indices_topk`` and ``topk_sort`` produce them.
  ``cal_score_triton`` (the gating QK^T on mean-pooled chunks) on 1 x 32 x 128 x 128.

LongCat's kernels are wrapped in ``triton.autotune`` only when ``TRITON_AUTOTUNE_ENBALE=1`` (sic)
is set before its modules are imported (block_sparse_attention/common.py); the wrappers then
also stop passing their preset configs. ``cases`` sets it (``ENV``: the fidelity runner's checks
are told it with ``--env``, as a user deploying with it would tell the tool). The backward wrapper builds the
key-side block indices with a ``torch.compile``-d helper, so that case also runs Inductor.

Cases and the autotuned kernels each launches:
- vsa_block_sparse_fwd: fastvideo-kernel/python/fastvideo_kernel/triton_kernels/block_sparse_attn_triton.py::_attn_fwd_sparse
- longcat_bsa_fwd_align: fastvideo/third_party/longcat_video/block_sparse_attention/flash_attn_bsa_varlen_mask.py::_attn_fwd_bsa_varlen_align
- longcat_bsa_bwd_align: the above, plus flash_attn_bsa_varlen_mask.py::_attn_bwd_dkdv_bsa_varlen_wrapper,
  flash_attn_bsa_varlen_mask.py::_attn_bwd_dq_bsa_varlen_align_wrapper
- longcat_bsa_fwd: flash_attn_bsa_varlen_mask.py::_attn_fwd_bsa_varlen
- longcat_bsa_bwd: the above, plus flash_attn_bsa_varlen_mask.py::_attn_bwd_dkdv_bsa_varlen_wrapper,
  flash_attn_bsa_varlen_mask.py::_attn_bwd_dq_bsa_varlen_wrapper
- longcat_gating: fastvideo/third_party/longcat_video/block_sparse_attention/common.py::_attn_fwd_gating
- sta_wan: fastvideo-kernel/python/fastvideo_kernel/triton_kernels/st_attn_triton.py::triton_sta_kernel
(the backward cases also launch the non-autotuned common.py::_attn_bwd_preprocess.)

Note: st_attn_triton.py queries the active Triton driver at import (its autotune config list
calls ``triton.runtime.driver.active.get_current_target()``), so on a machine without a GPU the
last ``load`` in ``cases`` raises; everything before it imports on CPU. Its 72 configs make the
sta_wan case the slowest to tune.
"""

from __future__ import annotations

REPO = "hao-ai-lab__FastVideo"
SOURCE_ROOT = ""
ENV = {"TRITON_AUTOTUNE_ENBALE": "1"}


def cases(load):
    import os

    import torch

    os.environ.update(ENV)
    vsa = load("fastvideo-kernel/python/fastvideo_kernel/triton_kernels/block_sparse_attn_triton.py")
    bsa = load("fastvideo/third_party/longcat_video/block_sparse_attention/bsa_interface.py")
    sta = load("fastvideo-kernel/python/fastvideo_kernel/triton_kernels/st_attn_triton.py")
    dev, dt, head_dim = "cuda", torch.bfloat16, 128

    def qkv(batch, heads, tokens, grad=False):
        return [torch.randn(batch, heads, tokens, head_dim, device=dev, dtype=dt, requires_grad=grad)
                for _ in range(3)]

    def vsa_fwd():
        heads, tokens, tile, selected = 32, 4096, 64, 16
        q, k, v = qkv(1, heads, tokens)
        tiles = tokens // tile
        score = torch.rand(1, heads, tiles, tiles, device=dev)
        q2k_index = score.topk(selected, dim=-1).indices.sort(dim=-1).values.to(torch.int32).contiguous()
        q2k_num = torch.full((1, heads, tiles), selected, device=dev, dtype=torch.int32)
        block_sizes = torch.full((tiles,), tile, device=dev, dtype=torch.int32)
        vsa.triton_block_sparse_attn_forward(q, k, v, q2k_index, q2k_num, block_sizes)

    heads, tokens, sparsity, chunk_q = 32, 8192, 0.875, 128
    sm_scale = head_dim**-0.5

    def bsa_indices(chunk_k):
        rows, cols = tokens // chunk_q, tokens // chunk_k
        selected = int((1 - sparsity) * cols)
        score = torch.randn(1, heads, rows, cols, device=dev)
        indices = score.topk(selected, dim=-1).indices.sort(dim=-1).values
        lens = torch.full((1, heads, rows), selected, device=dev, dtype=torch.int32)
        return indices, lens

    def bsa_fwd(chunk_k):
        q, k, v = qkv(1, heads, tokens)
        indices, lens = bsa_indices(chunk_k)
        bsa.attn_fwd_bsa_varlen_triton(q, k, v, sm_scale, indices, lens, chunk_q, chunk_k, sparsity)

    def bsa_bwd(chunk_k):
        q, k, v = qkv(1, heads, tokens)
        indices, lens = bsa_indices(chunk_k)
        o, lse = bsa.attn_fwd_bsa_varlen_triton(q, k, v, sm_scale, indices, lens, chunk_q, chunk_k, sparsity)
        do = torch.randn_like(o)
        dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
        bsa.attn_bwd_bsa_varlen_triton(do, q, k, v, o, dq, dk, dv, sm_scale, lse, indices, lens, chunk_q, chunk_k,
                                       sparsity)

    def gating():
        q_cmp, k_cmp, _ = qkv(1, heads, 128)
        bsa.cal_score_triton(q_cmp, k_cmp)

    def sta_wan():
        q, k, v = qkv(1, 2, 18 * 48 * 80)
        sta.sliding_tile_attention_triton(q, k, v, [(3, 3, 3), (3, 5, 5)], 0, has_text=False,
                                          dit_seq_shape="18x48x80")

    return {
        "vsa_block_sparse_fwd": vsa_fwd,
        "longcat_bsa_fwd_align": lambda: bsa_fwd(128),
        "longcat_bsa_bwd_align": lambda: bsa_bwd(128),
        "longcat_bsa_fwd": lambda: bsa_fwd(256),
        "longcat_bsa_bwd": lambda: bsa_bwd(256),
        "longcat_gating": gating,
        "sta_wan": sta_wan,
    }
