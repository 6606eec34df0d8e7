"""The example's launch specs describe the kernel and the caller as they really are.

``check`` compiles the split kernel from these specs, so a parameter missing from ``types`` or
a ``values`` entry the caller would never pass would make its figures describe another kernel.
"""

from __future__ import annotations

from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "sm120_mla_decode"
RTX_PRO_6000_SMS = 188


@pytest.fixture(scope="module")
def settings() -> dict:
    with open(EXAMPLE / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["tool"]["autotune-rewrite"]


@pytest.fixture
def example_modules(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLE))
    from mla_decode import kernels

    return kernels


def test_settings_target_sm120(settings):
    assert settings["arch"] == ["sm_120"]
    assert {s["spec"] for s in settings["kernels"]} == {"BLOCK_H=16", "BLOCK_H=32"}


def test_specs_cover_every_parameter(settings, example_modules):
    autotuned = example_modules._mma_sparse_decode_split_kernel
    params = autotuned.fn.arg_names
    constexprs = {p.name for p in autotuned.fn.params if p.is_constexpr}
    meta = set().union(*(c.kwargs for c in autotuned.configs))
    assert meta == {"BLOCK_T"}

    for spec in settings["kernels"]:
        path, name = spec["kernel"].split("::")
        assert (EXAMPLE / path).is_file()
        assert name == "_mma_sparse_decode_split_kernel"
        assert set(spec["types"]) == set(params) - constexprs, spec["spec"]
        assert set(spec["constexprs"]) == constexprs - meta, spec["spec"]
        assert spec["constexprs"]["BLOCK_H"] == int(spec["spec"].split("=")[1])
        assert set(spec["values"]) <= {p for p, t in spec["types"].items() if t == "i32"}


def test_spec_values_are_what_the_caller_passes(settings, example_modules):
    """The values are one decode step (B=8, H=128, topk=2048) on a 188-SM GPU: recompute the
    caller's split plan for each BLOCK_H and the strides of the tensors it allocates."""
    pytest.importorskip("torch")
    from mla_decode import decode

    batch, heads, topk = 8, 128, 2048
    for spec in settings["kernels"]:
        block_h = spec["constexprs"]["BLOCK_H"]
        topk_rounded = -(-topk // decode._TOPK_ALIGN) * decode._TOPK_ALIGN
        splits, tokens_per_split = decode._split_plan(batch, heads // block_h, topk_rounded, RTX_PRO_6000_SMS)
        expected = {
            "stride_qb": heads * 576,
            "stride_qh": 576,
            "stride_kv": 576,
            "stride_ib": topk,
            "stride_ob": splits * heads * 512,
            "stride_os": heads * 512,
            "stride_oh": 512,
            "stride_lb": splits * heads,
            "stride_ls": heads,
            "num_heads": heads,
            "topk": topk,
            "topk_rounded": topk_rounded,
            "tokens_per_split": tokens_per_split,
        }
        assert spec["values"] == expected, spec["spec"]
