"""Which loops' loads Triton pipelines through shared memory: the source rule of
``isolate/pipelined_loads`` against real ``triton.compile`` on sm_120, and the flat-SMEM suspicion
it feeds, through the real CLI: quiet on recurrent kernels, still firing on a matmul.

The kernels are written here (``fixtures/pipelined/kernels.py``): recurrent states (RNN/GRU
cells) whose input only meets a dot as its accumulator or addend, arithmetic, casts, reshapes
and transpositions between a load and a dot, loads and dots under runtime ifs."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from autotune_rewrite.compile.crosscompile import compile_job
from autotune_rewrite.evidence import CompileJob
from autotune_rewrite.isolate.kernel_facts import facts_of
from autotune_rewrite.isolate.kernel_loader import load_bundle
from rewrite_e2e import cli, commit_tree

FIXTURES = Path(__file__).parent / "fixtures" / "pipelined"


def _expected() -> dict[str, bool]:
    spec = importlib.util.spec_from_file_location("pipelined_fixture_kernels", FIXTURES / "kernels.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.PIPELINED


PIPELINED = _expected()
SIGNATURE = (("x_ptr", "*bf16"), ("w_ptr", "*bf16"), ("y_ptr", "*bf16"), ("S", "i32"), ("B", "constexpr"))


def _predicted(kernel: str) -> bool:
    return bool(facts_of(load_bundle(FIXTURES, "kernels.py", kernel)).pipelined_loops)


@pytest.mark.parametrize("kernel", sorted(PIPELINED))
def test_the_source_rule_predicts_each_fixture(kernel):
    assert _predicted(kernel) is PIPELINED[kernel]


@pytest.fixture(scope="module")
def smem(tmp_path_factory):
    """SMEM of each fixture at num_stages 2 and 3 on sm_120, with the runtime's divisibility (every
    pointer and S divisible by 16), so that only the source decides what is pipelined."""
    cache = tmp_path_factory.mktemp("triton-pipelined")
    out = {}
    for kernel in PIPELINED:
        bundle = load_bundle(FIXTURES, "kernels.py", kernel)
        row = []
        for stages in (2, 3):
            # Stopped right after shared-memory allocation: the figure is all this test reads.
            job = CompileJob(bundle=bundle, signature=SIGNATURE, constexprs=(("B", 64),),
                             divisible_by_16=("x_ptr", "w_ptr", "y_ptr", "S"), num_warps=4, num_stages=stages,
                             num_ctas=1, maxnreg=None, capability=120, stop_smem_above=0)
            outcome = compile_job(job, triton_cache_dir=cache)
            assert outcome.error is None, (kernel, outcome.error)
            row.append(outcome.shared_bytes)
        out[kernel] = row
    return out


@pytest.mark.parametrize("kernel", sorted(PIPELINED))
def test_a_real_compile_grows_smem_with_stages_exactly_where_predicted(smem, kernel):
    two, three = smem[kernel]
    assert (three > two) is PIPELINED[kernel], (kernel, smem[kernel])
    assert _predicted(kernel) is (three > two)


# --------------------------------------------------------------------------- the suspicion, end to end
KERNELS = '''\
import triton
import triton.language as tl

STAGED = [triton.Config({"BM": 32}, num_warps=4, num_stages=s) for s in (2, 3, 4)]


@triton.jit
def _matmul(A, B, C):
    return tl.dot(A, B, C.to(tl.float32)).to(tl.bfloat16)


@triton.jit
def _update(h, W, x):
    return tl.sigmoid(_matmul(A=h, B=W, C=x).to(tl.float32)).to(tl.bfloat16)


@triton.autotune(configs=STAGED, key=["S"])
@triton.jit
def gru_kernel(x_ptr, xr_ptr, w_ptr, y_ptr, S, stride_s, H: tl.constexpr, BM: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, H)
    W = tl.load(w_ptr + cols[:, None] * H + cols[None, :])
    h = tl.zeros((BM, H), tl.bfloat16)
    idx = rows[:, None] * H + cols[None, :]
    for _ in range(S):
        r = _update(h, W, tl.load(xr_ptr + idx))
        z = _update(h * r, W, tl.load(x_ptr + idx))
        h = (r * h + (1 - r) * z).to(tl.bfloat16)
        tl.store(y_ptr + idx, h)
        idx += stride_s


@triton.autotune(configs=STAGED, key=["K"])
@triton.jit
def mm_kernel(a_ptr, b_ptr, c_ptr, K, stride_a, stride_b, H: tl.constexpr, BM: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rk = tl.arange(0, H)
    a_ptrs = a_ptr + rm[:, None] * stride_a + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * stride_b + rk[None, :]
    acc = tl.zeros((BM, H), dtype=tl.float32)
    for k in range(0, K, H):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += H
        b_ptrs += H * stride_b
    tl.store(c_ptr + rm[:, None] * H + rk[None, :], acc.to(tl.bfloat16))
'''

PYPROJECT = '''\
[tool.autotune-rewrite]
arch = ["sm_120"]

[[tool.autotune-rewrite.kernels]]
kernel = "cells.py::gru_kernel"
types = { x_ptr = "*bf16", xr_ptr = "*bf16", w_ptr = "*bf16", y_ptr = "*bf16", S = "i32", stride_s = "i32" }
constexprs = { H = 64 }

[[tool.autotune-rewrite.kernels]]
kernel = "cells.py::mm_kernel"
types = { a_ptr = "*bf16", b_ptr = "*bf16", c_ptr = "*bf16", K = "i32", stride_a = "i32", stride_b = "i32" }
constexprs = { H = 64 }
'''


@pytest.fixture(scope="module")
def checked(tmp_path_factory) -> dict:
    """The thin spec (types, no int values) under ``--exact``: no divisibility, so no load is
    wide enough to pipeline and every kernel's SMEM is flat across its stages."""
    root = tmp_path_factory.mktemp("pipelined-e2e") / "repo"
    root.mkdir()
    (root / "cells.py").write_text(KERNELS)
    (root / "pyproject.toml").write_text(PYPROJECT)
    commit_tree(root)
    proc = cli("check", ".", "--format", "json", "--exact", cwd=root, cache=tmp_path_factory.mktemp("pipelined-cache"))
    return {k["kernel"]: k for k in json.loads(proc.stdout)["kernels"]}


def test_a_recurrent_kernel_with_flat_smem_is_judged_not_suspect(checked):
    # Its inputs only reach the dots as accumulators, its state is carried: nothing would be
    # pipelined whatever the spec, so flat SMEM says nothing about the spec.
    gru = checked["gru_kernel"]
    assert gru["status"] == "judged" and gru["suspicions"] == [] and gru["problem"] is None
    assert len({c["shared_bytes"] for c in gru["configs"]}) == 1


def test_a_matmul_with_flat_smem_is_still_suspect(checked):
    mm = checked["mm_kernel"]
    assert mm["status"] == "spec_suspect"
    assert [s["kind"] for s in mm["suspicions"]] == ["flat_smem_across_stages"]
    assert mm["suspicions"][0]["unstated"] == ["K", "stride_a", "stride_b"]


# --------------------------------------------------------------------------- source only
def _facts(source: str, kernel: str = "k"):
    from autotune_rewrite.evidence import KernelBundle

    text = "import triton\nimport triton.language as tl\n\n\n" + source
    return facts_of(KernelBundle(kernel=kernel, source=text, origin=f"kern.py::{kernel}"))


LOOP_IN_HELPER = '''\
@triton.jit
def block(acc, x_ptrs, w, n, MASKED):
    for i in range(n):
        if MASKED:
            x = tl.load(x_ptrs, mask=x_ptrs > 0)
        else:
            x = tl.load(x_ptrs)
        acc = tl.dot(x, w, acc)
        x_ptrs += 64
    return acc


@triton.jit
def k(x_ptr, w_ptr, n, {flag}):
    o = tl.arange(0, 64)
    w = tl.load(w_ptr + o[:, None] * 64 + o[None, :])
    acc = block(tl.zeros((64, 64), tl.float32), x_ptr + o[:, None] * 64 + o[None, :], w, n, FLAG)
    tl.store(x_ptr + o[:, None] * 64 + o[None, :], acc)
'''


def test_a_helper_flag_passed_a_constexpr_is_a_compile_time_if():
    # Every caller passes a constexpr: the loads under `if MASKED:` are top-level once compiled.
    (loop,) = _facts(LOOP_IN_HELPER.format(flag="FLAG: tl.constexpr")).pipelined_loops
    assert loop.place.function == "block"
    # Passed a runtime value, the if is an scf.if: loads under it are not pipelined.
    assert _facts(LOOP_IN_HELPER.format(flag="FLAG")).pipelined_loops == ()


def test_a_loop_with_a_loop_inside_is_not_pipelined_even_when_the_inner_one_fixes_its_stages():
    facts = _facts('''\
@triton.jit
def k(x_ptr, n, B: tl.constexpr):
    o = tl.arange(0, B)
    acc = tl.zeros((B, B), tl.float32)
    p = x_ptr + o[:, None] * B + o[None, :]
    for i in range(n):
        a = tl.load(p)
        acc = tl.dot(a, a, acc)
        for j in tl.range(0, n, num_stages=1):
            acc += 1.0
        p += B
    tl.store(x_ptr + o[:, None] * B + o[None, :], acc)
''')
    assert facts.pipelined_loops == ()
