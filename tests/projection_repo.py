"""A git repository in tmp holding the projection kernel (``projection_kernel``) with its configs
written somewhere, the ``prune`` run over it and the patched copy: shared by the in-place and
comprehension-condition rewrite tests. Every fixture is written as black and ruff format it, and
``formatted`` says whether a file still is."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from projection_kernel import PROJECTION_SETTINGS, projection_def
from rewrite_e2e import commit_tree

from autotune_rewrite.rewrite.diff import run_rewrites

HEAD = "import triton\nimport triton.language as tl\n"


def kernel(decorator: str, above: str = "", imports: str = "") -> str:
    gap = "\n\n\n" if above else "\n\n"  # two blank lines before a top-level def, as black writes
    return f"{imports}{HEAD}{above}{gap}{decorator}\n@triton.jit\n{projection_def('proj_kernel')}"


def repo(tmp_path: Path, files: dict[str, str], line_length: int = 120) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    # The formatters' own settings, as many kernel repositories have them (the kernel's lines are long).
    formatters = f"[tool.black]\nline-length = {line_length}\n\n[tool.ruff]\nline-length = {line_length}\n\n"
    (root / "pyproject.toml").write_text(formatters + PROJECTION_SETTINGS.replace("KERNEL", "proj_kernel"))
    for name, text in files.items():
        (root / name).write_text(text)
    return commit_tree(root)


def formatted(path: Path) -> dict[str, bool]:
    """Whether black and ruff's formatter leave ``path`` as it is."""
    out = {}
    checks = (("black", ["-m", "black", "--check", "-q"]), ("ruff", ["-m", "ruff", "format", "--check", "-q"]))
    for tool, args in checks:
        proc = subprocess.run([sys.executable, *args, str(path)], capture_output=True, text=True, cwd=path.parent)
        assert proc.returncode in (0, 1), proc.stderr  # 2: the formatter itself failed
        out[tool] = proc.returncode == 0
    return out


def diff(root: Path, cache: Path, variant: str = "prune", **kw):
    run = run_rewrites(root, variant, workers=2, cache_dir=cache, display_path=".", **kw)
    return run, {c.path: c for c in run.changes}


def patched(tmp_path: Path, root: Path, run) -> Path:
    """A copy of ``root`` with the run's changes written (the user's tree is never written)."""
    out = tmp_path / "patched"
    shutil.copytree(root, out, ignore=shutil.ignore_patterns(".git"))
    for c in run.changes:
        (out / c.path).write_text(c.after)
    return out
