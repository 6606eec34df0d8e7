"""Configs edited where they are written (issue 10, item 3).

Each case is a git repository in tmp_path holding the projection kernel (``BLOCK_D=256`` cannot
launch on sm_120 at any stage count; ``BLOCK_D=128`` only at ``num_stages=2``) with its configs
written somewhere other than the decorator: a helper of another module, a module variable, the
iterable of a comprehension. ``diff --variant prune`` really compiles (cached) and re-checks the
patched tree. Every fixture is written as black and ruff format it, and the patched files must
pass ``black --check`` and ``ruff format --check`` too.
"""

from __future__ import annotations

import pytest
from projection_kernel import projection_def
from projection_repo import (
    HEAD, diff as _diff, formatted as _formatted, kernel as _kernel, patched as _patched, repo as _repo,
)

from autotune_rewrite.output.explain_rewrite import fact, rewrite_note, why as worded


HELPER = '''import triton


def proj_configs():
    return [
        triton.Config({"BLOCK_D": 64}, num_warps=4, num_stages=2),
        triton.Config({"BLOCK_D": 256}, num_warps=4, num_stages=2),
        triton.Config({"BLOCK_D": 64}, num_warps=8, num_stages=2),
    ]
'''

MODULE_VARIABLE = '''
CONFIGS = [
    # tuned on an H100
    triton.Config({"BLOCK_D": 256}, num_warps=4, num_stages=2),
    triton.Config({"BLOCK_D": 64}, num_warps=4, num_stages=2),
]'''

PRODUCT = ("@triton.autotune(\n"
           '    configs=[triton.Config({"BLOCK_D": bd}, num_warps=4, num_stages=s) for bd, s in itertools.product(BLOCKS, [2, 4])],\n'
           '    key=["D"],\n)')

# Dead BLOCK_D=128 s4 shares 128 with a launchable config and 4 with another; nested ``for``
# statements, not a comprehension, so no condition can be added either (``dead_filter``).
ENTANGLED_HELPER = '''import triton


def proj_configs():
    out = []
    for bd in [64, 128]:
        for s in [2, 4]:
            out.append(triton.Config({"BLOCK_D": bd}, num_warps=4, num_stages=s))
    return out
'''

# The same product as a comprehension: the dead combination goes by a condition.
ENTANGLED_COMPREHENSION = '''import itertools

import triton


def proj_configs():
    return [
        triton.Config({"BLOCK_D": bd}, num_warps=4, num_stages=s)
        for bd, s in itertools.product([64, 128], [2, 4])
    ]
'''


@pytest.fixture(autouse=True)
def _formatters():
    for tool in ("black", "ruff"):
        pytest.importorskip(tool, reason=f"{tool} is in the test extra")


def test_a_helpers_list_in_another_module_is_pruned_there(tmp_path, cache):
    proj = _kernel('@triton.autotune(configs=proj_configs(), key=["D"])', imports="from cfg import proj_configs\n")
    root = _repo(tmp_path, {"cfg.py": HELPER, "proj.py": proj})
    assert _formatted(root / "cfg.py") == _formatted(root / "proj.py") == {"black": True, "ruff": True}
    run, changed = _diff(root, cache)
    assert sorted(changed) == ["cfg.py"]  # the decorator and its import are untouched
    assert changed["cfg.py"].after == HELPER.replace('        triton.Config({"BLOCK_D": 256}, num_warps=4, num_stages=2),\n', "")
    assert any("edited where the configs are written (cfg.py:5); the decorator is unchanged" in rewrite_note(n) for n in run.notes)
    assert [k.recheck for k in run.kernels] and not run.failed
    assert _formatted(_patched(tmp_path, root, run) / "cfg.py") == {"black": True, "ruff": True}


def test_a_module_variable_is_pruned_in_place_with_its_comment(tmp_path, cache):
    root = _repo(tmp_path, {"proj.py": _kernel('@triton.autotune(configs=CONFIGS, key=["D"])', above=MODULE_VARIABLE)})
    before = (root / "proj.py").read_text()
    run, changed = _diff(root, cache)
    expected = before.replace('    # tuned on an H100\n    triton.Config({"BLOCK_D": 256}, num_warps=4, num_stages=2),\n', "")
    assert changed["proj.py"].after == expected
    assert '@triton.autotune(configs=CONFIGS, key=["D"])' in expected
    assert _formatted(_patched(tmp_path, root, run) / "proj.py") == _formatted(root / "proj.py") == {"black": True, "ruff": True}


def test_a_comprehensions_iterable_loses_the_dead_element(tmp_path, cache):
    src = _kernel(PRODUCT, above="\nBLOCKS = [64, 256]", imports="import itertools\n\n")
    root = _repo(tmp_path, {"proj.py": src})
    assert _formatted(root / "proj.py") == {"black": True, "ruff": True}
    run, changed = _diff(root, cache)
    # BLOCK_D=256 is dead at both stage counts: removing it from BLOCKS removes exactly those two.
    assert changed["proj.py"].after == src.replace("BLOCKS = [64, 256]", "BLOCKS = [64]")
    assert [c.label() for c in run.kernels[0].recheck[0].site.configs] == ["BLOCK_D=64 w4 s2", "BLOCK_D=64 w4 s4"]
    assert _formatted(_patched(tmp_path, root, run) / "proj.py") == {"black": True, "ruff": True}


def test_a_loop_tuple_of_a_helper_keeps_the_one_element_tuple_comma(tmp_path, cache):
    helper = ("import triton\n\n\ndef proj_configs():\n    out = []\n    for bd in (64, 256):\n"
              '        out.append(triton.Config({"BLOCK_D": bd}, num_warps=4, num_stages=2))\n    return out\n')
    proj = _kernel('@triton.autotune(configs=proj_configs(), key=["D"])', imports="from cfg import proj_configs\n")
    root = _repo(tmp_path, {"cfg.py": helper, "proj.py": proj})
    run, changed = _diff(root, cache)
    assert changed["cfg.py"].after == helper.replace("(64, 256)", "(64,)")
    assert _formatted(_patched(tmp_path, root, run) / "cfg.py") == {"black": True, "ruff": True}


def test_a_dead_config_no_edit_of_its_list_can_drop_is_guarded_instead(tmp_path, cache):
    # Nested ``for`` statements: no element can go and no comprehension takes a condition, so
    # the list stays as written and the dead config is pruned on the target by the guard.
    proj = _kernel('@triton.autotune(configs=proj_configs(), key=["D"])', imports="from cfg import proj_configs\n")
    root = _repo(tmp_path, {"cfg.py": ENTANGLED_HELPER, "proj.py": proj})
    run, changed = _diff(root, cache)
    assert not run.failed and set(changed) == {"proj.py"}
    after = changed["proj.py"].after
    assert '({"BLOCK_D": 128}, 4, 4),' in after and "the list has no edit that drops it alone" in after
    [kernel] = run.kernels
    [guarded] = kernel.decision.guarded
    assert fact(guarded).startswith(
        "keep BLOCK_D=128 w4 s4 in the list and prune it on sm_120 (a device-aware early_config_prune), since config "
        "BLOCK_D=128 w4 s4 cannot be removed alone, every element it is made from also makes a config that launches "
        "(removing `128` at cfg.py:6 also removes BLOCK_D=128 w4 s2; removing `4` at cfg.py:7 also removes "
        "BLOCK_D=64 w4 s4)")
    assert [c.label() for c in kernel.recheck[0].site.configs] == [
        "BLOCK_D=64 w4 s2", "BLOCK_D=64 w4 s4", "BLOCK_D=128 w4 s2"]  # what sm_120's autotuner times now
    assert run.exit_code == 1  # a change is needed (--check)
    assert _formatted(_patched(tmp_path, root, run) / "proj.py") == {"black": True, "ruff": True}


def test_the_inline_fallback_removes_the_helper_and_imports_it_left_unused(tmp_path, cache):
    proj = _kernel('@triton.autotune(configs=proj_configs(), key=["D"])', imports="from cfg import proj_configs\n")
    root = _repo(tmp_path, {"cfg.py": ENTANGLED_HELPER, "proj.py": proj})
    run, changed = _diff(root, cache, inline_configs=True)
    assert not run.failed
    after = changed["proj.py"].after
    assert "from cfg import proj_configs" not in after and after.startswith(HEAD)
    assert 'triton.Config({"BLOCK_D": 128}, num_warps=4, num_stages=2)' in after
    assert 'num_stages=4' in after and '"BLOCK_D": 128}, num_warps=4, num_stages=4' not in after
    assert changed["cfg.py"].after == ""  # the helper and the import only it used
    assert any("no minimal in-place edit" in rewrite_note(n) for n in run.notes)
    # The one-line decorator is exploded as the formatters write a call holding a multi-line list.
    assert '@triton.autotune(\n    configs=[\n        triton.Config({"BLOCK_D": 64}, num_warps=4, num_stages=2),\n' in after
    assert '    ],\n    key=["D"],\n)\n@triton.jit\n' in after
    assert _formatted(_patched(tmp_path, root, run) / "proj.py") == {"black": True, "ruff": True}


def test_the_inline_fallback_keeps_a_helper_someone_else_uses(tmp_path, cache):
    proj = _kernel('@triton.autotune(configs=proj_configs(), key=["D"])', imports="from cfg import proj_configs\n")
    other = "from cfg import proj_configs\n\nALL = proj_configs()\n"
    root = _repo(tmp_path, {"cfg.py": ENTANGLED_HELPER, "proj.py": proj, "other.py": other})
    run, changed = _diff(root, cache, inline_configs=True)
    assert "from cfg import proj_configs" not in changed["proj.py"].after  # unused in proj.py itself
    assert "cfg.py" not in changed  # other.py still calls it


TWO_READERS = (_kernel('@triton.autotune(configs=CONFIGS, key=["D"])', above=MODULE_VARIABLE)
               + "\n\n" + 'proj_twin = triton.autotune(configs=CONFIGS, key=["B"])(triton.jit(proj_kernel.fn))\n')


def test_a_list_a_kernel_outside_the_run_reads_is_not_edited_for_one(tmp_path, cache):
    root = _repo(tmp_path, {"proj.py": TWO_READERS})
    run, changed = _diff(root, cache, kernel="proj.py::proj_kernel")
    assert not run.failed, [worded(f) for _, f in run.failed]
    after = changed["proj.py"].after
    assert after.count('triton.Config({"BLOCK_D": 256}, num_warps=4, num_stages=2)') == 1  # the list keeps it
    assert "kept in the list for proj.py::fn" in after  # proj_kernel's own guard prunes it


TWO_KERNELS = (_kernel('@triton.autotune(configs=CONFIGS, key=["D"])', above=MODULE_VARIABLE) + "\n\n"
               + '@triton.autotune(configs=CONFIGS, key=["B"])\n@triton.jit\n' + projection_def("proj_kernel_b"))


def test_a_module_list_two_decorators_read_loses_what_both_drop_once(tmp_path, cache):
    root = _repo(tmp_path, {"proj.py": TWO_KERNELS})
    run, changed = _diff(root, cache)
    assert not run.failed, [worded(f) for _, f in run.failed]
    # Both reads of CONFIGS are the two kernels' own autotune calls, decided first: the dead
    # config goes from the list once, and neither kernel needs a guard.
    assert changed["proj.py"].after == TWO_KERNELS.replace(
        '    # tuned on an H100\n    triton.Config({"BLOCK_D": 256}, num_warps=4, num_stages=2),\n', "")
    assert sorted(k.site.kernel for k in run.kernels) == ["proj_kernel", "proj_kernel_b"]
    assert not any(k.decision.guarded for k in run.kernels)


TIERS = '''
import torch


def smem_tier():
    props = triton.runtime.driver.active.utils.get_device_properties(torch.cuda.current_device())
    return "large" if props["max_shared_mem"] >= 200 * 1024 else "small"


if smem_tier() == "large":
    CONFIGS = [
        triton.Config({"BLOCK_D": 256}, num_warps=4, num_stages=2),
        triton.Config({"BLOCK_D": 64}, num_warps=4, num_stages=2),
    ]
else:
    CONFIGS = [
        triton.Config({"BLOCK_D": 64}, num_warps=4, num_stages=2),
        triton.Config({"BLOCK_D": 256}, num_warps=4, num_stages=2),
    ]'''


def test_only_the_branch_a_target_takes_is_edited(tmp_path, cache):
    src = _kernel('@triton.autotune(configs=CONFIGS, key=["D"])', above=TIERS)
    root = _repo(tmp_path, {"proj.py": src})
    run, changed = _diff(root, cache, archs=["sm_90", "sm_120"])
    assert not run.failed, run.failed
    # BLOCK_D=256 (139,264 B) launches on sm_90 and stays in the list sm_90 takes; sm_120's loses it.
    small = src.index("else:")
    expected = src[:small] + src[small:].replace('        triton.Config({"BLOCK_D": 256}, num_warps=4, num_stages=2),\n', "", 1)
    assert changed["proj.py"].after == expected
    [kernel] = [k for k in run.kernels if k.changes]  # sm_90's branch is one kernel view too, unchanged
    assert kernel.site.view_targets == ("sm_120",) and kernel.recheck
    assert _formatted(_patched(tmp_path, root, run) / "proj.py") == {"black": True, "ruff": True}


def test_a_variant_adding_configs_appends_to_the_helpers_written_list(tmp_path):
    """No compile: the scan's site and a v2-like plan (keep 0 and 2, add tile 0 at 8 warps, 3 stages)."""
    from rewrite_assert import plan, run_rewrite

    from autotune_rewrite.locate.scan import scan

    proj = _kernel('@triton.autotune(configs=proj_configs(), key=["D"])', imports="from cfg import proj_configs\n")
    root = _repo(tmp_path, {"cfg.py": HELPER, "proj.py": proj})
    [site] = scan(root, jobs=1).sites
    files = {"cfg.py": HELPER, "proj.py": proj}
    result = run_rewrite(files, site, "v2", plan(site, [("keep", 0), ("keep", 2), ("new", 0, 8, 3)]))
    assert [c.path for c in result.changes] == ["cfg.py"]
    assert result.changes[0].after == HELPER.replace(
        '        triton.Config({"BLOCK_D": 256}, num_warps=4, num_stages=2),\n', "").replace(
        '        triton.Config({"BLOCK_D": 64}, num_warps=8, num_stages=2),\n',
        '        triton.Config({"BLOCK_D": 64}, num_warps=8, num_stages=2),\n'
        '        triton.Config({"BLOCK_D": 64}, num_warps=8, num_stages=3),\n')


def test_the_cli_says_why_it_guards_and_inlines_only_when_asked(tmp_path, cache):
    from rewrite_e2e import cli

    proj = _kernel('@triton.autotune(configs=proj_configs(), key=["D"])', imports="from cfg import proj_configs\n")
    root = _repo(tmp_path, {"cfg.py": ENTANGLED_HELPER, "proj.py": proj})
    guarded = cli("diff", "--variant", "prune", "--check", ".", cwd=root, cache=cache)
    assert guarded.returncode == 1 and "+++ b/proj.py" in guarded.stdout and "+++ b/cfg.py" not in guarded.stdout
    assert "since config BLOCK_D=128 w4 s4 cannot be removed alone" in guarded.stderr  # why a guard, not an edit
    inlined = cli("diff", "--variant", "prune", "--check", "--inline-configs", ".", cwd=root, cache=cache)
    assert inlined.returncode == 1, inlined.stderr
    assert "+++ b/proj.py" in inlined.stdout and "+++ b/cfg.py" in inlined.stdout
    (root / "pyproject.toml").write_text((root / "pyproject.toml").read_text()
                                         + "\n[tool.autotune-rewrite.variants]\ninline_configs = true\n")
    by_setting = cli("diff", "--variant", "prune", ".", cwd=root, cache=cache)
    assert by_setting.returncode == 0 and by_setting.stdout == inlined.stdout


SHARED_BY_BRANCHES = '''
import torch


def is_hip():
    return torch.version.hip is not None


def proj_configs():
    base = [
        triton.Config({"BLOCK_D": 64}, num_warps=4, num_stages=2),
        triton.Config({"BLOCK_D": 256}, num_warps=4, num_stages=2),
    ]
    if is_hip():
        return base + [triton.Config({"BLOCK_D": 32}, num_warps=4, num_stages=1)]
    return base'''


def test_a_list_the_hip_branch_also_reads_stays_and_cuda_guards_its_dead_config(tmp_path, cache):
    src = _kernel('@triton.autotune(configs=proj_configs(), key=["D"])', above=SHARED_BY_BRANCHES)
    root = _repo(tmp_path, {"proj.py": src})
    run, changed = _diff(root, cache)
    assert not run.failed, [worded(f) for _, f in run.failed]
    after = changed["proj.py"].after
    assert SHARED_BY_BRANCHES in after  # the list and the HIP branch as written
    assert '({"BLOCK_D": 256}, 4, 2),' in after
    [guarded] = [g for k in run.kernels for g in k.decision.guarded]
    assert "the list (proj.py:12) is bound to a name also read elsewhere (`base` read at proj.py:18)" in fact(guarded)


def test_apply_writes_the_comprehension_condition_on_its_branch_and_says_why(tmp_path, cache):
    from rewrite_e2e import cli, git

    proj = _kernel('@triton.autotune(configs=proj_configs(), key=["D"])', imports="from cfg import proj_configs\n")
    root = _repo(tmp_path, {"cfg.py": ENTANGLED_COMPREHENSION, "proj.py": proj})
    head = git(root, "rev-parse", "HEAD").strip()
    proc = cli("apply", "--variant", "prune", ".", cwd=root, cache=cache, check_rc=0)
    branch, body_path = proc.stdout.strip().split("\t")
    assert branch == "autotune-rewrite/sm_120/proj_kernel-prune"
    assert git(root, "diff", "--name-only", head, branch).split() == ["cfg.py"]  # the decorator is unchanged
    assert git(root, "show", f"{branch}:cfg.py") == ENTANGLED_COMPREHENSION.replace(
        "[2, 4])\n", "[2, 4])\n        if not (bd == 128 and s == 4)\n")
    assert (root / "cfg.py").read_text() == ENTANGLED_COMPREHENSION  # the checkout is never written
    text = open(body_path).read()
    assert "cfg.py:9: added `if not (bd == 128 and s == 4)` to the innermost `for`" in text
    assert "it drops the 1 config that cannot launch (BLOCK_D=128 w4 s4) and keeps the other 3" in text
