"""A capture on one GPU gives specs for any other: nothing in a stanza depends on the capturing GPU.

The records come from Triton's own binder and ``_pack_args`` driven for a CUDA backend of one
compute capability (``capture_helpers.launch``), as on an H100/H200 (9.0) and on an RTX PRO 6000
(12.0). Triton's CUDA specialization (``BaseBackend.get_arg_specialization``: 16-byte alignment,
``% 16``, ``== 1``) does not look at the arch, and the stanza writer keeps no target field, so the
two captures write the same bytes; ``check`` then cross-compiles that stanza for both.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from autotune_rewrite.gpu.capture import capture as capture_run, hooks, records, stanza
from capture_helpers import FIXTURES, launch, load_fixture
from repo_env import pythonpath

torch = pytest.importorskip("torch")


def _stanza(root, capability: int) -> str:
    hooks._seen_keys.clear()
    (root / "records.jsonl").unlink(missing_ok=True)
    mod = load_fixture("scaled_copy", root)
    for n in (4096, 4097):
        args = (torch.empty(n, dtype=torch.bfloat16), torch.empty(n, dtype=torch.float32), 0.5, n, 1, 3)
        launch(hooks, mod.scaled_copy_kernel, args, {"HEAD": 8}, capability=capability)
    raw = records.read_records(root / "records.jsonl")
    assert {r["resources"].get("target") for r in raw if r["event"] == "compile"} <= {None}  # nothing compiled here
    result = records.fold(raw, root)
    return stanza.merge_text("", capture_run.tables_for(result.kernels))


def test_a_capture_on_sm90_writes_what_one_on_sm120_writes_and_check_compiles_it_for_both(tmp_path, monkeypatch):
    shutil.copy(FIXTURES / "scaled_copy.py", tmp_path / "scaled_copy.py")
    monkeypatch.setenv(hooks.ENV, str(tmp_path / "records.jsonl"))
    on_hopper, on_blackwell = _stanza(tmp_path, 90), _stanza(tmp_path, 120)
    assert on_hopper == on_blackwell
    assert "sm_90" not in on_hopper and "cuda:" not in on_hopper and "90" not in on_hopper
    (tmp_path / "autotune-rewrite.toml").write_text(on_hopper)

    env = dict(os.environ, PYTHONPATH=pythonpath())
    res = subprocess.run([sys.executable, "-m", "autotune_rewrite", "check", ".", "--arch", "sm_90", "--arch", "sm_120",
                          "--format", "json", "-j", "1"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    (kernel,) = {k["kernel"] for k in report["kernels"]}
    assert kernel == "scaled_copy_kernel"
    by_spec = {k["spec"]: k for k in report["kernels"]}
    assert set(by_spec) == {"captured HEAD=8 n%16==0", "captured HEAD=8 n%16!=0"}
    for spec in by_spec.values():
        configs = spec["configs"]
        # both configs, both targets, each compiled for real and launchable
        assert sorted((c["arch"], c["label"]) for c in configs) == [
            ("sm_120", "BLOCK=128 w4 s3"), ("sm_120", "BLOCK=64 w2 s2"), ("sm_90", "BLOCK=128 w4 s3"), ("sm_90", "BLOCK=64 w2 s2")]
        assert all(c["compile_error"] is None and c["launchable"] and c["registers"] > 0 for c in configs)
    # the runtime's specialization, as captured, reached both compiles: n divisible only in the first spec
    first = by_spec["captured HEAD=8 n%16==0"]["configs"]
    second = by_spec["captured HEAD=8 n%16!=0"]["configs"]
    assert all("n" in c["divisible_by_16"] and c["constexprs"]["stride"] == 1 for c in first)
    assert all("n" not in c["divisible_by_16"] for c in second)
