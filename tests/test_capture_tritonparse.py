"""``capture --from-tritonparse TRACE``: the specs a live capture writes, read from a tritonparse trace.

The fixture ``tests/fixtures/capture/tritonparse/scaled_copy_h200.ndjson.gz`` is a real trace:
tritonparse 0.6 (``init(folder, enable_trace_launch=True)``) around ``scaled_copy_kernel`` (our
fixture kernel) launched for n = 4096 and 4097 on an H200, trimmed to two launch records per
compile (benchmarks/device/capture_corpus.py). ``scaled_copy_h200_live_capture.toml`` is what
``capture -- python ...`` wrote for the same program on the same GPU. The trace was written in a
folder of that machine: its kernel path is not under the test's root.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import tomllib

import pytest

from autotune_rewrite.gpu.capture import tritonparse_trace
from capture_helpers import FIXTURES
from repo_env import pythonpath
import cli_process

TRACES = FIXTURES / "tritonparse"
TRACE = TRACES / "scaled_copy_h200.ndjson.gz"
LIVE = TRACES / "scaled_copy_h200_live_capture.toml"


def _cli(args, cwd):
    env = dict(os.environ, PYTHONPATH=pythonpath())
    return cli_process.run(args, cwd=cwd, env=env, timeout=300)


@pytest.fixture
def root(tmp_path):
    shutil.copy(FIXTURES / "scaled_copy.py", tmp_path / "scaled_copy.py")
    return tmp_path


def _events():
    return [json.loads(line) for line in gzip.decompress(TRACE.read_bytes()).decode().splitlines()]


def test_a_trace_with_launch_records_gives_what_the_live_capture_wrote(root):
    res = _cli(["capture", "--root", ".", "--from-tritonparse", str(TRACE)], root)
    assert res.returncode == 0, res.stderr
    assert res.stdout == ""
    assert (root / "autotune-rewrite.toml").read_text() == LIVE.read_text()
    assert "capture: read" in res.stderr and "wrote 2 spec(s)" in res.stderr


def test_compilation_records_alone_give_the_specialization_with_values_that_say_so(root):
    """Without TRITON_TRACE_LAUNCH the trace has no int values: types, constexprs and the
    runtime's == 1 / % 16 facts still come out exactly; each unknown int is a labelled stand-in."""
    compiles = [e for e in _events() if e["event_type"] == "compilation"]
    (root / "trace").mkdir()
    (root / "trace" / "dedicated_log_triton_trace_rank_0_.ndjson").write_text(
        "".join(json.dumps(e) + "\n" for e in compiles))
    res = _cli(["capture", "--root", ".", "--from-tritonparse", "trace"], root)
    assert res.returncode == 0, res.stderr
    text = (root / "autotune-rewrite.toml").read_text()
    got = {t["spec"]: t for t in tomllib.loads(text)["kernels"]}
    live = {t["spec"]: t for t in tomllib.loads(LIVE.read_text())["kernels"]}
    assert got.keys() == live.keys()
    for name, table in got.items():
        assert table["types"] == live[name]["types"] and table["constexprs"] == live[name]["constexprs"]
    assert got["captured HEAD=8 n%16==0"]["values"] == {"n": 16, "stride": 1, "one": 1}
    assert got["captured HEAD=8 n%16!=0"]["values"] == {"n": 17, "stride": 1, "one": 1}
    assert "# captured note: n = 16 stands for the runtime's specialization (n % 16 == 0, != 1)" in text
    assert "TRITON_TRACE_LAUNCH=1" in res.stderr


def test_the_ttir_signature_gives_each_parameter_its_type():
    ttir = next(v for e in _events() if e["event_type"] == "compilation"
                for k, v in e["payload"]["file_content"].items() if k.endswith(".ttir"))
    # stride and one were 1 at launch: folded into constexprs, so not TTIR arguments
    assert tritonparse_trace.ttir_signature(ttir, "scaled_copy_kernel") == {
        "src": "*bf16", "dst": "*fp32", "scale": "fp32", "n": "i32"}
    line = ('tt.func public @k(%a: !tt.ptr<f8E4M3FN> {tt.divisibility = 16 : i32} loc("a"(#loc)), '
            '%d: !tt.tensordesc<tensor<64x128xbf16>> loc("d"(#loc)), %m: i64 loc("m"(#loc))) attributes {} {')
    assert tritonparse_trace.ttir_signature(line, "k") == {"a": "*fp8e4nv", "d": "tensordesc<bf16[64, 128]>",
                                                           "m": "i64"}


def test_a_trace_path_from_another_machine_maps_to_the_root_by_its_suffix(tmp_path):
    (tmp_path / "pkg" / "ops").mkdir(parents=True)
    known = ["pkg/ops/kernels.py", "kernels.py"]
    assert tritonparse_trace.locate("/ci/build/checkout/pkg/ops/kernels.py", tmp_path, known) == \
        str(tmp_path / "pkg/ops/kernels.py")
    assert tritonparse_trace.locate("/ci/other.py", tmp_path, known) is None


def test_bad_input_is_a_usage_error(root):
    (root / "empty.ndjson").write_text('{"event_type": "autotune"}\n')
    res = _cli(["capture", "--root", ".", "--from-tritonparse", "empty.ndjson"], root)
    assert res.returncode == 2 and "no tritonparse compilation record" in res.stderr
    (root / "nothing").mkdir()
    res = _cli(["capture", "--root", ".", "--from-tritonparse", "nothing"], root)
    assert res.returncode == 2 and "no .ndjson or .ndjson.gz trace file" in res.stderr
    res = _cli(["capture", "--root", ".", "--from-tritonparse", str(TRACE), "--", "python", "x.py"], root)
    assert res.returncode == 2 and "not both" in res.stderr
    elsewhere = root / "elsewhere"
    elsewhere.mkdir()
    res = _cli(["capture", "--root", "elsewhere", "--from-tritonparse", str(TRACE)], root)
    assert res.returncode == 2 and "outside the root" in res.stderr and "--root" in res.stderr
    assert not (elsewhere / "autotune-rewrite.toml").exists()
