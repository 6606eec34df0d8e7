"""A synthetic repository of about 200 autotune sites, shaped like a real kernel library.

``make_repo(dst, files=40, kernels_per_file=5, specs=8)`` writes a git checkout with:

- ``kernels/mod_NN.py``: ``kernels_per_file`` autotuned kernels each (10 to 30 literal configs,
  a loop over columns, helpers imported from ``kernels/helpers.py``), a launch wrapper per
  kernel, and plain host-side Python between them (argument checks, docstrings), so that a file
  is as long as a real one (about 60 lines per kernel) and its LibCST passes cost what real ones do;
- ``kernels/helpers.py``: the ``@triton.jit`` helpers every kernel module imports;
- ``ops/api.py``: the public functions that call the launch wrappers across modules;
- ``autotune-rewrite.toml``: complete launch specs for the first kernel of the first ``specs``
  files (those are compiled), so the other kernels are ``needs_spec``, as in a repository
  nobody has configured yet.

Everything is deterministic (a seeded RNG), so two runs measure the same tree.
"""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

HELPERS = '''\
"""Tile helpers shared by every kernel module."""
import triton
import triton.language as tl


@triton.jit
def masked_row_load(ptr, rows, cols, n_rows, n_cols, stride):
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    return tl.load(ptr + rows[:, None] * stride + cols[None, :], mask=mask, other=0.0)


@triton.jit
def squared(x):
    x32 = x.to(tl.float32)
    return x32 * x32


@triton.jit
def scaled(x, scale):
    return x * scale
'''

KERNEL = '''

@triton.autotune(
    configs=[
{configs}
    ],
    key=["n_rows", "n_cols"],
)
@triton.jit
def {name}(
    x_ptr,
    y_ptr,
    n_rows,
    n_cols,
    stride_x,
    scale,
    BLOCK_R: tl.constexpr,
    BLOCK_C: tl.constexpr,
):
    """Row statistic {index} of this module: sum of squares over the columns, scaled."""
    pid = tl.program_id(0)
    rows = pid * BLOCK_R + tl.arange(0, BLOCK_R)
    acc = tl.zeros((BLOCK_R,), dtype=tl.float32)
    for c in tl.range(0, n_cols, BLOCK_C):
        cols = c + tl.arange(0, BLOCK_C)
        x = masked_row_load(x_ptr, rows, cols, n_rows, n_cols, stride_x)
        acc += tl.sum(squared(x), axis=1)
    acc = scaled(acc, scale) + {index}.0
    tl.store(y_ptr + rows, tl.sqrt(acc), mask=rows < n_rows)


def _check_{name}(x):
    """Host-side checks, as real wrappers have them (never executed by the tool)."""
    if x.dim() != 2:
        raise ValueError(f"expected a 2-D tensor, got {{x.dim()}} dimensions")
    if not x.is_contiguous():
        x = x.contiguous()
    return x


def launch_{name}(x, scale=1.0):
    x = _check_{name}(x)
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows,), dtype=torch.float32, device=x.device)
    grid = lambda meta: (triton.cdiv(n_rows, meta["BLOCK_R"]),)
    {name}[grid](x, y, n_rows, n_cols, x.stride(0), scale)
    return y
'''

MODULE_HEAD = '''\
"""Kernel module {file}: row statistics (synthetic, for the first-verdict benchmark)."""
import torch
import triton
import triton.language as tl

from .helpers import masked_row_load, scaled, squared
'''

SPEC = '''
[[kernels]]
kernel = "kernels/{module}.py::{name}"
spec = "bf16"
types = {{ x_ptr = "*bf16", y_ptr = "*fp32", n_rows = "i32", n_cols = "i32", stride_x = "i32", scale = "fp32" }}
values = {{ n_cols = 4096, stride_x = 4096 }}
'''

# Tiles small enough to compile quickly (~0.2 s each) and to launch on sm_120.
_SHAPES = [(r, c, w, s) for r in (1, 2, 4, 8, 16) for c in (64, 128, 256, 512, 1024)
           for w in (1, 2, 4, 8) for s in (1, 2, 3)]


def kernel_name(file: int, index: int) -> str:
    return f"row_stat_{file:02d}_{index}"


def make_repo(dst: Path, files: int = 40, kernels_per_file: int = 5, specs: int = 8, seed: int = 9) -> Path:
    """Write the tree under ``dst`` (created), commit it, return ``dst``."""
    rng = random.Random(seed)
    pkg = dst / "kernels"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "helpers.py").write_text(HELPERS)
    calls, settings = [], ['arch = ["sm_120"]\n']
    for f in range(files):
        module = f"mod_{f:02d}"
        parts = [MODULE_HEAD.format(file=module)]
        for k in range(kernels_per_file):
            name = kernel_name(f, k)
            shapes = rng.sample(_SHAPES, rng.randint(10, 30))
            configs = "\n".join(f'        triton.Config({{"BLOCK_R": {r}, "BLOCK_C": {c}}}, num_warps={w}, num_stages={s}),'
                                for r, c, w, s in shapes)
            parts.append(KERNEL.format(configs=configs, name=name, index=k))
            calls.append((module, name))
        (pkg / f"{module}.py").write_text("".join(parts))
        if f < specs:
            settings.append(SPEC.format(module=module, name=kernel_name(f, 0)))
    (dst / "ops").mkdir()
    (dst / "ops" / "__init__.py").write_text("")
    imports = "".join(f"from kernels.{m} import launch_{n}\n" for m, n in calls)
    bodies = "".join(f"\n\ndef {n}(x):\n    return launch_{n}(x)\n" for _, n in calls)
    (dst / "ops" / "api.py").write_text('"""Public ops."""\n' + imports + bodies)
    (dst / "autotune-rewrite.toml").write_text("".join(settings))
    git = ["git", "-C", str(dst), "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    subprocess.run([*git[:3], "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "synthetic kernels"], check=True)
    return dst


if __name__ == "__main__":
    import sys

    print(make_repo(Path(sys.argv[1])))
