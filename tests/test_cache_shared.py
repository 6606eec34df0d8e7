"""The disk cache as a folder CI restores between runs and several processes fill at once:
atomic writes under real concurrent writers, corrupt entries recompiled and rewritten, keys that
change with every version that could change an answer, a size limit with least-recently-used
eviction, and the ``cache stats`` / ``cache prune`` commands."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from repo_env import pythonpath

from autotune_rewrite import cache_admin, disk_cache, sizes
from autotune_rewrite.compile.compile_cache import CompileCache, current_toolchain, job_key
from autotune_rewrite.compile.compile_pool import compile_many
from autotune_rewrite.evidence import CompileJob, KernelBundle
from autotune_rewrite.errors import UserError
from autotune_rewrite.settings import from_table
import cli_process

DAY = 86400.0


def _entry(ns: disk_cache.Namespace, name: str, size: int, used: float) -> Path:
    key = ns.key(name)
    assert ns.write_json(key, "x" * size)
    path = ns.path(key)
    os.utime(path, (used, used))
    return path


# --------------------------------------------------------------------------- sizes and limits
@pytest.mark.parametrize("text, size", [
    ("2GB", 2_000_000_000), ("500MB", 500_000_000), ("1GiB", 2**30), ("1.5G", 1_500_000_000),
    ("100000", 100_000), (4096, 4096), ("none", 0), ("0", 0), (" 64 kb ", 64_000),
])
def test_sizes_are_read_as_written(text, size):
    assert sizes.parse_size(text) == size


@pytest.mark.parametrize("text", ["2XB", "-1", "GB", "", True, -5])
def test_a_bad_size_is_refused(text):
    with pytest.raises(ValueError):
        sizes.parse_size(text)


def test_the_limit_comes_from_the_variable_then_the_settings_then_the_default(monkeypatch):
    monkeypatch.delenv(cache_admin.ENV_MAX, raising=False)
    assert cache_admin.limit_in_force() == (2_000_000_000, "default")
    settings = from_table({"cache": {"max_size": "300MB"}})
    assert settings.cache.max_size == 300_000_000
    assert cache_admin.limit_in_force(settings.cache.max_size, "pyproject.toml") == (300_000_000, "pyproject.toml")
    assert cache_admin.limit_in_force(from_table({"cache": {"max_size": "none"}}).cache.max_size)[0] is None
    monkeypatch.setenv(cache_admin.ENV_MAX, "1GB")
    assert cache_admin.limit_in_force(300_000_000) == (1_000_000_000, cache_admin.ENV_MAX)
    monkeypatch.setenv(cache_admin.ENV_MAX, "lots")
    with pytest.raises(UserError, match="AUTOTUNE_REWRITE_CACHE_MAX=lots: not a size"):
        cache_admin.limit_in_force()


def test_a_bad_max_size_setting_names_the_key():
    with pytest.raises(UserError, match=r"\[tool.autotune-rewrite\] cache.max_size = '2 gigs' is not a size"):
        from_table({"cache": {"max_size": "2 gigs"}})
    with pytest.raises(UserError, match="did you mean 'max_size'"):
        from_table({"cache": {"maxsize": "2GB"}})


# --------------------------------------------------------------------------- least recently used
def test_eviction_keeps_what_was_read_last(tmp_path):
    now = time.time()
    ns = disk_cache.namespace("outcomes", 1, tmp_path)
    old_but_read = _entry(ns, "a", 1000, now - 9 * DAY)
    middle = _entry(ns, "b", 1000, now - 5 * DAY)
    newest = _entry(ns, "c", 1000, now - 1 * DAY)
    assert ns.read_json(ns.key("a")) == "x" * 1000  # a read is a use: "a" is now the most recent
    result = cache_admin.prune(tmp_path, max_size=2100)
    assert (result.removed, result.entries) == (1, 2)
    assert not middle.exists() and old_but_read.exists() and newest.exists()


def test_prune_by_age_and_stale_temporary_files(tmp_path):
    now = time.time()
    ns = disk_cache.namespace("bundles", 1, tmp_path)
    stale = _entry(ns, "old", 10, now - 40 * DAY)
    fresh = _entry(ns, "new", 10, now - 2 * DAY)
    killed = stale.parent / f"{disk_cache.TEMP_PREFIX}killed.json"  # a writer killed before its rename
    writing = stale.parent / f"{disk_cache.TEMP_PREFIX}writing.json"  # one still writing
    killed.write_text("{")
    writing.write_text("{")
    os.utime(killed, (now - 2 * 3600, now - 2 * 3600))
    (tmp_path / "errors").mkdir()
    (tmp_path / "errors" / "trace.txt").write_text("not an entry")
    assert cache_admin.stats(tmp_path).temporary == 2
    result = cache_admin.prune(tmp_path, older_than_days=30)
    assert (result.removed, result.temporary_removed, result.entries) == (1, 1, 1)
    assert not stale.exists() and fresh.exists() and not killed.exists() and writing.exists()
    assert (tmp_path / "errors" / "trace.txt").exists()


def test_stats_by_kind(tmp_path):
    now = time.time()
    _entry(disk_cache.namespace("outcomes", 1, tmp_path), "a", 100, now - 3 * DAY)
    _entry(disk_cache.namespace("outcomes", 1, tmp_path), "b", 100, now - 1 * DAY)
    _entry(disk_cache.namespace("scans", 1, tmp_path, suffix=".pickle"), "c", 50, now - 2 * DAY)
    s = cache_admin.stats(tmp_path, 10**9, "default")
    assert (s.entries, [(k.kind, k.entries) for k in s.kinds]) == (3, [("outcomes", 2), ("scans", 1)])
    assert s.bytes == sum(k.bytes for k in s.kinds) == sum(p.stat().st_size for p in tmp_path.rglob("*.*"))
    assert s.oldest == pytest.approx(now - 3 * DAY) and s.newest == pytest.approx(now - 1 * DAY)


def test_a_run_trims_to_90_percent_only_when_it_wrote_and_is_over(tmp_path, monkeypatch):
    now = time.time()
    ns = disk_cache.namespace("outcomes", 1, tmp_path)
    paths = [_entry(ns, str(i), 1000, now - (100 - i) * 60) for i in range(10)]  # path[9] the newest
    size = paths[0].stat().st_size
    monkeypatch.setattr(disk_cache, "_written", 0)
    assert cache_admin.trim(tmp_path, 5 * size) is None  # a run that stored nothing has nothing to trim
    monkeypatch.setattr(disk_cache, "_written", 1)
    assert cache_admin.trim(tmp_path, 20 * size) is None  # under the limit
    result = cache_admin.trim(tmp_path, 5 * size)
    assert result.bytes <= 0.9 * 5 * size and result.entries == 4
    assert [p.exists() for p in paths] == [False] * 6 + [True] * 4


def test_evicting_10000_entries_is_fast(tmp_path):
    now = time.time()
    for i in range(10_000):
        shard = tmp_path / "outcomes" / f"{i % 256:02x}"
        shard.mkdir(parents=True, exist_ok=True)
        p = shard / f"{i:064x}.json"
        p.write_bytes(b"x" * 500)
        os.utime(p, (now - i, now - i))
    start = time.perf_counter()
    result = cache_admin.prune(tmp_path, max_size=2_500_000)  # keeps the 5,000 most recent
    seconds = time.perf_counter() - start
    assert (result.removed, result.entries) == (5000, 5000)
    assert seconds < 10  # measured about 0.3 s on the 2-core CI machine (docs/ci.md)


# --------------------------------------------------------------------------- concurrent processes
WRITER = """
import sys, time
from autotune_rewrite import disk_cache, cache_admin
ns = disk_cache.namespace("outcomes", 1, sys.argv[1])
key, tag, mode = ns.key("shared"), sys.argv[2], sys.argv[3]
deadline = time.time() + 4
while time.time() < deadline:
    if mode == "write":
        assert ns.write_json(key, {"by": tag, "payload": tag * 200_000})
    else:
        cache_admin.prune(sys.argv[1], max_size=0)
"""


def test_concurrent_writers_and_an_evictor_never_show_half_an_entry(tmp_path):
    env = dict(os.environ, PYTHONPATH=pythonpath())
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), tag, mode], env=env)
             for tag, mode in (("a", "write"), ("b", "write"), ("-", "evict"))]
    ns = disk_cache.namespace("outcomes", 1, tmp_path)
    seen: dict[str, int] = {"a": 0, "b": 0, "miss": 0}
    while any(p.poll() is None for p in procs):
        value = ns.read_json(ns.key("shared"))
        if value is None:
            seen["miss"] += 1  # not written yet, or evicted: a miss, never an error
            continue
        assert value["payload"] == value["by"] * 200_000  # whole, and one writer's
        seen[value["by"]] += 1
    assert [p.wait() for p in procs] == [0, 0, 0]
    assert seen["a"] and seen["b"], seen
    leftovers = [p.name for p in tmp_path.rglob(f"{disk_cache.TEMP_PREFIX}*")]
    assert leftovers == []


# --------------------------------------------------------------------------- keys and corrupt entries
COPY = """import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
"""
JOB = CompileJob(bundle=KernelBundle("copy_kernel", COPY, "tests::copy_kernel"),
                 signature=(("x_ptr", "*fp32"), ("y_ptr", "*fp32"), ("n", "i32"), ("BLOCK", "constexpr")),
                 constexprs=(("BLOCK", 256),), divisible_by_16=("x_ptr", "y_ptr"), num_warps=4, num_stages=2,
                 num_ctas=1, maxnreg=None, capability=120)


def test_compile_keys_change_with_the_tool_and_libcst_versions(monkeypatch):
    toolchain = current_toolchain({120}, fp_fusion=True)
    base = job_key(JOB, toolchain)
    for name in ("autotune-rewrite", "libcst", "triton"):
        bumped = tuple((n, "999" if n == name else v) for n, v in disk_cache.tool_versions())
        monkeypatch.setattr(disk_cache, "tool_versions", lambda bumped=bumped: bumped)
        assert job_key(JOB, toolchain) != base, name
    monkeypatch.undo()
    assert toolchain.ptxas_for(120)  # the ptxas that compiles for sm_120 is part of the key
    assert job_key(JOB, toolchain) == base


def test_a_corrupt_outcome_is_recompiled_and_rewritten(tmp_path):
    first, = compile_many([JOB], workers=1, cache_dir=tmp_path)
    assert not first.cached and first.error is None and first.registers
    entry, = (tmp_path / "outcomes").rglob("*.json")
    entry.write_bytes(entry.read_bytes()[:40])  # half an entry, as a full disk or an old tool might leave
    again, = compile_many([JOB], workers=1, cache_dir=tmp_path)
    assert not again.cached and (again.shared_bytes, again.registers) == (first.shared_bytes, first.registers)
    assert json.loads(entry.read_text())["value"]["registers"] == first.registers  # rewritten whole
    third, = compile_many([JOB], workers=1, cache_dir=tmp_path)
    assert third.cached and CompileCache(tmp_path).get(job_key(JOB, current_toolchain({120}, True)), JOB)


# --------------------------------------------------------------------------- the commands
def _cli(cache: Path, *args: str, **env_extra: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, AUTOTUNE_REWRITE_CACHE_DIR=str(cache), NO_COLOR="1", PYTHONPATH=pythonpath())
    env.pop(cache_admin.ENV_MAX, None)
    env.update(env_extra)
    return cli_process.run(["cache", *args], cwd=cache.parent, env=env, timeout=120)


def test_cache_stats_and_prune_commands(tmp_path):
    cache = tmp_path / "cache"
    now = time.time()
    for i in range(4):
        _entry(disk_cache.namespace("outcomes", 1, cache), str(i), 1000, now - i * DAY)
    stats = _cli(cache, "stats", "--format", "json")
    assert stats.returncode == 0, stats.stderr
    data = json.loads(stats.stdout)
    assert (data["entries"], data["kinds"][0]["kind"], data["limit"], data["limit_source"]) == \
        (4, "outcomes", 2_000_000_000, "default")
    table = _cli(cache, "stats")
    assert table.stdout == "" and "4 entries, 4.1 kB (limit 2.0 GB)" in table.stderr
    pruned = _cli(cache, "prune", "--older-than", "1.5")
    assert pruned.returncode == 0 and "removed 2 entries" in pruned.stderr and "2 entries, 2.1 kB left" in pruned.stderr
    by_size = json.loads(_cli(cache, "prune", "--max-size", "1500", "--format", "json").stdout)
    assert (by_size["removed"], by_size["entries"], by_size["max_size"]) == (1, 1, 1500)
    limited = json.loads(_cli(cache, "prune", "--format", "json", AUTOTUNE_REWRITE_CACHE_MAX="10").stdout)
    assert (limited["removed"], limited["entries"]) == (1, 0)  # no bound given: the limit in force
    bad = _cli(cache, "prune", "--max-size", "lots")
    assert bad.returncode == 2 and bad.stderr.startswith("error: --max-size lots: not a size")
