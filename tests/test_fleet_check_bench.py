"""The non-GPU parts of benchmarks/device/fleet_check.py: the fleet prune patched into a copy of
its kernel, `check` of both copies, and the emitted guard run by Python itself on real
`triton.Config` objects as Triton's driver would answer on each GPU."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import SimpleNamespace

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "device" / "fleet_check.py"
BIG = ("BLOCK_M=128 BLOCK_N=256 BLOCK_K=64 w8 s4", "BLOCK_M=256 BLOCK_N=128 BLOCK_K=64 w8 s4")
SMALL = ("BLOCK_M=64 BLOCK_N=64 BLOCK_K=32 w4 s2", "BLOCK_M=128 BLOCK_N=128 BLOCK_K=64 w8 s2")


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_patch_and_check_without_a_gpu(tmp_path, capsys):
    bench = _load(BENCH, "fleet_check")
    assert bench.main(["--no-gpu", "--work", str(tmp_path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    (decision,) = doc["patch"]["decisions"]
    assert decision["dropped"] == [] and decision["guarded"] == {"sm_120": list(BIG), "sm_90": []}
    assert doc["check_before"]["sm_120"] == {**dict.fromkeys(SMALL, True), **dict.fromkeys(BIG, False)}
    assert doc["check_after"]["sm_120"] == dict.fromkeys(SMALL, True)
    assert doc["check_after"]["sm_90"] == doc["check_before"]["sm_90"] == dict.fromkeys(SMALL + BIG, True)
    assert doc["ok"] is True

    # The guard as Python runs it at the first launch: Triton's driver says which GPU this is.
    patched = _load(tmp_path / "patched" / "fleet_gemm.py", "fleet_patched_cpu")
    configs = patched.fleet_gemm_kernel.configs
    assert patched.fleet_gemm_kernel.early_config_prune is patched._prune_fleet_gemm_kernel

    def on(arch):
        target = SimpleNamespace(arch=arch)
        patched.triton = SimpleNamespace(runtime=SimpleNamespace(driver=SimpleNamespace(
            active=SimpleNamespace(get_current_target=lambda: target))))
        return [bench._config_label(c) for c in patched._prune_fleet_gemm_kernel(configs, {})]

    assert on(120) == list(SMALL)
    assert on(90) == list(SMALL + BIG)  # the H200 times every config, as before
    assert on("gfx942") == list(SMALL + BIG)  # AMD: arch is a string, nothing pruned


def test_timed_configs_compare_in_order():
    bench = _load(BENCH, "fleet_check")
    assert bench.compare_timed(["a", "b"], ["a", "b"])["timed_identical"] is True
    assert bench.compare_timed(["a", "b"], ["a"])["timed_identical"] is False
    assert bench.label({"BLOCK": 16}, 4, 2) == "BLOCK=16 w4 s2"


def test_the_product_built_kernel_is_patched_and_checked_without_a_gpu(tmp_path, capsys):
    # The same matmul, its configs a device-filtered product: one condition (dead on both
    # targets) and sm_120's guard; sm_90 times exactly what launched there before.
    bench = _load(BENCH, "fleet_check_product")
    assert bench.main(["--no-gpu", "--work", str(tmp_path), "--product"]) == 0
    doc = json.loads(capsys.readouterr().out)
    # One decision per target branch (the filter asks the device), both dropping the tile dead on both.
    assert [d["dropped"] for d in doc["patch"]["decisions"]] == [["BLOCK_M=256 BLOCK_N=256 BLOCK_K=64 w8 s4"]] * 2
    assert doc["patch"]["decisions"][0]["guarded"] == {"sm_120": ["BLOCK_M=128 BLOCK_N=256 BLOCK_K=64 w8 s4"]}
    assert "+    if not (n == 256 and r == 1)\n" in doc["patch"]["diff"]
    assert doc["check_after"]["sm_90"] == {k: v for k, v in doc["check_before"]["sm_90"].items() if v}
    assert all(doc["check_after"]["sm_120"].values()) and doc["ok"] is True
