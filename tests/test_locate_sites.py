"""Every autotune shape of the fixture repo, resolved statically (or refused with a reason)."""

from __future__ import annotations

import pytest

from autotune_rewrite.locate.scan import find_site, scan
from autotune_rewrite.errors import UserError
from locate_helpers import REPO, by_kernel, text_at


@pytest.fixture(scope="module")
def result():
    return scan(REPO, jobs=1)


def labels(site):
    return [c.label() for c in site.configs]


def test_no_errors_and_no_lookalikes(result):
    assert result.errors == ()
    assert result.files_scanned == 11
    assert not [s for s in result.sites if s.path == "pkg/lookalikes.py"]
    assert len(result.sites) == 16


def test_decorator_stack_params_and_options(result):
    s = by_kernel(result, "decode_kernel", "pkg/kernels.py")
    assert s.form == "decorator" and s.line == 5
    assert labels(s) == ["BLOCK_T=16 w4 s2", "BLOCK_T=32 w4 s2", "BLOCK_T=32 w8 s2"]
    assert s.configs_origin == "literal list"
    assert s.decorators == ("triton.autotune", "triton.heuristics", "triton.jit")
    assert s.key == ("topk_rounded",)
    assert s.reset_to_zero == ("Out",) and s.restore_value is None
    assert s.prune_configs_by == '{"early_config_prune": None, "top_k": 2}'
    assert s.do_not_specialize == ("stride_q", "bs_hint")  # a name and an index
    params = {p.name: p for p in s.params}
    assert [p.name for p in s.params][:6] == ["Q", "Out", "stride_q", "n", "topk_rounded", "bs_hint"]
    assert params["topk_rounded"].annotation == "int" and not params["topk_rounded"].is_constexpr
    assert params["BLOCK_H"].is_constexpr and params["BLOCK_H"].default == "16"
    assert params["EVEN"].is_constexpr  # string annotation "tl.constexpr"
    assert params["bs_hint"].default == "1"
    src = (REPO / s.path).read_text()
    assert text_at(src, s.span).startswith("triton.autotune(")
    assert text_at(src, s.key_span) == '["topk_rounded"]'
    assert text_at(src, s.kernel_span).startswith("def decode_kernel(")
    assert text_at(src, s.kernel_span).endswith("tl.store(Out + pid * BLOCK_T + offs, x)")
    for c in s.configs:
        assert c.path == "pkg/kernels.py"
        assert text_at(src, c.span).startswith("triton.Config({")


@pytest.mark.parametrize("kernel, origin, expected", [
    ("k_comprehension", "comprehension", ["BLOCK=16 w4 s3", "BLOCK=16 w8 s3", "BLOCK=32 w4 s3"]),
    ("k_concat", "literal list, module variable, concatenation",
     ["BLOCK=32 w4 s3", "BLOCK=64 w8 s3", "BLOCK=128 w8 s4 maxnreg128"]),
    ("k_local_helper", "helper function, comprehension",
     ["BLOCK=32 SPLIT=1 w4 s3", "BLOCK=32 SPLIT=2 w4 s3", "BLOCK=64 SPLIT=1 w4 s3"]),
    ("k_imported_helper", "imported from pkg.helpers, helper function",
     ["BLOCK_T=16 w4 s2", "BLOCK_T=16 w4 s3", "BLOCK_T=32 w4 s2"]),
    ("k_imported_var", "imported from pkg.helpers", ["BLOCK_M=64 w4 s3"]),
    ("k_filter", "literal list, module variable, concatenation, filter", ["BLOCK=64 w8 s3", "BLOCK=128 w8 s4 maxnreg128"]),
    # ``BASE if os.environ.get("FAST") else EXTRA``: FAST at its default (unset), never the union
    ("k_conditional", "literal list, module variable, environment: FAST read as unset (--env FAST=VALUE or "
     "[tool.autotune-rewrite.env] to choose)", ["BLOCK=128 w8 s4 maxnreg128"]),
    ("k_positional", "literal list", ["BLOCK=16 w2 s1"]),
])
def test_config_shapes(result, kernel, origin, expected):
    s = by_kernel(result, kernel)
    assert labels(s) == expected
    assert s.configs_origin == origin
    assert s.unresolved_reason is None


def test_spans_of_module_variable_and_helper_configs(result):
    s = by_kernel(result, "k_concat")
    src = (REPO / "pkg/shapes.py").read_text()
    assert [text_at(src, c.span) for c in s.configs[:2]] == ['Config({"BLOCK": 32}, num_warps=4)',
                                                             'Config({"BLOCK": 64}, num_warps=8)']
    assert s.configs[2].num_ctas == 1 and s.configs[2].maxnreg == 128
    imported = by_kernel(result, "k_imported_var").configs[0]
    assert imported.path == "pkg/helpers.py"
    assert by_kernel(result, "k_imported_var").key == ("n", "m")  # key from another module
    assert text_at((REPO / "pkg/helpers.py").read_text(), imported.span).startswith("triton.Config(")
    assert all(c.span is None for c in by_kernel(result, "k_comprehension").configs)  # generated


def test_unresolved_are_never_guessed(result):
    yaml_site = by_kernel(result, "k_yaml")
    # A path relative to the working directory is only known at run time (one from __file__ is read).
    assert yaml_site.configs is None and "`blocks.yaml`, relative to the working directory" in yaml_site.unresolved_reason
    kw = by_kernel(result, "k_kwargs")
    assert kw.configs is None and kw.unresolved_reason == "autotune arguments are passed through **OPTS"
    assert kw.key is None


def test_aliases(result):
    tt = by_kernel(result, "via_tt")
    assert tt.decorators == ("triton.autotune", "triton.jit") and labels(tt) == ["B=1 w1 s3"]
    assert tt.params[1].is_constexpr
    rt = by_kernel(result, "via_runtime")
    assert rt.decorators[0] == "triton.runtime.autotune"
    assert rt.configs[0].has_pre_hook and rt.configs[0].kwargs == {"B": 2}
    tuner = by_kernel(result, "k_concat")
    assert tuner.decorators[0] == "triton.runtime.autotuner.autotune"


def test_call_form(result):
    s = by_kernel(result, "_raw")
    assert s.form == "call" and s.decorators == ("triton.autotune", "triton.jit")
    assert [p.name for p in s.params] == ["X", "n", "BLOCK"]
    src = (REPO / s.path).read_text()
    assert text_at(src, s.span) == 'triton.autotune(configs=BASE, key=["n"])'
    assert [(l.path, l.line, l.callee) for l in s.launches] == [("pkg/shapes.py", 95, "k_call")]


def test_launches_across_files_with_duplicate_names(result):
    main = by_kernel(result, "decode_kernel", "pkg/kernels.py")
    other = by_kernel(result, "decode_kernel", "pkg/other/kernels.py")
    assert [(l.path, l.line) for l in main.launches] == [("pkg/caller.py", 8), ("pkg/caller.py", 9), ("pkg/kernels.py", 27)]
    assert [(l.path, l.line) for l in other.launches] == [("pkg/other/run.py", 5)]
    direct, reexported, local = main.launches
    assert direct.positional == 4 and direct.keywords == ("topk_rounded", "BLOCK_H") and direct.function == "run"
    assert reexported.grid == "grid" and reexported.has_star_args and reexported.callee == "reexported"
    assert local.function == "launch_decode"
    assert other.launches[0].callee == "kernels.decode_kernel"


def test_alias_and_wrap_triton_launches(result):
    for kernel in ("k_comprehension", "k_concat"):
        assert [(l.line, l.callee) for l in by_kernel(result, kernel).launches] == [(94, "fn")]
    wrapped = by_kernel(result, "k_filter").launches
    assert [(l.line, l.keywords) for l in wrapped] == [(97, ("n",))]


def test_find_site(result):
    assert find_site(result, "k_yaml").path == "pkg/shapes.py"
    assert find_site(result, "pkg/other/kernels.py::decode_kernel").key == ("n",)
    assert find_site(result, "missing") is None
    with pytest.raises(UserError, match="ambiguous"):
        find_site(result, "decode_kernel")


def test_call_form_over_a_kernel_from_another_module(result):
    s = by_kernel(result, "raw_kernel")
    assert s.form == "call" and s.path == "pkg/shapes.py" and s.kernel_path == "pkg/raw.py"
    assert s.do_not_specialize == ("n",) and [p.name for p in s.params] == ["X", "n", "BLOCK"]
    assert s.params[2].default == "32" and s.params[2].is_constexpr
    assert text_at((REPO / "pkg/raw.py").read_text(), s.kernel_span).startswith("def raw_kernel(")
    assert labels(s) == ["BLOCK=128 w8 s4 maxnreg128"]
