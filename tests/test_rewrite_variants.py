"""variants.decide on verdicts shaped like the motivating case (DOMAIN.md section 1).

The numbers are inputs to a pure decision function (the compile path has its own tests);
SMEM and registers are the ones DOMAIN.md records for the sm_120 decode kernel.
"""

from __future__ import annotations

import pytest
from sitebuilder import build_site

from autotune_rewrite.errors import UserError
from autotune_rewrite.check.evidence import (
    CompileJob,
    CompileOutcome,
    ConfigVerdict,
    KernelBundle,
    KernelReport,
    LaunchSpec,
    Occupancy,
)
from autotune_rewrite.check.findings import LargestFit, SmemOverOptin
from autotune_rewrite.model import ConfigValue
from autotune_rewrite.output import explain
from autotune_rewrite.rewrite.facts import CANNOT_LAUNCH, SINGLE_CONFIG, NoSecondWarpCount, Refused, WarpsSpill
from autotune_rewrite.rewrite.variants import MAX_WARPS, config_key, decide
from test_rewrite_transforms import KERNEL

SPEC = LaunchSpec(name="BLOCK_H=16", types=(), constexprs=(("BLOCK_H", 16),))
CAP = 101_376


def _verdict(c: ConfigValue, smem: int, regs: int, spills: int = 0, arch: str = "sm_120") -> ConfigVerdict:
    w = c.effective_num_warps
    job = CompileJob(KernelBundle("k", "", "k.py::k"), (), (), (), w, c.effective_num_stages, 1, None, 120)
    out = CompileOutcome(job, smem, 0, regs, spills, None, "3.6.0", None)
    if smem > CAP:
        occ = Occupancy(0, 0, 0.0, "shared memory", SmemOverOptin(arch, smem, 0, CAP))
    else:
        blocks = min(48 // w, (65536 // (((regs * 32 + 255) // 256) * 256 * w)), 102_400 // (((smem + 1024 + 127) // 128) * 128), 24)
        occ = Occupancy(blocks, blocks * w, blocks * w / 48, "shared memory", None)
    return ConfigVerdict(c, arch, out, occ)


def _smem(c: ConfigValue) -> int:
    return 1152 * 16 + 1348 * c.effective_num_stages * c.kwargs["BLOCK_T"]


# (BLOCK_T, warps, stages) -> (regs, spills)
REGS = {(16, 4, 2): (252, 0), (16, 8, 2): (200, 0), (16, 16, 2): (128, 40), (16, 8, 3): (210, 0), (16, 16, 3): (128, 60),
        (32, 4, 2): (253, 0), (32, 8, 2): (212, 0)}


def _report(site, configs):
    vs = tuple(_verdict(c, _smem(c), *REGS[(c.kwargs["BLOCK_T"], c.effective_num_warps, c.effective_num_stages)]) for c in configs)
    return KernelReport(site, SPEC, vs)


def _decide(variant, site):
    """Run decide the way the pipeline does: compile what it asks for, ask again."""
    reports = [_report(site, site.configs)]
    cands = []
    for _ in range(4):
        d = decide(variant, site, reports, cands)
        if not d.needs:
            return d, cands
        cands.append(_report(site, d.needs))
    raise AssertionError("decide kept asking")


@pytest.fixture
def site():
    return build_site({"k.py": KERNEL}, "_decode_kernel", "k.py")


def labels(d):
    return [p.config.label() for p in d.configs]


def test_prune_drops_the_two_block_t_32_configs(site):
    d, cands = _decide("prune", site)
    assert labels(d) == ["BLOCK_T=16 w4 s2"]
    assert [p.kept for p in d.configs] == [0]
    assert [x.config.label() for x in d.dropped] == ["BLOCK_T=32 w4 s2", "BLOCK_T=32 w8 s2"]
    assert d.dropped[0].reason == CANNOT_LAUNCH
    assert d.dropped[0].refused == (Refused("BLOCK_H=16", "sm_120", SmemOverOptin("sm_120", 104_704, 0, CAP)),)
    assert explain.dropped_why(d.dropped[0]) == (
        "cannot launch: sm_120 (BLOCK_H=16): shared memory 104,704 B > 101,376 B opt-in limit of sm_120, "
        "over by 3,328 B")
    assert explain.explanation(d) == [
        "drop BLOCK_T=32 w4 s2: " + explain.dropped_why(d.dropped[0]),
        "drop BLOCK_T=32 w8 s2: " + explain.dropped_why(d.dropped[1]),
        "keep 1 launchable config(s): BLOCK_T=16 w4 s2",
    ]
    assert cands == []


def test_v1_raises_warps_to_8_and_rejects_16_for_its_spills(site):
    d, cands = _decide("v1", site)
    assert labels(d) == ["BLOCK_T=16 w8 s2"]
    assert d.configs[0].template == 0 and d.configs[0].kept is None
    asked = [c.label() for r in cands for c in (v.config for v in r.verdicts)]
    assert asked == [f"BLOCK_T=16 w{w} s2" for w in (8, 16)] and MAX_WARPS == 16
    w16 = ConfigValue({"BLOCK_T": 16}, num_warps=16, num_stages=2)
    assert [f for f in d.explanation if isinstance(f, WarpsSpill)] == [WarpsSpill(w16, 40, 0, 4)]
    assert "not BLOCK_T=16 w16 s2: 40 spills (vs 0 at 4 warps)" in explain.explanation(d)
    assert [x.reason for x in d.dropped] == [CANNOT_LAUNCH, CANNOT_LAUNCH, SINGLE_CONFIG]
    assert explain.subject(d) == "Force num_warps=8 for _decode_kernel on sm_120"


def test_v2_adds_w8_and_its_stage_plus_one(site):
    d, _ = _decide("v2", site)
    assert labels(d) == ["BLOCK_T=16 w4 s2", "BLOCK_T=16 w8 s2", "BLOCK_T=16 w8 s3"]
    assert [p.kept for p in d.configs] == [0, None, None]


def test_v3_keeps_the_tile_at_two_warp_counts_and_adds_the_bucket(site):
    d, _ = _decide("v3", site)
    assert labels(d) == ["BLOCK_T=16 w4 s2", "BLOCK_T=16 w8 s2"]
    assert d.add_bs_bucket


def test_variants_choose_the_same_again_on_their_own_output(site):
    """Idempotence at the decision level: the chosen list, as the new source, is kept whole."""
    for variant in ("prune", "v1", "v2", "v3"):
        d, _ = _decide(variant, site)
        new_site = site.__class__(**{**site.__dict__, "configs": tuple(p.config for p in d.configs)})
        again, _ = _decide(variant, new_site)
        assert [config_key(p.config) for p in again.configs] == [config_key(p.config) for p in d.configs]
        assert not again.changes_configs, variant


def test_nothing_launches_suggests_the_largest_tile_from_the_smem_model(site):
    big = site.__class__(**{**site.__dict__, "configs": site.configs[1:]})
    fit = LargestFit("sm_120", "BLOCK_T", 16, (("num_stages", 2),), 61_568, CAP)
    report = KernelReport(big, SPEC, _report(big, big.configs).verdicts, largest_fit=(fit,))
    with pytest.raises(UserError) as err:
        decide("v1", big, [report])
    assert str(err.value) == (
        "k.py::_decode_kernel: no config can launch on sm_120; by the fitted SMEM model (an estimate) the "
        "largest tile that fits is sm_120: BLOCK_T <= 16 at num_stages=2 (predicted 61,568 B of 101,376 B): "
        "add such a config and re-run"
    )


def test_v3_is_skipped_when_no_higher_warp_count_helps(site):
    only = site.__class__(**{**site.__dict__, "configs": (ConfigValue({"BLOCK_T": 16}, num_warps=16, num_stages=2),)})
    d, _ = _decide("v3", only)
    assert d.skipped == NoSecondWarpCount(only.configs[0])
    assert explain.fact(d.skipped) == (
        "v3 needs the tile BLOCK_T=16 w16 s2 at two warp counts, but raising num_warps gives no launchable "
        "config without new spills; use v1")
