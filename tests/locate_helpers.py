"""Shared helpers for the locator tests."""

from __future__ import annotations

from pathlib import Path

from autotune_rewrite.model import Span

FIXTURES = Path(__file__).parent / "fixtures" / "locate"
REPO = FIXTURES / "repo"


def text_at(source: str, span: Span) -> str:
    """The source text a span covers (lines 1-based, columns 0-based, end exclusive)."""
    lines = source.splitlines(keepends=True)
    if span.start_line == span.end_line:
        return lines[span.start_line - 1][span.start_col:span.end_col]
    parts = [lines[span.start_line - 1][span.start_col:]]
    parts += lines[span.start_line:span.end_line - 1]
    parts.append(lines[span.end_line - 1][:span.end_col])
    return "".join(parts)


def by_kernel(result, kernel, path=None):
    hits = [s for s in result.sites if s.kernel == kernel and (path is None or s.path == path)]
    assert len(hits) == 1, [s.ident for s in hits]
    return hits[0]
