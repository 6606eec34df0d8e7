"""``autotune-rewrite check`` end to end through the real CLI, on a temporary git repository.

The fixture repo (tests/fixtures/check/repo) holds a tile-transpose kernel whose 256x128 config
needs 131,072 B of shared memory (over sm_120's 101,376 B opt-in limit, under sm_90's), behind a
module top level that imports a package that is not installed, writes a file and raises; and a
kernel whose configs depend on the environment (skipped). Every run shares one compile cache so
the suite compiles each job once.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from repo_env import pythonpath
import cli_process

FIXTURE = Path(__file__).parent / "fixtures" / "check" / "repo"
TRANSPOSE = "kernels/transpose.py::transpose_kernel"


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def _make_repo(dst: Path, pyproject: str | None = None) -> Path:
    shutil.copytree(FIXTURE, dst)
    if pyproject is not None:
        (dst / "pyproject.toml").write_text(pyproject)
    _git(dst, "init", "-q")
    _git(dst, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    _git(dst, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "fixture")
    return dst


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    return _make_repo(tmp_path_factory.mktemp("check") / "repo")


def run(cwd: Path, cache: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, AUTOTUNE_REWRITE_CACHE_DIR=str(cache), NO_COLOR="1")
    env["PYTHONPATH"] = pythonpath(env=env)
    return cli_process.run(["check", *args], cwd=cwd, env=env, timeout=600)


def _untouched(repo: Path) -> None:
    assert _git(repo, "status", "--porcelain", "--ignored") == ""
    assert not (repo / "kernels" / "IMPORTED_BY_CHECK").exists()


def _triton_version() -> str:
    import triton

    return triton.__version__


def test_sm120_rejects_the_big_tile_with_its_exact_smem(repo, cache):
    proc = run(repo, cache, ".")
    assert proc.returncode == 1, proc.stderr
    err = proc.stderr
    assert proc.stdout == ""  # the table is on stderr
    assert "BLOCK_M=256 BLOCK_N=128 w8 s3: cannot launch: shared memory 131,072 B > 101,376 B opt-in limit of " \
           "sm_120, over by 29,696 B" in err
    assert f"sm_120 (CC 12.0), Triton {_triton_version()}, ptxas " in err
    assert "SMEM model (sm_120): SMEM = 4*BLOCK_M*BLOCK_N (max residual 0 B" in err
    assert "BLOCK_M <= 128 at BLOCK_N=128 (predicted 65,536 B of 101,376 B)" in err
    assert "unresolved kernels/generated.py::scale_kernel: configs not statically known" in err
    assert "judged 1 of 2 kernels (1 with assumptions); not judged: unresolved kernels/generated.py::scale_kernel" in err
    rows = [ln for ln in err.splitlines() if ln.startswith("│ BLOCK_M=")]
    assert [r.split("│")[1].strip() for r in rows] == [
        "BLOCK_M=64 BLOCK_N=64 w4 s3", "BLOCK_M=128 BLOCK_N=128 w8 s3", "BLOCK_M=256 BLOCK_N=128 w8 s3"]
    assert ["launches" in r for r in rows] == [True, True, False]
    _untouched(repo)


def test_json_schema_and_several_targets(repo, cache):
    proc = run(repo, cache, ".", "--arch", "sm_120", "--arch", "h200", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert [t["arch"] for t in data["targets"]] == ["sm_120", "sm_90"]
    assert data["targets"][1]["product"] == "NVIDIA H200" and data["triton_version"] == _triton_version()
    skipped, kernel = data["kernels"]
    assert skipped["kernel"] == "scale_kernel" and skipped["skipped"].startswith("configs not statically known")
    assert (kernel["path"], kernel["kernel"], kernel["spec"]) == ("kernels/transpose.py", "transpose_kernel", "fp32")
    rows = {(c["arch"], c["params"]["BLOCK_M"]): c for c in kernel["configs"]}
    assert len(rows) == 6
    for key in ("params", "num_warps", "num_stages", "shared_bytes", "registers", "spills", "blocks_per_sm",
                "occupancy", "launchable", "reason"):
        assert all(key in c for c in kernel["configs"])
    big120, big90 = rows[("sm_120", 256)], rows[("sm_90", 256)]
    assert big120["shared_bytes"] == 131072 and big120["launchable"] is False and big120["blocks_per_sm"] == 0
    assert big90["shared_bytes"] == 131072 and big90["launchable"] is True and big90["blocks_per_sm"] >= 1
    assert rows[("sm_120", 64)]["launchable"] and rows[("sm_120", 64)]["line"] == 27
    assert kernel["smem_model"]["text"] == "SMEM = 4*BLOCK_M*BLOCK_N"
    assert set(kernel["smem_models"]) == {"sm_120", "sm_90"}
    assert data["exit_code"] == 1
    _untouched(repo)


def test_sm90_alone_passes_the_gate_and_warm_rerun_compiles_nothing(repo, cache):
    proc = run(repo, cache, ".", "--arch", "sm_90", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert all(c["launchable"] for k in data["kernels"] for c in k["configs"])
    again = json.loads(run(repo, cache, ".", "--arch", "sm_90", "--format", "json").stdout)
    assert again["compiled"] == 0 and again["cached"] > 0

    def numbers(d):
        return [{k: v for k, v in c.items() if k != "cached"} for k in d["kernels"] for c in k["configs"]]

    assert numbers(again) == numbers(data)


def test_github_annotations_point_at_the_config_line(repo, cache):
    proc = run(repo, cache, ".", "--format", "github")
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    errors = [ln for ln in lines if ln.startswith("::error ")]
    assert len(errors) == 1
    assert errors[0].startswith("::error file=kernels/transpose.py,line=29,title=transpose_kernel%3A config "
                                "cannot launch on sm_120::BLOCK_M=256 BLOCK_N=128 w8 s3: cannot launch: "
                                "shared memory 131,072 B")
    assert any(ln.startswith("::warning file=kernels/generated.py,line=") for ln in lines)


def test_markdown_table(repo, cache):
    proc = run(repo, cache, ".", "--format", "markdown", "--kernel", "transpose_kernel")
    assert proc.returncode == 1
    assert "| config | SMEM (B) | regs | spills | blocks/SM | warps/SM | occupancy | verdict |" in proc.stdout
    assert "| `BLOCK_M=256 BLOCK_N=128 w8 s3` | 131,072 |" in proc.stdout
    assert "scale_kernel" not in proc.stdout  # --kernel selected one kernel


@pytest.mark.parametrize("args, needle", [
    (("--arch", "sm_75"), "unknown target 'sm_75'"),
    (("--kernel", "nope"), "kernel 'nope' not found among the autotuned kernels; found: "
                           "kernels/generated.py::scale_kernel, kernels/transpose.py::transpose_kernel"),
    (("--assume-dtype", "bf17"), "--assume-dtype bf17: not a Triton dtype"),
])
def test_usage_errors_exit_2_with_one_line(repo, cache, args, needle):
    proc = run(repo, cache, ".", *args)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("error: ") and needle in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    _untouched(repo)


MISSING = """\
[tool.autotune-rewrite]
arch = ["sm_120"]

[[tool.autotune-rewrite.kernels]]
kernel = "kernels/transpose.py::transpose_kernel"
spec = "fp32"
types = { M = "i32", N = "i32" }
"""


def test_missing_pointer_types_print_a_stanza_then_assume_dtype_labels(tmp_path, cache):
    repo = _make_repo(tmp_path / "repo", MISSING)
    # --exact: not an abort; the kernel's outcome is needs_spec, naming the parameters, and the
    # assume table to fill in.
    proc = run(repo, cache, ".", "--kernel", TRANSPOSE, "--exact")
    assert proc.returncode == 0 and proc.stdout == ""
    first, *rest = proc.stderr.splitlines()
    assert first == ("warning: needs_spec kernels/transpose.py::transpose_kernel [fp32]: missing launch spec values "
                     "for x_ptr, y_ptr: add them to pyproject.toml")
    stanza = "\n".join(rest)
    assert "[tool.autotune-rewrite.assume]" in stanza and "# x_ptr =    # parameter of transpose_kernel" in stanza
    assert "judged 0 of 1 kernel; not judged: needs_spec kernels/transpose.py::transpose_kernel [fp32]" in stanza
    assert run(repo, cache, ".", "--kernel", TRANSPOSE, "--exact", "--strict").returncode == 1
    _untouched(repo)

    # The same compiles as the fixture's spec (fp32), so this reads the cache.
    proc = run(repo, cache, ".", "--kernel", TRANSPOSE, "--assume-dtype", "fp32", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    (kernel,) = json.loads(proc.stdout)["kernels"]
    assert kernel["assumed"] == ["x_ptr", "y_ptr"] and kernel["types"]["x_ptr"] == "*fp32"
    assert kernel["status"] in ("assumed", "no_launchable")
    assert {a["parameter"] for a in kernel["assumptions"]} >= {"x_ptr", "y_ptr"}
    assert any("assumption" in n for n in kernel["notes"])
    table = run(repo, cache, ".", "--kernel", TRANSPOSE, "--assume-dtype", "fp32")
    assert "spec fp32 (ASSUMED:" in table.stderr and "launches assumed" in table.stderr
    _untouched(repo)


def test_no_cache_neither_reads_nor_writes_the_cache(repo, tmp_path):
    fresh = tmp_path / "never-created"
    proc = run(repo, fresh, ".", "--kernel", TRANSPOSE, "--no-cache", "--format", "json", "-j", "2")
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert data["cached"] == 0 and data["compiled"] > 0
    assert not fresh.exists()


def test_a_single_file_is_checked_from_its_project_root(repo, cache):
    proc = run(repo / "kernels", cache, "transpose.py", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    (kernel,) = json.loads(proc.stdout)["kernels"]
    assert (kernel["path"], kernel["spec"]) == ("kernels/transpose.py", "fp32")  # the pyproject's key
    _untouched(repo)
