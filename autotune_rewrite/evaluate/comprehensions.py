"""Comprehensions and loops over an iterable, as the evaluator runs them.

List, set, dict and generator comprehensions (nested ``for``, ``if``), and ``looping``: the items
of an iterable, each with the literal elements it came from on ``choices`` (``provenance``),
which the ``for`` statements of a helper (``statements``) iterate with too. A mixin of
``Evaluator`` (``expressions``), apart from it because iterating is one concern on its own:
the loop depth, the choices in force and the item limit.
"""

from __future__ import annotations

from collections import ChainMap

import libcst as cst

from autotune_rewrite.evaluate.provenance import choices_of
from autotune_rewrite.evaluate.values import MAX_ITEMS, Unresolved, bind, iterable


class Comprehensions:
    """Mixin for ``Evaluator``: comprehensions, and the items of an iterable with their choices."""

    def _comprehension(self, pm, n, env, make):
        self.note("comprehension")
        results: list = []
        self.loop_depth += 1
        mark = len(self.choices)
        try:
            self._for_in(pm, n.for_in, ChainMap({}, env), results, make)
        finally:
            self.loop_depth -= 1
            del self.choices[mark:]  # also when an exception left a loop early
        return results

    def looping(self, pm, node, env):
        """(item, its literal elements) for each item of the iterable ``node``; while the caller
        handles one, its elements are on ``self.choices``."""
        node = self.taken(pm, node, env)  # ``for s in ([1] if is_hip() else [3, 4, 7])``: the branch taken
        items = iterable(self.eval(pm, node, env))
        of = choices_of(pm, node, env, len(items), lambda n, scope: self.taken(pm, n, scope))
        for k, item in enumerate(items):
            mine = of(k)
            self.choices.extend(mine)
            try:
                yield item
            finally:
                if mine:
                    del self.choices[-len(mine):]

    def _for_in(self, pm, comp: cst.CompFor, env, results, make):
        for item in self.looping(pm, comp.iter, env):
            self._tick()
            scope = env.new_child()
            bind(comp.target, item, scope)
            if all(self.eval(pm, cond.test, scope) for cond in comp.ifs):
                if comp.inner_for_in is not None:
                    self._for_in(pm, comp.inner_for_in, scope, results, make)
                else:
                    results.append(make(scope))
                    if len(results) > MAX_ITEMS:
                        raise Unresolved("too large to evaluate statically")

    def _e_ListComp(self, pm, n, env):
        return self._comprehension(pm, n, env, lambda s: self.eval(pm, n.elt, s))

    _e_GeneratorExp = _e_ListComp
    _e_SetComp = _e_ListComp

    def _e_DictComp(self, pm, n, env):
        pairs = self._comprehension(pm, n, env, lambda s: (self.eval(pm, n.key, s), self.eval(pm, n.value, s)))
        return dict(pairs)
