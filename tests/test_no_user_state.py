"""No test writes the user's ``~/.triton`` or ``~/.cache/autotune-rewrite``.

conftest points Triton's home, cache, dump and override folders and the tool's compile cache into
folders of the test session before anything imports triton; subprocesses inherit them. The CLI
itself, run with HOME elsewhere and none of those variables set, compiles without leaving a
``.triton`` behind (the engine gives every compile a scratch Triton cache)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECK_REPO = ROOT / "tests" / "fixtures" / "check" / "repo"
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


def test_a_cli_compile_leaves_no_triton_folder_in_home(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    repo = tmp_path / "repo"
    shutil.copytree(CHECK_REPO, repo)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("TRITON_") and k not in ("AUTOTUNE_REWRITE_CACHE_DIR", "XDG_CACHE_HOME")}
    env.update(HOME=str(home), NO_COLOR="1", PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])))
    proc = subprocess.run([sys.executable, "-m", "autotune_rewrite", "check", ".", "--kernel",
                           "kernels/transpose.py::transpose_kernel", "--format", "json", "-j", "1"],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stderr  # the fixture has a config that cannot launch on sm_120
    assert json.loads(proc.stdout)["compiled"] > 0  # a cold cache: Triton really compiled
    assert (home / ".cache" / "autotune-rewrite").is_dir()  # the tool's own cache, where it belongs
    assert not (home / ".triton").exists()
