"""bench's data path on the CPU: JSON save/load, default place, table and JSON output, plot skip,
and the PR body section (only when a result exists)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autotune_rewrite.output import templating
from autotune_rewrite.bench import plot
from autotune_rewrite.timings import bench_results as results
from autotune_rewrite.timings.recommend import recommend
from autotune_rewrite.timings.bench_results import BenchConfig, BenchResult, Measurement
from autotune_rewrite.bench.bench import bucket_of
from autotune_rewrite.errors import UserError
from autotune_rewrite.output import bench as bench_out
from golden_cases import input_tree

W4, W8, BT32 = "BLOCK_T=16 w4 s2", "BLOCK_T=16 w8 s2", "BLOCK_T=32 w4 s2"
BATCHES = (1, 8, 96)
GRAPH = {W4: (0.040, 0.060, 0.600), W8: (0.050, 0.075, 0.500), BT32: (0.045, 0.070, 0.550)}
NBYTES = {1: 2_000_000, 8: 16_000_000, 96: 190_000_000}


def _result(kernel="matmul_kernel") -> BenchResult:
    """A result as ``run_bench`` would build it, from a timing table given as data."""
    measurements = []
    for label, ms in GRAPH.items():
        for b, t in zip(BATCHES, ms):
            measurements.append(Measurement(label, b, t * 1.1, t, NBYTES[b], NBYTES[b] / (t * 1e-3) / 1e9))
    measurements.append(Measurement("BLOCK_T=64 w8 s2", 96, None, None, NBYTES[96], None, "OutOfResources: shared memory"))
    variants = {"prune": (W4,), "v1": (W8,), "v2": (W4, W8), "v3": (W4, W8)}
    times = {k: dict(zip(BATCHES, v)) for k, v in GRAPH.items()}
    rec = recommend(times, variants, BATCHES, bucket_of((8, 48)))
    configs = (
        BenchConfig(W4, True, ("prune", "v2", "v3"), True),
        BenchConfig(BT32, True, (), False),
        BenchConfig(W8, False, ("v1", "v2", "v3"), True),
        BenchConfig("BLOCK_T=64 w8 s2", False, (), True),
    )
    return BenchResult(
        kernel=kernel, ident=f"mm/kernels.py::{kernel}", timed="mm.ops:matmul (whole call, kernel pinned)",
        device="Test GPU", capability="sm_90", targets=("sm_120",), triton_version="3.6.0", torch_version="2.x",
        copy_gbps=4000.0, batches=BATCHES, buckets=(8, 48), configs=configs, measurements=tuple(measurements),
        recommendation=rec, metric="graph_ms", command="autotune-rewrite bench . --kernel matmul_kernel",
        notes=("a note",),
    )


def test_recommendation_of_the_table():
    rec = _result().recommendation
    assert rec.variant == "v3"
    assert [(p.bucket, p.config) for p in rec.bucket_preferences] == [(1, W4)]


def test_json_round_trip(tmp_path):
    res = _result()
    path = results.save(res, tmp_path / "out")
    assert path == tmp_path / "out" / "matmul_kernel.json"
    data = results.load(path)
    assert data == json.loads(results.to_json(res))
    assert data["schema"] == results.SCHEMA
    assert data["recommendation"]["variant"] == "v3"
    assert data["measurements"][0] == {"config": W4, "batch": 1, "median_ms": pytest.approx(0.044), "graph_ms": 0.040,
                                       "bytes_moved": 2_000_000, "gbps": pytest.approx(50.0), "error": None}


def test_load_ignores_missing_broken_and_foreign_files(tmp_path):
    assert results.load(tmp_path / "nope.json") is None
    (tmp_path / "broken.json").write_text("{", encoding="utf-8")
    assert results.load(tmp_path / "broken.json") is None
    (tmp_path / "other.json").write_text('{"schema": 99}', encoding="utf-8")
    assert results.load(tmp_path / "other.json") is None


def _git_repo(path: Path) -> Path:
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def test_default_place_is_under_the_common_git_dir(tmp_path):
    repo = _git_repo(tmp_path / "repo")
    (repo / "sub").mkdir()
    out = results.default_dir(repo / "sub")
    assert out == (repo / ".git" / "autotune-rewrite" / "bench").resolve()
    results.save(_result(), out)
    assert results.load_latest(repo / ".git", "matmul_kernel")["kernel"] == "matmul_kernel"
    assert results.load_latest(repo / ".git", "other_kernel") is None


def test_outside_git_asks_for_out(tmp_path):
    with pytest.raises(UserError, match="--out"):
        results.default_dir(tmp_path)


def test_plot_is_skipped_with_a_note_without_matplotlib(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    written, why = plot.write_plot(_result(), tmp_path / "k.png")
    assert written is None and why == plot.SKIP_NOTE
    assert not (tmp_path / "k.png").exists()


def test_plot_is_written_with_matplotlib(tmp_path):
    pytest.importorskip("matplotlib")
    written, why = plot.write_plot(_result(), tmp_path / "k.png")
    assert why is None and Path(written).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_table_goes_to_stderr_and_json_to_stdout(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # rich wraps at the terminal width: keep phrases whole
    res = _result()
    bench_out.print_table(res, saved="/x/matmul_kernel.json")
    out, err = capsys.readouterr()
    assert out == ""
    assert "recommendation: v3" in err and "bucket 1 (B=1,8) prefers BLOCK_T=16 w4 s2" in err
    assert "4,000 GB/s" in err and "OutOfResources" in err and "dead on sm_120" in err
    assert "380 (10%)" in err  # B=96's fastest, w8: 190 MB in 500 us against the 4,000 GB/s copy
    assert "saved /x/matmul_kernel.json" in err and "note: a note" in err
    bench_out.print_json(res)
    out, err = capsys.readouterr()
    assert json.loads(out)["kernel"] == "matmul_kernel" and err == ""


@pytest.fixture(scope="module")
def mm_v1(tmp_path_factory, cache):
    from autotune_rewrite.rewrite.diff import run_rewrites

    root = tmp_path_factory.mktemp("bench-pr") / "mm_helper"
    shutil.copytree(input_tree("mm_helper"), root,
                    ignore=shutil.ignore_patterns("__pycache__"))
    # prune: v1 is refused there (two tiles launch on sm_120 and no bench ran on one).
    run = run_rewrites(root, "prune", workers=1, display_path=".", recheck=False, cache_dir=cache)
    (kr,) = [k for k in run.kernels if k.changes]
    return kr, run


def test_pr_body_quotes_the_bench_result_only_when_one_exists(mm_v1):
    kr, run = mm_v1
    plain = templating.pr_body(templating.context(kr, run))
    assert templating.pr_body(templating.context(kr, run, bench=None)) == plain
    assert "### Measured" not in plain
    data = json.loads(results.to_json(_result()))
    body = templating.pr_body(templating.context(kr, run, bench=data))
    assert "### Measured on Test GPU (sm_90)" in body
    assert f"| {W8} | v1, v2, v3 | 50.0 | 75.0 | 500.0 |" in body
    assert "| BLOCK_T=64 w8 s2 | extra | - | - | OutOfResources |" in body
    assert "Recommended variant: **v3**" in body and "worst gap to the\nfastest shippable config: +20.0%" in body  # prune's
    # Everything else is unchanged: the section is inserted before "How to reproduce".
    head, _, tail = body.partition("### Measured on")
    assert plain.startswith(head) and plain.endswith(tail[tail.index("### How to reproduce"):])
