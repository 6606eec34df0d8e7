"""Drives AReaL's Triton tree attention (areal/models/tree_attn/triton_kernel.py), forward and
backward, the way tree-packed RL rollouts use it: one sequence of 2048 tokens shaped as a tree, a
512-token shared prompt followed by four 384-token responses that each branch off the prompt's
last token; 32 query heads, 8 KV heads (GQA), head dim 128, bf16.

The tree's bit-packed ancestor mask and block indices come from the repository's own
``precompute_tree_attention_data`` (CPU, default BLOCK_M=128 / BLOCK_N=64, matching the kernels'
configs). The forward case calls ``tree_attention_triton``; the backward case goes through the
autograd op ``tree_attention`` and ``.backward()``.

Cases and the autotuned kernels each launches:
- tree_attention_fwd: areal/models/tree_attn/triton_kernel.py::_tree_attn_fwd_triton
- tree_attention_fwd_bwd: areal/models/tree_attn/triton_kernel.py::_tree_attn_fwd_triton,
  areal/models/tree_attn/triton_kernel.py::_tree_attn_bwd_dq,
  areal/models/tree_attn/triton_kernel.py::_tree_attn_bwd_dkdv
(the backward also launches the non-autotuned _tree_attn_bwd_preprocess.)
"""

from __future__ import annotations

REPO = "inclusionAI__AReaL"
SOURCE_ROOT = ""


def cases(load):
    import torch

    ta = load("areal/models/tree_attn/triton_kernel.py")
    prompt, branches, branch_len = 512, 4, 384
    tokens = prompt + branches * branch_len
    heads, kv_heads, head_dim = 32, 8, 128
    dev, dt = "cuda", torch.bfloat16

    def tree():
        parent = torch.arange(-1, tokens - 1, dtype=torch.int64)
        for b in range(branches):
            parent[prompt + b * branch_len] = prompt - 1
        return ta.precompute_tree_attention_data(parent[None, :])

    def qkv(grad):
        q = torch.randn(1, heads, tokens, head_dim, device=dev, dtype=dt, requires_grad=grad)
        k = torch.randn(1, kv_heads, tokens, head_dim, device=dev, dtype=dt, requires_grad=grad)
        v = torch.randn(1, kv_heads, tokens, head_dim, device=dev, dtype=dt, requires_grad=grad)
        return q, k, v

    def forward():
        data = tree()
        q, k, v = qkv(False)
        ta.tree_attention_triton(q, k, v, data.packed_mask, data.kv_indices, data.kv_offsets)

    def forward_backward():
        data = tree()
        q, k, v = qkv(True)
        out = ta.tree_attention(q, k, v, data.packed_mask, data.kv_indices, data.kv_offsets,
                                data.q_indices, data.q_offsets)
        out.backward(torch.randn_like(out))

    return {"tree_attention_fwd": forward, "tree_attention_fwd_bwd": forward_backward}
