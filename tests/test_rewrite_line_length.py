"""The lines the rewrite emits follow the repository's own formatter line length (issue 21, item 4).

Each case is a git repository in tmp_path whose ``pyproject.toml`` sets black's and ruff's
``line-length`` (79 or 120) and whose edited file is written as black formats it at that width
(``black`` itself writes it, and ``ruff format --check`` agrees). ``diff --variant prune`` really
compiles and re-checks; the patched file must still pass both formatters, and every line the
rewrite added must fit the width. At a fixed 88 columns each case fails: a condition or a guard
row split that the formatters join again at 120, or lines past 79.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from projection_repo import diff, formatted, kernel, patched, repo
from rewrite_e2e import commit_tree

from autotune_rewrite.output.explain_rewrite import why

FLEET = Path(__file__).parent / "fixtures" / "fleet" / "repo"
ARCHS = ["sm_120", "sm_90"]
USES_HELPER = kernel('@triton.autotune(configs=proj_configs(), key=["D"])', imports="from cfg import proj_configs\n")


@pytest.fixture(autouse=True)
def _formatters():
    for tool in ("black", "ruff"):
        pytest.importorskip(tool, reason=f"{tool} is in the test extra")


def black(text: str, width: int) -> str:
    """``text`` as black formats it at ``width``."""
    proc = subprocess.run([sys.executable, "-m", "black", "-q", "-l", str(width), "-"], input=text, text=True,
                          capture_output=True, check=True)
    return proc.stdout


def added_lines(before: str, after: str) -> list[str]:
    have = set(before.splitlines())
    return [line for line in after.splitlines() if line not in have]


def helper(block: str, stages: str) -> str:
    """``proj_configs()``: a product over block sizes (256 cannot launch on sm_120) and stage counts."""
    return black(f'''import triton


def proj_configs():
    return [
        triton.Config({{"BLOCK_D": {block}}}, num_warps=4, num_stages={stages})
        for {block} in [64, 128, 256]
        for {stages} in [2, 4]
    ]
''', WIDTH_OF[block])


WIDTH_OF = {"projection_block_size": 120, "projection_block": 79}


@pytest.mark.parametrize(("block", "stages", "condition"), [
    # 11 + 88 columns: split at 88, one line at 120 (black and ruff would join the split form)
    ("projection_block_size", "pipeline_stage_count",
     "        if projection_block_size == 64 or (projection_block_size <= 128 and pipeline_stage_count == 2)\n"),
    # 11 + 72 columns: one line at 88, split at 79
    ("projection_block", "stage_count",
     "        if (\n            projection_block == 64\n            or (projection_block <= 128 and stage_count == 2)\n"
     "        )\n"),
])
def test_a_comprehensions_condition_fits_the_repositorys_line_length(tmp_path, cache, block, stages, condition):
    width = WIDTH_OF[block]
    src = helper(block, stages)
    root = repo(tmp_path, {"cfg.py": src, "proj.py": USES_HELPER}, line_length=width)
    assert formatted(root / "cfg.py") == {"black": True, "ruff": True}
    run, changed = diff(root, cache)
    assert not run.failed, [why(f) for _, f in run.failed]
    after = changed["cfg.py"].after
    assert after == src.replace(f"in [2, 4]\n", f"in [2, 4]\n{condition}")
    assert all(len(line) <= width for line in added_lines(src, after))
    assert formatted(patched(tmp_path, root, run) / "cfg.py") == {"black": True, "ruff": True}


def fleet_repo(tmp_path: Path, width: int, rename: dict[str, str]) -> Path:
    """The fleet fixture (a GEMM whose 128x256x64 s4 tile launches on sm_90, not sm_120) with
    ``rename``'s meta-parameter names, formatted by black at ``width``, which both formatters set."""
    root = tmp_path / "repo"
    shutil.copytree(FLEET, root, ignore=shutil.ignore_patterns("__pycache__"))
    text = (root / "gemm.py").read_text()
    for old, new in rename.items():
        text = text.replace(old, new)
    (root / "gemm.py").write_text(black(text, width))
    settings = (root / "pyproject.toml").read_text()
    formatters = f"[tool.black]\nline-length = {width}\n\n[tool.ruff]\nline-length = {width}\n\n"
    (root / "pyproject.toml").write_text(formatters + settings)
    assert formatted(root / "gemm.py") == {"black": True, "ruff": True}
    return commit_tree(root)


def guard_run(tmp_path, cache, width: int, rename: dict[str, str]) -> tuple[str, str]:
    root = fleet_repo(tmp_path, width, rename)
    run, changed = diff(root, cache, archs=ARCHS)
    assert not run.failed, [why(f) for _, f in run.failed]
    assert [g.archs for k in run.kernels for g in k.decision.guarded] == [("sm_120",)]
    before, after = changed["gemm.py"].before, changed["gemm.py"].after
    assert formatted(patched(tmp_path, root, run) / "gemm.py") == {"black": True, "ruff": True}
    new = added_lines(before, after)
    assert new and all(len(line) <= width for line in new), [line for line in new if len(line) > width]
    return before, after


def test_the_device_guard_is_written_within_79_columns(tmp_path, cache):
    _, after = guard_run(tmp_path, cache, 79, {})
    # 84 columns on one line: the comprehension goes on a line of its own, as black writes it
    keep = "c for c in configs if (c.kwargs, c.num_warps, c.num_stages) not in dead"
    assert f"    return [\n        {keep}\n    ]\n" in after
    assert "# Configs that cannot launch on some of the GPUs this kernel serves, by the\n# compute" in after


LONG_NAMES = {"BLOCK_M": "TILE_ROWS_PER_PROGRAM", "BLOCK_N": "TILE_COLS_PER_PROGRAM", "BLOCK_K": "TILE_DEPTH_PER_STEP"}


def test_a_guard_row_that_fits_120_columns_stays_on_one_line(tmp_path, cache):
    _, after = guard_run(tmp_path, cache, 120, LONG_NAMES)
    row = '        ({"TILE_ROWS_PER_PROGRAM": 128, "TILE_COLS_PER_PROGRAM": 256, "TILE_DEPTH_PER_STEP": 64}, 8, 4),\n'
    assert 88 < len(row) - 1 <= 120 and row in after
