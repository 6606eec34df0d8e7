"""The line length the repository's formatters (black, ``ruff format``) give one file.

Each is found as the tool finds it for that file: ruff's is the nearest folder, at or above the
file's, holding ``.ruff.toml``, ``ruff.toml`` or a ``pyproject.toml`` with ``[tool.ruff]`` (that
order within a folder; the first found is the one, and ``extend`` supplies what it does not
state); black's is the nearest ``pyproject.toml`` with ``[tool.black]``. Both would also look
above the repository and in a user-level file; the search stops at the repository root, since
a rewrite a reviewer reads must not depend on the machine that wrote it. ``[tool.ruff.format]``
has no length of its own: ruff's formatter uses the top-level ``line-length``.

Which tools count: black wherever a ``[tool.black]`` table is found (it only formats), with its
length or its default; ruff when it states a length, or formats (a ``format`` table) at its
default. A ruff table of lint rules alone says nothing about the width code is formatted to:
next to black at 120 it leaves 120. When both count and differ, the smaller is used: no wrapped
line can then please both formatters, but every emitted line fits both limits. 88, both tools'
default, applies when none counts.
"""

from __future__ import annotations

import posixpath
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path, PurePath
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

from autotune_rewrite.errors import UserError

DEFAULT = 88  # black's and ruff's default
_RUFF_FILES = (".ruff.toml", "ruff.toml", "pyproject.toml")  # ruff's order within one folder
_MAX_EXTENDS = 8  # ruff refuses a cycle; a chain this long is one

Read = Callable[[PurePath], "str | None"]  # a file's text, None when there is no such file


@dataclass(frozen=True)
class LineLength:
    width: int
    source: str  # the file that says it ("pkg/ruff.toml", "pyproject.toml [tool.black]"), or "default"


def line_length(root: PurePath, path: PurePath, read: Read) -> LineLength:
    """The line length for the file ``path`` (relative to the repository root ``root``, or under
    it), reading config files only through ``read`` (called with ``root / relative``)."""
    rel = PurePath(path).relative_to(root) if PurePath(path).is_absolute() else PurePath(path)
    folders = list(rel.parents)  # the file's folder first, the root (".") last
    counted = [s for s in (_ruff(root, folders, read), _black(root, folders, read)) if s is not None]
    return min(counted, key=lambda s: s.width) if counted else LineLength(DEFAULT, "default")


def _ruff(root: PurePath, folders, read: Read) -> LineLength | None:
    for folder in folders:
        for name in _RUFF_FILES:
            rel = folder / name
            doc = _toml(root, rel, read)
            if doc is None or (name == "pyproject.toml" and "ruff" not in doc.get("tool", {})):
                continue
            return _ruff_stated(root, rel, doc, read)
    return None


def _ruff_stated(root: PurePath, rel: PurePath, doc: dict[str, Any], read: Read) -> LineLength | None:
    """What ruff's config file ``rel`` says, itself or through its ``extend`` chain (a target
    outside the repository is not read): its length, its default when it only formats, else None."""
    found, formats = rel, False
    for _ in range(_MAX_EXTENDS):
        table = doc.get("tool", {}).get("ruff", {}) if rel.name == "pyproject.toml" else doc
        formats = formats or isinstance(table.get("format"), dict)
        width = _width(table.get("line-length"))
        if width is not None:
            return LineLength(width, _shown(rel, "[tool.ruff]"))
        target = table.get("extend")
        joined = posixpath.normpath(posixpath.join(rel.parent.as_posix(), target)) if isinstance(target, str) else ".."
        doc = None if joined == ".." or joined.startswith(("../", "/")) else _toml(root, PurePath(joined), read)
        if doc is None:
            break
        rel = PurePath(joined)
    return LineLength(DEFAULT, _shown(found, "[tool.ruff]") + ", ruff's default") if formats else None


def _black(root: PurePath, folders, read: Read) -> LineLength | None:
    for folder in folders:
        rel = folder / "pyproject.toml"
        doc = _toml(root, rel, read)
        table = doc.get("tool", {}).get("black") if doc is not None else None
        if isinstance(table, dict):  # black's project root: its first pyproject with [tool.black]
            width = _width(table.get("line-length", table.get("line_length")))  # black reads "-" and "_" alike
            shown = _shown(rel, "[tool.black]")
            return LineLength(width, shown) if width else LineLength(DEFAULT, shown + ", black's default")
    return None


def _width(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _shown(rel: PurePath, table: str) -> str:
    return f"{rel.as_posix()} {table}" if rel.name == "pyproject.toml" else rel.as_posix()


def _toml(root: PurePath, rel: PurePath, read: Read) -> dict[str, Any] | None:
    text = read(root / rel)
    if text is None:
        return None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # the formatter itself would stop on it too
        raise UserError(f"{rel.as_posix()}: invalid TOML ({exc}); fix the file or remove it") from None


def read_file(path: PurePath) -> str | None:
    """``Read`` on the disk."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def line_lengths(top: Path, root: Path, read: Read = read_file) -> Callable[[str], int]:
    """Per file (a path relative to ``root``, a folder of the repository ``top``): its width, each
    config file read once."""
    cached = lru_cache(maxsize=None)(read)
    try:
        base = root.relative_to(top)
    except ValueError:  # not inside it (a symlinked path): the root is the repository
        top, base = root, Path()

    @lru_cache(maxsize=None)
    def width(path: str) -> int:
        return line_length(top, base / path, cached).width

    return width


__all__ = ["DEFAULT", "LineLength", "line_length", "line_lengths", "read_file"]
