"""Running a helper function of the tree, statically: the statements config builders use.

Assignments, ``for`` loops (``continue``/``break``), ``if`` on known values, ``append`` /
``extend`` / ``+=`` on lists, ``return``. Anything else stops with the reason.
"""

from __future__ import annotations

import libcst as cst

from autotune_rewrite.evaluate.operations import BINOPS
from autotune_rewrite.evaluate.values import (
    MAX_DEPTH, Break, Continue, Function, Return, Unresolved, bind, iterable,
)

AUG_OPS = {cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
        cst.FloorDivideAssign: cst.FloorDivide}


class HelperCalls:
    """Mixin for ``Evaluator``: calling ``Function`` values."""

    def call(self, fn: Function, args: list, kwargs: dict):
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
                self._block(fn.pm, fn.node.body, env)
            except Return as ret:
                return ret.value
            return None
        finally:
            self.depth -= 1

    def _bind_params(self, fn: Function, args, kwargs, env) -> None:
        params = fn.node.params
        positional = len(params.posonly_params) + len(params.params)
        if isinstance(params.star_arg, cst.Param):  # ``def prune(configs, *args, **kwargs)``
            env[params.star_arg.name.value] = tuple(args[positional:])
        elif len(args) > positional:
            raise Unresolved("helper called with too many arguments")
        if params.star_kwarg is not None:  # ``def prune(configs, named_args, **kwargs)``: Triton's pruner shape
            plain = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
            env[params.star_kwarg.name.value] = {k: v for k, v in kwargs.items() if k not in plain}
        plist = [*params.posonly_params, *params.params, *params.kwonly_params]
        for i, p in enumerate(plist):
            name = p.name.value
            if i < len(args) and p not in params.kwonly_params:
                env[name] = args[i]
            elif name in kwargs:
                env[name] = kwargs[name]
            elif p.default is not None:
                env[name] = self.eval(fn.pm, p.default, {})
            else:
                raise Unresolved(f"helper parameter `{name}` has no value")

    def _block(self, pm, block, env) -> None:
        body = block.body if isinstance(block, cst.IndentedBlock) else [block]
        if isinstance(block, cst.SimpleStatementSuite):
            body = [cst.SimpleStatementLine(body=block.body)]
        for stmt in body:
            self._tick()
            self._stmt(pm, stmt, env)

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
                    self._tick()
                    bind(stmt.target, item, env)
                    try:
                        self._block(pm, stmt.body, env)
                    except Continue:
                        continue
                    except Break:
                        break
            finally:
                self.loop_depth -= 1
                del self.choices[mark:]  # a ``return`` inside the loop leaves it early
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
                bind(t.target, value, env)
        elif isinstance(small, cst.AnnAssign):
            if small.value is not None:
                bind(small.target, self.eval(pm, small.value, env), env)
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
        elif isinstance(small, cst.Pass):
            return
        elif isinstance(small, cst.Continue):
            raise Continue()
        elif isinstance(small, cst.Break):
            raise Break()
        else:
            raise Unresolved(f"helper statement `{type(small).__name__}` is not evaluated")
