"""Drives apex's OpenFold Triton layer norm (``LayerNormSmallShapeOptImpl``, the autograd
function in apex/contrib/openfold_triton/layer_norm.py) forward and backward, bf16, with an
elementwise-affine weight and bias.

Shapes: a contiguous (2, 2048, 1024) activation (4096 rows of 1024 channels, LLM-like), and a
non-contiguous 4-dim input the way OpenFold normalizes a transposed pair representation: a
(1, 256, 256, 256) tensor transposed on dims 1 and 2 (65536 rows of 256 channels, last-dim stride
1), which takes the ``*_strided`` kernels.

Cases and the autotuned kernels each launches
(all in apex/contrib/openfold_triton/):
- layer_norm_contiguous: _layer_norm_forward_kernels.py::_layer_norm_forward,
  _layer_norm_backward_kernels.py::_layer_norm_backward_dx,
  _layer_norm_backward_kernels.py::_layer_norm_backward_dw_db_partial
- layer_norm_strided: _layer_norm_forward_kernels.py::_layer_norm_forward_strided,
  _layer_norm_backward_kernels.py::_layer_norm_backward_dx_strided,
  _layer_norm_backward_kernels.py::_layer_norm_backward_dw_db_partial_strided
(the backward also launches the non-autotuned _layer_norm_backward_buf_reduce.)

Note: _layer_norm_forward_kernels.py imports ``packaging.version`` at module level, so the
device needs the ``packaging`` distribution besides torch, triton and numpy (the H200 machine
has it).
"""

from __future__ import annotations

REPO = "NVIDIA__apex"
SOURCE_ROOT = ""


def cases(load):
    import torch

    ln = load("apex/contrib/openfold_triton/layer_norm.py")
    dev, dt = "cuda", torch.bfloat16

    def run(x, channels):
        w = torch.randn(channels, device=dev, dtype=dt, requires_grad=True)
        b = torch.randn(channels, device=dev, dtype=dt, requires_grad=True)
        x.requires_grad_(True)
        y = ln.LayerNormSmallShapeOptImpl.apply(x, (channels,), w, b, 1e-5)
        y.backward(torch.randn_like(y))

    def contiguous():
        run(torch.randn(2, 2048, 1024, device=dev, dtype=dt), 1024)

    def strided():
        x = torch.randn(1, 256, 256, 256, device=dev, dtype=dt).transpose(1, 2)
        assert not x.is_contiguous()
        run(x.detach(), 256)

    return {"layer_norm_contiguous": contiguous, "layer_norm_strided": strided}
