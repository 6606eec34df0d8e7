"""Write captured specs as ``[[kernels]]`` tables, merged into a settings file by text.

The restricted shape we emit (strings, ints, floats, bools in inline tables) does not need a TOML
library; merging works on the file's text so every other byte (comments, order, the user's own
tables) stays as it was. Tables whose (kernel, spec) a capture produced are replaced in place
(the first one keeps its position); new ones are appended. The result is parsed back with
``tomllib`` and checked against what it must contain before anything is written.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from autotune_rewrite.errors import UserError
from autotune_rewrite.check.spec_toml import Table, render_table, table_dict

_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")


def prefix_for(path: Path) -> str:
    """``tool.autotune-rewrite.`` in a pyproject.toml, nothing in autotune-rewrite.toml."""
    return "tool.autotune-rewrite." if path.name == "pyproject.toml" else ""


def _kernels(doc: Mapping[str, Any], prefix: str) -> list:
    node: Any = doc
    for part in ("tool", "autotune-rewrite") if prefix else ():
        node = node.get(part, {}) if isinstance(node, Mapping) else {}
    value = node.get("kernels", []) if isinstance(node, Mapping) else []
    return value if isinstance(value, list) else []


def _blocks(lines: list[str]) -> list[tuple[int, int, str]]:
    """(start, end, header name) of every table block; a block's leading comments stay with it."""
    headers = []
    for i, line in enumerate(lines):
        m = _HEADER.match(line)
        if m and not line.lstrip().startswith("#"):
            headers.append((i, m.group(1).replace(" ", "")))
    blocks = []
    for n, (start, name) in enumerate(headers):
        end = headers[n + 1][0] if n + 1 < len(headers) else len(lines)
        # comments/blank lines just above the next header belong to that header
        while end > start + 1 and n + 1 < len(headers) and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
            end -= 1
        blocks.append((start, end, name))
    return blocks


def merge_text(text: str, tables: Sequence[Table], prefix: str = "", where: str = "settings") -> str:
    """``text`` with ``tables`` merged in (same (kernel, spec) replaced, others kept)."""
    try:
        before = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{where}: invalid TOML ({exc}); fix it or pass --out another file") from None
    wanted = {(t.kernel, t.spec): t for t in tables}
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    header = f"{prefix}kernels"
    placed: set[tuple[str, str]] = set()
    out: list[str] = []
    cursor = 0
    for start, end, name in _blocks(lines):
        if name != header or not lines[start].lstrip().startswith("[["):
            continue
        try:
            body = tomllib.loads("".join(lines[start:end]).replace(f"[[{prefix}kernels]]", "[[kernels]]", 1))
            entry = body["kernels"][0]
            ident = (entry.get("kernel"), entry.get("spec", "default"))
        except (tomllib.TOMLDecodeError, KeyError, IndexError, AttributeError):
            continue
        if ident not in wanted:
            continue
        # drop the comment lines we wrote above it last time, then the table itself
        top = start
        while top > cursor and lines[top - 1].startswith("# captured "):
            top -= 1
        out += lines[cursor:top]
        if ident not in placed:
            out.append(render_table(wanted[ident], prefix))
            placed.add(ident)
            if end < len(lines) and lines[end].strip():
                out.append("\n")
        cursor = end
    out += lines[cursor:]
    rest = [t for t in tables if (t.kernel, t.spec) not in placed]
    for t in rest:
        if out and out[-1].strip():
            out.append("\n")
        out.append(render_table(t, prefix))
    result = "".join(out)
    _verify(before, result, tables, prefix, where)
    return result


def _verify(before: Mapping[str, Any], result: str, tables: Sequence[Table], prefix: str, where: str) -> None:
    after = tomllib.loads(result)
    wanted = {(t.kernel, t.spec) for t in tables}
    kept = [e for e in _kernels(before, prefix) if (e.get("kernel"), e.get("spec", "default")) not in wanted]
    got = _kernels(after, prefix)
    expected_new = [table_dict(t) for t in tables]
    if sorted(map(repr, got)) != sorted(map(repr, kept + expected_new)):
        raise UserError(f"{where}: could not merge the captured specs by text (unusual layout); pass --out a new file")


def merge_file(path: Path, tables: Sequence[Table]) -> str:
    """Merge into ``path`` (created when missing); returns the text written."""
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    result = merge_text(text, tables, prefix_for(path), where=str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(result, encoding="utf-8")
    return result
