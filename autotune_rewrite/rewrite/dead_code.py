"""What an inline ``configs=`` list leaves unused: the helper or variable it replaced, its import,
and the imports only that helper needed.

Only with ``--inline-configs``: the old expression's names (``matmul_configs`` in
``configs=matmul_configs()``) are removed where they are bound when nothing else reads them: not
the site's file after the edit, not the defining module, not ``__all__``, not any other file of
the repository (a whole-word search, so a mention in a comment or a string keeps it: when in
doubt, nothing is removed). Whole lines go, and the blank lines around them collapse to the
larger of the two gaps, so the file keeps the spacing its formatter wants.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable

import libcst as cst

from autotune_rewrite.text_edits import Edit
from autotune_rewrite.rewrite.parsed import ParsedFile

WHY = "remove what the inline list left unused"


def _names_in(node: cst.CSTNode) -> set[str]:
    """Plain names read in ``node`` (not attribute names, keywords or ``def`` names)."""
    found: set[str] = set()

    class _V(cst.CSTVisitor):
        def visit_Attribute(self, n: cst.Attribute) -> bool:
            n.value.visit(self)
            return False

        def visit_Arg(self, n: cst.Arg) -> bool:
            n.value.visit(self)
            return False

        def visit_FunctionDef(self, n: cst.FunctionDef) -> bool:
            for part in (n.params, n.body, *n.decorators):
                part.visit(self)
            return False

        def visit_Name(self, n: cst.Name) -> None:
            found.add(n.value)

    node.visit(_V())
    return found


def _uses(pf: ParsedFile, name: str, skip: Iterable[tuple[int, int]]) -> int:
    """``Name`` nodes spelling ``name`` outside the ``skip`` ranges, and mentions in ``__all__``."""
    ranges = list(skip)
    count = 0
    for n in pf.walk(cst.Name):
        if n.value == name:
            s = pf.offsets(n)[0]
            if not any(a <= s < b for a, b in ranges):
                count += 1
    for s in pf.walk(cst.SimpleString):
        if s.evaluated_value == name:
            count += 1  # ``__all__ = ["name"]``, a getattr by name: still used
    return count


def _binding(pf: ParsedFile, name: str):
    """The module-level statement binding ``name``: (statement, the import alias or None)."""
    for stmt in pf.module.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) and stmt.name.value == name:
            return stmt, None
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            continue
        small = stmt.body[0]
        if isinstance(small, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == name
                                                 for t in small.targets):
            return stmt, None
        if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
            for alias in small.names:
                bound = alias.asname.name if alias.asname else alias.name
                if isinstance(bound, cst.Name) and bound.value == name:
                    return stmt, alias
                if isinstance(small, cst.Import) and pf.code(alias.name).split(".")[0] == name and not alias.asname:
                    return stmt, alias
    return None


def _own_range(pf: ParsedFile, stmt: cst.CSTNode) -> tuple[int, int]:
    start, end = pf.offsets(stmt)
    for d in getattr(stmt, "decorators", ()):
        start = min(start, pf.offsets(d)[0] - 1)  # the ``@``
    return start, end


def remove_statement(pf: ParsedFile, stmt: cst.CSTNode) -> Edit:
    """Remove ``stmt``'s lines (and comment lines right above it); of the blank lines before and
    after, the larger run stays."""
    src, text = pf.src, pf.text
    start, end = _own_range(pf, stmt)
    a, b = src.line_start(start), src.line_end(end)
    while a > 0 and text[src.line_start(a - 1):a].lstrip().startswith("#"):
        a = src.line_start(a - 1)
    before = a
    while before > 0 and text[src.line_start(before - 1):before].strip() == "":
        before = src.line_start(before - 1)
    after = b
    while after < len(text) and text[after:src.line_end(after)].strip() == "":
        after = src.line_end(after)
    gap_before, gap_after = text.count("\n", before, a), text.count("\n", b, after)
    if after >= len(text):  # the end of the file: no blank lines left behind
        return Edit(before, len(text), "", WHY)
    if gap_before >= gap_after:
        return Edit(a, after, "", WHY)
    return Edit(before, b, "", WHY)


def _remove_alias(pf: ParsedFile, stmt: cst.SimpleStatementLine, alias: cst.ImportAlias) -> Edit:
    small = stmt.body[0]
    names = [n for n in small.names if n is not alias]
    if not names:
        return remove_statement(pf, stmt)
    names[-1] = names[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    start, end = pf.offsets(small)
    new = small.with_changes(names=names)
    if isinstance(small, cst.ImportFrom) and small.rpar is not None and len(names) == 1:
        new = new.with_changes(lpar=None, rpar=None)
    return Edit(start, end, pf.module.code_for_node(new), WHY)


def _module_path(module: str, exists: Callable[[str], bool]) -> str | None:
    base = module.replace(".", "/")
    for p in (f"{base}.py", f"{base}/__init__.py"):
        if exists(p):
            return p
    return None


def unused_after_inline(pf: ParsedFile, replaced: cst.CSTNode, load: Callable[[str], ParsedFile],
                        repo_texts: Callable[[], dict[str, str]]) -> dict[str, list[Edit]]:
    """Edits removing what replacing ``replaced`` (the old ``configs=`` expression of ``pf``) left
    unused. ``repo_texts()``: every Python file of the repository, path -> text."""
    out: dict[str, list[Edit]] = {}
    gone = [pf.offsets(replaced)]
    texts = None
    touched: set[int] = set()  # one edit per statement (two names of one import: the first only)
    for name in sorted(_names_in(replaced)):
        found = _binding(pf, name)
        if found is None or id(found[0]) in touched:
            continue
        stmt, alias = found
        touched.add(id(stmt))
        if _uses(pf, name, gone + [_own_range(pf, stmt)]):
            continue
        texts = texts if texts is not None else repo_texts()
        word = re.compile(rf"\b{re.escape(name)}\b")
        if alias is None:  # defined here: nothing else in the repository may name it
            if any(word.search(t) for p, t in texts.items() if p != pf.path):
                continue
            out.setdefault(pf.path, []).append(remove_statement(pf, stmt))
            continue
        out.setdefault(pf.path, []).append(_remove_alias(pf, stmt, alias))
        small = stmt.body[0]
        if not isinstance(small, cst.ImportFrom) or small.relative or small.module is None:
            continue
        home = _module_path(pf.code(small.module), texts.__contains__)
        original = alias.name.value if isinstance(alias.name, cst.Name) else None
        if home is None or original is None or any(word.search(t) for p, t in texts.items() if p not in (pf.path, home)):
            continue
        out.setdefault(home, []).extend(_remove_definition(load(home), original))
    return out


def _remove_definition(pf: ParsedFile, name: str) -> list[Edit]:
    """The module-level def/assignment of ``name`` when its own module does not use it, and the
    imports only it used."""
    found = _binding(pf, name)
    if found is None or found[1] is not None:
        return []
    stmt = found[0]
    own = _own_range(pf, stmt)
    if _uses(pf, name, [own]):
        return []
    edits = [remove_statement(pf, stmt)]
    for used in sorted(_names_in(stmt)):
        imported = _binding(pf, used)
        if imported is None or imported[1] is None:
            continue
        if not _uses(pf, used, [own, _own_range(pf, imported[0])]):
            edits.append(_remove_alias(pf, imported[0], imported[1]))
    return edits


__all__ = ["remove_statement", "unused_after_inline"]
