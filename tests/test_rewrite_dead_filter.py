"""Dead configs of a product-built list dropped by a condition in the comprehension (issue 21, item 1).

Each case is a git repository in tmp_path holding the projection kernel (``BLOCK_D=256`` cannot
launch on sm_120 at any stage count, ``BLOCK_D=128`` only at ``num_stages=2``) whose configs are a
comprehension over block sizes and stage counts, so the dead ``BLOCK_D=128 s4`` shares each of
its loop values with a launchable config and no element can go. ``diff --variant prune`` really
compiles (the configs of the in-place tests: cached) and re-checks the patched tree; the patch
goes through ``git apply --check`` and the formatters, as the other rewrite tests do.
"""

from __future__ import annotations

import subprocess

import pytest
from projection_kernel import PROJECTION_SETTINGS
from projection_repo import diff, formatted, kernel, patched, repo

from autotune_rewrite.output.explain_rewrite import fact, rewrite_note, why
from autotune_rewrite.rewrite.facts import FilterNote, Keeper
from autotune_rewrite.unified_diff import unified_diff

CONDITION = "if not (bd == 128 and s == 4)"

HELPER = '''import triton


def proj_configs():
    return [
        triton.Config({"BLOCK_D": bd}, num_warps=4, num_stages=s)
        for bd in [64, 128]
        for s in [2, 4]
    ]
'''

USES_HELPER = kernel('@triton.autotune(configs=proj_configs(), key=["D"])', imports="from cfg import proj_configs\n")


@pytest.fixture(autouse=True)
def _formatters():
    for tool in ("black", "ruff"):
        pytest.importorskip(tool, reason=f"{tool} is in the test extra")


def _applies(root, run) -> None:
    """The run's changes as the diff command prints them are what ``git apply`` accepts."""
    patch = "".join(unified_diff(c.path, c.before, c.after) for c in run.changes)
    subprocess.run(["git", "apply", "--check"], input=patch, text=True, cwd=root, check=True)


def test_a_product_loses_exactly_its_dead_combination(tmp_path, cache):
    root = repo(tmp_path, {"cfg.py": HELPER, "proj.py": USES_HELPER})
    run, changed = diff(root, cache)
    assert not run.failed, [why(f) for _, f in run.failed]
    # One group naming what goes is shorter than the kept form (bd == 64 or s == 2).
    assert changed["cfg.py"].after == HELPER.replace("for s in [2, 4]\n", f"for s in [2, 4]\n        {CONDITION}\n")
    [kernel_run] = run.kernels
    assert [c.label() for c in kernel_run.recheck[0].site.configs] == [
        "BLOCK_D=64 w4 s2", "BLOCK_D=64 w4 s4", "BLOCK_D=128 w4 s2"]
    [note] = [n for n in run.notes if isinstance(n, FilterNote)]
    assert (note.path, note.line, note.kept, note.free, note.negated) == ("cfg.py", 8, 3, 0, True)
    words = rewrite_note(note)
    assert words.startswith("cfg.py:8: added `if not (bd == 128 and s == 4)` to the innermost `for` (written as "
                            "the combinations that go, being shorter than the ones that stay): it drops the 1 config "
                            "that cannot launch (BLOCK_D=128 w4 s4) and keeps the other 3")
    assert "removing `128` at cfg.py:7" in words  # why no element could go instead
    _applies(root, run)
    assert formatted(patched(tmp_path, root, run) / "cfg.py") == {"black": True, "ruff": True}


def product_site(blocks: str = "[64, 128]", stages: str = "[2, 4]", filter_line: str = "") -> str:
    """The projection kernel's decorator over a comprehension written one clause per line."""
    clauses = [f"for bd in {blocks}", f"for s in {stages}", *([filter_line] if filter_line else [])]
    body = "".join(f"        {c}\n" for c in clauses)
    return ('@triton.autotune(\n    configs=[\n        triton.Config({"BLOCK_D": bd}, num_warps=4, num_stages=s)\n'
            f'{body}    ],\n    key=["D"],\n)')


def pruned(tmp_path, cache, src: str):
    """``diff`` of a repository holding ``proj.py`` = ``src``, no kernel failed: (root, the run,
    proj.py's patched text)."""
    root = repo(tmp_path, {"proj.py": src})
    run, changed = diff(root, cache)
    assert not run.failed, [why(f) for _, f in run.failed]
    return root, run, changed["proj.py"].after


def gets_condition_after(tmp_path, cache, src: str, line: str) -> str:
    """``diff`` adds ``CONDITION`` on a line of its own after ``line``, and the patch applies: the
    patched text."""
    root, run, after = pruned(tmp_path, cache, src)
    assert after == src.replace(f"{line}\n", f"{line}\n        {CONDITION}\n")
    _applies(root, run)
    return after


BACKSLASHED = '''
CONFIGS = [
    triton.Config({"BLOCK_D": bd}, num_warps=4, num_stages=s) \\
    for bd in [64, 128]\\
    for s in [2, 4]\\
]'''


def test_clauses_ended_by_backslashes_get_a_new_clause_in_the_same_style(tmp_path, cache):
    # Each clause line ends with a backslash (as Triton's tutorials write their configs): the
    # added clause does too, and the old backslash ends it, so every line keeps the file's style.
    src = kernel('@triton.autotune(configs=CONFIGS, key=["D"])', above=BACKSLASHED)
    root, run, after = pruned(tmp_path, cache, src)
    assert after == src.replace(
        "    for s in [2, 4]\\\n]", "    for s in [2, 4]\\\n    if not (bd == 128 and s == 4)\\\n]")
    _applies(root, run)


LOOSE = product_site(filter_line="if bd < 256 or s < 2")


def test_a_comprehension_written_one_clause_per_line_gets_its_own_if_line(tmp_path, cache):
    src = kernel(LOOSE)
    root = repo(tmp_path, {"proj.py": src})
    run, changed = diff(root, cache)
    # The user's filter stays byte for byte; the diff is one added clause (two ifs are an and).
    assert changed["proj.py"].after == src.replace("if bd < 256 or s < 2\n", f"if bd < 256 or s < 2\n        {CONDITION}\n")
    assert rewrite_note(run.notes[0]).startswith("proj.py:9: added `if not (bd == 128 and s == 4)`")
    assert formatted(patched(tmp_path, root, run) / "proj.py") == {"black": True, "ruff": True}


ONE_LINE = "\nC = [triton.Config({'BLOCK_D': b}, num_stages=s) for b in [64, 128] for s in [2, 4] if b < 256 or s < 2]"


def test_a_one_line_comprehension_has_its_or_filter_parenthesised_and_extended(tmp_path, cache):
    src = kernel('@triton.autotune(configs=C, key=["D"])', above=ONE_LINE)
    _, run, after = pruned(tmp_path, cache, src)
    assert after == src.replace(
        "if b < 256 or s < 2]", "if (b < 256 or s < 2) and not (b == 128 and s == 4)]")
    assert "extended the `if` of the innermost `for`" in rewrite_note(run.notes[0])


HIP = '''
import torch


def is_hip():
    return torch.version.hip is not None'''

HIP_SITE = product_site(stages="([1] if is_hip() else [2, 4])")


def test_the_hip_branch_stays_as_written_and_is_never_named(tmp_path, cache):
    # sm_120 takes [2, 4]: the rows are its rows, so no term names the HIP branch's 1, whose
    # text stays as written (the replaced line keeps it).
    after = gets_condition_after(tmp_path, cache, kernel(HIP_SITE, above=HIP), "for s in ([1] if is_hip() else [2, 4])")
    assert "([1] if is_hip() else [2, 4])" in after


OTHER = kernel('@triton.autotune(configs=proj_configs(), key=["B"])', imports="from cfg import proj_configs\n")


def _other_spec(root, x_type: str):
    """other.py's kernel judged with its own spec (``x_type`` operands), committed to the fixture."""
    table = (PROJECTION_SETTINGS.split("\n\n", 1)[1].replace("KERNEL", "proj_kernel").replace("proj.py", "other.py")
             .replace('"*fp16"', f'"{x_type}"'))
    with open(root / "pyproject.toml", "a") as fh:
        fh.write("\n" + table)
    subprocess.run(["git", "commit", "-qam", "other's spec"], cwd=root, check=True)


def test_a_list_a_kernel_outside_the_run_reads_stays_and_this_kernel_guards_its_dead_config(tmp_path, cache):
    # Decided first: other.py's kernel is not rewritten here (--kernel), so it keeps every config it
    # reads; the list stays as written and proj_kernel prunes its dead config for itself.
    root = repo(tmp_path, {"cfg.py": HELPER, "proj.py": USES_HELPER, "other.py": OTHER})
    run, changed = diff(root, cache, kernel="proj.py::proj_kernel")
    assert not run.failed, [why(f) for _, f in run.failed]
    assert set(changed) == {"proj.py"}  # cfg.py, which both read, is untouched
    after = changed["proj.py"].after
    assert '({"BLOCK_D": 128}, 4, 4),' in after and '"early_config_prune": _prune_proj_kernel' in after
    assert "kept in the list for other.py::proj_kernel" in after  # the guard's own comment says why
    [kernel_run] = run.kernels
    [guarded] = kernel_run.decision.guarded
    assert guarded.kept_for == Keeper("other.py::proj_kernel", decided=False)  # not rewritten in this run
    assert fact(guarded).startswith("keep BLOCK_D=128 w4 s4 in the list for other.py::proj_kernel, which this run "
                                    "does not rewrite; prune it for this kernel on sm_120")
    assert [c.label() for c in kernel_run.recheck[0].site.configs] == [
        "BLOCK_D=64 w4 s2", "BLOCK_D=64 w4 s4", "BLOCK_D=128 w4 s2"]  # what sm_120's autotuner times now
    _applies(root, run)


def test_a_config_dead_for_every_kernel_reading_the_list_goes_once(tmp_path, cache):
    root = repo(tmp_path, {"cfg.py": HELPER, "proj.py": USES_HELPER, "other.py": OTHER})
    _other_spec(root, "*fp16")  # the same kernel, the same spec: the same config is dead for both
    run, changed = diff(root, cache)
    assert not run.failed, [why(f) for _, f in run.failed]
    assert set(changed) == {"cfg.py"}
    assert changed["cfg.py"].after == HELPER.replace("for s in [2, 4]\n", f"for s in [2, 4]\n        {CONDITION}\n")
    assert sorted(k.site.ident for k in run.kernels) == ["other.py::proj_kernel", "proj.py::proj_kernel"]
    assert not any(k.decision.guarded for k in run.kernels)
    _applies(root, run)


def test_a_config_one_reader_launches_stays_in_the_list_and_the_other_guards_it(tmp_path, cache):
    root = repo(tmp_path, {"cfg.py": HELPER, "proj.py": USES_HELPER, "other.py": OTHER})
    _other_spec(root, "*fp8e4nv")  # one-byte operands: half the tiles' shared memory, so 128 s4 launches
    run, changed = diff(root, cache)
    assert not run.failed, [why(f) for _, f in run.failed]
    assert set(changed) == {"proj.py"}
    by = {k.site.ident: k.decision for k in run.kernels}
    assert [g.kept_for for g in by["proj.py::proj_kernel"].guarded] == [Keeper("other.py::proj_kernel", decided=True)]
    other = by["other.py::proj_kernel"]  # nothing to change for it: every config it reads launches
    assert not other.dropped and not other.guarded
    _applies(root, run)


FILTERED = '''

def _keep(c):
    return not (c.kwargs["BLOCK_D"] == 256 and c.num_stages == 2)


CONFIGS = [
    triton.Config({"BLOCK_D": bd}, num_warps=4, num_stages=s)
    for bd in [64, 128, 256]
    for s in [2, 4]
]'''


def test_rows_a_later_filter_drops_may_go_either_way(tmp_path, cache):
    src = kernel('@triton.autotune(configs=list(filter(_keep, CONFIGS)), key=["D"])', above=FILTERED)
    root, run, after = pruned(tmp_path, cache, src)
    # Dead: 128 s4, 256 s4 (256 s2 never reaches the autotuner). No element makes dead configs only.
    assert after == src.replace(
        "for s in [2, 4]\n]", "for s in [2, 4]\n    if not (bd >= 128 and s == 4)\n]")
    [note] = run.notes
    assert (note.kept, note.free) == (3, 1)
    assert "1 combination the list's later filter or early_config_prune drops anyway may go either way" in \
        rewrite_note(note)
    assert formatted(patched(tmp_path, root, run) / "proj.py") == {"black": True, "ruff": True}


LONG_NAMES = '''import triton


def proj_configs():
    return [
        triton.Config(
            {"BLOCK_D": projection_block_size},
            num_warps=4,
            num_stages=pipeline_stage_count,
        )
        for projection_block_size in [64, 128, 256]
        for pipeline_stage_count in [2, 4]
    ]
'''


def test_a_condition_past_the_line_length_is_split_where_the_formatters_split_it(tmp_path, cache):
    root = repo(tmp_path, {"cfg.py": LONG_NAMES, "proj.py": USES_HELPER}, line_length=88)
    assert formatted(root / "cfg.py") == {"black": True, "ruff": True}
    run, changed = diff(root, cache)
    assert not run.failed, [why(f) for _, f in run.failed]
    # Dead: 128 s4 and 256 at both counts; the kept form ties with the dropped one and is written.
    assert changed["cfg.py"].after == LONG_NAMES.replace("in [2, 4]\n", (
        "in [2, 4]\n"
        "        if (\n"
        "            projection_block_size == 64\n"
        "            or (projection_block_size <= 128 and pipeline_stage_count == 2)\n"
        "        )\n"))
    assert "(it says which combinations stay)" in rewrite_note(run.notes[0])
    assert formatted(patched(tmp_path, root, run) / "cfg.py") == {"black": True, "ruff": True}


NAMED_LOOPS = '''
BLOCKS = [64, 128]
STAGES = [2, 4]'''

NAMED_SITE = product_site(blocks="BLOCKS", stages="STAGES")


def test_loops_over_module_level_lists_get_the_condition_and_the_lists_stay(tmp_path, cache):
    gets_condition_after(tmp_path, cache, kernel(NAMED_SITE, above=NAMED_LOOPS), "for s in STAGES")
