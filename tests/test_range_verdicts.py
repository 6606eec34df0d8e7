"""Verdicts over an assumed range (issue 23, item 1; ``check/ranges.py``): per config and target,
a family of specs that agree holds, one that differs *depends*, and only what holds fails
``check``. The pure part runs on verdicts built here; the last tests compile a kernel written
here whose tile is bounded by ``min(..., 256)`` and never given, as wrappers of attention
kernels do."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest
from package_fixture import one_site, write_package
from sitebuilder import build_site
from test_rewrite_transforms import KERNEL
from test_rewrite_variants import _verdict

from autotune_rewrite.check.check_result import CheckResult
from autotune_rewrite.check.ranges import dead_whatever_assumed, depending, range_verdicts
from autotune_rewrite.evidence import KernelReport, LaunchSpec
from autotune_rewrite.output import explain
from autotune_rewrite.spec import launch_spec
from autotune_rewrite.locate.scan import scan
from tests.repo_env import pythonpath
import cli_process

CAP = 101_376


@pytest.fixture
def site():
    return build_site({"k.py": KERNEL}, "_decode_kernel", "k.py")


def _family(site, smem_by_value: dict[int, list[int]], family: str = "default") -> list[KernelReport]:
    """One report per value of ``BK``, each config's SMEM as given."""
    reports = []
    for value, smems in smem_by_value.items():
        spec = LaunchSpec(name=f"{family} BK={value}", types=(), constexprs=(("BK", value),), family=family,
                          ranged=(("BK", value),))
        reports.append(KernelReport(site, spec, tuple(_verdict(c, s, 128) for c, s in zip(site.configs, smems))))
    return reports


def test_a_verdict_that_changes_inside_the_range_depends_and_one_that_agrees_holds(site):
    n = len(site.configs)
    big = [CAP + 1] + [1000] * (n - 1)  # the first config is dead at BK=256 only
    reports = _family(site, {64: [1000] * n, 128: [1000] * n, 256: big})
    (rv,) = depending(reports)
    assert rv.config == site.configs[0].label() and rv.names == ("BK",)
    assert rv.launches_at == ((("BK", 64),), (("BK", 128),)) and [at for at, _ in rv.cannot_at] == [(("BK", 256),)]
    text = explain.depends(rv)
    assert text.startswith(f"{site.configs[0].label()} on sm_120: depends on BK: launches at BK = 64, 128; "
                           f"cannot at BK = 256: shared memory {CAP + 1:,} B")
    assert all(not v.depends for v in range_verdicts(reports) if v.config != rv.config)
    assert not dead_whatever_assumed(reports)  # nothing is dead at every value


def test_a_config_dead_at_every_value_fails_the_gate(site):
    n = len(site.configs)
    reports = _family(site, {64: [CAP + 1] + [1000] * (n - 1), 256: [CAP + 1] + [1000] * (n - 1)})
    assert depending(reports) == () and dead_whatever_assumed(reports)


def test_a_spec_of_its_own_is_a_family_of_one_and_separate_launches_are_not_one_range(site):
    n = len(site.configs)
    alone = KernelReport(site, LaunchSpec("default", (), ()), tuple(_verdict(c, CAP + 1, 128) for c in site.configs))
    assert range_verdicts([alone]) == () and dead_whatever_assumed([alone])
    # Two launches, each its own family of one value: a config dead at one launch is dead there.
    a = _family(site, {64: [1000] * n}, family="ops.py:10")
    b = _family(site, {256: [CAP + 1] * n}, family="ops.py:20")
    assert depending(a + b) == () and dead_whatever_assumed(a + b)


def test_a_crashed_compile_or_a_suspect_spec_weighs_nothing(site):
    n = len(site.configs)
    reports = _family(site, {64: [1000] * n, 256: [CAP + 1] * n})
    crashed = [replace(v, outcome=replace(v.outcome, error="segfault", error_kind="crashed")) for v in reports[1].verdicts]
    assert depending([reports[0], replace(reports[1], verdicts=tuple(crashed))]) == ()
    assert not dead_whatever_assumed([reports[0], replace(reports[1], suspicions=("flat",))])
    assert len(depending(reports)) == n


def test_the_check_result_gate_is_the_ranges_gate(site):
    n = len(site.configs)
    reports = tuple(_family(site, {64: [1000] * n, 256: [CAP + 1] * n}))
    result = CheckResult(".", (), reports, (), "3.6.0", ())
    assert int(result.exit_code) == 0 and len(result.depending) == n


# --------------------------------------------------------------------------- a bounded tile, compiled
BOUNDED = '''
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK_M": 64}, num_warps=4, num_stages=2),
                          triton.Config({"BLOCK_M": 128}, num_warps=8, num_stages=3)], key=["n"])
@triton.jit
def proj_kernel(x_ptr, w_ptr, out_ptr, n, BLOCK_K: tl.constexpr, BLOCK_M: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_K)
    x = tl.load(x_ptr + rows[:, None] * BLOCK_K + cols[None, :], mask=rows[:, None] < n, other=0.0)
    w = tl.load(w_ptr + cols[:, None] * BLOCK_K + cols[None, :])
    tl.store(out_ptr + rows[:, None] * BLOCK_K + cols[None, :], tl.dot(x, w), mask=rows[:, None] < n)
'''

BOUNDED_WRAPPER = '''
import torch
import triton
from .kernels import proj_kernel


def proj(x, w):
    n, k = x.shape
    out = torch.empty_like(x)
    proj_kernel[(n,)](x, w, out, n, BLOCK_K=min(triton.next_power_of_2(k), 256))
    return out
'''


def _bounded_repo(tmp_path: Path) -> Path:
    return write_package(tmp_path / "repo", BOUNDED, BOUNDED_WRAPPER)


def test_a_tile_bounded_by_min_is_judged_at_each_value_up_to_its_bound(tmp_path):
    root = _bounded_repo(tmp_path)
    (site,) = scan(root, jobs=1).sites
    res = launch_spec.resolve_specs(site, kernel_source=BOUNDED)
    # k swept (it gives BLOCK_K through the expression, the bound inside it), one family.
    assert [dict(s.constexprs)["BLOCK_K"] for s in res.specs] == [64, 128, 256]
    assert {s.family for s in res.specs} == {"default"} and [dict(s.ranged) for s in res.specs] == [
        {"k": 64}, {"k": 128}, {"k": 256}]
    # --exact assumes no value: the tile is what the kernel needs.
    exact = launch_spec.resolve_specs(site, kernel_source=BOUNDED, exact=True)
    assert "BLOCK_K" in dict(exact.missing)["default"]


@pytest.mark.slow
def test_check_passes_a_config_that_only_an_assumed_value_kills_and_lists_it_as_depending(tmp_path):
    root = _bounded_repo(tmp_path)
    env = dict(os.environ, PYTHONPATH=pythonpath(), NO_COLOR="1")
    check = cli_process.run(["check", ".", "--format", "json"], cwd=root, env=env, timeout=900)
    payload = json.loads(check.stdout)
    # At BLOCK_K=256 the weight tile alone is 128 KB, over sm_120's 99 KB; at 64 and 128 both fit.
    depends = {d["config"]: d for d in payload["depends"]}
    assert list(depends) == ["BLOCK_M=64 w4 s2", "BLOCK_M=128 w8 s3"], payload["depends"]
    for d in depends.values():
        assert d["launches_at"] == [{"k": 64}, {"k": 128}] and [c["values"] for c in d["cannot_at"]] == [{"k": 256}]
        assert d["cannot_at"][0]["reason"] == "shared_memory" and d["cannot_at"][0]["shared_bytes"] > CAP
    assert check.returncode == 0, check.stderr  # nothing is dead whatever k is
    text = cli_process.run(["check", "."], cwd=root, env=env, timeout=900)
    assert "depends on an assumed value" in text.stderr
    assert "BLOCK_M=128 w8 s3 on sm_120: depends on k: launches at k = 64, 128; cannot at k = 256" in text.stderr
    assert "(2 config x target depend on an assumed value)" in text.stderr
    # CI annotations and SARIF say it as a warning, not an error; Markdown lists it.
    github = cli_process.run(["check", ".", "--format", "github"], cwd=root, env=env, timeout=900)
    assert "::error" not in github.stdout and github.stdout.count("at an assumed value (it launches at others)") == 2
    sarif = json.loads(cli_process.run(["check", ".", "--format", "sarif"], cwd=root, env=env, timeout=900).stdout)
    results = sarif["runs"][0]["results"]
    assert results and {r["level"] for r in results} == {"warning"}
    markdown = cli_process.run(["check", ".", "--format", "markdown"], cwd=root, env=env, timeout=900)
    assert "depends on k: launches at k = 64, 128" in markdown.stdout
    # The prune drops nothing: the config launches for a head dim the wrapper allows.
    diff = cli_process.run(["diff", "--variant", "prune", "--check", "."], cwd=root, env=env, timeout=900)
    assert diff.returncode == 0 and diff.stdout == "", (diff.stdout, diff.stderr)


# --------------------------------------------------------------------------- flags at both ends
FLAGGED = '''
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 64}, num_warps=4)], key=["n"])
@triton.jit
def k(x_ptr, b_ptr, n, HAS_BIAS: tl.constexpr, EVEN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if HAS_BIAS:
        x += tl.load(b_ptr + offs)
    if EVEN:
        x = x * 2
    tl.store(x_ptr + offs, x)
'''


def test_assumed_flags_are_judged_on_and_off_as_one_family(tmp_path):
    wrapper = ("from pkg.kernels import k\n\n\ndef run(x, b, n):\n"
               "    k[(1,)](x, b, n, HAS_BIAS=b is not None, EVEN=n % 64 == 0)\n")
    site = one_site(tmp_path, FLAGGED, wrapper)
    res = launch_spec.resolve_specs(site, kernel_source=FLAGGED)
    on, off = res.specs
    assert (dict(on.constexprs)["HAS_BIAS"], dict(off.constexprs)["HAS_BIAS"]) == (True, False)
    assert on.family == off.family == "default" and off.name.endswith("=False")
    (key, value), = off.ranged
    assert value is False and set(key.split("/")) <= {"HAS_BIAS", "EVEN"} and "HAS_BIAS" in key
    (why,) = [a.source for a in off.assumptions if a.parameter == "HAS_BIAS"]
    assert "the other end of its range" in why
    # --exact assumes no flag: nothing to range over.
    assert all(not s.family for s in launch_spec.resolve_specs(site, kernel_source=FLAGGED, exact=True).specs)
