"""How test_golden treats the folders of golden/: every folder is a case, and a broken one fails
(it is never skipped), before anything is compiled."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from golden_cases import GOLDEN, VARIANTS, case_names, expected_dir, input_tree

ROOT = Path(__file__).resolve().parents[1]


def test_every_committed_case_has_its_input_and_each_variants_diff():
    assert case_names() == ["fleet_guard", "mm_helper", "proj_comprehension", "sm120_mla_decode"]
    for case in case_names():
        assert any(input_tree(case).rglob("*.py")), case
        assert {p.name for p in expected_dir(case).glob("*.diff")} == {f"{v}.diff" for v in VARIANTS}, case
    # The example stays in examples/ (make demo uses it): the case refers to it, no copy.
    assert (GOLDEN / "sm120_mla_decode" / "input").resolve() == ROOT / "examples" / "sm120_mla_decode"


def test_a_case_without_expected_files_or_without_input_fails(tmp_path):
    golden = tmp_path / "golden"
    (golden / "no_expected" / "input").mkdir(parents=True)
    (golden / "no_expected" / "input" / "k.py").write_text("import triton\n")
    for v in VARIANTS:
        (golden / "no_input" / "expected").mkdir(parents=True, exist_ok=True)
        (golden / "no_input" / "expected" / f"{v}.diff").write_text("")
    env = dict(os.environ, AUTOTUNE_REWRITE_GOLDEN_DIR=str(golden))
    env.pop("AUTOTUNE_REWRITE_REGEN_GOLDEN", None)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                           "tests/test_golden.py"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    tail = proc.stdout.strip().splitlines()[-1]
    assert proc.returncode == 1, proc.stdout[-3000:]
    assert tail.startswith(f"{2 * len(VARIANTS)} failed") and "skipped" not in tail, tail
    assert "no_expected/expected/prune.diff missing; regenerate with AUTOTUNE_REWRITE_REGEN_GOLDEN=1" in proc.stdout
    assert "no_input/input: a golden case needs its input tree" in proc.stdout
