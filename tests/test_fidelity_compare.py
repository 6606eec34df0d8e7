"""benchmarks/fidelity/compare.py: the zero-configuration verdicts against the exact ones, pair by
pair, on check JSON written here (the shapes ``check --format json`` emits)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

COMPARE = Path(__file__).resolve().parents[1] / "benchmarks" / "fidelity" / "compare.py"


def _compare():
    spec = importlib.util.spec_from_file_location("fidelity_compare", COMPARE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _row(label, arch, launchable, shared, regs=64, spills=0, params=None, warps=4, stages=2):
    return {"label": label, "arch": arch, "launchable": launchable, "shared_bytes": shared, "registers": regs,
            "spills": spills, "compile_error": None, "params": params or {}, "num_warps": warps, "num_stages": stages}


def _entry(spec, status, rows, family="default", path="pkg/ops.py", kernel="k"):
    return {"path": path, "kernel": kernel, "spec": spec, "spec_family": family, "status": status,
            "assumptions": [{"parameter": "D", "value": 128, "source": "swept"}], "configs": rows}


def test_pairs_are_sorted_into_agree_depends_unsafe_and_conservative(tmp_path):
    cmp = _compare()
    zero = {"kernels": [
        _entry("D=64", "assumed", [_row("a", "sm_120", True, 1000), _row("b", "sm_120", True, 2000),
                                   _row("c", "sm_120", False, 200_000), _row("d", "sm_120", True, 3000)]),
        _entry("D=128", "assumed", [_row("a", "sm_120", True, 1000), _row("b", "sm_120", True, 2000),
                                    _row("c", "sm_120", False, 200_000), _row("d", "sm_120", False, 150_000)])],
        "depends": [{"kernel": "pkg/ops.py::k", "config": "d", "arch": "sm_120"}]}
    exact = {"kernels": [_entry("captured", "judged", [
        _row("a", "sm_120", True, 1000), _row("b", "sm_120", False, 120_000),
        _row("c", "sm_120", True, 90_000), _row("d", "sm_120", True, 3000)])]}
    row = cmp.compare_kernel("pkg/ops.py::k", zero, exact)
    assert dict(row["pairs"]) == {"agree": 1, "unsafe": 1, "conservative": 1, "depends_reported": 1}
    assert row["zero_config_judged"] and row["assumptions"] == ["D = 128"]
    # SMEM equal on a (both specs) and d (the D=64 spec); registers and spills everywhere.
    assert row["fields_equal"]["shared_bytes"] == 2 and row["fields_equal"]["all"] == 2
    kinds = {d["config"]: d["kind"] for d in row["differences"]}
    assert kinds == {"b": "unsafe", "c": "conservative"}


def test_a_folder_of_drivers_gives_judged_share_and_live_matches(tmp_path):
    cmp = _compare()
    folder = tmp_path / "drv"
    folder.mkdir()
    live = {"meta": [["BLOCK", 64]], "num_warps": 4, "num_stages": 2, "shared": 1000, "n_regs": 64, "n_spills": 0}
    wrong = live | {"meta": [["BLOCK", 128]], "shared": 5000}
    (folder / "records.json").write_text(json.dumps({"folded": {"kernels": [
        {"ident": "pkg/ops.py::k", "specs": [{"name": "captured", "compiles": [live, wrong]}]},
        {"ident": "pkg/ops.py::other", "specs": []}]}}))
    (folder / "cases.json").write_text(json.dumps({"cases": [{"case": "fwd", "exit": 0}, {"case": "bwd", "exit": 1}]}))
    (folder / "check_zero_config.json").write_text(json.dumps({"kernels": [
        _entry("default", "assumed", [_row("BLOCK=64 w4 s2", "sm_90", True, 1000, params={"BLOCK": 64})]),
        _entry("default", "needs_spec", [], kernel="other")]}))
    (folder / "check_exact.json").write_text(json.dumps({"kernels": [_entry("captured", "judged", [
        _row("BLOCK=64 w4 s2", "sm_90", True, 1000, params={"BLOCK": 64}),
        _row("BLOCK=128 w4 s2", "sm_90", True, 4096, params={"BLOCK": 128})])]}))
    doc = cmp.compare(tmp_path)
    assert doc["captured_kernels"] == 2 and doc["zero_config_judged"] == 1
    assert doc["pairs"] == {"agree": 1}
    assert doc["live_vs_exact_sm90"]["compiles"] == 2 and doc["live_vs_exact_sm90"]["matching"] == 1
    (mismatch,) = doc["live_vs_exact_sm90"]["mismatches"]
    assert mismatch["live_h200"] == [5000, 64, 0] and mismatch["exact_sm90"] == [4096, 64, 0]
    (drv,) = doc["drivers"]
    assert drv["cases_ok"] == 1 and drv["failed_cases"] == ["bwd"]
