"""The repository's formatter line length (issue 21, item 4): found per file as black and ruff
find their settings, up to the repository root (``settings/formatter.py``)."""

from __future__ import annotations

from pathlib import PurePosixPath

import pytest

from autotune_rewrite.errors import UserError
from autotune_rewrite.settings.formatter import LineLength, line_length, line_lengths

ROOT = PurePosixPath("/repo")


def _length(files: dict[str, str], path: str = "pkg/mod.py") -> LineLength:
    """``line_length`` over an in-memory repository; no file outside it is asked for."""
    asked = []

    def read(p):
        asked.append(p)
        return files.get(PurePosixPath(p).relative_to(ROOT).as_posix())

    found = line_length(ROOT, ROOT / path, read)
    assert all(PurePosixPath(p).is_relative_to(ROOT) for p in asked)
    return found


BLACK_79 = "[tool.black]\nline-length = 79\n"
RUFF_120 = "[tool.ruff]\nline-length = 120\n"


def test_nothing_configured_is_both_tools_default():
    assert _length({}) == LineLength(88, "default")
    assert _length({"pyproject.toml": "[project]\nname = 'x'\n"}) == LineLength(88, "default")


def test_black_and_ruff_each_as_they_state_it():
    assert _length({"pyproject.toml": BLACK_79}) == LineLength(79, "pyproject.toml [tool.black]")
    assert _length({"pyproject.toml": "[tool.black]\nline_length = 100\n"}).width == 100  # black reads "_" too
    assert _length({"pyproject.toml": RUFF_120}) == LineLength(120, "pyproject.toml [tool.ruff]")
    assert _length({"ruff.toml": "line-length = 100\n"}) == LineLength(100, "ruff.toml")


def test_both_configured_the_smaller_wins():
    assert _length({"pyproject.toml": BLACK_79 + RUFF_120}) == LineLength(79, "pyproject.toml [tool.black]")
    assert _length({"pyproject.toml": "[tool.black]\nline-length = 130\n" + RUFF_120}).width == 120
    # black with no length formats at its default, which is smaller
    assert _length({"pyproject.toml": "[tool.black]\ntarget-version = ['py311']\n" + RUFF_120}) == LineLength(
        88, "pyproject.toml [tool.black], black's default")


def test_a_ruff_table_of_lint_rules_alone_does_not_narrow_black():
    lint_only = "[tool.black]\nline-length = 120\n\n[tool.ruff.lint]\nselect = ['E', 'F']\n"
    assert _length({"pyproject.toml": lint_only}).width == 120
    formats = "[tool.black]\nline-length = 120\n\n[tool.ruff.format]\nquote-style = 'double'\n"
    assert _length({"pyproject.toml": formats}) == LineLength(88, "pyproject.toml [tool.ruff], ruff's default")


def test_the_format_table_does_not_change_ruffs_length():
    text = "[tool.ruff]\nline-length = 100\n\n[tool.ruff.format]\nquote-style = 'single'\n"
    assert _length({"pyproject.toml": text}).width == 100
    assert _length({"ruff.toml": "line-length = 100\n\n[format]\nindent-style = 'space'\n"}).width == 100


def test_the_nearest_file_wins_and_the_folders_order_is_ruffs():
    files = {"pyproject.toml": RUFF_120, "pkg/pyproject.toml": "[tool.ruff]\nline-length = 100\n"}
    assert _length(files) == LineLength(100, "pkg/pyproject.toml [tool.ruff]")
    assert _length(files, "top.py").width == 120
    assert _length(files, "other/deep/mod.py").width == 120
    # Within one folder: .ruff.toml, then ruff.toml, then pyproject.toml.
    same = {"pkg/pyproject.toml": RUFF_120, "pkg/ruff.toml": "line-length = 99\n"}
    assert _length(same) == LineLength(99, "pkg/ruff.toml")
    assert _length({**same, "pkg/.ruff.toml": "line-length = 98\n"}) == LineLength(98, "pkg/.ruff.toml")
    # A pyproject without the tool's table is not the tool's file: the search goes on upward.
    assert _length({"pyproject.toml": RUFF_120, "pkg/pyproject.toml": "[project]\nname = 'pkg'\n"}).width == 120


def test_the_nearest_ruff_file_is_the_one_even_when_it_states_no_length():
    # ruff reads one file (no merge): the nearer file's default, not the farther file's 120.
    files = {"ruff.toml": "line-length = 120\n", "pkg/ruff.toml": "[format]\nquote-style = 'single'\n"}
    assert _length(files) == LineLength(88, "pkg/ruff.toml, ruff's default")


def test_extend_supplies_what_the_file_does_not_state_inside_the_repository_only():
    files = {"ruff.toml": "line-length = 100\n", "pkg/ruff.toml": 'extend = "../ruff.toml"\n'}
    assert _length(files) == LineLength(100, "ruff.toml")
    assert _length({"pkg/ruff.toml": 'extend = "../../elsewhere/ruff.toml"\n'}) == LineLength(88, "default")
    looped = {"pkg/ruff.toml": 'extend = "ruff.toml"\n'}
    assert _length(looped) == LineLength(88, "default")


def test_invalid_toml_names_the_file():
    with pytest.raises(UserError, match=r"pkg/ruff.toml: invalid TOML"):
        _length({"pkg/ruff.toml": "line-length = \n"})


def test_line_lengths_read_the_disk_from_a_scan_root_below_the_repository(tmp_path):
    (tmp_path / "pyproject.toml").write_text(BLACK_79)
    root = tmp_path / "sub"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "ruff.toml").write_text("line-length = 72\n")
    width = line_lengths(tmp_path, root)
    assert width("mod.py") == 79  # the repository's pyproject, above the scan root
    assert width("pkg/mod.py") == 72
    assert line_lengths(tmp_path / "elsewhere", root)("mod.py") == 88  # root not inside: its own folder only
