"""The golden cases under ``golden/``, discovered by folder (as black's ``tests/data/cases``).

A case is ``golden/<case>/input`` (the input tree, or a symlink to it: the bundled example stays
in ``examples/`` because ``make demo`` uses it) plus ``golden/<case>/expected/<variant>.diff`` and
``<variant>.<kernel>.pr.md``. Every folder of ``golden/`` is a case: one without an input or
without expected files fails its tests instead of being skipped.
"""

from __future__ import annotations

import os
from pathlib import Path

from autotune_rewrite.rewrite.variants import VARIANTS

# Another folder only for the test that proves how a broken case folder fails.
GOLDEN = Path(os.environ.get("AUTOTUNE_REWRITE_GOLDEN_DIR") or Path(__file__).resolve().parents[1] / "golden")

__all__ = ["GOLDEN", "VARIANTS", "case_names", "input_tree", "expected_dir"]


def case_names() -> list[str]:
    return sorted(p.name for p in GOLDEN.iterdir() if p.is_dir() and not p.name.startswith("."))


def input_tree(case: str) -> Path:
    tree = GOLDEN / case / "input"
    assert tree.is_dir(), f"{tree}: a golden case needs its input tree (a folder or a symlink to one)"
    return tree


def expected_dir(case: str) -> Path:
    return GOLDEN / case / "expected"
