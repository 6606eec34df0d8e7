"""output/explain.py and explain_rewrite.py: the one place that words the stages' typed facts.

Input: a fact with its numbers; expected: the sentence every report prints, and the JSON fields.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from autotune_rewrite import findings as cf
from autotune_rewrite.model import ConfigValue
from autotune_rewrite.output import explain, explain_rewrite
from autotune_rewrite.rewrite import facts as rf

W4 = ConfigValue({"BLOCK_T": 16}, num_warps=4, num_stages=2)
W8 = ConfigValue({"BLOCK_T": 16}, num_warps=8, num_stages=2)
S3 = ConfigValue({"BLOCK_T": 16}, num_warps=8, num_stages=3)
BIG = ConfigValue({"BLOCK_T": 32}, num_warps=4, num_stages=2)
OVER = rf.Refused("BLOCK_H=16", "sm_120", cf.SmemOverOptin("sm_120", 104_704, 0, 101_376))
AT_W8 = rf.Measured("BLOCK_H=16", "sm_120", 8 / 48, 8, "shared memory", 200, 0, 61_568)


@pytest.mark.parametrize("refusal, words", [
    (cf.CompileFailed(False, "arange's range must be a power of 2", "k.py", 12),
     "compile error: arange's range must be a power of 2 (k.py:12)"),
    (cf.CompileFailed(True, "PassManager::run failed"), "compile crashed: PassManager::run failed"),
    (cf.TooManyThreads(2048, 64, 1024), "2,048 threads (num_warps=64) > 1,024 per block"),
    (cf.TooManyRegistersPerThread(300, 255), "registers 300/thread > 255 per thread"),
    (cf.TooManyRegistersPerBlock(128, 1024, 131_072, 65_536), "registers 128/thread x 1,024 threads > 65,536 per block"),
    (cf.TooManyRegistersPerBlock(255, 1024, 262_144, 65_536),
     "registers 255/thread x 1,024 threads > 65,536 per block (262,144 as allocated)"),
    (cf.SmemOverOptin("sm_120", 104_704, 0, 101_376),
     "shared memory 104,704 B > 101,376 B opt-in limit of sm_120, over by 3,328 B"),
    (cf.SmemOverOptin("sm_120", 100_000, 2_048, 99_328),
     "shared memory 100,000 B (+2,048 B static) > 99,328 B opt-in limit of sm_120, over by 672 B"),
    (cf.SmemOverBlock("sm_80", 166_000, 512, 1_024, 167_552, 167_936),
     "shared memory 166,000 B + 512 B static + 1,024 B reserved = 167,552 B allocated > 167,936 B per block on sm_80"),
    (cf.TmemOver(1024, 512), "tensor memory 1,024 columns > 512 per SM"),
])
def test_each_refusal_in_numbers(refusal, words):
    assert explain.refusal(refusal) == words


def test_largest_fits_one_line_per_target_in_model_order():
    fits = (
        cf.LargestFit("sm_120", "BLOCK_T", 16, (("BLOCK_H", 16), ("num_stages", 2)), 61_568, 101_376),
        cf.LargestFit("sm_120", "num_stages", None, (("BLOCK_H", 16), ("BLOCK_T", 64)), None, 101_376),
        cf.LargestFit("sm_90", "BLOCK_T", 64, (), 191_104, 232_448),
    )
    assert explain.largest_fits(fits) == {
        "sm_120": "BLOCK_T <= 16 at BLOCK_H=16, num_stages=2 (predicted 61,568 B of 101,376 B); "
                  "no num_stages fits at BLOCK_H=16, BLOCK_T=64",
        "sm_90": "BLOCK_T <= 64 (predicted 191,104 B of 232,448 B)",
    }


def test_notes():
    assert explain.note(cf.Spills("BLOCK_H=16", "sm_120", "BLOCK_T=16 w16 s2", 40, 128)) == (
        "sm_120 BLOCK_T=16 w16 s2 (launch spec BLOCK_H=16): spills 40 registers to local memory "
        "(128 registers/thread)")
    from autotune_rewrite.outcomes import Assumption

    words = explain.note(cf.Assumed("default", (
        Assumption("q", "*bf16", "pointer dtype not in the code: assumed bf16 (--assume-dtype)"),
        Assumption("k", "*bf16", "pointer dtype not in the code: assumed bf16 (--assume-dtype)"),
        Assumption("n", "divisible by 16", "an int of unknown value"))))
    assert words.startswith("launch spec default rests on 3 assumption(s)")
    assert "q = *bf16, k = *bf16 (pointer dtype not in the code: assumed bf16 (--assume-dtype)); " \
           "n = divisible by 16 (an int of unknown value)" in words
    assert "compiled without a known value" in explain.note(cf.UnknownInts("default", ("n",)))
    assert explain.note(cf.UnknownInts("default", ("n", "m"))).split(": ")[1].startswith("n, m;")


def test_decision_facts():
    assert explain_rewrite.fact(rf.Dropped(BIG, rf.CANNOT_LAUNCH, (OVER,))) == (
        "drop BLOCK_T=32 w4 s2: cannot launch: sm_120 (BLOCK_H=16): shared memory 104,704 B > 101,376 B "
        "opt-in limit of sm_120, over by 3,328 B")
    assert explain_rewrite.dropped_why(rf.Dropped(W4, rf.SINGLE_CONFIG)) == "v1 keeps a single config"
    assert explain_rewrite.dropped_why(rf.Dropped(W4, rf.TWO_WARP_COUNTS)) == "v3 keeps the chosen tile at two warp counts"
    assert explain_rewrite.fact(rf.KeptLaunchable((W4, W8))) == "keep 2 launchable config(s): BLOCK_T=16 w4 s2, BLOCK_T=16 w8 s2"
    many = tuple(replace(W4, num_stages=s) for s in range(1, 12))
    text = explain_rewrite.fact(rf.KeptLaunchable(many))
    assert text.startswith("keep 11 launchable config(s): BLOCK_T=16 w4 s1, ") and text.endswith("w4 s8 and 3 more")
    assert explain_rewrite.fact(rf.WarpsSpill(W8, 40, 0, 4)) == "not BLOCK_T=16 w8 s2: 40 spills (vs 0 at 4 warps)"
    assert explain_rewrite.fact(rf.WarpsRejected(BIG, (OVER,))).startswith("not BLOCK_T=32 w4 s2: sm_120 (BLOCK_H=16): shared")
    assert explain_rewrite.fact(rf.WarpsRaised(W8, 4, (AT_W8,))) == (
        "add BLOCK_T=16 w8 s2: sm_120/BLOCK_H=16: 16.7% occupancy (8 warps/SM, limited by shared memory), "
        "200 regs, 0 spills, 61,568 B SMEM")
    assert explain_rewrite.fact(rf.StageSpill(S3, 6, 0, 2)) == "skip BLOCK_T=16 w8 s3: 6 spills (vs 0 at num_stages=2)"
    assert explain_rewrite.fact(rf.StageRejected(S3, (OVER,))).startswith("skip BLOCK_T=16 w8 s3: sm_120 (BLOCK_H=16): ")
    assert explain_rewrite.fact(rf.BenchmarkedAtWarmup(3)).startswith("3 configs: the autotuner benchmarks them at warm-up")
    assert explain_rewrite.fact(rf.SingleConfig(W8, (AT_W8,))).startswith(
        "keep one config, BLOCK_T=16 w8 s2: the only tile that launches, at the highest occupancy reachable by "
        "raising num_warps without new spills (sm_120/BLOCK_H=16: 16.7% occupancy")
    assert explain_rewrite.fact(rf.BucketKeyed(W4, W8)).startswith("keep BLOCK_T=16 w4 s2 and BLOCK_T=16 w8 s2 and key on")


def test_errors_carry_data_and_are_worded_here():
    fit = cf.LargestFit("sm_120", "BLOCK_T", 16, (("num_stages", 2),), 61_568, 101_376)
    err = rf.NoCommonConfig("k.py::k", ("sm_120",), (fit,))
    assert explain_rewrite.error_text(err) == ("k.py::k: no config can launch on sm_120; by the fitted SMEM model (an estimate) the largest "
                        "tile that fits is sm_120: BLOCK_T <= 16 at num_stages=2 (predicted 61,568 B of 101,376 B): "
                        "add such a config and re-run")
    assert explain_rewrite.error_text(rf.NoCommonConfig("k.py::k", ("sm_86", "sm_120"), ())).endswith(
        "on sm_86, sm_120; add a smaller tile (fewer stages or a smaller BLOCK_*) and re-run")
    assert explain_rewrite.error_text(rf.RecheckRefused("k.py::k", BIG, "sm_120", OVER.refusal)) == (
        "k.py::k: rewritten config BLOCK_T=32 w4 s2 does not launch on sm_120: shared memory 104,704 B > "
        "101,376 B opt-in limit of sm_120, over by 3,328 B")


def test_facts_are_json_with_their_kind():
    data = explain_rewrite.fact_json(rf.Dropped(BIG, rf.CANNOT_LAUNCH, (OVER,)))
    json.dumps(data)
    assert data["kind"] == "dropped" and data["reason"] == "cannot_launch"
    assert data["refused"][0]["refusal"] == {"arch": "sm_120", "shared_bytes": 104_704, "static_bytes": 0,
                                              "limit": 101_376, "registers_compiled": True, "kind": "smem_over_optin"}
    assert explain_rewrite.fact_json("an error's message") is None
    assert explain_rewrite.why("an error's message") == "an error's message"
    assert explain_rewrite.why(rf.NoSecondWarpCount(W8)).endswith("; use v1")
