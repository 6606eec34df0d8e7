"""The H200 proof's inputs: the committed ``check --arch sm_90 --format json`` files describe
launches that Triton's own runtime binder specializes exactly as the static compiles were
specialized (the script's --dry-run, on the CPU), so the GPU comparison compares like with like."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from repo_env import pythonpath

ROOT = Path(__file__).parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "gpu_proofs"
INPUTS = [RESULTS / "check_sm90_example.json", RESULTS / "check_sm90_tiled_matmul.json"]


def test_dry_run_reproduces_the_static_specialization():
    pytest.importorskip("torch")
    env = dict(os.environ, PYTHONPATH=pythonpath())
    proc = subprocess.run([sys.executable, "benchmarks/device/driver_proof.py", *map(str, INPUTS), "--dry-run"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["configs"] == 10  # 2 specs x 3 configs of the example + 4 matmul configs
    assert all(row["same_specialization"] for row in data["rows"]), [r for r in data["rows"]
                                                                    if not r["same_specialization"]]
    assert {row["arch"] for row in data["rows"]} == {"sm_90"}
