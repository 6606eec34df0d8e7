"""Fleet-safe rewrites (issue 10, item 2): `arch` is the fleet the kernel serves.

The fixture is a matmul whose configs were tuned on a 227 KB part (tests/fixtures/fleet/repo):
64x64x32 and 128x128x64 launch everywhere, 128x256x64 s4 launches on sm_90 only (147,456 B on
sm_120, over its 101,376 B opt-in), 256x256x64 s4 launches nowhere. Real cross-compiles, real
git repositories; `check` on the patched tree is the judge.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import textwrap
from pathlib import Path

from rewrite_e2e import cli, commit_tree, git

FIXTURE = Path(__file__).parent / "fixtures" / "fleet" / "repo"
FLEET = ("--arch", "sm_120", "--arch", "sm_90")
SMALL, MID = "BLOCK_M=64 BLOCK_N=64 BLOCK_K=32 w4 s2", "BLOCK_M=128 BLOCK_N=128 BLOCK_K=64 w8 s2"
SM90_ONLY, NOWHERE = "BLOCK_M=128 BLOCK_N=256 BLOCK_K=64 w8 s4", "BLOCK_M=256 BLOCK_N=256 BLOCK_K=64 w8 s4"


def _repo(tmp: Path, edit=None) -> Path:
    root = tmp / "repo"
    shutil.copytree(FIXTURE, root, ignore=shutil.ignore_patterns("__pycache__"))
    if edit is not None:
        path = root / "gemm.py"
        path.write_text(edit(path.read_text()))
    return commit_tree(root)


def _launches(root: Path, cache: Path, fleet=FLEET) -> tuple[int, dict[str, dict[str, bool]]]:
    """check --format json -> (exit code, {arch: {config label: launches}}) over every spec."""
    proc = cli("check", *fleet, "--format", "json", ".", cwd=root, cache=cache)
    seen: dict[str, dict[str, bool]] = {}
    for k in json.loads(proc.stdout)["kernels"]:
        for c in k["configs"]:
            mine = seen.setdefault(c["arch"], {})
            mine[c["label"]] = mine.get(c["label"], False) or c["launchable"]
    return proc.returncode, seen


def _patch(root: Path, cache: Path, *extra, fleet=FLEET) -> subprocess.CompletedProcess:
    proc = cli("diff", "--variant", "prune", *fleet, *extra, ".", cwd=root, cache=cache, check_rc=0)
    subprocess.run(["git", "apply"], input=proc.stdout, text=True, cwd=root, check=True)
    return proc


def test_guard_fixes_sm120_and_leaves_sm90_unchanged(tmp_path, cache):
    root = _repo(tmp_path)
    rc, before = _launches(root, cache)
    assert rc == 1
    assert before["sm_120"] == {SMALL: True, MID: True, SM90_ONLY: False, NOWHERE: False}
    assert before["sm_90"] == {SMALL: True, MID: True, SM90_ONLY: True, NOWHERE: False}

    _patch(root, cache)
    text = (root / "gemm.py").read_text()
    assert "def _prune_gemm_kernel(configs, named_args, **kwargs):" in text
    assert 'prune_configs_by={"early_config_prune": _prune_gemm_kernel}' in text
    assert '({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64}, 8, 4),' in text  # listed for sm_120 only
    assert '"BLOCK_M": 256, "BLOCK_N": 256' not in text  # launches nowhere: removed for every GPU

    rc, after = _launches(root, cache)
    assert rc == 0
    assert after["sm_120"] == {SMALL: True, MID: True}  # fixed: the dead config is pruned there
    # unchanged: every config that launched on sm_90 is still timed there
    assert after["sm_90"] == {k: v for k, v in before["sm_90"].items() if v}

    again = cli("diff", "--variant", "prune", "--check", *FLEET, ".", cwd=root, cache=cache)
    assert again.returncode == 0 and again.stdout == ""  # idempotent


def test_guard_composes_with_an_existing_early_config_prune(tmp_path, cache):
    def edit(text: str) -> str:
        text = text.replace("@triton.autotune(", "def _keep_all(configs, named_args, **kwargs):\n"
                            "    return configs\n\n\n@triton.autotune(", 1)
        return text.replace('key=["M", "N", "K"],',
                            'key=["M", "N", "K"],\n    prune_configs_by={"early_config_prune": _keep_all, "top_k": 2},')

    root = _repo(tmp_path, edit)
    _patch(root, cache)
    text = (root / "gemm.py").read_text()
    assert 'prune_configs_by={"early_config_prune": _prune_gemm_kernel, "top_k": 2},' in text
    assert "    return _keep_all(configs, named_args, **kwargs)\n" in text  # theirs runs on what is left
    rc, after = _launches(root, cache)
    assert rc == 0 and set(after["sm_120"]) == {SMALL, MID} and set(after["sm_90"]) == {SMALL, MID, SM90_ONLY}


def test_a_config_one_spec_launches_is_never_dropped_for_another(tmp_path, cache):
    """fp8 halves the tiles' SMEM: 128x256x64 s4 launches for fp8 on sm_120, not for fp16."""
    root = _repo(tmp_path)
    with open(root / "pyproject.toml", "a") as fh:
        fh.write('\n[[tool.autotune-rewrite.kernels]]\nkernel = "gemm.py::gemm_kernel"\nspec = "fp8"\n'
                 'types = { a_ptr = "*fp8e4nv", b_ptr = "*fp8e4nv", c_ptr = "*fp32", M = "i32", N = "i32", K = "i32" }\n'
                 "values = { M = 1024, N = 1024, K = 1024 }\n")
    git(root, "commit", "-qam", "fp8 spec")
    proc = cli("diff", "--variant", "prune", *FLEET, "--format", "json", ".", cwd=root, cache=cache, check_rc=0)
    doc = json.loads(proc.stdout)
    (kernel,) = doc["kernels"]
    labels = [c["config"] for c in kernel["configs"]]
    assert SM90_ONLY in labels  # launches for fp8 on sm_120 and for both specs on sm_90
    kept = {f["config"]["kwargs"]["BLOCK_N"]: f for f in kernel["facts"] if f["kind"] == "kept_for_spec"}
    assert 256 in kept and ["fp8", "sm_120"] in kept[256]["launches"]
    lines = [e["line"] for e in kernel["per_spec"]]
    assert any(line.startswith("sm_120, spec fp16:") for line in lines)
    assert any(line.startswith("sm_120, spec fp8:") for line in lines)


def test_pr_body_states_the_effect_per_target(tmp_path, cache):
    root = _repo(tmp_path, lambda t: "".join(line for line in t.splitlines(True) if '"BLOCK_M": 256' not in line))
    cli("apply", "--variant", "prune", *FLEET, ".", cwd=root, cache=cache, check_rc=0)
    (body,) = (root / ".git" / "autotune-rewrite" / "pr").glob("*.md")
    text = body.read_text()
    assert "### Effect per target" in text
    assert "- sm_90: unchanged, 3 configs" in text
    assert "- sm_120: every config that launches there is kept (2); 1 config removed, it cannot launch there" in text
    assert "pruned on this GPU by the device guard" in text
    branch = git(root, "branch", "--list", "autotune-rewrite/*").strip()
    assert branch.endswith("autotune-rewrite/sm_120+sm_90/gemm_kernel-prune")


def test_a_guard_composed_with_a_pruner_reading_the_launch_is_run_up_to_the_hand_off(tmp_path, cache):
    """The user's pruner reads a launch argument, which no scan knows: it is taken as keeping
    every config (as before), and the guard composed ahead of it is run, so the re-check and a
    later check see sm_120 fixed and sm_90 unchanged."""
    def edit(text: str) -> str:
        text = text.replace("@triton.autotune(", "def _by_size(configs, named_args, **kwargs):\n"
                            '    return [c for c in configs if c.kwargs["BLOCK_M"] <= named_args["M"]]\n\n\n'
                            "@triton.autotune(", 1)
        return text.replace('key=["M", "N", "K"],', 'key=["M", "N", "K"],\n    prune_configs_by={"early_config_prune": _by_size},')

    root = _repo(tmp_path, edit)
    rc, before = _launches(root, cache)
    _patch(root, cache)
    text = (root / "gemm.py").read_text()
    assert 'prune_configs_by={"early_config_prune": _prune_gemm_kernel},' in text
    assert "    return _by_size(configs, named_args, **kwargs)\n" in text  # theirs, on what ours left
    rc, after = _launches(root, cache)
    assert rc == 0 and after["sm_120"] == {SMALL: True, MID: True}
    assert after["sm_90"] == {k: v for k, v in before["sm_90"].items() if v}


# The fixture's four configs written as a product: n=256 makes the sm_90-only tile (r=2) and the
# tile dead everywhere (r=1), r=1 makes the two small ones too, so no loop element can go.
PRODUCT_ITEMS = '''    triton.Config({"BLOCK_M": n // r, "BLOCK_N": n, "BLOCK_K": 32 if n == 64 else 64},
                  num_warps=4 if n == 64 else 8, num_stages=4 if n == 256 else 2)
    for n in [64, 128, 256]
    for r in [1, 2]
    if r == 1 or n == 256
'''
PRODUCT = "    configs=[\n" + textwrap.indent(PRODUCT_ITEMS, "    ") + "    ],\n"


def test_a_product_loses_the_config_dead_everywhere_by_a_condition_and_guards_the_other(tmp_path, cache):
    def edit(text: str) -> str:
        start, end = text.index("    configs=["), text.index("    key=")
        return text[:start] + PRODUCT + text[end:]

    root = _repo(tmp_path, edit)
    rc, before = _launches(root, cache)
    assert before["sm_120"] == {SMALL: True, MID: True, SM90_ONLY: False, NOWHERE: False}
    _patch(root, cache)
    text = (root / "gemm.py").read_text()
    # Dead on every target: dropped by the condition; dead on sm_120 only: kept, guarded there.
    assert "        if r == 1 or n == 256\n        if not (n == 256 and r == 1)\n" in text
    assert '({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64}, 8, 4),' in text
    rc, after = _launches(root, cache)
    assert rc == 0 and after["sm_120"] == {SMALL: True, MID: True}
    assert after["sm_90"] == {k: v for k, v in before["sm_90"].items() if v}


DEVICE_FILTERED = '''import torch


def _keep(c):  # sm_90 times only the 8-warp tiles
    return torch.cuda.get_device_capability()[0] != 9 or c.num_warps == 8


CONFIGS = [
''' + PRODUCT_ITEMS + ''']


'''


def test_a_product_whose_filter_asks_the_device_is_decided_for_both_targets_then_edited_once(tmp_path, cache):
    """sm_90's filter drops the 4-warp tile, so each target takes its own list of the product
    (the shape of Triton's fused-attention tutorial). Both branches are decided first: the tile
    dead on both goes by one condition; the one dead on sm_120 only, which sm_90's branch reads
    and launches, stays in the list and sm_120's guard prunes it."""
    def edit(text: str) -> str:
        start, end = text.index("    configs=["), text.index("    key=")
        head = text[:start].replace("@triton.autotune(", DEVICE_FILTERED + "@triton.autotune(")
        return head + "    configs=list(filter(_keep, CONFIGS)),\n" + text[end:]

    root = _repo(tmp_path, edit)
    rc, before = _launches(root, cache)
    assert rc == 1 and before["sm_120"] == {SMALL: True, MID: True, SM90_ONLY: False, NOWHERE: False}
    assert before["sm_90"] == {MID: True, SM90_ONLY: True, NOWHERE: False}  # its filter drops SMALL
    proc = _patch(root, cache)
    assert "kept in the list for\n+        # gemm.py::gemm_kernel on sm_90\n" in proc.stdout  # the comment, wrapped at 88
    text = (root / "gemm.py").read_text()
    assert "    if r == 1 or n == 256\n    if not (n == 256 and r == 1)\n" in text  # NOWHERE, once
    assert "configs=list(filter(_keep, CONFIGS))," in text  # the user's filter stays as written
    rc, after = _launches(root, cache)
    assert rc == 0 and after["sm_120"] == {SMALL: True, MID: True}
    assert after["sm_90"] == {MID: True, SM90_ONLY: True}


GROWN = (*FLEET, "--arch", "sm_86", "--arch", "sm_89")  # 99 KB opt-in, like sm_120
ROW = '        ({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64}, 8, 4),'


def _added(proc: subprocess.CompletedProcess) -> list[str]:
    """The patch's changed lines (no line is removed when a guard is extended)."""
    lines = [line for line in proc.stdout.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert all(line.startswith("+") for line in lines), lines
    return [line[1:] for line in lines]


def test_a_fleet_that_grows_extends_the_guard_an_earlier_run_wrote(tmp_path, cache):
    root = _repo(tmp_path)
    _patch(root, cache)
    git(root, "commit", "-qam", "guard for sm_120")
    proc = _patch(root, cache, fleet=GROWN)
    # The new targets' entries join the table, in capability order; nothing else changes: no
    # second table, no helper composed over the first, prune_configs_by as it was.
    reason = "        # 147,456 B shared memory > 101,376 B opt-in"
    assert _added(proc) == ["    86: [  # sm_86", reason, ROW, "    ],", "    89: [  # sm_89", reason, ROW, "    ],"]
    text = (root / "gemm.py").read_text()
    assert text.count("_CANNOT_LAUNCH = {") == 1 and text.count("def _prune_gemm_kernel") == 1
    assert 'prune_configs_by={"early_config_prune": _prune_gemm_kernel},' in text
    rc, after = _launches(root, cache, GROWN)
    assert rc == 0
    assert after["sm_86"] == after["sm_89"] == after["sm_120"] == {SMALL: True, MID: True}
    assert after["sm_90"] == {SMALL: True, MID: True, SM90_ONLY: True}
    again = cli("diff", "--variant", "prune", "--check", *GROWN, ".", cwd=root, cache=cache)
    assert again.returncode == 0 and again.stdout == ""

