"""``--executor dask``: compiles on a real local Dask cluster (two worker processes), real compiles.

The farm must give the local pool's verdicts and write them into the same cache under the same
keys (a warm run then never contacts the scheduler); an unreachable address is exit 2 naming it,
or the local pool with ``--fallback local``; a worker killed mid-run costs nothing (Dask runs its
job again); a job that kills every worker it lands on ends on the local pool, as a crash that is
not cached. Few, small compiles: the CI machine has 2 cores.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from distributed import Client, LocalCluster
from repo_env import pythonpath
from test_compile_stream import job

from autotune_rewrite.check.check import check
from autotune_rewrite.settings.schema import FarmChoice
from autotune_rewrite.compile.compile_stream import CompileStream
from autotune_rewrite.evidence import KernelBundle

FIXTURE = Path(__file__).parent / "fixtures" / "check" / "repo"
TRANSPOSE = "kernels/transpose.py::transpose_kernel"
UNREACHABLE = "tcp://127.0.0.1:9"  # the discard port: nothing listens there


@pytest.fixture(scope="module")
def cluster():
    # One thread per worker process, as docs/ci.md says to run them; no dashboard (no port to clash).
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as c:
        yield c


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    dst = tmp_path_factory.mktemp("farm") / "repo"
    shutil.copytree(FIXTURE, dst)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "fixture"]):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=dst, check=True)
    return dst


def _numbers(result) -> list[tuple]:
    return [(v.config.label(), v.arch, v.outcome.shared_bytes, v.outcome.registers, v.outcome.spills, v.launchable)
            for r in result.reports for v in r.verdicts]


def _entries(cache: Path) -> set[str]:
    return {p.name for p in (cache / "outcomes").rglob("*.json")}


def test_the_farm_gives_the_local_verdicts_into_the_same_cache(cluster, repo, tmp_path):
    local = check(repo, kernel=TRANSPOSE, workers=2, cache_dir=tmp_path / "local")
    farm = check(repo, kernel=TRANSPOSE, cache_dir=tmp_path / "farm", executor="dask",
                 address=cluster.scheduler_address)
    assert _numbers(farm) == _numbers(local)
    assert [v.launchable for r in farm.reports for v in r.verdicts] == [True, True, False]  # 256x128: 131,072 B
    assert farm.compiled == local.compiled > 0 and not farm.warnings
    assert _entries(tmp_path / "farm") == _entries(tmp_path / "local")  # same keys, same cache
    # Warm: every answer is in the cache, so the scheduler is never contacted (this one does not exist).
    again = check(repo, kernel=TRANSPOSE, cache_dir=tmp_path / "farm", executor="dask", address=UNREACHABLE)
    assert _numbers(again) == _numbers(local) and again.compiled == 0


def _cli(repo: Path, cache: Path, *args: str) -> subprocess.CompletedProcess:
    # No heartbeat lines (a loaded CI machine prints one every 10 s): stderr is then just the verdict.
    env = dict(os.environ, AUTOTUNE_REWRITE_CACHE_DIR=str(cache), NO_COLOR="1", AUTOTUNE_REWRITE_HEARTBEAT_S="0",
               DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT="1s")
    env["PYTHONPATH"] = pythonpath(env=env)
    return subprocess.run([sys.executable, "-m", "autotune_rewrite", "check", ".", "--kernel", TRANSPOSE, *args],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=300)


def test_an_unreachable_scheduler_is_exit_2_naming_it_or_the_local_pool_when_asked(repo, tmp_path):
    failed = _cli(repo, tmp_path / "cache", "--executor", "dask", "--address", UNREACHABLE)
    assert failed.returncode == 2, failed.stderr
    lines = failed.stderr.strip().splitlines()
    assert len(lines) == 1 and UNREACHABLE in lines[0] and "--fallback local" in lines[0], failed.stderr
    assert not _entries(tmp_path / "cache")

    fell_back = _cli(repo, tmp_path / "cache", "--executor", "dask", "--address", UNREACHABLE, "--fallback", "local")
    assert fell_back.returncode == 1, fell_back.stderr  # the local pool's verdict: 256x128 cannot launch
    assert "compiled on the local pool (--fallback local)" in fell_back.stderr
    assert _entries(tmp_path / "cache")


def test_a_bad_executor_setting_is_exit_2_naming_the_key(repo, tmp_path):
    bad = tmp_path / "repo"
    shutil.copytree(repo, bad)
    pyproject = bad / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + '\n[tool.autotune-rewrite.check]\nexecutr = "dask"\n')
    out = _cli(bad, tmp_path / "cache")
    assert out.returncode == 2
    assert "check.executr is not a known key; did you mean 'executor'?" in out.stderr
    no_address = _cli(repo, tmp_path / "cache", "--executor", "dask")
    assert no_address.returncode == 2 and "--address tcp://HOST:8786" in no_address.stderr


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_scheduler_lost_mid_run_leaves_the_rest_to_the_local_pool(tmp_path):
    import dask

    address = f"tcp://127.0.0.1:{_free_port()}"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    scheduler = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                  "--port", address.rsplit(":", 1)[1], "--dashboard-address", ":0", "--no-show"], **quiet)
    worker = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
                               "--no-dashboard"], **quiet)
    with Client(address, timeout=120, set_as_default=False) as client:  # both started (slow on a busy machine)
        client.wait_for_workers(1, timeout=120)
    jobs = [job(b, w) for b in (64, 128, 256) for w in (1, 2)]
    stopped: list[bool] = []

    def stop_scheduler(done: int, total: int) -> None:
        if done >= 1 and not stopped:
            stopped.append(True)
            scheduler.kill()

    got: list = []
    try:
        # The client waits this long for a lost scheduler to come back before giving its jobs up.
        with dask.config.set({"distributed.comm.timeouts.connect": "5s"}):
            with CompileStream(workers=2, cache_dir=tmp_path, progress=stop_scheduler,
                               farm=FarmChoice(address, fallback="local")) as stream:
                stream.add(jobs, got.extend)
                stream.drain()
                events = list(stream.farm_events)
    finally:
        for proc in (worker, scheduler):
            proc.kill()
            proc.wait(timeout=30)
    assert stopped and [o.error for o in got] == [None] * 6
    assert [e.kind for e in events] == ["lost"] and 1 <= events[0].jobs <= 5
    assert len(_entries(tmp_path)) == 6  # what the farm finished, and what the local pool did after


def _worker_pids(address: str) -> dict[str, int]:
    with Client(address, set_as_default=False) as client:
        return client.run(os.getpid)


def test_a_worker_killed_mid_run_costs_nothing(cluster, tmp_path):
    jobs = [job(b, w) for b in (64, 128, 256) for w in (1, 2)]
    before = _worker_pids(cluster.scheduler_address)
    killed: list[int] = []

    def kill_one(done: int, total: int) -> None:
        if done >= 1 and not killed:  # the others are still compiling
            killed.append(next(iter(before.values())))
            os.kill(killed[0], signal.SIGKILL)

    got: dict[str, list] = {}
    with CompileStream(workers=2, cache_dir=tmp_path / "farm", progress=kill_one,
                       farm=FarmChoice(cluster.scheduler_address)) as stream:
        stream.add(jobs, lambda out: got.setdefault("farm", out))
        stream.drain()
    with CompileStream(workers=2, cache_dir=tmp_path / "local") as stream:
        stream.add(jobs, lambda out: got.setdefault("local", out))
        stream.drain()
    assert killed
    assert [(o.shared_bytes, o.registers, o.error) for o in got["farm"]] == \
        [(o.shared_bytes, o.registers, o.error) for o in got["local"]]
    assert _entries(tmp_path / "farm") == _entries(tmp_path / "local") and len(_entries(tmp_path / "farm")) == 6
    cluster.wait_for_workers(2, timeout=180)  # the nanny restarted it (a hang would outlast CI)


def test_a_job_that_kills_its_workers_ends_on_the_local_pool_as_a_crash(cluster, tmp_path):
    dying = dataclasses.replace(job(16), bundle=KernelBundle("k", "import os\nos._exit(3)\n", "dies.py::k"))
    cluster.scheduler.allowed_failures = 0  # Dask gives up at the first death (default: 3 more workers)
    try:
        got: dict[str, list] = {}
        with CompileStream(workers=2, cache_dir=tmp_path, farm=FarmChoice(cluster.scheduler_address)) as stream:
            stream.add([dying, job(32)], lambda out: got.setdefault("a", out))
            stream.drain()
            events = list(stream.farm_events)
    finally:
        cluster.scheduler.allowed_failures = 3
        cluster.wait_for_workers(2, timeout=180)
    assert got["a"][0].error.startswith("the compiler process crashed")
    assert got["a"][1].error is None and got["a"][1].registers
    assert [e.kind for e in events] == ["job_lost"] and "KilledWorker" in events[0].detail
    assert len(_entries(tmp_path)) == 1  # the crash is not cached


class _Cluster:
    """What ``connect`` reads of a cluster: each worker's answer to ``worker_facts``."""

    def __init__(self, **changed):
        self.changed = changed

    def run(self, fn, capabilities):
        return {"tcp://10.0.0.5:4001": {**fn(capabilities), **self.changed}}


def test_a_worker_with_another_toolchain_is_refused_naming_it():
    from autotune_rewrite.compile.compile_farm import _check_workers
    from autotune_rewrite.errors import UserError

    _check_workers("tcp://farm:8786", _Cluster(), (120,))  # the same versions: accepted
    with pytest.raises(UserError, match=r"Dask worker tcp://10.0.0.5:4001 \(scheduler tcp://farm:8786\) has "
                                        r"triton 3.5.1, this run 3\.\d.*install the same versions"):
        _check_workers("tcp://farm:8786", _Cluster(triton="3.5.1"), (120,))
