"""Realistic inputs for one decode step of sparse MLA, for a given batch size.

Shapes follow a DeepSeek-V3.2-class model: 512 latent + 64 rope dims, a paged latent cache
shared by all heads (fp8 e4m3 with a per-tensor scale by default, as served on 96 GB cards),
and a top-k list per request whose slots are scattered over the page pool. Requests have
different context lengths; those shorter than topk pad their list with -1.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

D_LATENT = 512
D_ROPE = 64
D_QK = D_LATENT + D_ROPE
FP8_MAX = 448.0  # largest finite float8_e4m3fn


@dataclass(frozen=True)
class DecodeInputs:
    q: torch.Tensor  # [B, H, 576] bf16 (or fp16)
    kv_cache: torch.Tensor  # [num_pages, page_size, 576] fp8, or q's dtype
    topk_indices: torch.Tensor  # [B, topk] int32 flat slot ids, -1 = unused
    sm_scale: float
    k_scale: float
    v_scale: float

    def kwargs(self) -> dict:
        """The arguments of ``sparse_mla_decode`` / ``sparse_mla_decode_reference``."""
        return dict(
            q=self.q,
            kv_cache=self.kv_cache,
            topk_indices=self.topk_indices,
            sm_scale=self.sm_scale,
            k_scale=self.k_scale,
            v_scale=self.v_scale,
        )


def make_inputs(
    batch: int,
    *,
    heads: int = 128,
    topk: int = 2048,
    max_context: int = 8192,
    page_size: int = 64,
    kv_dtype: torch.dtype = torch.float8_e4m3fn,
    act_dtype: torch.dtype = torch.bfloat16,
    device: str | torch.device = "cuda",
    seed: int = 0,
    padding_requests: int = 0,
) -> DecodeInputs:
    """Build one decode step's inputs: ``batch`` requests, each with its own pages and top-k.

    The last ``padding_requests`` rows are batch padding (as in a CUDA graph captured for a
    larger batch): all their indices are -1, so their output must be zeros.
    """
    assert 0 <= padding_requests <= batch
    device = torch.device(device)
    gen = torch.Generator(device="cpu").manual_seed(seed)

    # Context lengths from topk/2 to max_context: some requests have fewer tokens than topk.
    lo = max(1, min(topk // 2, max_context))
    context = torch.randint(lo, max_context + 1, (batch,), generator=gen)
    pages_per_req = (context + page_size - 1) // page_size
    num_pages = int(pages_per_req.sum()) + 1  # page 0 stays unused, as in real pools
    page_order = torch.randperm(num_pages - 1, generator=gen) + 1

    topk_indices = torch.full((batch, topk), -1, dtype=torch.int32)
    first_page = 0
    for b in range(batch - padding_requests):
        n_pages = int(pages_per_req[b])
        pages = page_order[first_page : first_page + n_pages]
        first_page += n_pages
        n_tokens = int(context[b])
        chosen = torch.randperm(n_tokens, generator=gen)[: min(topk, n_tokens)]
        slots = pages[chosen // page_size] * page_size + chosen % page_size
        topk_indices[b, : slots.numel()] = slots.to(torch.int32)

    # The cache is the big tensor: draw it where it will live.
    dev_gen = torch.Generator(device=device).manual_seed(seed)
    latent = torch.randn((num_pages, page_size, D_QK), generator=dev_gen, device=device)
    if kv_dtype == torch.float8_e4m3fn:
        scale = float(latent.abs().amax()) / FP8_MAX
        kv_cache = (latent / scale).to(torch.float8_e4m3fn)
    else:
        scale = 1.0
        kv_cache = latent.to(kv_dtype)

    q = torch.randn((batch, heads, D_QK), generator=dev_gen, device=device).to(act_dtype)
    return DecodeInputs(
        q=q,
        kv_cache=kv_cache,
        topk_indices=topk_indices.to(device),
        sm_scale=(128 + D_ROPE) ** -0.5,  # DeepSeek: qk_nope_head_dim 128 + rope 64
        k_scale=scale,
        v_scale=scale,
    )


def bytes_moved(inputs: DecodeInputs) -> int:
    """The bytes one ``sparse_mla_decode`` call must move to or from device memory.

    Compulsory traffic only: q and the top-k lists read once, every valid top-k row of the cache
    read once (the heads of a request share it; re-reads by other head blocks are L2 hits at
    best), the output written once. The fp32 partials of the split-K plan are left out: they
    depend on the split plan, and a one-split plan would not move them at all.
    """
    q, cache, idx = inputs.q, inputs.kv_cache, inputs.topk_indices
    rows = int((idx >= 0).sum())
    out_elems = q.shape[0] * q.shape[1] * D_LATENT
    return (
        q.numel() * q.element_size()
        + idx.numel() * idx.element_size()
        + rows * D_QK * cache.element_size()
        + out_elems * q.element_size()
    )
