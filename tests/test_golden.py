"""Golden diffs and PR bodies: every variant of every case in golden/, compared byte for byte.

The cases are the folders of golden/ (see golden/README.md and tests/golden_cases.py); each
(case, variant) is one test. Regenerate (only on purpose, then review the diff of golden/):
    AUTOTUNE_REWRITE_REGEN_GOLDEN=1 python -m pytest tests/test_golden.py
The numbers in the PR bodies are real cross-compiles with the Triton version named in them.
"""

from __future__ import annotations

import os
import shutil

import pytest

from autotune_rewrite.resources import triton_version
from autotune_rewrite.output import templating
from autotune_rewrite.rewrite.diff import run_rewrites
from golden_cases import VARIANTS, case_names, expected_dir, input_tree

REGEN = os.environ.get("AUTOTUNE_REWRITE_REGEN_GOLDEN") == "1"
GOLDEN_TRITON = "3.6.0"
HOW = "regenerate with AUTOTUNE_REWRITE_REGEN_GOLDEN=1 and review git diff golden/"


def _rendered(case: str, variant: str, tmp_path, cache) -> dict[str, bytes]:
    """What the pipeline produces for this case and variant: expected file name -> bytes."""
    root = tmp_path / case
    shutil.copytree(input_tree(case), root, ignore=shutil.ignore_patterns("__pycache__"))
    run = run_rewrites(root, variant, workers=2, cache_dir=cache, display_path=".")
    out = {f"{variant}.diff": run.diff.encode("utf-8")}
    for kr in run.kernels:
        if kr.changes:
            body = templating.pr_body(templating.context(kr, run))
            out[f"{variant}.{kr.site.kernel}.pr.md"] = body.encode("utf-8")
    return out


def _regenerate(case: str, variant: str, actual: dict[str, bytes]) -> None:
    folder = expected_dir(case)
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob(f"{variant}.*"):
        if stale.name not in actual:
            stale.unlink()
    for name, data in actual.items():
        (folder / name).write_bytes(data)


@pytest.mark.skipif(triton_version() != GOLDEN_TRITON and not REGEN, reason=f"golden numbers are Triton {GOLDEN_TRITON}'s")
@pytest.mark.parametrize("variant", VARIANTS)
# One xdist worker per case (--dist loadgroup): a case's compiles are then done once, not raced.
@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.xdist_group(c)) for c in case_names()])
def test_golden(case, variant, tmp_path, cache):
    folder = expected_dir(case)
    if not REGEN:
        # Checked before any compile: a case folder without expected files fails, it is not skipped.
        assert (folder / f"{variant}.diff").is_file(), f"{folder / variant}.diff missing; {HOW}"
    actual = _rendered(case, variant, tmp_path, cache)
    if REGEN:
        _regenerate(case, variant, actual)
        return
    expected = {p.name: p.read_bytes() for p in folder.glob(f"{variant}.*")}
    assert sorted(actual) == sorted(expected), f"{folder}: expected files differ from what {variant} writes; {HOW}"
    for name, data in actual.items():
        assert data == expected[name], f"{folder / name} differs; if intended, {HOW}"
