"""One parsed file: the LibCST tree, node positions as text offsets, and node lookup by Span.

The locator reports where things are as ``Span``s (LibCST ``PositionProvider`` coordinates);
the transforms find the same nodes again here and turn positions into ``Edit`` offsets.
"""

from __future__ import annotations

from typing import Iterator, TypeVar

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider, QualifiedNameProvider

from autotune_rewrite.errors import UserError
from autotune_rewrite.model import Span
from autotune_rewrite.settings.formatter import DEFAULT
from autotune_rewrite.text_edits import SourceText

N = TypeVar("N", bound=cst.CSTNode)


class ParsedFile:
    def __init__(self, path: str, text: str, line_length: int = DEFAULT) -> None:
        self.path = path
        self.line_length = line_length  # the repository's formatters': the lines we write fit it
        self.src = SourceText(text)
        try:
            module = cst.parse_module(text)
        except cst.ParserSyntaxError as exc:
            raise UserError(f"{path}: cannot parse ({exc.message}, line {exc.raw_line}); fix the syntax first") from None
        except cst.CSTValidationError as exc:
            raise UserError(f"{path}: cannot parse ({exc}); fix the syntax first") from None
        self.wrapper = MetadataWrapper(module, unsafe_skip_copy=True)  # the tree is ours alone
        self.module = self.wrapper.module
        self._pos = self.wrapper.resolve(PositionProvider)
        self._qnames = None
        self._nodes: list[cst.CSTNode] | None = None

    @property
    def text(self) -> str:
        return self.src.text

    def span(self, node: cst.CSTNode) -> Span:
        r = self._pos[node]
        return Span(r.start.line, r.start.column, r.end.line, r.end.column)

    def offsets(self, node: cst.CSTNode) -> tuple[int, int]:
        return self.src.span_offsets(self.span(node))

    def outer_offsets(self, node: cst.CSTNode) -> tuple[int, int]:
        """``offsets`` widened over the node's own parentheses: LibCST's position of ``(1, 2)`` is
        ``1, 2``, and text added after ``(a or b)`` must land after the ``)``."""
        start, end = self.offsets(node)
        lpar, rpar = getattr(node, "lpar", ()), getattr(node, "rpar", ())
        if lpar and rpar:
            start, end = self.offsets(lpar[0])[0], self.offsets(rpar[-1])[1]
        return start, end

    def code(self, node: cst.CSTNode) -> str:
        s, e = self.offsets(node)
        return self.text[s:e]

    def walk(self, kind: type[N]) -> Iterator[N]:
        """Every node of one type, in source order (outer before inner)."""
        if self._nodes is None:
            nodes: list[cst.CSTNode] = []

            class _Collect(cst.CSTVisitor):
                def on_visit(self, node: cst.CSTNode) -> bool:
                    nodes.append(node)
                    return True

            self.module.visit(_Collect())
            self._nodes = nodes
        return (n for n in self._nodes if isinstance(n, kind))

    def find(self, kind: type[N], span: Span, what: str) -> N:
        """The node of ``kind`` that starts where ``span`` starts (the locator's coordinates)."""
        same_start = []
        for node in self.walk(kind):
            s = self.span(node)
            if s == span:
                return node
            if (s.start_line, s.start_col) == (span.start_line, span.start_col):
                same_start.append(node)
        if same_start:  # ``f(a)(b)`` and ``f(a)`` start together: the outermost comes first
            return same_start[0]
        raise UserError(
            f"{self.path}:{span.start_line}: cannot find the {what} the scan reported; "
            "the file changed since it was scanned, re-run the command"
        )

    def qualified_names(self, node: cst.CSTNode) -> set[str]:
        if self._qnames is None:
            self._qnames = self.wrapper.resolve(QualifiedNameProvider)
        value = self._qnames.get(node, set())
        if callable(value):  # LibCST resolves qualified names lazily (LazyValue)
            value = value()
        return {q.name for q in value}

    def indent_unit(self) -> str:
        """The file's indentation step (the first indented block's), four spaces by default."""
        unit = self.module.default_indent
        return unit if unit.strip() == "" and unit else "    "
