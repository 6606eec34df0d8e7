"""One parsed file, and the trimmed copy that LibCST's metadata providers run on.

Why trim: on a kernel file, ``ScopeProvider``/``QualifiedNameProvider``/``PositionProvider``
cost 3-8x the parse itself, almost all of it spent inside ``@triton.jit`` functions, whose
bodies never hold anything the locator reports. So the metadata runs on a copy of the module in
which each module-level kernel keeps its decorators but has no parameters and ``...`` as its
body; every other statement is kept whole. The kernels' parameter annotations go, one of each,
into a list appended after the last statement (a module-level expression resolves names exactly
as a module-level function's annotations do), so ``tl.constexpr`` is still resolved by
``QualifiedNameProvider``. Positions in the copy are shifted back to the real file per
top-level statement: whole lines are kept, so only line numbers move, and Python's own parser
(C, cheap) gives each statement's real first and last line.

Focused parse (``focus``): the locator's own passes get only the statements that can matter
(``locate.focus``: kernels cut to their signature, unreached plain functions left out), so
LibCST parses and annotates a fraction of a kernel file; every other reader gets the whole file.

Qualified names: ``QualifiedNameProvider`` answers, for each node, exactly
``ScopeProvider[node].get_qualified_names_for(node)`` (its whole implementation), but it makes a
full extra pass over the tree to store that answer for every node. ``names()`` asks the scope
for the few nodes the locator looks at instead: same answer (a test checks it node for node),
one traversal fewer.
"""

from __future__ import annotations

import ast
import bisect
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider, ScopeProvider

from autotune_rewrite.locate.focus import Want, focus as focus_of, lines_of
from autotune_rewrite.locate.names import absolute_names, star_modules, star_names
from autotune_rewrite.triton_names import KERNEL_DECORATOR_TAILS
from autotune_rewrite.model import Span



def _tail(expr: cst.BaseExpression) -> str | None:
    if isinstance(expr, cst.Call):
        expr = expr.func
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    return None


def _dotted(node: cst.CSTNode) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr.value}" if base else None
    return None


def _is_kernel_def(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.FunctionDef) and any(
        _tail(d.decorator) in KERNEL_DECORATOR_TAILS for d in stmt.decorators
    )


_STUB = cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[cst.Expr(cst.Ellipsis())])])


def _trim(stmt: cst.CSTNode) -> cst.CSTNode:
    if _is_kernel_def(stmt) and isinstance(stmt.body, cst.IndentedBlock):
        return stmt.with_changes(body=_STUB.with_changes(header=stmt.body.header), params=cst.Parameters())
    return stmt


def _annotations(fn: cst.FunctionDef):
    p = fn.params
    for param in (*p.posonly_params, *p.params, *p.kwonly_params):
        if param.annotation is not None:
            yield param.annotation.annotation


def _statements(source: str) -> list[ast.stmt] | None:
    """Python's view of the top-level statements (real line numbers, cheap C parser)."""
    try:
        return ast.parse(source).body
    except (SyntaxError, ValueError):
        return None


@dataclass
class ParsedModule:
    """A file's module and the metadata the locator asks for, on the trimmed copy."""

    path: str  # relative to the scan root, POSIX
    module_name: str
    is_package: bool
    module: cst.Module  # the module as parsed: the whole file, or its focus
    tree: cst.Module  # what the analysis walks: the trimmed copy (kernel bodies are ``...``)
    _pos: object = field(repr=False, default=None)
    _scope: object = field(repr=False, default=None)
    _ends: list[int] = field(repr=False, default_factory=list)
    _shift: list[int] = field(repr=False, default_factory=list)
    _real_end: dict = field(repr=False, default_factory=dict)
    _originals: dict = field(repr=False, default_factory=dict)  # trimmed kernel def -> real one
    _probes: dict = field(repr=False, default_factory=dict)  # real annotation -> node in the copy
    stars: tuple[str, ...] = ()  # modules star-imported (``from triton import *``), absolute
    dropped: frozenset[str] = frozenset()  # top-level defs and classes the focus left out

    @classmethod
    def parse(cls, path: str, source: str, module_name: str, is_package: bool,
              focus: Want | None = None) -> "ParsedModule":
        """``focus``: parse only the statements the locator needs for that (``locate.focus``);
        None: the whole file."""
        seen = focus_of(source, focus) if focus is not None else None
        if seen is None:
            module = cst.parse_module(source)
        else:
            try:
                module = cst.parse_module(seen.text)
            except cst.ParserSyntaxError:  # report it on the file's own lines
                return cls.parse(path, source, module_name, is_package)
        trimmed = [_trim(s) for s in module.body]
        changed = seen is not None or any(a is not b for a, b in zip(trimmed, module.body))
        firsts = list(seen.statements) if seen is not None else _statements(source) if changed else None
        if firsts is not None and len(firsts) != sum(
                len(st.body) if isinstance(st, cst.SimpleStatementLine) else 1 for st in module.body):
            if seen is not None:  # the two parsers disagree (should not happen): the whole file
                return cls.parse(path, source, module_name, is_package)
            firsts = None  # analyse the whole module
        originals: dict = {}
        probes: dict = {}
        if firsts is not None:
            by_text: dict[str, cst.BaseExpression] = {}
            for new, old in zip(trimmed, module.body):
                if new is not old:
                    originals[new] = old
                    for ann in _annotations(old):
                        probes[ann] = by_text.setdefault(module.code_for_node(ann), ann)
            body = list(trimmed)
            if by_text:
                body.append(cst.SimpleStatementLine(body=[cst.Expr(cst.List([cst.Element(a) for a in by_text.values()]))]))
            tree = module.with_changes(body=body)
        else:
            tree = module
        pm = cls(path, module_name, is_package, module, tree)
        pm._originals, pm._probes = originals, probes
        pm.dropped = seen.dropped if seen is not None else frozenset()
        pm.stars = star_modules(module, module_name, is_package)
        wrapper = MetadataWrapper(tree, unsafe_skip_copy=True)
        res = wrapper.resolve_many([PositionProvider, ScopeProvider])
        pm._pos, pm._scope = res[PositionProvider], res[ScopeProvider]
        if firsts is not None:
            pm._map_lines(firsts, source, module.body)
        return pm

    def _map_lines(self, stmts: list[ast.stmt], source: str, original) -> None:
        it = iter(stmts)
        lines = None
        for stmt, orig in zip(self.tree.body, original):
            # LibCST groups ``a; b`` in one SimpleStatementLine; Python's ast has one per part.
            first = next(it)
            if isinstance(stmt, cst.SimpleStatementLine):
                for _ in range(len(stmt.body) - 1):
                    next(it)
            rng = self._pos[stmt]
            self._ends.append(rng.end.line)
            self._shift.append(first.lineno - rng.start.line)
            if stmt is not orig:
                # A trimmed kernel: its real end comes from ast (byte column -> characters).
                lines = lines or lines_of(source)
                text = lines[first.end_lineno - 1].encode("utf-8")[: first.end_col_offset]
                self._real_end[stmt] = (first.end_lineno, len(text.decode("utf-8", "replace")))

    # -- metadata -------------------------------------------------------------------------
    def span(self, node: cst.CSTNode) -> Span:
        r = self._pos[node]
        shift = 0
        if self._ends:
            i = min(bisect.bisect_left(self._ends, r.start.line), len(self._ends) - 1)
            shift = self._shift[i]
        if node in self._real_end:
            end_line, end_col = self._real_end[node]
            return Span(r.start.line + shift, r.start.column, end_line, end_col)
        return Span(r.start.line + shift, r.start.column, r.end.line + shift, r.end.column)

    def names(self, node: cst.CSTNode) -> frozenset[str]:
        """Absolute dotted names ``node`` may refer to (empty when it names nothing known):
        what ``QualifiedNameProvider`` reports for it, made absolute."""
        scope = self._scope.get(node)
        if scope is None:
            return frozenset()
        qnames = scope.get_qualified_names_for(node)
        if not qnames and self.stars:
            # Bound by nothing LibCST sees (not even a parameter): a star import may bind it.
            dotted = _dotted(node)
            return star_names(dotted, self.stars) if dotted else frozenset()
        return absolute_names(qnames, self.module_name, self.is_package)

    def global_names(self, node: cst.CSTNode) -> frozenset[str]:
        """Absolute names a ``Name``/``a.b`` chain means in the module's global scope: for nodes
        outside the analysed copy (a trimmed kernel's parameter defaults, which Python
        evaluates at module level)."""
        dotted = _dotted(node)
        scope = self._scope.get(self.tree) if self._scope is not None else None
        if dotted is None or scope is None:
            return frozenset()
        qnames = scope.get_qualified_names_for(dotted)
        if not qnames and self.stars:
            return star_names(dotted, self.stars)
        return absolute_names(qnames, self.module_name, self.is_package)

    def original(self, fn: cst.FunctionDef) -> cst.FunctionDef:
        """The real ``def`` (with parameters and body) of a trimmed kernel; others as they are."""
        return self._originals.get(fn, fn)

    def annotation_names(self, annotation: cst.BaseExpression) -> frozenset[str]:
        """Qualified names of a kernel parameter's annotation (through the probe list)."""
        return self.names(self._probes.get(annotation, annotation))

    def scope(self, node: cst.CSTNode):
        return self._scope.get(node)

    def code(self, node: cst.CSTNode) -> str:
        return self.tree.code_for_node(node)

    def module_bindings(self) -> dict[str, list[cst.CSTNode]]:
        """Module-level ``def``s and ``NAME = value`` assignments (the value node), by name."""
        cached = self.__dict__.get("_bindings_cache")
        if cached is not None:
            return cached
        out: dict[str, list[cst.CSTNode]] = {}
        self.__dict__["_bindings_cache"] = out
        for stmt in self.tree.body:
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                out.setdefault(stmt.name.value, []).append(stmt)
            elif isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign):
                        for t in small.targets:
                            if isinstance(t.target, cst.Name):
                                out.setdefault(t.target.value, []).append(small.value)
                    elif isinstance(small, cst.AnnAssign) and small.value is not None and isinstance(small.target, cst.Name):
                        out.setdefault(small.target.value, []).append(small.value)
        return out
