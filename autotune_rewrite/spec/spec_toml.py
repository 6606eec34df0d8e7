"""The TOML form of a launch-spec table (``[[kernels]]``), built with tomlkit: the one home of TOML writing.

Used for the stanza ``check`` prints when values are missing and for the tables ``capture``
merges into settings files (``gpu/capture/stanza.py``). tomlkit quotes keys and escapes strings
as TOML requires; ``tomllib`` reads back exactly ``table_dict(table)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import tomlkit
from tomlkit.items import Table as TomlTable

from autotune_rewrite.constexpr_values import spelling


@dataclass(frozen=True)
class Table:
    """One ``[[kernels]]`` table to write."""

    kernel: str
    spec: str
    types: tuple[tuple[str, str], ...]
    constexprs: tuple[tuple[str, Any], ...] = ()
    values: tuple[tuple[str, int], ...] = ()
    comments: tuple[str, ...] = ()


def _written(pairs: tuple[tuple[str, Any], ...]) -> dict[str, Any]:
    # None and dtypes have no TOML form: their string spelling, which the settings reader reads back.
    return {name: spelling(value) for name, value in pairs}


def _inline(pairs: tuple[tuple[str, Any], ...]):
    table = tomlkit.inline_table()
    table.update(_written(pairs))
    return table


def toml_table(table: Table) -> TomlTable:
    """The tomlkit table (comments first, inside the table, so they travel with it on a merge)."""
    out = tomlkit.table()
    for comment in table.comments:
        out.add(tomlkit.comment(comment))
    out.add("kernel", table.kernel)
    out.add("spec", table.spec)
    out.add("types", _inline(table.types))
    if table.constexprs:
        out.add("constexprs", _inline(table.constexprs))
    if table.values:
        out.add("values", _inline(table.values))
    return out


def render_table(table: Table, prefix: str = "") -> str:
    """``[[{prefix}kernels]]`` and its body, ready to paste (``prefix`` ``tool.autotune-rewrite.`` in a pyproject)."""
    doc = tomlkit.document()
    node: Any = doc
    for part in [p for p in prefix.split(".") if p]:
        node.append(part, tomlkit.table(is_super_table=True))
        node = node[part]
    aot = tomlkit.aot()
    aot.append(toml_table(table))
    node.append("kernels", aot)
    return tomlkit.dumps(doc)


def table_dict(table: Table) -> dict[str, Any]:
    """What ``tomllib`` reads back for ``table``."""
    out: dict[str, Any] = {"kernel": table.kernel, "spec": table.spec, "types": dict(table.types)}
    if table.constexprs:
        out["constexprs"] = _written(table.constexprs)
    if table.values:
        out["values"] = dict(table.values)
    return out


__all__ = ["Table", "render_table", "table_dict", "toml_table"]
