"""What ``--kernel NAME`` means: the sites a name on the command line selects.

Accepted spellings, each matching the kernel's name or the name it is assigned to
(``k2 = triton.autotune(...)(k)``: ``k2`` as well as ``k``):

- ``name``;
- ``path::name`` (the site's file, or the file that defines the kernel);
- ``path::name:LINE`` (or ``name:LINE``): LINE is the kernel's ``def`` line or the site's line,
  for two kernels that share ``path::name`` (two defs of one name under ``if``/``else``);
- a site's ``ident`` as reports print it.

A name that selects sites with different idents is ambiguous: the caller gets the choices, one
line, and no kernel is guessed.
"""

from __future__ import annotations

import difflib
import re
from typing import Sequence

from autotune_rewrite.errors import UserError
from autotune_rewrite.model import AutotuneSite

_WITH_LINE = re.compile(r"^(?P<name>.+):(?P<line>\d+)$")


def matching(sites: Sequence[AutotuneSite], kernel: str) -> list[AutotuneSite]:
    """The sites ``kernel`` names (possibly several, possibly none)."""
    path, _, rest = kernel.rpartition("::") if "::" in kernel else (None, "", kernel)
    m = _WITH_LINE.match(rest)
    name, line = (m["name"], int(m["line"])) if m else (rest, None)
    return [s for s in sites if s.ident == kernel or (
        name in (s.kernel, s.bound_to)
        and (path is None or path in (s.path, s.kernel_path))
        and (line is None or line in (s.line, s.ident_line, _def_line(s))))]


def _def_line(site: AutotuneSite) -> int | None:
    return site.kernel_span.start_line if site.kernel_span is not None else None


def ambiguity(kernel: str, hits: Sequence[AutotuneSite]) -> UserError | None:
    """The one-line error for a name that selects different kernels, else None."""
    idents = sorted({s.ident for s in hits})
    if len(idents) < 2:
        return None
    bound = {s.ident: s.bound_to for s in hits if s.bound_to and s.bound_to != s.kernel}
    choices = ", ".join(f"{i} ({bound[i]})" if i in bound else i for i in idents)
    return UserError(f"kernel '{kernel}' is ambiguous: it names {choices}; pass one of them to --kernel")


def select_sites(sites: Sequence[AutotuneSite], kernel: str | None) -> list[AutotuneSite]:
    """``--kernel``'s sites: all of them for None; UserError (exit 2) when the name selects
    nothing or more than one kernel."""
    if kernel is None:
        return list(sites)
    hits = matching(sites, kernel)
    if not hits:
        found = ", ".join(sorted({s.ident for s in sites})) or "none"
        raise UserError(f"kernel '{kernel}' not found among the autotuned kernels; found: {found}")
    error = ambiguity(kernel, hits)
    if error is not None:
        raise error
    return hits


def after_edit(sites: Sequence[AutotuneSite], site: AutotuneSite, before: str | None,
               after: str | None) -> AutotuneSite | None:
    """The site among ``sites`` (a scan of the tree after ``site``'s file went from ``before``
    to ``after``) that ``site`` became. Only a site told apart by its line needs the edit: its
    line is followed through the unchanged lines (a dropped config above a twin moves it)."""
    if site.ident_line is None or before is None or after is None:
        return next((s for s in sites if s.ident == site.ident), None)
    line = _moved(before, after, site.ident_line)
    hits = [s for s in sites if s.path == site.path and s.kernel == site.kernel
            and line in (s.ident_line, s.line, _def_line(s))]
    return hits[0] if len(hits) == 1 else None


def _moved(before: str, after: str, line: int) -> int | None:
    matcher = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False)
    for tag, i1, i2, j1, _j2 in matcher.get_opcodes():
        if tag == "equal" and i1 < line <= i2:
            return j1 + line - i1
    return None


__all__ = ["after_edit", "ambiguity", "matching", "select_sites"]
