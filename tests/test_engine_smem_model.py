"""The SMEM fit on given points (no compiles here; tests/test_engine_compile.py fits real ones)."""

from __future__ import annotations

from autotune_rewrite.check.smem_model import fit_smem_model, format_terms, largest_fit, predict, probe_points
from autotune_rewrite.targets import ARCHS

# The four compiled points of the sparse MLA decode kernel recorded in DOMAIN.md section 1
# (sm_120, Triton 3.6): BLOCK_H, BLOCK_T, num_stages -> shared bytes.
MLA_POINTS = [
    ({"BLOCK_H": 16, "BLOCK_T": 16, "num_stages": 2, "num_warps": 4}, 61_568),
    ({"BLOCK_H": 16, "BLOCK_T": 32, "num_stages": 2, "num_warps": 4}, 104_704),
    ({"BLOCK_H": 16, "BLOCK_T": 16, "num_stages": 3, "num_warps": 8}, 83_136),
    ({"BLOCK_H": 32, "BLOCK_T": 16, "num_stages": 2, "num_warps": 4}, 80_000),
]


def test_recovers_the_mla_formula():
    model = fit_smem_model(MLA_POINTS)
    assert model is not None
    assert model.text == "SMEM = 1152*BLOCK_H + 1348*num_stages*BLOCK_T"
    assert model.coefficients == (("BLOCK_H", 1152.0), ("num_stages*BLOCK_T", 1348.0))
    assert (model.max_residual, model.points) == (0, 4)


def test_largest_tile_that_fits():
    model = fit_smem_model(MLA_POINTS)
    sm120, sm90 = ARCHS["sm_120"], ARCHS["sm_90"]
    # 1152*16 + 1348*2*T <= 101,376 -> T <= 30.8 -> 16 (T=32 is the config that cannot launch)
    assert largest_fit(model, sm120, {"BLOCK_H": 16, "num_stages": 2}, "BLOCK_T") == 16
    # 18,432 + 2,696*T <= 232,448 -> T <= 79.4 -> 64
    assert largest_fit(model, sm90, {"BLOCK_H": 16, "num_stages": 2}, "BLOCK_T") == 64
    # 1152*H <= 101,376 - 43,136 -> H <= 50.6 -> 32
    assert largest_fit(model, sm120, {"BLOCK_T": 16, "num_stages": 2}, "BLOCK_H") == 32
    # stages step by one: 18,432 + 21,568*s <= 101,376 -> s <= 3.85 -> 3
    assert largest_fit(model, sm120, {"BLOCK_H": 16, "BLOCK_T": 16}, "num_stages") == 3
    # num_warps is not in the model: nothing to say
    assert largest_fit(model, sm120, {"BLOCK_H": 16, "BLOCK_T": 16, "num_stages": 2}, "num_warps") is None


def test_predict():
    model = fit_smem_model(MLA_POINTS)
    assert predict(model, {"BLOCK_H": 16, "BLOCK_T": 16, "num_stages": 3}) == 83_136


def test_too_few_points_is_none():
    assert fit_smem_model([]) is None
    assert fit_smem_model(MLA_POINTS[:1]) is None
    assert fit_smem_model([MLA_POINTS[0], MLA_POINTS[0]]) is None
    # two points determine a line, so they cannot confirm one
    assert fit_smem_model(MLA_POINTS[:2]) is None


def test_single_varying_parameter():
    points = [({"BLOCK": b, "num_stages": 2}, 512 + 96 * b) for b in (16, 32, 64, 128)]
    model = fit_smem_model(points)
    assert model.text == "SMEM = 96*BLOCK + 512"


def test_inexact_points_give_the_smallest_residual_and_say_so():
    # SMEM as a max() of two buffers is not linear: the fit must report its error.
    points = [({"A": a, "B": b}, 64 * max(a, b)) for a in (16, 32, 64, 128) for b in (16, 32, 64, 128)]
    model = fit_smem_model(points)
    assert model is not None and model.max_residual > 0
    assert model.text.startswith("SMEM ~ ")
    for p, s in points:
        assert abs(predict(model, p) - s) <= model.max_residual


def test_probe_points_for_the_mla_configs():
    configs = [
        {"BLOCK_H": 16, "BLOCK_T": 16, "num_stages": 2},
        {"BLOCK_H": 16, "BLOCK_T": 32, "num_stages": 2},
        {"BLOCK_H": 16, "BLOCK_T": 32, "num_stages": 2},
    ]
    probes = probe_points(configs, ["BLOCK_H", "BLOCK_T", "num_stages"])
    keys = [tuple(sorted(p.items())) for p in probes]
    assert len(keys) == len(set(keys))
    assert not {tuple(sorted(c.items())) for c in configs} & set(keys)
    # each parameter reaches three distinct values across configs + probes
    for name in ("BLOCK_H", "BLOCK_T", "num_stages"):
        assert len({p[name] for p in configs + probes}) >= 3
    # never below 2 stages (1 stage is another regime), tiles grow from 16
    assert min(p["num_stages"] for p in probes) >= 2
    assert {p["BLOCK_H"] for p in probes} <= {16, 32, 64}
    # a point that moves two parameters at once, so products are identifiable
    assert any(p["num_stages"] != 2 and p["BLOCK_T"] != 16 for p in probes)


def test_probes_then_fit_recovers_a_three_term_formula():
    def smem(p):  # a pipelined buffer, a fixed buffer and a constant
        return 2 * p["num_stages"] * p["BLOCK_M"] * p["BLOCK_K"] + 128 * p["BLOCK_K"] + 1024

    base = {"BLOCK_M": 64, "BLOCK_K": 32, "num_stages": 3}
    points = [base, *probe_points([base], ["BLOCK_M", "BLOCK_K", "num_stages"])]
    model = fit_smem_model([(p, smem(p)) for p in points])
    assert model.text == "SMEM = 128*BLOCK_K + 2*num_stages*BLOCK_K*BLOCK_M + 1024"


def test_format_terms():
    assert format_terms((("A", -2.0), ("1", 512.0))) == "-2*A + 512"
    assert format_terms((("A", 1.5), ("1", -3.0))) == "1.5*A - 3"
    assert format_terms(()) == "0"


def test_four_terms_over_five_parameters_quickly():
    # 5 varying parameters give 22 candidate terms: 4-term models come from a beam search.
    values = {"BLOCK_H": (16, 32, 64), "BLOCK_T": (16, 32, 64), "BLOCK_K": (32, 64, 128),
              "num_warps": (4, 8), "num_stages": (2, 3, 4)}
    points = []
    for i in range(20):  # a deterministic spread of parameter sets
        p = {n: v[(i * (k + 2) + i // 3) % len(v)] for k, (n, v) in enumerate(values.items())}
        s = 2 * p["num_stages"] * p["BLOCK_T"] * p["BLOCK_K"] + 3 * p["BLOCK_H"] * p["BLOCK_K"] + 7 * p["BLOCK_T"] + 999
        points.append((p, s))
    model = fit_smem_model(points)
    assert model.text == "SMEM = 7*BLOCK_T + 3*BLOCK_H*BLOCK_K + 2*num_stages*BLOCK_K*BLOCK_T + 999"
