"""recommend(): timing tables (data, in ms) -> the variant to ship. Pure, CPU only."""

from __future__ import annotations

import pytest

from autotune_rewrite.timings.recommend import recommend
from autotune_rewrite.bench.bench import bucket_of, parse_batches
from autotune_rewrite.errors import UserError

W4, W8, S3, BT32 = "BLOCK_T=16 w4 s2", "BLOCK_T=16 w8 s2", "BLOCK_T=16 w8 s3", "BLOCK_T=32 w8 s2"
# What the pipeline decides for the example on sm_120 (see test_bench_plan / the README).
VARIANTS = {"prune": (W4,), "v1": (W8,), "v2": (W4, W8), "v3": (W4, W8)}
BATCHES = (1, 8, 32, 64, 96)
BUCKET = bucket_of((8, 48))  # 1 / 32 / 96


def _table(**cols):
    return {label: dict(zip(BATCHES, ms)) for label, ms in cols.items()}


def test_bucket_of_matches_the_rewriters_values():
    assert [BUCKET(b) for b in (1, 8, 9, 48, 49, 96, 500)] == [1, 1, 32, 32, 96, 96, 96]


def test_v1_when_its_config_is_within_2_percent_everywhere():
    times = {W4: dict(zip(BATCHES, [0.050, 0.080, 0.200, 0.390, 0.600])),
             W8: dict(zip(BATCHES, [0.0505, 0.0790, 0.170, 0.330, 0.500]))}
    rec = recommend(times, VARIANTS, BATCHES, BUCKET)
    assert rec.variant == "v1"
    v1 = next(s for s in rec.variants if s.variant == "v1")
    assert v1.worst_gap == pytest.approx(0.0505 / 0.050 - 1)
    assert [b.best for b in rec.batches] == [W4, W8, W8, W8, W8]
    assert "within 2%" in rec.reason


def test_v3_when_the_small_batch_bucket_prefers_w4():
    times = {W4: dict(zip(BATCHES, [0.040, 0.060, 0.200, 0.390, 0.600])),
             W8: dict(zip(BATCHES, [0.050, 0.075, 0.170, 0.330, 0.500]))}
    rec = recommend(times, VARIANTS, BATCHES, BUCKET)
    assert rec.variant == "v3"
    (pref,) = rec.bucket_preferences
    assert (pref.bucket, pref.batches, pref.config, pref.v1_config) == (1, (1, 8), W4, W8)
    assert pref.gain == pytest.approx(0.25)  # min over B=1 (0.050/0.040) and B=8 (0.075/0.060)
    assert "bucket 1 (B=1,8) prefers BLOCK_T=16 w4 s2" in rec.reason
    v3 = next(s for s in rec.variants if s.variant == "v3")
    assert [p.config for p in v3.per_batch] == [W4, W4, W8, W8, W8]
    assert v3.worst_gap == pytest.approx(0.0)


def test_a_single_config_prune_beats_v3_when_w4_wins_everywhere():
    times = {W4: dict(zip(BATCHES, [0.040, 0.060, 0.150, 0.300, 0.450])),
             W8: dict(zip(BATCHES, [0.050, 0.075, 0.170, 0.330, 0.500]))}
    rec = recommend(times, VARIANTS, BATCHES, BUCKET)
    assert rec.variant == "prune"
    assert "single config BLOCK_T=16 w4 s2" in rec.reason


def test_multi_config_variant_is_scored_at_its_worst_warmup_batch():
    # One key for every batch: v2 keeps whatever wins at the batch that warms up first.
    times = {W4: dict(zip(BATCHES, [0.040, 0.060, 0.200, 0.400, 0.600])),
             W8: dict(zip(BATCHES, [0.050, 0.075, 0.170, 0.330, 0.500]))}
    rec = recommend(times, VARIANTS, BATCHES, BUCKET)
    v2 = next(s for s in rec.variants if s.variant == "v2")
    # Warm-up at B=1 picks w4, which is 0.600/0.500 - 1 = 20% slow at B=96; at B=96 it picks w8, 25% slow at B=1.
    assert v2.worst_gap == pytest.approx(0.25)
    assert [p.config for p in v2.per_batch] == [W8] * 5
    assert "worst warm-up batch" in v2.model


def test_exhaustive_best_counts_configs_no_variant_may_ship():
    times = {W4: dict(zip(BATCHES, [0.050, 0.080, 0.200, 0.390, 0.600])),
             W8: dict(zip(BATCHES, [0.0505, 0.079, 0.170, 0.330, 0.500])),
             BT32: dict(zip(BATCHES, [0.045, 0.070, 0.170, 0.300, 0.510]))}
    rec = recommend(times, VARIANTS, BATCHES, BUCKET)
    assert rec.variant == "v1"  # the rule compares with shippable configs only
    assert [b.exhaustive for b in rec.batches] == [BT32, BT32, W8, BT32, W8]  # ties go to the sorted-first label
    gaps = dict(rec.recommended_vs_exhaustive)
    assert gaps[1] == pytest.approx(0.0505 / 0.045 - 1)
    assert gaps[96] == pytest.approx(0.0)


def test_a_config_that_did_not_run_cannot_be_recommended_alone():
    times = {W4: dict(zip(BATCHES, [0.050, 0.080, 0.200, 0.390, 0.600])),
             W8: {1: 0.050, 8: 0.080, 32: 0.200, 64: 0.390, 96: None}}
    rec = recommend(times, VARIANTS, BATCHES, BUCKET)
    v1 = next(s for s in rec.variants if s.variant == "v1")
    assert v1.worst_gap is None and v1.per_batch[-1].gap is None
    assert rec.variant == "prune"


def test_no_variant_within_tolerance_names_the_closest():
    variants = {"v1": (W8,), "prune": (W4,)}
    times = {W4: {1: 0.040, 96: 0.600}, W8: {1: 0.050, 96: 0.500}}
    rec = recommend(times, variants, (1, 96))
    assert rec.variant == "prune"  # 20% worst, v1 25%
    assert rec.reason.startswith("no variant is within 2%") and "+20.0%" in rec.reason


def test_multi_config_v2_when_it_alone_is_within_tolerance():
    variants = {"v1": (W8,), "v2": (W4, W8)}
    times = {W4: {1: 0.040, 96: 0.485}, W8: {1: 0.050, 96: 0.500}}
    rec = recommend(times, variants, (1, 96))
    assert rec.variant == "v2" and "after its warm-up benchmark" in rec.reason


def test_nothing_timed_gives_no_recommendation():
    rec = recommend({W8: {1: None}}, {"v1": (W8,)}, (1,))
    assert rec.variant is None and "no variant" in rec.reason


@pytest.mark.parametrize("text", ["", "0,8", "a,b", "-1"])
def test_bad_batch_lists_are_user_errors(text):
    with pytest.raises(UserError):
        parse_batches(text)


def test_batches_are_sorted_and_deduplicated():
    assert parse_batches("96,1,8,8") == (1, 8, 96)
