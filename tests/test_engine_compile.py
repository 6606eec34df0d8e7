"""Real cross-compiles of small kernels written for these tests (tests/fixtures/engine/).

One module-scoped batch (sm_120, the SMEM probe set of the tiled matmul, compiled with -j2)
feeds most tests, so the whole file costs about twenty compiles.
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from autotune_rewrite.compile import compile_pool
from autotune_rewrite import resources
from autotune_rewrite.compile.compile_pool import compile_many
from autotune_rewrite.compile.crosscompile import compile_job, triton_environment
from autotune_rewrite.errors import UserError
from autotune_rewrite.evidence import CompileJob, KernelBundle
from autotune_rewrite.check.occupancy import occupancy, occupancy_of
from autotune_rewrite.check.smem_model import fit_smem_model, largest_fit, predict, probe_points
from autotune_rewrite.targets import ARCHS
from repo_env import pythonpath

FIXTURES = Path(__file__).parent / "fixtures" / "engine"
ROOT = Path(__file__).resolve().parents[1]

DOT = KernelBundle(
    kernel="tiled_dot_kernel",
    source=(FIXTURES / "tiled_dot.py").read_text(),
    origin="tests/fixtures/engine/tiled_dot.py::tiled_dot_kernel",
)
DOT_SIGNATURE = (
    ("a_ptr", "*fp16"), ("b_ptr", "*fp16"), ("c_ptr", "*fp32"),
    ("M", "i32"), ("N", "i32"), ("K", "i32"),
    ("stride_am", "i32"), ("stride_bk", "i32"), ("stride_cm", "i32"),
    ("BLOCK_M", "constexpr"), ("BLOCK_N", "constexpr"), ("BLOCK_K", "constexpr"),
)
# What the runtime would give aligned tensors, K = 4096 and contiguous strides of 4096.
DOT_DIVISIBLE = ("a_ptr", "b_ptr", "c_ptr", "K", "stride_am", "stride_bk", "stride_cm")
BROKEN_SOURCE = (FIXTURES / "broken.py").read_text()


def dot_job(block_m: int, block_k: int, num_stages: int, capability: int = 120, num_warps: int = 4) -> CompileJob:
    return CompileJob(
        bundle=DOT,
        signature=DOT_SIGNATURE,
        constexprs=(("BLOCK_M", block_m), ("BLOCK_N", 64), ("BLOCK_K", block_k)),
        divisible_by_16=DOT_DIVISIBLE,
        num_warps=num_warps,
        num_stages=num_stages,
        num_ctas=1,
        maxnreg=None,
        capability=capability,
    )


def params(job: CompileJob) -> dict[str, int]:
    c = dict(job.constexprs)
    return {"BLOCK_M": c["BLOCK_M"], "BLOCK_K": c["BLOCK_K"], "num_stages": job.num_stages}


BASE = {"BLOCK_M": 64, "BLOCK_K": 32, "num_stages": 2}
FIT_POINTS = [BASE, *probe_points([BASE], ["BLOCK_M", "BLOCK_K", "num_stages"])]
HELD_OUT = [{"BLOCK_M": 32, "BLOCK_K": 64, "num_stages": 4}, {"BLOCK_M": 128, "BLOCK_K": 64, "num_stages": 4}]


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    cache = tmp_path_factory.mktemp("engine-cache")
    jobs = [dot_job(p["BLOCK_M"], p["BLOCK_K"], p["num_stages"]) for p in FIT_POINTS + HELD_OUT]
    seen: list[tuple[int, int]] = []
    outcomes = compile_many(jobs, workers=2, cache_dir=cache, progress=lambda d, t: seen.append((d, t)))
    return jobs, outcomes, cache, seen


def test_batch_compiles_in_order_with_progress(batch):
    jobs, outcomes, _, seen = batch
    assert [o.job for o in outcomes] == jobs
    assert all(o.error is None and not o.cached for o in outcomes)
    assert seen[-1] == (len(jobs), len(jobs))
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_outcome_carries_exact_figures_and_versions(batch):
    jobs, outcomes, _, _ = batch
    base = outcomes[0]
    assert params(base.job) == BASE
    # Recorded from a real compile with Triton 3.6.0 for sm_120: A tile 64x32 fp16 double
    # buffered (8,192 B); SMEM does not depend on the warp count.
    if base.triton_version == "3.6.0":
        assert base.shared_bytes == 8192
    assert base.registers is not None and 0 < base.registers <= 255
    assert base.spills == 0
    assert base.triton_version == resources.triton_version()
    assert base.ptxas_version == resources.ptxas_version(120)  # ptxas-blackwell for sm_120
    assert base.seconds > 0


def test_sm_90_differs_and_every_config_launches(tmp_path):
    jobs = [dot_job(64, 64, 3, capability=90), dot_job(128, 64, 4, capability=90)]
    outcomes = compile_many(jobs, workers=1, cache_dir=tmp_path)
    for o in outcomes:
        assert o.error is None
        occ = occupancy(ARCHS["sm_90"], o.job.num_warps, o.registers, o.shared_bytes)
        assert occ.blocks_per_sm >= 1 and occ.blocked is None
    assert outcomes[0].ptxas_version == resources.ptxas_version(90)


def test_cached_rerun_compiles_nothing(batch, monkeypatch):
    jobs, outcomes, cache, _ = batch

    def no_compiles(*args, **kwargs):  # a sentinel: any compile on a warm cache fails the test
        raise AssertionError("compile_job called on a warm cache")

    monkeypatch.setattr(compile_pool, "compile_job", no_compiles)
    again = compile_many(jobs, workers=2, cache_dir=cache)
    assert all(o.cached for o in again)
    strip = lambda o: dataclasses.replace(o, cached=False)  # noqa: E731
    assert [strip(o) for o in again] == list(outcomes)


def test_warm_path_does_not_import_triton(batch):
    jobs, _, cache, _ = batch
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_engine_compile import dot_job, FIT_POINTS
        from autotune_rewrite.compile.compile_pool import compile_many
        jobs = [dot_job(p["BLOCK_M"], p["BLOCK_K"], p["num_stages"]) for p in FIT_POINTS]
        out = compile_many(jobs, cache_dir={str(cache)!r})
        assert all(o.cached for o in out)
        print("triton" in sys.modules, "pytest" in sys.modules)
        """
    )
    # importing this test module pulls pytest, not triton; the warm path must not import triton
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": pythonpath()}, check=True)
    assert res.stdout.split()[0] == "False"


def test_serial_and_parallel_give_identical_results(batch, tmp_path):
    jobs, outcomes, _, _ = batch
    pick = [0, 3, len(jobs) - 1]
    serial = compile_many([jobs[i] for i in pick], workers=1, cache_dir=tmp_path)
    for i, s in zip(pick, serial):
        p = outcomes[i]
        assert (s.shared_bytes, s.registers, s.spills, s.tmem_bytes, s.error) == (
            p.shared_bytes, p.registers, p.spills, p.tmem_bytes, p.error)


def test_a_process_that_compiled_in_itself_still_compiles_in_parallel(batch, tmp_path):
    """A library caller (or ``-j 1`` work) runs Triton's MLIR/LLVM in its own process; workers
    forked from it afterwards can abort inside LLVM. The pool then starts them from a fork server:
    the parallel compile gives the same figures as the batch, with no crashed outcome."""
    jobs, outcomes, _, _ = batch
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_engine_compile import dot_job
        from autotune_rewrite.compile import compile_pool
        compile_pool.compile_many([dot_job(32, 32, 5)], workers=1, cache_dir={str(tmp_path / "here")!r})
        print(compile_pool._context().get_start_method())
        jobs = [dot_job(64, 32, 2), dot_job(64, 32, 3), dot_job(32, 64, 2)]
        for o in compile_pool.compile_many(jobs, workers=2, cache_dir={str(tmp_path / "pool")!r}):
            print(o.job.num_stages, o.shared_bytes, o.registers, o.error)
        """
    )
    res = subprocess.run([sys.executable, "-c", script], env={**os.environ, "PYTHONPATH": pythonpath()},
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    method, *rows = res.stdout.splitlines()
    assert method == "forkserver"
    base = outcomes[0]  # dot_job(64, 32, 2)
    assert rows[0].split() == ["2", str(base.shared_bytes), str(base.registers), "None"]
    for row in rows:  # every job compiled: figures read, no error, no crash
        _, shared, registers, error = row.split(maxsplit=3)
        assert shared.isdigit() and registers.isdigit() and error == "None", row


def test_identical_jobs_compile_once(tmp_path, monkeypatch):
    calls = []
    real = compile_pool.compile_job
    monkeypatch.setattr(compile_pool, "compile_job", lambda job, **kw: calls.append(job) or real(job, **kw))
    job = dot_job(32, 32, 2)
    a, b = compile_many([job, job], workers=1, cache_dir=tmp_path)
    assert len(calls) == 1 and a.shared_bytes == b.shared_bytes and a.job is job and b.job is job


def _broken(kernel: str, block: int) -> CompileJob:
    return CompileJob(
        bundle=KernelBundle(kernel, BROKEN_SOURCE, f"broken.py::{kernel}"),
        signature=(("out_ptr", "*i32"), ("BLOCK", "constexpr")),
        constexprs=(("BLOCK", block),),
        divisible_by_16=("out_ptr",),
        num_warps=4, num_stages=2, num_ctas=1, maxnreg=None, capability=120,
    )


def test_compile_errors_become_outcomes(tmp_path):
    jobs = [
        _broken("odd_arange_kernel", 48),
        _broken("static_assert_kernel", 128),
        _broken("no_such_kernel", 16),
        dataclasses.replace(_broken("k", 16), bundle=KernelBundle("k", "import not_installed_pkg\n", "x.py::k")),
        _broken("odd_arange_kernel", 64),  # the same kernel compiles with a power of two
    ]
    out = compile_many(jobs, workers=2, cache_dir=tmp_path)
    assert out[0].error == "arange's range must be a power of 2 (at 3:11)"
    assert out[1].error == "static_assert failed: BLOCK must be at most 64 (at 2:4)"
    assert "no @triton.jit function 'no_such_kernel'" in out[2].error
    assert out[3].error == "ModuleNotFoundError: No module named 'not_installed_pkg'"
    assert all("\n" not in o.error and o.shared_bytes is None for o in out[:4])
    assert out[4].error is None and out[4].shared_bytes is not None


def test_no_cuobjdump_is_a_user_error(monkeypatch, tmp_path):
    monkeypatch.setattr(resources, "_bundled", lambda binary: tmp_path / "bin" / binary)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("TRITON_CUOBJDUMP_PATH", raising=False)
    with pytest.raises(UserError, match=r"cuobjdump not found \(looked in: .*bin/cuobjdump"):
        compile_many([dot_job(32, 32, 5)], workers=1, cache_dir=tmp_path)


def test_nothing_written_to_home_or_cwd(batch, tmp_path):
    """A fresh process with HOME elsewhere: same result as in the batch, HOME gets no .triton,
    and the working directory stays empty."""
    _, outcomes, _, _ = batch
    home, cwd, cache = tmp_path / "home", tmp_path / "cwd", tmp_path / "cache"
    home.mkdir(), cwd.mkdir()
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_engine_compile import dot_job
        from autotune_rewrite.compile.compile_pool import compile_many
        (o,) = compile_many([dot_job(64, 32, 2)], workers=1, cache_dir={str(cache)!r})
        print(o.shared_bytes, o.registers, o.error)
        """
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRITON_")}
    env.update(HOME=str(home), PYTHONPATH=pythonpath())
    res = subprocess.run([sys.executable, "-c", script], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    base = outcomes[0]
    assert res.stdout.split() == [str(base.shared_bytes), str(base.registers), "None"]
    assert not (home / ".triton").exists()
    assert list(cwd.iterdir()) == []


def test_smem_fit_recovers_the_compiled_formula(batch):
    """Fit on the base config and its probes; the model must reproduce every compiled point,
    including two that were not used for the fit."""
    jobs, outcomes, _, _ = batch
    by_params = {tuple(sorted(params(o.job).items())): o.shared_bytes for o in outcomes}
    fit = [(p, by_params[tuple(sorted(p.items()))]) for p in FIT_POINTS]
    model = fit_smem_model(fit)
    assert model is not None and model.max_residual == 0
    for p in HELD_OUT:
        assert predict(model, p) == by_params[tuple(sorted(p.items()))]
    if outcomes[0].triton_version == "3.6.0":
        # Recorded with Triton 3.6.0 for sm_120 (BLOCK_N = 64, fp16): the A tile is buffered
        # (num_stages - 1) times, the B tile once.
        assert model.text == "SMEM = 128*BLOCK_K - 2*BLOCK_K*BLOCK_M + 2*num_stages*BLOCK_K*BLOCK_M"
        # num_stages=3, BLOCK_M=64: 384*BLOCK_K <= 101,376 -> BLOCK_K <= 264 -> 256
        assert largest_fit(model, ARCHS["sm_120"], {"BLOCK_M": 64, "num_stages": 3}, "BLOCK_K") == 256


def test_occupancy_of_an_outcome(batch):
    _, outcomes, _, _ = batch
    o = outcomes[0]
    occ = occupancy_of(o, ARCHS["sm_120"])
    assert occ == occupancy(ARCHS["sm_120"], o.job.num_warps, o.registers, o.shared_bytes)
    with pytest.raises(ValueError, match="compiled for sm_120, not sm_90"):
        occupancy_of(o, ARCHS["sm_90"])


def test_a_dying_worker_is_reported_and_the_rest_still_compile(tmp_path):
    # The bundle's top level ends its process, as an LLVM abort in the compiler would.
    dying = dataclasses.replace(
        _broken("k", 16), bundle=KernelBundle("k", "import os\nos._exit(3)\n", "dies.py::k"))
    out = compile_many([dying, dot_job(32, 32, 2)], workers=2, cache_dir=tmp_path)
    assert out[0].error.startswith("the compiler process crashed")
    assert out[1].error is None and out[1].shared_bytes is not None
    # the crash is not cached (it may be the machine's fault); the good outcome is
    assert len(list((tmp_path / "outcomes").rglob("*.json"))) == 1


def test_ptxas_failure_is_one_line_and_prints_nothing(batch):
    """PTXAS_OPTIONS (read by Triton at import) makes ptxas fail: the outcome carries ptxas's
    own line, Triton's PTX dump does not reach our stdout, and the cached successes of the same
    jobs are not served (the setting is part of the key)."""
    _, _, cache, _ = batch
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_engine_compile import dot_job, BASE
        from autotune_rewrite.compile.compile_pool import compile_many
        jobs = [dot_job(BASE["BLOCK_M"], BASE["BLOCK_K"], BASE["num_stages"]), dot_job(32, 64, 4)]
        for o in compile_many(jobs, workers=2, cache_dir={str(cache)!r}):
            print(o.cached, o.error)
        """
    )
    env = {**os.environ, "PYTHONPATH": pythonpath(), "PTXAS_OPTIONS": "--no-such-ptxas-flag"}
    res = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    lines = res.stdout.splitlines()
    assert len(lines) == 2
    for line in lines:
        assert re.fullmatch(r"False ptxas(-blackwell)? fatal: Unknown option '-no-such-ptxas-flag'", line), line
    assert ".version" not in res.stderr  # no PTX text anywhere


def test_triton_environment_hides_retargeting_and_restores(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITON_OVERRIDE_ARCH", "sm80")
    monkeypatch.setenv("TRITON_CACHE_DIR", "/users/own/cache")
    monkeypatch.delenv("TRITON_DEFAULT_FP_FUSION", raising=False)
    with triton_environment(tmp_path, fp_fusion=False):
        assert os.environ["TRITON_DEFAULT_FP_FUSION"] == "0"
        assert "TRITON_OVERRIDE_ARCH" not in os.environ
        assert os.environ["TRITON_CACHE_DIR"] == str(tmp_path)
        assert tempfile.gettempdir() == str(tmp_path / "tmp")
    assert os.environ["TRITON_OVERRIDE_ARCH"] == "sm80"
    assert os.environ["TRITON_CACHE_DIR"] == "/users/own/cache"
    assert "TRITON_DEFAULT_FP_FUSION" not in os.environ
    assert tempfile.gettempdir() != str(tmp_path / "tmp")


def test_compile_job_alone_cleans_up_its_triton_dir():
    # This process's folders only: another pytest worker compiling meanwhile makes its own.
    mine = f"autotune-rewrite-triton-{os.getpid()}-*"
    before = set(Path(tempfile.gettempdir()).glob(mine))
    out = compile_job(_broken("odd_arange_kernel", 48))
    assert out.error == "arange's range must be a power of 2 (at 3:11)" and not out.cached
    assert set(Path(tempfile.gettempdir()).glob(mine)) <= before


def test_a_bundle_may_keep_its_autotune_decorator(tmp_path):
    source = textwrap.dedent(
        """
        import triton
        import triton.language as tl

        @triton.autotune(configs=[triton.Config({"BLOCK": 64}, num_warps=2)], key=["n"])
        @triton.heuristics({"EVEN": lambda args: args["n"] % 64 == 0})
        @triton.jit
        def scale_kernel(x_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            if EVEN:
                tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2.0)
            else:
                tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)
        """
    )
    job = CompileJob(
        bundle=KernelBundle("scale_kernel", source, "scale.py::scale_kernel"),
        signature=(("x_ptr", "*fp32"), ("n", "i32"), ("BLOCK", "constexpr"), ("EVEN", "constexpr")),
        constexprs=(("BLOCK", 64), ("EVEN", True)),
        divisible_by_16=("x_ptr", "n"),
        num_warps=2, num_stages=1, num_ctas=1, maxnreg=None, capability=120,
    )
    (out,) = compile_many([job], workers=1, cache_dir=tmp_path)
    assert out.error is None and out.registers is not None and out.shared_bytes == 0


def test_maxnreg_reaches_ptxas(batch, tmp_path):
    # Triton drops unknown option keys silently: check that maxnreg really caps the registers.
    _, outcomes, _, _ = batch
    hungry = max(outcomes, key=lambda o: o.registers)
    assert hungry.registers > 96
    (capped,) = compile_many([dataclasses.replace(hungry.job, maxnreg=96)], workers=1, cache_dir=tmp_path)
    assert capped.error is None and capped.registers <= 96
    assert capped.shared_bytes == hungry.shared_bytes
