"""The fleet check's kernel (benchmarks/fleet_check_h200.py): a pipelined fp16 matmul tuned on a
227 KB part. Two configs launch everywhere; 128x256x64 s4 and 256x128x64 s4 compile to
147,456 B of shared memory on sm_120 (over its 101,376 B opt-in) and 196,608 B on sm_90 (under
232,448 B): a fleet of sm_120 and sm_90 keeps them for the H200 and prunes them on sm_120 only.
Its launch spec is in autotune-rewrite.toml next to it. M, N, K are multiples of every tile."""
import triton
import triton.language as tl


# Configs that cannot launch on some of the GPUs this kernel serves, by the compute
# capability Triton reports (cross-compiled by autotune-rewrite, Triton 3.6.0): the
# autotuner skips them there and times every config elsewhere.
# (meta-parameters, num_warps, num_stages)
_FLEET_GEMM_KERNEL_CANNOT_LAUNCH = {
    120: [  # sm_120
        # 147,456 B shared memory > 101,376 B opt-in
        ({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64}, 8, 4),
        # 147,456 B shared memory > 101,376 B opt-in
        ({"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 64}, 8, 4),
    ],
}


def _prune_fleet_gemm_kernel(configs, named_args, **kwargs):
    arch = triton.runtime.driver.active.get_current_target().arch
    dead = _FLEET_GEMM_KERNEL_CANNOT_LAUNCH.get(arch, [])
    return [c for c in configs if (c.kwargs, c.num_warps, c.num_stages) not in dead]


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=4, num_stages=2),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, num_warps=8, num_stages=2),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64}, num_warps=8, num_stages=4),
        triton.Config({"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 64}, num_warps=8, num_stages=4),
    ],
    key=["M", "N", "K"],
    prune_configs_by={"early_config_prune": _prune_fleet_gemm_kernel},
)
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
