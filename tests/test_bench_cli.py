"""bench's bad input on the CPU: no GPU -> one line, exit 2, nothing written; the bench entry
and --also parsing; the plan of configs for the example (real compiles for sm_120)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from autotune_rewrite.bench import inputs
from autotune_rewrite.bench.plan import parse_config, plan
from autotune_rewrite.errors import UserError
from autotune_rewrite.model import ConfigValue
from autotune_rewrite.settings import from_table, load_settings
from repo_env import pythonpath
import cli_process

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "sm120_mla_decode"
SPLIT = "_mma_sparse_decode_split_kernel"


def _cli(*args, cwd: Path, env_extra=None) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_COLOR="1", **(env_extra or {}))
    env["PYTHONPATH"] = pythonpath(env=env)
    return cli_process.run(args, cwd=cwd, env=env, timeout=300)


def test_no_gpu_is_one_line_and_exit_2_with_nothing_written(tmp_path):
    out = tmp_path / "out"
    # CUDA_VISIBLE_DEVICES="" hides any GPU, so this holds on the device machine too.
    proc = _cli("bench", str(EXAMPLE), "--kernel", SPLIT, "--batch", "1,8", "--out", str(out), cwd=tmp_path,
                env_extra={"CUDA_VISIBLE_DEVICES": ""})
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert lines == ["error: bench needs a CUDA GPU: torch.cuda.is_available() is False on this machine "
                     "(run it where the GPU is)"]
    assert not out.exists()


def test_bad_batch_list_is_exit_2(tmp_path):
    proc = _cli("bench", str(EXAMPLE), "--kernel", SPLIT, "--batch", "1,x", cwd=tmp_path)
    assert proc.returncode == 2 and "--batch '1,x'" in proc.stderr


def test_the_examples_bench_entry():
    s = load_settings(EXAMPLE)
    site = type("S", (), {"ident": f"mla_decode/kernels.py::{SPLIT}", "kernel": SPLIT})()
    e = inputs.find_entry(s, site)
    assert (e.entry, e.call, e.bytes, dict(e.options)) == (
        "bench_inputs:make_inputs", "mla_decode.decode:sparse_mla_decode", "bench_inputs:bytes_moved", {})


@pytest.mark.parametrize("raw, match", [
    ({}, "bench has no entry for m.py::k; add \\[tool.autotune-rewrite.bench\\]"),
    ({"bench": []}, "bench must be a table keyed by kernel"),
    ({"bench": {"k": {"entry": "x:y"}}}, 'bench.k.call is required'),
    ({"bench": {"m.py::k": {"entry": "x:y", "call": "nocolon"}}}, 'bench."m.py::k".call must be "module:function"'),
    ({"bench": {"k": {"entry": "x:y", "call": "a:b", "bytes": 3}}}, "bench.k.bytes must be"),
    ({"bench": {"k": {"entry": "x:y", "call": "a:b", "byte": "a:b"}}}, "bench.k.byte is not a known key; did you mean 'bytes'"),
])
def test_bad_bench_entries_name_the_fix(raw, match):
    site = type("S", (), {"ident": "m.py::k", "kernel": "k"})()
    with pytest.raises(UserError, match="^pyproject.toml: \\[tool.autotune-rewrite\\] " + match):
        inputs.find_entry(from_table(raw), site)


def test_entry_return_values_become_call_arguments():
    class Obj:
        def kwargs(self):
            return {"a": 1}

    assert inputs.call_arguments({"a": 1}) == ((), {"a": 1})
    assert inputs.call_arguments((1, 2)) == ((1, 2), {})
    assert inputs.call_arguments(Obj()) == ((), {"a": 1})
    with pytest.raises(UserError, match="return a dict"):
        inputs.call_arguments(3)


def test_load_callable_reports_import_errors(tmp_path):
    (tmp_path / "mod_ok.py").write_text("def f(B):\n    return {'B': B}\n", encoding="utf-8")
    assert inputs.load_callable(tmp_path, "mod_ok:f")(3) == {"B": 3}
    with pytest.raises(UserError, match="no callable 'g'"):
        inputs.load_callable(tmp_path, "mod_ok:g")
    with pytest.raises(UserError, match="cannot import 'no_such_mod_xyz'"):
        inputs.load_callable(tmp_path, "no_such_mod_xyz:f")


def test_parse_config_labels():
    assert parse_config("BLOCK_T=16 w8 s3") == ConfigValue(kwargs={"BLOCK_T": 16}, num_warps=8, num_stages=3)
    assert parse_config("BLOCK_T=16 w8 s3").label() == "BLOCK_T=16 w8 s3"
    for bad in ("BLOCK_T=16 w8", "BLOCK_T=x w8 s2", "w8 s2 q"):
        with pytest.raises(UserError, match="--also"):
            parse_config(bad)


@pytest.mark.xdist_group("sm120_mla_decode")  # the example's compiles, shared with test_golden's case
def test_plan_of_the_example_follows_the_pipelines_decisions():
    # Compiles through the session's cache (AUTOTUNE_REWRITE_CACHE_DIR, set in conftest).
    p = plan(EXAMPLE, SPLIT, ["prune", "v1", "v3"], workers=2, also=[parse_config("BLOCK_T=16 w8 s3")])
    w4, w8, s3 = "BLOCK_T=16 w4 s2", "BLOCK_T=16 w8 s2", "BLOCK_T=16 w8 s3"
    assert p.targets == ("sm_120",)
    assert p.original == (w4, "BLOCK_T=32 w4 s2", "BLOCK_T=32 w8 s2")
    assert p.variants == {"prune": (w4,), "v1": (w8,), "v3": (w4, w8)}
    assert [c.label() for c in p.configs] == [*p.original, w8, s3]
    # Both BLOCK_T=32 configs need 106,496 B on sm_120 (cap 101,376 B); s3 launches for both specs.
    assert set(p.launchable) == {w4, w8, s3}
