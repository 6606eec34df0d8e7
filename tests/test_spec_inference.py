"""Launch specs inferred from the launch call and its wrapper, and the assumptions for the rest.

Each rule of ``wrapper/launch_args`` and ``spec/spec_inference`` on a small package written here
(real LibCST scan); the end-to-end tests compile for real through the CLI.
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from autotune_rewrite.spec import launch_spec
from autotune_rewrite.locate.scan import scan
from tests.repo_env import pythonpath
import cli_process
from package_fixture import one_site

KERNEL = '''
import torch
import triton
import triton.language as tl

BLOCK_DEFAULT = 32


@triton.autotune(configs=[triton.Config({"BLOCK": 64}, num_warps=4, num_stages=2),
                          triton.Config({"BLOCK": 128}, num_warps=8, num_stages=3)], key=["n"])
@triton.jit
def scale_kernel(x_ptr, idx_ptr, out_ptr, bias_ptr, n, stride_x, stride_last, scale, HAS_BIAS: tl.constexpr,
                 CHUNK: tl.constexpr, D: tl.constexpr, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    rows = tl.load(idx_ptr + offs, mask=mask, other=0)
    x = tl.load(x_ptr + rows * stride_x + offs * stride_last, mask=mask, other=0.0)
    for r in range(0, ROWS):
        x += 1.0
    if HAS_BIAS:
        x += tl.load(bias_ptr + offs, mask=mask, other=0.0)
    y = tl.zeros((BLOCK, D), dtype=tl.float32) + x[:, None] * scale
    tl.store(out_ptr + offs[:, None] * D + tl.arange(0, D)[None, :], y, mask=mask[:, None])
'''

WRAPPER = '''
import math

import torch

from .kernels import scale_kernel


def scale(x: torch.Tensor, idx, bias: torch.Tensor | None = None, chunk_size: int = 64, rows=None):
    n = x.shape[0]
    out = torch.empty((n, 16), dtype=torch.float32, device=x.device)
    scale = 1.0 / math.sqrt(16)
    scale_kernel[(n,)](x, idx, out, bias, n, x.stride(0), x.stride(1), scale,
                       HAS_BIAS=bias is not None, CHUNK=chunk_size, D=16, ROWS=rows)
    return out
'''


@pytest.fixture()
def pkg(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "kernels.py").write_text(KERNEL)
    (root / "pkg" / "ops.py").write_text(WRAPPER)
    return root


def _site(root: Path):
    (site,) = scan(root, jobs=1).sites
    return site


def test_each_launch_argument_is_read_from_the_wrapper(pkg):
    site = _site(pkg)
    (launch,) = site.launches
    facts = {f.slot: f for f in launch.arguments}
    assert facts[0].kind == "tensor" and facts[0].dtype is None  # a hint, no dtype
    assert facts[1].kind == "unknown"  # no hint, no default
    assert (facts[2].kind, facts[2].dtype, facts[2].fresh) == ("tensor", "float32", True)
    assert facts[3].kind == "tensor" and facts[3].optional  # Tensor | None
    assert facts[4].kind == "int" and not facts[4].value_known  # x.shape[0]
    assert facts[5].kind == "int" and not facts[5].value_known  # x.stride(0)
    assert (facts[6].value, facts[6].assumption) == (1, "x is contiguous in its last dim")  # x.stride(1), last
    assert facts[7].kind == "float"  # 1.0 / math.sqrt(16)
    assert (facts["HAS_BIAS"].kind, facts["HAS_BIAS"].value) == ("bool", False)
    assert "default None" in facts["HAS_BIAS"].assumption
    assert (facts["CHUNK"].value, facts["CHUNK"].assumption) == (64, "the caller leaves chunk_size at its default 64")
    assert (facts["D"].value, facts["D"].assumption) == (16, "")
    assert facts["ROWS"].kind == "unknown"


@pytest.mark.parametrize("rank_from", ["b, s, h, d = x.shape", "b, s, h, d = x.size()", "assert x.dim() == 4",
                                       "assert len(x.shape) == 4"])
def test_the_highest_stride_passed_is_not_the_last_dim_of_a_tensor_with_more_dims(pkg, rank_from):
    # x has 4 dims: x.stride(1) is an outer stride the kernel takes as given, never 1.
    ops = pkg / "pkg" / "ops.py"
    ops.write_text(ops.read_text().replace("    n = x.shape[0]\n", f"    n = x.shape[0]\n    {rank_from}\n"))
    facts = {f.slot: f for f in _site(pkg).launches[0].arguments}
    assert facts[6].kind == "int" and not facts[6].value_known
    ops.write_text(ops.read_text().replace(rank_from, rank_from.replace("4", "2").replace("b, s, h, d", "b, s")))
    facts = {f.slot: f for f in _site(pkg).launches[0].arguments}
    assert (facts[6].value, facts[6].assumption) == (1, "x is contiguous in its last dim")  # 2 dims: stride(1) is last


def test_a_rank_tested_by_a_branch_is_not_the_rank_at_the_launch(pkg):
    # ``if x.dim() == 4: x = x.flatten(0, 2)`` makes the 2 dims the launch passes: stride(1) is
    # the last one in both paths, so it is 1 (read as a rank, the test made it an outer stride).
    ops = pkg / "pkg" / "ops.py"
    ops.write_text(ops.read_text().replace("    n = x.shape[0]\n",
                                           "    if x.dim() == 4:\n        x = x.flatten(0, 2)\n    n = x.shape[0]\n"))
    facts = {f.slot: f for f in _site(pkg).launches[0].arguments}
    assert facts[6].value == 1 and facts[6].value_known


def test_the_spec_takes_the_launch_then_assumes_the_rest_visibly(pkg):
    site = _site(pkg)
    source = (pkg / "pkg" / "kernels.py").read_text()
    res = launch_spec.resolve_specs(site, kernel_source=source)
    (spec,) = res.specs
    types = dict(spec.types)
    assert types["out_ptr"] == "*fp32"  # torch.empty(dtype=torch.float32): exact
    assert types["x_ptr"] == "*bf16"  # no dtype in the code: --assume-dtype's default
    assert types["idx_ptr"] == "*i32"  # its loaded values are used as offsets
    assert types["scale"] == "fp32" and types["n"] == "i32"
    assert dict(spec.int_values)["stride_last"] == 1
    assert set(spec.divisible) == {"n", "stride_x"}  # ints of unknown value
    consts = dict(spec.constexprs)
    assert consts["HAS_BIAS"] is False and consts["CHUNK"] == 64 and consts["D"] == 16
    assert consts["ROWS"] == 4096  # unknown, used only as a loop bound
    assumed = {a.parameter for a in spec.assumptions}
    assert {"x_ptr", "idx_ptr", "n", "stride_x", "stride_last", "HAS_BIAS", "CHUNK", "ROWS"} <= assumed
    assert not {"out_ptr", "D", "scale"} & assumed
    assert res.ok


def test_exact_assumes_nothing_and_names_what_is_missing(pkg):
    site = _site(pkg)
    source = (pkg / "pkg" / "kernels.py").read_text()
    res = launch_spec.resolve_specs(site, kernel_source=source, exact=True)
    (missing,) = res.missing
    assert set(missing[1]) == {"x_ptr", "idx_ptr", "bias_ptr", "ROWS"}
    assert "# ROWS =" in res.stanza and "`rows` at pkg/ops.py:" in res.stanza
    assert "= 16" not in res.stanza  # nothing guessed


def test_assume_table_fills_unknown_values_and_sweeps_lists(pkg):
    site = _site(pkg)
    source = (pkg / "pkg" / "kernels.py").read_text()
    res = launch_spec.resolve_specs(site, kernel_source=source, assume={"ROWS": (2, 8), "n": (4096,)})
    assert [s.name for s in res.specs] == ["default ROWS=2", "default ROWS=8"]
    for spec, rows in zip(res.specs, (2, 8)):
        assert dict(spec.constexprs)["ROWS"] == rows and dict(spec.int_values)["n"] == 4096
        assert "n" not in spec.divisible


def test_distinct_launches_are_distinct_specs(pkg):
    ops = pkg / "pkg" / "ops.py"
    ops.write_text(ops.read_text() + textwrap.dedent('''

        def scale_small(x: torch.Tensor, idx: torch.Tensor):
            out = torch.empty_like(x, dtype=torch.float16)
            scale_kernel[(1,)](x.to(torch.float16), idx, out, None, 1, x.stride(0), x.stride(1), 2.0,
                               HAS_BIAS=False, CHUNK=32, D=16, ROWS=1)
    '''))
    site = _site(pkg)
    res = launch_spec.resolve_specs(site, kernel_source=(pkg / "pkg" / "kernels.py").read_text())
    assert len(res.specs) == 2
    small = next(s for s in res.specs if dict(s.constexprs).get("CHUNK") == 32)
    assert dict(small.types)["x_ptr"] == "*fp16" and dict(small.types)["bias_ptr"] == "constexpr"
    assert dict(small.int_values)["n"] == 1


def _cli(root: Path, *args: str):
    return cli_process.run(["check", str(root), "--format", "json", *args], env=dict(os.environ, PYTHONPATH=pythonpath()))


def test_zero_configuration_judges_with_listed_assumptions(pkg):
    proc = _cli(pkg, "--arch", "sm_90")
    assert proc.returncode == 0, proc.stderr
    (kernel,) = json.loads(proc.stdout)["kernels"]
    assert kernel["status"] == "assumed"
    assert {a["parameter"] for a in kernel["assumptions"]} >= {"x_ptr", "n", "ROWS"}
    assert all(c["shared_bytes"] is not None for c in kernel["configs"])


def test_exact_flag_leaves_the_kernel_needing_a_spec(pkg):
    proc = _cli(pkg, "--arch", "sm_90", "--exact")
    (kernel,) = json.loads(proc.stdout)["kernels"]
    assert kernel["status"] == "needs_spec"
    assert set(kernel["problem"]["missing"]) == {"x_ptr", "idx_ptr", "bias_ptr", "ROWS"}


def test_assume_flag_and_table(pkg):
    (pkg / "pyproject.toml").write_text('[tool.autotune-rewrite.assume]\nROWS = 4\nNOT_A_PARAM = 1\n')
    proc = _cli(pkg, "--arch", "sm_90", "--exact", "--assume-dtype", "fp16")
    data = json.loads(proc.stdout)
    assert any("NOT_A_PARAM" in w for w in data["warnings"])
    (kernel,) = data["kernels"]
    assert kernel["spec_constexprs"]["ROWS"] == 4
    proc = _cli(pkg, "--arch", "sm_90", "--assume", "ROWS=[1,2]")
    assert sorted(k["spec"] for k in json.loads(proc.stdout)["kernels"]) == ["default ROWS=1", "default ROWS=2"]


@pytest.mark.parametrize("flag", ["ROWS", "=4", "ROWS={a=1}"])
def test_a_bad_assume_flag_is_a_usage_error(pkg, flag):
    proc = _cli(pkg, "--assume", flag)
    assert proc.returncode == 2 and "--assume" in proc.stderr


HEURISTIC_KERNEL = '''
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 96})], key=["n"])
@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0,
                    "HAS_G": lambda args: args["g_ptr"] is not None,
                    "OPAQUE": lambda args: some_probe()})
@triton.jit
def h_kernel(x_ptr, g_ptr, n, EVEN: tl.constexpr, HAS_G: tl.constexpr, OPAQUE: tl.constexpr,
             BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs))
'''


def _heuristic_site(root: Path, name: str, source: str):
    """The one site of ``source`` written to ``root/name``, and its @triton.heuristics."""
    from autotune_rewrite.spec.heuristics import heuristics_of

    (root / name).write_text(source)
    (site,) = scan(root, jobs=1).sites
    return site, heuristics_of(root, site)


def test_heuristics_are_evaluated_per_config_on_the_spec(tmp_path):
    site, hs = _heuristic_site(tmp_path, "h.py", HEURISTIC_KERNEL)
    assert [h.name for h in hs] == ["EVEN", "HAS_G", "OPAQUE"]
    res = launch_spec.resolve_specs(site, kernel_source=HEURISTIC_KERNEL, heuristics=hs)
    (spec,) = res.specs
    values = {name: tuple(v for _, _, v in per) for name, per in spec.heuristic_values}
    assert values["EVEN"] == (True, False)  # n assumed 4096: 4096 % 64 == 0, 4096 % 96 != 0
    assert values["HAS_G"] == (True, True)
    assert "EVEN" in {a.parameter for a in spec.assumptions}
    assert dict(res.missing)["default"] == ("OPAQUE",)  # calls into the program: still needed
    assert "@triton.heuristics" in res.stanza
    exact = launch_spec.resolve_specs(site, kernel_source=HEURISTIC_KERNEL, heuristics=hs[:2],
                                      assume={"n": (128,)})
    (spec,) = exact.specs
    assert [v for _, _, v in dict(spec.heuristic_values)["EVEN"]] == [True, False]
    sig = launch_spec.specialize(site, spec, site.configs[1])
    assert dict(sig.constexprs)["EVEN"] is False and dict(sig.constexprs)["BLOCK"] == 96


ROW_KERNEL = '''
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"ROWS": 1}), triton.Config({"ROWS": 8})], key=["N"])
@triton.heuristics({"N_BLOCK": lambda args: triton.next_power_of_2(args["N"]),
                    "EVEN_N": lambda args: args["N"] % args["ROWS"] == 0})
@triton.jit
def row_kernel(x_ptr, N: tl.constexpr, ROWS: tl.constexpr, N_BLOCK: tl.constexpr, EVEN_N: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)[:, None]
    cols = tl.arange(0, N_BLOCK)[None, :]
    x = tl.load(x_ptr + rows * N + cols, mask=cols < N)
    tl.store(x_ptr + rows * N + cols, x * 2, mask=cols < N)
'''


def test_a_dimension_a_heuristic_turns_into_a_tile_is_swept_not_assumed_4096(tmp_path):
    # N enters the body only in arithmetic, but N_BLOCK = next_power_of_2(N) is a tile extent:
    # at the 4096 an arithmetic-only value is assumed at, every config looked 8-16x its size.
    site, hs = _heuristic_site(tmp_path, "rows.py", ROW_KERNEL)
    res = launch_spec.resolve_specs(site, kernel_source=ROW_KERNEL, heuristics=hs)
    assert sorted(dict(s.constexprs)["N"] for s in res.specs) == [64, 128, 256]
    for spec in res.specs:
        n = dict(spec.constexprs)["N"]
        assert {v for _, _, v in dict(spec.heuristic_values)["N_BLOCK"]} == {n}
        assert spec.family and dict(spec.ranged) == {"N": n}


GIVEN_HEURISTIC_KERNEL = '''
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["n"])
@triton.heuristics({"HAS_SCALE": lambda args: args["scale"] is not None,
                    "ON_SM90": lambda args: probe_device() == 9,
                    "WIDE": lambda args: probe_device() > 8 and args["BLOCK"] > 64,
                    "BIG": lambda args: args["scale"] > 1.0})
@triton.jit
def g_kernel(x_ptr, n, scale, HAS_SCALE: tl.constexpr, ON_SM90: tl.constexpr, WIDE: tl.constexpr,
             BIG: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs))
'''


def test_a_heuristic_value_the_spec_gives_is_used_when_the_lambda_cannot_be_evaluated(tmp_path):
    from autotune_rewrite.settings.schema import SpecEntry

    site, hs = _heuristic_site(tmp_path, "g.py", GIVEN_HEURISTIC_KERNEL)
    types = (("x_ptr", "*bf16"), ("n", "i32"), ("scale", "fp32"))
    captured = SpecEntry(kernel="g.py::g_kernel", types=types, constexprs=(("ON_SM90", True), ("WIDE", False)),
                         values=(("n", 4096),))
    res = launch_spec.resolve_specs(site, [captured], kernel_source=GIVEN_HEURISTIC_KERNEL, heuristics=hs)
    (spec,) = res.specs
    # a float argument the spec types is not None; comparing its unknown value decides nothing
    assert [v for _, _, v in dict(spec.heuristic_values)["HAS_SCALE"]] == [True, True]
    assert dict(res.missing).get("default") == ("BIG",)
    # a device query nobody can evaluate here, given by the spec: exact, used for every config
    assert dict(spec.constexprs)["ON_SM90"] is True and "ON_SM90" not in {a.parameter for a in spec.assumptions}
    # one that also reads the config: used as given, listed as an assumption
    (wide,) = [a for a in spec.assumptions if a.parameter == "WIDE"]
    assert wide.value == "False" and "reads the config" in wide.source
    assert dict(launch_spec.specialize(site, spec, site.configs[1]).constexprs)["WIDE"] is False
    # not given: still what the kernel needs (BIG is evaluated there on the listed int assumption)
    inferred = launch_spec.resolve_specs(site, kernel_source=GIVEN_HEURISTIC_KERNEL, heuristics=hs)
    assert dict(inferred.missing)["default"] == ("ON_SM90", "WIDE")
    assert any(a.parameter == "BIG" and "scale = " in a.source for a in inferred.specs[0].assumptions)


def test_a_conditional_argument_gives_one_spec_per_branch(pkg):
    ops = pkg / "pkg" / "ops.py"
    ops.write_text(ops.read_text().replace("D=16,", "D=16 if x.is_floating_point() else 32,"))
    site = _site(pkg)
    res = launch_spec.resolve_specs(site, kernel_source=(pkg / "pkg" / "kernels.py").read_text())
    assert sorted(dict(s.constexprs)["D"] for s in res.specs) == [16, 32]
    assert all(any(a.parameter == "D" and "branch" in a.source for a in s.assumptions) for s in res.specs)


def test_a_clamped_tile_size_is_assumed_at_its_largest_value(pkg):
    ops = pkg / "pkg" / "ops.py"
    ops.write_text(ops.read_text().replace("    n = x.shape[0]\n", "    n = x.shape[0]\n    d = triton.next_power_of_2(n)\n"
                                           "    d = max(16, min(64, d))\n").replace("D=16,", "D=d,")
                   .replace("import torch\n", "import torch\nimport triton\n", 1))
    site = _site(pkg)
    (spec,) = launch_spec.resolve_specs(site, kernel_source=(pkg / "pkg" / "kernels.py").read_text()).specs
    assert dict(spec.constexprs)["D"] == 64
    (a,) = [a for a in spec.assumptions if a.parameter == "D"]
    assert "largest value" in a.source


INT_USE_KERNEL = '''
import triton.language as tl


def k(a_ptr, b_ptr, q_ptr, zero_ptr, scale_ptr, start_ptr, end_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    start = tl.load(start_ptr)
    end = tl.load(end_ptr)
    rows = start + offs
    zero = tl.load(zero_ptr + offs)
    ptr = scale_ptr + offs
    scale = tl.load(ptr)
    ptr = out_ptr + offs
    old = tl.load(ptr)
    q = tl.load(q_ptr + offs)
    w = ((q >> 4) & 0xF) - zero
    w = w * scale + old
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.int32)
    a = tl.load(a_ptr + rows[:, None] * BLOCK + offs[None, :], mask=rows[:, None] < end)
    b = tl.load(b_ptr + offs[:, None] * BLOCK + offs[None, :])
    acc += tl.dot(a, b)
    tl.store(out_ptr + offs, w)
'''


def test_pointer_dtypes_are_read_from_how_the_kernel_uses_what_it_loads():
    from autotune_rewrite.spec.pointer_dtypes import index_pointer_params, int8_dot_params

    # Packed ints and zero points (bit ops, ``- zero``), offsets and bounds: ints. The scale that
    # multiplies them is data, and ``ptr``, reused for two pointers, proves nothing about either.
    assert index_pointer_params(INT_USE_KERNEL, "k") == ("q_ptr", "zero_ptr", "start_ptr", "end_ptr")
    assert int8_dot_params(INT_USE_KERNEL, "k") == ("a_ptr", "b_ptr")


FP32_USE_KERNEL = '''
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 64}, num_warps=4)], key=["n"])
@triton.jit
def norm_kernel(x_ptr, sum_ptr, lse_ptr, scale_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    total = tl.load(sum_ptr + offs)
    rcp = tl.fdiv(1.0, total)
    lse = tl.exp(tl.load(lse_ptr + offs))
    x = tl.load(x_ptr + offs)
    scale = tl.load(scale_ptr + offs).to(tl.float32)
    y = tl.exp(x.to(tl.float32)) * rcp * lse * tl.sqrt(scale)
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty))
'''


def test_tiles_that_go_uncast_into_fp32_only_math_are_fp32(tmp_path):
    from autotune_rewrite.spec.pointer_dtypes import fp32_pointer_params

    # ``fdiv`` beside a float literal and ``exp`` of a raw tile need fp32 tensors; a tile cast
    # first (x, scale) says nothing about its tensor's dtype.
    assert fp32_pointer_params(FP32_USE_KERNEL, "norm_kernel") == ("sum_ptr", "lse_ptr")
    (tmp_path / "k.py").write_text(FP32_USE_KERNEL)
    proc = _cli(tmp_path, "--arch", "sm_90")
    (kernel,) = json.loads(proc.stdout)["kernels"]
    # With every pointer bf16 this compile fails ("'arith.divf' op requires the same type").
    assert kernel["status"] == "assumed", kernel["message"]
    assert kernel["types"]["sum_ptr"] == "*fp32" and kernel["types"]["x_ptr"] == "*bf16"
    why = {a["parameter"]: a["source"] for a in kernel["assumptions"]}
    assert "fp32-only math" in why["lse_ptr"]


def test_uncast_tiles_are_followed_in_statement_order_and_address_tables_are_i64():
    from autotune_rewrite.spec.pointer_dtypes import address_table_params, fp32_pointer_params

    source = '''
def k(g, h, w, bufs, out, n, rank):
    g_last = tl.load(g + n)
    b_g = tl.load(g + tl.arange(0, 16))
    decay = tl.exp(g_last - b_g)   # arithmetic of raw tiles: still g's dtype
    g_last = tl.exp(g_last)        # the raw tile, though the name is reassigned
    x = tl.load(h + n).to(tl.float32)
    y = tl.exp(x)                  # cast first: says nothing about h
    z = tl.load(w + n)
    z = z.to(tl.float32)
    t = tl.exp(z)                  # z was cast before this line
    dst = tl.load(bufs + rank).to(tl.pointer_type(tl.bfloat16))
    tl.store(dst + n, decay)
'''
    assert fp32_pointer_params(source, "k") == ("g",)
    assert address_table_params(source, "k") == ("bufs",)


def test_packed_weights_unpacked_in_a_helper_are_ints():
    from autotune_rewrite.spec.pointer_dtypes import index_pointer_params

    source = '''
def _nibbles(w, shift):
    return (w >> shift) & 0xF


def _unpack(w):
    return _nibbles(w, 4)


def k(qw_ptr, qz_ptr, s_ptr, out_ptr):
    qw = tl.load(qw_ptr + tl.arange(0, 16))
    qz = tl.load(qz_ptr + tl.arange(0, 16))[None, :]
    s = tl.load(s_ptr)
    tl.store(out_ptr, (_unpack(qw) - _unpack(qz)) * s)
'''
    assert index_pointer_params(source, "k") == ("qw_ptr", "qz_ptr")  # two helpers deep; the scale is data


def test_descriptors_and_loop_bounds_are_seen_through_helpers():
    from autotune_rewrite.spec.pointer_dtypes import index_pointer_params
    from autotune_rewrite.spec.pointer_params import descriptor_params

    source = '''
def _inner(acc, desc_k, start, end, BLOCK: tl.constexpr):
    for n in tl.range(0, end - start, BLOCK):
        acc += desc_k.load([(start + n).to(tl.int32), 0])
    return acc


def k(desc_q, desc_k, out_ptr, owner_ptr, max_len, BLOCK: tl.constexpr):
    batch = tl.load(owner_ptr + tl.program_id(1))
    start = batch * max_len
    acc = desc_q.load([0, 0])
    acc = _inner(acc, desc_k, start, start + max_len, BLOCK)
    tl.store(out_ptr, acc)
'''
    assert descriptor_params(source, "k") == ("desc_q", "desc_k")  # desc_k: loaded only in the helper
    assert index_pointer_params(source, "k") == ("owner_ptr",)  # its value bounds the helper's loop


def test_a_loaded_value_scaled_into_an_address_is_an_index():
    from autotune_rewrite.spec.pointer_dtypes import index_pointer_params

    source = '''
def k(cache_ptr, table_ptr, scale_ptr, out_ptr, stride_page, BLOCK: tl.constexpr):
    page = tl.load(table_ptr + tl.program_id(0))
    offs = page * stride_page + tl.arange(0, BLOCK)
    x = tl.load(cache_ptr + offs) * tl.load(scale_ptr)
    tl.store(out_ptr + tl.arange(0, BLOCK), x)
'''
    # a page table: its value times a stride is an address (pointer + float would not compile)
    assert index_pointer_params(source, "k") == ("table_ptr",)


def test_an_index_scaled_into_a_local_pointer_and_a_kernel_taking_int8_or_float():
    from autotune_rewrite.spec.pointer_dtypes import index_pointer_params, int8_dot_params

    source = '''
def k(a_ptr, b_ptr, rows_ptr, expert_ptr, c_ptr, stride_am, stride_be, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    rows = tl.load(rows_ptr + offs)
    a_ptrs = a_ptr + rows[:, None] * stride_am + offs[None, :]
    e = tl.load(expert_ptr + tl.program_id(0))
    b_ptrs = b_ptr + e * stride_be + offs[:, None] * BLOCK + offs[None, :]
    if a_ptr.dtype.element_ty == tl.int8:
        acc = tl.zeros((BLOCK, BLOCK), dtype=tl.int32)
        tl.static_assert(False, "int8 is not supported")
    else:
        acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    a = tl.load(a_ptrs)
    b = tl.load(b_ptrs)
    acc += tl.dot(a, b)
    tl.store(c_ptr + offs[:, None] * BLOCK + offs[None, :], acc)
'''
    # row ids reach the address through the local ``a_ptrs`` (pointer + float would not compile)
    assert index_pointer_params(source, "k") == ("rows_ptr", "expert_ptr")
    # the int32 accumulator is the case of a test on the operand's own dtype: int8 is not assumed
    assert int8_dot_params(source, "k") == ()
    # ... while a mode flag choosing it still makes an int8 GEMM of that mode
    flagged = source.replace("a_ptr.dtype.element_ty == tl.int8", "INT8").replace("BLOCK: tl.constexpr", "BLOCK: tl.constexpr, INT8: tl.constexpr")
    assert int8_dot_params(flagged, "k") == ("a_ptr", "b_ptr")


@pytest.mark.parametrize("assume, words", [
    ({"n": ("many",)}, "takes n as a number"),
    ({"x_ptr": (3,)}, 'takes x_ptr as a pointer; give its type, e.g. "*fp16"'),
    ({"ROWS": ("tl.flaot32",)}, "triton.language has no dtype 'flaot32'"),
])
def test_an_assume_value_of_the_wrong_type_is_a_usage_error(pkg, assume, words):
    import re

    from autotune_rewrite.errors import UserError

    site = _site(pkg)
    with pytest.raises(UserError, match=re.escape(words)) as err:
        launch_spec.resolve_specs(site, kernel_source=(pkg / "pkg" / "kernels.py").read_text(), assume=assume,
                                  assume_origin="pyproject.toml")
    assert str(err.value).startswith(f"pyproject.toml: assume.{next(iter(assume))} ")


def test_an_assume_dtype_for_a_pointer(pkg):
    site = _site(pkg)
    res = launch_spec.resolve_specs(site, kernel_source=(pkg / "pkg" / "kernels.py").read_text(),
                                    assume={"x_ptr": ("*fp16",)})
    (spec,) = res.specs
    assert dict(spec.types)["x_ptr"] == "*fp16"


def test_a_fresh_tensors_last_stride_is_exact(pkg):
    site = _site(pkg)
    (launch,) = site.launches
    ops = (pkg / "pkg" / "ops.py")
    ops.write_text(ops.read_text().replace("x.stride(0), x.stride(1), scale", "out.stride(0), out.stride(1), scale"))
    (launch,) = _site(pkg).launches
    facts = {f.slot: f for f in launch.arguments}
    assert (facts[6].value, facts[6].assumption) == (1, "")  # out = torch.empty(...): contiguous, exact


def test_strides_unpacked_from_stride_give_the_last_dim_its_unit_stride(pkg):
    # ``sx0, sx1 = x.stride()`` says x has exactly 2 dims: sx1 is its last-dim stride (assumed 1,
    # as x.stride(-1) is); a fresh tensor's is exact; an outer one stays unknown.
    ops = pkg / "pkg" / "ops.py"
    ops.write_text(ops.read_text().replace("    n = x.shape[0]\n", "    n = x.shape[0]\n    sx0, sx1 = x.stride()\n")
                   .replace("x.stride(0), x.stride(1), scale", "sx0, sx1, scale"))
    facts = {f.slot: f for f in _site(pkg).launches[0].arguments}
    assert not facts[5].value_known
    assert (facts[6].value, facts[6].assumption) == (1, "x is contiguous in its last dim")
    ops.write_text(ops.read_text().replace("sx0, sx1, scale", "so0, so1, scale").replace(
        "    scale = 1.0", "    so0, so1 = out.stride()\n    scale = 1.0"))
    facts = {f.slot: f for f in _site(pkg).launches[0].arguments}
    assert (facts[6].value, facts[6].assumption) == (1, "")  # out = torch.empty(...): exact


def test_an_assumed_wrapper_name_decides_the_constexpr_computed_from_it(pkg):
    ops = pkg / "pkg" / "ops.py"
    ops.write_text(ops.read_text().replace("    n = x.shape[0]\n", "    n = x.shape[0]\n    width = x.shape[1]\n"
                                           "    d = 32 if width == 96 else width\n").replace("D=16,", "D=d,"))
    site = _site(pkg)
    source = (pkg / "pkg" / "kernels.py").read_text()
    res = launch_spec.resolve_specs(site, kernel_source=source, exact=True, assume_dtype="bf16")
    assert "D" in dict(res.missing)["default"]
    assert "(d = 32 if width == 96 else width)" in res.stanza  # where its value comes from
    res = launch_spec.resolve_specs(site, kernel_source=source, assume={"width": (96, 64)})
    assert sorted(dict(s.constexprs)["D"] for s in res.specs) == [32, 64]
    (a,) = [a for a in res.specs[0].assumptions if a.parameter == "D"]
    assert a.source.startswith("`32 if width == 96 else width` at the launch, with width = ")


GEMM_KERNEL = '''
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 32})], key=["n"])
@triton.jit
def gemm(a_ptr, b_ptr, c_ptr, n, ACC: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), dtype=ACC)
    a = tl.load(a_ptr + offs[:, None] * BLOCK + offs[None, :])
    b = tl.load(b_ptr + offs[:, None] * BLOCK + offs[None, :])
    acc += tl.dot(a, b)
    tl.store(c_ptr + offs[:, None] * BLOCK + offs[None, :], acc)


def run(a, b, c):
    acc = tl.float32 if a.is_floating_point() else tl.int32
    gemm[(1,)](a, b, c, a.shape[0], ACC=acc)
'''


def test_each_branch_of_a_dtype_conditional_is_a_consistent_spec(tmp_path):
    (tmp_path / "g.py").write_text(GEMM_KERNEL)
    (site,) = scan(tmp_path, jobs=1).sites
    specs = launch_spec.resolve_specs(site, kernel_source=GEMM_KERNEL).specs
    by_acc = {repr(dict(s.constexprs)["ACC"]): dict(s.types) for s in specs}
    assert by_acc["tl.float32"]["a_ptr"] == "*bf16"  # --assume-dtype's default
    assert by_acc["tl.int32"]["a_ptr"] == "*i8" and by_acc["tl.int32"]["b_ptr"] == "*i8"  # an int8 GEMM


SCALED_GEMM = GEMM_KERNEL.replace("def gemm(a_ptr, b_ptr, c_ptr,", "def gemm(a_ptr, b_ptr, c_ptr, a_scale_ptr, b_scale_ptr,").replace(
    "acc += tl.dot(a, b)", "acc += tl.dot(a, b)\n    acc = acc * tl.load(a_scale_ptr) * tl.load(b_scale_ptr)").replace(
    "gemm[(1,)](a, b, c,", "gemm[(1,)](a, b, c, sa, sb,").replace("def run(a, b, c):", "def run(a, b, c, sa, sb):")


def test_an_int32_accumulator_decides_a_quantized_gemms_operands_so_no_dtype_range_is_swept(tmp_path):
    # The quantized range (bf16 and fp8 operands) is for operands nothing decides; in the int32
    # branch the accumulator decides them (int8), and an fp8 or bf16 operand there does not compile.
    (tmp_path / "g.py").write_text(SCALED_GEMM)
    (site,) = scan(tmp_path, jobs=1).sites
    specs = launch_spec.resolve_specs(site, kernel_source=SCALED_GEMM).specs
    int32 = [dict(s.types) for s in specs if repr(dict(s.constexprs)["ACC"]) == "tl.int32"]
    assert [(t["a_ptr"], t["b_ptr"]) for t in int32] == [("*i8", "*i8")]
    fp32 = sorted(dict(s.types)["a_ptr"] for s in specs if repr(dict(s.constexprs)["ACC"]) == "tl.float32")
    assert fp32 == ["*bf16", "*fp8e4nv"]  # the float branch keeps its range


SCALED_KERNEL = '''
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 32})], key=["n"])
@triton.jit
def scaled(x_ptr, y_ptr, n, scale, eps, stride, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs * stride, mask=offs < n)
    s = scale
    s *= 1.44269504
    tl.store(y_ptr + offs, x * s / (tl.sum(x * x) + eps * 1.0), mask=offs < n)


def run(x, y, scale, eps):
    scaled[(1,)](x, y, x.numel(), scale, eps, x.stride(0))
'''


def test_a_scalar_the_kernel_computes_with_beside_a_float_literal_is_fp32(tmp_path):
    (tmp_path / "s.py").write_text(SCALED_KERNEL)
    (site,) = scan(tmp_path, jobs=1).sites
    (spec,) = launch_spec.resolve_specs(site, kernel_source=SCALED_KERNEL).specs
    types = dict(spec.types)
    # scale through a local (s = scale; s *= 1.44...), eps directly; n and stride stay ints.
    assert (types["scale"], types["eps"]) == ("fp32", "fp32")
    assert types["n"] == "i32"
    (a,) = [a for a in spec.assumptions if a.parameter == "scale"]
    assert a.value == "fp32" and "float literal" in a.source


def test_constexpr_uses_flags_and_arithmetic():
    from autotune_rewrite.spec.param_uses import arithmetic_only, dtypes_of, flags_of

    source = '''
import triton.language as tl


def k(x_ptr, n, TF32: tl.constexpr, HAS_B: tl.constexpr, EPS: tl.constexpr, STRIDE: tl.constexpr,
      D: tl.constexpr, ACC: tl.constexpr, OUT: tl.constexpr, FUSE: tl.constexpr, BLOCK: tl.constexpr):
    tl.static_assert(not (FUSE and HAS_B), "cannot fuse with a bias")
    out_dtype = tl.float32 if TF32 else OUT
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs * STRIDE, mask=offs < n)
    x = tl.maximum(tl.clamp(x, -EPS, EPS), EPS).to(ACC)
    if HAS_B:
        x += 1
    y = tl.dot(x, x, allow_tf32=TF32).to(out_dtype)
    z = tl.zeros((BLOCK, D), dtype=ACC)
'''
    names = {"TF32", "HAS_B", "EPS", "STRIDE", "D", "ACC", "OUT", "FUSE"}
    assert flags_of(source, "k", names) == {"TF32", "HAS_B", "FUSE"}  # a static_assert between flags tests them
    assert arithmetic_only(source, "k", names) == {"EPS", "STRIDE"}  # D shapes a tile
    assert dtypes_of(source, "k", names) == {"ACC", "OUT"}  # OUT: chosen against tl.float32


def test_a_constexpr_handed_to_a_helper_that_only_tests_it_is_a_flag():
    from autotune_rewrite.spec.param_uses import flags_of

    source = '''
def _inner(acc, x, MASKED, SCALE):
    if MASKED:
        acc += x
    return acc * SCALE


def k(x_ptr, MASKED: tl.constexpr, SCALE: tl.constexpr, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    acc = _inner(acc, x, MASKED, SCALE)
'''
    # MASKED is only tested, in the helper; SCALE is arithmetic there: not a flag.
    assert flags_of(source, "k", {"MASKED", "SCALE", "BLOCK"}) == {"MASKED"}


def test_a_constexpr_passed_to_a_helper_is_arithmetic_when_the_helper_only_computes_with_it():
    from autotune_rewrite.spec.param_uses import arithmetic_only

    source = '''
def _window(q_idx, offs, W, V):
    lo = q_idx - W
    if V > 0:
        lo += 1
    return (offs > lo) & (offs <= q_idx)


def _tile(x, D):
    return tl.zeros((16, D), dtype=tl.float32) + x


def k(x_ptr, W: tl.constexpr, V: tl.constexpr, D: tl.constexpr, SCALE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = _window(tl.program_id(0), offs, W, V)
    x = tl.load(x_ptr + offs, mask=mask) * tl.cast(SCALE, tl.float32)
    y = _tile(x, D)
'''
    # W: arithmetic in the helper; V: a compile-time branch there; D: a tile shape there.
    assert arithmetic_only(source, "k", {"W", "V", "D", "SCALE"}) == {"W", "SCALE"}


def test_a_descriptors_global_shape_and_strides_are_arithmetic_its_block_shape_a_tile():
    from autotune_rewrite.spec.param_uses import arithmetic_only

    source = '''
def k(a_ptr, M, K: tl.constexpr, N: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_M: tl.constexpr):
    d = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
    p = tl.make_block_ptr(a_ptr, (M, N), (N, 1), (0, 0), (BLOCK_M, BLOCK_K), (1, 0))
    for i in tl.range(0, tl.cdiv(K, BLOCK_K)):
        x = d.load([0, i * BLOCK_K])
'''
    assert arithmetic_only(source, "k", {"K", "N", "BLOCK_K", "BLOCK_M"}) == {"K", "N"}


def test_a_size_tested_only_for_divisibility_by_a_tile_is_arithmetic():
    # ``K % BLOCK_K == 0`` (in a test, or a local passed on) is decided by the large value assumed
    # for K, divisible by every tile, as a heuristic reading K is; ``L % BLOCK_K == 1`` is not that.
    from autotune_rewrite.spec.param_uses import arithmetic_only

    source = '''
def _add(x, K, no_mask):
    if no_mask:
        return x
    return x + K


def k(a_ptr, K: tl.constexpr, J: tl.constexpr, L: tl.constexpr, BLOCK_K: tl.constexpr):
    no_k_mask = K % BLOCK_K == 0
    x = _add(tl.load(a_ptr + tl.arange(0, BLOCK_K)), K, no_k_mask)
    if J % BLOCK_K == 0:
        x += 1
    if L % BLOCK_K == 1:
        x += 2
'''
    assert arithmetic_only(source, "k", {"K", "J", "L"}) == {"J", "K"}


def test_modes_are_constexprs_compared_with_literals_and_most_code_comes_first():
    from autotune_rewrite.spec.param_modes import modes_of
    from autotune_rewrite.spec.param_uses import arithmetic_only

    source = '''
import triton.language as tl


def k(x_ptr, ACT: tl.constexpr, KIND: tl.constexpr, SCALE: tl.constexpr, MAXV: tl.constexpr, OTHER: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    cur = tl.max(x, axis=0)
    y = x * (MAXV / cur)  # derived from data read later in breadth-first order: still arithmetic
    if ACT == "relu":
        y = tl.maximum(y, 0.0)
    elif ACT == "gelu":
        y = 0.5 * y * (1.0 + tl.erf(y * 0.7071067811865476)) + tl.exp(y) * tl.exp(y) - tl.exp(y)
    if KIND != 2:
        y = y + 1
    if SCALE != 2:
        y = y + 2
    else:
        y = y * 2 + tl.exp(y) * tl.exp(y) + tl.exp(y) - 1
    if OTHER == "a":
        y += 1
    z = helper(y, OTHER)
    tl.store(x_ptr + tl.arange(0, 16), tl.clamp(y, -MAXV, MAXV))
'''
    modes = modes_of(source, "k", {"ACT", "KIND", "SCALE", "MAXV", "OTHER"})
    # OTHER also goes into a helper: not a mode; KIND: "any value but 2" guards the most code,
    # which no literal names; SCALE: 2 guards more than "any other value".
    assert modes == {"ACT": ("gelu", "relu"), "SCALE": (2,)}

    through_helpers = '''
def _act(x, FN):
    if FN == "sigmoid":
        return tl.sigmoid(x)
    elif FN == "leaky":
        return tl.where(x > 0, x, x * 0.01) + tl.where(x > 1, x, x * 0.02) + tl.where(x > 2, x, x * 0.03)
    return x


def _step(h, x, FN):
    return _act(h + x, FN=FN)


def k(x_ptr, ACTIVATION: tl.constexpr, SLOPE: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    y = _step(x, x, ACTIVATION)
    z = _act(y, SLOPE) + SLOPE
'''
    # ACTIVATION reaches the test two helpers down (positionally, then by keyword); SLOPE is also arithmetic.
    assert modes_of(through_helpers, "k", {"ACTIVATION", "SLOPE"}) == {"ACTIVATION": ("leaky", "sigmoid")}
    assert arithmetic_only(source, "k", {"MAXV"}) == {"MAXV"}


MODE_KERNEL = '''
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 64}, num_warps=4)], key=["n"])
@triton.jit
def act_kernel(x_ptr, n, ACT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if ACT == "relu":
        x = tl.maximum(x, 0.0)
    elif ACT == "leaky":
        x = tl.where(x > 0, x, x * 0.01) + tl.where(x > 1, x, x * 0.02)
    tl.store(x_ptr + offs, x, mask=offs < n)


def act(x, activation=""):
    act_kernel[(1,)](x, x.numel(), ACT=activation)


def act_literal(x):
    act_kernel[(1,)](x, x.numel(), ACT="relu")


def act_any(x, activation: str):
    act_kernel[(1,)](x, x.numel(), ACT=activation)
'''


def test_a_string_constexpr_is_read_from_a_literal_a_default_or_assumed_as_a_mode(tmp_path):
    (tmp_path / "m.py").write_text(MODE_KERNEL)
    (site,) = scan(tmp_path, jobs=1).sites
    res = launch_spec.resolve_specs(site, kernel_source=MODE_KERNEL)
    by_launch = {s.name.rsplit(":", 1)[-1]: s for s in res.specs}
    launch_lines = [str(i + 1) for i, line in enumerate(MODE_KERNEL.splitlines()) if "act_kernel[(1,)]" in line]
    default, literal, any_ = (by_launch[line] for line in launch_lines)
    assert dict(default.constexprs)["ACT"] == ""  # the wrapper default, listed as an assumption
    assert any("default" in a.source for a in default.assumptions if a.parameter == "ACT")
    assert dict(literal.constexprs)["ACT"] == "relu" and "ACT" not in {a.parameter for a in literal.assumptions}
    assert dict(any_.constexprs)["ACT"] == "leaky"  # the mode value guarding the most code
    (why,) = [a.source for a in any_.assumptions if a.parameter == "ACT"]
    assert "mode" in why and "'relu'" in why
    exact = launch_spec.resolve_specs(site, kernel_source=MODE_KERNEL, exact=True)
    assert any("ACT" in names for _, names in exact.missing)  # --exact assumes no mode


RULED_FLAGS = '''
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 64}, num_warps=4)], key=["n"])
@triton.jit
def fused(x_ptr, idx_ptr, n, starts_ptr, SCATTER: tl.constexpr, TMA_STORE: tl.constexpr, BIAS: tl.constexpr,
          BLOCK: tl.constexpr):
    tl.static_assert(not (SCATTER and TMA_STORE), "cannot scatter with a TMA store")
    start = tl.load(starts_ptr + tl.program_id(1)) * n
    offs = tl.arange(0, BLOCK)
    for i in tl.range(0, start + n, BLOCK):
        x = tl.load(x_ptr + i + offs)
        if SCATTER:
            x += 1
        if TMA_STORE:
            x += 2
        if BIAS:
            x += 3
        tl.store(x_ptr + i + offs, x)


def run(x, starts, use_int64_ok):
    use_int64 = x.numel() > 2**31 - 1
    fused[(1,)](x, x, x.numel(), starts, BLOCK=64, SCATTER=use_int64 or use_int64_ok, TMA_STORE=use_int64_ok,
                BIAS=use_int64)
'''


def test_a_tile_clamped_by_a_branch_of_literals_is_judged_up_to_the_largest(tmp_path):
    source = KERNEL
    wrapper = WRAPPER.replace("D=16", "D=min(next_pow2(n), 4096 if x.dtype == torch.float32 else 8192)")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "kernels.py").write_text(source)
    (tmp_path / "pkg" / "ops.py").write_text(wrapper)
    specs = launch_spec.resolve_specs(_site(tmp_path), kernel_source=source).specs
    # The largest value the code allows, and the default sweep below it: one family of specs.
    assert [dict(s.constexprs)["D"] for s in specs] == [64, 128, 256, 8192]
    assert {s.family for s in specs} == {"default"} and [s.ranged for s in specs] == [
        (("D", v),) for v in (64, 128, 256, 8192)]
    (why,) = {a.source for s in specs for a in s.assumptions if a.parameter == "D"}
    assert "bounds but does not give" in why and "{64, 128, 256, 8192}" in why


def test_assumed_flags_obey_the_kernels_static_assert_and_size_guards_are_off(tmp_path):
    (tmp_path / "f.py").write_text(RULED_FLAGS)
    (site,) = scan(tmp_path, jobs=1).sites
    spec, twin = launch_spec.resolve_specs(site, kernel_source=RULED_FLAGS).specs
    consts = dict(spec.constexprs)
    assert (consts["SCATTER"], consts["TMA_STORE"]) == (True, False)  # both on breaks the static_assert
    # The other end of SCATTER's range: all assumed flags off, one family with the first.
    assert (dict(twin.constexprs)["SCATTER"], twin.family, twin.ranged) == (False, "default", (("SCATTER", False),))
    assert spec.ranged == (("SCATTER", True),)
    (why,) = [a.source for a in spec.assumptions if a.parameter == "TMA_STORE"]
    assert "static_assert(not (SCATTER and TMA_STORE))" in why
    assert consts["BIAS"] is False  # x.numel() > 2**31 - 1: 64-bit indexing off at serving sizes
    assert any("below 2**31" in a.source for a in spec.assumptions if a.parameter == "BIAS")
    assert dict(spec.types)["starts_ptr"] == "*i32"  # its loaded value bounds a loop: an index


def test_a_launch_through_torchs_capture_triton_is_read(tmp_path):
    # capture_triton: wrap_triton's name before torch 2.6 (kernel written here).
    (tmp_path / "k.py").write_text(GEMM_KERNEL.replace(
        "    gemm[(1,)](a, b, c, a.shape[0], ACC=acc)",
        "    torch._library.capture_triton(gemm)[(1,)](a, b, c, a.shape[0], ACC=tl.float32)").replace(
        "import triton\n", "import torch\nimport triton\n", 1))
    (site,) = scan(tmp_path, jobs=1).sites
    (launch,) = site.launches
    (spec,) = launch_spec.resolve_specs(site, kernel_source=GEMM_KERNEL).specs
    assert repr(dict(spec.constexprs)["ACC"]) == "tl.float32"


TMA_KERNEL = '''
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor


def _set_block(nargs):
    if nargs.get("skip"):
        return
    BM = nargs["BLOCK_M"]
    nargs["a_desc"].block_shape = [BM, nargs["BLOCK_K"]]
    nargs["b_desc"].block_shape = (nargs["BLOCK_K"], 16)


@triton.autotune(configs=[triton.Config({"BLOCK_M": 64, "BLOCK_K": 32}, num_warps=4, num_stages=2, pre_hook=_set_block),
                          triton.Config({"BLOCK_M": 128, "BLOCK_K": 64}, num_warps=4, num_stages=3,
                                        pre_hook=_set_block)], key=["M"])
@triton.jit
def tma_kernel(a_desc, b_desc, out_ptr, M, K, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros((BLOCK_M, 16), dtype=tl.float32)
    for k in tl.range(0, K, BLOCK_K):
        acc = tl.dot(a_desc.load([pid * BLOCK_M, k]), b_desc.load([k, 0]), acc)
    offs = (pid * BLOCK_M + tl.arange(0, BLOCK_M))[:, None] * 16 + tl.arange(0, 16)[None, :]
    tl.store(out_ptr + offs, acc)


def run(a, b, out):
    dummy = [1, 1]
    a_desc = TensorDescriptor.from_tensor(a, block_shape=dummy)
    b_desc = TensorDescriptor.from_tensor(b, block_shape=dummy)
    tma_kernel[(a.shape[0] // 64,)](a_desc, b_desc, out, a.shape[0], a.shape[1])
'''


def test_a_tma_descriptors_block_shape_is_read_from_the_configs_pre_hook(tmp_path):
    (tmp_path / "t.py").write_text(TMA_KERNEL)
    (site,) = scan(tmp_path, jobs=1).sites
    assert site.configs[1].descriptor_shapes == (("a_desc", ("BLOCK_M", "BLOCK_K")), ("b_desc", ("BLOCK_K", 16)))
    proc = _cli(tmp_path, "--arch", "sm_90")
    (kernel,) = json.loads(proc.stdout)["kernels"]
    assert kernel["status"] == "assumed", kernel["message"]
    assert kernel["types"]["a_desc"] == "tensordesc<bf16[BLOCK_M, BLOCK_K]>"
    assert kernel["types"]["b_desc"] == "tensordesc<bf16[BLOCK_K, 16]>"
    small, big = (c["shared_bytes"] for c in kernel["configs"])
    assert big > small > 0  # the block shape (and stages) of each config, not one shape for all


STAR_KERNEL = '''
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["n"])
@triton.jit
def rows_kernel(n, x_ptr, sx0, sx1, out_ptr, so0, so1, HAS_SCALE: tl.constexpr, D: tl.constexpr,
                BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs * sx1 + sx0)
    if HAS_SCALE:
        x = x * 2
    tl.store(out_ptr + offs * so1 + so0, x + D)
'''

STAR_WRAPPER = '''
import torch
from pkg.kernels import rows_kernel


def rows(x: torch.Tensor, out: torch.Tensor, scaled: bool):
    rows_kernel[(1,)](x.shape[0], x, *x.stride(), out, *out.stride(), scaled is True, 32)
'''


def test_arguments_after_a_star_bind_from_the_end_when_no_parameter_has_a_default(tmp_path):
    site = one_site(tmp_path, STAR_KERNEL, STAR_WRAPPER)
    res = launch_spec.resolve_specs(site, kernel_source=STAR_KERNEL)
    spec = res.specs[0]  # (``scaled is True`` is a flag: its off end is the second spec)
    assert dict(spec.constexprs)["D"] == 32  # the last argument is the last parameter no config sets
    assert dict(spec.types)["x_ptr"].startswith("*")  # before the first star: by position, as ever
    # With a default on one of the parameters, where the tail ends is not known: D is not bound.
    defaulted = STAR_KERNEL.replace("D: tl.constexpr,\n                BLOCK: tl.constexpr)",
                                    "D: tl.constexpr = 16, BLOCK: tl.constexpr = 64)")
    site = one_site(tmp_path, defaulted, STAR_WRAPPER)
    res = launch_spec.resolve_specs(site, kernel_source=defaulted)
    assert all(dict(s.constexprs).get("D") != 32 for s in res.specs)
