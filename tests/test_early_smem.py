"""The staged compile: shared memory read after allocation equals the final figure, a config over
the limit stops there (registers not compiled: cannot launch), ``--full`` compiles it to the
cubin, and a stopped cache entry never serves a ``--full`` run. Real compiles throughout."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autotune_rewrite.check import check as check_stage
from autotune_rewrite.compile import early_smem
from autotune_rewrite.spec import launch_spec
from autotune_rewrite.compile.crosscompile import compile_job
from autotune_rewrite.isolate.kernel_loader import load_bundle
from autotune_rewrite.check.occupancy import max_launchable_smem
from autotune_rewrite.cli import app
from autotune_rewrite.locate.scan import find_site, scan
from autotune_rewrite.settings import load_settings
from autotune_rewrite.targets import resolve_target

pytestmark = pytest.mark.skipif(not early_smem.available(), reason="early SMEM verified on Triton 3.6 only")

# A pipelined matmul: its SMEM grows with the tiles and num_stages (128x128 tiles need
# 131,072 B with BLOCK_K=128 at 3 stages: over the 99 KB parts, under the H100's 227 KB).
MATMUL = '''\
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=4, num_stages=2),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 128}, num_warps=8, num_stages=3),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    # a row reduction and a transpose: scratch SMEM besides the pipelined operands
    acc = acc - tl.max(acc, 1)[:, None]
    tl.store(c_ptr + rn[None, :] * M + rm[:, None], tl.trans(tl.trans(acc)))
'''

SETTINGS = '''\
arch = ["sm_120"]

[[kernels]]
kernel = "mm.py::mm_kernel"
spec = "fp16"
types = { a_ptr = "*fp16", b_ptr = "*fp16", c_ptr = "*fp32", M = "i32", N = "i32", K = "i32" }
values = { M = 512, N = 512, K = 512 }
'''


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("early") / "repo"
    root.mkdir()
    (root / "mm.py").write_text(MATMUL)
    (root / "autotune-rewrite.toml").write_text(SETTINGS)
    return root


def _jobs(root: Path, configs, archs):
    settings = load_settings(root)
    site = find_site(scan(root, jobs=1, settings=settings), "mm_kernel")
    bundle = load_bundle(root, site.kernel_path, site.kernel)
    spec = launch_spec.resolve_specs(site, settings.kernels, kernel_source=bundle.source).specs[0]
    return check_stage.build_jobs(site, spec, configs, archs, bundle)


def test_shared_memory_after_allocation_is_the_final_figure(repo):
    """On every architecture class (Ampere, Hopper, Blackwell DC, Blackwell consumer) and across
    tiles, warps and stages, the figure the stop is decided on equals ``metadata.shared``."""
    from autotune_rewrite.model import ConfigValue

    configs = [ConfigValue({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k}, num_warps=w, num_stages=s)
               for m, n, k, w, s in ((64, 64, 32, 4, 2), (128, 128, 64, 8, 4), (128, 64, 32, 4, 3))]
    jobs = _jobs(repo, configs, ("sm_80", "sm_90", "sm_100", "sm_120"))
    compared = 0
    for job in jobs:
        full = compile_job(job)
        early = compile_job(replace(job, stop_smem_above=-1))  # -1: stop whatever the figure
        assert full.error is None and not full.stopped_early and full.registers is not None
        assert early.stopped_early and early.registers is None and early.spills is None
        assert early.shared_bytes == full.shared_bytes, (job.capability, job.constexprs, job.num_stages)
        assert early.tmem_bytes == full.tmem_bytes
        compared += 1
    assert compared == 12


def test_under_the_limit_the_compile_is_the_same_compile(repo):
    job = _jobs(repo, find_site(scan(repo, jobs=1), "mm_kernel").configs[:1], ("sm_120",))[0]
    plain = compile_job(job)
    staged = compile_job(replace(job, stop_smem_above=max_launchable_smem(resolve_target("sm_120").arch)))
    assert not staged.stopped_early
    assert (staged.shared_bytes, staged.registers, staged.spills) == (plain.shared_bytes, plain.registers, plain.spills)


def _big(report):
    return next(v for v in report.verdicts if v.config.kwargs["BLOCK_M"] == 128)


def test_over_the_limit_stops_early_and_full_compiles_it(repo, tmp_path):
    cache = tmp_path / "cache"
    first = check_stage.check(repo, workers=1, cache_dir=cache, fit_model=False)
    big = _big(first.reports[0])
    assert big.outcome.stopped_early and big.outcome.registers is None and big.outcome.spills is None
    assert not big.launchable and big.reason_code == "shared_memory"
    assert big.outcome.shared_bytes > 101_376 and big.refusal.registers_compiled is False
    small = next(v for v in first.reports[0].verdicts if v is not big)
    assert small.launchable and not small.outcome.stopped_early and small.outcome.registers is not None

    # --full: the stopped entry does not answer; the config is compiled to the cubin, same SMEM.
    full = check_stage.check(repo, workers=1, cache_dir=cache, fit_model=False, full=True)
    fbig = _big(full.reports[0])
    assert full.compiled == 1 and full.cached == 1
    assert not fbig.outcome.stopped_early and fbig.outcome.registers is not None
    assert fbig.outcome.shared_bytes == big.outcome.shared_bytes and fbig.reason_code == "shared_memory"
    assert fbig.refusal.registers_compiled is True

    # The full entry now serves the default run too: nothing compiles, and it carries registers.
    again = check_stage.check(repo, workers=1, cache_dir=cache, fit_model=False)
    assert again.compiled == 0 and _big(again.reports[0]).outcome.registers == fbig.outcome.registers


def test_the_report_says_registers_were_not_compiled(repo, tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOTUNE_REWRITE_CACHE_DIR", str(tmp_path / "cache"))
    runner = CliRunner()
    table = runner.invoke(app, ["check", str(repo), "-j", "1"])
    assert table.exit_code == 1
    assert "registers not compiled: cannot launch" in table.output
    data = json.loads(runner.invoke(app, ["check", str(repo), "-j", "1", "--format", "json"]).stdout)
    big = next(c for k in data["kernels"] for c in k["configs"] if c["params"]["BLOCK_M"] == 128)
    assert big["stopped_early"] is True and big["registers"] is None and big["launchable"] is False
    assert big["reason"].endswith("(registers not compiled: cannot launch)")
    full = json.loads(runner.invoke(app, ["check", str(repo), "-j", "1", "--format", "json", "--full"]).stdout)
    fbig = next(c for k in full["kernels"] for c in k["configs"] if c["params"]["BLOCK_M"] == 128)
    assert fbig["stopped_early"] is False and isinstance(fbig["registers"], int)
    assert "registers not compiled" not in fbig["reason"]


def test_the_stop_threshold_is_the_occupancy_rule():
    for name, optin in (("sm_120", 101_376), ("sm_90", 232_448), ("sm_80", 166_912)):
        assert max_launchable_smem(resolve_target(name).arch) == optin
