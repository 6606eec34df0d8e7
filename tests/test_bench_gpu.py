"""bench on a real GPU (device machine): the example kernel, two batch sizes, every config pinned.

    python -m pytest -q -m gpu tests/test_bench_gpu.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from repo_env import pythonpath

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "sm120_mla_decode"
SPLIT = "_mma_sparse_decode_split_kernel"


@pytest.mark.gpu
def test_bench_the_example_on_two_batch_sizes(tmp_path):
    out = tmp_path / "bench"
    env = dict(os.environ, NO_COLOR="1")
    env["PYTHONPATH"] = pythonpath(env=env)
    proc = subprocess.run(
        [sys.executable, "-m", "autotune_rewrite", "bench", str(EXAMPLE), "--kernel", SPLIT, "--variant", "prune",
         "--variant", "v1", "--batch", "1,32", "--out", str(out), "--format", "json"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    data = json.loads(proc.stdout)
    assert json.loads((out / f"{SPLIT}.json").read_text()) == data  # saved == printed
    labels = [c["label"] for c in data["configs"]]
    assert labels == ["BLOCK_T=16 w4 s2", "BLOCK_T=32 w4 s2", "BLOCK_T=32 w8 s2", "BLOCK_T=16 w8 s2"]
    assert data["recommendation"]["variant"] in ("prune", "v1")
    by = {(m["config"], m["batch"]): m for m in data["measurements"]}
    assert set(by) == {(c, b) for c in labels for b in (1, 32)}
    for m in data["measurements"]:
        # On an sm_90 GPU every original config launches (232,448 B per block).
        if data["capability"] == "sm_90":
            assert m["error"] is None
        if m["error"] is None:
            assert 0 < m["graph_ms"] < 100 and 0 < m["median_ms"] < 100
            # Achieved bandwidth of the compulsory bytes cannot beat a plain copy by much (L2 hits aside).
            assert 0 < m["gbps"] < 2 * data["copy_gbps"]
    assert by[("BLOCK_T=16 w8 s2", 32)]["bytes_moved"] > by[("BLOCK_T=16 w8 s2", 1)]["bytes_moved"]
    assert data["copy_gbps"] > 100
    assert "matplotlib" in " ".join(data["notes"]) or (out / f"{SPLIT}.png").is_file()


@pytest.mark.gpu
def test_pinned_config_is_the_one_that_runs():
    import torch

    from autotune_rewrite.bench import inputs, timing
    from autotune_rewrite.model import ConfigValue

    sys.path.insert(0, str(EXAMPLE))
    from bench_inputs import make_inputs
    from mla_decode.decode import sparse_mla_decode

    site = type("S", (), {"path": "mla_decode/kernels.py", "kernel": SPLIT, "ident": f"mla_decode/kernels.py::{SPLIT}"})()
    tuner = inputs.load_autotuner(EXAMPLE, site)
    before, before_cache = list(tuner.configs), tuner.cache
    args = make_inputs(2, topk=256, max_context=512).kwargs()
    for cv in (ConfigValue({"BLOCK_T": 16}, 8, 2), ConfigValue({"BLOCK_T": 16}, 8, 3)):
        cfg = timing.live_config(tuner, cv)
        with timing.pinned(tuner, cfg):
            eager, graph = timing.time_call(lambda: sparse_mla_decode(**args))
            assert tuner.best_config is cfg  # a single config: no benchmarking, this one ran
        assert eager > 0 and graph > 0
    assert tuner.configs == before and tuner.cache is before_cache
    torch.cuda.synchronize()
