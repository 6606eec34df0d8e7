"""Scheduling of a ``check`` run's compiles: the SMEM probes that every config compiling would ask
for are queued with the configs, so a kernel's probe round no longer waits for its slowest config;
each job still compiles once, and the counts stay honest (a probe compiled early is "compiled")."""

from __future__ import annotations

import shutil
from pathlib import Path

from autotune_rewrite.compile import compile_pool, compile_stream
from autotune_rewrite.check.check import check

FIXTURE = Path(__file__).parent / "fixtures" / "check" / "repo"
TRANSPOSE = "kernels/transpose.py::transpose_kernel"


def test_likely_probes_go_with_the_configs_and_compile_once(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE, repo)
    batches: list[list] = []
    real_add = compile_stream.CompileStream.add
    monkeypatch.setattr(compile_stream.CompileStream, "add",
                        lambda self, jobs, on_done, priority=0: batches.append(list(jobs))
                        or real_add(self, jobs, on_done, priority))
    compiles: list = []
    real_compile = compile_pool.compile_job
    monkeypatch.setattr(compile_pool, "compile_job", lambda job, **kw: compiles.append(job) or real_compile(job, **kw))

    result = check(repo, kernel=TRANSPOSE, workers=1, cache_dir=tmp_path / "cache")

    configs, likely, wanted = batches  # the configs, the probes queued beside them, the probes asked for
    assert len(configs) == 3 and likely and likely == wanted
    assert len(compiles) == len(configs) + len(likely)  # each job once
    assert (result.compiled, result.cached) == (len(configs) + len(likely), 0)
    assert result.reports[0].smem_models  # the probes served the fit
