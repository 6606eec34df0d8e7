"""Git-style unified diffs that ``git apply`` accepts.

difflib finds the hunks; the headers and the ``\\ No newline at end of file`` marker are
written here because difflib's ``unified_diff`` knows neither. Lines keep their own ending,
so a CRLF file's hunks carry ``\\r\\n`` and apply back onto the CRLF file.
"""

from __future__ import annotations

import difflib
import re

_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
NO_NEWLINE = "\\ No newline at end of file\n"


def _split(text: str) -> list[str]:
    return _LINES.findall(text)


def _range(start: int, count: int) -> str:
    # git writes "-l" for one line and "-l,0" with the line *before* an empty range.
    if count == 1:
        return str(start + 1)
    if count == 0:
        return f"{start},0"
    return f"{start + 1},{count}"


def _emit(prefix: str, line: str, out: list[str]) -> None:
    if line.endswith("\n") or line.endswith("\r"):
        out.append(prefix + line if line.endswith("\n") else prefix + line + "\n")
        return
    out.append(prefix + line + "\n")
    out.append(NO_NEWLINE)


def unified_diff(path: str, before: str, after: str, context: int = 3) -> str:
    """One file's diff with ``a/path`` and ``b/path``; empty when nothing changed."""
    if before == after:
        return ""
    a, b = _split(before), _split(after)
    out = [f"diff --git a/{path} b/{path}\n", f"--- a/{path}\n", f"+++ b/{path}\n"]
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for group in matcher.get_grouped_opcodes(context):
        i1, i2 = group[0][1], group[-1][2]
        j1, j2 = group[0][3], group[-1][4]
        out.append(f"@@ -{_range(i1, i2 - i1)} +{_range(j1, j2 - j1)} @@\n")
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                for line in a[a1:a2]:
                    _emit(" ", line, out)
                continue
            for line in a[a1:a2]:
                _emit("-", line, out)
            for line in b[b1:b2]:
                _emit("+", line, out)
    return "".join(out)


def combined_diff(changes) -> str:
    """Diffs of several ``FileChange``-like objects (path, before, after), sorted by path."""
    return "".join(unified_diff(c.path, c.before, c.after) for c in sorted(changes, key=lambda c: c.path))
