"""Launch specs that are probably wrong: each detector fires on a kernel written here (real
``triton.compile`` through the real CLI, sm_120), and stays quiet where the numbers are right.

A spec_suspect kernel is not judged: none of its configs "launches" or "cannot launch", check's
gate ignores its refusals, ``--strict`` fails on it, and diff leaves its configs alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autotune_rewrite import findings as cf
from autotune_rewrite.evidence import KernelBundle
from autotune_rewrite.isolate.kernel_facts import facts_of
from autotune_rewrite.model import to_jsonable
from autotune_rewrite.output import explain
from rewrite_e2e import cli, commit_tree, state

MM_BODY = '''
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * stride_a + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * stride_b + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=rk[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * stride_b
    tl.store(c_ptr + rm[:, None] * stride_c + rn[None, :], acc.to(tl.bfloat16))
'''
MM_PARAMS = "a_ptr, b_ptr, c_ptr, K, stride_a, stride_b, stride_c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr"

KERNELS = f'''\
import triton
import triton.language as tl

SMALL = [triton.Config({{"BM": 64, "BN": 64, "BK": 32}}, num_warps=4, num_stages=s) for s in (2, 3, 4)]
# 131,072 B even unpipelined: over sm_120's opt-in limit, so a judged kernel would drop them.
BIG = [triton.Config({{"BM": 128, "BN": 128, "BK": 256}}, num_warps=8, num_stages=s) for s in (2, 3)]


@triton.autotune(configs=SMALL + BIG, key=["K"])
@triton.jit
def mm_kernel({MM_PARAMS}):{MM_BODY}

@triton.autotune(configs=SMALL, key=["K"])
@triton.jit
def mm_values_kernel({MM_PARAMS}):{MM_BODY}

@triton.autotune(configs=[triton.Config({{"BM": 32}}, num_warps=4), triton.Config({{"BM": 64}}, num_warps=4)], key=["s"])
@triton.jit
def tiles_kernel(a_ptr, c_ptr, s, BM: tl.constexpr, K_TILES: tl.constexpr):
    r = tl.arange(0, BM)
    acc = tl.zeros((BM, BM), dtype=tl.float32)
    for k in range(0, K_TILES):
        a = tl.load(a_ptr + k * BM * BM + r[:, None] * s + r[None, :])
        acc = tl.dot(a, a, acc)
    tl.store(c_ptr + r[:, None] * s + r[None, :], acc)


@triton.autotune(configs=[triton.Config({{"BLOCK": 64}}, num_warps=4), triton.Config({{"BLOCK": 128}}, num_warps=4)],
                 key=["n"])
@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.autotune(configs=[triton.Config({{"BLOCK": 32}}, num_warps=4), triton.Config({{"BLOCK": 64}}, num_warps=4)],
                 key=["n"])
@triton.jit
def head_kernel(x_ptr, n, BLOCK: tl.constexpr, HEAD_DIM: tl.constexpr):
    offs = tl.arange(0, BLOCK)[:, None] * HEAD_DIM + tl.arange(0, HEAD_DIM)[None, :]
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2)


@triton.autotune(configs=[triton.Config({{"BLOCK": 32}}, num_warps=4), triton.Config({{"BLOCK": 64}}, num_warps=4)],
                 key=["n"])
@triton.jit
def assert_kernel(x_ptr, n, BLOCK: tl.constexpr, HEAD_DIM: tl.constexpr):
    tl.static_assert(HEAD_DIM % 16 == 0, "HEAD_DIM must be a multiple of 16")
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2)
'''

MM_TYPES = ('{ a_ptr = "*bf16", b_ptr = "*bf16", c_ptr = "*bf16", K = "i32", stride_a = "i32", stride_b = "i32", '
            'stride_c = "i32" }')
PYPROJECT = f'''\
[tool.autotune-rewrite]
arch = ["sm_120"]

# Types but no int values: no divisibility, so the loads are 2 bytes wide and nothing is pipelined.
[[tool.autotune-rewrite.kernels]]
kernel = "kern.py::mm_kernel"
types = {MM_TYPES}

[[tool.autotune-rewrite.kernels]]
kernel = "kern.py::mm_values_kernel"
spec = "values"
types = {MM_TYPES}
values = {{ K = 4096, stride_a = 4096, stride_b = 4096, stride_c = 4096 }}

# Every value stated, none a multiple of 16: the runtime does not pipeline either; trusted.
[[tool.autotune-rewrite.kernels]]
kernel = "kern.py::mm_values_kernel"
spec = "odd"
types = {MM_TYPES}
values = {{ K = 4095, stride_a = 4095, stride_b = 4095, stride_c = 4095 }}

[[tool.autotune-rewrite.kernels]]
kernel = "kern.py::tiles_kernel"
spec = "K_TILES=0"
types = {{ a_ptr = "*bf16", c_ptr = "*fp32", s = "i32" }}
constexprs = {{ K_TILES = 0 }}
values = {{ s = 64 }}

[[tool.autotune-rewrite.kernels]]
kernel = "kern.py::tiles_kernel"
spec = "K_TILES=2"
types = {{ a_ptr = "*bf16", c_ptr = "*fp32", s = "i32" }}
constexprs = {{ K_TILES = 2 }}
values = {{ s = 64 }}

[[tool.autotune-rewrite.kernels]]
kernel = "kern.py::copy_kernel"
types = {{ x_ptr = "*fp32", y_ptr = "*fp32", n = "i32" }}

[[tool.autotune-rewrite.kernels]]
kernel = "kern.py::head_kernel"
types = {{ x_ptr = "*fp32", n = "i32" }}
constexprs = {{ HEAD_DIM = 48 }}

[[tool.autotune-rewrite.kernels]]
kernel = "kern.py::assert_kernel"
types = {{ x_ptr = "*fp32", n = "i32" }}
constexprs = {{ HEAD_DIM = 8 }}
'''


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("specsanity") / "repo"
    root.mkdir()
    (root / "kern.py").write_text(KERNELS)
    (root / "pyproject.toml").write_text(PYPROJECT)
    return commit_tree(root)


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("specsanity-cache")


@pytest.fixture(scope="module")
def checked(repo, cache) -> tuple[int, dict]:
    proc = cli("check", ".", "--format", "json", cwd=repo, cache=cache)
    return proc.returncode, {(k["kernel"], k["spec"]): k for k in json.loads(proc.stdout)["kernels"]}


@pytest.fixture(scope="module")
def checked_exact(repo, cache) -> tuple[int, dict]:
    """``--exact``: ints without a value compile as generic ones (no divisibility): the thin spec."""
    proc = cli("check", ".", "--format", "json", "--exact", cwd=repo, cache=cache)
    return proc.returncode, {(k["kernel"], k["spec"]): k for k in json.loads(proc.stdout)["kernels"]}


def _line(text: str, needle: str) -> int:
    return next(i for i, ln in enumerate(text.splitlines(), 1) if needle in ln)


def test_flat_smem_across_stages_in_a_pipelined_loop(checked_exact):
    _, kernels = checked_exact
    mm = kernels[("mm_kernel", "default")]
    assert mm["status"] == "spec_suspect"
    assert mm["problem"]["reason"] == "spec_probably_wrong"
    assert [c["shared_bytes"] for c in mm["configs"]] == [8192, 8192, 8192, 131072, 131072]
    (found,) = mm["suspicions"]
    loop = _line(KERNELS, "for k in range(0, tl.cdiv(K, BK))")  # mm_kernel's loop comes first
    assert found == {"kind": "flat_smem_across_stages", "arch": "sm_120",
                     "configs": ["BM=64 BN=64 BK=32 w4 s2", "BM=64 BN=64 BK=32 w4 s3", "BM=64 BN=64 BK=32 w4 s4"],
                     "stages": [2, 3, 4], "shared_bytes": 8192, "groups": 2, "loop_file": "kern.py", "loop_line": loop,
                     "unstated": ["K", "stride_a", "stride_b", "stride_c"]}
    assert mm["message"].startswith("launch spec probably wrong, so no config is judged: shared memory is 8,192 B "
                                    "at every num_stages (2, 3, 4)")
    assert f"the loop at kern.py:{loop}" in mm["message"]
    assert mm["message"].endswith("state K, stride_a, stride_b, stride_c (values = { ... }, types = { ... })")


def test_the_divisibility_assumption_gives_the_thin_spec_its_pipelined_smem(checked):
    """Without --exact the same thin spec's ints are assumed divisible by 16 (listed): the loop
    pipelines, SMEM grows with the stages, and the kernel is judged with assumptions."""
    _, kernels = checked
    mm = kernels[("mm_kernel", "default")]
    assert mm["status"] in ("assumed", "no_launchable") and mm["suspicions"] == []
    smem = [c["shared_bytes"] for c in mm["configs"]]
    assert smem[0] < smem[1] < smem[2]
    assert {"K", "stride_a"} <= {a["parameter"] for a in mm["assumptions"]}


def test_a_good_spec_whose_smem_grows_with_stages_is_judged(checked):
    _, kernels = checked
    good = kernels[("mm_values_kernel", "values")]
    assert good["status"] == "judged" and good["suspicions"] == [] and good["problem"] is None
    assert [c["shared_bytes"] for c in good["configs"]] == [8192, 16384, 24576]
    # Flat, but every value is stated (none divisible by 16, so the runtime does not pipeline): judged.
    odd = kernels[("mm_values_kernel", "odd")]
    assert odd["status"] == "judged" and [c["shared_bytes"] for c in odd["configs"]] == [8192, 8192, 8192]


def test_no_smem_although_the_kernel_always_runs_a_dot(checked):
    _, kernels = checked
    empty = kernels[("tiles_kernel", "K_TILES=0")]
    assert empty["status"] == "spec_suspect"
    assert [c["shared_bytes"] for c in empty["configs"]] == [0, 0]
    assert empty["suspicions"] == [{"kind": "no_smem_with_dot", "archs": ["sm_120"], "configs": 2, "dot_file": "kern.py",
                                    "dot_line": _line(KERNELS, "acc = tl.dot(a, a, acc)")}]
    # The same kernel with a trip count: SMEM, judged; a kernel with no dot and 0 B: judged.
    assert kernels[("tiles_kernel", "K_TILES=2")]["status"] == "judged"
    copy = kernels[("copy_kernel", "default")]
    assert copy["status"] in ("judged", "assumed") and [c["shared_bytes"] for c in copy["configs"]] == [0, 0]


def test_every_config_rejected_and_static_assert_every_config(checked):
    _, kernels = checked
    head = kernels[("head_kernel", "default")]
    assert head["status"] == "spec_suspect"
    (found,) = head["suspicions"]
    assert found["kind"] == "every_config_rejected" and found["configs"] == 2
    assert found["error"].startswith("arange's range must be a power of 2")
    assert (found["file"], found["line"]) == ("kern.py", _line(KERNELS, "offs = tl.arange(0, BLOCK)[:, None] * HEAD_DIM"))
    asserted = kernels[("assert_kernel", "default")]
    (found,) = asserted["suspicions"]
    assert found["kind"] == "static_assert_every_config" and found["configs"] == 2
    assert found["line"] == _line(KERNELS, "tl.static_assert(HEAD_DIM % 16 == 0")
    assert "a static_assert fails for every one of the 2 configs" in asserted["message"]
    assert "HEAD_DIM must be a multiple of 16" in asserted["problem"]["detail"]


def test_the_gate_ignores_a_suspect_kernels_refusals_and_strict_counts_it(repo, cache, checked_exact):
    rc, kernels = checked_exact
    # mm_kernel's BIG configs are over the opt-in limit and head/assert_kernel compile nothing:
    # judged, they would fail the gate; suspect, they are not "cannot launch".
    assert rc == 0
    assert [c["launchable"] for c in kernels[("mm_kernel", "default")]["configs"]][3:] == [False, False]
    table = cli("check", ".", "--exact", cwd=repo, cache=cache)
    assert table.returncode == 0
    assert "judged 4 of 8 kernels" in table.stderr and "warning: spec_suspect kern.py::mm_kernel: " in table.stderr
    assert ": 0 cannot launch;" in table.stderr and "cannot launch: shared memory" not in table.stderr
    strict = cli("check", ".", "--exact", "--strict", cwd=repo, cache=cache)
    assert strict.returncode == 1


def test_diff_does_not_prune_a_suspect_kernel(repo, cache):
    before = state(repo)
    proc = cli("diff", "--variant", "prune", "--check", "--format", "json", "--exact", ".", cwd=repo, cache=cache)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["diff"] == "" and data["changed_files"] == []
    statuses = {(o["kernel"], o.get("spec")): o["status"] for o in data["outcomes"]}
    assert statuses[("kern.py::mm_kernel", "default")] == "spec_suspect"
    assert state(repo) == before


# --------------------------------------------------------------------------- source facts (no compile)
def _facts(body: str, kernel: str = "k"):
    source = "import triton\nimport triton.language as tl\n\n\n" + body
    return facts_of(KernelBundle(kernel=kernel, source=source, origin=f"kern.py::{kernel}",
                                 functions=((kernel, "kern.py", 100), ("inner", "kern.py", 200))))


def test_a_loop_whose_loads_feed_a_dot_is_pipelined_with_its_bounds():
    facts = _facts("@triton.jit\ndef k(a, n, B: tl.constexpr):\n    r = tl.arange(0, B)\n    acc = tl.zeros((B, B), tl.float32)\n"
                   "    p = a + r[:, None] * B + r[None, :]\n    for i in range(0, n):\n        x = tl.load(p)\n"
                   "        acc = tl.dot(x, x, acc)\n        p += B\n    tl.store(a, acc)\n")
    (loop,) = facts.pipelined_loops
    assert loop.bound_params == ("n",) and not loop.runtime
    assert (loop.place.file, loop.place.line) == ("kern.py", 104)  # def at 100, the loop 4 lines below
    assert facts.unconditional_dot is not None and facts.unconditional_dot.line == 106


@pytest.mark.parametrize("loop", [
    "for i in tl.static_range(0, n):",  # unrolled by the frontend: no scf.for
    "for i in tl.range(0, n, num_stages=2):",  # the loop's own stage count wins over the config's
])
def test_loops_the_config_stage_count_does_not_pipeline(loop):
    facts = _facts("@triton.jit\ndef k(a, n, B: tl.constexpr):\n    r = tl.arange(0, B)\n    acc = tl.zeros((B, B), tl.float32)\n"
                   f"    p = a + r[:, None] * B + r[None, :]\n    {loop}\n        x = tl.load(p)\n"
                   "        acc = tl.dot(x, x, acc)\n        p += B\n    tl.store(a, acc)\n")
    assert facts.pipelined_loops == ()


def test_no_pipelined_loop_without_a_dot_an_outer_loop_or_an_invariant_load():
    no_dot = _facts("@triton.jit\ndef k(a, n, B: tl.constexpr):\n    r = tl.arange(0, B)\n    s = tl.zeros((B,), tl.float32)\n"
                    "    for i in range(0, n):\n        s += tl.load(a + i * B + r)\n    tl.store(a + r, s)\n")
    assert no_dot.pipelined_loops == () and no_dot.unconditional_dot is None
    outer = _facts("@triton.jit\ndef k(a, n, B: tl.constexpr):\n    r = tl.arange(0, B)\n    acc = tl.zeros((B, B), tl.float32)\n"
                   "    for j in range(0, n):\n        x = tl.load(a + j + r[:, None] + r[None, :])\n"
                   "        acc = tl.dot(x, x, acc)\n        for i in range(0, n):\n            acc += 1\n    tl.store(a, acc)\n")
    assert [lp.place.line for lp in outer.pipelined_loops] == []  # the outer loop has a loop inside
    invariant = _facts("@triton.jit\ndef k(a, n, B: tl.constexpr):\n    r = tl.arange(0, B)\n    acc = tl.zeros((B, B), tl.float32)\n"
                       "    for i in range(0, n):\n        x = tl.load(a + r[:, None] + r[None, :])\n"
                       "        acc = tl.dot(x, x, acc)\n    tl.store(a, acc)\n")
    assert invariant.pipelined_loops == ()


def test_a_helper_loop_with_runtime_bounds_and_a_dot_under_an_if():
    # Flash-attention's shape: the loop lives in a helper, its bounds come from program_id.
    facts = _facts("@triton.jit\ndef inner(acc, q, kp, lo, hi, B: tl.constexpr):\n    for s in range(lo, hi, B):\n"
                   "        k = tl.load(kp)\n        acc = tl.dot(q, k, acc)\n        kp = tl.advance(kp, (0, B))\n"
                   "    return acc\n\n\n"
                   "@triton.jit\ndef k(q_ptr, k_ptr, n, B: tl.constexpr, DOT: tl.constexpr):\n"
                   "    lo = tl.program_id(0) * B\n    kp = tl.make_block_ptr(k_ptr, (n, n), (n, 1), (0, 0), (B, B), (1, 0))\n"
                   "    acc = tl.zeros((B, B), tl.float32)\n    if DOT:\n        acc = inner(acc, acc, kp, lo, n, B)\n"
                   "    tl.store(q_ptr, acc)\n")
    (loop,) = facts.pipelined_loops
    assert loop.place.function == "inner" and loop.runtime and loop.place.line == 201
    assert facts.unconditional_dot is None  # a constexpr `if` may compile the dot away


def test_a_load_that_reaches_only_a_helpers_addend_is_not_pipelined():
    # The loaded input is only added to the product (``matmul(A=W, B=W, C=x)``): it never goes
    # through shared memory, so nothing in the loop pipelines. Nor does a recurrent state computed
    # from such a load and fed back as an operand: the next iteration's dot reads a carried value.
    helpers = ("@triton.jit\ndef mm(A, B, C):\n    return tl.dot(A, B) + C\n\n\n"
               "@triton.jit\ndef step(h, W, x):\n    return mm(A=h, B=W, C=x)\n\n\n")
    body = ("@triton.jit\ndef k(x_ptr, w_ptr, S, B: tl.constexpr):\n    offs = tl.arange(0, B)\n"
            "    W = tl.load(w_ptr + offs[:, None] * B + offs[None, :])\n    h = tl.zeros((B, B), tl.float32)\n"
            "    idx = offs[:, None] * B + offs[None, :]\n    for _ in range(S):\n"
            "        y = {call}\n        tl.store(x_ptr + idx, y)\n        idx += B * B\n")
    assert _facts(helpers + body.format(call="step(W, W, tl.load(x_ptr + idx))")).pipelined_loops == ()
    recurrent = body.replace("        y = {call}\n        tl.store(x_ptr + idx, y)\n",
                             "        h = step(h, W, tl.load(x_ptr + idx))\n        tl.store(x_ptr + idx, h)\n")
    assert "h = step(h, W" in recurrent and _facts(helpers + recurrent).pipelined_loops == ()
    (loop,) = _facts(helpers + body.format(call="step(tl.load(x_ptr + idx), W, h)")).pipelined_loops
    assert loop.place.function == "k"


# --------------------------------------------------------------------------- words (no compile)
@pytest.mark.parametrize("found, words", [
    (cf.FlatSmemAcrossStages("sm_120", ("B=64 w4 s2", "B=64 w4 s3"), (2, 3), 8192, 1, "k.py", 7, ("n",)),
     "shared memory is 8,192 B at every num_stages (2, 3) for B=64 w4 s2, B=64 w4 s3 on sm_120, although the loop "
     "at k.py:7 loads tiles into a tl.dot, which Triton pipelines (one buffer more per stage) when its loads are at "
     "least 4 bytes wide: the spec probably lacks the divisibility or the dtypes the runtime gives; state n "
     "(values = { ... }, types = { ... })"),
    (cf.NoSmemWithDot(("sm_120",), 2, "k.py", 9),
     "all 2 config(s) compiled to 0 B of shared memory on sm_120, although the kernel always runs a tl.dot (k.py:9), "
     "whose operands pass through shared memory: the spec's constexprs probably compile it away (a loop with no "
     "iterations?)"),
    (cf.StaticAssertEveryConfig(3, "static_assert failed: D must be 64", "k.py", 4),
     "a static_assert fails for every one of the 3 configs (k.py:4): D must be 64; the spec's values probably break "
     "the kernel's own assumptions"),
    (cf.EveryConfigRejected(2, "arange's range must be a power of 2", None, None),
     "every one of the 2 configs fails to compile: arange's range must be a power of 2; with the same error for every "
     "config, the spec's types or constexprs are probably wrong, not the configs"),
])
def test_each_suspicion_in_words_and_as_json(found, words):
    assert explain.suspicion(found) == words
    assert to_jsonable(found)["kind"] == found.kind
