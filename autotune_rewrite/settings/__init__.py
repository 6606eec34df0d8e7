"""The target project's ``[tool.autotune-rewrite]`` settings: found, read and checked once.

``load_settings(path)`` finds the project root of ``path``
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


def parse_assume(text: str) -> tuple[str, Any]:
    """``--assume NAME=VALUE``: VALUE read as the same TOML value the ``assume`` table takes
    (``128``, ``true``, ``[64, 128]``, ``"tl.float32"``); a bare word is a string. A usage error
    (exit 2) names the flag."""
    import tomllib

    from autotune_rewrite.settings.reader import scalar_or_list
    from autotune_rewrite.settings.schema import Settings as _S

    name, sep, raw = text.partition("=")
    name, raw = name.strip(), raw.strip()
    if not sep or not name.isidentifier() or not raw:
        raise UserError(f"--assume {text}: write NAME=VALUE, e.g. --assume HEAD_DIM=128 or --assume K=[64,128]")
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw  # a bare word: tl.float32, torch.float16
    try:
        return name, scalar_or_list(value, _S().where().at("assume").at(name))
    except UserError:
        raise UserError(f"--assume {text}: the value must be a number, bool or string, or a list of them") from None


def parse_env(text: str) -> tuple[str, str]:
    """``--env NAME=VALUE``: what ``os.environ.get("NAME")`` answers in the scanned code."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise UserError(f"--env {text}: write NAME=VALUE, e.g. --env USE_FP8=1")
    return name.strip(), value


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
           "find_project_root", "from_table", "load_settings", "parse_assume", "parse_env", "settings_file_in", "shown"]
