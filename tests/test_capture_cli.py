"""``autotune-rewrite capture -- PROGRAM``: the program runs as it would alone (stdio, exit code),
and what it launched is written even when it fails.

The captured program is ``tests/fixtures/capture/cpu_launch.py``: Triton's real Autotuner.run,
binder and hook call, with only the GPU-bound benchmark and compile replaced (no GPU here).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tomllib
from pathlib import Path

import pytest

from capture_helpers import FIXTURES
from repo_env import pythonpath
import cli_process

REPO = Path(__file__).resolve().parents[1]


def _cli(args, cwd, extra_env=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = pythonpath(env=env)
    env.update(extra_env or {})
    # A process of its own: the captured program writes to the tool's file descriptors 1 and 2.
    return cli_process.run(args, cwd=cwd, env=env, timeout=300, isolated=True)


@pytest.fixture
def target(tmp_path):
    for name in ("scaled_copy.py", "cpu_launch.py"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    return tmp_path


def test_exit_code_and_output_pass_through_without_triton(tmp_path):
    prog = "import sys; print('to stdout'); print('to stderr', file=sys.stderr); sys.exit(7)"
    res = _cli(["capture", "--root", str(tmp_path), "--", sys.executable, "-c", prog], tmp_path)
    assert res.returncode == 7
    assert res.stdout == "to stdout\n"  # stdout is the program's alone
    assert res.stderr.startswith("to stderr\n")
    assert "nothing written" in res.stderr
    assert not (tmp_path / "autotune-rewrite.toml").exists()


def test_failing_program_still_writes_what_it_launched(target):
    res = _cli(["capture", "--root", ".", "--records", "rec.json", "--", sys.executable, "cpu_launch.py",
                "--batch", "1", "8", "--fail"], target)
    assert res.returncode == 3, res.stderr
    assert res.stdout == "launched n=512\nlaunched n=4096\n"
    assert "failing on purpose" in res.stderr
    doc = tomllib.loads((target / "autotune-rewrite.toml").read_text())
    (table,) = doc["kernels"]
    assert table["kernel"] == "scaled_copy.py::scaled_copy_kernel" and table["spec"] == "captured HEAD=8"
    assert table["types"]["src"] == "*bf16" and table["constexprs"] == {"HEAD": 8}
    raw = json.loads((target / "rec.json").read_text())
    assert raw["exit_code"] == 3
    assert [r["event"] for r in raw["records"]].count("compile") == 2  # one per config
    assert raw["folded"]["kernels"][0]["key_values"] == [[["n", 512]], [["n", 4096]]]


def test_second_capture_merges_and_check_accepts_the_file(target):
    assert _cli(["capture", "--root", ".", "--", sys.executable, "cpu_launch.py"], target).returncode == 0
    res = _cli(["capture", "--root", ".", "--", sys.executable, "cpu_launch.py", "--head", "4", "--odd"], target)
    assert res.returncode == 0, res.stderr
    specs = [t["spec"] for t in tomllib.loads((target / "autotune-rewrite.toml").read_text())["kernels"]]
    assert specs == ["captured HEAD=8", "captured HEAD=4"]
    again = _cli(["capture", "--root", ".", "--", sys.executable, "cpu_launch.py"], target)
    assert again.returncode == 0
    assert [t["spec"] for t in tomllib.loads((target / "autotune-rewrite.toml").read_text())["kernels"]] == specs
    check = _cli(["check", ".", "--arch", "sm_90", "--format", "json", "-j", "1", "--no-cache"], target)
    assert check.returncode == 0, check.stderr
    report = json.loads(check.stdout)
    text = json.dumps(report)
    assert "captured HEAD=8" in text and "captured HEAD=4" in text


def test_an_existing_sitecustomize_still_runs(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import builtins\nbuiltins.USER_SITECUSTOMIZE = 'ran'\n")
    prog = "import builtins; print(getattr(builtins, 'USER_SITECUSTOMIZE', 'missing'))"
    res = _cli(["capture", "--root", str(tmp_path), "--", sys.executable, "-c", prog], tmp_path,
               {"PYTHONPATH": pythonpath(site)})
    assert res.returncode == 0 and res.stdout == "ran\n"


def test_missing_program_is_a_usage_error(tmp_path):
    res = _cli(["capture", "--root", str(tmp_path), "--", "no-such-program-xyz"], tmp_path)
    assert res.returncode == 2 and "command not found: no-such-program-xyz" in res.stderr
    res = _cli(["capture", "--root", str(tmp_path)], tmp_path)
    assert res.returncode == 2 and "give the program after --" in res.stderr
