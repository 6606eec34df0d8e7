"""Every Triton 3.6 parameter kind can be written in a launch spec, compiles for real, and round-trips.

The fixture repo (tests/fixtures/paramkinds/repo) holds one small autotuned kernel per kind and a
pyproject.toml stating each kind: ``None`` (explicit and as a source default), bools as constexprs
and as runtime ``u1``/``i1`` arguments, TMA tensor descriptors (a fixed block and one bound to the
config's meta-parameters, as an autotuner ``pre_hook`` sets it), nested tuples, and dtype
constexprs (``tl.float32``, ``triton.language.bfloat16``, ``torch.float32``). ``check --format
json`` cross-compiles all of them for sm_90 and sm_120 through the real CLI.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from repo_env import pythonpath

from autotune_rewrite.constexpr_values import DtypeRef
from autotune_rewrite.spec.spec_toml import Table, render_table
from autotune_rewrite.gpu.capture import records, stanza
from autotune_rewrite.settings import load_settings
import cli_process

FIXTURE = Path(__file__).parent / "fixtures" / "paramkinds" / "repo"
KINDS = "kernels/kinds.py"


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                   capture_output=True)


def _repo(dst: Path, pyproject: str | None = None) -> Path:
    shutil.copytree(FIXTURE, dst)
    if pyproject is not None:
        (dst / "pyproject.toml").write_text(pyproject)
    _git(dst, "init", "-q")
    _git(dst, "add", "-A")
    _git(dst, "commit", "-qm", "fixture")
    return dst


def _check(cwd: Path, cache: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, AUTOTUNE_REWRITE_CACHE_DIR=str(cache), NO_COLOR="1")
    env["PYTHONPATH"] = pythonpath(env=env)
    return cli_process.run(["check", *args], cwd=cwd, env=env, timeout=900)


@pytest.fixture(scope="module")
def report(tmp_path_factory, cache) -> dict:
    repo = _repo(tmp_path_factory.mktemp("kinds") / "repo")
    proc = _check(repo, cache, ".", "--format", "json")
    # The torch-dtype spec fails to compile for every config: "spec probably wrong", not a refusal.
    assert proc.returncode == 0, proc.stderr
    return {(k["kernel"], k["spec"]): k for k in json.loads(proc.stdout)["kernels"]}


# Ints the specs give no value are assumed divisible by 16 (listed): "assumed", else "judged".
JUDGED = ("judged", "assumed")


def _configs(kernel: dict, arch: str) -> list[dict]:
    return [c for c in kernel["configs"] if c["arch"] == arch]


def test_none_compiles_explicitly_and_as_a_source_default(report):
    default, none, bias = (report[("optional_bias", s)] for s in ("default", "bias None", "with bias"))
    for k in (default, none, bias):
        assert k["status"] in JUDGED and len(k["configs"]) == 4
        assert all(c["launchable"] for c in k["configs"])
    # A None argument is a constexpr, whether the source default or the spec says so.
    for k in (default, none):
        assert k["types"]["bias_ptr"] == "constexpr" and k["spec_constexprs"] == {"bias_ptr": None, "SCALE": None}
    assert bias["types"]["bias_ptr"] == "*fp16" and bias["spec_constexprs"]["SCALE"] == 0.5
    # The pruned branch really is gone: the bias load costs registers only when bias is given.
    regs = lambda k: [c["registers"] for c in _configs(k, "sm_90")]  # noqa: E731
    assert regs(default) == regs(none) and all(b > d for b, d in zip(regs(bias), regs(default)))


def test_bools_as_constexprs_and_runtime_u1_i1(report):
    for spec, relu in (("default", True), ("i1", False)):
        k = report[("flags", spec)]
        assert k["status"] in JUDGED
        for c in k["configs"]:
            assert c["signature"]["negate"] == "u1"  # Triton canonicalises i1 to u1
            assert c["constexprs"]["RELU"] is relu and "negate" not in c["divisible_by_16"]


def test_tensor_descriptors_compile_for_sm90_and_sm120(report):
    bound, fixed = report[("desc_copy", "default")], report[("desc_copy", "fixed block")]
    for arch in ("sm_90", "sm_120"):
        got = {c["params"]["BM"]: c for c in _configs(bound, arch)}
        assert set(got) == {64, 128}
        for bm, c in got.items():
            assert c["launchable"] and c["signature"]["in_desc"] == f"tensordesc<bf16[{bm}, 64]>"
            assert c["shared_bytes"] >= bm * 64 * 2  # the TMA tile lands in shared memory
        assert [c["shared_bytes"] for c in _configs(fixed, arch)] == [got[64]["shared_bytes"]] * 2
    assert got[128]["shared_bytes"] > got[64]["shared_bytes"]


def test_tuples_nested_with_pointer_divisibility(report):
    k = report[("tuple_args", "default")]
    assert k["status"] in JUDGED
    for c in k["configs"]:
        assert c["signature"]["ptrs"] == "(*fp16, *fp16)" and c["signature"]["sizes"] == "(i32, (i32, i32))"
        assert c["divisible_by_16"] == ["ptrs"] and c["launchable"]


def test_dtype_constexprs_reach_tl_code_as_dtypes(report):
    k = report[("accumulate", "default")]
    assert k["status"] in JUDGED and all(c["launchable"] for c in k["configs"])
    assert k["spec_constexprs"] == {"ACC": "tl.float32", "OUT": "tl.bfloat16"}  # "triton.language.bfloat16" read


def test_a_torch_dtype_constexpr_is_passed_as_the_runtime_passes_it(report):
    # Triton 3.6 hands a constexpr to the compiler unconverted: a torch dtype compares fine...
    assert report[("compares_dtype", "default")]["status"] in JUDGED
    # ...but used as a Triton dtype it fails to compile, here as at launch: never "launches", and
    # since every config fails, the spec is reported as probably wrong.
    k = report[("accumulate", "torch")]
    assert k["status"] == "spec_suspect"
    assert all(c["reason_code"] == "compile_rejected" and "torch.dtype" in c["compile_error"] for c in k["configs"])


_SPEC = '''[tool.autotune-rewrite]
arch = ["sm_90"]

[[tool.autotune-rewrite.kernels]]
kernel = "kernels/kinds.py::{kernel}"
{body}
'''


@pytest.mark.parametrize("kernel, body, key, words", [
    ("accumulate", 'types = { x_ptr = "*bf16", out_ptr = "*bf16", n = "i32" }\nconstexprs = { ACC = "tl.flaot32", OUT = "tl.bfloat16" }',
     "kernels[0].constexprs.ACC", "triton.language has no dtype 'flaot32'; did you mean 'float32'?"),
    ("accumulate", 'types = { x_ptr = "*bf16", out_ptr = "*bf16", n = "i32" }\nconstexprs = { ACC = "torch.flot32", OUT = "tl.bfloat16" }',
     "kernels[0].constexprs.ACC", "torch has no dtype 'flot32'"),
    ("optional_bias", 'types = { x_ptr = "*fp16", n = "i32", bias_ptr = "none" }',
     "kernels[0].types.bias_ptr", 'write constexprs = { bias_ptr = "None" }'),
    ("optional_bias", 'types = { x_ptr = "*fp16", n = "i32" }\nconstexprs = { SCALE = "null" }',
     "kernels[0].constexprs.SCALE", 'write "None"'),
    ("desc_copy", 'types = { in_desc = "tensordesc<bf16[64 64]>", out_desc = "tensordesc<bf16[64, 64]>", M = "i32" }',
     "kernels[0].types.in_desc", "is not a Triton type"),
    ("tuple_args", 'types = { ptrs = "(*fp16, *fp16", sizes = "(i32, (i32, i32))" }',
     "kernels[0].types.ptrs", "is not a Triton type"),
    ("flags", 'types = { x_ptr = "*fp32", n = "i32", negate = "i2" }\nconstexprs = { RELU = true }',
     "kernels[0].types.negate", "is not a Triton type"),
])
def test_a_wrong_spelling_exits_2_naming_file_and_key(tmp_path, cache, kernel, body, key, words):
    repo = _repo(tmp_path / "repo", _SPEC.format(kernel=kernel, body=body))
    proc = _check(repo, cache, ".", "--format", "json")
    assert proc.returncode == 2, proc.stderr
    assert f"pyproject.toml: [tool.autotune-rewrite] {key} " in proc.stderr and words in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_none_default_without_a_spec_is_a_constexpr_and_the_stanza_parses(tmp_path, cache):
    # Before: tomlkit could not write the None default into the stanza (a traceback, exit 1).
    repo = _repo(tmp_path / "repo", '[tool.autotune-rewrite]\narch = ["sm_90"]\n')
    proc = _check(repo, cache, ".", "--kernel", f"{KINDS}::optional_bias", "--format", "json")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    (k,) = json.loads(proc.stdout)["kernels"]
    assert k["status"] in JUDGED and k["spec_constexprs"]["bias_ptr"] is None
    exact = _check(repo, cache, ".", "--kernel", f"{KINDS}::optional_bias", "--exact")
    assert f"needs_spec {KINDS}::optional_bias" in exact.stderr and "Traceback" not in exact.stderr
    text = exact.stderr[exact.stderr.index("[tool.autotune-rewrite.assume]"):].split("\njudged ")[0]
    assert tomllib.loads(text) == {"tool": {"autotune-rewrite": {"assume": {}}}}  # to fill in, nothing guessed
    assert "bias_ptr" not in text  # its None default is a value


def test_the_stanza_writer_round_trips_every_kind(tmp_path):
    # What capture records for a launch with each kind, folded and merged as capture does...
    record = {
        "params": [{"name": n, "constexpr": c} for n, c in
                   (("x", False), ("bias", False), ("desc", False), ("pair", False), ("flag", False),
                    ("n", False), ("ACC", True), ("T", True), ("RELU", True), ("OPT", True))],
        "signature": {"x": "*bf16", "bias": "constexpr", "desc": "tensordesc<bf16[64, 64]>",
                      "pair": ["*fp16", ["i32", "*bf16"]], "flag": "u1", "n": "i32", "ACC": "constexpr",
                      "T": "constexpr", "RELU": "constexpr", "OPT": "constexpr"},
        "constants": {"bias": None, "ACC": {"dtype": "fp32"}, "T": {"dtype": "torch.float16"}, "RELU": True,
                      "OPT": None},
        "attrs": {"x": [["tt.divisibility", 16]]}, "values": {"n": 1000},
    }
    types, consts, values, _, notes = records._spec_facts(record, set())
    assert notes == ()
    table = Table(f"{KINDS}::accumulate", "captured", types, consts, values)
    text = stanza.merge_text("[tool.autotune-rewrite]\narch = [\"sm_90\"]\n", [table], "tool.autotune-rewrite.")
    (tmp_path / "pyproject.toml").write_text(text)
    # ...reads back, through the settings reader, as the same spec.
    (entry,) = load_settings(tmp_path).kernels
    assert dict(entry.types) == dict(types) == {
        "x": "*bf16", "bias": "constexpr", "desc": "tensordesc<bf16[64, 64]>", "pair": "(*fp16, (i32, *bf16))",
        "flag": "u1", "n": "i32"}
    assert entry.constexprs == consts == (("bias", None), ("ACC", DtypeRef("tl", "float32")),
                                          ("T", DtypeRef("torch", "float16")), ("RELU", True), ("OPT", None))
    assert entry.values == values == (("n", 1000),)
    assert tomllib.loads(render_table(table))["kernels"][0]["constexprs"] == {
        "bias": "None", "ACC": "tl.float32", "T": "torch.float16", "RELU": True, "OPT": "None"}
