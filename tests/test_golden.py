"""Golden diffs and PR bodies: every variant of every fixture repo, compared byte for byte.

Regenerate (only on purpose, then review the diff of golden/):
    AUTOTUNE_REWRITE_REGEN_GOLDEN=1 python -m pytest tests/test_golden.py
The numbers in the PR bodies are real cross-compiles with the Triton version named in them.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from autotune_rewrite.output import templating
from autotune_rewrite.check.resources import triton_version
from autotune_rewrite.rewrite.diff import run_rewrites
from rewrite_e2e import cache  # noqa: F401 (a fixture: the session's compile cache)

HERE = Path(__file__).parent
REPO = HERE.parent
GOLDEN = REPO / "golden"
FIXTURES = {
    "mm_helper": HERE / "fixtures" / "rewrite" / "mm_helper",
    "proj_comprehension": HERE / "fixtures" / "rewrite" / "proj_comprehension",
    "sm120_mla_decode": REPO / "examples" / "sm120_mla_decode",
}
VARIANTS = ("prune", "v1", "v2", "v3")
REGEN = os.environ.get("AUTOTUNE_REWRITE_REGEN_GOLDEN") == "1"
GOLDEN_TRITON = "3.6.0"


def _check(path: Path, actual: bytes) -> None:
    if REGEN:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(actual)
        return
    assert path.is_file(), f"{path} missing; regenerate with AUTOTUNE_REWRITE_REGEN_GOLDEN=1"
    assert actual == path.read_bytes(), f"{path} differs; if intended, regenerate and review"


@pytest.mark.skipif(triton_version() != GOLDEN_TRITON and not REGEN, reason=f"golden numbers are Triton {GOLDEN_TRITON}'s")
@pytest.mark.parametrize("fixture", sorted(FIXTURES))
def test_golden(fixture, tmp_path, cache):
    src = FIXTURES[fixture]
    if not src.is_dir():
        pytest.skip(f"{src} not present")
    root = tmp_path / fixture
    shutil.copytree(src, root, ignore=shutil.ignore_patterns("__pycache__"))
    for variant in VARIANTS:
        run = run_rewrites(root, variant, workers=1, cache_dir=cache, display_path=".")
        _check(GOLDEN / fixture / f"{variant}.diff", run.diff.encode("utf-8"))
        for kr in run.kernels:
            if kr.changes:
                ctx = templating.context(kr, run)
                body = templating.pr_body(ctx)
                _check(GOLDEN / fixture / f"{variant}.{kr.site.kernel}.pr.md", body.encode("utf-8"))
