"""``check`` reports kernel by kernel: what cannot be judged comes out before any compile, each
compiled kernel as soon as its compiles are in, and the result (and so JSON) keeps the scan's
order whatever the completion order was. The bundles of one run parse each module once."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from repo_env import pythonpath

from autotune_rewrite.check import check as check_stage
from autotune_rewrite.compile import compile_pool
from autotune_rewrite.isolate.kernel_loader import load_bundle
from autotune_rewrite.isolate.parsed_modules import ParsedModules
from autotune_rewrite.outcomes import Status
import cli_process

KERNELS = '''\
import os

import triton
import triton.language as tl

from .helpers import doubled


@triton.autotune(configs=[triton.Config({"BLOCK": 64}, num_warps=1), triton.Config({"BLOCK": 128}, num_warps=2)],
                 key=["n"])
@triton.jit
def first_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, doubled(tl.load(x_ptr + offs, mask=offs < n)), mask=offs < n)


@triton.autotune(configs=[triton.Config({"BLOCK": 32}, num_warps=1)], key=["n"])
@triton.jit
def unconfigured_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.autotune(configs=[triton.Config({"BLOCK": int(os.environ["B"])})], key=["n"])
@triton.jit
def env_kernel(x_ptr, n, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 0.0)


@triton.autotune(configs=[triton.Config({"BLOCK": 256}, num_warps=4), triton.Config({"BLOCK": 512}, num_warps=4)],
                 key=["n"])
@triton.jit
def last_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, doubled(tl.load(x_ptr + offs, mask=offs < n)) + 1.0, mask=offs < n)
'''

HELPERS = '''\
import triton


@triton.jit
def doubled(x):
    return x * 2.0
'''

SETTINGS = '''\
arch = ["sm_120"]

[[kernels]]
kernel = "pkg/kernels.py::first_kernel"
spec = "f32"
types = { x_ptr = "*fp32", y_ptr = "*fp32", n = "i32" }

[[kernels]]
kernel = "pkg/kernels.py::last_kernel"
spec = "f32"
types = { x_ptr = "*fp32", y_ptr = "*fp32", n = "i32" }
'''

ORDER = ["first_kernel", "unconfigured_kernel", "env_kernel", "last_kernel"]


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("streaming") / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "kernels.py").write_text(KERNELS)
    (root / "pkg" / "helpers.py").write_text(HELPERS)
    (root / "autotune-rewrite.toml").write_text(SETTINGS)
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git[:3], "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "fixture"], check=True)
    return root


def test_not_judged_kernels_come_before_any_compile_and_the_result_keeps_scan_order(repo, tmp_path, monkeypatch):
    events: list[str] = []
    real = compile_pool.compile_job
    monkeypatch.setattr(compile_pool, "compile_job",
                        lambda job, **kw: events.append(f"compile {job.bundle.kernel}") or real(job, **kw))
    # exact: the unconfigured kernel stays needs_spec (no assumptions), as a gate would run it
    result = check_stage.check(repo, workers=1, cache_dir=tmp_path, exact=True,
                               on_report=lambda report, info: events.append(f"report {report.site.kernel}"))
    assert [r.site.kernel for r in result.reports] == ORDER
    assert [r.status.judged for r in result.reports] == [True, False, False, True]
    assert [r.status for r in result.reports][1:3] == [Status.NEEDS_SPEC, Status.UNRESOLVED]
    reported = [e.split()[1] for e in events if e.startswith("report")]
    assert sorted(reported) == sorted(ORDER)  # each kernel once
    first_compile = next(i for i, e in enumerate(events) if e.startswith("compile"))
    # needs_spec and unresolved are printed while the first kernel is still compiling...
    assert events.index("report unconfigured_kernel") < events.index("report first_kernel")
    assert events.index("report env_kernel") < events.index("report first_kernel")
    # ... and the first kernel's verdict before the last kernel has compiled anything.
    assert events.index("report first_kernel") < events.index("compile last_kernel")
    assert first_compile < events.index("report first_kernel")


def test_a_warm_run_reports_the_same_and_json_is_in_scan_order(repo, cache):
    cold = check_stage.check(repo, workers=2, cache_dir=cache)
    streamed: list[str] = []
    warm = check_stage.check(repo, workers=2, cache_dir=cache,
                             on_report=lambda report, info: streamed.append(report.site.kernel))
    assert sorted(streamed) == sorted(ORDER)
    assert warm.compiled == 0 and warm.cached == cold.compiled + cold.cached
    figures = lambda result: [[(v.arch, v.config.label(), v.outcome.shared_bytes, v.launchable)  # noqa: E731
                               for v in r.verdicts] for r in result.reports]
    assert figures(warm) == figures(cold)
    env = {**os.environ, "PYTHONPATH": pythonpath(), "AUTOTUNE_REWRITE_CACHE_DIR": str(cache), "AUTOTUNE_REWRITE_HEARTBEAT_S": "0"}
    out = cli_process.run(["check", str(repo), "--format", "json"], env=env)
    assert out.returncode == 0, out.stderr
    assert [k["kernel"] for k in json.loads(out.stdout)["kernels"]] == ORDER


def test_table_mode_prints_each_kernel_then_one_summary_at_the_end(repo, cache):
    env = {**os.environ, "PYTHONPATH": pythonpath(), "AUTOTUNE_REWRITE_CACHE_DIR": str(cache), "AUTOTUNE_REWRITE_HEARTBEAT_S": "0",
           "NO_COLOR": "1", "COLUMNS": "200"}
    out = cli_process.run(["check", str(repo), "--exact"], env=env)
    assert out.returncode == 0, out.stderr
    err = out.stderr
    assert out.stdout == ""
    for kernel in ("first_kernel", "last_kernel"):
        assert err.count(f"pkg/kernels.py::{kernel}  spec f32") == 1
    assert err.count("warning: needs_spec pkg/kernels.py::unconfigured_kernel") == 1
    assert err.count("warning: unresolved pkg/kernels.py::env_kernel") == 1
    summary = err.rindex("judged 2 of 4 kernels")
    assert summary > err.rindex("[tool.autotune-rewrite.assume]")  # the table to fill in, then the summary
    assert summary > err.index("pkg/kernels.py::last_kernel  spec f32")


def test_bundles_of_one_run_parse_each_module_once(repo):
    parsed = ParsedModules(repo)
    shared = [load_bundle(repo, "pkg/kernels.py", k, parsed=parsed) for k in ("first_kernel", "last_kernel",
                                                                             "unconfigured_kernel")]
    assert parsed.get.cache_info().misses == 2  # kernels.py and helpers.py, for three bundles
    alone = [load_bundle(repo, "pkg/kernels.py", k) for k in ("first_kernel", "last_kernel", "unconfigured_kernel")]
    assert shared == alone
    assert "def doubled" in shared[0].source and "def first_kernel" in shared[0].source
    assert "last_kernel" not in shared[0].source
