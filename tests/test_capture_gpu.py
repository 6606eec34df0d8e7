"""On a CUDA machine: capture on the example's driver, then check --arch sm_90 with the captured
spec gives the live kernels' SMEM / registers / spills, and inspect-cache on the cache that run
wrote shows the same (benchmarks/device/capture_proof.py does the work and writes its files)."""

from __future__ import annotations

import json

import pytest


@pytest.mark.gpu
def test_captured_spec_reproduces_the_live_kernels(tmp_path):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks" / "device"))
    from capture_proof import run_proof

    report = run_proof(tmp_path / "capture", ["1", "8"])
    assert "error" not in report, json.dumps(report, indent=1)[:4000]
    assert report["capture_exit"] == 0
    # fp8 and bf16 caches: at least two specs, every config compiled live and matched
    assert len({row["spec"] for row in report["rows"]}) >= 2
    assert report["all_match"], json.dumps([r for r in report["rows"] if not (r["check_sm90"]["match"]
                                                                            and r["inspect_cache"]["match"])], indent=1)
