"""Drives scattermoe's three autotuned kernels the way a Mixtral-sized MoE layer calls them:
scatter2scatter (expert GEMM, forward), group (gathering tokens by expert) and group_bwd_W (the
weight gradient), bf16, 8 experts, top-2, hidden 4096, FFN 14336 split in two."""

from __future__ import annotations

REPO = "shawntan__scattermoe"
SOURCE_ROOT = ""


def cases(load):
    import torch

    ops = load("scattermoe/kernels/ops.py")
    tokens, hidden, ffn, experts, k = 2048, 4096, 7168, 8, 2
    dev, dt = "cuda", torch.bfloat16

    def routing():
        logits = torch.randn(tokens, experts, device=dev)
        idx = logits.topk(k, dim=-1).indices
        sorted_experts, sorted_scattered = idx.flatten().sort()
        offsets = sorted_experts.bincount(minlength=experts).cumsum(0)
        return sorted_experts, sorted_scattered, offsets

    def forward():
        e, s, _ = routing()
        x = torch.randn(tokens, hidden, device=dev, dtype=dt)
        w = torch.randn(experts, hidden, ffn, device=dev, dtype=dt) / hidden**0.5
        ops.scatter2scatter(x, w, e, s, k)

    def gather():
        e, s, _ = routing()
        x = torch.randn(tokens, hidden, device=dev, dtype=dt)
        ops.group(x, s, fan_out=k)

    def weight_grad():
        e, s, offsets = routing()
        x = torch.randn(tokens * k, hidden, device=dev, dtype=dt)
        dy = torch.randn(tokens * k, ffn, device=dev, dtype=dt)
        ops.group_bwd_W(dy, x, offsets, experts)

    return {"scatter2scatter": forward, "group": gather, "group_bwd_W": weight_grad}
