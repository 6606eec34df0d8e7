"""Per-kernel outcomes end to end through the real CLI, on a temporary git repository.

One good kernel beside one kernel per failure kind: each ends in its own outcome, the good one
is still judged and rewritten, and the exit code follows the one rule (outcomes.Report)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rewrite_e2e import cli, commit_tree, git, state
from repo_env import pythonpath

KERNELS = '''\
import json
import os

import triton
import triton.language as tl

CONFIGS = json.load(open("configs.json")) if os.path.exists("configs.json") else []  # cwd: run time


@triton.autotune(
    configs=[
        triton.Config({"BM": 32, "BN": 32}, num_warps=4),
        triton.Config({"BM": 256, "BN": 128}, num_warps=8),
    ],
    key=["M"],
)
@triton.jit
def good_kernel(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    tile = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    tl.store(y_ptr + rn[:, None] * M + rm[None, :], tl.trans(tile))


@triton.autotune(configs=[triton.Config({"BM": 256, "BN": 128}, num_warps=8)], key=["M"])
@triton.jit
def nolaunch_kernel(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    tile = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    tl.store(y_ptr + rn[:, None] * M + rm[None, :], tl.trans(tile))


@triton.autotune(configs=[triton.Config({"BLOCK": 64}, num_warps=4)], key=["n"])
@triton.jit
def needspec_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.autotune(configs=CONFIGS, key=["n"])
@triton.jit
def unresolved_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs))


@triton.autotune(configs=[triton.Config({"BLOCK": 64}, num_warps=4)], key=["n"])
@triton.jit
def crash_kernel(x_ptr, n, BLOCK: tl.constexpr):
    # Four constraints for two operands: LLVM aborts the compiler process (not a resource error).
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r,r,r,l", [x], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(x_ptr + tl.arange(0, BLOCK), y)


@triton.autotune(configs=[triton.Config({"BLOCK": 48}, num_warps=4), triton.Config({"BLOCK": 64}, num_warps=4)],
                 key=["n"])
@triton.jit
def odd_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs))
'''

PYPROJECT = '''\
[tool.autotune-rewrite]
arch = ["sm_120"]
''' + "".join(f'''
[[tool.autotune-rewrite.kernels]]
kernel = "kern.py::{name}"
types = {types}
''' for name, types in [
    ("good_kernel", '{ x_ptr = "*fp32", y_ptr = "*fp32", M = "i32", N = "i32" }'),
    ("nolaunch_kernel", '{ x_ptr = "*fp32", y_ptr = "*fp32", M = "i32", N = "i32" }'),
    ("crash_kernel", '{ x_ptr = "*i32", n = "i32" }'),
    ("odd_kernel", '{ x_ptr = "*fp32", n = "i32" }'),
])


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("outcomes-cache")


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("outcomes") / "repo"
    root.mkdir()
    (root / "kern.py").write_text(KERNELS)
    (root / "pyproject.toml").write_text(PYPROJECT)
    return commit_tree(root)


def _by_kernel(data: dict) -> dict[str, dict]:
    return {k["kernel"]: k for k in data["kernels"]}


def test_check_gives_every_kernel_its_outcome(repo, cache):
    before = state(repo)
    proc = cli("check", "--exact", ".", "--format", "json", cwd=repo, cache=cache)
    assert proc.returncode == 1, proc.stderr  # good_kernel's 256x128 config cannot launch on sm_120
    data = json.loads(proc.stdout)
    kernels = _by_kernel(data)
    assert {k: v["status"] for k, v in kernels.items()} == {
        "good_kernel": "judged", "nolaunch_kernel": "no_launchable", "needspec_kernel": "needs_spec",
        "unresolved_kernel": "unresolved", "crash_kernel": "compile_crashed", "odd_kernel": "judged",
    }
    assert all(k["assumptions"] == [] for k in kernels.values())
    good = kernels["good_kernel"]
    assert [c["launchable"] for c in good["configs"]] == [True, False]
    assert good["configs"][1]["reason_code"] == "shared_memory" and good["configs"][1]["shared_bytes"] == 131072
    # The human reason and, beside it, the same limit as data.
    # Over the limit, the compile stopped at its shared memory (the staged compile): no registers.
    assert good["configs"][1]["refusal"] == {"kind": "smem_over_optin", "arch": "sm_120", "shared_bytes": 131072,
                                             "static_bytes": 0, "limit": 101376, "registers_compiled": False}
    assert good["configs"][1]["reason"] == ("shared memory 131,072 B > 101,376 B opt-in limit of sm_120, over by "
                                            "29,696 B (registers not compiled: cannot launch)")
    assert good["configs"][0]["refusal"] is None and good["configs"][0]["reason"] is None
    assert kernels["needspec_kernel"]["problem"]["missing"] == ["x_ptr", "n"]
    assert kernels["unresolved_kernel"]["problem"]["reason"] == "configs_unresolved"
    crash = kernels["crash_kernel"]["configs"][0]
    assert crash["launchable"] is False and crash["reason_code"] == "compile_crashed"
    assert crash["compile_error_kind"] == "crashed" and crash["compile_error"].startswith("the compiler process crashed")
    # A compile error in the user's source is a rejection of that config, at the user's file:line.
    odd48, odd64 = kernels["odd_kernel"]["configs"]
    assert odd48["reason_code"] == "compile_rejected" and odd48["compile_error_at"] == "kern.py:61"
    assert odd64["launchable"] is True
    assert data["outcomes"]["judged"] == 3 and data["outcomes"]["kernels"] == 6
    assert state(repo) == before


def test_table_summary_lists_the_unjudged_and_prints_the_stanza(repo, cache):
    proc = cli("check", "--exact", ".", cwd=repo, cache=cache)
    assert proc.returncode == 1
    err = proc.stderr
    assert ("judged 3 of 6 kernels; not judged: needs_spec kern.py::needspec_kernel; unresolved "
            "kern.py::unresolved_kernel; compile_crashed kern.py::crash_kernel (--strict fails the run on these)") in err
    assert "needs_spec kern.py::needspec_kernel: missing launch spec values for x_ptr, n" in err
    assert "# x_ptr =    # parameter of needspec_kernel" in err and "# n =    # parameter of needspec_kernel" in err
    assert "no_launchable kern.py::nolaunch_kernel: no config launches on sm_120" in err
    assert "compile_crashed kern.py::crash_kernel: the compiler crashed on BLOCK=64 w4 s3 for sm_120" in err
    assert "compile error: arange's range must be a power of 2 (kern.py:61)" in err


def test_no_launchable_names_the_targets_left_without_a_config(repo, cache):
    # 131,072 B fits sm_90's 232,448 B but not sm_120's 101,376 B: sm_120 autotunes over nothing,
    # whatever launches on sm_90, and the line says which target is broken and what launches elsewhere.
    proc = cli("check", "--exact", ".", "--arch", "sm_120", "--arch", "sm_90", "--kernel", "nolaunch_kernel",
               cwd=repo, cache=cache)
    assert proc.returncode == 1, proc.stderr
    assert "no_launchable kern.py::nolaunch_kernel: no config launches on sm_120 (sm_90: 1 of 1 launch);" in proc.stderr
    assert "no config launches on sm_120, sm_90" not in proc.stderr


def test_unjudged_kernels_do_not_fail_the_gate_unless_strict(repo, cache):
    # On sm_90 every judged config launches: exit 0, but the summary names the kernels not judged.
    proc = cli("check", "--exact", ".", "--arch", "sm_90", "--kernel", "good_kernel", cwd=repo, cache=cache)
    assert proc.returncode == 0, proc.stderr
    assert "judged 1 of 1 kernel" in proc.stderr
    proc = cli("check", "--exact", ".", "--arch", "sm_90", "--kernel", "needspec_kernel", cwd=repo, cache=cache)
    assert proc.returncode == 0 and "judged 0 of 1 kernel; not judged: needs_spec" in proc.stderr
    strict = cli("check", "--exact", ".", "--arch", "sm_90", "--kernel", "needspec_kernel", "--strict", cwd=repo, cache=cache)
    assert strict.returncode == 1 and "(--strict fails" not in strict.stderr


def test_diff_rewrites_the_good_kernel_and_reports_the_rest(repo, cache):
    before = state(repo)
    proc = cli("diff", "--exact", "--variant", "prune", ".", cwd=repo, cache=cache)
    assert proc.returncode == 0, proc.stderr  # plain diff shows; --check gates
    assert "-        triton.Config({\"BM\": 256, \"BN\": 128}, num_warps=8)," in proc.stdout
    assert "nolaunch_kernel" not in proc.stdout
    subprocess.run(["git", "apply", "--check", "-"], input=proc.stdout, text=True, cwd=repo, check=True)
    assert "judged 3 of 6 kernels" in proc.stderr
    gate = cli("diff", "--exact", "--variant", "prune", "--check", "--format", "json", ".", cwd=repo, cache=cache)
    assert gate.returncode == 1
    data = json.loads(gate.stdout)
    statuses = {o["kernel"]: o["status"] for o in data["outcomes"]}
    assert statuses["kern.py::crash_kernel"] == "compile_crashed"
    assert statuses["kern.py::nolaunch_kernel"] == "no_launchable"
    (good,) = [k for k in data["kernels"] if k["kernel"] == "kern.py::good_kernel"]
    assert good["rechecked"] and good["dropped"][0]["config"].startswith("BM=256 BN=128")
    assert good["dropped"][0]["reason"] == "cannot_launch" and good["dropped"][0]["why"].startswith("cannot launch: sm_120")
    assert good["dropped"][0]["fact"]["refused"][0]["refusal"]["kind"] == "smem_over_optin"
    assert [f["kind"] for f in good["facts"]] == ["dropped", "kept_launchable"]
    assert good["explanation"][0] == "drop " + good["dropped"][0]["config"] + ": " + good["dropped"][0]["why"]
    evidence = good["configs"][0]["evidence"][0]
    assert evidence["shared_bytes"] > 0 and "smem" not in evidence and evidence["launchable"] is True
    assert state(repo) == before


def test_apply_builds_the_good_kernels_branch(repo, cache):
    before = git(repo, "for-each-ref")
    proc = cli("apply", "--exact", "--variant", "prune", "--group", "kernel", ".", cwd=repo, cache=cache)
    assert proc.returncode == 1, proc.stderr  # nolaunch_kernel cannot be fixed; the others' branches are made
    branches = [ln.split("\t")[0] for ln in proc.stdout.splitlines()]
    assert "autotune-rewrite/sm_120/good_kernel-prune" in branches
    assert not any("crash_kernel" in b or "nolaunch" in b for b in branches)
    assert "judged 3 of 6 kernels" in proc.stderr
    alone = cli("apply", "--exact", "--variant", "prune", "--force", "--kernel", "good_kernel", ".", cwd=repo, cache=cache)
    assert alone.returncode == 0, alone.stderr
    for b in branches:
        git(repo, "branch", "-D", b)
    assert git(repo, "for-each-ref") == before


INJECT = """\
import sys
from autotune_rewrite.spec import launch_spec
real = launch_spec.specialize
def buggy(site, spec, config):
    if site.kernel == "nolaunch_kernel":
        raise ZeroDivisionError("injected bug")
    return real(site, spec, config)
launch_spec.specialize = buggy
from autotune_rewrite.cli import main
sys.argv = ["autotune-rewrite", *sys.argv[1:]]
main()
"""


def test_an_internal_error_is_one_kernels_outcome_and_exits_2(repo, tmp_path):
    # A cache of its own: the shared one holds this kernel's report from the unpatched code.
    cache = tmp_path / "cache"
    env = dict(os.environ, AUTOTUNE_REWRITE_CACHE_DIR=str(cache), NO_COLOR="1", PYTHONPATH=pythonpath())
    proc = subprocess.run([sys.executable, "-c", INJECT, "check", "--exact", ".", "--kernel", "nolaunch_kernel", "--format",
                           "json"], cwd=repo, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2, proc.stderr
    (kernel,) = json.loads(proc.stdout)["kernels"]
    assert kernel["status"] == "internal_error"
    tb = Path(kernel["problem"]["traceback_file"])
    assert tb.parent == cache / "errors" and "ZeroDivisionError: injected bug" in tb.read_text()
    table = subprocess.run([sys.executable, "-c", INJECT, "check", "--exact", "."], cwd=repo, env=env,
                           capture_output=True, text=True, timeout=600)
    assert table.returncode == 2
    line = next(ln for ln in table.stderr.splitlines() if "internal_error kern.py::nolaunch_kernel" in ln)
    assert line.startswith("error: ") and "traceback in " + str(cache / "errors") in line
    assert "judged 2 of 6 kernels" in table.stderr  # the others were still judged
    diff = subprocess.run([sys.executable, "-c", INJECT, "diff", "--exact", "--variant", "prune", "."], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=600)
    assert diff.returncode == 2  # the good kernel's diff still comes out:
    assert '-        triton.Config({"BM": 256, "BN": 128}, num_warps=8),' in diff.stdout


INJECT_SCAN = """\
import sys
from autotune_rewrite.locate import scan
def buggy(*args, **kwargs):
    raise KeyError("injected scan bug")
scan.scan = buggy
from autotune_rewrite.cli import main
sys.argv = ["autotune-rewrite", *sys.argv[1:]]
main()
"""


def test_a_bug_in_a_command_without_kernels_exits_2_with_one_line_and_the_traceback_file(repo, cache):
    env = dict(os.environ, AUTOTUNE_REWRITE_CACHE_DIR=str(cache), NO_COLOR="1", PYTHONPATH=pythonpath())
    proc = subprocess.run([sys.executable, "-c", INJECT_SCAN, "scan", "."], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith("error: internal error (KeyError in autotune-rewrite scan: 'injected scan bug')")
    tb = Path(line.split("traceback in ", 1)[1].split(";", 1)[0])
    assert tb.parent == cache / "errors" and "KeyError: 'injected scan bug'" in tb.read_text()
