"""Helpers for the interrupt and read-only tests: a tiny two-config kernel in a temporary git
repository, and the CLI started as a real subprocess with a private TMPDIR and compile cache."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from rewrite_e2e import commit_tree
from repo_env import pythonpath

KERNEL = '''import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 128}, num_warps=4, num_stages=2),
        triton.Config({"BLOCK": 128}, num_warps=2, num_stages=2),
    ],
    key=["n"],
)
@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def add(x, y, out):
    n = x.numel()
    _add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, out, n)
'''

PYPROJECT = '''[project]
name = "tiny-add"
version = "0"

[tool.autotune-rewrite]
arch = ["sm_120"]

[[tool.autotune-rewrite.kernels]]
kernel = "tiny/add.py::_add_kernel"
spec = "fp32"
types = { x_ptr = "*fp32", y_ptr = "*fp32", out_ptr = "*fp32", n = "i32" }
values = { n = 4096 }
'''

BRANCH = "autotune-rewrite/sm_120/_add_kernel-v1"


def tiny_repo(tmp: Path, name: str = "repo") -> Path:
    root = tmp / name
    (root / "tiny").mkdir(parents=True)
    (root / "tiny" / "__init__.py").write_text("")
    (root / "tiny" / "add.py").write_text(KERNEL)
    (root / "pyproject.toml").write_text(PYPROJECT)
    return commit_tree(root, "tiny kernel")


def env_for(tmpdir: Path, cache: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = pythonpath(env=env)
    env["AUTOTUNE_REWRITE_CACHE_DIR"] = str(cache)
    env["TMPDIR"] = str(tmpdir)
    env["NO_COLOR"] = "1"
    env.pop("FORCE_COLOR", None)
    env.update(extra)
    return env


def spawn(*args, cwd: Path, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "autotune_rewrite", *map(str, args)], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def pipe_holders(proc: subprocess.Popen) -> list[str]:
    """The processes (pid and command line) that still hold ``proc``'s stdout/stderr pipes open:
    what a ``communicate`` after ``proc`` died is waiting for. Linux (/proc); elsewhere empty."""
    pipes = set()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None and not stream.closed:
            try:
                pipes.add(os.readlink(f"/proc/self/fd/{stream.fileno()}"))
            except OSError:
                pass
    found = []
    for pid in (p for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()) if pipes else ():
        try:
            held = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if held & pipes:
            found.append(f"{pid}: {cmd.strip()}")
    return found


def ours(tmpdir: Path) -> list[str]:
    """Temp folders of ours left in a private TMPDIR."""
    return sorted(p.name for p in tmpdir.iterdir() if p.name.startswith("autotune-rewrite-"))
