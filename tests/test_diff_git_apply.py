"""The diffs are what `git apply` accepts: checked with real git in a temporary repository."""

from __future__ import annotations

import subprocess

import pytest

from autotune_rewrite.unified_diff import NO_NEWLINE, unified_diff

CASES = {
    "lf": ("a = 1\nb = 2\nc = 3\n", "a = 1\nb = 20\nc = 3\n"),
    "crlf": ("a = 1\r\nb = 2\r\nc = 3\r\n", "a = 1\r\nb = 20\r\nx = 0\r\nc = 3\r\n"),
    "no_final_newline_both": ("a = 1\nb = 2", "a = 1\nb = 3"),
    "no_final_newline_added": ("a = 1\nb = 2", "a = 1\nb = 2\n"),
    "no_final_newline_removed": ("a = 1\nb = 2\n", "a = 1\nb = 2"),
    "delete_lines": ("".join(f"x{i} = {i}\n" for i in range(30)), "".join(f"x{i} = {i}\n" for i in range(30) if i not in (3, 4, 20))),
    "insert_at_top": ("b = 2\n", "a = 1\nb = 2\n"),
    "from_empty": ("", "a = 1\n"),
}


def _git(cwd, *args, **kw):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, **kw)


@pytest.mark.parametrize("name", sorted(CASES))
def test_git_apply_accepts_and_reproduces(tmp_path, name):
    before, after = CASES[name]
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "config", "core.autocrlf", "false")
    (tmp_path / "pkg").mkdir()
    target = tmp_path / "pkg" / "mod.py"
    target.write_bytes(before.encode())
    patch = unified_diff("pkg/mod.py", before, after)
    assert patch.startswith("diff --git a/pkg/mod.py b/pkg/mod.py\n--- a/pkg/mod.py\n+++ b/pkg/mod.py\n@@ ")
    (tmp_path / "x.patch").write_bytes(patch.encode())
    _git(tmp_path, "apply", "--check", "x.patch")
    _git(tmp_path, "apply", "x.patch")
    assert target.read_bytes() == after.encode()


def test_no_newline_marker_written():
    patch = unified_diff("m.py", "a\nb", "a\nc")
    assert patch.endswith("-b\n" + NO_NEWLINE + "+c\n" + NO_NEWLINE)


def test_unchanged_file_gives_no_diff():
    assert unified_diff("m.py", "a\n", "a\n") == ""


def test_crlf_lines_keep_their_ending():
    patch = unified_diff("m.py", "a\r\nb\r\n", "a\r\nc\r\n")
    assert "-b\r\n+c\r\n" in patch
