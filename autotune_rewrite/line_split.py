"""One bracketed expression written within a line length the way black and ruff's formatter
split it, so the code the rewrite emits is what they would leave as it is.

Their rule, for the brackets an emitted line ends with: the whole on one line when it fits;
else the contents on one line of their own between the brackets (a call's arguments, a
comprehension, a parenthesised condition), unless the brackets are a collection display with
commas (a tuple, a dict), which is never written so; else one item per line: after a comma
with a trailing comma added, before a boolean operator with the operator leading, or each
clause of a comprehension on its own. An item that holds a line break was split by the
caller (an inner bracket) and forces the last form.
"""

from __future__ import annotations

from collections.abc import Sequence


def bracketed(head: str, items: Sequence[str], tail: str, *, at: int, indent: str, unit: str, nl: str,
              width: int, joint: str = ", ", collection: bool = False) -> str:
    """``head`` (ending in the opening bracket) + ``items`` joined by ``joint`` + ``tail``
    (starting with the closing bracket), starting at column ``at`` of a line indented by
    ``indent``; the continuation lines carry their own indentation, the first line does not."""
    inner = indent + unit
    flat = joint.join(items)
    if "\n" not in flat and "\r" not in flat:
        if at + len(head) + len(flat) + len(tail) <= width:
            return head + flat + tail
        if not (collection and joint == ", ") and len(inner) + len(flat) <= width:
            return f"{head}{nl}{inner}{flat}{nl}{indent}{tail}"
    word = joint.strip()
    if word == ",":
        lines = [f"{inner}{item}," for item in items]
    elif word:
        lines = [f"{inner}{item}" if i == 0 else f"{inner}{word} {item}" for i, item in enumerate(items)]
    else:
        lines = [f"{inner}{item}" for item in items]
    return f"{head}{nl}{nl.join(lines)}{nl}{indent}{tail}"


__all__ = ["bracketed"]
