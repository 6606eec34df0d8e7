"""Typed reading of a TOML table into frozen dataclasses, with errors that name file and key.

A settings class declares each key as a dataclass field whose metadata holds the *reader*
(``value, where -> typed value``), the TOML type as docs/settings.md writes it, and one line of
documentation (``key(...)``). ``read_section`` checks a table against those fields: an unknown
key is an error with the closest known key suggested (black spell-checks its pyproject keys
the same way, with ``difflib``), a field without a default is required, and every value goes
through its reader. Adding a key is one field.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from autotune_rewrite.errors import UserError

Reader = Callable[[Any, "Where"], Any]
Scalar = (bool, int, float, str)


@dataclass(frozen=True)
class Where:
    """A key's place, for messages: ``pyproject.toml: [tool.autotune-rewrite] variants.buckets``."""

    file: str
    table: str = "[tool.autotune-rewrite]"  # "" in autotune-rewrite.toml, where the table is the file
    key: str = ""

    def at(self, part: str | int) -> "Where":
        if isinstance(part, int):
            return replace(self, key=f"{self.key}[{part}]")
        name = part if re.fullmatch(r"[A-Za-z0-9_-]+", part) else json.dumps(part)
        return replace(self, key=f"{self.key}.{name}" if self.key else name)

    def error(self, problem: str) -> UserError:
        label = " ".join(p for p in (self.table, self.key) if p)
        return UserError(f"{self.file}: {label} {problem}" if label else f"{self.file}: {problem}")


def key(reader: Reader, toml_type: str, doc: str, inner: tuple[str, type] | None = None) -> dict[str, Any]:
    """Field metadata that makes a dataclass field a settings key. ``inner``: for a key holding
    tables of another settings class, how its keys are written below it and that class
    (``("[]", SpecEntry)`` gives ``kernels[].spec``), so the documentation can list them."""
    return {"reader": reader, "type": toml_type, "doc": doc, "inner": inner}


def keys_of(cls: type) -> dict[str, dataclasses.Field]:
    return {f.name: f for f in dataclasses.fields(cls) if "reader" in f.metadata}


def unknown_key(name: str, known: Mapping[str, Any]) -> str:
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    if close:
        return f"is not a known key; did you mean '{close[0]}'?"
    return f"is not a known key (known: {', '.join(known) or 'none'})"


def read_section(cls: type, value: Any, where: Where) -> Any:
    """``cls`` built from the TOML table ``value``; ``UserError`` naming the key when it does not fit."""
    if not isinstance(value, Mapping):
        raise where.error("must be a table")
    known = keys_of(cls)
    for name in value:
        if name not in known:
            raise where.at(name).error(unknown_key(name, known))
    kwargs = {}
    for name, f in known.items():
        if name in value:
            kwargs[name] = f.metadata["reader"](value[name], where.at(name))
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise where.at(name).error(f"is required ({f.metadata['doc']})")
    return cls(**kwargs)


def _shown(value: Any) -> str:
    return json.dumps(value) if isinstance(value, str) else repr(value)


# --------------------------------------------------------------------------- readers
def section(cls: type) -> Reader:
    return lambda value, where: read_section(cls, value, where)


def array_of(cls: type) -> Reader:
    def read(value: Any, where: Where) -> tuple:
        if not isinstance(value, list):
            raise where.error("must be an array of tables")
        return tuple(read_section(cls, item, where.at(i)) for i, item in enumerate(value))

    return read


def keyed(cls: type) -> Reader:
    """A table of tables keyed by a free name (``bench."path::kernel" = { ... }``)."""
    def read(value: Any, where: Where) -> tuple:
        if not isinstance(value, Mapping):
            raise where.error("must be a table keyed by kernel (path::name)")
        return tuple((name, read_section(cls, item, where.at(name))) for name, item in value.items())

    return read


def table_of(item: Reader, example: str) -> Reader:
    """A table NAME = value (inline or not), kept as ordered (name, value) pairs."""
    def read(value: Any, where: Where) -> tuple:
        if not isinstance(value, Mapping):
            raise where.error(f"must be a table, e.g. {where.key.rsplit('.', 1)[-1]} = {{ {example} }}")
        return tuple((name, item(v, where.at(name))) for name, v in value.items())

    return read


def strings(value: Any, where: Where) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise where.error(f"must be a list of strings, e.g. {where.key} = [\"...\"]")
    return tuple(value)


def string(value: Any, where: Where) -> str:
    if not isinstance(value, str):
        raise where.error(f"must be a string, got {_shown(value)}")
    return value


def integer(value: Any, where: Where) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise where.error(f"must be an integer, got {_shown(value)}")
    return value


def scalar(value: Any, where: Where) -> bool | int | float | str:
    if not isinstance(value, Scalar):
        raise where.error(f"must be a number, bool or string, got {_shown(value)}")
    return value


def scalar_or_list(value: Any, where: Where):
    """One value, or a non-empty list of values (each one a separate case)."""
    if isinstance(value, list):
        if not value:
            raise where.error("must not be an empty list")
        return tuple(scalar(v, where.at(i)) for i, v in enumerate(value))
    return scalar(value, where)


def pattern(regex: str, shape: str) -> Reader:
    def read(value: Any, where: Where) -> str:
        if not isinstance(value, str) or not re.fullmatch(regex, value):
            raise where.error(f"must be {shape}, got {_shown(value)}")
        return value

    return read


__all__ = ["Reader", "Where", "array_of", "integer", "key", "keyed", "keys_of", "pattern", "read_section",
           "scalar", "scalar_or_list", "section", "string", "strings", "table_of", "unknown_key"]
