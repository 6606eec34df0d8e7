"""Dtypes and layouts the wrapper states, followed through the torch calls that keep or set them.

A reduction keeps a floating tensor's dtype (``dq = dq.sum(0)`` of an fp32 buffer is fp32) and
sums an integer one in int64; ``torch.cat`` of tensors of one dtype has it; the functional forms
(``torch.transpose(x, 0, 1)``) read like the methods; and a launch passes what a name is bound to
above it, not what the wrapper rebinds it to afterwards. Real LibCST scan of a package written
here; the specs as ``check`` would compile them.
"""

from __future__ import annotations

import textwrap

from autotune_rewrite.spec import launch_spec
from package_fixture import one_site

KERNEL = '''
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 64})], key=["n"])
@triton.jit
def grads_kernel(q_ptr, dq_ptr, dk_ptr, idx_ptr, cat_ptr, t_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(q_ptr + offs) + tl.load(t_ptr + offs) + tl.load(cat_ptr + offs)
    tl.store(dq_ptr + offs, x + tl.load(idx_ptr + offs))
    tl.store(dk_ptr + offs, x)
'''

WRAPPER = '''
import torch

from pkg.kernels import grads_kernel


def backward(q: torch.Tensor, k: torch.Tensor, counts: torch.Tensor):
    q = q.to(torch.bfloat16)
    dq = q.new_empty((4, *q.shape), dtype=torch.float)
    dq = dq.sum(0)
    dk = torch.empty_like(k, dtype=torch.float32)
    totals = counts.to(torch.int32).cumsum(0)
    both = torch.cat([q.float(), k.float()])
    qt = torch.transpose(q, 0, 1)
    grads_kernel[(1,)](q, dq, dk, totals, both, qt, q.numel())
    dk = dk.to(q.dtype)  # after the launch: not what the kernel got
    return dq, dk
'''


def _spec(tmp_path, wrapper: str):
    site = one_site(tmp_path, KERNEL, textwrap.dedent(wrapper))
    (spec,) = launch_spec.resolve_specs(site, kernel_source=KERNEL).specs
    return dict(spec.types), {a.parameter for a in spec.assumptions}


def test_dtypes_follow_reductions_joins_functional_forms_and_the_binding_above_the_launch(tmp_path):
    types, assumed = _spec(tmp_path, WRAPPER)
    assert types["q_ptr"] == "*bf16"
    assert types["dq_ptr"] == "*fp32"  # new_empty(dtype=torch.float), then .sum(0)
    assert types["dk_ptr"] == "*fp32"  # the rebinding below the launch is not what it passes
    assert types["idx_ptr"] == "*i64"  # cumsum of int32 sums in int64
    assert types["cat_ptr"] == "*fp32" and types["t_ptr"] == "*bf16"
    assert not {"q_ptr", "dq_ptr", "dk_ptr", "idx_ptr", "cat_ptr", "t_ptr"} & assumed  # all stated by the code


def test_a_reduction_with_dtype_or_of_mixed_inputs_reads_what_it_says(tmp_path):
    wrapper = (WRAPPER.replace("dq = dq.sum(0)", "dq = dq.sum(0, dtype=torch.float16)")
               .replace("torch.cat([q.float(), k.float()])", "torch.cat([q, k.float()])"))
    types, assumed = _spec(tmp_path, wrapper)
    assert types["dq_ptr"] == "*fp16"
    assert "cat_ptr" in assumed  # bf16 and fp32 joined: torch promotes, the tool does not guess it


STRIDED_KERNEL = '''
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 64})], key=["n"])
@triton.jit
def nhwc_kernel(x_ptr, y_ptr, n, sx0, sx1, sx2, sx3, sy0, sy1, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs * sx3 + offs * sx1 + sx0 + sx2)
    tl.store(y_ptr + offs * sy1 + sy0, v)
'''

STRIDED_WRAPPER = '''
import torch

from pkg.kernels import nhwc_kernel


def conv_like(x: torch.Tensor, y: torch.Tensor):
    assert x.stride(1) == 1, "channels-last input"
    if not y.is_contiguous():
        raise ValueError("y must be contiguous")
    nhwc_kernel[(1,)](x, y, x.numel(), x.stride(0), x.stride(1), x.stride(2), x.stride(3), y.stride(0), y.stride(1))
'''


def _strided(tmp_path, wrapper: str):
    site = one_site(tmp_path, STRIDED_KERNEL, wrapper)
    (spec,) = launch_spec.resolve_specs(site, kernel_source=STRIDED_KERNEL).specs
    return dict(spec.int_values), {a.parameter: a for a in spec.assumptions}


def test_a_stated_layout_is_a_fact_and_a_channels_last_tensor_is_not_taken_as_last_dim_contiguous(tmp_path):
    values, assumed = _strided(tmp_path, STRIDED_WRAPPER)
    assert values["sx1"] == 1 and "sx1" not in assumed  # `assert x.stride(1) == 1`: exact
    assert values.get("sx3") != 1  # its last dim is not the unit one: not assumed contiguous there
    assert values["sy1"] == 1 and "sy1" not in assumed  # `if not y.is_contiguous(): raise`: exact, not assumed


def test_without_a_layout_check_the_last_dim_stays_an_assumption(tmp_path):
    plain = STRIDED_WRAPPER.replace('    assert x.stride(1) == 1, "channels-last input"\n', "").replace(
        '    if not y.is_contiguous():\n        raise ValueError("y must be contiguous")\n', "")
    values, assumed = _strided(tmp_path, plain)
    assert values["sx3"] == 1 and "contiguous in its last dim" in assumed["sx3"].source
    assert values.get("sx1") != 1
    channels_last = plain.replace("    nhwc_kernel[", "    assert x.is_contiguous(memory_format=torch.channels_last)\n"
                                  "    nhwc_kernel[")
    (tmp_path / "cl").mkdir()
    values, assumed = _strided(tmp_path / "cl", channels_last)
    assert values["sx1"] == 1 and values.get("sx3") != 1


STATED_DTYPES = '''
import torch

from pkg.kernels import grads_kernel

SUPPORTED = (torch.float16, torch.bfloat16)


def forward(q, dq, k, counts, both, qt):
    fp8 = []
    if hasattr(torch, "float8_e4m3fn"):
        fp8.append(torch.float8_e4m3fn)
    if hasattr(torch, "float8_e4m3fnuz"):
        fp8.append(torch.float8_e4m3fnuz)
    fp8 = tuple(fp8)
    assert q.dtype in fp8, "q must be fp8"
    assert torch.float32 == dq.dtype and k.dtype in (torch.float16, torch.float32)
    if counts.dtype != torch.int64:
        raise TypeError("counts")
    assert both.dtype in SUPPORTED
    grads_kernel[(1,)](q.view(-1), dq, k, counts, both, qt, q.numel())
'''


def test_dtypes_the_wrapper_asserts_are_the_tensors_dtypes(tmp_path):
    types, assumed = _spec(tmp_path, STATED_DTYPES)
    assert types["q_ptr"] == "*fp8e4nv" and "q_ptr" in assumed  # one of two 1-byte fp8 spellings: the first
    assert types["dq_ptr"] == "*fp32" and "dq_ptr" not in assumed  # == states it exactly (either side)
    assert types["idx_ptr"] == "*i64"  # ``if counts.dtype != torch.int64: raise``
    assert types["cat_ptr"] == "*fp16" and "cat_ptr" in assumed  # a module constant of two 2-byte dtypes
    assert types["dk_ptr"] == "*bf16"  # fp16 or fp32: sizes differ, nothing stated (--assume-dtype)


DOT_KERNEL = '''
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 32})], key=["n"])
@triton.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs[:, None] * BLOCK + offs[None, :])
    b = tl.load(b_ptr + offs[:, None] * BLOCK + offs[None, :])
    tl.store(c_ptr + offs[:, None] * BLOCK + offs[None, :], tl.dot(a, b))
'''

DOT_WRAPPER = '''
import torch

from pkg.kernels import dot_kernel


def gemm(a, b, c, use_cuda: bool):
    a = a.view(-1, a.size(-1))
    if use_cuda:
        assert a.dtype in (torch.float8_e4m3fn, torch.float8_e5m2)
    else:
        assert a.dtype in (getattr(torch, "float8_e4m3fnuz", None),)
    dot_kernel[(1,)](a, b, c, a.numel())
'''


def test_a_dot_operand_takes_the_dtype_its_partner_is_stated_to_have(tmp_path):
    # every branch of the if checks a (all 1-byte fp8), a's rebinding keeps its dtype; b, only
    # assumed, is the other operand of the same tl.dot: fp8 as well, listed as assumed.
    site = one_site(tmp_path, DOT_KERNEL, textwrap.dedent(DOT_WRAPPER))
    (spec,) = launch_spec.resolve_specs(site, kernel_source=DOT_KERNEL).specs
    types = dict(spec.types)
    assert types["a_ptr"] == types["b_ptr"] == "*fp8e4nv"
    (b,) = [a for a in spec.assumptions if a.parameter == "b_ptr"]
    assert "other operand of a tl.dot with a_ptr" in b.source
    assert types["c_ptr"] == "*bf16"  # not a dot operand: --assume-dtype


SCALED_KERNEL = DOT_KERNEL.replace("def dot_kernel(a_ptr, b_ptr, c_ptr, n,", "def dot_kernel(a_ptr, b_ptr, c_ptr, a_scale_ptr, n,").replace(
    "tl.dot(a, b))", "tl.dot(a, b) * tl.load(a_scale_ptr))")

SCALED_WRAPPER = '''
from pkg.kernels import dot_kernel


def gemm(a, b, c, a_scale):
    dot_kernel[(1,)](a, b, c, a_scale, a.numel())
'''


def test_a_quantized_gemms_operands_of_no_stated_dtype_are_judged_at_16_and_8_bits(tmp_path):
    # A kernel that takes a scale tensor is a quantized GEMM: its dot's operands are judged at the
    # assumed bf16 and at fp8, one family (a verdict that differs "depends"); b follows a.
    site = one_site(tmp_path, SCALED_KERNEL, textwrap.dedent(SCALED_WRAPPER))
    specs = launch_spec.resolve_specs(site, kernel_source=SCALED_KERNEL).specs
    pairs = sorted((dict(s.types)["a_ptr"], dict(s.types)["b_ptr"]) for s in specs)
    assert pairs == [("*bf16", "*bf16"), ("*fp8e4nv", "*fp8e4nv")]
    assert len({s.family for s in specs}) == 1 and all(set(dict(s.ranged)) == {"a_ptr"} for s in specs)
    assert all(dict(s.types)["a_scale_ptr"] == "*fp32" for s in specs)  # scales stay fp32
    exact = launch_spec.resolve_specs(site, kernel_source=SCALED_KERNEL, exact=True)
    assert not exact.ok  # --exact assumes no dtype
