"""A device guard an earlier run wrote, extended when the fleet grows.

After ``diff --arch sm_120 --arch sm_90`` the kernel's ``early_config_prune`` is the guard's
helper. Run again with one more target (``--arch sm_86``), the scan runs that helper per target,
so what it already prunes is gone from the judged lists, and the new target's dead configs are
added to the same table: their rows go under the capability's entry (a new entry in capability
order), and ``prune_configs_by`` and the helper stay as they are. Without this a second guard
would wrap the first: two tables and two helpers for one kernel.

The guard is recognised by what its helper does (asks Triton's driver for ``arch``, then reads
``dead = TABLE.get(arch, [])``) over a module-level dict of literal lists; a table in a layout
this module does not write (an entry on one line) is not extended, and the caller composes a
new guard as for any other pruner.
"""

from __future__ import annotations

import ast
import re

import libcst as cst

from autotune_rewrite.locate.early_prune import pruner_node
from autotune_rewrite.rewrite.configs import autotune_arg
from autotune_rewrite.rewrite.decision import Decision
from autotune_rewrite.text_edits import Edit
from autotune_rewrite.rewrite.guard_text import by_capability, capability_block, entry_key, rows
from autotune_rewrite.rewrite.parsed import ParsedFile

_ARCH = re.compile(r"arch=\w+\.runtime\.driver\.active\.get_current_target\(\)\.arch")
_DEAD = re.compile(r"dead=(?P<table>\w+)\.get\(arch,\[\],?\)")


def _table(pf: ParsedFile, call: cst.Call) -> cst.Dict | None:
    """The table of the guard ``call``'s ``early_config_prune`` names, if it names one."""
    prune = autotune_arg(call, "prune_configs_by")
    helper = pruner_node(prune.value) if prune is not None else None
    defs = [s for s in pf.module.body if isinstance(s, cst.FunctionDef) and isinstance(helper, cst.Name)
            and s.name.value == helper.value]
    body = defs[0].body.body if len(defs) == 1 else ()
    flat = [re.sub(r"\s+", "", pf.code(s)) for s in body[:2]]
    found = _DEAD.fullmatch(flat[1]) if len(flat) == 2 and _ARCH.fullmatch(flat[0]) else None
    for stmt in pf.module.body if found else ():
        small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) else None
        if isinstance(small, cst.Assign) and pf.code(small.targets[0].target) == found["table"] \
                and isinstance(small.value, cst.Dict):
            return small.value
    return None


def extend_edits(pf: ParsedFile, call: cst.Call, decision: Decision, quote: str, why: str) -> list[Edit] | None:
    """The edits adding ``decision.guarded`` to the guard the site already has (``[]`` when it
    lists them all), or None when it has none this module can extend."""
    table = _table(pf, call)
    entries: dict[int, tuple[cst.List, set]] = {}
    for el in table.elements if table is not None else ():
        if not (isinstance(el, cst.DictElement) and isinstance(el.key, cst.Integer) and isinstance(el.value, cst.List)
                and _own_line(pf, pf.offsets(el)[0]) and _own_line(pf, _close(pf, el.value))):
            return None
        have = {_row_key(pf.code(e.value)) for e in el.value.elements}
        if None in have:
            return None
        entries[int(el.key.value, 0)] = el.value, have
    if table is None or not _own_line(pf, _close(pf, table)):
        return None
    nl, unit, width, many = pf.src.newline, pf.indent_unit(), pf.line_length, len(decision.specs) > 1
    indent = pf.src.indent_at(pf.offsets(table.elements[0])[0]) if table.elements else unit
    edits = []
    for cap, guards in by_capability(decision).items():
        have = entries.get(cap, (None, set()))[1]
        new = [g for g in guards if entry_key(g.config.kwargs, g.config.effective_num_warps,
                                              g.config.effective_num_stages) not in have]
        if not new:
            continue
        if cap in entries:  # at the end of its list, before the ``],`` line
            at = pf.src.line_start(_close(pf, entries[cap][0]))
            edits.append(Edit(at, at, rows(new, cap, many, quote, indent + unit, unit, nl, width), why))
            continue
        later = [pf.offsets(el)[0] for el in table.elements if int(el.key.value, 0) > cap]
        at = pf.src.line_start(min(later) if later else _close(pf, table))
        edits.append(Edit(at, at, capability_block(new, cap, many, quote, indent, unit, nl, width), why))
    return edits


def _row_key(text: str) -> tuple | None:
    """A row's ``entry_key`` (None for anything but a literal ``(dict, int, int)``)."""
    try:
        meta, warps, stages = ast.literal_eval(text)
        return entry_key(dict(meta), warps, stages)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _close(pf: ParsedFile, node: cst.List | cst.Dict) -> int:
    """Where the closing bracket is (a bracket node's own position starts at the space before it)."""
    return pf.offsets(node)[1] - 1


def _own_line(pf: ParsedFile, at: int) -> bool:
    """``at`` starts its line (after indentation): text goes in as whole lines before it."""
    return pf.src.only_whitespace(pf.src.line_start(at), at)


__all__ = ["extend_edits"]
