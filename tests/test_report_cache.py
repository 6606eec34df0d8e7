"""The report cache: a warm check reuses a kernel's reports only while none of its inputs changed.

The tree is ``test_changed_since``'s (a_kernel: a jit helper, configs from a helper module and
its module variable, launched from another file; b_kernel: literal configs). A stored entry is
marked (a warning only it can carry): a run that prints the mark reused it; one that does not
judged the kernel again.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from test_changed_since import FILES, committed_files, edit

from autotune_rewrite.check import check as check_stage
from autotune_rewrite.check.report_cache import Entry

MARK = "marked: this report came from the cache"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return committed_files(tmp_path / "repo")


def run(repo: Path, cache: Path, **kw):
    return check_stage.check(repo, workers=1, cache_dir=cache, **kw)


def mark_all(cache: Path) -> dict[str, Path]:
    """Mark every stored entry; returns them by kernel name."""
    out = {}
    for path in (cache / "reports").rglob("*.pickle"):
        entry = pickle.loads(path.read_bytes())
        kernel = entry.reports[0].site.kernel
        path.write_bytes(pickle.dumps(Entry(entry.reports, (f"{kernel}: {MARK}",), entry.outcomes)))
        out[kernel] = path
    return out


def reused(result) -> set[str]:
    return {w.split(":")[0] for w in result.warnings if MARK in w}


def figures(result):
    return [(r.site.kernel, r.status, [(v.arch, v.config.label(), v.outcome.shared_bytes, v.launchable)
                                       for v in r.verdicts]) for r in result.reports]


def test_a_warm_run_reuses_every_unchanged_kernel(repo: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    cold = run(repo, cache)
    assert cold.compiled > 0
    assert set(mark_all(cache)) == {"a_kernel", "b_kernel"}
    warm = run(repo, cache)
    assert reused(warm) == {"a_kernel", "b_kernel"}
    assert figures(warm) == figures(cold)
    assert warm.compiled == 0 and warm.cached == cold.compiled + cold.cached
    assert all(v.outcome.cached for r in warm.reports for v in r.verdicts)


@pytest.mark.parametrize("rel, old, new", [
    ("pkg/helpers.py", "x * 2", "x * 3"),  # a @triton.jit helper in another module
    ("pkg/consts.py", "(32, 64)", "(32, 64, 128)"),  # a module variable the config helper reads
    ("pkg/ops_a.py", "a_kernel[grid](x, x.numel())", "a_kernel[grid](x, x.numel() // 2)"),  # the launch
    ("pkg/tuning.py", "import triton\n", "import triton\nimport os\n"),  # a helper module, no value changed
])
def test_a_changed_input_of_a_kernel_is_judged_again(repo: Path, tmp_path: Path, rel: str, old: str, new: str):
    cache = tmp_path / "cache"
    run(repo, cache)
    mark_all(cache)
    edit(repo, rel, old, new)
    again = run(repo, cache)
    assert reused(again) == {"b_kernel"}
    fresh = run(repo, tmp_path / "fresh-cache")
    assert figures(again) == figures(fresh)


def test_run_options_are_part_of_the_key(repo: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    run(repo, cache)
    mark_all(cache)
    assert reused(run(repo, cache, archs=["sm_90"])) == set()
    assert reused(run(repo, cache, exact=True)) == set()
    assert reused(run(repo, cache, assume=[("n", 4096)])) == set()
    (repo / "pyproject.toml").write_text(FILES["pyproject.toml"] + '\n[tool.autotune-rewrite.assume]\nn = 64\n')
    assert reused(run(repo, cache)) == set()


def test_a_corrupt_entry_is_ignored_and_rewritten(repo: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    cold = run(repo, cache)
    entries = mark_all(cache)
    entries["a_kernel"].write_bytes(b"\x80\x05 not a pickle")
    again = run(repo, cache)
    assert reused(again) == {"b_kernel"} and figures(again) == figures(cold)
    assert isinstance(pickle.loads(entries["a_kernel"].read_bytes()), Entry)  # rewritten with the real reports
    assert reused(run(repo, cache)) == {"b_kernel"}  # b's mark still there; a's entry is the real one now


def test_heuristics_kernels_of_one_file_share_one_parse(tmp_path: Path):
    from test_spec_inference import HEURISTIC_KERNEL

    from autotune_rewrite.spec.heuristics import heuristics_of
    from autotune_rewrite.locate.scan import scan

    (tmp_path / "h.py").write_text(HEURISTIC_KERNEL + HEURISTIC_KERNEL.split("\n", 3)[3].replace("h_kernel", "g_kernel"))
    first, second = sorted(scan(tmp_path, jobs=1).sites, key=lambda s: s.kernel)
    parsed: dict = {}
    a, b = heuristics_of(tmp_path, first, parsed), heuristics_of(tmp_path, second, parsed)
    assert len(parsed) == 1 and a[0].pm is b[0].pm  # one parse for both kernels
    assert [h.name for h in a] == [h.name for h in heuristics_of(tmp_path, first)] == ["EVEN", "HAS_G", "OPAQUE"]
