"""Drives megablocks' token permutation ops (megablocks/backend/kernels.py) the way a Mixtral-sized
MoE layer (2048 tokens, hidden 4096, 8 experts, top-2, bf16) calls them: the dropless path
(``padded_gather`` / ``padded_scatter`` with expert bins padded to 128-row blocks, and the weight
gradient ``padded_scatter_wgrad``) and the capacity-factor path (``binned_gather`` /
``binned_scatter`` / ``binned_scatter_wgrad``, capacity factor 1, so an expert's overflow is
dropped). Routing metadata (sorted expert ids, the sort permutation, inclusive bin ends) is built
with torch the way megablocks' ops.sort / histogram / inclusive_cumsum build it.

Cases and the autotuned kernels (megablocks/backend/kernels.py::NAME) each should launch:

- ``padded_gather``: _padded_copy (A_TO_B, unscaled).
- ``padded_scatter``: _padded_copy (B_TO_A, scaled by the router weights).
- ``padded_scatter_wgrad``: _padded_copy_wgrad.
- ``binned_gather``: _binned_copy (A_TO_B, unscaled).
- ``binned_scatter``: _binned_copy (B_TO_A, scaled).
- ``binned_scatter_wgrad``: _binned_copy_wgrad.

(The un-padded ``gather`` / ``scatter`` / ``scatter_wgrad`` are the padded ops with
``padded_bins = bins``, the same kernels, so they are not driven separately.)
"""

from __future__ import annotations

REPO = "databricks__megablocks"
SOURCE_ROOT = ""


def cases(load):
    import torch

    k = load("megablocks/backend/kernels.py")
    tokens, hidden, experts, top_k, block = 2048, 4096, 8, 2, 128
    capacity = tokens * top_k // experts
    dev, dt = "cuda", torch.bfloat16

    def routing():
        logits = torch.randn(tokens, experts, device=dev)
        weights, top_expert = logits.softmax(-1).topk(top_k, dim=-1)
        top_expert = top_expert.flatten()
        bin_ids, indices = top_expert.int().sort()
        tokens_per_expert = top_expert.bincount(minlength=experts)
        bins = tokens_per_expert.cumsum(0).int()
        padded = (tokens_per_expert + block - 1) // block * block
        padded_bins = padded.cumsum(0).int()
        return weights.flatten().to(dt), indices.int(), bin_ids, bins, padded_bins

    def padded_gather():
        _, indices, bin_ids, bins, padded_bins = routing()
        x = torch.randn(tokens, hidden, device=dev, dtype=dt)
        k.padded_gather(x, indices, bin_ids, None, bins, padded_bins, top_k)

    def padded_scatter():
        weights, indices, bin_ids, bins, padded_bins = routing()
        x = torch.randn(int(padded_bins[-1]), hidden, device=dev, dtype=dt)
        k.padded_scatter(x, indices, bin_ids, weights, bins, padded_bins, top_k)

    def padded_scatter_wgrad():
        _, indices, bin_ids, bins, padded_bins = routing()
        x = torch.randn(int(padded_bins[-1]), hidden, device=dev, dtype=dt)
        grad = torch.randn(tokens, hidden, device=dev, dtype=dt)
        k.padded_scatter_wgrad(x, grad, indices, bin_ids, bins, padded_bins, top_k)

    def binned_gather():
        _, indices, _, bins, _ = routing()
        x = torch.randn(tokens, hidden, device=dev, dtype=dt)
        k.binned_gather(x, indices, None, bins, capacity, top_k)

    def binned_scatter():
        weights, indices, _, bins, _ = routing()
        x = torch.randn(experts, capacity, hidden, device=dev, dtype=dt)
        k.binned_scatter(x, indices, weights, bins, top_k)

    def binned_scatter_wgrad():
        _, indices, _, bins, _ = routing()
        x = torch.randn(experts, capacity, hidden, device=dev, dtype=dt)
        grad = torch.randn(tokens, hidden, device=dev, dtype=dt)
        k.binned_scatter_wgrad(x, grad, indices, bins, top_k)

    return {
        "padded_gather": padded_gather,
        "padded_scatter": padded_scatter,
        "padded_scatter_wgrad": padded_scatter_wgrad,
        "binned_gather": binned_gather,
        "binned_scatter": binned_scatter,
        "binned_scatter_wgrad": binned_scatter_wgrad,
    }
