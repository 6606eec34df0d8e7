"""Drives MInference's StreamingLLM attention (``streaming_forward`` in
minference/ops/streaming_kernel.py): a prefill of 4096 tokens, 32 heads, head dim 128, bf16,
keeping 128 attention-sink tokens and a 1024-token local window. Because the context is longer
than the window, the op makes two launches of the same autotuned kernel: the sliding-window pass
over all keys, then the complement-window pass over the sink tokens that finishes the softmax.

Cases and the autotuned kernels each launches:
- streaming_forward: minference/ops/streaming_kernel.py::_attn_fwd

Skipped: minference/ops/pit_sparse_flash_attention.py::triton_sparse_fwd_kernel, whose module
imports ``pycuda`` and ``flash_attn`` at load.
"""

from __future__ import annotations

REPO = "microsoft__MInference"
SOURCE_ROOT = ""


def cases(load):
    import torch

    sk = load("minference/ops/streaming_kernel.py")
    batch, heads, tokens, head_dim = 1, 32, 4096, 128
    dev, dt = "cuda", torch.bfloat16

    def streaming():
        q, k, v = (torch.randn(batch, heads, tokens, head_dim, device=dev, dtype=dt) for _ in range(3))
        sk.streaming_forward(q, k, v, 128, 1024)

    return {"streaming_forward": streaming}
