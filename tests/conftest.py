"""Session-wide test setup.

Set at import time, before any test module imports triton, and inherited by every subprocess
(the CLI runs, ``drive.py`` under ``TRITON_INTERPRET=1``, ``capture``):

- Triton's home, cache, dump and override folders point into a private folder of this session,
  so no test writes the user's ``~/.triton`` (``tests/test_no_user_state.py`` proves it).
- One compile-outcome cache for the whole session (``AUTOTUNE_REWRITE_CACHE_DIR``), so the
  example's configs are compiled once per run whichever test needs them first, in process or
  through the CLI, and the user's ``~/.cache/autotune-rewrite`` is never written. It persists
  between runs in ``.pytest-autotune-cache/`` (gitignored), in a folder named after the engine's
  code: the tool's cache is keyed by everything a compile reads, and the folder name adds the
  code that turns a compile into an outcome, so a warm run can never serve a stale result. A
  fresh clone (CI) starts cold; ``AUTOTUNE_REWRITE_TEST_COLD=1`` forces a cold run here.

GPU tests are skipped where no CUDA device is visible (CI).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The code between a CompileJob and its stored CompileOutcome that the outcome key does not hash.
_ENGINE_FILES = ("compile/crosscompile.py", "compile/compile_pool.py", "resources.py", "compile/compile_cache.py",
                 "evidence.py")


def _engine_digest() -> str:
    h = hashlib.sha256()
    for name in _ENGINE_FILES:
        h.update(name.encode() + b"\0" + (ROOT / "autotune_rewrite" / name).read_bytes())
    return h.hexdigest()[:16]


_OWNED: list[Path] = []  # temporary folders this process made (and removes at the end)


def _temporary(env_var: str, prefix: str) -> Path:
    # xdist workers inherit the controller's environment: the folder is made once, shared.
    inherited = os.environ.get(env_var)
    if inherited:
        return Path(inherited)
    made = Path(tempfile.mkdtemp(prefix=prefix))
    _OWNED.append(made)
    return made


def _session_compile_cache() -> Path:
    if os.environ.get("AUTOTUNE_REWRITE_TEST_COLD") == "1":
        return _temporary("AUTOTUNE_REWRITE_TEST_CACHE", "autotune-rewrite-tests-cold-")
    return ROOT / ".pytest-autotune-cache" / _engine_digest()


def _private_triton_home() -> Path:
    return _temporary("AUTOTUNE_REWRITE_TEST_TRITON_HOME", "autotune-rewrite-tests-triton-")


SESSION_CACHE = _session_compile_cache()
TRITON_HOME = _private_triton_home()
os.environ["AUTOTUNE_REWRITE_TEST_CACHE"] = str(SESSION_CACHE)
os.environ["AUTOTUNE_REWRITE_TEST_TRITON_HOME"] = str(TRITON_HOME)
os.environ["AUTOTUNE_REWRITE_CACHE_DIR"] = str(SESSION_CACHE)
os.environ["TRITON_HOME"] = str(TRITON_HOME)
for _var, _sub in (("TRITON_CACHE_DIR", "cache"), ("TRITON_DUMP_DIR", "dump"), ("TRITON_OVERRIDE_DIR", "override")):
    os.environ[_var] = str(TRITON_HOME / ".triton" / _sub)

# No heartbeat lines in the CLI subprocesses' logs unless a test asks for them: under load (2
# cores, xdist) a command that asserts its exact stderr could pass the 10 s mark and print one.
os.environ["AUTOTUNE_REWRITE_HEARTBEAT_S"] = "0"

# Bytecode for the test processes: this machine and CI set PYTHONDONTWRITEBYTECODE, so each of the
# suite's CLI subprocesses would compile the package's sources again (about 0.4 s each). The
# session lets Python write the checkout's own __pycache__ folders (gitignored; written
# atomically, so xdist workers share them). Not PYTHONPYCACHEPREFIX: with a prefix Python ignores
# the installed packages' bytecode and compiles triton and torch again.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False


@pytest.fixture(scope="session")
def cache() -> Path:
    """The session's compile cache (the same folder ``AUTOTUNE_REWRITE_CACHE_DIR`` names). A test
    that must see a cold compile passes its own ``tmp_path`` instead."""
    SESSION_CACHE.mkdir(parents=True, exist_ok=True)
    return SESSION_CACHE


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Tests of one ``xdist_group`` (they compile the same kernels) never run at the same time on
    two pytest-xdist workers: the second waits, then reads the first one's compiles from the
    session cache. ``--dist loadgroup`` would keep them on one worker, but pytest-xdist 3.8 cannot
    rename pytest 9.2's node ids, so it schedules them like ``load`` (pytest-xdist issue #1386).
    The lock spans setup too, where a module fixture does a test's compiles."""
    groups = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                     for m in item.iter_markers("xdist_group")})
    if not groups or not os.environ.get("PYTEST_XDIST_WORKER"):
        yield
        return
    SESSION_CACHE.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as held:
        for group in groups:  # sorted: two workers take two locks in the same order
            lock = held.enter_context(open(SESSION_CACHE / f".group-{group}.lock", "w"))
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def pytest_unconfigure(config):
    for folder in _OWNED:
        shutil.rmtree(folder, ignore_errors=True)


def pytest_report_header(config):
    return f"compile cache: {SESSION_CACHE}; Triton home: {TRITON_HOME}"


def has_gpu() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def pytest_collection_modifyitems(config, items):
    gpu = [item for item in items if "gpu" in item.keywords]
    if not gpu or has_gpu():  # importing torch costs seconds: only when a GPU test was collected
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU; run on the device machine")
    for item in gpu:
        item.add_marker(skip)
