"""Helpers for the end-to-end tests: run the real CLI in a subprocess against temporary git repos."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import cli_process
from golden_cases import input_tree

REPO = Path(__file__).resolve().parent.parent


def cli(*args, cwd, cache: Path, check_rc=None) -> subprocess.CompletedProcess:
    env = dict(os.environ, AUTOTUNE_REWRITE_CACHE_DIR=str(cache), NO_COLOR="1")
    raw = cli_process.run(args, cwd=cwd, env=env, text=False)
    # Decode without universal newlines: a CRLF file's diff must keep its \r\n.
    proc = subprocess.CompletedProcess(raw.args, raw.returncode, raw.stdout.decode("utf-8"), raw.stderr.decode("utf-8"))
    if check_rc is not None:
        assert proc.returncode == check_rc, (proc.returncode, proc.stdout, proc.stderr)
    return proc


def git(cwd, *args, text=True) -> str:
    out = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=text)
    return out.stdout


def commit_tree(root: Path, message: str = "fixture") -> Path:
    """``root`` as a git repository on ``main`` whose one commit holds every file in it."""
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "Test User")
    git(root, "config", "user.email", "test@example.com")
    git(root, "config", "core.autocrlf", "false")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return root


def make_repo(tmp: Path, fixture: str) -> Path:
    root = tmp / fixture
    shutil.copytree(input_tree(fixture), root, ignore=shutil.ignore_patterns("__pycache__"))
    return commit_tree(root)


def state(root: Path) -> dict:
    """Everything the user owns: working tree bytes, index, HEAD, refs, worktrees, status."""
    files = {}
    for p in sorted(root.rglob("*")):
        if ".git" in p.relative_to(root).parts or not p.is_file():
            continue
        files[p.relative_to(root).as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest()
    gd = root / ".git"
    return {
        "files": files,
        "index": hashlib.sha256((gd / "index").read_bytes()).hexdigest(),
        "HEAD": (gd / "HEAD").read_text(),
        "refs": git(root, "for-each-ref", "--format=%(refname) %(objectname)"),
        "worktrees": git(root, "worktree", "list", "--porcelain"),
        "status": git(root, "status", "--porcelain", "--untracked-files=all"),
    }

