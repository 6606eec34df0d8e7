"""inspect-cache on a real Triton cache: kernels cross-compiled here with TRITON_CACHE_DIR pointed
at a temporary folder, exactly as a production box's JIT would have filled it."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from autotune_rewrite.output.explain import occupancy_reason
from autotune_rewrite.gpu.inspect_cache import inspect_cache
from autotune_rewrite.resources import read_resource_usage
from autotune_rewrite.targets import resolve_target
from autotune_rewrite.gpu.triton_cache import parse_ttir_signature, read_cache
import cli_process

FIXTURE = Path(__file__).parent / "fixtures" / "engine" / "tiled_dot.py"

# (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages): the first fits sm_120's 101,376 B opt-in
# limit, the second is a Hopper-sized tile that does not.
SMALL = (32, 32, 32, 4, 2)
LARGE = (256, 256, 128, 8, 3)

_FILL = textwrap.dedent(
    """
    import json, sys, importlib.util
    import triton
    from triton.compiler import ASTSource
    from triton.backends.compiler import GPUTarget
    spec = importlib.util.spec_from_file_location("tiled_dot", sys.argv[1])
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    names = ["a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm"]
    sig = {n: ("*fp16" if n.endswith("_ptr") else "i32") for n in names}
    sig.update(BLOCK_M="constexpr", BLOCK_N="constexpr", BLOCK_K="constexpr")
    out = []
    for bm, bn, bk, w, s in json.loads(sys.argv[2]):
        src = ASTSource(fn=mod.tiled_dot_kernel, signature=sig,
                        constexprs={"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk},
                        attrs={(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]],
                               (2,): [["tt.divisibility", 16]]})
        k = triton.compile(src, target=GPUTarget("cuda", 120, 32), options={"num_warps": w, "num_stages": s})
        out.append({"shared": k.metadata.shared, "cubin": k.asm["cubin"].hex()})
    # The autotuner's own record, written with real triton.Config objects in the shape
    # Autotuner.check_disk_cache stores (json of (config.__dict__, timings)); the large tile
    # could not launch on the production GPU, so the autotuner timed it as inf.
    configs = [triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk}, num_warps=w, num_stages=s)
               for bm, bn, bk, w, s in json.loads(sys.argv[2])]
    timings = [[0.0123, 0.012, 0.0125], [float("inf")] * 3]
    record = json.dumps({"key": [512, "torch.float16"],
                         "configs_timings": [(c.__dict__, t) for c, t in zip(configs, timings)]})
    folder = __import__("pathlib").Path(sys.argv[3]) / "TUNINGHASH"
    folder.mkdir()
    (folder / "tiled_dot_kernel.autotune.json").write_text(record)
    print(json.dumps(out))
    """
)


@pytest.fixture(scope="module")
def triton_cache(tmp_path_factory):
    cache = tmp_path_factory.mktemp("triton-cache")
    env = {**os.environ, "TRITON_CACHE_DIR": str(cache)}
    env.pop("TRITON_OVERRIDE_ARCH", None)
    proc = subprocess.run(
        [sys.executable, "-c", _FILL, str(FIXTURE), json.dumps([SMALL, LARGE]), str(cache)],
        env=env, capture_output=True, text=True, check=True,
    )
    compiled = json.loads(proc.stdout.strip().splitlines()[-1])
    return cache, compiled


def test_reads_metadata_signature_and_timings(triton_cache):
    cache, compiled = triton_cache
    contents = read_cache(cache)
    assert contents.errors == ()
    assert sorted(e.shared_bytes for e in contents.entries) == sorted(c["shared"] for c in compiled)
    entry = next(e for e in contents.entries if e.num_warps == 4)
    assert entry.name == "tiled_dot_kernel" and entry.capability == 120 and entry.num_stages == 2
    assert entry.triton_version
    types = {p.name: (p.type, p.divisibility) for p in entry.params}
    assert types["a_ptr"] == ("*fp16", 16)
    assert types["M"][0] == "i32"
    assert "BLOCK_M" not in types  # constexprs are folded into the binary
    (record,) = contents.tunings
    assert [t.pruned for t in record.timings] == [False, True]
    assert math.isclose(record.timings[0].time_ms, 0.0123)


def test_verdicts_per_target_and_exact_resources(triton_cache):
    cache, compiled = triton_cache
    result = inspect_cache(cache, [resolve_target("sm_120"), resolve_target("sm_90")])
    by_warps = {k.entry.num_warps: k for k in result.kernels}
    small, large = by_warps[4], by_warps[8]
    # Registers equal what cuobjdump reads from the compile's own cubin.
    for k, c in ((small, compiled[0]), (large, compiled[1])):
        usage = read_resource_usage(bytes.fromhex(c["cubin"]), "tiled_dot_kernel")
        assert (k.registers, k.spills) == (usage.registers, usage.spills)
        assert k.entry.shared_bytes == c["shared"]
    assert [v.launchable for v in small.verdicts] == [True, True]
    sm120, sm90 = large.verdicts
    assert not sm120.launchable and sm90.launchable
    assert f"{large.entry.shared_bytes:,} B > 101,376 B" in occupancy_reason(sm120.occupancy.blocked)
    assert sm120.registers_from is None and sm90.registers_from == "sm_120 build"
    # Constexpr values are recovered only through the autotuner's record.
    assert small.meta_params == {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32}
    assert not result.all_launchable


def _cli(*args):
    return cli_process.run(args)


def test_cli_json_and_exit_codes(triton_cache):
    cache, _ = triton_cache
    proc = _cli("inspect-cache", str(cache), "--arch", "sm_120", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert data["targets"] == ["sm_120"] and data["schema_version"] == 1
    assert {k["num_warps"]: k["targets"][0]["launchable"] for k in data["kernels"]} == {4: True, 8: False}
    assert data["tunings"][0]["configs"][1] == {
        "kwargs": {"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 128},
        "num_warps": 8, "num_stages": 3, "time_ms": None, "pruned": True,
    }
    assert _cli("inspect-cache", str(cache), "--arch", "sm_90").returncode == 0
    table = _cli("inspect-cache", str(cache), "--arch", "rtx-pro-6000")
    assert table.returncode == 1 and "tiled_dot_kernel" in table.stderr and table.stdout == ""


def test_bad_entries_are_reported_and_the_rest_goes_on(triton_cache, tmp_path):
    cache, _ = triton_cache
    copy = tmp_path / "cache"
    subprocess.run(["cp", "-r", str(cache), str(copy)], check=True)
    broken = copy / "BROKEN"
    broken.mkdir()
    (broken / "k.json").write_text("{not json")
    result = inspect_cache(copy, [resolve_target("sm_90")])
    assert len(result.kernels) == 2
    assert [e.path for e in result.errors] == ["BROKEN/k.json"]


def test_bad_input_exits_2_with_one_line(tmp_path):
    missing = _cli("inspect-cache", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "not a folder" in missing.stderr
    empty = _cli("inspect-cache", str(tmp_path))
    assert empty.returncode == 2 and "no Triton cache entries" in empty.stderr
    assert _cli("inspect-cache", str(tmp_path), "--arch", "sm_999").returncode == 2


def test_ttir_signature_parse_handles_scalars_and_plain_pointers():
    ttir = ('tt.func public @k(%x: !tt.ptr<bf16> {tt.divisibility = 16 : i32} loc(#a), '
            '%n: i32 {tt.divisibility = 16 : i32} loc(#b), %s: f32 loc(#c)) attributes {noinline = false} {')
    name, params = parse_ttir_signature(ttir)
    assert name == "k"
    assert [(p.name, p.type, p.divisibility) for p in params] == [
        ("x", "*bf16", 16), ("n", "i32", 16), ("s", "fp32", None)]
