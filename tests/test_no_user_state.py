"""No test writes the user's ``~/.triton`` or ``~/.cache/autotune-rewrite``.

conftest points Triton's home, cache, dump and override folders and the tool's compile cache into
folders of the test session before anything imports triton; subprocesses inherit them. The CLI
itself, run with HOME elsewhere and none of those variables set, compiles without leaving a
``.triton`` behind (the engine gives every compile a scratch Triton cache)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from repo_env import pythonpath

ROOT = Path(__file__).resolve().parents[1]
_PLACES = "import json, triton.knobs as k; print(json.dumps([k.cache.home_dir, k.cache.dir, k.cache.dump_dir, k.cache.override_dir]))"


def _under(path: str, folder: Path) -> bool:
    return Path(path).resolve().is_relative_to(folder.resolve())


def test_the_session_sends_triton_and_the_compile_cache_to_its_own_folders():
    import triton.knobs

    home = Path(os.environ["TRITON_HOME"])
    assert home.resolve() != Path.home().resolve()
    c = triton.knobs.cache
    assert all(_under(p, home) for p in (c.home_dir, c.dir, c.dump_dir, c.override_dir))  # in process
    out = subprocess.run([sys.executable, "-c", _PLACES], capture_output=True, text=True, check=True).stdout
    places = json.loads(out)  # as a subprocess (the CLI, drive.py, capture) sees them
    assert all(_under(p, home) for p in places), places
    assert not any(_under(p, Path.home() / ".triton") for p in places), places
    cache = Path(os.environ["AUTOTUNE_REWRITE_CACHE_DIR"])
    assert not _under(str(cache), Path.home() / ".cache"), cache


# One small config: a real cold compile through the CLI in a second or two. (Not copy.py:
# ``python -m`` puts the working folder first on sys.path, where it would shadow the stdlib's.)
KERNEL = """import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 64}, num_warps=1)], key=["n"])
@triton.jit
def copy_kernel(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)
"""
PYPROJECT = """[[tool.autotune-rewrite.kernels]]
kernel = "tiny.py::copy_kernel"
types = { src = "*fp32", dst = "*fp32", n = "i32" }
"""


def test_a_cli_compile_leaves_no_triton_folder_in_home(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "tiny.py").write_text(KERNEL)
    (repo / "pyproject.toml").write_text(PYPROJECT)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("TRITON_") and k not in ("AUTOTUNE_REWRITE_CACHE_DIR", "XDG_CACHE_HOME")}
    env.update(HOME=str(home), NO_COLOR="1", PYTHONPATH=pythonpath(env=env))
    proc = subprocess.run([sys.executable, "-m", "autotune_rewrite", "check", ".", "--arch", "sm_120",
                           "--format", "json", "-j", "1"], cwd=repo, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["compiled"] > 0  # a cold cache: Triton really compiled
    assert (home / ".cache" / "autotune-rewrite").is_dir()  # the tool's own cache, where it belongs
    assert not (home / ".triton").exists()
