"""A pipelined fp16/fp8 matmul whose configs were tuned on a 227 KB part: the larger tiles fit
sm_90's shared memory and not sm_120's 99 KB."""
import triton
import triton.language as tl


import torch


def _keep(c):  # sm_90 times only the 8-warp tiles
    return torch.cuda.get_device_capability()[0] != 9 or c.num_warps == 8


CONFIGS = [
    triton.Config({"BLOCK_M": n // r, "BLOCK_N": n, "BLOCK_K": 32 if n == 64 else 64},
                  num_warps=4 if n == 64 else 8, num_stages=4 if n == 256 else 2)
    for n in [64, 128, 256]
    for r in [1, 2]
    if r == 1 or n == 256
]


@triton.autotune(
    configs=list(filter(_keep, CONFIGS)),
    key=["M", "N", "K"],
)
@triton.jit
def gemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a = a_ptr + rm[:, None] * K + rk[None, :]
    b = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        acc += tl.dot(tl.load(a), tl.load(b))
        a += BLOCK_K
        b += BLOCK_K * N
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))
