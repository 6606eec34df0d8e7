"""Static evaluation of ``configs=`` (and ``key=`` etc.) expressions, without running code.

A tiny interpreter over LibCST nodes for the shapes real repos use: literals, list/tuple/dict
displays, comprehensions (nested ``for``, ``if``), ``a + b``, ``list(filter(lambda ..., xs))``,
``range``/``itertools.product``, module-level variables, and helper functions in the tree whose
bodies build a list from literals (assignments, ``for`` loops with ``append``/``extend``/``+=``,
``if`` on known values, ``return``). A conditional expression whose test is not known
statically yields the union of both branches, and says so in the origin.

Anything else raises ``Unresolved`` with the reason; nothing is guessed. Names imported from
another module raise ``Pending`` in the per-file pass; the linking pass re-evaluates with a
resolver that follows the import into the tree.
"""

from __future__ import annotations

import itertools
import math
from collections import ChainMap
from dataclasses import dataclass, field
from typing import Any, Callable

import libcst as cst

from autotune_rewrite.locate.helpers import HelperCalls
from autotune_rewrite.triton_names import CONFIG
from autotune_rewrite.locate.values import (
    CONFIG_POSITIONAL, MAX_ITEMS, MAX_STEPS, Builtin, ConfigObj, Function, Pending, Return, Unresolved,
    bind, iterable, to_configs, to_names,
)

_BUILTINS = {"builtins." + n for n in ("list", "tuple", "range", "filter", "map", "len", "dict", "sorted",
                                        "min", "max", "zip", "enumerate", "int", "str", "bool", "reversed", "set")}
_BUILTINS |= {"itertools.product"}

_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    cst.Add: lambda a, b: a + b, cst.Subtract: lambda a, b: a - b, cst.Multiply: lambda a, b: a * b,
    cst.FloorDivide: lambda a, b: a // b, cst.Divide: lambda a, b: a / b, cst.Modulo: lambda a, b: a % b,
    cst.Power: lambda a, b: a ** b, cst.LeftShift: lambda a, b: a << b, cst.RightShift: lambda a, b: a >> b,
    cst.BitOr: lambda a, b: a | b, cst.BitAnd: lambda a, b: a & b,
}
_CMPOPS: dict[type, Callable[[Any, Any], bool]] = {
    cst.Equal: lambda a, b: a == b, cst.NotEqual: lambda a, b: a != b, cst.LessThan: lambda a, b: a < b,
    cst.LessThanEqual: lambda a, b: a <= b, cst.GreaterThan: lambda a, b: a > b,
    cst.GreaterThanEqual: lambda a, b: a >= b, cst.In: lambda a, b: a in b, cst.NotIn: lambda a, b: a not in b,
    cst.Is: lambda a, b: a is b, cst.IsNot: lambda a, b: a is not b,
}


@dataclass
class Evaluator(HelperCalls):
    """Evaluates nodes of one or more ``ParsedModule``s. ``resolve(fq)`` returns the value of a
    module-level name of another module (or raises)."""

    resolve: Callable[[str], Any]
    BINOPS = _BINOPS  # for HelperCalls (augmented assignment)
    origin: list[str] = field(default_factory=list)
    loop_depth: int = 0
    steps: int = 0
    depth: int = 0
    _module_cache: dict = field(default_factory=dict)
    _bindings: dict = field(default_factory=dict)

    def note(self, what: str) -> None:
        if what not in self.origin:
            self.origin.append(what)

    def _tick(self, n: int = 1) -> None:
        self.steps += n
        if self.steps > MAX_STEPS:
            raise Unresolved("too large to evaluate statically")

    # -- names --------------------------------------------------------------------------------
    def module_value(self, pm, name: str):
        """Value of module-level ``name`` in ``pm`` (evaluated once, cycles refused)."""
        key = (pm.path, name)
        if key in self._module_cache:
            val = self._module_cache[key]
            if val is _IN_PROGRESS:
                raise Unresolved(f"`{name}` refers to itself")
            return val
        bindings = self._bindings.get(pm.path)
        if bindings is None:
            bindings = self._bindings[pm.path] = pm.module_bindings()
        found = bindings.get(name)
        if not found:
            raise Unresolved(f"`{name}` is not a module-level name of {pm.path}")
        if len(found) > 1:
            raise Unresolved(f"`{name}` is assigned {len(found)} times at module level in {pm.path}")
        node = found[0]
        if isinstance(node, cst.FunctionDef):
            val = Function(pm, node)
        elif isinstance(node, cst.ClassDef):
            raise Unresolved(f"`{name}` is a class")
        else:
            self._module_cache[key] = _IN_PROGRESS
            try:
                val = self.eval(pm, node, {})
                self.note("module variable")
            finally:
                self._module_cache.pop(key, None)
        self._module_cache[key] = val
        return val

    def _name(self, pm, node: cst.Name, env):
        if node.value in env:
            return env[node.value]
        if node.value in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[node.value]
        return self._qualified(pm, node, node.value)

    def _qualified(self, pm, node, text: str):
        names = pm.names(node)
        if not names:
            raise Unresolved(f"`{text}` is not known statically")
        for fq in sorted(names):
            if fq in CONFIG:
                return Builtin("triton.Config")
            if fq in _BUILTINS:
                return Builtin(fq)
            prefix = pm.module_name + "."
            if fq.startswith(prefix) and "." not in fq[len(prefix):]:
                return self.module_value(pm, fq[len(prefix):])
        fq = sorted(names)[0]
        if fq.startswith("builtins."):
            raise Unresolved(f"`{text}` is a builtin the locator does not evaluate")
        value = self.resolve(fq)
        self.note(f"imported from {fq.rsplit('.', 1)[0]}")
        return value

    # -- expressions --------------------------------------------------------------------------
    def eval(self, pm, node: cst.BaseExpression, env) -> Any:
        self._tick()
        method = getattr(self, "_e_" + type(node).__name__, None)
        if method is None:
            raise Unresolved(f"`{_short(pm, node)}` is not a form the locator evaluates statically")
        return method(pm, node, env)

    def _e_Integer(self, pm, n, env):
        return n.evaluated_value

    _e_Float = _e_Integer
    _e_SimpleString = _e_Integer
    _e_ConcatenatedString = _e_Integer

    def _e_Name(self, pm, n, env):
        return self._name(pm, n, env)

    def _e_Attribute(self, pm, n, env):
        # ``c.num_warps`` on a value; ``triton.Config`` / ``mod.VAR`` by qualified name (a
        # dotted chain rooted at a name that is not local).
        root = n.value
        while isinstance(root, cst.Attribute):
            root = root.value
        dotted = isinstance(root, cst.Name) and root.value not in env and root.value not in ("True", "False", "None")
        if not dotted or not pm.names(n):
            obj = self.eval(pm, n.value, env)
            return _attribute(obj, n.attr.value)
        return self._qualified(pm, n, _short(pm, n))

    def _elements(self, pm, elements, env) -> list:
        out: list = []
        for el in elements:
            if isinstance(el, cst.StarredElement):
                out.extend(iterable(self.eval(pm, el.value, env)))
            else:
                out.append(self.eval(pm, el.value, env))
            if len(out) > MAX_ITEMS:
                raise Unresolved("too large to evaluate statically")
        return out

    def _e_List(self, pm, n, env):
        out = self._elements(pm, n.elements, env)
        if self.loop_depth == 0 and any(isinstance(c, ConfigObj) for c in out):
            self.note("literal list")
        return out

    def _e_Tuple(self, pm, n, env):
        return tuple(self._elements(pm, n.elements, env))

    def _e_Set(self, pm, n, env):
        return set(self._elements(pm, n.elements, env))

    def _e_Dict(self, pm, n, env):
        out = {}
        for el in n.elements:
            if isinstance(el, cst.StarredDictElement):
                out.update(self.eval(pm, el.value, env))
            else:
                out[self.eval(pm, el.key, env)] = self.eval(pm, el.value, env)
        return out

    def _e_UnaryOperation(self, pm, n, env):
        v = self.eval(pm, n.expression, env)
        op = type(n.operator)
        if op is cst.Minus:
            return -v
        if op is cst.Plus:
            return +v
        if op is cst.Not:
            return not v
        if op is cst.BitInvert:
            return ~v
        raise Unresolved("unsupported unary operator")

    def _e_BinaryOperation(self, pm, n, env):
        left, right = self.eval(pm, n.left, env), self.eval(pm, n.right, env)
        fn = _BINOPS.get(type(n.operator))
        if fn is None:
            raise Unresolved("unsupported operator")
        if isinstance(n.operator, cst.Add) and isinstance(left, list):
            self.note("concatenation")
        _check_size(type(n.operator), left, right)
        try:
            out = fn(left, right)
        except Exception as exc:  # a type error in the user's expression: we cannot know it
            raise Unresolved(f"`{_short(pm, n)}` does not evaluate ({type(exc).__name__})") from None
        if isinstance(out, (list, tuple, str)) and len(out) > MAX_ITEMS:
            raise Unresolved("too large to evaluate statically")
        return out

    def _e_BooleanOperation(self, pm, n, env):
        left = self.eval(pm, n.left, env)
        if isinstance(n.operator, cst.And):
            return self.eval(pm, n.right, env) if left else left
        return left if left else self.eval(pm, n.right, env)

    def _e_Comparison(self, pm, n, env):
        left = self.eval(pm, n.left, env)
        for target in n.comparisons:
            right = self.eval(pm, target.comparator, env)
            try:
                ok = _CMPOPS[type(target.operator)](left, right)
            except Exception:
                raise Unresolved(f"`{_short(pm, n)}` does not evaluate") from None
            if not ok:
                return False
            left = right
        return True

    def _e_IfExp(self, pm, n, env):
        try:
            test = self.eval(pm, n.test, env)
        except Pending:
            raise
        except Unresolved:
            body, orelse = self.eval(pm, n.body, env), self.eval(pm, n.orelse, env)
            if isinstance(body, (list, tuple)) and isinstance(orelse, (list, tuple)):
                self.note("conditional (union of both branches)")
                return _union(list(body), list(orelse))
            raise Unresolved(f"`{_short(pm, n.test)}` is only known at run time") from None
        return self.eval(pm, n.body if test else n.orelse, env)

    def _e_Subscript(self, pm, n, env):
        obj = self.eval(pm, n.value, env)
        if len(n.slice) != 1:
            raise Unresolved("multi-dimensional subscript")
        sl = n.slice[0].slice
        try:
            if isinstance(sl, cst.Index):
                return obj[self.eval(pm, sl.value, env)]
            lo = self.eval(pm, sl.lower, env) if sl.lower else None
            hi = self.eval(pm, sl.upper, env) if sl.upper else None
            st = self.eval(pm, sl.step, env) if sl.step else None
            return obj[lo:hi:st]
        except (KeyError, IndexError, TypeError):
            raise Unresolved(f"`{_short(pm, n)}` does not evaluate") from None

    def _e_Lambda(self, pm, n, env):
        return Function(pm, n, dict(env))

    def _e_FormattedString(self, pm, n, env):
        raise Unresolved("f-strings are not evaluated")

    def _comprehension(self, pm, n, env, make):
        self.note("comprehension")
        results: list = []
        self.loop_depth += 1
        try:
            self._for_in(pm, n.for_in, ChainMap({}, env), results, make)
        finally:
            self.loop_depth -= 1
        return results

    def _for_in(self, pm, comp: cst.CompFor, env, results, make):
        for item in iterable(self.eval(pm, comp.iter, env)):
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

    def _e_Call(self, pm, n, env):
        fn = self.eval(pm, n.func, env)
        if any(a.star for a in n.args):
            raise Unresolved(f"`{_short(pm, n)}` passes *args/**kwargs")
        args = [self.eval(pm, a.value, env) for a in n.args if a.keyword is None]
        kwargs = {a.keyword.value: self.eval(pm, a.value, env) for a in n.args if a.keyword is not None}
        if fn == Builtin("triton.Config"):
            return self._config(pm, n, args, kwargs)
        if isinstance(fn, Builtin):
            return self._builtin(fn.name, args, kwargs, pm, n)
        if isinstance(fn, Function):
            return self.call(fn, args, kwargs)
        if isinstance(fn, _BoundMethod):
            return fn(args, kwargs)
        raise Unresolved(f"`{_short(pm, n.func)}` is not a function the locator can evaluate")

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
        return ConfigObj(dict(meta), bound.get("num_warps"), bound.get("num_stages"), bound.get("num_ctas"),
                         bound.get("maxnreg"), bound.get("pre_hook") is not None, span, pm.path if span else None)

    def _builtin(self, name, args, kwargs, pm, n):
        short = name.rsplit(".", 1)[-1]
        try:
            if short == "filter":
                self.note("filter")
                pred, items = args
                return [x for x in iterable(items) if (self._apply(pred, [x]) if pred is not None else x)]
            if short == "map":
                fn, items = args
                return [self._apply(fn, [x]) for x in iterable(items)]
            if short == "sorted":
                return sorted(iterable(args[0]), reverse=bool(kwargs.get("reverse", False)))
            if short == "product":
                pools = [iterable(a) for a in args]
                if math.prod(len(p) for p in pools) > MAX_ITEMS:
                    raise Unresolved("too large to evaluate statically")
                return [tuple(p) for p in itertools.product(*pools)]
            if short == "range":
                r = range(*args)
                if len(r) > MAX_ITEMS:
                    raise Unresolved("too large to evaluate statically")
                return list(r)
            if short in ("list", "tuple", "set", "reversed", "enumerate", "zip"):
                conv = {"list": list, "tuple": tuple, "set": set, "reversed": lambda x: list(reversed(x)),
                        "enumerate": lambda *a: list(enumerate(*a)), "zip": lambda *a: list(zip(*a))}[short]
                return conv(*[iterable(a) for a in args]) if args else conv()
            if short == "dict":
                return dict(*args, **kwargs)
            return {"len": len, "min": min, "max": max, "int": int, "str": str, "bool": bool}[short](*args)
        except (Unresolved, Return):
            raise
        except Exception:
            raise Unresolved(f"`{_short(pm, n)}` does not evaluate") from None

    def _apply(self, fn, args):
        if isinstance(fn, Function):
            return self.call(fn, args, {})
        if isinstance(fn, Builtin):
            return self._builtin(fn.name, args, {}, None, None)
        raise Unresolved("filter/map with a function the locator cannot evaluate")

    # -- calling helpers ------------------------------------------------------------------------
_IN_PROGRESS = object()


def _check_size(op: type, left, right) -> None:
    """Refuse before computing what would be huge (``"x" * 10**9``, ``2 ** 10**9``)."""
    too_big = False
    if op is cst.Power and isinstance(right, int) and isinstance(left, int):
        too_big = abs(right) > 256 and abs(left) > 1
    elif op is cst.LeftShift and isinstance(right, int):
        too_big = right > 256
    elif op is cst.Multiply:
        for seq, k in ((left, right), (right, left)):
            if isinstance(seq, (list, tuple, str)) and isinstance(k, int) and len(seq) * k > MAX_ITEMS:
                too_big = True
    if too_big:
        raise Unresolved("too large to evaluate statically")


def evaluate(ev: "Evaluator", pm, node):
    """``ev.eval`` for callers outside the evaluator: any failure of the user's expression
    (a ``TypeError`` in ``-"a"``, a division by zero) is an ``Unresolved`` with its reason."""
    try:
        return ev.eval(pm, node, {})
    except Unresolved:
        raise
    except RecursionError:
        raise Unresolved("nested too deeply to evaluate statically") from None
    except Exception as exc:
        raise Unresolved(f"`{_short(pm, node)}` does not evaluate ({type(exc).__name__})") from None


class _BoundMethod:
    def __init__(self, fn):
        self.fn = fn

    def __call__(self, args, kwargs):
        try:
            return self.fn(*args, **kwargs)
        except Exception:
            raise Unresolved("method call does not evaluate") from None


def _attribute(obj, attr: str):
    if isinstance(obj, ConfigObj) and attr in ("kwargs", "num_warps", "num_stages", "num_ctas", "maxnreg"):
        return getattr(obj, attr)
    if isinstance(obj, list) and attr in ("append", "extend", "insert", "copy", "index", "count"):
        return _BoundMethod(getattr(obj, attr))
    if isinstance(obj, dict) and attr in ("items", "keys", "values", "get", "copy"):
        m = getattr(obj, attr)
        return _BoundMethod(lambda *a, **k: list(m(*a, **k)) if attr in ("items", "keys", "values") else m(*a, **k))
    raise Unresolved(f"attribute `{attr}` is not evaluated")



def _union(a: list, b: list) -> list:
    seen, out = set(), []
    for c in [*a, *b]:
        ident = c.identity() if isinstance(c, ConfigObj) else repr(c)
        if ident not in seen:
            seen.add(ident)
            out.append(c)
    return out


def _short(pm, node) -> str:
    text = pm.code(node).strip() if pm is not None and node is not None else "expression"
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."



__all__ = ["ConfigObj", "Evaluator", "Function", "Pending", "Unresolved", "evaluate", "to_configs", "to_names"]
