"""The fleet check's second kernel (benchmarks/device/fleet_check.py --kernels ...fleet_product):
the same matmul with its configs written the way kernel libraries and Triton's fused-attention
tutorial write them: a product of loops filtered by a test of the device (sm_90 times only the
8-warp tiles), so the configs are chosen per target and no loop element can go alone. The prune
for sm_120 + sm_90 adds a condition for the tile dead on both and a guard for the one dead on
sm_120 only. Its launch spec is in autotune-rewrite.toml next to it."""
import torch
import triton
import triton.language as tl


def _keep(c):  # sm_90 times only the 8-warp tiles
    return torch.cuda.get_device_capability()[0] != 9 or c.num_warps == 8


CONFIGS = [
    triton.Config({"BLOCK_M": n // r, "BLOCK_N": n, "BLOCK_K": 32 if n == 64 else 64},
                  num_warps=4 if n == 64 else 8, num_stages=4 if n == 256 else 2)
    for n in [64, 128, 256]
    for r in [1, 2]
    if r == 1 or n == 256
]


@triton.autotune(configs=list(filter(_keep, CONFIGS)), key=["M", "N", "K"])
@triton.jit
def fleet_gemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
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


def launch(a, b, c):
    """C = A @ B (fp16 in, fp32 out), the grid the autotuner's chosen tile needs."""
    M, K = a.shape
    N = b.shape[1]
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))  # noqa: E731
    fleet_gemm_kernel[grid](a, b, c, M, N, K)
    return c
