"""Text edits located by LibCST positions: the rewriter's output before it becomes a file.

Every transform of ``rewrite/`` computes ``Edit``s (replace the characters between two
offsets) instead of re-printing a tree, so whatever it does not touch stays byte-identical:
comments, quotes, trailing commas, CRLF line ends. ``SourceText`` maps LibCST's
``PositionProvider`` positions (1-based lines, 0-based columns in characters) to offsets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from autotune_rewrite.model import Span

# LibCST (like Python's tokenizer) ends a line at \r\n, \r or \n; str.splitlines() would also
# split at form feeds and other separators, which would shift every later line number.
_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class Edit:
    start: int  # character offset, inclusive
    end: int  # character offset, exclusive
    text: str
    why: str = ""  # one line for the summary ("remove config BLOCK_T=32 w4 s2")


class SourceText:
    """One file's text with a line table; knows its own newline and indentation unit."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.line_starts = [0]
        for m in _LINE_END.finditer(text):
            self.line_starts.append(m.end())
        first = _LINE_END.search(text)
        self.newline = first.group(0) if first else "\n"

    def offset(self, line: int, col: int) -> int:
        return self.line_starts[line - 1] + col

    def span_offsets(self, span: Span) -> tuple[int, int]:
        return self.offset(span.start_line, span.start_col), self.offset(span.end_line, span.end_col)

    def line_of(self, offset: int) -> int:
        """1-based line holding ``offset``."""
        lo, hi = 0, len(self.line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    def line_start(self, offset: int) -> int:
        return self.line_starts[self.line_of(offset) - 1]

    def line_end(self, offset: int) -> int:
        """Offset just after the newline that ends ``offset``'s line (or the end of the text)."""
        line = self.line_of(offset)
        return self.line_starts[line] if line < len(self.line_starts) else len(self.text)

    def indent_at(self, offset: int) -> str:
        """The leading whitespace of ``offset``'s line."""
        start = self.line_start(offset)
        m = re.match(r"[ \t]*", self.text[start:])
        return m.group(0) if m else ""

    def only_whitespace(self, start: int, end: int) -> bool:
        return self.text[start:end].strip() == ""


def apply_edits(text: str, edits: list[Edit] | tuple[Edit, ...]) -> str:
    """Apply non-overlapping edits; overlapping ones are a bug in a transform, so they raise."""
    ordered = sorted(edits, key=lambda e: (e.start, e.end))
    for a, b in zip(ordered, ordered[1:]):
        if b.start < a.end:
            raise ValueError(f"overlapping edits: {a!r} and {b!r}")
    out = []
    pos = 0
    for e in ordered:
        out.append(text[pos : e.start])
        out.append(e.text)
        pos = e.end
    out.append(text[pos:])
    return "".join(out)
