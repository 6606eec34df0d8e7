"""Edits inside a bracketed sequence: a list/tuple literal's elements or a call's arguments.

Three layouts are told apart because users care about them differently:

* one item per line (the usual ``configs=[...]`` and black-wrapped calls): items are removed
  and added as whole lines, so comments on or above an item travel with it and nothing else
  moves;
* hanging: the first item right after the bracket, each next one on its own line at the same
  column, the bracket closing on the last item's line (``configs=[triton.Config(...),`` then the
  others aligned under it): the items are written again in that layout, kept items' text
  unchanged;
* anything else (``["a", "b"]``, a wrapped call with several arguments per line): additions
  are inserted after the last item on its line; removals rebuild the items between the
  brackets (kept items' text unchanged).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from autotune_rewrite.text_edits import Edit
from autotune_rewrite.rewrite.parsed import ParsedFile

_SKIP = re.compile(r"(?:\s+|#[^\r\n]*|,)*")
_NEXT_LINE = re.compile(r"[ \t]*\r?\n[ \t]*")  # a line break and indentation, nothing else


@dataclass(frozen=True)
class Item:
    start: int
    end: int
    comma_end: int | None  # offset just after this item's comma, None without one


class Sequence:
    def __init__(self, pf: ParsedFile, node: cst.CSTNode) -> None:
        self.pf = pf
        self.node = node
        text = pf.text
        if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            parts = node.elements
        elif isinstance(node, cst.Call):
            parts = node.args
        else:
            raise TypeError(f"not a sequence: {type(node).__name__}")
        items = []
        for part in parts:
            s, e = pf.outer_offsets(part.value)
            if isinstance(part, cst.Arg) and (part.keyword is not None or part.star):
                s = pf.offsets(part)[0]  # ``name=value`` / ``*x`` start before the value
            comma = part.comma
            comma_end = pf.offsets(comma)[0] + 1 if isinstance(comma, cst.Comma) else None
            items.append(Item(s, e, comma_end))
        self.items: tuple[Item, ...] = tuple(items)
        start, end = pf.offsets(node)
        if isinstance(node, cst.Call):
            self.open_end = text.index("(", pf.offsets(node.func)[1]) + 1
        elif isinstance(node, cst.Tuple) and node.lpar:  # LibCST's span of a tuple leaves out its parentheses
            self.open_end = pf.offsets(node.lpar[-1])[1]
        else:
            self.open_end = text.index({cst.List: "[", cst.Set: "{", cst.Tuple: "("}[type(node)], start) + 1
        after = (items[-1].comma_end or items[-1].end) if items else self.open_end
        # Only whitespace, comments and a trailing comma can sit between the last item and the bracket.
        self.close = _SKIP.match(text, after).end()
        assert text[self.open_end - 1] in "([{" and text[self.close] in ")]}", (self.open_end, self.close)

    # -- layout ------------------------------------------------------------------------------

    def one_per_line(self) -> bool:
        src = self.pf.src
        if not self.items:
            return False
        for item in self.items:
            if not src.only_whitespace(src.line_start(item.start), item.start):
                return False
            tail_start = item.comma_end or item.end
            tail = self.pf.text[tail_start : src.line_end(tail_start)]
            if tail.strip() and not tail.strip().startswith("#"):
                return False
        return src.only_whitespace(src.line_start(self.close), self.close)

    def hanging_indent(self) -> str | None:
        """The indentation of the items after the first in the hanging layout, else None.
        Anything between the items but the line break (a comment) makes it another layout."""
        src, text = self.pf.src, self.pf.text
        if len(self.items) < 2 or text[self.open_end:self.items[0].start].strip(" \t"):
            return None
        indent = text[src.line_start(self.items[1].start):self.items[1].start]
        for prev, item in zip(self.items, self.items[1:]):
            if prev.comma_end is None or not _NEXT_LINE.fullmatch(text[prev.comma_end:item.start]):
                return None
            if text[src.line_start(item.start):item.start] != indent:
                return None
        last = self.items[-1]
        return None if text[last.comma_end or last.end:self.close].strip(" \t") else indent

    def _hanging(self, parts: list[str], indent: str, why: str) -> list[Edit]:
        """The items written again in the hanging layout (the trailing comma as written)."""
        first, last = self.items[0], self.items[-1]
        sep = "," + self.pf.src.newline + indent
        return [Edit(first.start, self.close, sep.join(parts) + self.pf.text[last.end:self.close], why)]

    def item_indent(self) -> str:
        if self.items:
            return self.pf.src.indent_at(self.items[0].start)
        return self.pf.src.indent_at(self.close) + self.pf.indent_unit()

    def _region(self, i: int) -> tuple[int, int]:
        """Whole lines of item ``i``: comment lines right above it, the item, its trailing comment."""
        src, text = self.pf.src, self.pf.text
        item = self.items[i]
        start = src.line_start(item.start)
        floor = src.line_end(self.items[i - 1].comma_end or self.items[i - 1].end) if i else src.line_end(self.open_end - 1)
        while start > floor:
            prev = src.line_start(start - 1)
            if not text[prev:start].strip().startswith("#"):
                break
            start = prev
        return start, src.line_end(item.comma_end or item.end)

    def text_of(self, i: int) -> str:
        item = self.items[i]
        return self.pf.text[item.start : item.end]

    # -- edits -------------------------------------------------------------------------------

    def append(self, texts: list[str], why: str) -> list[Edit]:
        """Add items after the last one, in the sequence's own layout."""
        if not texts:
            return []
        nl = self.pf.src.newline
        indent = self.hanging_indent()
        if indent is not None:
            return self._hanging([self.text_of(i) for i in range(len(self.items))] + list(texts), indent, why)
        if self.one_per_line():
            last = self.items[-1]
            edits = []
            if last.comma_end is None:
                edits.append(Edit(last.end, last.end, ",", why))
            at = self.pf.src.line_end(last.comma_end or last.end)
            ind = self.item_indent()
            edits.append(Edit(at, at, "".join(f"{ind}{t},{nl}" for t in texts), why))
            return edits
        if not self.items:
            tail = "," if isinstance(self.node, cst.Tuple) and len(texts) == 1 else ""
            return [Edit(self.open_end, self.open_end, ", ".join(texts) + tail, why)]
        last = self.items[-1]
        if last.comma_end is not None:
            if isinstance(self.node, cst.Tuple) and len(self.items) == 1:
                # ``("n",)``: that comma makes the tuple, it is not a trailing-comma style.
                return [Edit(last.comma_end, last.comma_end, ",".join(f" {t}" for t in texts), why)]
            return [Edit(last.comma_end, last.comma_end, "".join(f" {t}," for t in texts), why)]
        return [Edit(last.end, last.end, "".join(f", {t}" for t in texts), why)]

    def keep_and_append(self, keep: list[int], texts: list[str], why: str) -> list[Edit]:
        """Keep the items at ``keep`` (in their order), drop the others, append ``texts``."""
        if keep == list(range(len(self.items))):
            return self.append(texts, why)
        nl = self.pf.src.newline
        if self.one_per_line():
            edits = []
            for i in range(len(self.items)):
                if i not in keep:
                    s, e = self._region(i)
                    edits.append(Edit(s, e, "", why))
            if texts:
                ind = self.item_indent()
                lines = "".join(f"{ind}{t},{nl}" for t in texts)
                if keep:
                    last = self.items[keep[-1]]
                    if last.comma_end is None:
                        edits.append(Edit(last.end, last.end, ",", why))
                    at = self.pf.src.line_end(last.comma_end or last.end)
                else:
                    at = self._region(0)[0]
                edits.append(Edit(at, at, lines, why))
            return edits
        parts = [self.text_of(i) for i in keep] + list(texts)
        indent = self.hanging_indent()
        if indent is not None and parts:
            return self._hanging(parts, indent, why)
        # Mixed layout: rebuild the items between the brackets, kept items' text unchanged.
        first, last = self.items[0], self.items[-1]
        end = last.comma_end or last.end
        inner = ", ".join(parts)
        if last.comma_end is not None or (isinstance(self.node, cst.Tuple) and len(parts) == 1):
            inner += ","
        if "\n" in self.pf.text[first.start : end] or "\r" in self.pf.text[first.start : end]:
            ind = self.item_indent()
            closing = self.pf.src.indent_at(self.close)
            inner = nl + "".join(f"{ind}{p},{nl}" for p in parts) + closing
            return [Edit(self.open_end, self.close, inner, why)]
        return [Edit(first.start, end, inner, why)]
