"""A scan limited to one file of a project (``check pkg/ops/kern.py``) judges that file's kernels
as a scan of the whole project does: its configs may call the project's own helpers, and its
wrapper may live in another module."""

from __future__ import annotations

import subprocess
from pathlib import Path

from autotune_rewrite.locate.scan import scan
from autotune_rewrite.model import to_jsonable

TUNING = """def powers_of_2(lo, hi):
    return [2**i for i in range(lo, hi + 1)]
"""

KERNEL = """import triton
import triton.language as tl

from pkg.tuning import powers_of_2


@triton.autotune(configs=[triton.Config({"BLOCK": b}, num_warps=4) for b in powers_of_2(5, 7)], key=["n"])
@triton.jit
def scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
"""

LAYER = """import triton

from pkg.ops.kern import scale_kernel


def scale(x):
    n = x.numel()
    scale_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, n)
"""


def _project(root: Path, git: bool) -> Path:
    for rel, text in (("pkg/__init__.py", ""), ("pkg/tuning.py", TUNING), ("pkg/ops/__init__.py", ""),
                      ("pkg/ops/kern.py", KERNEL), ("pkg/layers.py", LAYER)):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    if git:
        subprocess.run(["git", "-C", str(root), "init", "-q"], check=True)
        subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    return root / "pkg" / "ops" / "kern.py"


def test_one_file_is_judged_as_the_whole_project_judges_it(tmp_path):
    for git in (False, True):
        root = tmp_path / f"git_{git}"
        root.mkdir()
        kern = _project(root, git)
        limited, whole = scan(root, paths=[kern], jobs=1), scan(root, jobs=1)
        assert limited.files_scanned == 1
        (site,) = limited.sites
        assert [c.kwargs["BLOCK"] for c in site.configs] == [32, 64, 128]
        assert [launch.path for launch in site.launches] == ["pkg/layers.py"]
        assert to_jsonable(limited.sites) == to_jsonable(whole.sites)
