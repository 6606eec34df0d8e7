"""The bundled example kernel computes sparse MLA decode correctly.

On the CPU the real caller and kernels run in Triton's interpreter (``drive.py --interpret``,
its own process because TRITON_INTERPRET is read when the kernels are decorated); every
autotune config is pinned in turn. The ``gpu`` tests run the same driver on CUDA, autotuner
included, at serving shapes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "sm120_mla_decode"
SPLIT_CONFIGS = {
    "BLOCK_T: 16, num_warps: 4, num_ctas: 1, num_stages: 2, maxnreg: None",
    "BLOCK_T: 32, num_warps: 4, num_ctas: 1, num_stages: 2, maxnreg: None",
    "BLOCK_T: 32, num_warps: 8, num_ctas: 1, num_stages: 2, maxnreg: None",
}


def _drive(*args: str, timeout: int) -> list[dict]:
    proc = subprocess.run(
        [sys.executable, str(EXAMPLE / "drive.py"), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    bad = [r for r in rows if not r["ok"]]
    assert proc.returncode == 0, f"drive.py exited {proc.returncode}\n{proc.stderr[-3000:]}\n{bad}"
    return rows


# Small shapes keep each interpreted run to seconds. topk is not a multiple of 64, contexts
# shorter than topk leave -1 tails (whole splits empty), padding rows have no index at all.
INTERPRETER_CASES = {
    "fp8-cache": ["--heads", "16", "--batch", "3", "--padding-requests", "1", "--v-scale-ratio", "1.5"],
    "fp16-cache-two-head-blocks": ["--heads", "32", "--batch", "2", "--kv-dtype", "act"],
    "eight-heads-one-split": ["--heads", "8", "--batch", "2", "--num-splits", "1"],
}


@pytest.mark.parametrize("case", sorted(INTERPRETER_CASES))
def test_interpreter_matches_reference(case):
    common = ["--interpret", "--topk", "300", "--max-context", "400", "--page-size", "16"]
    rows = _drive(*common, *INTERPRETER_CASES[case], timeout=600)

    assert {r["config"] for r in rows} == SPLIT_CONFIGS
    for r in rows:
        assert r["ok"], r
        assert r["max_abs_ref"] > 0.1  # the reference is not trivially zero
        assert r["max_abs_err"] < 5e-3


def test_interpreter_refuses_bf16_mma():
    proc = subprocess.run(
        [sys.executable, str(EXAMPLE / "drive.py"), "--interpret", "--act-dtype", "bf16", "--batch", "1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "bf16" in proc.stderr


@pytest.mark.gpu
@pytest.mark.parametrize("kv_dtype", ["fp8", "act"])
def test_gpu_matches_reference(kv_dtype):
    rows = _drive("--batch", "1", "8", "32", "96", "--kv-dtype", kv_dtype, "--each-config", timeout=600)

    assert {r["batch"] for r in rows} == {1, 8, 32, 96}
    assert {r["config"] for r in rows if r["run"] != "autotuned"} == SPLIT_CONFIGS
    assert sum(r["run"] == "autotuned" for r in rows) == 4
    for r in rows:
        assert r["ok"], r
        assert r["act_dtype"] == "bf16"
