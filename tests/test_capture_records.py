"""Folding captured records into launch specs.

The records come from the real hook functions fed with the objects Triton builds: Triton's
binder specializes real torch tensors and ints, ``_pack_args`` and ``JITFunction._call_hook``
call our ``jit_post_compile_hook`` exactly as ``_do_compile`` does on a GPU. The folded spec is
then checked against the runtime: ``check``'s own ``specialize`` must give back the signature,
constexprs and divisibility Triton used for every captured compile.
"""

from __future__ import annotations

import shutil

import pytest

from autotune_rewrite.constexpr_values import DtypeRef
from autotune_rewrite.spec import launch_spec
from autotune_rewrite.gpu.capture import capture as capture_run, hooks, records, stanza
from autotune_rewrite.locate.scan import scan
from autotune_rewrite.settings import load_settings
from capture_helpers import FIXTURES, launch, load_fixture

torch = pytest.importorskip("torch")


@pytest.fixture
def root(tmp_path, monkeypatch):
    shutil.copy(FIXTURES / "scaled_copy.py", tmp_path / "scaled_copy.py")
    monkeypatch.setenv(hooks.ENV, str(tmp_path / "records.jsonl"))
    hooks._seen_keys.clear()
    return tmp_path


def _args(n, dtype=torch.bfloat16, stride=1, one=1):
    return (torch.empty(max(n, 1), dtype=dtype), torch.empty(max(n, 1), dtype=torch.float32), 0.5, n, stride, one)


def _fold(root):
    return records.fold(records.read_records(root / "records.jsonl"), root)


def test_one_launch_shape_folds_into_one_spec(root):
    mod = load_fixture("scaled_copy", root)
    for batch in (1, 8, 32):
        launch(hooks, mod.scaled_copy_kernel, _args(512 * batch), {"HEAD": 8})
    result = _fold(root)
    (kc,) = result.kernels
    assert kc.ident == "scaled_copy.py::scaled_copy_kernel"
    assert kc.keys == ("n",)
    assert kc.key_values == ((("n", 512),), (("n", 4096),), (("n", 16384),))
    assert kc.dtypes == (("torch.bfloat16", "torch.float32"),)
    (spec,) = kc.specs
    assert spec.name == "captured HEAD=8"
    assert dict(spec.types) == {"src": "*bf16", "dst": "*fp32", "scale": "fp32", "n": "i32", "stride": "i32", "one": "i32"}
    assert spec.constexprs == (("HEAD", 8),)  # BLOCK is a config meta-param: not in the spec
    assert dict(spec.values) == {"n": 512, "stride": 1, "one": 1}
    assert set(spec.divisible_by_16) == {"src", "dst", "n"}
    # one compile per config (the three batches share the specialization)
    assert sorted((c.meta, c.num_warps, c.num_stages) for c in spec.compiles) == [
        ((("BLOCK", 64),), 2, 2), ((("BLOCK", 128),), 4, 3)]


def test_specializations_that_differ_become_named_specs(root):
    mod = load_fixture("scaled_copy", root)
    launch(hooks, mod.scaled_copy_kernel, _args(4096), {"HEAD": 8})
    launch(hooks, mod.scaled_copy_kernel, _args(4097), {"HEAD": 8})  # n no longer divisible by 16
    launch(hooks, mod.scaled_copy_kernel, _args(4096, stride=2), {"HEAD": 8})  # stride no longer == 1
    launch(hooks, mod.scaled_copy_kernel, _args(4096, dtype=torch.float16), {"HEAD": 4})
    (kc,) = _fold(root).kernels
    names = [s.name for s in kc.specs]
    # each name says what sets it apart from the others with the same constexprs
    assert names == ["captured HEAD=8 stride==1,n%16==0", "captured HEAD=8 stride==1,n%16!=0",
                     "captured HEAD=8 stride!=1,n%16==0", "captured HEAD=4"]
    by_name = {s.name: s for s in kc.specs}
    assert dict(by_name["captured HEAD=4"].types)["src"] == "*fp16"


def test_captured_spec_reproduces_the_runtime_specialization(root):
    """check's specialize(), fed the written stanza, gives what Triton's runtime gave."""
    mod = load_fixture("scaled_copy", root)
    launch(hooks, mod.scaled_copy_kernel, _args(4096), {"HEAD": 8})
    launch(hooks, mod.scaled_copy_kernel, _args(4097, stride=3), {"HEAD": 8})
    raw = records.read_records(root / "records.jsonl")
    result = records.fold(raw, root)
    stanza.merge_file(root / "autotune-rewrite.toml", capture_run.tables_for(result.kernels))
    entries = load_settings(root).kernels
    (site,) = scan(root, jobs=1).sites
    resolution = launch_spec.resolve_specs(site, entries)
    assert resolution.ok and len(resolution.specs) == 2
    compiles = [r for r in raw if r["event"] == "compile"]
    assert len(compiles) == 4
    for record in compiles:
        block = record["constants"]["BLOCK"]
        config = next(c for c in site.configs if c.kwargs["BLOCK"] == block)
        matches = []
        for spec in resolution.specs:
            spz = launch_spec.specialize(site, spec, config)
            matches.append(
                dict(spz.signature) == record["signature"]
                and dict(spz.constexprs) == record["constants"]
                and set(spz.divisible_by_16) == {k for k, v in record["attrs"].items() if ["tt.divisibility", 16] in v}
            )
        assert matches.count(True) == 1, record


def test_kernels_outside_the_root_are_skipped_with_the_reason(root, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    mod = load_fixture("scaled_copy", FIXTURES)
    launch(hooks, mod.scaled_copy_kernel, _args(64), {"HEAD": 8})
    result = records.fold(records.read_records(root / "records.jsonl"), elsewhere)
    assert result.kernels == ()
    assert "outside the root" in result.skipped[0] and "--root" in result.skipped[0]


def test_live_resources_are_read_from_the_compiled_kernel(root):
    """SMEM comes from the compiled kernel's metadata; registers from the driver where one loads the
    kernel (a GPU machine), else the load error is kept."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    mod = load_fixture("scaled_copy", root)
    jit = mod.scaled_copy_kernel.fn
    src = ASTSource(fn=jit, signature={"src": "*bf16", "dst": "*fp32", "scale": "fp32", "n": "i32", "stride": "constexpr",
                                       "one": "constexpr", "HEAD": "constexpr", "BLOCK": "constexpr"},
                    constexprs={"stride": 1, "one": 1, "HEAD": 8, "BLOCK": 64}, attrs={(0,): [["tt.divisibility", 16]]})
    kernel = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 2, "num_stages": 2})
    res = hooks._resources(kernel)
    assert res["shared"] == kernel.metadata.shared and res["target"] == "cuda:90"
    from conftest import has_gpu

    if has_gpu():
        assert res["n_regs"] > 0 and "load_error" not in res
    else:
        assert "n_regs" not in res and res["load_error"]


def test_tuple_none_and_dtype_parameters_are_folded_into_the_spec():
    # Tuples keep Triton's spelling, None is a constexpr "None", a dtype constexpr its tl./torch. name.
    record = {"params": [{"name": "x", "constexpr": False}, {"name": "opt", "constexpr": False},
                         {"name": "D", "constexpr": True}, {"name": "ACC", "constexpr": True},
                         {"name": "T", "constexpr": True}],
              "signature": {"x": ["*fp32", ["i32", "*bf16"]], "opt": "constexpr", "D": "constexpr",
                            "ACC": "constexpr", "T": "constexpr"},
              "constants": {"opt": None, "D": None, "ACC": {"dtype": "fp32"}, "T": {"dtype": "torch.float16"}},
              "attrs": {}, "values": {}}
    types, consts, values, divisible, notes = records._spec_facts(record, set())
    assert types == (("x", "(*fp32, (i32, *bf16))"), ("opt", "constexpr"))
    assert consts == (("opt", None), ("D", None), ("ACC", DtypeRef("tl", "float32")), ("T", DtypeRef("torch", "float16")))
    assert values == () and notes == ()


def test_tuple_holding_a_constexpr_is_a_note():
    record = {"params": [{"name": "x", "constexpr": False}], "signature": {"x": ["*fp32", "constexpr"]},
              "constants": {"x.1": 1}, "attrs": {}, "values": {}}
    types, *_, notes = records._spec_facts(record, set())
    assert types == () and any("tuple holding constexprs" in n for n in notes)


def test_unaligned_pointer_is_noted():
    record = {"params": [{"name": "x", "constexpr": False}], "signature": {"x": "*fp32"}, "constants": {},
              "attrs": {}, "values": {}}
    *_, notes = records._spec_facts(record, set())
    assert notes == ("pointer x was not 16-byte aligned at launch (check assumes aligned)",)



def _tma_records(file: str, shapes: list[dict]) -> list[dict]:
    # What the hooks write for a kernel whose pre_hook sets a_desc's block shape per config.
    kernel = {"file": file, "name": "tma_kernel", "qualname": "tma_kernel"}
    params = [{"name": "a_desc", "constexpr": False}, {"name": "M", "constexpr": False},
              *({"name": m, "constexpr": True} for m in ("BLOCK_M", "BLOCK_N", "BLOCK_K"))]
    out = [{"event": "autotune", "kernel": kernel, "keys": ["M"], "key_values": {"M": 4096}, "dtypes": [],
            "meta_params": ["BLOCK_M", "BLOCK_N", "BLOCK_K"], "configs": len(shapes)}]
    for meta in shapes:
        dims = f"1, {meta['BLOCK_M']}, {meta['BLOCK_K']}"
        out.append({"event": "compile", "kernel": kernel, "autotuned": True, "params": params,
                    "signature": {"a_desc": f"tensordesc<bf16[{dims}]>", "M": "i32", **{m: "constexpr" for m in meta}},
                    "constants": meta, "attrs": {"M": [["tt.divisibility", 16]]}, "values": {"M": 4096},
                    "options": {"num_warps": 4, "num_stages": 3}, "resources": {}})
    return out


def test_a_block_shape_the_configs_set_is_captured_in_the_symbolic_descriptor_form(tmp_path):
    file = str(tmp_path / "tma.py")
    shapes = [{"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64}, {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64},
              {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32}]
    (kernel,) = records.fold(_tma_records(file, shapes), tmp_path).kernels
    (spec,) = kernel.specs  # one spec, right for every config, not one per block shape
    assert dict(spec.types)["a_desc"] == "tensordesc<bf16[1, BLOCK_M, BLOCK_K]>"  # the fixed 1 stays as seen
    assert len(spec.compiles) == 3


def test_a_block_dim_two_meta_parameters_explain_equally_stays_as_seen(tmp_path):
    file = str(tmp_path / "tma.py")
    shapes = [{"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64}, {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}]
    (kernel,) = records.fold(_tma_records(file, shapes), tmp_path).kernels
    assert sorted(dict(s.types)["a_desc"] for s in kernel.specs) == ["tensordesc<bf16[1, 128, 64]>",
                                                                      "tensordesc<bf16[1, 64, 64]>"]
