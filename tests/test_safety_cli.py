"""Small things a new user hits, through the real CLI: --version, --color after the command,
help that reads as values, a heartbeat in logs, no escape codes in a piped demo, and a
read-only checkout answered with exit 2 and one line."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest
from rewrite_e2e import REPO, git, state
from safety_helpers import env_for, ours, tiny_repo

ESC = "\x1b["


def run(*args, cwd, env, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autotune_rewrite", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def env(tmp_path):
    (tmp_path / "tmp").mkdir()
    return env_for(tmp_path / "tmp", tmp_path / "cache")


def test_version_names_the_package_and_triton(tmp_path, env):
    import triton

    from autotune_rewrite import __version__

    proc = run("--version", cwd=tmp_path, env=env)
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"autotune-rewrite {__version__} (triton {triton.__version__})"


@pytest.mark.parametrize("where", ["before", "after"])
def test_color_is_accepted_before_and_after_the_command(tmp_path, env, where):
    missing = tmp_path / "missing"
    for mode, coloured in (("always", True), ("never", False)):
        args = ["--color", mode, "check", missing] if where == "before" else ["check", missing, "--color", mode]
        proc = run(*args, cwd=tmp_path, env={**env, "NO_COLOR": ""})
        assert proc.returncode == 2, proc.stderr
        assert "no such file" in proc.stderr
        assert (ESC in proc.stderr) is coloured, (mode, where, proc.stderr)


@pytest.mark.parametrize("command", ["", "scan", "check", "diff", "apply", "capture", "inspect-cache", "bench"])
def test_help_shows_values_not_types(tmp_path, env, command):
    proc = run(*([command] if command else []), "--help", cwd=tmp_path, env={**env, "COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    for bad in ("<bool>", "<list[str]>", "<str>", "<int>", "<list", "TEXT", "INTEGER"):
        assert bad not in text, (command, bad)
    if command in ("check", "diff", "apply"):
        for shown in ("--arch  ARCH", "--kernel  NAME", "--jobs  -j  N", "--color  WHEN"):
            assert re.search(re.escape(shown).replace(r"\ \ ", r"\s+"), text), (command, shown)
    if command == "check":
        assert re.search(r"--format\s+FORMAT", text)


def test_long_compiles_print_a_heartbeat_when_stderr_is_a_pipe(tmp_path, env):
    root = tiny_repo(tmp_path)
    proc = run("check", ".", "--no-cache", "-j", "1", cwd=root, env={**env, "AUTOTUNE_REWRITE_HEARTBEAT_S": "0.2"})
    assert proc.returncode == 0, proc.stderr
    beats = [line for line in proc.stderr.splitlines() if re.fullmatch(r"(compiling \d+/\d+ configs|scanning and isolating kernels), \d+ s", line)]
    assert beats, proc.stderr
    assert ESC not in proc.stderr


def test_no_heartbeat_for_a_short_run(tmp_path, env):
    root = tiny_repo(tmp_path)
    env = {**env, "AUTOTUNE_REWRITE_HEARTBEAT_S": "10"}  # the default (conftest turns it off)
    run("check", ".", cwd=root, env=env)  # warm the cache
    proc = run("check", ".", cwd=root, env=env)
    assert "compiling" not in proc.stderr and "isolating kernels" not in proc.stderr


def test_demo_piped_into_a_log_has_no_escape_codes(tmp_path, env):
    example = tiny_repo(tmp_path, "example")
    shutil.rmtree(example / ".git")
    demo_env = {**env, "NO_COLOR": "", "TERM": "xterm-256color", "EXAMPLE": str(example),
                "TOOL": f"{sys.executable} -m autotune_rewrite"}
    proc = subprocess.run(["bash", str(REPO / "scripts" / "demo.sh")], cwd=REPO, env=demo_env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "== apply --variant v1" in proc.stderr and "PR body" in proc.stderr
    assert ESC not in proc.stdout and ESC not in proc.stderr


def _one_error_line(proc) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


def test_out_dir_that_cannot_be_a_folder_exits_2_before_anything_is_made(tmp_path, env):
    root = tiny_repo(tmp_path)
    (tmp_path / "afile").write_text("x")
    before = state(root)
    line = _one_error_line(run("apply", "--variant", "v1", "--out-dir", tmp_path / "afile" / "pr", ".", cwd=root, env=env))
    assert "is not a folder" in line and "afile" in line
    assert state(root) == before
    assert ours(tmp_path / "tmp") == []


def test_git_dir_that_cannot_take_a_worktree_exits_2(tmp_path, env):
    """Root ignores permission bits; a file where git must make a folder fails for root too."""
    root = tiny_repo(tmp_path)
    (root / ".git" / "worktrees").write_text("not a folder\n")
    before = state(root)
    line = _one_error_line(run("apply", "--variant", "v1", "--out-dir", tmp_path / "pr", ".", cwd=root, env=env))
    assert "cannot add a temporary worktree" in line and "writable git dir" in line
    assert state(root) == before
    assert "autotune-rewrite" not in git(root, "branch", "--list")
    assert ours(tmp_path / "tmp") == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores permission bits; see the test above")
def test_read_only_checkout_exits_2(tmp_path, env):
    root = tiny_repo(tmp_path)
    paths = [root, *root.rglob("*")]
    try:
        for p in paths:
            p.chmod(p.stat().st_mode & ~0o222)
        line = _one_error_line(run("apply", "--variant", "v1", ".", cwd=root, env=env))
        assert "read-only" in line or "writable" in line
    finally:
        for p in paths:
            p.chmod(p.stat().st_mode | 0o200)


def test_interrupt_line_goes_through_output_on_stderr(tmp_path, env):
    """The message is routed through output/ (one line, stderr, no colour on a pipe)."""
    code = ("import signal; from autotune_rewrite import output; output.interrupted(signal.SIGINT); "
            "output.interrupted(signal.SIGTERM)")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == ["interrupted; cleaned up", "stopped by SIGTERM; cleaned up"]
