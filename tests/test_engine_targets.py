"""Targets: name resolution, and the table cross-checked against Triton's cuda_occupancy.h."""

from __future__ import annotations

import re

import pytest

from autotune_rewrite.errors import UserError
from autotune_rewrite.resources import triton_dir
from autotune_rewrite.targets import ARCHS, DEFAULT_TARGET, PRODUCTS, resolve_target


@pytest.mark.parametrize("text", ["sm_120", "SM_120", "sm120", "120", "12.0", "compute_120"])
def test_arch_spellings(text):
    t = resolve_target(text)
    assert t.arch.name == "sm_120" and t.arch.capability == 120 and t.product is None


@pytest.mark.parametrize(
    ("text", "arch", "sms"),
    [("rtx-pro-6000", "sm_120", 188), ("RTX_PRO_6000", "sm_120", 188), ("H200", "sm_90", 132),
     ("nvidia b200", "sm_100", 148), ("GB10", "sm_121", 48), ("a100", "sm_80", 108)],
)
def test_products(text, arch, sms):
    t = resolve_target(text)
    assert (t.arch.name, t.sm_count) == (arch, sms)


def test_sm_90a_is_sm_90():
    assert resolve_target("sm_90a").arch is ARCHS["sm_90"]


def test_unknown_target_lists_the_valid_names():
    with pytest.raises(UserError) as err:
        resolve_target("sm_75")
    message = str(err.value)
    assert "\n" not in message
    assert "sm_120" in message and "rtx-pro-6000" in message and "'sm_75'" in message


def test_default_is_sm_120():
    assert resolve_target(DEFAULT_TARGET).arch.smem_optin_per_block == 101_376


def test_every_product_maps_to_a_known_arch():
    assert all(p.arch in ARCHS for p in PRODUCTS.values())


def _header() -> str:
    path = triton_dir() / "backends" / "nvidia" / "include" / "cuda_occupancy.h"
    if not path.is_file():
        pytest.skip("triton wheel without cuda_occupancy.h")
    return path.read_text()


def _function(text: str, name: str) -> str:
    start = text.index(f" {name}(")
    return text[start : text.index("\n}\n", start)]


# Max blocks, warps, granularities and sub-partitions are checked by running the header itself
# (tests/test_engine_occupancy.py::test_matches_cuda_occupancy_header); the carveout steps only
# matter past the preferred size, which Triton kernels never reach, so they are read here.
def test_carveout_steps_match_header():
    body = _function(_header(), "cudaOccAlignUpShmemSizeVoltaPlus")
    # CC 12.0: the sizes after "case 12:"; CC 9.0: after "case 9:".
    for major, arch in ((12, ARCHS["sm_120"]), (9, ARCHS["sm_90"])):
        case = body[body.index(f"case {major}:") :]
        case = case[: case.index("return CUDA_OCC_ERROR_INVALID_INPUT")]
        steps = sorted({int(k) * 1024 for k in re.findall(r"\*shMemSize = (\d+) \* 1024", case)})
        assert arch.carveout_steps == (0, *steps), arch.name
