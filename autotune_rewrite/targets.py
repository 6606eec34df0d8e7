"""GPU targets as data: each architecture's launch limits and the products that use it.

The numbers come from two places, kept in agreement by hand:
- ``cuda_occupancy.h`` as shipped in the Triton wheel (``triton/backends/nvidia/include/``,
  CUDA 12/13 header, ``__CUDA_OCC_MAJOR__`` 12): allocation granularities
  (``cudaOccSMemAllocationGranularity``, ``cudaOccRegAllocationGranularity``), sub-partitions,
  max blocks per SM (``cudaOccMaxBlocksPerMultiprocessor``), the shared memory carveout steps
  (``cudaOccAlignUpShmemSizeVoltaPlus``) and the barrier slots
  (``cudaOccMaxBlocksPerSMBlockBarrierLimit``).
- The device properties the driver reports (``cudaDeviceProp``; DOMAIN.md section 5): shared
  memory per SM and per block (default and opt-in), the 1 KB the driver reserves per block,
  registers, threads and warps.

sm_121 (GB10): the header in Triton 3.6 knows only minor 0 of CC 12 for its carveout table
(``CUDA_OCC_ERROR_UNKNOWN_DEVICE`` for 12.1); GB10 reports the same per-SM limits as 12.0, so
we use the 12.0 table for it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from autotune_rewrite.errors import UserError

KIB = 1024


@dataclass(frozen=True)
class Arch:
    name: str  # "sm_120"
    capability: int  # 120 (major * 10 + minor), as GPUTarget("cuda", 120, 32) wants it
    smem_per_sm: int  # sharedMemPerMultiprocessor (bytes)
    smem_per_block: int  # sharedMemPerBlock: the limit without opting in (48 KB)
    smem_optin_per_block: int  # sharedMemPerBlockOptin: the most dynamic SMEM one block may ask for
    reserved_smem_per_block: int  # reservedSharedMemPerBlock: the driver's 1 KB per block (CC >= 8)
    regs_per_sm: int  # regsPerMultiprocessor
    regs_per_block: int  # regsPerBlock
    max_regs_per_thread: int  # 255: the ISA/ptxas limit (the header's allocation table says 256)
    max_threads_per_block: int
    max_warps_per_sm: int  # maxThreadsPerMultiprocessor / warpSize
    max_blocks_per_sm: int  # cudaOccMaxBlocksPerMultiprocessor
    reg_alloc_unit: int  # registers are allocated per warp in units of this many
    smem_alloc_unit: int  # shared memory per block is allocated in units of this many bytes
    warp_alloc_unit: int  # the hardware register check rounds a block's warps up to this (= sub-partitions)
    sub_partitions: int  # warp schedulers per SM; registers are split between them
    carveout_steps: tuple[int, ...]  # shared memory sizes (bytes) an SM can be configured to
    barrier_slots_per_block_slot: int  # named-barrier slots per block slot (CC >= 9 barrier limit)
    warp_size: int = 32

    @property
    def major(self) -> int:
        return self.capability // 10

    @property
    def minor(self) -> int:
        return self.capability % 10

    @property
    def dotted(self) -> str:
        return f"{self.major}.{self.minor}"


@dataclass(frozen=True)
class Target:
    """What the user asked for: an architecture, optionally a product (which adds an SM count)."""

    name: str  # canonical spelling of what was asked: "sm_120" or "rtx-pro-6000"
    arch: Arch
    product: str | None = None  # "NVIDIA RTX PRO 6000 Blackwell"
    sm_count: int | None = None

    @property
    def label(self) -> str:
        return self.arch.name if self.product is None else f"{self.name} ({self.arch.name})"


def _steps(*kib: int) -> tuple[int, ...]:
    return tuple(k * KIB for k in kib)


# cudaOccAlignUpShmemSizeVoltaPlus: the shared memory configurations per capability.
_STEPS_GA100 = _steps(0, 8, 16, 32, 64, 100, 132, 164)  # 8.0 (and 8.7)
_STEPS_100K = _steps(0, 8, 16, 32, 64, 100)  # 8.6, 8.9, 12.0
_STEPS_228K = _steps(0, 8, 16, 32, 64, 100, 132, 164, 196, 228)  # 9.0, 10.0, 10.1


def _arch(
    cap: int,
    smem_per_sm: int,
    optin: int,
    max_warps: int,
    max_blocks: int,
    steps: tuple[int, ...],
    barrier_slots: int,
) -> Arch:
    return Arch(
        name=f"sm_{cap}",
        capability=cap,
        smem_per_sm=smem_per_sm,
        smem_per_block=48 * KIB,
        smem_optin_per_block=optin,
        reserved_smem_per_block=1 * KIB,
        regs_per_sm=65536,
        regs_per_block=65536,
        max_regs_per_thread=255,
        max_threads_per_block=1024,
        max_warps_per_sm=max_warps,
        max_blocks_per_sm=max_blocks,
        reg_alloc_unit=256,
        smem_alloc_unit=128,
        warp_alloc_unit=4,
        sub_partitions=4,
        carveout_steps=steps,
        barrier_slots_per_block_slot=barrier_slots,
    )


ARCHS: dict[str, Arch] = {
    a.name: a
    for a in (
        _arch(80, 167_936, 166_912, 64, 32, _STEPS_GA100, 2),
        _arch(86, 102_400, 101_376, 48, 16, _STEPS_100K, 1),
        _arch(89, 102_400, 101_376, 48, 24, _STEPS_100K, 1),
        _arch(90, 233_472, 232_448, 64, 32, _STEPS_228K, 2),
        _arch(100, 233_472, 232_448, 64, 32, _STEPS_228K, 2),
        _arch(120, 102_400, 101_376, 48, 24, _STEPS_100K, 1),
        _arch(121, 102_400, 101_376, 48, 24, _STEPS_100K, 1),
    )
}


@dataclass(frozen=True)
class Product:
    key: str  # what the user types, lower-case with hyphens
    name: str
    arch: str
    sm_count: int


PRODUCTS: dict[str, Product] = {
    p.key: p
    for p in (
        Product("a100", "NVIDIA A100", "sm_80", 108),
        Product("a10", "NVIDIA A10", "sm_86", 72),
        Product("rtx-3090", "NVIDIA GeForce RTX 3090", "sm_86", 82),
        Product("rtx-a6000", "NVIDIA RTX A6000", "sm_86", 84),
        Product("l4", "NVIDIA L4", "sm_89", 58),
        Product("l40s", "NVIDIA L40S", "sm_89", 142),
        Product("rtx-4090", "NVIDIA GeForce RTX 4090", "sm_89", 128),
        Product("h100", "NVIDIA H100 SXM", "sm_90", 132),
        Product("h100-pcie", "NVIDIA H100 PCIe", "sm_90", 114),
        Product("h200", "NVIDIA H200", "sm_90", 132),
        Product("b200", "NVIDIA B200", "sm_100", 148),
        Product("rtx-pro-6000", "NVIDIA RTX PRO 6000 Blackwell", "sm_120", 188),
        Product("rtx-5090", "NVIDIA GeForce RTX 5090", "sm_120", 170),
        Product("gb10", "NVIDIA GB10 (DGX Spark)", "sm_121", 48),
    )
}

DEFAULT_TARGET = "sm_120"

# "sm_120", "sm120", "sm_90a", "compute_90", "120", "12.0", "12"
_ARCH_RE = re.compile(r"^(?:sm_?|compute_?)?(\d{2,3})a?$|^(\d{1,2})\.(\d)$")


def _arch_from_text(text: str) -> Arch | None:
    m = _ARCH_RE.match(text)
    if m is None:
        return None
    cap = int(m.group(1)) if m.group(1) else int(m.group(2)) * 10 + int(m.group(3))
    return ARCHS.get(f"sm_{cap}")


def resolve_target(name: str) -> Target:
    """"sm_120" / "120" / "12.0" / "RTX-PRO-6000" (any case, "_" or " " for "-") -> Target.

    Raises UserError naming the valid choices."""
    text = name.strip().lower()
    arch = _arch_from_text(text)
    if arch is not None:
        return Target(name=arch.name, arch=arch)
    key = re.sub(r"[\s_]+", "-", text)
    key = key.removeprefix("nvidia-").removeprefix("geforce-")
    product = PRODUCTS.get(key)
    if product is not None:
        return Target(
            name=product.key,
            arch=ARCHS[product.arch],
            product=product.name,
            sm_count=product.sm_count,
        )
    raise UserError(
        f"unknown target {name!r}: use an architecture ({', '.join(ARCHS)}) "
        f"or a product ({', '.join(PRODUCTS)})"
    )
