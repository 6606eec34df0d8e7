"""Occupancy: hand-worked cases from cuda_occupancy.h, then the header itself as the oracle."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from autotune_rewrite.findings import SmemOverOptin, TmemOver, TooManyRegistersPerBlock, TooManyThreads
from autotune_rewrite.check.occupancy import occupancy
from autotune_rewrite.output.explain import occupancy_reason
from autotune_rewrite.resources import triton_dir
from autotune_rewrite.targets import ARCHS

SM80, SM86, SM90, SM120 = (ARCHS[n] for n in ("sm_80", "sm_86", "sm_90", "sm_120"))
FIXTURES = Path(__file__).parent / "fixtures" / "engine"


def test_shared_memory_limited_motivating_config():
    # sm_120, BLOCK_T=16 w4 s2: 4 warps, 252 regs, 61,568 B.
    # warps: 48 // 4 = 12
    # registers: 252*32 = 8,064 -> round up to 256: 8,192 per warp; 65,536/4 = 16,384 per
    #   sub-partition -> 2 warps each -> 8 warps per SM -> 8 // 4 = 2 blocks
    # shared: 61,568 + 1,024 reserved = 62,592 (a multiple of 128); 102,400 // 62,592 = 1
    # blocks: 24; barriers (CC >= 9): 24 slots x 1 = 24
    occ = occupancy(SM120, num_warps=4, registers=252, shared_bytes=61_568)
    assert occ.blocks_per_sm == 1
    assert occ.warps_per_sm == 4
    assert occ.occupancy == pytest.approx(4 / 48)
    assert occ.limiter == "shared memory"
    assert occ.blocked is None
    assert dict(occ.limits) == {"warps": 12, "registers": 2, "shared memory": 1, "blocks": 24, "barriers": 24}


def test_register_limited():
    # sm_90, 8 warps, 128 regs, 16 KB: 128*32 = 4,096 per warp; 16,384 // 4,096 = 4 warps per
    # sub-partition -> 16 per SM -> 16 // 8 = 2 blocks. warps 64 // 8 = 8;
    # shared (16,384 + 1,024) = 17,408 -> 233,472 // 17,408 = 13; blocks 32.
    occ = occupancy(SM90, num_warps=8, registers=128, shared_bytes=16_384)
    assert (occ.blocks_per_sm, occ.warps_per_sm, occ.limiter) == (2, 16, "registers")
    assert occ.occupancy == pytest.approx(16 / 64)
    assert dict(occ.limits)["shared memory"] == 13


def test_warp_limited():
    # sm_120, 32 warps (1,024 threads), 32 regs, no SMEM: warps 48 // 32 = 1;
    # registers 32*32 = 1,024 per warp -> 16 per sub-partition -> 64 // 32 = 2;
    # shared: only the reserved 1,024 B -> 102,400 // 1,024 = 100.
    occ = occupancy(SM120, num_warps=32, registers=32, shared_bytes=0)
    assert (occ.blocks_per_sm, occ.warps_per_sm, occ.limiter) == (1, 32, "warps")
    assert occ.occupancy == pytest.approx(32 / 48)


def test_block_limited():
    # sm_86, 1 warp, 16 regs, no SMEM: warps 48; registers 512 per warp -> 32 per sub-partition
    # -> 128 blocks; shared 100; the block limit of CC 8.6 is 16 (and no barrier limit < CC 9).
    occ = occupancy(SM86, num_warps=1, registers=16, shared_bytes=0)
    assert (occ.blocks_per_sm, occ.warps_per_sm, occ.limiter) == (16, 16, "blocks")
    assert "barriers" not in dict(occ.limits)


def test_cannot_launch_shared_memory_over_opt_in():
    # sm_120, BLOCK_T=32 w4 s2: 104,704 + 1,024 = 105,728 > 101,376 + 1,024 = 102,400.
    occ = occupancy(SM120, num_warps=4, registers=253, shared_bytes=104_704)
    assert occ.blocks_per_sm == 0 and occ.warps_per_sm == 0 and occ.occupancy == 0
    assert occ.limiter == "shared memory"
    assert occ.blocked == SmemOverOptin("sm_120", 104_704, 0, 101_376)
    assert occupancy_reason(occ.blocked) == "shared memory 104,704 B > 101,376 B opt-in limit of sm_120, over by 3,328 B"


def test_cannot_launch_registers_per_block():
    # 255 regs x 32 = 8,160 -> 8,192 per warp x 32 warps = 262,144 > 65,536 registers per block.
    occ = occupancy(SM120, num_warps=32, registers=255, shared_bytes=0)
    assert occ.blocks_per_sm == 0 and occ.limiter == "registers"
    assert occ.blocked == TooManyRegistersPerBlock(255, 1024, 262_144, 65_536)
    assert occupancy_reason(occ.blocked) == "registers 255/thread x 1,024 threads > 65,536 per block (262,144 as allocated)"


def test_cannot_launch_threads():
    occ = occupancy(SM90, num_warps=64, registers=32, shared_bytes=0)
    assert (occ.blocks_per_sm, occ.limiter) == (0, "threads")
    assert occ.blocked == TooManyThreads(2048, 64, 1024)
    assert occupancy_reason(occ.blocked) == "2,048 threads (num_warps=64) > 1,024 per block"


def test_opt_in_boundary_is_exact():
    # sm_80: 166,912 B + 1,024 = 167,936 = all of the SM -> exactly one block; one byte more fails.
    assert occupancy(SM80, 4, 64, 166_912).blocks_per_sm == 1
    over = occupancy(SM80, 4, 64, 166_913)
    assert over.blocks_per_sm == 0
    assert occupancy_reason(over.blocked) == "shared memory 166,913 B > 166,912 B opt-in limit of sm_80, over by 1 B"


def test_tensor_memory_over_512_columns():
    occ = occupancy(ARCHS["sm_100"], 4, 64, 1024, tmem_columns=1024)
    assert (occ.blocks_per_sm, occ.limiter) == (0, "tensor memory")
    assert occ.blocked == TmemOver(1024, 512)
    assert occupancy_reason(occ.blocked) == "tensor memory 1,024 columns > 512 per SM"


# --- the header as oracle --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def header_harness(tmp_path_factory) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    include = triton_dir() / "backends" / "nvidia" / "include"
    if cc is None or not (include / "cuda_occupancy.h").is_file():
        pytest.skip("needs a C compiler and triton's cuda_occupancy.h")
    exe = tmp_path_factory.mktemp("occ") / "harness"
    subprocess.run(
        [cc, "-O1", "-x", "c", f"-I{include}", "-o", str(exe), str(FIXTURES / "occupancy_harness.c")],
        check=True,
    )
    return exe


# sm_121 is left out: the header's carveout table only knows CC 12.0 (CUDA_OCC_ERROR_UNKNOWN_DEVICE).
@pytest.mark.parametrize("arch", [a for a in ARCHS.values() if a.name != "sm_121"], ids=lambda a: a.name)
def test_matches_cuda_occupancy_header(header_harness, arch):
    warps = [1, 2, 4, 8, 16, 32]
    regs = [0, 16, 32, 40, 64, 72, 96, 128, 168, 200, 232, 255]
    smem = [0, 1, 4096, 12_345, 49_152, 49_153, 65_536, 99_999, 101_376, 101_377, 166_912,
            166_913, 200_000, 232_448, 232_449]
    cases = [(w, r, s) for w in warps for r in regs for s in smem]
    # plus a reproducible spread of arbitrary values. Registers stop at 255, the ISA limit ptxas
    # never exceeds: the header's per-thread check uses 256 (the two differ only at 256).
    rng = random.Random(arch.capability)
    cases += [(rng.randint(1, 40), rng.randint(0, 255), rng.randint(0, 240_000)) for _ in range(3000)]
    lines = [
        f"{arch.major} {arch.minor} {arch.max_threads_per_block} {arch.max_warps_per_sm * 32} "
        f"{arch.regs_per_block} {arch.regs_per_sm} {arch.smem_per_block} {arch.smem_per_sm} "
        f"{arch.smem_optin_per_block} {arch.reserved_smem_per_block} {r} {w * 32} {s}"
        for w, r, s in cases
    ]
    out = subprocess.run([str(header_harness)], input="\n".join(lines) + "\n", capture_output=True,
                         text=True, check=True).stdout.split("\n")
    for (w, r, s), line in zip(cases, out):
        status, blocks, l_regs, l_smem, l_warps, l_blocks, _ = (int(x) for x in line.split())
        assert status == 0, (arch.name, w, r, s)
        occ = occupancy(arch, num_warps=w, registers=r, shared_bytes=s)
        limits = dict(occ.limits)
        assert occ.blocks_per_sm == blocks, (arch.name, w, r, s, line)
        assert (limits["registers"], limits["shared memory"], limits["warps"], limits["blocks"]) == (
            l_regs, l_smem, l_warps, l_blocks), (arch.name, w, r, s, line)
