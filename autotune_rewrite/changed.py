"""``--changed-since REF``: which autotune sites have inputs that changed, as a pure function.

A pull request touches one kernel of a library of 200; judging only the sites whose inputs
changed keeps the CI run to seconds. The one rule this module must never break: a site whose
inputs changed is never skipped. So every doubt selects: inputs that cannot be listed, a
settings table that changed in any way, a new file that may provide a name the site could not
resolve before, a changed file that merely mentions the name of a function that launches the
kernel (one of its callers, whose arguments the spec and v3's edits are read from).

``changed_sites(sites, changes, inputs_of)`` decides; it reads no file and runs no git. Gathering
the changes (git) and each site's inputs (bundles, imports) is ``changed_inputs``'s job.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from autotune_rewrite.model import AutotuneSite


@dataclass(frozen=True)
class Changes:
    """What differs between REF and the working tree (committed, staged, unstaged, untracked but
    not ignored), paths relative to the project root, POSIX."""

    ref: str
    paths: frozenset[str]  # both sides of a rename; deleted files too
    added: frozenset[str] = frozenset()  # paths that did not exist at REF (new, untracked, renamed to)
    settings: tuple[str, ...] = ()  # settings files whose ``[tool.autotune-rewrite]`` table changed
    # identifiers of each changed Python file, at REF and now together (a caller removed counts)
    words: Mapping[str, frozenset[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class SiteInputs:
    """Everything a site's verdict and rewrite are computed from."""

    files: frozenset[str]  # kernel source, bundle files, decorator/config modules, launch files
    callers: frozenset[str] = frozenset()  # names of the functions that launch it: their callers count
    open_names: bool = False  # it reads names nothing in the tree provided: a new file may provide them
    unknown: str = ""  # non-empty: the inputs cannot be listed (why); the site is always judged


class Why(str, enum.Enum):
    """Why a site was selected (words in ``output``)."""

    SETTINGS = "settings"
    INPUT = "input"
    CALLER = "caller"
    NEW_FILE = "new_file"
    UNKNOWN = "unknown_inputs"


@dataclass(frozen=True)
class Selected:
    site: AutotuneSite
    why: Why
    path: str = ""  # the changed file (or settings file) that selected it
    detail: str = ""  # the caller's name, or why the inputs are unknown


@dataclass(frozen=True)
class Selection:
    ref: str
    total: int  # sites before the selection
    selected: tuple[Selected, ...]  # in the sites' order

    @property
    def sites(self) -> tuple[AutotuneSite, ...]:
        return tuple(s.site for s in self.selected)


def changed_sites(sites: Sequence[AutotuneSite], changes: Changes,
                  inputs_of: Callable[[AutotuneSite], SiteInputs]) -> Selection:
    """The sites whose inputs changed since ``changes.ref``, each with the first reason found."""
    out = []
    for site in sites:
        hit = _reason(site, changes, inputs_of)
        if hit is not None:
            out.append(hit)
    return Selection(changes.ref, len(sites), tuple(out))


def _reason(site: AutotuneSite, changes: Changes, inputs_of) -> Selected | None:
    if changes.settings:  # a launch spec, an assumption, the targets: any of it may be this site's
        return Selected(site, Why.SETTINGS, changes.settings[0])
    if not changes.paths:
        return None
    inputs = inputs_of(site)
    if inputs.unknown:
        return Selected(site, Why.UNKNOWN, detail=inputs.unknown)
    for path in sorted(inputs.files & changes.paths):
        return Selected(site, Why.INPUT, path)
    for path in sorted(changes.paths):
        names = changes.words.get(path, frozenset()) & inputs.callers
        if names:
            return Selected(site, Why.CALLER, path, min(names))
    if inputs.open_names:
        for path in sorted(p for p in changes.added if p.endswith(".py")):
            return Selected(site, Why.NEW_FILE, path)
    return None


__all__ = ["Changes", "Selected", "Selection", "SiteInputs", "Why", "changed_sites"]
