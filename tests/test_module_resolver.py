"""The one module resolver: the same answers for the locator (a file list) and the loader (disk)."""

from __future__ import annotations

from pathlib import Path

import pytest

from autotune_rewrite.module_resolver import ModuleResolver

TREE = ("pkg/__init__.py", "pkg/ops/__init__.py", "pkg/ops/fused.py", "pkg/helpers.py",
        "src/lib/__init__.py", "src/lib/tiles.py", "scripts/run.py", "scripts/util.py")


@pytest.fixture(params=["files", "disk"])
def resolver(request, tmp_path: Path) -> ModuleResolver:
    for rel in TREE:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    (tmp_path.parent / "outside.py").write_text("")
    return ModuleResolver(tmp_path, TREE if request.param == "files" else None)


def test_absolute_relative_src_and_script_folders(resolver):
    assert resolver.find("pkg.ops.fused") == "pkg/ops/fused.py"
    assert resolver.find("pkg.ops") == "pkg/ops/__init__.py"
    assert resolver.find("lib.tiles") == "src/lib/tiles.py"  # a src/ layout
    assert resolver.find("util", importer="scripts/run.py") == "scripts/util.py"  # run from its folder
    assert resolver.find("helpers", importer="pkg/ops/fused.py", level=2) == "pkg/helpers.py"  # from ..helpers
    assert resolver.find("", importer="pkg/ops/fused.py", level=1) == "pkg/ops/__init__.py"  # from . import x
    assert resolver.find("torch") is None
    assert resolver.find("outside", importer="pkg/helpers.py", level=3) is None  # never above the root


def test_a_subfolder_scan_matches_a_unique_module_name_suffix(tmp_path):
    files = ("vllm/kernels/decode.py", "vllm/kernels/__init__.py")
    resolver = ModuleResolver(tmp_path, files)
    assert resolver.find("kernels.decode") == "vllm/kernels/decode.py"
    assert ModuleResolver(tmp_path, files + ("other/kernels/decode.py",)).find("kernels.decode") is None  # ambiguous
