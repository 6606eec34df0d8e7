"""The target project's ``[tool.autotune-rewrite]`` settings: found, read and checked once.

``Settings.find(path)`` (also ``load_settings(path)``) finds the project root of ``path``
(``root.find_project_root``), reads its settings file and returns the typed ``Settings``
(``schema.py``: one field per key); every command starts there and passes the result down.
A malformed file, a wrong type or an unknown key (spelling suggested) is a ``UserError``
naming the file and the key (exit 2).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from autotune_rewrite.errors import UserError
from autotune_rewrite.settings.reader import read_section
from autotune_rewrite.settings.root import TOOL_FILE, find_project_root, read_toml, settings_file_in
from autotune_rewrite.settings.schema import DEFAULT_ARCH, BenchEntry, Settings, SpecEntry, Variants, describe


def shown(path: Path | str) -> str:
    """A file as the user would name it: relative to the working folder when inside it."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def from_table(table: Mapping[str, Any], file: str = "pyproject.toml", root: Path | str = ".") -> Settings:
    """``Settings`` from an already parsed table (``file`` names it in messages)."""
    return replace(read_section(Settings, table, Settings(source=file).where()), root=str(root), source=file)


def load_settings(path: Path | str) -> Settings:
    """The settings of the project holding ``path`` (a file or folder); defaults when it has none."""
    path = Path(path)
    if not path.exists():
        raise UserError(f"{path}: no such file or folder; pass a checkout, folder or .py file")
    root = find_project_root([path])
    source = settings_file_in(root)
    if source is None:
        return Settings(root=str(root))
    doc = read_toml(source)
    table = doc if source.name == TOOL_FILE else doc["tool"]["autotune-rewrite"]
    return from_table(table, shown(source), root)

__all__ = ["DEFAULT_ARCH", "BenchEntry", "Settings", "SpecEntry", "TOOL_FILE", "Variants", "describe",
           "find_project_root", "from_table", "load_settings", "settings_file_in", "shown"]
