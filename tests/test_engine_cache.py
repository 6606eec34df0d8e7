"""The outcome cache: what its key depends on, storage round trip, location. No compiles here
(tests/test_engine_compile.py shows a warm rerun compiling nothing)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from autotune_rewrite.compile.compile_cache import CompileCache, current_toolchain, job_key
from autotune_rewrite.disk_cache import default_cache_dir
from autotune_rewrite.evidence import CompileJob, CompileOutcome, KernelBundle

JOB = CompileJob(
    bundle=KernelBundle("k", "import triton\n@triton.jit\ndef k(x, B: tl.constexpr):\n    pass\n", "a.py::k"),
    signature=(("x", "*fp32"), ("B", "constexpr")),
    constexprs=(("B", 16),),
    divisible_by_16=("x",),
    num_warps=4,
    num_stages=2,
    num_ctas=1,
    maxnreg=None,
    capability=120,
)


def outcome(job: CompileJob = JOB, **kw) -> CompileOutcome:
    fields = dict(shared_bytes=8192, tmem_bytes=0, registers=40, spills=0, error=None,
                  triton_version="3.6.0", ptxas_version="12.9.86", seconds=0.5)
    fields.update(kw)
    return CompileOutcome(job=job, **fields)


@pytest.fixture
def toolchain():
    return current_toolchain({90, 120}, fp_fusion=True)


@pytest.mark.parametrize(
    "change",
    [
        {"bundle": KernelBundle("k", JOB.bundle.source + "# edited\n", "a.py::k")},
        {"signature": (("x", "*bf16"), ("B", "constexpr"))},
        {"constexprs": (("B", 32),)},
        {"divisible_by_16": ()},
        {"num_warps": 8},
        {"num_stages": 3},
        {"num_ctas": 2},
        {"maxnreg": 128},
        {"capability": 90},
    ],
    ids=lambda c: next(iter(c)),
)
def test_key_changes_with_every_job_field(change, toolchain):
    assert job_key(dataclasses.replace(JOB, **change), toolchain) != job_key(JOB, toolchain)


def test_key_is_stable_and_ignores_the_origin(toolchain):
    moved = dataclasses.replace(JOB, bundle=dataclasses.replace(JOB.bundle, origin="b.py::k"))
    assert job_key(JOB, toolchain) == job_key(moved, current_toolchain({90, 120}, fp_fusion=True))


def test_key_changes_with_the_toolchain_and_environment(toolchain, monkeypatch):
    base = job_key(JOB, toolchain)
    assert job_key(JOB, dataclasses.replace(toolchain, triton_version="3.5.0")) != base
    assert job_key(JOB, dataclasses.replace(toolchain, ptxas_versions=((120, "12.8.93"),))) != base
    assert job_key(JOB, current_toolchain({120}, fp_fusion=False)) != base
    monkeypatch.setenv("PTXAS_OPTIONS", "--maxrregcount=64")
    assert job_key(JOB, current_toolchain({90, 120}, fp_fusion=True)) != base
    monkeypatch.delenv("PTXAS_OPTIONS")
    monkeypatch.setenv("TRITON_CACHE_DIR", "/elsewhere")  # a place, not a setting
    assert job_key(JOB, current_toolchain({90, 120}, fp_fusion=True)) == base


def test_round_trip_marks_cached(tmp_path, toolchain):
    cache = CompileCache(tmp_path)
    key = job_key(JOB, toolchain)
    assert cache.get(key, JOB) is None
    cache.put(key, outcome())
    got = cache.get(key, JOB)
    assert got == dataclasses.replace(outcome(), cached=True)
    assert got.job is JOB
    # compile errors are outcomes too, and are cached
    err = outcome(shared_bytes=None, registers=None, spills=None, tmem_bytes=None, error="boom (at 1:2)")
    cache.put("ff" + key[2:], err)
    assert cache.get("ff" + key[2:], JOB).error == "boom (at 1:2)"
    # one JSON file per outcome, no temporary files left behind
    files = sorted(p.name for p in tmp_path.rglob("*") if p.is_file())
    assert files == sorted([f"{key}.json", f"ff{key[2:]}.json"])


def test_unreadable_entries_are_misses(tmp_path, toolchain):
    cache = CompileCache(tmp_path)
    key = job_key(JOB, toolchain)
    cache.put(key, outcome())
    path = next(tmp_path.rglob(f"{key}.json"))
    path.write_text("{not json")
    assert cache.get(key, JOB) is None
    path.write_text(json.dumps({"schema": 999}))
    assert cache.get(key, JOB) is None


def test_an_unwritable_cache_is_not_an_error(tmp_path, toolchain):
    blocker = tmp_path / "file"
    blocker.write_text("")
    cache = CompileCache(blocker)  # a file where the directory should be
    cache.put(job_key(JOB, toolchain), outcome())
    assert cache.get(job_key(JOB, toolchain), JOB) is None


def test_default_location(monkeypatch, tmp_path):
    monkeypatch.delenv("AUTOTUNE_REWRITE_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "autotune-rewrite"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path / ".cache" / "autotune-rewrite"
    monkeypatch.setenv("AUTOTUNE_REWRITE_CACHE_DIR", str(tmp_path / "mine"))
    assert default_cache_dir() == tmp_path / "mine"
    assert CompileCache().directory == tmp_path / "mine"
    assert CompileCache(Path("/x")).directory == Path("/x")
