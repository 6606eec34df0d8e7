"""Dead configs of a product-built list dropped by a condition in the comprehension itself.

``[triton.Config(...) for m in [64, 128] for n in [32, 64] for s in [3, 4, 7] for w in [4, 8]]``:
when each dead config shares every loop value with a launchable one, no element can go
(``inplace`` refuses: entangled). The comprehension is then evaluated row by row
(``evaluate/loop_table``, the scan's own evaluator: the branch of ``[1] if is_hip() else [...]``
the target takes, so the condition never names the other branch, whose text stays as written),
each row labelled dead, kept or free (a later ``filter(...)`` or ``early_config_prune`` drops it
anyway), and the smallest condition over the loop variables that drops exactly the dead rows
(``smallest_condition``) is added to the innermost ``for``: a new ``if``, or ``and`` on its own.

What may not change is checked first: another kernel (or another target's branch) that reads
rows of the same comprehension keeps them, and one that would lose a row refuses the edit
(``shared``, with the condition that would do for this kernel alone); a comprehension bound to
a name read twice is not edited. The written text is then evaluated by Python over every row,
so the edit drops exactly the dead rows before the pipeline re-checks the patched tree.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Sequence as Seq

import libcst as cst

from autotune_rewrite.evaluate import DEFAULT_ANSWERS, ConfigObj, Evaluator, Unresolved, loop_table
from autotune_rewrite.files import module_name
from autotune_rewrite.line_split import bracketed
from autotune_rewrite.locate.early_prune import KEY
from autotune_rewrite.locate.parsed import ParsedModule
from autotune_rewrite.model import AutotuneSite, ConfigValue, ElementChoice
from autotune_rewrite.rewrite.decision import config_key
from autotune_rewrite.text_edits import Edit
from autotune_rewrite.rewrite.facts import FilterNote, NoInPlaceEdit
from autotune_rewrite.rewrite.inplace import User, known_reads, second_reader
from autotune_rewrite.rewrite.parsed import ParsedFile
from autotune_rewrite.smallest_condition import DEAD, FREE, KEEP, Condition, smallest_condition
from autotune_rewrite.targets import resolve_target

_LOOSE = (cst.IfExp, cst.Lambda, cst.NamedExpr)  # bind looser than ``and``: wrapped before extending


def _key(c: ConfigValue) -> tuple:
    return config_key(c), c.choices


def _literals(pf: ParsedFile, comp, nodes, bound) -> set[tuple[str, object]]:
    """Every literal the loops iterate over: written in an iterable (both branches of a
    conditional), or bound once at module level to a name an iterable reads. A config whose
    elements come from one of them was made by this comprehension."""
    out = set()
    for f in loop_table.fors(comp):
        lo, hi = pf.outer_offsets(f.iter)
        for n, at in nodes:
            values = (bound.get(n.value, []) if isinstance(n, cst.Name) else [n]) if lo <= at < hi else []
            if len(values) == 1 and isinstance(values[0], (cst.List, cst.Tuple)):
                out.add((pf.path, pf.span(values[0])))
    return out


def _find(load: Callable[[str], ParsedFile], choices: Seq[ElementChoice]) -> tuple | None:
    """The innermost comprehension whose loops iterate over one of ``choices``' literals, and its literals."""
    for choice in choices:
        pf = load(choice.path)
        bound: dict[str, list] = {}  # module-level ``NAME = value``
        for stmt in pf.module.body:
            for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
                if isinstance(small, cst.Assign) and [type(t.target) for t in small.targets] == [cst.Name]:
                    bound.setdefault(small.targets[0].target.value, []).append(small.value)
        nodes = [(n, pf.offsets(n)[0]) for n in pf.walk((cst.List, cst.Tuple, cst.Name))]
        found = [(c, lits) for c in pf.walk(loop_table.COMPREHENSIONS)
                 if (choice.path, choice.sequence) in (lits := _literals(pf, c, nodes, bound))]
        if found:  # source order: a comprehension inside another's loop comes later
            return pf, *found[-1]
    return None


def _no_imports(fq: str):
    raise Unresolved(f"`{fq}` is read from another module")


def _rows(pf: ParsedFile, comp, site: AutotuneSite) -> tuple[loop_table.Row, ...] | None:
    """The comprehension's rows as the scan evaluated them, on the site's targets; None when it
    reads what this evaluation cannot (another module's names, a function's parameters)."""
    pm = ParsedModule.parse(pf.path, pf.text, module_name(pf.path), pf.path.endswith("__init__.py"))
    span = pf.span(comp)
    found: list = []

    class _Find(cst.CSTVisitor):
        def on_visit(self, node) -> bool:
            if isinstance(node, loop_table.COMPREHENSIONS) and pm.span(node) == span:
                found.append(node)
            return not found

    pm.tree.visit(_Find())
    if not found:
        return None
    target = resolve_target(site.view_targets[0]) if site.view_targets else None
    ev = Evaluator(resolve=_no_imports, answers=DEFAULT_ANSWERS.for_target(target),
                   positions={pm.path: site.line} if pf.path == site.path else {})
    try:
        return loop_table.rows(ev, pm, found[0])
    except (Unresolved, RecursionError):
        return None


def _labels(rows, site: AutotuneSite, kept: set[int]) -> list[str] | None:
    """Per row: DEAD, KEEP or FREE (a row no config of the site is: a later filter dropped it)."""
    index: dict[tuple, set[int]] = {}
    for i, c in enumerate(site.configs or ()):
        index.setdefault(_key(c), set()).add(i)
    filtered = any(word in (site.configs_origin or "") for word in ("filter", KEY))
    out = []
    for row in rows:
        if not isinstance(row.item, ConfigObj):
            return None
        mine = index.get(_key(row.item.freeze()), set())
        if not mine and not filtered:
            return None  # the list lost it some way this table cannot see: nothing is assumed
        if mine & kept and mine - kept:
            return None  # the same config both kept and dropped (written twice): no row can say which
        out.append(FREE if not mine else KEEP if mine & kept else DEAD)
    return out


def filter_edits(site: AutotuneSite, kept: Seq[int], load: Callable[[str], ParsedFile], users: Seq[User],
                 refusal: NoInPlaceEdit, why: str = "") -> tuple[dict[str, list[Edit]], FilterNote] | NoInPlaceEdit:
    """The condition edit that drops every config of ``site`` not in ``kept``, or why there is
    none (``refusal``, the in-place refusal, with the condition when one exists but may not be
    written)."""
    configs, keep = tuple(site.configs or ()), set(kept)
    dead = [i for i in range(len(configs)) if i not in keep]
    if not dead or any(not configs[i].choices for i in dead):
        return refusal
    found = _find(load, configs[dead[0]].choices)
    if found is None:
        return refusal
    pf, comp, seqs = found
    if any(not {(ch.path, ch.sequence) for ch in configs[i].choices} & seqs for i in dead):
        return refusal  # dead configs of another list too
    rows = _rows(pf, comp, site)
    labels = _labels(rows, site, keep) if rows else None
    if labels is None or {_key(configs[i]) for i in dead} - {_key(r.item.freeze()) for r in rows}:
        return refusal
    values = [r.bindings for r in rows]
    alone = smallest_condition(values, labels)
    where = (f"{pf.path}:{pf.span(comp).start_line}",)
    by_key = {_key(r.item.freeze()): k for k, r in enumerate(rows)}
    for user in users:
        for c in user.configs:
            if not {(ch.path, ch.sequence) for ch in c.choices} & seqs:
                continue
            k = by_key.get(_key(c))
            if k is not None and not user.keeps(c):  # its own decision drops the row too
                if labels[k] == FREE:  # every reader then labels the rows alike: one condition
                    labels[k] = DEAD
                continue
            if k is None or labels[k] == DEAD:  # it reads a row this table lacks, or one that goes
                return replace(refusal, why="shared", configs=(c,), where=where, user=user.name,
                               condition=alone.text() if alone else None)
            labels[k] = KEEP
    cond = smallest_condition(values, labels)
    if cond is None:
        return refusal
    reader = second_reader(pf, pf.span(comp), known_reads(site, users, pf.path))
    if reader is not None:
        return replace(refusal, why="shared", configs=(), where=where, user=reader, condition=cond.text())
    text, edits, extended, line = _edits(pf, comp, cond, why)
    _prove(text, values, labels)
    note = FilterNote(pf.path, line, cond.text(), cond.negated, extended, tuple(configs[i] for i in dead),
                      labels.count(KEEP), labels.count(FREE), refusal.where)
    return {pf.path: edits}, note


def _edits(pf: ParsedFile, comp, cond: Condition, why: str) -> tuple[str, list[Edit], bool, int]:
    """(the condition as inserted, the edits, whether an ``if`` was extended, the ``for``'s line).

    A comprehension written one clause per line (as black writes a long one) gets the condition
    as an ``if`` line of its own after the innermost ``for`` and its ``if``s: the diff is that
    one added clause and the user's own filter stays as written (two ``if`` clauses are an
    ``and``). A comprehension on one line has its ``if`` extended with ``and`` instead."""
    last = loop_table.fors(comp)[-1]
    for_at = pf.text.rindex("for", 0, pf.offsets(last.target)[0])
    line = pf.src.line_of(for_at)
    end = pf.outer_offsets(last.ifs[-1].test if last.ifs else last.iter)[1]
    if pf.src.only_whitespace(pf.src.line_start(for_at), for_at):
        indent = pf.src.indent_at(for_at)
        core = _wrapped(cond, len(indent) + len("if "), indent, pf)
        # Clauses ended by a backslash (``for w in [4, 8]\``, as Triton's tutorials write them):
        # the new line keeps the file's continuations, and the old backslash then ends it.
        slash = "\\" if pf.text[end:pf.src.line_end(end)].strip(" \t").startswith("\\") else ""
        return core, [Edit(end, end, f"{slash}{pf.src.newline}{indent}if {core}", why)], False, line
    if not last.ifs:
        return cond.text(), [Edit(end, end, f" if {cond.text()}", why)], False, line
    test = last.ifs[-1].test
    core = f"({cond.text()})" if cond.needs_parens else cond.text()
    loose = isinstance(test, _LOOSE) or isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or)
    if loose and not test.lpar:  # ``if a or b`` -> ``if (a or b) and <cond>``
        start = pf.outer_offsets(test)[0]
        return core, [Edit(start, start, "(", why), Edit(end, end, f") and {core}", why)], True, line
    return core, [Edit(end, end, f" and {core}", why)], True, line


def _wrapped(cond: Condition, at: int, indent: str, pf: ParsedFile) -> str:
    """The condition on one line when it fits the file's line length from column ``at``, else
    split inside its parentheses as black and ruff format split it (``line_split``)."""
    text = cond.text()
    if at + len(text) <= pf.line_length or (cond.terms < 2):
        return text
    parts = cond.parts() if len(cond.groups) > 1 else [t.text() for t in cond.groups[0]]
    return bracketed("not (" if cond.negated else "(", parts, ")", at=at, indent=indent, unit=pf.indent_unit(),
                     nl=pf.src.newline, width=pf.line_length, joint=" or " if len(cond.groups) > 1 else " and ")


def _prove(text: str, values, labels) -> None:
    """Python itself evaluates the written condition on every row: dead rows go, kept rows stay."""
    code = compile(text, "<condition>", "eval")
    for row, label in zip(values, labels):
        keeps = bool(eval(code, {"__builtins__": {}}, dict(row)))  # our own text: names, literals, comparisons
        if label != FREE and keeps != (label == KEEP):
            raise RuntimeError(f"the condition `{text}` does not drop exactly the dead rows (at {row}): a bug of ours")


__all__ = ["filter_edits"]
