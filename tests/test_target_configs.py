"""Configs resolved per target (issue 10, item 1): device, backend and environment queries are
answered as each target would answer them, never as the union of both branches.

The fixture repo (tests/fixtures/targets/repo) holds a list chosen by a shared-memory tier
helper over ``get_device_properties(...)["max_shared_mem"]``, a helper returning a CUDA or a HIP
list by ``is_hip()``, a comprehension whose ``num_stages`` reads ``torch.version.hip``, a block
read with ``os.environ.get`` and a branch on a device query the evaluator does not know.
Everything runs through the real CLI; ``check`` really compiles for sm_90 and sm_120.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from rewrite_e2e import cli as run_cli, commit_tree

from autotune_rewrite.evaluate import DEFAULT_ANSWERS, Evaluator, outcome
from autotune_rewrite.locate.parsed import ParsedModule
from autotune_rewrite.targets import resolve_target

FIXTURE = Path(__file__).parent / "fixtures" / "targets" / "repo"
TWO = ("--arch", "sm_90", "--arch", "sm_120")



@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    dst = tmp_path_factory.mktemp("targets") / "repo"
    shutil.copytree(FIXTURE, dst)
    return commit_tree(dst)


def cli(cwd: Path, cache: Path, *args: str) -> subprocess.CompletedProcess:
    return run_cli(*args, cwd=cwd, cache=cache)


def sites(repo: Path, cache: Path, *args: str) -> dict:
    proc = cli(repo, cache, "scan", ".", "--format", "json", *args)
    assert proc.returncode == 0, proc.stderr
    return {s["kernel"]: s for s in json.loads(proc.stdout)["sites"]}


def groups(site: dict) -> dict:
    return {tuple(g["targets"]): [c["label"] for c in g["configs"]] if g["configs"] is not None else g["unresolved_reason"]
            for g in site["configs_by_target"]}


def test_scan_shows_the_branch_each_target_takes(repo, cache):
    found = sites(repo, cache, *TWO)
    tier = found["tier_kernel"]
    assert tier["configs"] is None
    assert groups(tier) == {("sm_90",): ["BLOCK_M=256 BLOCK_N=128 w8 s3"], ("sm_120",): ["BLOCK_M=64 BLOCK_N=64 w4 s3"]}
    by_target = {tuple(g["targets"]): g["queries"] for g in tier["configs_by_target"]}
    assert 'props["max_shared_mem"] = 101376' in by_target[("sm_120",)]
    assert '`smem_tier() == "large"` is False' in by_target[("sm_120",)]
    assert "module-level if/else" in tier["configs_by_target"][0]["origin"]
    # The CUDA branch of the helper on both targets; the HIP list is never part of it.
    assert groups(found["backend_kernel"]) == {("sm_90", "sm_120"): ["BLOCK_M=64 BLOCK_N=64 w4 s3",
                                                                     "BLOCK_M=256 BLOCK_N=128 w8 s3"]}
    assert "`is_hip()` is False" in found["backend_kernel"]["configs_by_target"][0]["queries"]
    assert groups(found["stages_kernel"]) == {("sm_90", "sm_120"): ["BLOCK=32 w4 s3", "BLOCK=64 w4 s3"]}


def test_env_is_read_at_its_default_or_from_the_flag(repo, cache):
    default = sites(repo, cache)["env_kernel"]
    assert [c["label"] for c in default["configs"]] == ["BLOCK=64 w4 s3"] and default["configs_by_target"] == []
    given = sites(repo, cache, "--env", "ENV_BLOCK=128")["env_kernel"]
    assert [c["label"] for c in given["configs"]] == ["BLOCK=128 w4 s3"]


def test_an_unknown_device_query_is_unresolved_naming_it(repo, cache):
    site = sites(repo, cache, *TWO)["unknown_query_kernel"]
    assert site["configs"] is None and site["configs_by_target"] == []
    assert "device query `torch.cuda.mem_get_info`" in site["unresolved_reason"]


def test_check_judges_each_target_on_its_own_configs(repo, cache):
    proc = cli(repo, cache, "check", ".", *TWO, "--kernel", "tier_kernel", "--format", "json")
    assert proc.returncode == 0, proc.stderr  # 256x128 (131,072 B) only on sm_90, where it fits
    kernels = json.loads(proc.stdout)["kernels"]
    seen = {tuple(k["for_targets"]): [(c["arch"], c["label"], c["launchable"]) for c in k["configs"]] for k in kernels}
    assert seen == {("sm_90",): [("sm_90", "BLOCK_M=256 BLOCK_N=128 w8 s3", True)],
                    ("sm_120",): [("sm_120", "BLOCK_M=64 BLOCK_N=64 w4 s3", True)]}
    assert any("is False" in q for k in kernels if k["for_targets"] == ["sm_120"] for q in k["configs_chosen_by"])


def test_check_and_diff_on_a_backend_helper(repo, cache):
    proc = cli(repo, cache, "check", ".", *TWO, "--kernel", "backend_kernel")
    assert proc.returncode == 1  # the CUDA list's 256x128 tile cannot launch on sm_120
    assert "configs chosen by: torch.version.hip = None; `is_hip()` is False" in proc.stderr
    diff = cli(repo, cache, "diff", "--variant", "prune", "--check", ".", *TWO, "--kernel", "backend_kernel")
    assert diff.returncode == 1, diff.stderr
    # The CUDA list is the branch both targets take, and its 256x128 tile launches on sm_90: the
    # fleet rule keeps it there and guards it on sm_120 only; the helper's lists (CUDA and HIP)
    # stay byte-identical.
    removed = [ln for ln in diff.stdout.splitlines() if ln.startswith("-") and not ln.startswith("---")]
    assert removed == ['-@triton.autotune(configs=get_configs(), key=["M", "N"])']
    assert "_BACKEND_KERNEL_CANNOT_LAUNCH = {\n+    120: [  # sm_120\n" in diff.stdout
    assert 'prune_configs_by={"early_config_prune": _prune_backend_kernel}' in diff.stdout
    assert "sm_90: unchanged, 2 configs" in diff.stderr


def test_check_with_env(repo, cache):
    proc = cli(repo, cache, "check", ".", "--arch", "sm_120", "--kernel", "env_kernel", "--env", "ENV_BLOCK=32",
               "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert [c["label"] for c in json.loads(proc.stdout)["kernels"][0]["configs"]] == ["BLOCK=32 w4 s3"]


# ---------------------------------------------------------------------- the evaluator itself
SOURCE = '''
import os, torch, triton
def is_hopper():
    return torch.cuda.get_device_capability()[0] == 9
if os.environ.get("FAST", "0") == "1":
    MODE = "fast"
elif is_hopper():
    MODE = "hopper"
else:
    MODE = "other"
SMS = torch.cuda.get_device_properties(0).multi_processor_count
ARCH = triton.runtime.driver.active.get_current_target().arch
OPTIN = torch.cuda.get_device_properties(0).shared_memory_per_block_optin
RUNTIME = [1] if x.shape[0] > 8 else [2]
CHOSEN = MODE
'''


def value(name: str, target: str | None, env: dict | None = None):
    pm = ParsedModule.parse("m.py", SOURCE, "m", False)
    answers = DEFAULT_ANSWERS.for_target(resolve_target(target) if target else None, env or {})
    result = outcome(Evaluator(resolve=lambda fq: None, answers=answers), pm, pm.module_bindings()[name][0])
    return getattr(result, "value", None), getattr(result, "reason", None)


def test_a_name_bound_under_module_level_if_else_takes_the_branch_in_force():
    assert value("CHOSEN", "sm_90") == ("hopper", None)
    assert value("CHOSEN", "sm_120") == ("other", None)
    assert value("CHOSEN", "sm_120", {"FAST": "1"}) == ("fast", None)
    assert "depends on the target" in value("CHOSEN", None)[1]


@pytest.mark.parametrize("target, expected", [("sm_90", 232448), ("sm_120", 101376), ("h200", 232448)])
def test_device_properties_per_target(target, expected):
    assert value("OPTIN", target) == (expected, None)
    assert value("ARCH", target)[0] == resolve_target(target).arch.capability


def test_the_sm_count_needs_a_product():
    assert value("SMS", "h200") == (132, None)
    assert value("SMS", "rtx-pro-6000") == (188, None)
    reason = value("SMS", "sm_120")[1]
    assert "the SM count is not known for sm_120" in reason and "--arch" in reason


def test_a_branch_on_runtime_data_is_unresolved_not_a_union():
    reason = value("RUNTIME", "sm_90")[1]
    assert reason == "the branch on `x.shape[0] > 8` is only known at run time (it reads runtime data)"
