"""A compile's time budget (issue 22, item 1; ``compile/budget.py``): a config whose compile runs
past it is "not known", reported with the time reached, never dropped or chosen; the kernel is
judged on its other configs; the outcome is cached with its budget, so a larger one compiles again.

The slow kernel is written here: a 64K-element block at one warp with an unrolled loop of
transcendental math, which LLVM takes minutes to compile (the shape of a config that hung a
repository's check for 370 s)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from repo_env import pythonpath

from autotune_rewrite.compile.compile_cache import CompileCache
from autotune_rewrite.errors import UserError
from autotune_rewrite.evidence import OVER_BUDGET, CompileBudget, CompileJob, CompileOutcome, KernelBundle
from autotune_rewrite.settings import load_settings
import cli_process

SLOW = '''
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 256}, num_warps=4),
                          triton.Config({"BLOCK": 65536}, num_warps=1)], key=["n"])
@triton.jit
def slow_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    acc = x
    for i in tl.static_range(8):
        acc = tl.sin(acc) * x + i
    tl.store(y_ptr + offs, acc, mask=offs < n)
'''


def _job(seconds: float | None, memory_mb: int | None = 4096) -> CompileJob:
    budget = CompileBudget(seconds, memory_mb) if seconds is not None or memory_mb is not None else None
    return CompileJob(KernelBundle("k", "", "k.py::k"), (), (), (), 4, 3, 1, None, 120, budget=budget)


def test_an_over_budget_outcome_serves_only_jobs_with_no_larger_budget(tmp_path):
    cache = CompileCache(tmp_path)
    over = CompileOutcome.failed(_job(5.0), "past the budget", "3.6.0", None, seconds=11.0, kind=OVER_BUDGET)
    cache.put("key", over)
    assert cache.get("key", _job(5.0)).error_kind == OVER_BUDGET
    assert cache.get("key", _job(2.0)) is not None  # a smaller budget would stop too
    assert cache.get("key", _job(30.0)) is None  # a larger one compiles again
    assert cache.get("key", _job(None)) is None  # and so does no limit
    assert cache.get("key", _job(5.0, 8192)) is None  # or more memory
    assert cache.get("key", _job(None, None)) is None
    # Stopped at the memory budget with no time limit: a job with a time limit stops there too.
    cache.put("mem", CompileOutcome.failed(_job(None, 4096), "out of memory", "3.6.0", None, kind=OVER_BUDGET))
    assert cache.get("mem", _job(120.0, 4096)) is not None and cache.get("mem", _job(120.0, 8192)) is None


def test_the_budget_stops_python_level_work_at_its_time_and_restores_the_signal():
    # In a process of its own: the budget takes over SIGALRM, as it does in a pool worker.
    code = textwrap.dedent("""
        import signal, time
        from autotune_rewrite.compile import budget
        mine = lambda s, f: None
        signal.signal(signal.SIGALRM, mine)
        start = time.monotonic()
        try:
            with budget.limited(budget.Budget(0.5)):
                while True:
                    time.sleep(0.01)
        except budget.OverBudget as over:
            print(round(time.monotonic() - start, 1), "0.5 s" in over.message, signal.getsignal(signal.SIGALRM) is mine)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=pythonpath()))
    assert proc.returncode == 0, proc.stderr
    took, budget_s, restored = proc.stdout.split()
    assert 0.5 <= float(took) < 5 and budget_s == "True" and restored == "True"


@pytest.mark.parametrize("value, expected", [(300, 300.0), ("none", None), (2.5, 2.5)])
def test_the_setting_reads_seconds_or_none(tmp_path, value, expected):
    text = f'"{value}"' if isinstance(value, str) else value
    (tmp_path / "pyproject.toml").write_text(f"[tool.autotune-rewrite.check]\ncompile_timeout = {text}\n")
    assert load_settings(tmp_path).check.compile_timeout == expected


def test_a_bad_budget_names_the_key_and_the_fix(tmp_path):
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "pyproject.toml").write_text("[tool.autotune-rewrite.check]\ncompile_timeout = -3\n")
    with pytest.raises(UserError, match=r"compile_timeout = -3 is not a time budget.*\"none\""):
        load_settings(tmp_path / "bad")
    (tmp_path / "plain").mkdir()
    assert load_settings(tmp_path / "plain").check.compile_timeout == 120.0  # the default


@pytest.mark.slow
def test_a_config_over_its_budget_is_not_known_and_the_kernel_is_judged_on_the_others(tmp_path):
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "k.py").write_text(SLOW)
    env = dict(os.environ, PYTHONPATH=pythonpath(), NO_COLOR="1", AUTOTUNE_REWRITE_CACHE_DIR=str(tmp_path / "cache"))
    args = ["check", ".", "--format", "json", "-j", "2", "--compile-timeout", "8"]
    first = cli_process.run(args, cwd=root, env=env, timeout=600)
    assert first.returncode == 0, first.stderr  # nothing proved dead
    (kernel,) = json.loads(first.stdout)["kernels"]
    assert kernel["status"] == "assumed"  # judged on the other config, not compile_crashed
    by_label = {v["label"]: v for v in kernel["configs"]}
    assert by_label["BLOCK=256 w4 s3"]["launchable"] is True
    slow = by_label["BLOCK=65536 w1 s3"]
    assert slow["launchable"] is False and slow["reason_code"] == "compile_over_budget"
    assert "8 s time budget" in slow["compile_error"]
    # The next run with the same budget reads it from the cache; the text says what is not known.
    again = cli_process.run(["check", ".", "-j", "2", "--compile-timeout", "8"], cwd=root, env=env, timeout=600)
    assert "0 compiled" in again.stderr and "1 not known (compile over its time or memory budget)" in again.stderr
    assert "not known: its compile ran past the 8 s time budget" in again.stderr
    # A prune never drops a config it knows nothing about.
    diff = cli_process.run(["diff", "--variant", "prune", "--check", ".", "-j", "2", "--compile-timeout", "8"],
                           cwd=root, env=env, timeout=600)
    assert diff.returncode == 0 and diff.stdout == "", (diff.stdout, diff.stderr)
    assert "keep BLOCK=65536 w1 s3: its compile ran past the 8 s time budget" in diff.stderr


def test_the_slowest_compiles_are_listed_slowest_first_from_the_threshold():
    from dataclasses import replace

    from sitebuilder import build_site
    from test_rewrite_transforms import KERNEL
    from test_rewrite_variants import _verdict

    from autotune_rewrite.check.compile_cost import SLOW_COMPILE_S, slowest
    from autotune_rewrite.evidence import KernelReport, LaunchSpec

    site = build_site({"k.py": KERNEL}, "_decode_kernel", "k.py")
    times = [SLOW_COMPILE_S - 1, SLOW_COMPILE_S + 5, SLOW_COMPILE_S + 40][:len(site.configs)]
    verdicts = tuple(replace(v, outcome=replace(v.outcome, seconds=t))
                     for v, t in zip((_verdict(c, 1000, 128) for c in site.configs), times))
    found = slowest([KernelReport(site, LaunchSpec("default", (), ()), verdicts)])
    assert [c.seconds for c in found] == sorted((t for t in times if t >= SLOW_COMPILE_S), reverse=True)
    assert found and found[0].kernel == site.ident and not found[0].over_budget


def test_a_compile_that_runs_out_of_its_memory_budget_is_not_known_and_says_which(tmp_path):
    # 1 MB is less than a worker already holds (~18 MB of heap and private mappings with Triton
    # loaded): over at once, as a ptxas at 7-8 GB runs out under the default 4 GB.
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "k.py").write_text(SLOW)
    (root / "pyproject.toml").write_text("[tool.autotune-rewrite.check]\ncompile_memory = 1\n")
    env = dict(os.environ, PYTHONPATH=pythonpath(), NO_COLOR="1", AUTOTUNE_REWRITE_CACHE_DIR=str(tmp_path / "cache"))
    proc = cli_process.run(["check", ".", "--format", "json", "-j", "2"], cwd=root, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    (kernel,) = json.loads(proc.stdout)["kernels"]
    assert kernel["status"] == "assumed"
    for v in kernel["configs"]:
        assert v["reason_code"] == "compile_over_budget" and "1 MB memory budget" in v["compile_error"], v


def test_first_use_is_every_compile_and_a_benchmark_of_each_launchable_config():
    from dataclasses import replace

    from sitebuilder import build_site
    from test_rewrite_transforms import KERNEL
    from test_rewrite_variants import CAP, _verdict

    from autotune_rewrite.check.compile_cost import BENCH_S_PER_CONFIG, first_use
    from autotune_rewrite.evidence import KernelReport, LaunchSpec

    site = build_site({"k.py": KERNEL}, "_decode_kernel", "k.py")
    n = len(site.configs)
    verdicts = tuple(replace(v, outcome=replace(v.outcome, seconds=2.0))
                     for v in (_verdict(c, CAP + 1 if i == 0 else 1000, 128) for i, c in enumerate(site.configs)))
    (cost,) = first_use(KernelReport(site, LaunchSpec("default", (), ()), verdicts))
    assert (cost.arch, cost.configs, cost.compile_s) == ("sm_120", n, 2.0 * n)
    assert cost.bench_s == round(BENCH_S_PER_CONFIG * (n - 1), 3) and not cost.at_least


def test_an_allocation_failure_is_told_from_a_resource_error():
    from autotune_rewrite.compile.budget import out_of_memory

    assert out_of_memory(RuntimeError("`ptxas` failed with error code 1\n`ptxas` stderr:\nptxas fatal   : "
                                      "Memory allocation failure"), "")
    assert out_of_memory(MemoryError(), "") and out_of_memory(OSError(12, "Cannot allocate memory"), "")
    # Triton's own "out of resource" is the config's verdict (cannot launch), not the budget.
    assert not out_of_memory(RuntimeError("out of resource: shared memory, Required: 139264, Hardware limit: 101376"), "")


def test_default_workers_are_the_cores_or_fewer_where_memory_holds_fewer():
    from autotune_rewrite.compile import compile_pool

    cores = compile_pool.default_workers(available_mb=10**9)  # memory never the limit: the cores
    assert cores >= 1
    assert compile_pool.default_workers(available_mb=compile_pool.WORKER_MB * 1) == 1
    assert compile_pool.default_workers(available_mb=100) == 1  # never none
    assert compile_pool.default_workers(available_mb=compile_pool.WORKER_MB * 2) == min(cores, 2)
    assert compile_pool._available_mb() is None or compile_pool._available_mb() > 0  # read from /proc/meminfo


def test_the_peak_memory_of_a_block_is_its_own_not_the_process_lifetime():
    import sys

    from autotune_rewrite.compile import peak_memory

    if not sys.platform.startswith("linux"):
        pytest.skip("the peak is read from /proc")
    def resident_mb() -> int:
        with open("/proc/self/status", encoding="ascii") as fh:
            return next(int(line.split()[1]) // 1024 for line in fh if line.startswith("VmRSS:"))

    big = bytearray(300 * 2**20)  # 300 MB touched before the block: the lifetime mark
    big[::4096] = b"x" * len(big[::4096])
    del big
    before = resident_mb()  # what the process holds anyway (a test worker holds torch and Triton)
    with peak_memory.measured() as peak:
        small = bytearray(40 * 2**20)
        small[::4096] = b"y" * len(small[::4096])
    # The block's own 40 MB on top of what was resident; the 300 MB before it is forgotten.
    assert peak[0] is not None and before + 35 <= peak[0] < before + 250
