"""Calls, as the evaluator runs them: ``triton.Config(...)`` (a written one keeps a field only
known at run time as unknown), helpers and lambdas of the tree, methods and classes, the data
file readers, ``getattr``/``hasattr``, and the ``Answers`` table for everything else.

A mixin of ``Evaluator`` (``expressions``).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from autotune_rewrite.evaluate.answers import CONFIG_MARKER
from autotune_rewrite.evaluate.classes import BoundFunction, ClassValue, Instance
from autotune_rewrite.evaluate.data_files import DATA_CALLS, PathMethod
from autotune_rewrite.evaluate.device import DeviceRecord, TargetQuery, UnansweredQuery
from autotune_rewrite.evaluate.queries import is_query
from autotune_rewrite.evaluate.operations import BoundMethod, short
from autotune_rewrite.evaluate.pre_hooks import descriptor_shapes
from autotune_rewrite.evaluate.values import (
    CONFIG_POSITIONAL, Builtin, ConfigObj, Function, Opaque, Pending, Return, Unresolved, iterable, opaque_in,
)
from autotune_rewrite.triton_names import installed_has

TRITON_MODULES = frozenset({"triton", "triton.language", "triton.language.extra", "triton.language.extra.cuda",
                            "triton.runtime", "triton.tools"})


@dataclass(frozen=True)
class TritonModule:
    """A Triton module as a value: ``hasattr(tl, "async_task")`` is asked of the installed one."""

    name: str


class CallForms:
    """Mixin for ``Evaluator``: ``_e_Call`` and what it dispatches to."""

    def _e_Call(self, pm, n, env):
        fn = self.eval(pm, n.func, env)
        if fn == CONFIG_MARKER and self.loop_depth == 0 and not any(a.star for a in n.args):
            return self._written_config(pm, n, env)
        into_tree = self.opaque_arguments and isinstance(fn, (Function, BoundFunction, ClassValue))
        args, kwargs = self._arguments(pm, n, env, opaque=into_tree)
        if fn == CONFIG_MARKER:
            return self._config(pm, n, args, kwargs)
        if isinstance(fn, Builtin):
            if fn.name in DATA_CALLS:
                return self.data_call(fn.name, args, kwargs)
            if fn.name in ("builtins.getattr", "builtins.hasattr"):
                return self._getattr(fn.name, args)
            return self._external(fn, args, kwargs, pm, n)
        if isinstance(fn, Function):
            return self.call(fn, args, kwargs)
        if isinstance(fn, BoundFunction):
            return self.call(fn.fn, [fn.obj, *args], kwargs)
        if isinstance(fn, ClassValue):
            return self.instantiate(fn, args, kwargs)
        if isinstance(fn, (BoundMethod, PathMethod)):
            return fn(args, kwargs)
        raise Unresolved(f"`{short(pm, n.func)}` is not a function the locator can evaluate")

    def _arguments(self, pm, n: cst.Call, env, opaque: bool = False) -> tuple[list, dict]:
        """A call's arguments, ``*xs`` and ``**d`` spread when their values are known; with
        ``opaque``, an argument that does not evaluate is passed as ``Opaque``."""
        args: list = []
        kwargs: dict = {}
        for a in n.args:
            try:
                value = self.eval(pm, a.value, env)
            except Unresolved as exc:
                if not opaque or a.star:
                    raise
                value = Opaque(f"`{short(pm, a.value)}` {_why(exc)}")
            if a.star == "*":
                args.extend(iterable(value))
            elif a.star == "**":
                if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
                    raise Unresolved(f"`{short(pm, n)}` passes ** of something that is not a dict of names")
                kwargs.update(value)
            elif a.keyword is None:
                args.append(value)
            else:
                kwargs[a.keyword.value] = value
        return args, kwargs

    def _getattr(self, name: str, args: list):
        if isinstance(args[0] if args else None, Opaque):
            raise Unresolved(args[0].reason)
        """``getattr(obj, "name"[, default])`` / ``hasattr(obj, "name")`` on a known value."""
        if len(args) not in (2, 3) or not isinstance(args[1], str):
            raise Unresolved(f"`{name.split('.')[-1]}` without a literal attribute name")
        if isinstance(args[0], TritonModule) and name == "builtins.hasattr":
            # As the installed Triton answers: the one ``check`` compiles with.
            found = installed_has(args[0].name, args[1])
            self.asked(f"hasattr({args[0].name}, {args[1]!r}) = {found} (installed Triton)")
            return found
        try:
            value = self.get_attribute(args[0], args[1], self._plain_attribute)
        except (Pending, TargetQuery, UnansweredQuery):
            raise
        except Unresolved:
            if name == "builtins.hasattr" and isinstance(args[0], (dict, list, ConfigObj, Instance)):
                return False
            if len(args) == 3 and isinstance(args[0], (ConfigObj, Instance)):
                return args[2]
            raise
        return True if name == "builtins.hasattr" else value

    def _written_config(self, pm, n: cst.Call, env) -> ConfigObj:
        """A ``triton.Config(...)`` written out (not generated by a loop): a field whose value
        is only known at run time is kept as unknown (with its reason), the others resolved,
        so the scan still shows the config; ``check`` does not judge such a site."""
        unknown: dict[str, str] = {}

        def field(node, name):
            try:
                return self.eval(pm, node, env)
            except (Pending, TargetQuery, UnansweredQuery):
                raise
            except Unresolved as exc:
                unknown[name] = str(exc)
                return None

        args, kwargs = [], {}
        for i, a in enumerate(n.args):
            name = a.keyword.value if a.keyword is not None else (CONFIG_POSITIONAL[i] if i < len(CONFIG_POSITIONAL) else "?")
            if name == "kwargs" and isinstance(a.value, cst.Dict) and not any(
                    isinstance(el, cst.StarredDictElement) for el in a.value.elements):
                value = {}
                for el in a.value.elements:
                    key = self.eval(pm, el.key, env)
                    value[key] = field(el.value, key) if isinstance(key, str) else self.eval(pm, el.value, env)
            elif name == "pre_hook":
                value = self.eval(pm, a.value, env)
            else:
                value = field(a.value, name)
            if a.keyword is None:
                args.append(value)
            else:
                kwargs[name] = value
        obj = self._config(pm, n, args, kwargs)
        obj.unknown = tuple(unknown.items())
        return obj

    def _config(self, pm, n, args, kwargs) -> ConfigObj:
        bound = dict(zip(CONFIG_POSITIONAL, args))
        for k, v in kwargs.items():
            bound[k] = v
        meta = bound.get("kwargs", {})
        if not isinstance(meta, dict) or not all(isinstance(k, str) for k in meta):
            raise Unresolved("triton.Config's first argument is not a dict of names")
        for k in ("num_warps", "num_stages", "num_ctas", "maxnreg"):
            if bound.get(k) is not None and not isinstance(bound[k], int):
                raise Unresolved(f"triton.Config {k} is not an int")
        span = pm.span(n) if self.loop_depth == 0 else None
        hook = bound.get("pre_hook")
        shapes = descriptor_shapes(hook.node) if isinstance(hook, Function) else ()
        return ConfigObj(dict(meta), bound.get("num_warps"), bound.get("num_stages"), bound.get("num_ctas"),
                         bound.get("maxnreg"), hook is not None, span, pm.path if span else None, shapes,
                         () if span else tuple(self.choices))

    def _external(self, fn: Builtin, args, kwargs, pm, n):
        if (opaque := opaque_in([*args, *kwargs.values()])) is not None:
            raise Unresolved(opaque.reason)  # ``len(n)``, ``str(n)`` of a run-time value
        if fn.name == "builtins.filter":
            self.note("filter")
        try:
            value = self.answers.call(fn, args, kwargs, self._apply)
            if is_query(fn.name) and pm is not None and not isinstance(value, DeviceRecord):
                self.asked(f"{short(pm, n)} = {value!r}")
            return value
        except (Unresolved, Return):
            raise
        except Exception:  # the user's call fails (``min()``, ``int("x")``): we cannot know it
            raise Unresolved(f"`{short(pm, n)}` does not evaluate") from None

    def _apply(self, fn, args, kwargs=None):
        if isinstance(fn, Function):
            return self.call(fn, args, dict(kwargs or {}))
        if isinstance(fn, Builtin):
            return self._external(fn, args, dict(kwargs or {}), None, None)
        if isinstance(fn, BoundFunction):
            return self.call(fn.fn, [fn.obj, *args], dict(kwargs or {}))
        if isinstance(fn, BoundMethod):  # a bound builtin method, a functools.partial
            return fn(args, dict(kwargs or {}))
        raise Unresolved("filter/map with a function the locator cannot evaluate")


def _why(exc: Unresolved) -> str:
    """An argument's reason, worded to follow its source text."""
    if isinstance(exc, Pending):
        return f"is imported from {exc.fq.rsplit('.', 1)[0]}, not followed here"
    return f"is only known at run time ({exc})"
