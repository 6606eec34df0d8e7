"""On a CUDA machine: the engine's static numbers equal the driver's (benchmarks/device/gpu_engine_proof.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from repo_env import pythonpath

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.gpu
def test_static_numbers_equal_the_driver():
    res = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "device" / "gpu_engine_proof.py")],
        env={**os.environ, "PYTHONPATH": pythonpath()}, capture_output=True, text=True,
    )
    assert res.stdout, res.stderr[-4000:]
    report = json.loads(res.stdout)
    mismatches = [row for row in report["rows"] if not row["match"]]
    assert res.returncode == 0 and report["all_match"], json.dumps(mismatches, indent=1)
