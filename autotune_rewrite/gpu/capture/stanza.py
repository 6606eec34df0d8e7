"""Merge captured specs as ``[[kernels]]`` tables into a settings file, with tomlkit.

tomlkit keeps every byte it does not touch (comments, order, the user's formatting of every
other table). Tables whose (kernel, spec) a capture produced are replaced in place, keeping the
trailing comments and blank lines that belong to what follows; new ones are appended to the
array. The result is parsed back with ``tomllib`` and checked against what it must contain
before anything is written.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import AoT, Comment, Whitespace

from autotune_rewrite.spec.spec_toml import Table, table_dict, toml_table
from autotune_rewrite.errors import UserError
from autotune_rewrite.settings import TOOL_FILE


def prefix_for(path: Path) -> str:
    """Nothing in autotune-rewrite.toml (the table is the file), ``tool.autotune-rewrite.`` elsewhere."""
    return "" if path.name == TOOL_FILE else "tool.autotune-rewrite."


def _kernels(doc: Mapping[str, Any], prefix: str) -> list:
    node: Any = doc
    for part in ("tool", "autotune-rewrite") if prefix else ():
        node = node.get(part, {}) if isinstance(node, Mapping) else {}
    value = node.get("kernels", []) if isinstance(node, Mapping) else []
    return value if isinstance(value, list) else []


def _ident(entry: Any) -> tuple[Any, Any] | None:
    return (entry.get("kernel"), entry.get("spec", "default")) if isinstance(entry, Mapping) else None


def _array(doc: tomlkit.TOMLDocument, prefix: str, where: str) -> AoT:
    """The document's ``kernels`` array of tables, created (with the tables above it) when missing."""
    node: Any = doc
    for part in ("tool", "autotune-rewrite") if prefix else ():
        if part not in node:
            node.append(part, tomlkit.table(is_super_table=True))
        node = node[part]
        if not isinstance(node, Mapping):
            raise UserError(f"{where}: {part} is not a table; fix it or pass --out another file")
    if "kernels" not in node:
        node.append("kernels", tomlkit.aot())
    aot = node["kernels"]
    if not isinstance(aot, AoT):
        raise UserError(f"{where}: kernels is not an array of tables ([[{prefix}kernels]]); fix it or pass --out another file")
    return aot


def _trailing_trivia(table) -> list:
    """The comments and blank lines at the end of a table's body: they belong to what follows it."""
    body = table.value.body
    n = len(body)
    while n and body[n - 1][0] is None and isinstance(body[n - 1][1], (Whitespace, Comment)):
        n -= 1
    return body[n:]


def merge_text(text: str, tables: Sequence[Table], prefix: str = "", where: str = "settings") -> str:
    """``text`` with ``tables`` merged in (same (kernel, spec) replaced, others kept)."""
    try:
        before = tomllib.loads(text)
        doc = tomlkit.parse(text)
    except (tomllib.TOMLDecodeError, TOMLKitError) as exc:
        raise UserError(f"{where}: invalid TOML ({exc}); fix it or pass --out another file") from None
    created = "kernels" not in text  # cheap: a file that never says kernels has no such array
    aot = _array(doc, prefix, where)
    for table in tables:
        new = toml_table(table)
        at = next((i for i, old in enumerate(aot) if _ident(old) == (table.kernel, table.spec)), None)
        if at is not None:
            for item in _trailing_trivia(aot[at]):
                new.value.append(*item)
            aot[at] = new
            continue
        if len(aot):  # a blank line between the last table and ours
            last = aot[len(aot) - 1]
            if not _trailing_trivia(last):
                last.add(tomlkit.nl())
        new.add(tomlkit.nl())  # a blank line before whatever follows the array
        aot.append(new)
    result = tomlkit.dumps(doc)
    header = f"[[{prefix}kernels]]"
    if created and len(aot) and result.find(header) > 0 and not result[:result.find(header)].endswith("\n\n"):
        aot[0].trivia.indent = "\n"  # a new array starts after a blank line, as hand-written TOML does
        result = tomlkit.dumps(doc)
    if result.endswith("\n\n") and not text.endswith("\n\n"):
        result = result[:-1]  # ...but no new blank line at the end of the file
    _verify(before, result, tables, prefix, where)
    return result


def _verify(before: Mapping[str, Any], result: str, tables: Sequence[Table], prefix: str, where: str) -> None:
    after = tomllib.loads(result)
    wanted = {(t.kernel, t.spec) for t in tables}
    kept = [e for e in _kernels(before, prefix) if _ident(e) not in wanted]
    got = _kernels(after, prefix)
    expected_new = [table_dict(t) for t in tables]
    if sorted(map(repr, got)) != sorted(map(repr, kept + expected_new)):
        raise UserError(f"{where}: could not merge the captured specs (unusual layout); pass --out a new file")


def merge_file(path: Path, tables: Sequence[Table]) -> str:
    """Merge into ``path`` (created when missing); returns the text written."""
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    result = merge_text(text, tables, prefix_for(path), where=str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(result, encoding="utf-8")
    return result


__all__ = ["merge_file", "merge_text", "prefix_for"]
