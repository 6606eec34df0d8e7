"""Blocks per SM as ``cudaOccMaxActiveBlocksPerMultiprocessor`` (cuda_occupancy.h) computes them.

The function attributes are those of a Triton kernel as Triton's launcher sets them up
(``triton/backends/nvidia/driver.c`` ``loadBinary``): all shared memory is dynamic
(``metadata.shared``), and when it exceeds 48 KB the launcher opts in with
``CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = optin - static`` and
``CU_FUNC_CACHE_PREFER_SHARED``. One block barrier is assumed, as the header's conversion from
``cudaFuncAttributes`` does. On top of the header we apply Triton's own load-time check on
tensor memory (``tmem_size`` over 512 columns raises OutOfResources).

Each limit below names the header function it mirrors; the unit tests work the numbers out by hand.
"""

from __future__ import annotations

from dataclasses import replace

from autotune_rewrite.evidence import CompileOutcome, Occupancy
from autotune_rewrite.findings import (
    Blocked,
    SmemOverBlock,
    SmemOverOptin,
    TmemOver,
    TooManyRegistersPerBlock,
    TooManyRegistersPerThread,
    TooManyThreads,
)
from autotune_rewrite.targets import Arch

INT_MAX = 2**31 - 1
MAX_TMEM_COLUMNS = 512  # Triton's CompiledKernel._init_handles check (Blackwell TMEM per SM)


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def _align_up_carveout(size: int, arch: Arch) -> int | None:
    """cudaOccAlignUpShmemSizeVoltaPlus: the smallest SM shared memory configuration >= size."""
    for step in arch.carveout_steps:
        if size <= step:
            return step
    return None


def _warps_limit(arch: Arch, threads: int) -> int:
    # cudaOccMaxBlocksPerSMWarpsLimit (partitioned global caching is off on CC >= 7).
    if threads > arch.max_threads_per_block:
        return 0
    return arch.max_warps_per_sm // -(-threads // arch.warp_size)


def _regs_limit(arch: Arch, warps: int, registers: int) -> tuple[int, int, int]:
    """cudaOccMaxBlocksPerSMRegsLimit -> (limit, registers allocated per block, registers the
    hardware check assumes per block)."""
    regs_per_warp = _round_up(registers * arch.warp_size, arch.reg_alloc_unit)
    allocated = regs_per_warp * warps
    # The hardware check assumes all sub-partitions allocate at once: the header rounds the
    # warps up to the number of sub-partitions (the warp allocation granularity, 4).
    assumed = regs_per_warp * _round_up(warps, arch.warp_alloc_unit)
    if (
        arch.regs_per_block < assumed
        or arch.regs_per_block < allocated
        or registers > arch.max_regs_per_thread
    ):
        return 0, allocated, assumed
    if regs_per_warp == 0:
        return INT_MAX, allocated, assumed
    warps_per_sub_partition = (arch.regs_per_sm // arch.sub_partitions) // regs_per_warp
    return warps_per_sub_partition * arch.sub_partitions // warps, allocated, assumed


def _smem_limit(arch: Arch, shared: int, static_shared: int) -> tuple[int, int, int]:
    """cudaOccMaxBlocksPerSMSmemLimit -> (limit, bytes allocated per block, per-block limit)."""
    static = static_shared + arch.reserved_smem_per_block
    allocated = _round_up(static + shared, arch.smem_alloc_unit)
    # What Triton's loadBinary sets: opt in above 48 KB, otherwise the default per-block size.
    if shared > 48 * 1024:
        max_dynamic = arch.smem_optin_per_block - static_shared
    else:
        max_dynamic = arch.smem_per_block - static_shared
    # cudaOccSMemPerBlock with FUNC_SHMEM_LIMIT_OPTIN, plus the reserved KB (CC >= 8).
    if static + max_dynamic > arch.smem_per_block:
        per_block = arch.smem_optin_per_block
    else:
        per_block = arch.smem_per_block
    per_block += arch.reserved_smem_per_block
    if shared > max_dynamic or allocated > per_block:
        return 0, allocated, per_block
    # Preference: default carveout or PREFER_SHARED both ask for all of sharedMemPerMultiprocessor.
    preference = _align_up_carveout(arch.smem_per_sm, arch) or arch.smem_per_sm
    if preference >= allocated:
        per_sm = preference
    else:
        per_sm = _align_up_carveout(allocated, arch) or allocated
    return (per_sm // allocated if allocated > 0 else INT_MAX), allocated, per_block


def occupancy(
    arch: Arch,
    num_warps: int,
    registers: int,
    shared_bytes: int,
    num_ctas: int = 1,
    *,
    tmem_columns: int = 0,
    static_shared_bytes: int = 0,
) -> Occupancy:
    """Resident blocks per SM of one CTA of ``num_warps`` warps using ``registers`` per thread
    and ``shared_bytes`` of dynamic shared memory on ``arch``.

    With ``num_ctas > 1`` (thread block clusters) the numbers are per CTA: each CTA of the
    cluster needs the same per-SM resources, so a CTA that cannot fit makes the cluster
    unlaunchable; cluster co-scheduling across SMs is not modelled.
    """
    del num_ctas  # per-CTA resources do not depend on the cluster size (see docstring)
    threads = num_warps * arch.warp_size
    warps = num_warps

    lim_warps = _warps_limit(arch, threads)
    lim_regs, regs_allocated, regs_assumed = _regs_limit(arch, warps, registers)
    lim_smem, smem_allocated, smem_per_block = _smem_limit(arch, shared_bytes, static_shared_bytes)
    lim_blocks = arch.max_blocks_per_sm
    limits: list[tuple[str, int]] = [
        ("warps", lim_warps),
        ("registers", lim_regs),
        ("shared memory", lim_smem),
        ("blocks", lim_blocks),
    ]
    blocks = min(v for _, v in limits)
    # cudaOccMaxBlocksPerSMBlockBarrierLimit (CC >= 9, one barrier per block).
    if arch.major >= 9:
        lim_bars = lim_blocks * arch.barrier_slots_per_block_slot
        limits.append(("barriers", lim_bars))
        blocks = min(blocks, lim_bars)
    limiter = next(name for name, v in limits if v == blocks)

    blocked: Blocked | None = None
    if blocks == 0:
        if lim_warps == 0:
            limiter = "threads"
            blocked = TooManyThreads(threads, num_warps, arch.max_threads_per_block)
        elif lim_regs == 0:
            blocked = _register_limit(arch, registers, threads, regs_allocated, regs_assumed)
        elif lim_smem == 0:
            blocked = _smem_limit_hit(arch, shared_bytes, static_shared_bytes, smem_allocated, smem_per_block)
    if tmem_columns > MAX_TMEM_COLUMNS:
        blocks, limiter = 0, "tensor memory"
        blocked = TmemOver(tmem_columns, MAX_TMEM_COLUMNS)

    return Occupancy(
        blocks_per_sm=blocks,
        warps_per_sm=blocks * warps,
        occupancy=blocks * warps / arch.max_warps_per_sm,
        limiter=limiter,
        blocked=blocked,
        limits=tuple(limits),
    )


def _register_limit(arch: Arch, registers: int, threads: int, allocated: int, assumed: int) -> Blocked:
    if registers > arch.max_regs_per_thread:
        return TooManyRegistersPerThread(registers, arch.max_regs_per_thread)
    return TooManyRegistersPerBlock(registers, threads, max(allocated, assumed), arch.regs_per_block)


def _smem_limit_hit(arch: Arch, shared: int, static_shared: int, allocated: int, per_block: int) -> Blocked:
    usable = arch.smem_optin_per_block - static_shared
    if shared > usable:
        return SmemOverOptin(arch.name, shared, static_shared, usable)
    return SmemOverBlock(arch.name, shared, static_shared, arch.reserved_smem_per_block, allocated, per_block)


def max_launchable_smem(arch: Arch) -> int:
    """The most dynamic shared memory one block can ask for and still launch on ``arch`` (no
    static SMEM, as Triton allocates it all dynamically), by the same rule ``occupancy`` applies:
    a compile over it cannot launch whatever its registers, so it may stop at its SMEM."""
    low, high = 0, arch.smem_per_sm + arch.smem_optin_per_block  # launches at low, not at high
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if _smem_limit(arch, mid, 0)[0] > 0 else (low, mid)
    return low


def _smem_only(outcome: CompileOutcome, arch: Arch) -> Occupancy:
    """A compile stopped at its shared memory: no block fits, registers were never compiled."""
    shared = outcome.shared_bytes or 0
    lim_smem, allocated, per_block = _smem_limit(arch, shared, 0)
    if lim_smem != 0:  # the stop threshold and this rule disagree: a bug, never a guess
        raise ValueError(f"a compile stopped at {shared:,} B of shared memory launches on {arch.name}")
    blocked = replace(_smem_limit_hit(arch, shared, 0, allocated, per_block), registers_compiled=False)
    return Occupancy(blocks_per_sm=0, warps_per_sm=0, occupancy=0.0, limiter="shared memory", blocked=blocked,
                     limits=(("shared memory", 0),))


def occupancy_of(outcome: CompileOutcome, arch: Arch) -> Occupancy | None:
    """Occupancy of a compiled job on ``arch`` (None when the compile failed). The outcome must
    have been compiled for ``arch.capability``: resources differ between architectures."""
    if outcome.error is not None or outcome.shared_bytes is None:
        return None
    if outcome.job.capability != arch.capability:
        raise ValueError(f"outcome compiled for sm_{outcome.job.capability}, not {arch.name}")
    if outcome.stopped_early:
        return _smem_only(outcome, arch)
    if outcome.registers is None:
        return None
    return occupancy(
        arch,
        num_warps=outcome.job.num_warps,
        registers=outcome.registers,
        shared_bytes=outcome.shared_bytes,
        num_ctas=outcome.job.num_ctas,
        tmem_columns=outcome.tmem_bytes or 0,
    )
