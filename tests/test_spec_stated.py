"""Values the wrapper itself pins before a launch (``assert Lk in {64, 128}``, ``if D not in
SUPPORTED: raise``) and conditionals it decides: one spec per allowed value, every parameter
computed from one name consistent with the others, each listed with the statement it rests on.

Small packages written here, scanned with the real LibCST locator; the end-to-end test compiles
for real through the CLI.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from autotune_rewrite.spec import launch_spec
from autotune_rewrite.locate.scan import scan
from tests.repo_env import pythonpath
import cli_process

KERNEL = '''
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK_M": 32}, num_warps=4, num_stages=2),
                          triton.Config({"BLOCK_M": 64}, num_warps=4, num_stages=3)], key=["n"])
@triton.jit
def head_kernel(q_ptr, o_ptr, n, stride_q, HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_M: tl.constexpr):
    pid = tl.program_id(0)
    offs_m = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    mask = (offs_m[:, None] < n) & (offs_d[None, :] < HEAD_DIM)
    q = tl.load(q_ptr + offs_m[:, None] * stride_q + offs_d[None, :], mask=mask, other=0.0)
    acc = tl.dot(q, tl.trans(q))
    tl.store(o_ptr + offs_m[:, None] * BLOCK_M + tl.arange(0, BLOCK_M)[None, :], acc)
'''

WRAPPER = '''
import torch
import triton

from .kernels import head_kernel

SUPPORTED = (64, 128)


def attention(q: torch.Tensor):
    n, Lk = q.shape
    assert Lk in {48, 64, 128}, "unsupported head dim"
    out = torch.empty((n, n), dtype=torch.float32, device=q.device)
    head_kernel[(triton.cdiv(n, 64),)](q, out, n, q.stride(0), HEAD_DIM=Lk, BLOCK_D=triton.next_power_of_2(Lk))
    return out
'''


def _pkg(root: Path, wrapper: str, kernel: str = KERNEL) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "kernels.py").write_text(kernel)
    (root / "pkg" / "ops.py").write_text(wrapper)
    return root


def _resolve(root: Path, **kw):
    (site,) = scan(root, jobs=1).sites
    return launch_spec.resolve_specs(site, kernel_source=(root / "pkg" / "kernels.py").read_text(), **kw)


def _values(res) -> list[tuple]:
    return [(dict(s.constexprs)["HEAD_DIM"], dict(s.constexprs)["BLOCK_D"]) for s in res.specs]


def test_an_asserted_set_is_one_spec_per_value_and_derived_values_follow_it(tmp_path):
    res = _resolve(_pkg(tmp_path, WRAPPER))
    assert not res.missing
    # BLOCK_D = next_power_of_2(Lk) of the same Lk in each spec: never HEAD_DIM=128 with BLOCK_D=64.
    assert _values(res) == [(48, 64), (64, 64), (128, 128)]
    assert [s.name for s in res.specs] == ["default Lk=48", "default Lk=64", "default Lk=128"]
    (why,) = [a.source for a in res.specs[0].assumptions if a.parameter == "BLOCK_D"]
    assert "`triton.next_power_of_2(Lk)`" in why and "Lk = 48, one of {48, 64, 128}" in why
    assert "`assert Lk in {48, 64, 128}` (line 12)" in why


def test_the_assume_table_narrows_an_asserted_set(tmp_path):
    # The user's serving head dim is one of the allowed ones: one spec, still consistent.
    res = _resolve(_pkg(tmp_path, WRAPPER), assume={"HEAD_DIM": (128,)})
    assert _values(res) == [(128, 128)]
    (why,) = [a.source for a in res.specs[0].assumptions if a.parameter == "BLOCK_D"]
    assert "narrowed to {128} by the assume table's HEAD_DIM" in why


def test_a_raise_on_a_module_constant_set_pins_a_parameter(tmp_path):
    wrapper = WRAPPER.replace('    assert Lk in {48, 64, 128}, "unsupported head dim"\n',
                              '    if Lk not in SUPPORTED:\n        raise ValueError(f"head dim {Lk}")\n')
    res = _resolve(_pkg(tmp_path, wrapper))
    assert _values(res) == [(64, 64), (128, 128)]
    assert any("`if Lk not in SUPPORTED: raise`" in a.source for a in res.specs[0].assumptions)


def test_a_check_that_does_not_hold_at_the_launch_pins_nothing(tmp_path):
    cases = {
        "under a branch": WRAPPER.replace('    assert Lk in', '    if n > 1:\n        assert Lk in'),
        "after the launch": WRAPPER.replace('    assert Lk in {48, 64, 128}, "unsupported head dim"\n', "")
                                   .replace("    return out", "    assert Lk in {48, 64, 128}\n    return out"),
        "rebound after it": WRAPPER.replace('"unsupported head dim"\n', '"unsupported head dim"\n    Lk = n\n'),
        "an or of two sets": WRAPPER.replace("assert Lk in {48, 64, 128}", "assert Lk in {48, 64} or n in {1}"),
    }
    for label, wrapper in cases.items():
        root = tmp_path / label.replace(" ", "_")
        res = _resolve(_pkg(root, wrapper))
        # Not pinned to the stated set: a tile size no code gives, judged over the default sweep.
        assert not res.missing, label
        assert 256 in {dict(s.constexprs)["BLOCK_D"] for s in res.specs}, label
        assert all("default shape sweep" in a.source for s in res.specs for a in s.assumptions
                   if a.parameter == "BLOCK_D"), label


def test_too_many_combinations_stay_missing_saying_why(tmp_path):
    kernel = KERNEL.replace("BLOCK_D: tl.constexpr,", "BLOCK_D: tl.constexpr, ROWS: tl.constexpr,")
    wrapper = WRAPPER.replace('"unsupported head dim"\n', '"unsupported head dim"\n    assert n in (1, 2, 3, 4)\n') \
                     .replace("BLOCK_D=triton", "ROWS=n, BLOCK_D=triton")
    res = _resolve(_pkg(tmp_path, wrapper, kernel))
    ((_, names),) = res.missing
    assert set(names) == {"HEAD_DIM", "BLOCK_D", "ROWS"}
    assert "more than 8 combinations" in res.stanza


def test_a_conditional_the_wrapper_decides_takes_its_branch(tmp_path):
    kernel = KERNEL.replace("BLOCK_D: tl.constexpr,", "BLOCK_D: tl.constexpr, G: tl.constexpr,")
    wrapper = WRAPPER.replace("def attention(q: torch.Tensor):", "def attention(q: torch.Tensor, sizes=None):") \
                     .replace("BLOCK_D=triton", "G=sizes.numel() if sizes is not None else 0, BLOCK_D=triton")
    res = _resolve(_pkg(tmp_path, wrapper, kernel))
    assert not res.missing
    assert {dict(s.constexprs)["G"] for s in res.specs} == {0}
    (why,) = [a.source for a in res.specs[0].assumptions if a.parameter == "G"]
    assert "the caller leaves sizes at its default None" in why
    # Between a tensor and None the default decides nothing: `sizes` itself is typed present.
    kernel = KERNEL.replace("o_ptr, n,", "o_ptr, idx_ptr, n,")
    wrapper = WRAPPER.replace("def attention(q: torch.Tensor):", "def attention(q: torch.Tensor, sizes=None):") \
                     .replace("(q, out, n,", "(q, out, sizes.cumsum(0) if sizes is not None else None, n,")
    (spec, *_) = _resolve(_pkg(tmp_path / "tensor", wrapper, kernel)).specs
    assert dict(spec.types)["idx_ptr"].startswith("*")


def test_check_compiles_each_allowed_value_and_lists_the_assert(tmp_path):
    root = _pkg(tmp_path / "repo", WRAPPER)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    env = {**os.environ, "PYTHONPATH": pythonpath(), "AUTOTUNE_REWRITE_CACHE_DIR": str(tmp_path / "cache")}
    p = cli_process.run(["check", str(root), "--arch", "sm_120",
                        "--format", "json", "-j", "1"], env=env, timeout=600)
    assert p.returncode in (0, 1), p.stderr
    kernels = json.loads(p.stdout)["kernels"]
    assert sorted(k["spec"] for k in kernels) == ["default Lk=128", "default Lk=48", "default Lk=64"]
    assert {k["status"] for k in kernels} <= {"assumed", "no_launchable"}
    for k in kernels:
        (a,) = [a for a in k["assumptions"] if a["parameter"] == "HEAD_DIM"]
        assert "assert Lk in {48, 64, 128}" in a["source"]


def test_the_kernels_own_static_assert_pins_a_constexpr_nothing_gives(tmp_path):
    kernel = KERNEL.replace("    pid = tl.program_id(0)\n",
                            "    tl.static_assert(BLOCK_D == 64 or BLOCK_D == 128, 'head dim')\n"
                            "    pid = tl.program_id(0)\n", 1)
    wrapper = WRAPPER.replace('    assert Lk in {48, 64, 128}, "unsupported head dim"\n', "") \
                     .replace("BLOCK_D=triton.next_power_of_2(Lk)", "BLOCK_D=pick(Lk)")
    res = _resolve(_pkg(tmp_path, wrapper, kernel))
    assert not res.missing
    assert [dict(s.constexprs)["BLOCK_D"] for s in res.specs] == [64, 128]
    (why,) = [a.source for a in res.specs[0].assumptions if a.parameter == "BLOCK_D"]
    assert "`tl.static_assert(BLOCK_D == 64 or BLOCK_D == 128)`" in why


def test_an_asserted_upper_bound_is_the_largest_value_a_tile_from_it_is_judged_at(tmp_path):
    for label, check in {"assert": "    assert Lk <= 96, 'head dim'\n",
                         "raise": "    if Lk > 96:\n        raise ValueError(Lk)\n"}.items():
        wrapper = WRAPPER.replace('    assert Lk in {48, 64, 128}, "unsupported head dim"\n', check)
        res = _resolve(_pkg(tmp_path / label, wrapper))
        assert not res.missing, label
        # HEAD_DIM only masks (arithmetic): assumed large; BLOCK_D = next_power_of_2(Lk) <= 128.
        # Judged at the default sweep's values below the bound too (a head dim of 64 is as likely),
        # Lk sweeping both parameters it gives, within the bounds: (HEAD_DIM, BLOCK_D) = (64, 64), (96, 128).
        assert [(dict(s.constexprs)["HEAD_DIM"], dict(s.constexprs)["BLOCK_D"]) for s in res.specs] == [
            (64, 64), (96, 128)], label
        assert [s.ranged for s in res.specs] == [(("Lk", 64),), (("Lk", 96),)] and {s.family for s in res.specs} == {
            "default"}
        why = {a.source for s in res.specs for a in s.assumptions if a.parameter == "BLOCK_D"}
        assert all("kept where HEAD_DIM <= 96 and BLOCK_D <= 128" in w for w in why), why


def test_a_comparison_of_known_values_is_known(tmp_path):
    kernel = KERNEL.replace("BLOCK_D: tl.constexpr,", "BLOCK_D: tl.constexpr, M_MAJOR: tl.constexpr,") \
                   .replace("    acc = tl.dot", "    if M_MAJOR:\n        q = q * 2\n    acc = tl.dot")
    wrapper = WRAPPER.replace("def attention(q: torch.Tensor):",
                              "def attention(q: torch.Tensor, sizes=None, k_major: bool = True):") \
                     .replace("BLOCK_D=triton", "M_MAJOR=sizes is not None or k_major is False, BLOCK_D=triton")
    res = _resolve(_pkg(tmp_path, wrapper, kernel))
    assert {dict(s.constexprs)["M_MAJOR"] for s in res.specs} == {False}  # both defaults: not a flag to assume on
    (why,) = {a.source for s in res.specs for a in s.assumptions if a.parameter == "M_MAJOR"}
    assert "sizes at its default None" in why and "k_major at its default True" in why


def test_keywords_passed_through_a_dict_the_wrapper_spells_out_are_read(tmp_path):
    spelled = WRAPPER.replace(
        "head_kernel[(triton.cdiv(n, 64),)](q, out, n, q.stride(0), HEAD_DIM=Lk, BLOCK_D=triton.next_power_of_2(Lk))",
        "meta = {'HEAD_DIM': Lk, 'BLOCK_D': triton.next_power_of_2(Lk)}\n"
        "    head_kernel[(triton.cdiv(n, 64),)](q, out, n, q.stride(0), **meta)")
    assert _values(_resolve(_pkg(tmp_path / "dict", spelled))) == [(48, 64), (64, 64), (128, 128)]
    changed = spelled.replace("    head_kernel[", "    meta['BLOCK_D'] = 256\n    head_kernel[")
    res = _resolve(_pkg(tmp_path / "changed", changed))  # a dict it changes: not read, so swept
    assert {dict(s.constexprs)["BLOCK_D"] for s in res.specs} == {64, 128, 256}
