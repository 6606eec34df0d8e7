"""Running a helper function of the tree, statically: the statements config builders use.

Assignments (also to ``obj.attr`` and ``d[key]``), ``for`` and ``while`` loops
(``continue``/``break``), ``if`` on known values, ``assert`` on known values, ``try`` (its
body; a handler never runs, since nothing the evaluator runs raises what the code would
catch), ``with open(...) as f`` on a data file of the repo, ``append`` / ``extend`` / ``+=``
on lists, ``return``. Anything else stops with the reason.
"""

from __future__ import annotations

import libcst as cst

from autotune_rewrite.evaluate.classes import set_attribute
from autotune_rewrite.evaluate.operations import BINOPS, short
from autotune_rewrite.evaluate import optional_imports
from autotune_rewrite.evaluate.device import TargetQuery
from autotune_rewrite.evaluate.values import (
    MAX_DEPTH, Break, Continue, Function, Opaque, Pending, Return, LaunchArguments, Unresolved, bind, iterable,
)

AUG_OPS = {cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
        cst.FloorDivideAssign: cst.FloorDivide}


class HelperCalls:
    """Mixin for ``Evaluator``: calling ``Function`` values."""

    def call(self, fn: Function, args: list, kwargs: dict):
        if len(args) >= 2 and isinstance(args[1], LaunchArguments) and isinstance(args[0], list):
            # A pruner: one that cannot run statically (reading the launch's arguments, say) keeps
            # every config it is given, as the site's own such pruner is taken to (early_prune).
            # So a pruner that narrows the configs and hands them to such a one is still run.
            try:
                return self._call(fn, args, kwargs)
            except (Pending, TargetQuery):  # the caller resolves these per target or later
                raise
            except Unresolved:
                return args[0]
        return self._call(fn, args, kwargs)

    def _call(self, fn: Function, args: list, kwargs: dict):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise Unresolved("helper recursion too deep")
        try:
            env = dict(fn.closure or {})
            self._bind_params(fn, args, kwargs, env)
            if isinstance(fn.node, cst.Lambda):
                return self.eval(fn.pm, fn.node.body, env)
            self.note("helper function")
            try:
                if self.opaque_arguments:
                    self.forgiving_block(fn, env, args)
                else:
                    self._block(fn.pm, fn.node.body, env)
            except Return as ret:
                return ret.value
            return None
        finally:
            self.depth -= 1

    def _bind_params(self, fn: Function, args, kwargs, env) -> None:
        params = fn.node.params
        star = params.star_arg if isinstance(params.star_arg, cst.Param) else None
        plist = [*params.posonly_params, *params.params, *params.kwonly_params]
        positional = len(params.posonly_params) + len(params.params)
        if len(args) > positional and star is None:
            raise Unresolved("helper called with too many arguments")
        names = {p.name.value for p in plist}
        extra = {k: v for k, v in kwargs.items() if k not in names}
        if extra and params.star_kwarg is None:
            raise Unresolved(f"helper called with unknown keyword `{sorted(extra)[0]}`")
        if star is not None:
            env[star.name.value] = tuple(args[positional:])
        if params.star_kwarg is not None:
            env[params.star_kwarg.name.value] = extra
        for i, p in enumerate(plist):
            name = p.name.value
            if i < len(args) and p not in params.kwonly_params:
                env[name] = args[i]
            elif name in kwargs:
                env[name] = kwargs[name]
            elif p.default is not None:
                try:
                    env[name] = self.eval(fn.pm, p.default, {})
                except Unresolved as exc:
                    if not self.opaque_arguments:
                        raise
                    env[name] = Opaque(f"the default of `{name}` is only known at run time ({exc})")
            else:
                raise Unresolved(f"helper parameter `{name}` has no value")

    def assign(self, pm, target, value, env) -> None:
        """``target = value``: a name (or unpacking) in ``env``, an attribute of an instance of
        the tree's classes, an item of a dict or list."""
        if isinstance(target, cst.Attribute):
            obj = self.eval(pm, target.value, env)
            set_attribute(obj, target.attr.value, value)
        elif isinstance(target, cst.Subscript) and len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Index):
            obj = self.eval(pm, target.value, env)
            if not isinstance(obj, (dict, list)):
                raise Unresolved("item assignment to something that is not a dict or list")
            try:
                obj[self.eval(pm, target.slice[0].slice.value, env)] = value
            except (IndexError, TypeError):
                raise Unresolved("item assignment does not evaluate") from None
        else:
            bind(target, value, env)

    def _block(self, pm, block, env) -> None:
        body = block.body if isinstance(block, cst.IndentedBlock) else [block]
        if isinstance(block, cst.SimpleStatementSuite):
            body = [cst.SimpleStatementLine(body=block.body)]
        for stmt in body:
            self._tick()
            self._stmt(pm, stmt, env)

    def _iteration(self, pm, body, env) -> bool:
        """One pass of a loop's body; False when it ``break``s (``continue`` ends the pass)."""
        self._tick()
        try:
            self._block(pm, body, env)
        except Continue:
            pass
        except Break:
            return False
        return True

    def _stmt(self, pm, stmt, env) -> None:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self._small(pm, small, env)
        elif isinstance(stmt, cst.For):
            if stmt.orelse is not None or stmt.asynchronous is not None:
                raise Unresolved("for/else in a helper")
            self.loop_depth += 1
            mark = len(self.choices)
            try:
                for item in self.looping(pm, stmt.iter, env):
                    bind(stmt.target, item, env)
                    if not self._iteration(pm, stmt.body, env):
                        break
            finally:
                self.loop_depth -= 1
                del self.choices[mark:]  # a ``return`` inside the loop leaves it early
        elif isinstance(stmt, cst.While):
            if stmt.orelse is not None:
                raise Unresolved("while/else in a helper")
            self.loop_depth += 1
            try:
                while self.test(pm, stmt.test, env):
                    if not self._iteration(pm, stmt.body, env):
                        break
            finally:
                self.loop_depth -= 1
        elif isinstance(stmt, cst.Try):
            if optional_imports.has_imports(stmt.body):  # ``try: import fastlib`` / ``except ImportError``
                missing = optional_imports.missing(stmt.body)
                if missing:
                    raise Unresolved(f"`try` around an import of {', '.join(missing)}, which is not installed here: "
                                     "the fallback is what runs, and it is not evaluated")
                self.note(optional_imports.taken_note(stmt.body))
            self._block(pm, stmt.body, env)
            if stmt.orelse is not None:
                self._block(pm, stmt.orelse.body, env)
            if stmt.finalbody is not None:
                self._block(pm, stmt.finalbody.body, env)
        elif isinstance(stmt, cst.With):
            for item in stmt.items:
                value = self.enter(pm, item.item, env)
                if item.asname is not None:
                    self.assign(pm, item.asname.name, value, env)
            self._block(pm, stmt.body, env)
        elif isinstance(stmt, cst.FunctionDef) and not stmt.decorators:
            # A nested def (a pre_hook factory's ``def init_func(nargs)``): a function value, its
            # closure the helper's locals as they stand when it is called.
            env[stmt.name.value] = Function(pm, stmt, env)
        elif isinstance(stmt, cst.If):
            if self.test(pm, stmt.test, env):
                self._block(pm, stmt.body, env)
            elif stmt.orelse is not None:
                orelse = stmt.orelse
                if isinstance(orelse, cst.If):
                    self._stmt(pm, orelse, env)
                else:
                    self._block(pm, orelse.body, env)
        else:
            raise Unresolved(f"helper statement `{type(stmt).__name__}` is not evaluated")

    def _small(self, pm, small, env) -> None:
        if isinstance(small, cst.Assign):
            value = self.eval(pm, small.value, env)
            for t in small.targets:
                self.assign(pm, t.target, value, env)
        elif isinstance(small, cst.AnnAssign):
            if small.value is not None:
                self.assign(pm, small.target, self.eval(pm, small.value, env), env)
        elif isinstance(small, cst.Assert):
            if not self.test(pm, small.test, env):
                raise Unresolved(f"`assert {short(pm, small.test)}` fails on these values")
        elif isinstance(small, cst.AugAssign):
            if not isinstance(small.target, cst.Name):
                raise Unresolved("augmented assignment to a non-name")
            fn = BINOPS.get(AUG_OPS.get(type(small.operator)))
            if fn is None:
                raise Unresolved("unsupported augmented assignment")
            current = self._name(pm, small.target, env)
            value = self.eval(pm, small.value, env)
            if isinstance(current, list) and isinstance(small.operator, cst.AddAssign):
                current.extend(iterable(value))
            else:
                env[small.target.value] = fn(current, value)
        elif isinstance(small, cst.Expr):
            self.eval(pm, small.value, env)
        elif isinstance(small, cst.Return):
            raise Return(None if small.value is None else self.eval(pm, small.value, env))
        elif isinstance(small, (cst.Pass, cst.Import, cst.ImportFrom)):  # imports: names resolve by scope
            return
        elif isinstance(small, cst.Continue):
            raise Continue()
        elif isinstance(small, cst.Break):
            raise Break()
        else:
            raise Unresolved(f"helper statement `{type(small).__name__}` is not evaluated")
