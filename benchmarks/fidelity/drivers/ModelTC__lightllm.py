"""Drives lightllm's weight-quantized linear ops (lightllm/common/basemodel/triton_kernel/) the way a
Llama/Mistral-7B-sized layer calls them in prefill: fp16 activations of 2048 tokens, hidden 4096,
FFN 14336.

Cases and the autotuned kernels each should launch:

- ``dequant_int8``: ``matmul_dequantize_int8`` (int8 weight [4096, 14336] with a per-column fp16
  scale, dequantized to fp16, then torch.mm):
  dequantize_gemm_int8.py::dequantize_kernel.
- ``quant_gemm_int8``: ``matmul_quantize_int8`` (per-row int8 quantization of the fp16 activation,
  then int8 x int8 GEMM against a column-major int8 weight [4096, 14336] -> [2048, 14336], fp16
  out; the split-K=2 configs accumulate with fp16 atomics):
  quantize_gemm_int8.py::quantize_int8_perrow_kernel, quantize_gemm_int8.py::matmul_kernel.
- ``int4_gptq``: ``matmul_dequantize_int4_gptq`` (GPTQ-packed int4 weight, group 128, K 4096 ->
  N 14336): dequantize_gemm_int4.py::matmul4_kernel.
- ``int4_s2``: ``matmul_dequantize_int4_s2`` (fused dequant GEMM, split-K 1/2 configs, K 14336 ->
  N 4096): dequantize_gemm_int4.py::matmul_kernel.
- ``int4_s1``: ``matmul_dequantize_int4_s1`` (dequantize the whole int4 weight, then torch.mm,
  K 4096 -> N 14336): dequantize_gemm_int4.py::dequantize_kernel.

The int4 layout is the one the module's own ``quantize_int4`` produces: qweight int32 [K/8, N]
(eight 4-bit values along K per word), scales fp16 [K/128, N], zero points int32 [K/128, N/8]
(eight along N per word); the packed words are random bits here.

Every autotuned kernel of the repository is reached; nothing is skipped.
"""

from __future__ import annotations

REPO = "ModelTC__lightllm"
SOURCE_ROOT = ""


def cases(load):
    import torch

    base = "lightllm/common/basemodel/triton_kernel/"
    deq8 = load(base + "dequantize_gemm_int8.py")
    q8 = load(base + "quantize_gemm_int8.py")
    deq4 = load(base + "dequantize_gemm_int4.py")
    tokens, hidden, ffn, group = 2048, 4096, 14336, 128
    dev, dt = "cuda", torch.float16

    def packed_int32(rows, cols):
        return torch.randint(0, 256, (rows, cols * 4), device=dev, dtype=torch.uint8).view(torch.int32)

    def int4_weight(k, n):
        qweight = packed_int32(k // 8, n)
        scales = (torch.rand(k // group, n, device=dev) * 0.01 + 1e-3).to(dt)
        qzeros = packed_int32(k // group, n // 8)
        return qweight, scales, qzeros

    def dequant_int8():
        a = torch.randn(tokens, hidden, device=dev, dtype=dt)
        b = torch.randint(-127, 128, (hidden, ffn), device=dev, dtype=torch.int8)
        b_scale = (torch.rand(ffn, device=dev) * 0.01 + 1e-3).to(dt)
        deq8.matmul_dequantize_int8(a, b, b_scale)

    def quant_gemm_int8():
        a = torch.randn(tokens, hidden, device=dev, dtype=dt)
        # column-major [K, N], the layout the module's quantize_int8(axis=0) hands the GEMM
        b = torch.randint(-127, 128, (ffn, hidden), device=dev, dtype=torch.int8).t()
        b_scale = (torch.rand(ffn, device=dev) * 0.01 + 1e-3).to(dt)
        q8.matmul_quantize_int8(a, b, b_scale)

    def int4_gptq():
        x = torch.randn(tokens, hidden, device=dev, dtype=dt)
        qweight, scales, qzeros = int4_weight(hidden, ffn)
        deq4.matmul_dequantize_int4_gptq(x, qweight, scales, qzeros, group)

    def int4_s2():
        x = torch.randn(tokens, ffn, device=dev, dtype=dt)
        qweight, scales, qzeros = int4_weight(ffn, hidden)
        deq4.matmul_dequantize_int4_s2(x, qweight, scales, qzeros, group)

    def int4_s1():
        x = torch.randn(tokens, hidden, device=dev, dtype=dt)
        qweight, scales, qzeros = int4_weight(hidden, ffn)
        deq4.matmul_dequantize_int4_s1(x, qweight, scales, qzeros, group)

    return {
        "dequant_int8": dequant_int8,
        "quant_gemm_int8": quant_gemm_int8,
        "int4_gptq": int4_gptq,
        "int4_s2": int4_s2,
        "int4_s1": int4_s1,
    }
