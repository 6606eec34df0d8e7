"""Drives cute-kernels' Triton ops (the ``@triton.autotune`` ones, not the cutotune/CUDA ones) the
way an LLM training step calls them, bf16 on one GPU, forward and backward through the repo's own
autograd functions. No case touches the compiled CUDA extension (``cute_kernels/jit.py``): every op
used here dispatches straight to its Triton implementation.

Cases, shapes and the autotuned kernels each should launch:

* ``bmm`` -- ``bmm_cute`` as attention scores, Q @ K^T * d^-0.5: 32 (batch x heads) x 2048 x 128
  against 32 x 2048 x 128 (``is_B_transposed``), no C (beta 0).
  - cute_kernels/kernels/bmm/triton_implementation.py::bmm_triton_kernel
* ``cross_entropy`` -- ``cross_entropy_cute`` on 4096 tokens x 32000-word vocabulary logits, mean
  reduction, then ``backward`` (the gradient is written by the same fused kernel in forward).
  - cute_kernels/kernels/cross_entropy/triton_implementation.py::cross_entropy_forward_backward_triton_kernel
* ``rnn`` -- ``rnn_cute`` (tanh), batch 4 x 1024 steps, 32 heads x head dim 128 (state 4096),
  forward + backward.
  - cute_kernels/kernels/rnn/triton_implementation/forward.py::rnn_forward_triton_kernel
  - cute_kernels/kernels/rnn/triton_implementation/backward.py::rnn_backward_triton_kernel
* ``rnn_diagonal`` -- ``rnn_cute`` with head dim 1 (the diagonal recurrence), batch 4 x 1024 steps,
  4096 heads, forward + backward.
  - cute_kernels/kernels/rnn/triton_implementation/forward_diagonal.py::diagonal_rnn_forward_triton_kernel
  - cute_kernels/kernels/rnn/triton_implementation/backward_diagonal.py::diagonal_rnn_backward_triton_kernel
* ``rnn_varlen`` -- ``rnn_cute`` on 4096 packed tokens of 6 documents (``cu_seqlens``, max_seqlen as
  a tensor), 32 heads x 128, forward + backward.
  - cute_kernels/kernels/rnn/triton_implementation/forward_varlen.py::rnn_varlen_forward_triton_kernel
  - cute_kernels/kernels/rnn/triton_implementation/backward_varlen.py::rnn_varlen_backward_triton_kernel
* ``rnn_varlen_diagonal`` -- the same packing with 4096 heads of dim 1, forward + backward.
  - cute_kernels/kernels/rnn/triton_implementation/forward_diagonal_varlen.py::diagonal_rnn_varlen_forward_triton_kernel
  - cute_kernels/kernels/rnn/triton_implementation/backward_diagonal_varlen.py::diagonal_rnn_varlen_backward_triton_kernel
* ``gru`` -- ``gru_cute``, batch 4 x 1024 steps, 32 heads x head dim 64 (state 2048; 64 rather than
  128 because the backward holds three fp32 HxH weight-gradient tiles per program), fwd + bwd.
  - cute_kernels/kernels/gru/triton_implementation/forward.py::gru_forward_triton_kernel
  - cute_kernels/kernels/gru/triton_implementation/backward.py::gru_backward_triton_kernel
* ``moe`` -- the ``MoE_Triton`` layer (scattermoe), Mixtral-sized: 2048 tokens, hidden 4096, 8
  experts top-2, FFN 14336 with a fused gate/up (GLU) projection, forward + backward.
  - cute_kernels/kernels/scattermoe/triton_implementation/kernels.py::scatter2scatter_triton_kernel
  - cute_kernels/kernels/scattermoe/triton_implementation/kernels.py::group_triton_kernel
  - cute_kernels/kernels/scattermoe/triton_implementation/kernels.py::groupXtY_triton_kernel

The GRU varlen path is not driven: ``gru/__init__.py`` calls ``gru_varlen_*_triton`` without
defining or importing them. Varlen documents are ordered so the last is the longest, because the
dense varlen forward reads ``x`` with the batch mask only and runs every row for max_seqlen steps.
"""

from __future__ import annotations

REPO = "mayank31398__cute-kernels"
SOURCE_ROOT = ""


def cases(load):
    import torch
    import torch.nn.functional as F

    bmm = load("cute_kernels/kernels/bmm/__init__.py")
    ce = load("cute_kernels/kernels/cross_entropy/__init__.py")
    rnn = load("cute_kernels/kernels/rnn/__init__.py")
    gru = load("cute_kernels/kernels/gru/__init__.py")
    moe = load("cute_kernels/kernels/scattermoe/triton_implementation/__init__.py")

    dev, dt = "cuda", torch.bfloat16
    batch, steps = 4, 1024
    doc_lengths = [512, 768, 256, 1024, 384, 1152]  # 4096 tokens, longest last

    def packing():
        cu_seqlens = torch.tensor([0] + doc_lengths, device=dev, dtype=torch.int32).cumsum(0, dtype=torch.int32)
        max_seqlen = (cu_seqlens[1:] - cu_seqlens[:-1]).max()
        return cu_seqlens, max_seqlen

    def leaf(*shape, scale=1.0):
        return (torch.randn(*shape, device=dev, dtype=dt) * scale).requires_grad_()

    def attention_scores():
        heads, seq, head_dim = 32, 2048, 128
        q = torch.randn(heads, seq, head_dim, device=dev, dtype=dt)
        k = torch.randn(heads, seq, head_dim, device=dev, dtype=dt)
        bmm.bmm_cute(q, k, None, is_A_transposed=False, is_B_transposed=True, alpha=head_dim**-0.5, beta=0)

    def cross_entropy():
        tokens, vocab = 4096, 32000
        logits = leaf(tokens, vocab)
        labels = torch.randint(0, vocab, (tokens,), device=dev)
        ce.cross_entropy_cute(logits, labels, reduction="mean").backward()

    def rnn_dense():
        heads, head_dim = 32, 128
        x = leaf(batch, steps, heads, head_dim)
        w = leaf(heads, head_dim, head_dim, scale=head_dim**-0.5)
        y = rnn.rnn_cute(x, w)
        y.backward(torch.randn_like(y))

    def rnn_diagonal():
        heads = 4096
        x = leaf(batch, steps, heads, 1)
        w = leaf(heads, 1, 1, scale=0.5)
        y = rnn.rnn_cute(x, w)
        y.backward(torch.randn_like(y))

    def rnn_varlen():
        heads, head_dim = 32, 128
        cu_seqlens, max_seqlen = packing()
        x = leaf(sum(doc_lengths), heads, head_dim)
        w = leaf(heads, head_dim, head_dim, scale=head_dim**-0.5)
        y = rnn.rnn_cute(x, w, cu_seqlens=cu_seqlens, max_seqlen=max_seqlen)
        y.backward(torch.randn_like(y))

    def rnn_varlen_diagonal():
        heads = 4096
        cu_seqlens, max_seqlen = packing()
        x = leaf(sum(doc_lengths), heads, 1)
        w = leaf(heads, 1, 1, scale=0.5)
        y = rnn.rnn_cute(x, w, cu_seqlens=cu_seqlens, max_seqlen=max_seqlen)
        y.backward(torch.randn_like(y))

    def gru_dense():
        heads, head_dim = 32, 64
        x, xf, xr = (leaf(batch, steps, heads, head_dim) for _ in range(3))
        w, wf, wr = (leaf(heads, head_dim, head_dim, scale=head_dim**-0.5) for _ in range(3))
        y = gru.gru_cute(x, w, xf, wf, xr, wr)
        y.backward(torch.randn_like(y))

    def swiglu(h):
        gate, up = h.chunk(2, dim=-1)
        return F.silu(gate) * up

    def moe_layer():
        with torch.device(dev):
            layer = moe.MoE_Triton(
                num_experts=8,
                num_experts_per_tok=2,
                hidden_size=4096,
                intermediate_size=14336,
                activation_function=swiglu,
                is_glu=True,
                add_bias=False,
                std=0.02,
            ).to(dt)
        x = leaf(1, 2048, 4096)
        y, _ = layer(x)
        y.backward(torch.randn_like(y))

    return {
        "bmm": attention_scores,
        "cross_entropy": cross_entropy,
        "rnn": rnn_dense,
        "rnn_diagonal": rnn_diagonal,
        "rnn_varlen": rnn_varlen,
        "rnn_varlen_diagonal": rnn_varlen_diagonal,
        "gru": gru_dense,
        "moe": moe_layer,
    }
