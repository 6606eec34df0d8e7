"""The TOML form of a launch-spec table (``[[kernels]]``), written without a TOML library.

The shape is restricted (strings, ints, floats, bools, in inline tables), so a small emitter
suffices; ``tomllib`` reads back exactly ``table_dict(table)``. Used for the stanza ``check``
prints when values are missing and for the tables ``capture`` merges into settings files.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Table:
    """One ``[[kernels]]`` table to write."""

    kernel: str
    spec: str
    types: tuple[tuple[str, str], ...]
    constexprs: tuple[tuple[str, Any], ...] = ()
    values: tuple[tuple[str, int], ...] = ()
    comments: tuple[str, ...] = ()


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        out = []
        for ch in value:
            if ch in '"\\':
                out.append("\\" + ch)
            elif ord(ch) < 0x20 or ord(ch) == 0x7F:
                out.append(f"\\u{ord(ch):04x}")
            else:
                out.append(ch)
        return '"' + "".join(out) + '"'
    raise TypeError(f"cannot write {type(value).__name__} {value!r} as TOML")


def _key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else toml_value(name)


def inline_table(pairs: Sequence[tuple[str, Any]]) -> str:
    if not pairs:
        return "{}"
    return "{ " + ", ".join(f"{_key(k)} = {toml_value(v)}" for k, v in pairs) + " }"


def render_table(table: Table, prefix: str = "") -> str:
    lines = [f"# {c}" for c in table.comments]
    lines += [f"[[{prefix}kernels]]", f"kernel = {toml_value(table.kernel)}", f"spec = {toml_value(table.spec)}",
              f"types = {inline_table(table.types)}"]
    if table.constexprs:
        lines.append(f"constexprs = {inline_table(table.constexprs)}")
    if table.values:
        lines.append(f"values = {inline_table(table.values)}")
    return "\n".join(lines) + "\n"


def table_dict(table: Table) -> dict[str, Any]:
    """What ``tomllib`` reads back for ``table``."""
    out: dict[str, Any] = {"kernel": table.kernel, "spec": table.spec, "types": dict(table.types)}
    if table.constexprs:
        out["constexprs"] = dict(table.constexprs)
    if table.values:
        out["values"] = dict(table.values)
    return out
