"""check's scan cache: an unchanged tree reuses the stored ScanResult, any edit rescans."""

from __future__ import annotations

import pickle
import shutil
from dataclasses import replace
from pathlib import Path

from autotune_rewrite.locate.scan_cache import cached_scan
from autotune_rewrite.settings import load_settings

FIXTURE = Path(__file__).parent / "fixtures" / "check" / "repo"


def test_scan_is_reused_until_a_file_changes(tmp_path: Path):
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE, repo)
    cache = tmp_path / "cache"
    settings = load_settings(repo)
    first = cached_scan(repo, None, 1, settings, cache)
    assert {s.kernel for s in first.sites} == {"transpose_kernel", "scale_kernel"}
    (entry,) = (cache / "scans").rglob("*.pickle")
    # Mark the stored result: a hit must return exactly what is stored.
    entry.write_bytes(pickle.dumps(replace(first, files_scanned=999)))
    assert cached_scan(repo, None, 1, settings, cache).files_scanned == 999
    # Any edit to a scanned file is a different key: a real scan again.
    kernel = repo / "kernels" / "transpose.py"
    kernel.write_text(kernel.read_text().replace('"BLOCK_N": 64}, num_warps=4', '"BLOCK_N": 32}, num_warps=4'))
    again = cached_scan(repo, None, 1, settings, cache)
    assert again.files_scanned == first.files_scanned
    (site,) = [s for s in again.sites if s.kernel == "transpose_kernel"]
    assert site.configs[0].kwargs == {"BLOCK_M": 64, "BLOCK_N": 32}
    assert cached_scan(repo, None, 1, settings, None).sites == again.sites  # no cache: plain scan


def test_smem_fit_is_memoized_by_its_points(tmp_path: Path):
    import json

    from autotune_rewrite.check.smem_probe import _cached_fit

    # DOMAIN.md's four compiled points of the motivating kernel.
    points = [({"BLOCK_H": 16, "BLOCK_T": 16, "num_stages": 2}, 61568),
              ({"BLOCK_H": 16, "BLOCK_T": 32, "num_stages": 2}, 104704),
              ({"BLOCK_H": 32, "BLOCK_T": 16, "num_stages": 2}, 80000),
              ({"BLOCK_H": 16, "BLOCK_T": 16, "num_stages": 3}, 83136),
              ({"BLOCK_H": 32, "BLOCK_T": 32, "num_stages": 3}, 166272)]
    model = _cached_fit(points, tmp_path)
    assert model.text == "SMEM = 1152*BLOCK_H + 1348*num_stages*BLOCK_T"
    (entry,) = (tmp_path / "smem-models").rglob("*.json")
    data = json.loads(entry.read_text())
    data["value"]["model"]["text"] = "marked"
    entry.write_text(json.dumps(data))
    assert _cached_fit(points, tmp_path).text == "marked"  # a hit returns what is stored
    entry.write_text("{corrupt")
    assert _cached_fit(points, tmp_path).text == model.text  # a corrupt entry is refitted ...
    assert json.loads(entry.read_text())["value"]["model"]["text"] == model.text  # ... and rewritten
    assert _cached_fit(points[:-1] + [(points[-1][0], 166273)], tmp_path).text != "marked"
