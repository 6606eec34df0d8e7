"""Drives verl's fused linear + cross-entropy + entropy op (verl/utils/kernel/linear_cross_entropy.py
``linear_cross_entropy``, the autograd op verl's PPO actors call on the LM head; its host functions
``efficient_entropy_forward`` / ``efficient_entropy_backward`` live in verl/utils/kernel/kernels.py)
the way an RL actor computes per-token log-probs and entropy: reduction "none", temperature 1.0,
bf16 hidden states and LM-head weight, int64 labels, hidden 4096.

Shapes: 4096 tokens x vocab 128256 (Llama-3) for the forward, the default split-N backward and the
"total separate" backward; 1024 tokens x vocab 32000 (Llama-2) for the fused-MN backward, whose
fp32 atomics onto d_weight / d_hidden make it far slower per FLOP.

Cases and the autotuned kernels (verl/utils/kernel/kernels.py::NAME) each should launch:

- ``forward``: efficient_entropy_kernel_general_mainloop, efficient_entropy_triton_kernel_epilogue.
- ``backward_split_n`` (verl's default backward, BackwardEnum._Split_Dlogits_N; forward first):
  the two forward kernels + efficient_entropy_backward_kernel_general_d_logits_split_N (launched once
  per 9504-wide vocab slice, 14 times here; d_hidden / d_weight are torch matmuls).
- ``backward_total_separate`` (BackwardEnum._Total_Separate): the two forward kernels +
  efficient_entropy_backward_kernel_general_d_logits.
- ``backward_fuse_mn`` (BackwardEnum._Total_Fuse_MN): the two forward kernels +
  efficient_entropy_backward_kernel_general_mainloop_MN.
- ``forward_tp_world1``: the tensor-parallel forward (verl's Megatron path passes the TP group),
  with a one-rank process group: efficient_entropy_kernel_general_mainloop,
  efficient_entropy_triton_kernel_epilogue_tp, efficient_entropy_triton_epilogue_tp_update. The
  group is torch's in-process "fake" backend (torch.testing._internal.distributed.fake_pg), whose
  collectives do nothing, which is exactly what an all-reduce over one rank does; no NCCL, no
  sockets, no second process. The case initialises it only if no default group exists.

Not reached: efficient_entropy_backward_kernel_d_hidden and efficient_entropy_backward_kernel_d_weight
(kernels.py lines 966, 1093) are autotuned but no host function in the repository launches them
(BackwardEnum._Split_Dlogits_M, the only unimplemented mode, raises NotImplementedError).

On the GPU, kernels.py enables TMA (device-side tensor descriptors, ``triton.set_allocator``) at import
when the device is sm_90+ and Triton has ``tl.make_tensor_descriptor`` (Triton 3.6 does), so the
kernels run with USE_TMA=True on the H200. On a CPU-only torch that query is skipped (no failure).
"""

from __future__ import annotations

REPO = "volcengine__verl"
SOURCE_ROOT = ""


def cases(load):
    import torch
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    kernels = load("verl/utils/kernel/kernels.py")
    lce = load("verl/utils/kernel/linear_cross_entropy.py")
    dev, dt = "cuda", torch.bfloat16
    hidden_size = 4096

    def inputs(tokens, vocab, grad):
        hidden = torch.randn(tokens, hidden_size, device=dev, dtype=dt).requires_grad_(grad)
        weight = (torch.randn(vocab, hidden_size, device=dev, dtype=dt) / hidden_size**0.5).requires_grad_(grad)
        labels = torch.randint(0, vocab, (tokens,), device=dev, dtype=torch.int64)
        return hidden, weight, labels

    def forward():
        hidden, weight, labels = inputs(4096, 128256, grad=False)
        lce.linear_cross_entropy(hidden, weight, labels, 1.0, "none")

    def backward(method, tokens, vocab):
        def run():
            kernels.set_backward_method(method)
            hidden, weight, labels = inputs(tokens, vocab, grad=True)
            logprobs, entropy = lce.linear_cross_entropy(hidden, weight, labels, 1.0, "none")
            torch.autograd.backward((logprobs, entropy), (torch.randn_like(logprobs), torch.randn_like(entropy)))

        return run

    def forward_tp_world1():
        if not dist.is_initialized():
            dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=1)
        hidden, weight, labels = inputs(4096, 128256, grad=False)
        lce.linear_cross_entropy(hidden, weight, labels, 1.0, "none", dist.group.WORLD)

    enum = kernels.BackwardEnum
    return {
        "forward": forward,
        "backward_split_n": backward(enum._Split_Dlogits_N, 4096, 128256),
        "backward_total_separate": backward(enum._Total_Separate, 4096, 128256),
        "backward_fuse_mn": backward(enum._Total_Fuse_MN, 1024, 32000),
        "forward_tp_world1": forward_tp_world1,
    }
