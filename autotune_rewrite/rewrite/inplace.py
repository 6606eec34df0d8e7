"""Where a site's configs are written, and the smallest edit there that yields the new list.

Every config of a site comes from elements written somewhere: a ``triton.Config(...)`` element
of a list literal (in the decorator, a module variable, a helper's ``return [...]``), or, for a
generated config, the elements of the literal lists its loops ran over (``ConfigValue.choices``).
Removing an element removes every config made from it; so a set of configs can be removed in
place exactly when some elements make only dead configs and, together, all of them. Configs a
variant adds can be appended only to a list of written ``triton.Config`` elements that ends the
site's list. Anything else is refused with the reason (``NoInPlaceEdit``), never approximated.

An element other kernels (or other targets of the same kernel) also read is only edited when
the edit changes nothing they see, or takes from them only what their own decisions drop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence as Seq

import libcst as cst

from autotune_rewrite.model import AutotuneSite, ConfigValue, Span
from autotune_rewrite.rewrite.decision import source_key
from autotune_rewrite.rewrite.facts import NoInPlaceEdit
from autotune_rewrite.rewrite.parsed import ParsedFile

# (path, the list/tuple literal's span, element index)
Key = tuple[str, Span, int]


@dataclass(frozen=True)
class User:
    """Configs some kernel (on some targets) reads: another site, or another branch of this one."""

    name: str  # ``path::kernel`` (with `` on sm_90`` for one target's branch)
    configs: tuple[ConfigValue, ...]
    # What its own decision in this run drops (``decision.source_key``): an edit may take those
    # from it, since its own edit takes them too (``rewrite/shared_lists``).
    drops: frozenset = frozenset()
    site_path: str = ""
    decided: bool = False  # this run decides it (else it keeps every config it reads)
    call: Span | None = None  # its ``@triton.autotune(...)`` in ``site_path``: where it reads a list

    def keeps(self, c: ConfigValue) -> bool:
        return source_key(c, self.site_path) not in self.drops


@dataclass(frozen=True)
class InPlacePlan:
    """Per written sequence: the element indices kept, and config texts appended (last one only)."""

    keep: tuple[tuple[str, Span, tuple[int, ...]], ...]  # (path, sequence span, kept indices)
    append_to: tuple[str, Span] | None = None
    where: tuple[str, ...] = ()  # ``path:line`` of each edited sequence

    def touches(self, path: str, span: Span) -> bool:
        return any((p, s) == (path, span) for p, s, _ in self.keep) or self.append_to == (path, span)


class Written:
    """Finds the list literal a written ``triton.Config(...)`` call is an element of."""

    def __init__(self, load: Callable[[str], ParsedFile], default_path: str):
        self.load, self.default_path = load, default_path
        self._index: dict[str, dict[tuple[int, int], tuple[Span, int, int]]] = {}

    def element(self, c: ConfigValue) -> tuple[Key, int] | None:
        """(its element's key, the sequence's length), or None when the call is not a list element."""
        if c.span is None:
            return None
        path = c.path or self.default_path
        if path not in self._index:
            pf = self.load(path)
            index = {}
            for node in pf.walk((cst.List, cst.Tuple)):
                for j, el in enumerate(node.elements):
                    if isinstance(el, cst.Element) and isinstance(el.value, cst.Call):
                        s = pf.span(el.value)
                        index[(s.start_line, s.start_col)] = (pf.span(node), j, len(node.elements))
            self._index[path] = index
        found = self._index[path].get((c.span.start_line, c.span.start_col))
        if found is None:
            return None
        seq, j, n = found
        return (path, seq, j), n

    def element_text(self, key: Key) -> str:
        path, seq, j = key
        pf = self.load(path)
        node = pf.find(cst.BaseExpression, seq, "literal list")
        return pf.code(node.elements[j].value)

    def keys(self, c: ConfigValue) -> frozenset[Key]:
        """The elements that make ``c``: removing any one of them removes it."""
        el = self.element(c)
        if el is not None:
            return frozenset({el[0]})
        return frozenset((ch.path, ch.sequence, ch.index) for ch in c.choices)


def _where(path: str, span: Span) -> str:
    return f"{path}:{span.start_line}"


def plan(site: AutotuneSite, kept: Seq[int], added: int, written: Written, users: Seq[User]) -> InPlacePlan | NoInPlaceEdit:
    """The in-place edit that keeps ``site.configs[i]`` for ``i`` in ``kept`` (in order) and appends
    ``added`` new configs, or why there is none."""
    configs = tuple(site.configs or ())
    if list(kept) != sorted(kept):
        return NoInPlaceEdit(site.ident, "reordered", ())
    dead = [i for i in range(len(configs)) if i not in set(kept)]
    keys = [written.keys(c) for c in configs]
    for i in dead:
        if not keys[i]:
            return NoInPlaceEdit(site.ident, "not_literal", (configs[i],))
    # Greedy cover: elements whose every config is dead; the one removing most first.
    members: dict[Key, set[int]] = {}
    for i, ks in enumerate(keys):
        for k in ks:
            members.setdefault(k, set()).add(i)
    dead_set = set(dead)
    candidates = {k: m for k, m in members.items() if m <= dead_set}
    removed: list[Key] = []
    left = set(dead_set)
    while left:
        best = max(candidates, key=lambda k: (len(candidates[k] & left), -k[2]), default=None)
        if best is None or not candidates[best] & left:
            i = min(left)
            ordered = sorted(keys[i], key=lambda k: (k[0], k[1].start_line, k[1].start_col, k[2]))
            tied = [configs[min(j for j in members[k] if j not in dead_set)] for k in ordered]
            return NoInPlaceEdit(site.ident, "entangled", (configs[i], *tied),
                                 tuple(f"`{written.element_text(k)}` at {_where(k[0], k[1])}" for k in ordered))
        removed.append(best)
        left -= candidates[best]
    append_to = None
    if added:
        last = written.element(configs[-1]) if configs else None
        if last is None or any(written.element(c) is None for c in configs):
            return NoInPlaceEdit(site.ident, "adds", ())
        append_to = last[0][:2]
    by_seq: dict[tuple[str, Span], set[int]] = {}
    for path, seq, j in removed:
        by_seq.setdefault((path, seq), set()).add(j)
    sizes = _sizes(written, keys, configs)
    keep = tuple((p, s, tuple(j for j in range(sizes[(p, s)]) if j not in gone)) for (p, s), gone in by_seq.items())
    result = InPlacePlan(keep, append_to, tuple(_where(p, s) for (p, s) in [*by_seq, *([append_to] if append_to else [])]))
    gone_keys = set(removed)
    for user in users:
        for c in user.configs:
            ks = written.keys(c)
            if ks & gone_keys and user.keeps(c) or (append_to and any((k[0], k[1]) == append_to for k in ks)):
                return NoInPlaceEdit(site.ident, "shared", (c,), result.where, user.name)
    for path, span in [*by_seq, *([append_to] if append_to else [])]:
        reader = second_reader(written.load(path), span, known_reads(site, users, path))
        if reader is not None:  # e.g. a HIP branch reading the same list as the CUDA one: unseen here
            return NoInPlaceEdit(site.ident, "shared", (), result.where, reader)
    return result


def _targets(assign) -> list:
    return [t.target for t in assign.targets] if isinstance(assign, cst.Assign) else [assign.target]


def known_reads(site: AutotuneSite, users: Seq[User], path: str) -> tuple[Span, ...]:
    """The autotune calls in ``path`` whose reads of a list are known: the site's own and those
    of the other readers, whose configs the edit has been checked against."""
    calls = [(site.path, site.span), *((u.site_path, u.call) for u in users if u.call is not None)]
    return tuple(s for p, s in calls if p == path)


def second_reader(pf: ParsedFile, span: Span, known: Seq[Span] = ()) -> str | None:
    """``name (path:line)`` when the literal at ``span`` is bound to a name that is read in its
    file outside the autotune calls ``known`` (the site's own, other readers' that the edit was
    checked against): some code (another branch, another target's path) may read it there, and
    what it sees is not known, so the list is not edited."""
    node = pf.find(cst.BaseExpression, span, "literal list")
    assigns = list(pf.walk((cst.Assign, cst.AnnAssign)))
    bound = {id(t) for a in assigns for t in _targets(a)}  # ``X = ...`` under if/else binds, it does not read
    for assign in assigns:
        if not any(b is node for b in _branches(assign.value)):
            continue
        for t in _targets(assign):
            if isinstance(t, cst.Name):
                reads = [n for n in pf.walk(cst.Name) if n.value == t.value and id(n) not in bound]
                # Reads in known calls are accounted for; with none there, one read is the path
                # the site itself takes (a helper returning the list), as with no ``known``.
                unknown = [n for n in reads if not any(_inside(pf.span(n), k) for k in known)]
                free = 1 if len(unknown) == len(reads) else 0
                if len(unknown) > free:
                    return f"`{t.value}` read at {pf.path}:{pf.span(unknown[free]).start_line}"
    return None


def _inside(a: Span, b: Span) -> bool:
    return (b.start_line, b.start_col) <= (a.start_line, a.start_col) and (a.end_line, a.end_col) <= (b.end_line, b.end_col)


def _branches(value) -> list:
    """``value``, or each branch of ``a if c else b`` (nested): a list bound through a conditional
    is still bound to the name."""
    if isinstance(value, cst.IfExp):
        return [*_branches(value.body), *_branches(value.orelse)]
    return [value]


def _sizes(written: Written, keys, configs) -> dict[tuple[str, Span], int]:
    """Each sequence's element count (from its node: a list may hold elements no config uses)."""
    out: dict[tuple[str, Span], int] = {}
    for c, ks in zip(configs, keys):
        el = written.element(c)
        if el is not None:
            out[el[0][:2]] = el[1]
        for ch in c.choices:
            if (ch.path, ch.sequence) not in out:
                pf = written.load(ch.path)
                node = pf.find(cst.BaseExpression, ch.sequence, "literal list")
                out[(ch.path, ch.sequence)] = len(node.elements)
    return out


__all__ = ["InPlacePlan", "User", "Written", "plan"]
