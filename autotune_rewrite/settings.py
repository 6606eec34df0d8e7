"""``[tool.autotune-rewrite]`` settings of the TARGET repository.

Read from the target's ``pyproject.toml`` (table ``[tool.autotune-rewrite]``) or from an
``autotune-rewrite.toml`` at its root holding the same table without the prefix (that file wins
when both exist: it is the tool's own file, so its presence is a deliberate choice). The whole
table is kept in ``raw`` so later stages (launch specs, variants) read their own keys; this
module only interprets what the locator needs (``arch``, ``exclude``).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

from autotune_rewrite.errors import UserError

DEFAULT_ARCH = ("sm_120",)
TOOL_FILE = "autotune-rewrite.toml"


@dataclass(frozen=True)
class Settings:
    arch: tuple[str, ...] = DEFAULT_ARCH
    exclude: tuple[str, ...] = ()
    raw: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    source: str | None = None  # the file the table came from, for error messages

    def with_exclude(self, exclude: list[str] | None, extend_exclude: list[str] | None) -> "Settings":
        """Command-line flags over the file: ``--exclude`` replaces, ``--extend-exclude`` adds."""
        base = tuple(exclude) if exclude is not None else self.exclude
        return replace(self, exclude=base + tuple(extend_exclude or ()))


def _settings_root(root: Path) -> Path:
    return root if root.is_dir() else root.parent


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: invalid TOML ({exc}); fix the file or remove it") from None
    except UnicodeDecodeError:
        raise UserError(f"{path}: not UTF-8; save it as UTF-8") from None


def _str_list(table: Mapping[str, Any], key: str, source: Path) -> tuple[str, ...] | None:
    if key not in table:
        return None
    value = table[key]
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UserError(f"{source}: [tool.autotune-rewrite] {key} must be a list of strings, e.g. {key} = [\"...\"]")
    return tuple(value)


def load_settings(root: Path) -> Settings:
    """Settings for the tree at ``root`` (a folder or a file: its folder is used).

    No table anywhere gives the defaults. A malformed table raises ``UserError`` (exit 2).
    """
    base = _settings_root(root)
    tool_file = base / TOOL_FILE
    pyproject = base / "pyproject.toml"
    table: Mapping[str, Any] | None = None
    source: Path | None = None
    if tool_file.is_file():
        table, source = _read_toml(tool_file), tool_file
    elif pyproject.is_file():
        table = _read_toml(pyproject).get("tool", {}).get("autotune-rewrite")
        source = pyproject if table is not None else None
    if table is None or source is None:
        return Settings()
    if not isinstance(table, dict):
        raise UserError(f"{source}: [tool.autotune-rewrite] must be a table")
    arch = _str_list(table, "arch", source)
    exclude = _str_list(table, "exclude", source)
    return Settings(
        arch=arch if arch else DEFAULT_ARCH,
        exclude=exclude or (),
        raw=MappingProxyType(dict(table)),
        source=str(source),
    )


__all__ = ["DEFAULT_ARCH", "Settings", "load_settings"]
