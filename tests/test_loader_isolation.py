"""Isolated kernel loading: the bundle holds what the kernel needs and nothing runs the module.

The fixture module ``pkg/ops/fused.py`` imports a package that is not installed, writes a file
next to itself and raises at import. The bundle must still compile for sm_120, and the fixture
tree must be byte-identical afterwards (nothing written).
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from autotune_rewrite.compile.crosscompile import compile_job, load_kernel
from autotune_rewrite.evidence import CompileJob
from autotune_rewrite.isolate.kernel_loader import KernelLoadError, load_bundle

FIXTURE = Path(__file__).parent / "fixtures" / "loader" / "hostile_repo"


def _tree_digest(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    dst = tmp_path / "repo"
    shutil.copytree(FIXTURE, dst)
    return dst


def test_bundle_holds_exactly_what_the_kernel_needs(repo: Path):
    bundle = load_bundle(repo, "pkg/ops/fused.py", "fused_kernel")
    src = bundle.source
    assert bundle.origin == "pkg/ops/fused.py::fused_kernel" and bundle.kernel == "fused_kernel"
    # The kernel with @triton.jit and its arguments, without autotune/heuristics.
    assert '@triton.jit(do_not_specialize=["n"])\ndef fused_kernel(' in src
    assert "@triton.autotune" not in src and "heuristics" not in src
    # Helpers through `from .tile_math import round_up as up`, an absolute import, and a module alias.
    assert "def round_up(" in src and "up = round_up" in src
    assert "def scaled(" in src
    assert "reductions = _ar_types.ModuleType('reductions')" in src and "reductions.row_sum = row_sum" in src
    # Constants: the ones read (also through a helper's default), static only.
    for line in ("BLOCK_DEFAULT = 64", "WIDE = BLOCK_DEFAULT * 2", "ROW_ALIGN = tl.constexpr(16)",
                 "SCALE_SHIFT = 3", "_GUARD = tl.constexpr(1)"):
        assert line in src
    for absent in ("DEVICE_NAME", "engine_runtime", "not_installed_engine", "torch", "host_helper",
                   "TOP_LEVEL_RAN", "RuntimeError", "import os"):
        assert absent not in src
    # The engine re-exported `tl, triton`: replaced by the real Triton imports.
    assert "import triton\n" in src and "import triton.language as tl\n" in src


def test_hostile_module_is_compiled_without_running_it(repo: Path):
    before = _tree_digest(repo)
    bundle = load_bundle(repo, "pkg/ops/fused.py", "fused_kernel")
    fn = load_kernel(bundle)
    assert fn.arg_names == ["x_ptr", "out_ptr", "n", "BLOCK", "EVEN", "W"]
    job = CompileJob(
        bundle=bundle,
        signature=(("x_ptr", "*fp32"), ("out_ptr", "*fp32"), ("n", "i32"), ("BLOCK", "constexpr"),
                   ("EVEN", "constexpr"), ("W", "constexpr")),
        constexprs=(("BLOCK", 64), ("EVEN", True), ("W", 128)),
        divisible_by_16=("x_ptr", "out_ptr"),
        num_warps=4, num_stages=2, num_ctas=1, maxnreg=None, capability=120,
    )
    outcome = compile_job(job)
    assert outcome.error is None, outcome.error
    assert outcome.registers is not None and outcome.shared_bytes is not None
    assert not (repo / "pkg" / "ops" / "TOP_LEVEL_RAN").exists()
    assert _tree_digest(repo) == before


def test_missing_kernel_and_name_clash_are_load_errors(repo: Path):
    with pytest.raises(KernelLoadError, match="no function named 'nope'"):
        load_bundle(repo, "pkg/ops/fused.py", "nope")
    (repo / "pkg" / "ops" / "clash.py").write_text(
        "import triton\n"
        "from .tile_math import round_up as helper\n"
        "from .reductions import row_sum\n\n"
        "@triton.jit\n"
        "def round_up(x):\n"
        "    return x\n\n"
        "@triton.jit\n"
        "def k(x):\n"
        "    return helper(round_up(x), 2) + row_sum(x)\n"
    )
    with pytest.raises(KernelLoadError, match="would share the name 'round_up'"):
        load_bundle(repo, "pkg/ops/clash.py", "k")


def test_kernel_wrapped_by_a_call_gets_jit(repo: Path):
    (repo / "pkg" / "ops" / "called.py").write_text(
        "import triton\nimport triton.language as tl\n\n"
        "def raw(x_ptr, BLOCK: tl.constexpr):\n"
        "    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)\n\n"
        "kernel = triton.autotune(configs=[triton.Config({'BLOCK': 32})], key=[])(triton.jit(raw))\n"
    )
    bundle = load_bundle(repo, "pkg/ops/called.py", "raw")
    assert "@_ar_triton.jit\ndef raw(" in bundle.source and "import triton as _ar_triton" in bundle.source
    assert hasattr(load_kernel(bundle), "arg_names")


def test_bundle_cache_is_reused_until_any_source_file_changes(repo: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    first = load_bundle(repo, "pkg/ops/fused.py", "fused_kernel", cache)
    (entry,) = (cache / "bundles").rglob("*.json")
    assert load_bundle(repo, "pkg/ops/fused.py", "fused_kernel", cache) == first
    # A helper module (not the kernel's own file) changes: the bundle is rebuilt with it.
    helper = repo / "pkg" / "ops" / "tile_math.py"
    helper.write_text(helper.read_text().replace("SCALE_SHIFT = 3", "SCALE_SHIFT = 4"))
    second = load_bundle(repo, "pkg/ops/fused.py", "fused_kernel", cache)
    assert "SCALE_SHIFT = 4" in second.source and second != first
    assert [p.name for p in (cache / "bundles").rglob("*.json")] == [entry.name]


def test_launch_only_jit_arguments_are_dropped(repo: Path):
    (repo / "pkg" / "ops" / "profiled.py").write_text(
        "import triton\nimport triton.language as tl\n\n"
        "def _flops(grid, kernel, args):  # host-side profiler hook\n"
        "    return {'flops': 2 * args['n']}\n\n"
        "@triton.jit(launch_metadata=_flops, do_not_specialize=['n'])\n"
        "def k(x_ptr, n, BLOCK: tl.constexpr):\n"
        "    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0, mask=tl.arange(0, BLOCK) < n)\n"
    )
    bundle = load_bundle(repo, "pkg/ops/profiled.py", "k")
    assert "@triton.jit(do_not_specialize=['n'])\ndef k(" in bundle.source and "_flops" not in bundle.source
    assert load_kernel(bundle).do_not_specialize == ["n"]
