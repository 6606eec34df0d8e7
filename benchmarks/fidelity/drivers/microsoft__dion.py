"""Drives dion's Triton Newton-Schulz lines (dion/newton_schulz_triton.py ``ns_line_1``,
``ns_line_2``, ``ns_line_3``: the three launchers ``newton_schulz_triton_fast``, the AOL-rescaled
4-iteration orthogonalization of the Muon/Dion optimizers, calls every iteration) on the update of
a square 4096 x 4096 projection (an attention weight) and of a wide 4096 x 14336 one (an FFN
weight, rows <= columns, so not transposed), bf16, with the operands one iteration sees: X
normalized to unit Frobenius norm, A = X X^T, B = b A + c A A^T (symmetric, 4096 x 4096).

One launcher per case rather than the whole iteration: the three autotuners hold 30 + 30 + 45
configs, and compiling all of them in one case process would come close to the runner's per-case
time limit.

Cases and the autotuned kernels (dion/newton_schulz_triton.py::NAME) each should launch:

- ``ns_line_1_4096x4096``, ``ns_line_1_4096x14336`` (A = X X^T, K 4096 / 14336): ns_line_1_kernel.
- ``ns_line_2_4096`` (B = b A + c A A^T; the Gram matrix is 4096 x 4096 for both weights):
  ns_line_2_kernel.
- ``ns_line_3_4096x4096``, ``ns_line_3_4096x14336`` (a X + B X, N 4096 / 14336): ns_line_3_kernel.

The plain ``newton_schulz_triton`` uses ns_line_1 / ns_line_2 and torch.addmm, no other kernel.
"""

from __future__ import annotations

REPO = "microsoft__dion"
SOURCE_ROOT = ""


def cases(load):
    import torch

    ns = load("dion/newton_schulz_triton.py")
    dev, dt = "cuda", torch.bfloat16
    a, b, c = 4.7505, -6.0861, 2.1790  # one of newton_schulz_triton_fast's iterations

    def normalized(rows, cols):
        x = torch.randn(rows, cols, device=dev, dtype=torch.float32)
        return (x / x.norm()).to(dt)

    def gram(rows, cols):
        x = normalized(rows, cols)
        return x, x @ x.mT

    def line_1(rows, cols):
        def case():
            ns.ns_line_1(normalized(rows, cols))

        return case

    def line_2():
        _, A = gram(4096, 14336)
        ns.ns_line_2(A, alpha=c, beta=b)

    def line_3(rows, cols):
        def case():
            x, A = gram(rows, cols)
            B = b * A + c * (A @ A)
            ns.ns_line_3(B, x, a)

        return case

    return {
        "ns_line_1_4096x4096": line_1(4096, 4096),
        "ns_line_1_4096x14336": line_1(4096, 14336),
        "ns_line_2_4096": line_2,
        "ns_line_3_4096x4096": line_3(4096, 4096),
        "ns_line_3_4096x14336": line_3(4096, 14336),
    }
