"""Where a project's root and its settings file are: the one root search every command uses.

Like black's ``find_project_root``: from the common folder of the given paths upward, the
nearest folder holding ``autotune-rewrite.toml`` or a ``pyproject.toml`` with a
``[tool.autotune-rewrite]`` table is the root. The search stops at the top of the git checkout
(settings above it belong to someone else), which is the root when nothing had settings;
outside git the nearest folder with a ``pyproject.toml``, else the common folder itself.
So ``check .`` in a subfolder, ``check some/subfolder`` and ``check some/file.py`` all read
the same settings and name kernels by the same root-relative paths.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

from autotune_rewrite.errors import UserError
from autotune_rewrite.settings.schema import TOOL_FILE
TABLE = "autotune-rewrite"


def read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: invalid TOML ({exc}); fix the file or remove it") from None
    except UnicodeDecodeError:
        raise UserError(f"{path}: not UTF-8; save it as UTF-8") from None


def has_table(pyproject: Path) -> bool:
    """True when ``pyproject`` holds ``[tool.autotune-rewrite]`` (a cheap text test first: most do not)."""
    try:
        if TABLE.encode() not in pyproject.read_bytes():
            return False
    except OSError:
        return False
    return TABLE in read_toml(pyproject).get("tool", {})


def settings_file_in(folder: Path) -> Path | None:
    """The settings file of ``folder``: its autotune-rewrite.toml (the tool's own file, so its
    presence is a deliberate choice and it wins), else a pyproject.toml with our table."""
    tool = folder / TOOL_FILE
    if tool.is_file():
        return tool
    pyproject = folder / "pyproject.toml"
    if pyproject.is_file() and has_table(pyproject):
        return pyproject
    return None


def find_project_root(paths: Sequence[Path | str]) -> Path:
    """The project root of ``paths`` (files or folders; the working folder when empty), absolute."""
    resolved = [Path(p).resolve() for p in paths] or [Path.cwd().resolve()]
    folders = [p if p.is_dir() else p.parent for p in resolved]
    base = Path(os.path.commonpath([str(f) for f in folders]))
    nearest_pyproject = None
    for folder in (base, *base.parents):
        if settings_file_in(folder) is not None:
            return folder
        if (folder / ".git").exists():
            return folder
        if nearest_pyproject is None and (folder / "pyproject.toml").is_file():
            nearest_pyproject = folder
    return nearest_pyproject or base


__all__ = ["TOOL_FILE", "find_project_root", "has_table", "read_toml", "settings_file_in"]
