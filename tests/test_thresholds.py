"""A constexpr the kernel computes with and compares with numbers (``if SPLIT > 1:``), whose value
no code gives, is judged on each side of every comparison (``spec/thresholds.py``), not left
``needs_spec``. Fixtures written here, in the shape of split-K GEMMs."""

from __future__ import annotations

import textwrap
from pathlib import Path

from autotune_rewrite.locate.scan import scan
from autotune_rewrite.spec import launch_spec
from autotune_rewrite.spec.thresholds import thresholds_of

KERNEL = '''
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["n"])
@triton.jit
def split_kernel(x_ptr, out_ptr, n, SPLIT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for k in range(tl.program_id(1), n, SPLIT):
        acc += tl.load(x_ptr + k * BLOCK + offs)
    if SPLIT > 1:
        tl.atomic_add(out_ptr + offs, acc)
    else:
        tl.store(out_ptr + offs, acc)
'''

WRAPPER = '''
import torch
from .kernels import split_kernel


def split_sum(x, n):
    out = torch.zeros(128, device=x.device, dtype=torch.float32)
    split = max(1, n // 4096)
    split_kernel[(1, split)](x, out, n, SPLIT=split)
    return out
'''


def test_a_split_factor_is_judged_on_each_side_of_its_comparison(tmp_path: Path):
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "kernels.py").write_text(KERNEL)
    (root / "pkg" / "ops.py").write_text(WRAPPER)
    (site,) = scan(root, jobs=1).sites
    res = launch_spec.resolve_specs(site, kernel_source=KERNEL)
    assert res.ok, res.missing
    assert sorted(dict(s.constexprs)["SPLIT"] for s in res.specs) == [1, 2]
    assert len({s.family for s in res.specs}) == 1 and all(dict(s.ranged).keys() == {"SPLIT"} for s in res.specs)
    (a,) = [a for a in res.specs[0].assumptions if a.parameter == "SPLIT"]
    assert "compares with numbers: judged at each of {1, 2}" in a.source
    exact = launch_spec.resolve_specs(site, kernel_source=KERNEL, exact=True)
    assert "SPLIT" in dict(exact.missing)["default"]  # --exact assumes nothing


def test_the_values_sit_on_each_side_of_every_comparison():
    source = textwrap.dedent('''
        @triton.jit
        def k(x_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, FLAG: tl.constexpr, T: tl.constexpr,
              SCALE: tl.constexpr):
            y = tl.load(x_ptr + A * B + C)
            if SCALE != 1.0:
                y = y * SCALE
            if 1 < A:
                y += 1
            if B >= 4 and FLAG:
                y += 2
            z = tl.arange(0, T)
            if T > 2:
                y += 3
            tl.store(x_ptr, y)
    ''')
    found = thresholds_of(source, "k", {"A", "B", "C", "FLAG", "T", "SCALE"})
    # A: ``1 < A`` read as ``A > 1``; B: ``>= 4``; C: arithmetic only (no comparison); FLAG: a
    # flag, not compared; T: a tile extent as well, so not arithmetic; SCALE: a float, either side of 1.0.
    assert found == {"A": (1, 2), "B": (3, 4), "SCALE": (1.0, 2.0)}
