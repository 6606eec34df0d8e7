"""v1 through the real CLI on a git repository: refused when several tiles launch and nothing
measured on the target says which is fastest; applied from a bench result saved on the target."""

from __future__ import annotations

import json

from rewrite_e2e import cli, git, make_repo

from autotune_rewrite.timings import bench_results as results
from autotune_rewrite.timings.recommend import Recommendation
from autotune_rewrite.timings.bench_results import BenchResult, Measurement

IDENT = "mm/kernels.py::matmul_kernel"
SMALL = "BLOCK_M=64 BLOCK_N=64 BLOCK_K=32 w4 s2"
LARGE = "BLOCK_M=128 BLOCK_N=128 BLOCK_K=64 w4 s2"
HUGE = "BLOCK_M=128 BLOCK_N=256 BLOCK_K=64 w4 s4"  # cannot launch on sm_120 (SMEM)


def _save_bench(root, capability: str, times: dict[str, dict[int, float | None]]) -> None:
    """What ``bench`` saves after timing on a ``capability`` GPU (written here: no GPU in this test)."""
    batches = (1, 64)
    ms = tuple(Measurement(c, b, t, t, None, None, None if t is not None else "OutOfResources")
               for c, per in times.items() for b, t in per.items())
    result = BenchResult("matmul_kernel", IDENT, "mm.api.matmul", "test GPU", capability, ("sm_120",), "3.6.0", "2.x",
                         1000.0, batches, (8, 48), (), ms, Recommendation(None, "", 0.02, (), ()), "graph_ms",
                         "autotune-rewrite bench . --kernel " + IDENT)
    results.save(result, root / ".git" / "autotune-rewrite" / "bench")


def test_v1_refuses_when_several_tiles_launch(tmp_path, cache):
    root = make_repo(tmp_path, "mm_helper")
    proc = cli("diff", "--variant", "v1", "--check", ".", cwd=root, cache=cache, check_rc=1)
    assert proc.stdout == ""  # nothing is rewritten; --check: the asked-for change cannot be made
    assert (f"{IDENT}: cannot be changed: v1 does not apply: 2 tiles launch on sm_120: 64x64x32, 128x128x64; "
            "v1 would choose among them by occupancy alone, which does not say which is fastest; time them on "
            f"sm_120 hardware, then run diff again: autotune-rewrite bench . --kernel {IDENT} --arch sm_120") in proc.stderr
    as_json = json.loads(cli("diff", "--variant", "v1", "--format", "json", ".", cwd=root, cache=cache, check_rc=0).stdout)
    assert "v1 does not apply" in json.dumps(as_json)


def test_v1_refuses_a_bench_from_another_gpu(tmp_path, cache):
    root = make_repo(tmp_path, "mm_helper")
    _save_bench(root, "sm_90", {SMALL: {1: 1.0, 64: 9.0}, LARGE: {1: 2.0, 64: 3.0}, HUGE: {1: 1.5, 64: 1.0}})
    proc = cli("diff", "--variant", "v1", "--check", ".", cwd=root, cache=cache, check_rc=1)
    assert proc.stdout == ""
    assert "(the saved bench ran on sm_90, not on sm_120)" in proc.stderr


def test_v1_applies_the_fastest_launchable_config_of_a_bench_on_the_target(tmp_path, cache):
    root = make_repo(tmp_path, "mm_helper")
    # SMALL wins at B=1 by a little, LARGE at B=64 by a lot: LARGE is closest at its worst batch.
    _save_bench(root, "sm_120", {SMALL: {1: 1.0, 64: 9.0}, LARGE: {1: 1.2, 64: 3.0}, HUGE: {1: None, 64: None}})
    proc = cli("diff", "--variant", "v1", "--check", ".", cwd=root, cache=cache, check_rc=1)
    added = [line[1:].strip() for line in proc.stdout.splitlines() if line.startswith("+ ")]
    # The helper's loop keeps that one tile, edited where it is written (issue 10, item 3).
    assert added == ["for block_m, block_n, block_k, stages in ((128, 128, 64, 2),):"]
    why = cli("diff", "--variant", "v1", "--format", "json", ".", cwd=root, cache=cache, check_rc=0).stdout
    assert "keep one config, " + LARGE + ": measured on sm_120 (graph_ms" in why
    (tmp_path / "v1.diff").write_text(proc.stdout)
    git(root, "apply", "--check", str(tmp_path / "v1.diff"))
