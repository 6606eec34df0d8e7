"""The check pipeline as functions: candidate configs the rewriter asks about, compile errors as
verdicts, several launch specs per kernel, and the exit-code rule."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from autotune_rewrite.check import check as check_stage
from autotune_rewrite.check.check_result import CheckResult
from autotune_rewrite.spec import launch_spec
from autotune_rewrite.errors import ExitCode
from autotune_rewrite.outcomes import Reason, Status
from autotune_rewrite.output.explain import verdict_reason
from autotune_rewrite.model import ConfigValue
from autotune_rewrite.locate.scan import find_site, scan
from autotune_rewrite.settings import from_table

FIXTURE = Path(__file__).parent / "fixtures" / "check" / "repo"


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    dst = tmp_path_factory.mktemp("pipeline") / "repo"
    shutil.copytree(FIXTURE, dst)
    return dst


@pytest.fixture(scope="module")
def site(repo):
    return find_site(scan(repo, jobs=1), "kernels/transpose.py::transpose_kernel")


def _spec(site, **types):
    base = {"x_ptr": "*fp32", "y_ptr": "*fp32", "M": "i32", "N": "i32"}
    base.update(types)
    entries = from_table({"kernels": [{"kernel": site.ident, "spec": "t", "types": base}]}).kernels
    return launch_spec.resolve_specs(site, entries).specs[0]


def test_candidate_configs_and_compile_errors_are_verdicts(repo, cache, site):
    spec = _spec(site)
    candidates = [
        ConfigValue({"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=4, num_stages=2),  # not in the source
        ConfigValue({"BLOCK_M": 48, "BLOCK_N": 64}, num_warps=4),  # tl.arange needs a power of two
    ]
    ok, broken = check_stage.evaluate_configs(repo, site, spec, candidates, ["sm_120"], workers=1, cache_dir=cache)
    assert ok.arch == "sm_120" and ok.launchable and ok.outcome.shared_bytes == 4 * 128 * 64
    assert ok.occupancy.blocks_per_sm >= 1 and ok.refusal is None
    assert not broken.launchable and broken.occupancy is None
    assert broken.refusal.kind == "compile_failed" and not broken.refusal.crashed
    assert verdict_reason(broken).startswith("compile error: ") and "power of 2" in broken.refusal.error


def test_one_report_per_spec_and_the_gate(repo, cache, site):
    fp32, fp16 = _spec(site), replace(_spec(site, x_ptr="*fp16", y_ptr="*fp16"), name="fp16")
    reports = check_stage.check_site(repo, site, [fp32, fp16], ["sm_120"], workers=1, cache_dir=cache)
    assert [r.spec.name for r in reports] == ["t", "fp16"]
    by_spec = {r.spec.name: {v.config.kwargs["BLOCK_M"]: v for v in r.verdicts} for r in reports}
    # fp16 halves the transposed tile: the 256x128 config now fits sm_120.
    assert by_spec["t"][256].outcome.shared_bytes == 131072 and not by_spec["t"][256].launchable
    assert by_spec["fp16"][256].outcome.shared_bytes == 65536 and by_spec["fp16"][256].launchable
    assert reports[0].smem_model.text == "SMEM = 4*BLOCK_M*BLOCK_N"
    assert reports[1].smem_model.text == "SMEM = 2*BLOCK_M*BLOCK_N"
    assert not reports[0].all_launchable and reports[1].all_launchable
    result = CheckResult(root=str(repo), targets=check_stage.resolve_targets(["sm_120"]),
                         reports=(reports[1],), errors=(), triton_version="x", ptxas_versions=())
    assert result.exit_code is ExitCode.OK
    assert replace(result, reports=tuple(reports)).exit_code is ExitCode.FOUND


def test_unresolved_configs_are_skipped_with_the_reason(repo, cache):
    site = find_site(scan(repo, jobs=1), "scale_kernel")
    (report,) = check_stage.check_site(repo, site, [], ["sm_120"], workers=1, cache_dir=cache)
    assert report.verdicts == () and report.status is Status.UNRESOLVED
    assert report.problem.reason is Reason.CONFIGS_UNRESOLVED and report.problem.detail
