"""Drives stk's block-sparse matmuls (stk/backend/triton_kernels.py ``sdd`` / ``dsd`` / ``dds``, the
host functions stk.ops calls) on the block-diagonal topology of a dropless MoE layer the way
megablocks' dMoE builds it: 2048 tokens, top-2 over 8 experts, each expert's routes padded to
128-row blocks, FFN 14336 per expert (8 x 112 block columns), hidden 4096, 128 x 128 bf16 blocks.
The sparse matrix is [padded routes, 8 * 14336]; block row r holds the 112 blocks of its expert.
The BCSR metadata (offsets, row / column indices and the transposed view stk.Matrix derives) is
built with torch, int32.

Cases and the autotuned kernels (stk/backend/triton_kernels.py::NAME) each should launch:

- ``sdd``: tokens [routes, 4096] x w1^T [4096, 8 * 14336] into the sparse topology (the dMoE
  up-projection): _sdd_kernel.
- ``dsd``: sparse [routes, 8 * 14336] x w2 [8 * 14336, 4096] (the down-projection): _dsd_kernel.
- ``dds``: tokens^T [4096, routes] x sparse [routes, 8 * 14336] (the w1 weight gradient):
  _dds_kernel.

Each kernel's autotuner holds a single config, so there is no tuning, only the launch.
"""

from __future__ import annotations

REPO = "stanford-futuredata__stk"
SOURCE_ROOT = ""


def cases(load):
    import torch

    tk = load("stk/backend/triton_kernels.py")
    tokens, hidden, ffn, experts, top_k, block = 2048, 4096, 14336, 8, 2, 128
    dev, dt, idx = "cuda", torch.bfloat16, torch.int32
    cols_per_expert = ffn // block
    block_cols = experts * cols_per_expert

    def topology():
        route = torch.randn(tokens, experts, device=dev).topk(top_k, dim=-1).indices.flatten()
        row_blocks = (route.bincount(minlength=experts) + block - 1) // block
        row_expert = torch.repeat_interleave(torch.arange(experts, device=dev), row_blocks)
        block_rows = row_expert.numel()
        col = torch.arange(cols_per_expert, device=dev)
        column_indices = (row_expert[:, None] * cols_per_expert + col[None, :]).flatten()
        row_indices = torch.arange(block_rows, device=dev).repeat_interleave(cols_per_expert)
        zero = torch.zeros(1, device=dev, dtype=torch.int64)
        offsets = torch.cat([zero, torch.full((block_rows,), cols_per_expert, device=dev).cumsum(0)])
        gather = (column_indices * block_rows + row_indices).argsort()
        offsets_t = torch.cat([zero, column_indices.bincount(minlength=block_cols).cumsum(0)])
        meta = dict(offsets=offsets, row_indices=row_indices, column_indices=column_indices,
                    offsets_t=offsets_t, column_indices_t=row_indices[gather], block_offsets_t=gather)
        meta = {name: t.to(idx).contiguous() for name, t in meta.items()}
        return (block_rows * block, block_cols * block), meta

    def sdd():
        shape, m = topology()
        x = torch.randn(shape[0], hidden, device=dev, dtype=dt)
        w1 = torch.randn(shape[1], hidden, device=dev, dtype=dt) / hidden**0.5
        out = torch.empty(m["row_indices"].numel(), block, block, device=dev, dtype=dt)
        tk.sdd(x, w1.t(), shape, out, m["offsets"], m["row_indices"], m["column_indices"])

    def dsd():
        shape, m = topology()
        data = torch.randn(m["row_indices"].numel(), block, block, device=dev, dtype=dt)
        w2 = torch.randn(shape[1], hidden, device=dev, dtype=dt) / ffn**0.5
        out = torch.empty(shape[0], hidden, device=dev, dtype=dt)
        tk.dsd(shape, data, m["offsets"], m["row_indices"], m["column_indices"], m["offsets_t"],
               m["column_indices_t"], m["block_offsets_t"], False, w2, out)

    def dds():
        shape, m = topology()
        x = torch.randn(shape[0], hidden, device=dev, dtype=dt)
        data = torch.randn(m["row_indices"].numel(), block, block, device=dev, dtype=dt)
        out = torch.empty(hidden, shape[1], device=dev, dtype=dt)
        tk.dds(x.t(), shape, data, m["offsets"], m["row_indices"], m["column_indices"], m["offsets_t"],
               m["column_indices_t"], m["block_offsets_t"], False, out)

    return {"sdd": sdd, "dsd": dsd, "dds": dds}
