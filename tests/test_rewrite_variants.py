"""variants.decide on verdicts shaped like the motivating case (DOMAIN.md section 1).

The numbers are inputs to a pure decision function (the compile path has its own tests);
SMEM and registers are the ones DOMAIN.md records for the sm_120 decode kernel.
"""

from __future__ import annotations

import pytest
from sitebuilder import build_site

from autotune_rewrite.errors import UserError
from autotune_rewrite.output.explain_rewrite import error_text
from autotune_rewrite.evidence import (
    CompileJob,
    CompileOutcome,
    ConfigVerdict,
    KernelBundle,
    KernelReport,
    LaunchSpec,
    Occupancy,
)
from autotune_rewrite.findings import LargestFit, SmemOverOptin
from autotune_rewrite.model import ConfigValue
from autotune_rewrite.outcomes import Status
from autotune_rewrite.output import explain_rewrite
from autotune_rewrite.rewrite.facts import CANNOT_LAUNCH, SINGLE_CONFIG, NoSecondWarpCount, Refused, WarpsSpill
from autotune_rewrite.rewrite.choice import MAX_WARPS
from autotune_rewrite.rewrite.decision import config_key
from autotune_rewrite.rewrite.variants import decide
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
    assert explain_rewrite.dropped_why(d.dropped[0]) == (
        "cannot launch: sm_120 (BLOCK_H=16): shared memory 104,704 B > 101,376 B opt-in limit of sm_120, "
        "over by 3,328 B")
    assert explain_rewrite.explanation(d) == [
        "drop BLOCK_T=32 w4 s2: " + explain_rewrite.dropped_why(d.dropped[0]),
        "drop BLOCK_T=32 w8 s2: " + explain_rewrite.dropped_why(d.dropped[1]),
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
    assert "not BLOCK_T=16 w16 s2: 40 spills (vs 0 at 4 warps)" in explain_rewrite.explanation(d)
    assert [x.reason for x in d.dropped] == [CANNOT_LAUNCH, CANNOT_LAUNCH, SINGLE_CONFIG]
    assert explain_rewrite.subject(d) == "Force num_warps=8 for _decode_kernel on sm_120"


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
    assert error_text(err.value) == (
        "k.py::_decode_kernel: no config can launch on sm_120; by the fitted SMEM model (an estimate) the "
        "largest tile that fits is sm_120: BLOCK_T <= 16 at num_stages=2 (predicted 61,568 B of 101,376 B): "
        "add such a config and re-run"
    )


def test_v3_is_skipped_when_no_higher_warp_count_helps(site):
    only = site.__class__(**{**site.__dict__, "configs": (ConfigValue({"BLOCK_T": 16}, num_warps=16, num_stages=2),)})
    d, _ = _decide("v3", only)
    assert d.skipped == NoSecondWarpCount(only.configs[0])
    assert explain_rewrite.fact(d.skipped) == (
        "v3 needs the tile BLOCK_T=16 w16 s2 at two warp counts, but raising num_warps gives no launchable "
        "config without new spills; use v1")


# -- honest choice: forced (one tile) or measured on the target, else refused ------------------
from autotune_rewrite.rewrite.facts import BenchChosen, NotForced, StageNotPipelined, VariantRefused  # noqa: E402
from autotune_rewrite.rewrite.measured import BenchTimes  # noqa: E402

TWO_TILES = (ConfigValue({"BLOCK_T": 16}, num_warps=4, num_stages=2), ConfigValue({"BLOCK_T": 8}, num_warps=4, num_stages=2))
REGS.update({(8, 4, 2): (150, 0), (8, 8, 2): (120, 0), (8, 16, 2): (90, 0)})


def _two_tiles(site):
    return site.__class__(**{**site.__dict__, "configs": TWO_TILES})


@pytest.mark.parametrize("variant", ["v1", "v2", "v3"])
def test_several_launchable_tiles_refuse_the_variant(site, variant):
    with pytest.raises(VariantRefused) as err:
        _decide(variant, _two_tiles(site))
    assert err.value.fact == NotForced(variant, "k.py::_decode_kernel", ("sm_120",), TWO_TILES)
    assert error_text(err.value).startswith(f"{variant} does not apply: 2 tiles launch on sm_120: 16, 8; ")
    assert error_text(err.value).endswith("autotune-rewrite bench . --kernel k.py::_decode_kernel --arch sm_120")


def test_one_launchable_tile_is_forced(site):
    """The case: the SMEM cap leaves BLOCK_T=16 alone, so v1 raises its warps (no bench needed)."""
    d, _ = _decide("v1", site)
    assert labels(d) == ["BLOCK_T=16 w8 s2"] and not any(isinstance(f, BenchChosen) for f in d.explanation)


def _bench(capability, times):
    return BenchTimes("k.py::_decode_kernel", capability, "graph_ms", (1, 64),
                      tuple((label, tuple(per.items())) for label, per in times.items()), "bench.json")


def _decide_with(variant, site, bench):
    reports = [_report(site, site.configs)]
    cands = []
    for _ in range(4):
        d = decide(variant, site, reports, cands, bench)
        if not d.needs:
            return d
        cands.append(_report(site, d.needs))
    raise AssertionError("decide kept asking")


def test_v1_takes_the_fastest_launchable_config_of_a_bench_on_the_target(site):
    two = _two_tiles(site)
    # BLOCK_T=8 w8 is not in the source: decide asks for its compile, then takes it.
    bench = _bench("sm_120", {"BLOCK_T=16 w4 s2": {1: 1.0, 64: 5.0}, "BLOCK_T=8 w8 s2": {1: 1.1, 64: 2.0},
                              "BLOCK_T=32 w4 s2": {1: None, 64: None}})
    d = _decide_with("v1", two, bench)
    assert labels(d) == ["BLOCK_T=8 w8 s2"]
    assert d.configs[0].kept is None and d.configs[0].template == 1  # written like the BLOCK_T=8 original
    chosen = next(f for f in d.explanation if isinstance(f, BenchChosen))
    assert chosen.worst_gap == pytest.approx(0.1)
    assert "measured on sm_120 (graph_ms, bench.json), within +10.0% of the fastest" in explain_rewrite.fact(chosen)


def test_a_bench_from_another_gpu_decides_nothing(site):
    with pytest.raises(VariantRefused) as err:
        _decide_with("v1", _two_tiles(site), _bench("sm_90", {"BLOCK_T=8 w4 s2": {1: 1.0, 64: 1.0}}))
    assert err.value.fact.bench_capability == "sm_90"


def test_v2_skips_a_stage_that_pipelines_nothing(site, monkeypatch):
    """A kernel without a pipelined loop compiles num_stages+1 to the same SMEM: no new config."""
    monkeypatch.setattr(__import__(__name__), "_smem", lambda c: 1152 * 16 + 1348 * 2 * c.kwargs["BLOCK_T"])
    d, _ = _decide("v2", site)
    assert labels(d) == ["BLOCK_T=16 w4 s2", "BLOCK_T=16 w8 s2"]
    skipped = next(f for f in d.explanation if isinstance(f, StageNotPipelined))
    assert skipped.config.label() == "BLOCK_T=16 w8 s3" and skipped.shared_bytes == 61_568


def _on(c: ConfigValue, arch: str, launches: bool) -> ConfigVerdict:
    v = _verdict(c, 20_000 if launches else 200_000, 128)
    return ConfigVerdict(c, arch, v.outcome, v.occupancy)


def test_no_launchable_is_a_target_left_with_no_config_not_the_lack_of_a_common_one(site):
    # Each GPU autotunes over the configs that launch on it: a config for each target is enough,
    # and a target with none is broken whatever launches elsewhere.
    a, b = site.configs[:2]
    disjoint = KernelReport(site, SPEC, (_on(a, "sm_120", True), _on(a, "sm_90", False),
                                         _on(b, "sm_120", False), _on(b, "sm_90", True)))
    assert disjoint.dead_targets == () and disjoint.status is Status.JUDGED
    one_dead = KernelReport(site, SPEC, (_on(a, "sm_120", False), _on(a, "sm_90", True),
                                         _on(b, "sm_120", False), _on(b, "sm_90", True)))
    assert one_dead.dead_targets == ("sm_120",) and one_dead.status is Status.NO_LAUNCHABLE
