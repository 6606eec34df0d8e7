"""Drives SeerAttention's varlen Triton attention ops (seer_attn/kernels/varlen/) with a
Llama-3-8B-like attention layer: 32 query heads, 8 KV heads (GQA group 4), head dim 128, bf16.

Prefill / training (block_sparse_attn_varlen_gqa.py, 1-D block mask: one row per query token, one
column per 64-token key block, per KV head, shape (batch, kv_heads, max_seqlen, cdiv(max_seqlen, 64))
bool; about 30 % of the causal blocks kept, plus the first (sink) and the diagonal block), two packed
sequences of 1024 and 3072 tokens (cu_seqlens [0, 1024, 4096]):

- ``gqa_prefill_fwd``: ``blocksparse_flash_attn_varlen_fwd`` ->
  block_sparse_attn_varlen_gqa.py::_fwd_kernel_varlen.
- ``gqa_prefill_fwd_bwd``: the autograd op ``block_1d_gqa_sparse_attn_varlen_func`` forward and
  backward -> block_sparse_attn_varlen_gqa.py::_fwd_kernel_varlen, ::_bwd_dkdv, ::_bwd_dq (and the
  non-autotuned _bwd_preprocess_use_o).

Decode (one query token per sequence), batch 4, KV cache (batch, 4096, 8, 128), cache lengths
between 1024 and 4096 (one sequence full), 64-token blocks (SeerAttention's default gate block size;
the dense left-pad decode uses the wrapper's default 32, as seer_attn/decode_sparse's dense path
does). With batch 4 the wrappers' split heuristic picks 2 KV splits, so the merge kernel has work:

- ``decode_indice``: block_sparse_flash_decode_varlen_indice.py ``block_sparse_flash_decode_gqa_indice``
  (block indices (batch, kv_heads, 16) int32, a 1024-token budget, sorted descending, -1 = padding)
  -> block_sparse_flash_decode_varlen_indice.py::_split_kernel, ::_merge_kernel.
- ``decode_indice_triton``: triton_sparse_gqa_decode_varlen_indice.py
  ``block_sparse_flash_decode_gqa_indice_triton`` (same inputs) ->
  triton_sparse_gqa_decode_varlen_indice.py::_split_kernel, ::_merge_kernel.
- ``decode_mask``: block_sparse_flash_decode_varlen_mask.py ``block_sparse_flash_decode_gqa_mask``
  (right-padded cache, block mask (batch, kv_heads, 64) bool) ->
  block_sparse_flash_decode_varlen_mask.py::_split_kernel, ::_merge_kernel.
- ``decode_mask_leftpad``: block_sparse_flash_decode_varlen_mask_leftpad.py
  ``block_sparse_flash_decode_leftpad_gqa_mask`` (left-padded cache, first_block_unmasked=True as
  seer_attn/decode_sparse/attention_forward_sparse.py calls it) ->
  block_sparse_flash_decode_varlen_mask_leftpad.py::_split_kernel, ::_merge_kernel.
- ``decode_dense_leftpad``: flash_decode_varlen_left_pad_max_v2.py ``flash_decode_leftpad`` ->
  flash_decode_varlen_left_pad_max_v2.py::_split_kernel, ::_merge_kernel.

Skipped: oracle_sparse.py::_split_kernel; that module imports seer_attn.modules.common, which
imports flash_attn (a CUDA extension the device lacks).

The four decode modules import ``einops`` at top level but use it only in their reference
functions (ref_program_torch), never in the wrappers called here. Where einops is not installed,
``cases`` puts a placeholder ``einops`` module in sys.modules whose functions raise if ever called.
"""

from __future__ import annotations

REPO = "microsoft__SeerAttention"
SOURCE_ROOT = ""


def _einops_placeholder():
    import importlib.util
    import sys
    import types

    if "einops" in sys.modules or importlib.util.find_spec("einops") is not None:
        return

    def absent(*args, **kwargs):
        raise ImportError("einops is not installed (placeholder from the fidelity driver)")

    stub = types.ModuleType("einops")
    stub.rearrange = stub.einsum = stub.repeat = stub.reduce = absent
    sys.modules["einops"] = stub


def cases(load):
    import math

    import torch

    _einops_placeholder()
    gqa = load("seer_attn/kernels/varlen/block_sparse_attn_varlen_gqa.py")
    dec_indice = load("seer_attn/kernels/varlen/block_sparse_flash_decode_varlen_indice.py")
    dec_indice_triton = load("seer_attn/kernels/varlen/triton_sparse_gqa_decode_varlen_indice.py")
    dec_mask = load("seer_attn/kernels/varlen/block_sparse_flash_decode_varlen_mask.py")
    dec_mask_leftpad = load("seer_attn/kernels/varlen/block_sparse_flash_decode_varlen_mask_leftpad.py")
    dec_dense_leftpad = load("seer_attn/kernels/varlen/flash_decode_varlen_left_pad_max_v2.py")

    dev, dt = "cuda", torch.bfloat16
    heads, kv_heads, dim = 32, 8, 128
    sm_scale = 1.0 / math.sqrt(dim)

    # ---- prefill / training: packed varlen, 1-D (token x key-block) mask per KV head
    seqlens, block = [1024, 3072], 64
    max_seqlen, total = max(seqlens), sum(seqlens)

    def prefill_inputs(grad):
        cu = torch.tensor([0, seqlens[0], total], device=dev, dtype=torch.int32)
        q = torch.randn(total, heads, dim, device=dev, dtype=dt).requires_grad_(grad)
        k = torch.randn(total, kv_heads, dim, device=dev, dtype=dt).requires_grad_(grad)
        v = torch.randn(total, kv_heads, dim, device=dev, dtype=dt).requires_grad_(grad)
        n_blocks = _cdiv(max_seqlen, block)
        cols = torch.arange(n_blocks, device=dev)
        row_block = torch.arange(max_seqlen, device=dev) // block
        keep = (cols[None, :] == row_block[:, None]) | (cols[None, :] == 0)
        mask = (torch.rand(len(seqlens), kv_heads, max_seqlen, n_blocks, device=dev) < 0.3) | keep
        return q, k, v, cu, mask.contiguous()

    def gqa_prefill_fwd():
        q, k, v, cu, mask = prefill_inputs(grad=False)
        gqa.blocksparse_flash_attn_varlen_fwd(q, k, v, cu, cu, max_seqlen, sm_scale, mask, block_size=block)

    def gqa_prefill_fwd_bwd():
        q, k, v, cu, mask = prefill_inputs(grad=True)
        out = gqa.block_1d_gqa_sparse_attn_varlen_func(q, k, v, cu, cu, max_seqlen, sm_scale, mask, block)
        out.backward(torch.randn_like(out))

    # ---- decode: one query token per sequence against a KV cache
    batch, max_cache, dblock, budget_blocks = 4, 4096, 64, 16

    def cache_lens():
        lens = torch.randint(1024, max_cache + 1, (batch,), device=dev, dtype=torch.int32)
        lens[0] = max_cache
        return lens

    def decode_qkv():
        q = torch.randn(batch, heads, dim, device=dev, dtype=dt)
        k = torch.randn(batch, max_cache, kv_heads, dim, device=dev, dtype=dt)
        v = torch.randn(batch, max_cache, kv_heads, dim, device=dev, dtype=dt)
        return q, k, v

    def block_indices(lens):
        # per (sequence, KV head): budget_blocks distinct valid block ids, descending, -1 padded
        n_blocks = _cdiv(max_cache, dblock)
        valid = torch.arange(n_blocks, device=dev)[None, :] < (lens[:, None] + dblock - 1) // dblock
        scores = torch.rand(batch, kv_heads, n_blocks, device=dev).masked_fill(~valid[:, None, :], -1.0)
        top = scores.topk(budget_blocks, dim=-1)
        idx = torch.where(top.values >= 0, top.indices, -1).to(torch.int32)
        return idx.sort(dim=-1, descending=True).values.contiguous()

    def block_mask(n_blocks, density=0.25):
        return torch.rand(batch, kv_heads, n_blocks, device=dev) < density

    def decode_indice():
        q, k, v = decode_qkv()
        lens = cache_lens()
        dec_indice.block_sparse_flash_decode_gqa_indice(
            q, k, v, lens, max_cache, budget_blocks, block_indices(lens), dblock, sm_scale
        )

    def decode_indice_triton():
        q, k, v = decode_qkv()
        lens = cache_lens()
        dec_indice_triton.block_sparse_flash_decode_gqa_indice_triton(
            q, k, v, lens, max_cache, budget_blocks, block_indices(lens), dblock, sm_scale
        )

    def decode_mask():
        q, k, v = decode_qkv()
        lens = cache_lens()
        n_blocks = _cdiv(max_cache, dblock)
        mask = block_mask(n_blocks)
        last = ((lens + dblock - 1) // dblock - 1).long()
        mask[torch.arange(batch, device=dev), :, last] = True  # the block holding the newest token
        dec_mask.block_sparse_flash_decode_gqa_mask(q, k, v, lens, max_cache, mask.contiguous(), dblock, sm_scale)

    def decode_mask_leftpad():
        q, k, v = decode_qkv()
        lens = cache_lens()
        mask = block_mask(_cdiv(max_cache, dblock))
        mask[:, :, -1] = True  # left-padded: the newest token is always in the last block
        dec_mask_leftpad.block_sparse_flash_decode_leftpad_gqa_mask(
            q, k, v, lens, mask.contiguous(), block_size=dblock, sm_scale=sm_scale, first_block_unmasked=True
        )

    def decode_dense_leftpad():
        q, k, v = decode_qkv()
        dec_dense_leftpad.flash_decode_leftpad(q, k, v, cache_lens(), sm_scale=sm_scale)

    return {
        "gqa_prefill_fwd": gqa_prefill_fwd,
        "gqa_prefill_fwd_bwd": gqa_prefill_fwd_bwd,
        "decode_indice": decode_indice,
        "decode_indice_triton": decode_indice_triton,
        "decode_mask": decode_mask,
        "decode_mask_leftpad": decode_mask_leftpad,
        "decode_dense_leftpad": decode_dense_leftpad,
    }


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)
