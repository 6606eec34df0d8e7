"""The smallest condition over a comprehension's loop variables that drops exactly some rows.

A config list written as a product of loops (``for m in [64, 128] for s in [3, 4, 7] ...``) makes
one row per combination; when a row to drop shares each of its loop values with a row to keep,
no element can be removed (``rewrite/inplace``), but a condition on the loop variables can
(``rewrite/dead_filter`` writes it into the comprehension). This module finds that condition and
nothing else: pure, deterministic, no LibCST, no words.

Input: the rows (one mapping of loop variable -> value each) and a label per row: ``DEAD`` (must
go), ``KEEP`` (must stay) or ``FREE`` (either: rows the list's own filter or the site's
``early_config_prune`` already drops, which the autotuner never times).

The condition is an OR of ANDs of comparisons ``var == v``, ``var >= v``, ``var <= v`` (``>=`` and
``<=`` only over numbers; an interval inside a variable's values costs both). Smallest means the
fewest terms (the OR-ed AND groups: each names one family of rows, which is what a reader
checks one by one), then the fewest literals (comparisons), then the first in a fixed order
(variables in loop order, values ascending), so the same table always gives the same text. Two forms are
searched: the rows that stay (written as is, ``if BLOCK_M <= 64 or num_stages <= 4``) and the
rows that go (written negated, ``if not (BLOCK_M == 128 and num_stages == 7)``). A filter reads
as what it keeps, as the comprehension's own ``if`` does, so the kept form is written unless the
dropped form is strictly smaller: then naming the few combinations that go is the clearer line.

The search is exact (branch and bound over the prime groups) within ``MAX_NODES`` steps; a table
too large for that gets the best condition found, which is still exact on every row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

DEAD, KEEP, FREE = "dead", "keep", "free"
MAX_GROUP_TERMS = 6  # comparisons in one AND group
MAX_NODES = 200_000  # search steps, enumeration and cover together
_NEGATE = {"==": "!=", ">=": "<", "<=": ">"}


@dataclass(frozen=True)
class Term:
    var: str
    op: str  # "==", ">=" or "<="
    value: Any

    def holds(self, row: Mapping[str, Any]) -> bool:
        v = row[self.var]
        return v == self.value if self.op == "==" else v >= self.value if self.op == ">=" else v <= self.value

    def text(self, negated: bool = False) -> str:
        return f"{self.var} {_NEGATE[self.op] if negated else self.op} {self.value!r}"


@dataclass(frozen=True)
class Condition:
    """``groups`` (OR of ANDs) describe the kept rows, or the dropped ones when ``negated``."""

    groups: tuple[tuple[Term, ...], ...]
    negated: bool

    @property
    def terms(self) -> int:
        return sum(len(g) for g in self.groups)

    def keeps(self, row: Mapping[str, Any]) -> bool:
        hit = any(all(t.holds(row) for t in g) for g in self.groups)
        return not hit if self.negated else hit

    def parts(self) -> list[str]:
        """Each group as Python, in order (``not (...)`` around them when ``negated``); with several
        groups, each of several comparisons in parentheses, so the grouping is read, not recalled."""
        texts = [" and ".join(t.text() for t in g) for g in self.groups]
        if len(texts) < 2:
            return texts
        return [f"({t})" if len(g) > 1 else t for g, t in zip(self.groups, texts)]

    def text(self) -> str:
        """The condition as Python (a comprehension's ``if`` clause; it binds looser than
        ``and`` only when it has several groups, see ``needs_parens``)."""
        if self.negated and self.terms == 1:
            return self.groups[0][0].text(negated=True)
        inner = " or ".join(self.parts())
        return f"not ({inner})" if self.negated else inner

    @property
    def needs_parens(self) -> bool:
        """True when ``x and <text>`` would group wrongly (an ``or`` at its top level)."""
        return not self.negated and len(self.groups) > 1


def _writable(v) -> bool:
    """A value Python reads back from its ``repr`` (the condition is written as code)."""
    if isinstance(v, tuple):
        return all(_writable(x) for x in v)
    if isinstance(v, float):
        return math.isfinite(v)
    return v is None or isinstance(v, (bool, int, str))


def _ordered(values: list) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def _options(var: str, column: list) -> list[tuple[int, tuple[Term, ...]]]:
    """(mask of rows, the comparisons) for every value set one variable can be held to."""
    if not all(_writable(v) for v in column):
        return []
    try:
        domain = sorted(set(column)) if _ordered(column) else list(dict.fromkeys(column))
    except TypeError:  # unhashable or unorderable values: not a variable to test
        return []
    if len(domain) < 2:
        return []
    index = {v: i for i, v in enumerate(domain)}
    at = [index[v] for v in column]
    k, out = len(domain), []

    def mask(lo: int, hi: int) -> int:
        return sum(1 << r for r, i in enumerate(at) if lo <= i <= hi)

    if not _ordered(column):
        return [(mask(i, i), (Term(var, "==", v),)) for i, v in enumerate(domain)]
    for lo in range(k):
        for hi in range(lo, k):
            if (lo, hi) == (0, k - 1):
                continue
            if lo == hi:
                terms = (Term(var, "==", domain[lo]),)
            elif lo == 0:
                terms = (Term(var, "<=", domain[hi]),)
            elif hi == k - 1:
                terms = (Term(var, ">=", domain[lo]),)
            else:
                terms = (Term(var, ">=", domain[lo]), Term(var, "<=", domain[hi]))
            out.append((mask(lo, hi), terms))
    return out


class _Budget:
    def __init__(self) -> None:
        self.left = MAX_NODES

    def spend(self) -> bool:
        self.left -= 1
        return self.left >= 0


def _groups(options, target: int, other: int, budget: _Budget) -> dict[int, tuple[Term, ...]]:
    """Prime AND groups: true on some ``target`` rows and no ``other`` row, each the cheapest for
    the target rows it covers (later variables are only added while an ``other`` row is left)."""
    found: dict[int, tuple[Term, ...]] = {}

    def grow(start: int, mask: int, terms: tuple[Term, ...]) -> None:
        for j in range(start, len(options)):
            for opt_mask, opt_terms in options[j]:
                new = mask & opt_mask
                if not new & target or len(terms) + len(opt_terms) > MAX_GROUP_TERMS or not budget.spend():
                    continue
                group = terms + opt_terms
                if new & other:
                    grow(j + 1, new, group)
                    continue
                cover = new & target
                if cover not in found or len(group) < len(found[cover]):
                    found[cover] = group

    grow(0, -1, ())  # -1: every row (Python ints are unbounded)
    # Drop groups another covers a superset of at no more cost.
    items = sorted(found.items(), key=lambda kv: (len(kv[1]), -bin(kv[0]).count("1")))
    kept: dict[int, tuple[Term, ...]] = {}
    for cover, group in items:
        if not any(c & cover == cover and len(g) <= len(group) for c, g in kept.items()):
            kept[cover] = group
    return kept


def _cover(groups: dict[int, tuple[Term, ...]], target: int, budget: _Budget):
    """The cheapest set of groups covering every ``target`` row: (groups, comparisons) least."""
    order = sorted(groups.items(), key=lambda kv: (-bin(kv[0]).count("1"), len(kv[1])))  # widest first
    best: list = [None, (1 << 30, 0)]

    def search(left: int, chosen: list, cost: tuple[int, int]) -> None:
        if not left:
            if cost < best[1]:
                best[0], best[1] = list(chosen), cost
            return
        if (cost[0] + 1, cost[1] + 1) >= best[1] or not budget.spend():
            return
        row = left & -left  # the first row still to cover: some group must cover it
        for cover, group in order:
            if cover & row:
                chosen.append((cover, group))
                search(left & ~cover, chosen, (cost[0] + 1, cost[1] + len(group)))
                chosen.pop()

    search(target, [], (0, 0))
    if best[0] is None:
        return None, None
    # Groups read in the list's order: by the first row each covers.
    return [g for _, g in sorted(best[0], key=lambda cg: (cg[0] & -cg[0]).bit_length())], best[1]


def _form(rows, labels, side: str, budget: _Budget):
    names = list(rows[0]) if rows else []
    options = [o for o in (_options(n, [r[n] for r in rows]) for n in names) if o]
    target = sum(1 << i for i, label in enumerate(labels) if label == side)
    other = sum(1 << i for i, label in enumerate(labels) if label not in (side, FREE))
    if not target or not options:
        return None, None
    groups = _groups(options, target, other, budget)
    if target & ~_union(groups):
        return None, None  # a target row no group separates from the other side
    return _cover(groups, target, budget)


def _union(groups) -> int:
    out = 0
    for cover in groups:
        out |= cover
    return out


def smallest_condition(rows: Sequence[Mapping[str, Any]], labels: Sequence[str]) -> Condition | None:
    """The smallest condition true on every ``KEEP`` row and false on every ``DEAD`` row (FREE:
    either), or None when none exists (a dead and a kept row with the same loop values) or no
    row is dead. Every row names the same variables, in loop order."""
    if len(rows) != len(labels) or DEAD not in labels:
        return None
    if KEEP not in labels:
        return None  # everything goes: not a condition, the whole list would be empty
    budget = _Budget()
    forms = []
    for side, negated in ((KEEP, False), (DEAD, True)):
        chosen, cost = _form(list(rows), list(labels), side, budget)
        if chosen is not None:
            forms.append((cost, negated, chosen))
    if not forms:
        return None
    cost, negated, chosen = min(forms, key=lambda f: (f[0], f[1]))  # the kept form on a tie
    return Condition(tuple(chosen), negated)


__all__ = ["DEAD", "FREE", "KEEP", "Condition", "Term", "smallest_condition"]
