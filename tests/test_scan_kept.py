"""The in-process scan parses each file once: linking reuses the modules pass 1 kept (a site
whose configs come from another module, a launched kernel's parameters), with the same sites
as a scan in a worker pool, and keeps nothing after the scan."""

from __future__ import annotations

from pathlib import Path

from autotune_rewrite.locate import facts
from autotune_rewrite.locate.parsed import ParsedModule
from autotune_rewrite.locate.scan import scan

CONFIGS = '''\
import triton

CONFIGS = [triton.Config({"BLOCK": 32}, num_warps=4), triton.Config({"BLOCK": 64}, num_warps=8)]
'''

KERNEL = '''\
import triton
import triton.language as tl

from pkg.configs import CONFIGS


@triton.autotune(configs=CONFIGS, key=["n"])
@triton.jit
def add_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)
'''

CALLER = '''\
from pkg.kernels import add_kernel


def run(x, n):
    add_kernel[(n // 32,)](x, n)
'''


def _tree(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "configs.py").write_text(CONFIGS)
    (root / "pkg" / "kernels.py").write_text(KERNEL)
    (root / "pkg" / "ops.py").write_text(CALLER)
    return root


def test_each_file_is_parsed_once_and_the_sites_are_the_pool_s(tmp_path, monkeypatch):
    root = _tree(tmp_path / "repo")
    pooled = scan(root, jobs=2)
    parses: list[str] = []
    real = ParsedModule.parse.__func__

    def counting(cls, path, *args, **kwargs):
        parses.append(path)
        return real(cls, path, *args, **kwargs)

    monkeypatch.setattr(ParsedModule, "parse", classmethod(counting))
    serial = scan(root, jobs=1)
    assert [(s.ident, s.configs, [ln.path for ln in s.launches]) for s in serial.sites] == [
        (s.ident, s.configs, [ln.path for ln in s.launches]) for s in pooled.sites]
    site = serial.sites[0]
    assert [c.kwargs["BLOCK"] for c in site.configs] == [32, 64] and site.launches
    assert parses.count("pkg/kernels.py") == 1  # linking took pass 1's module
    assert facts._KEPT == {}  # nothing outlives the scan
