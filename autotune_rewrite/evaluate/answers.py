"""What the evaluator knows about names that are not in the tree: builtins, itertools, math and
Triton's host-side helpers. Pluggable: ``Answers.extended`` adds or overrides answers, so a
caller can answer a question the way a particular target would (``torch.version.hip`` -> None
for CUDA) without touching the evaluator.

An answer is either a value (``math.pi``) or a call handler ``handler(args, kwargs, apply)``
that computes a call's value from already-evaluated arguments; ``apply(fn, args[, kwargs])``
calls a function value of the tree (a lambda given to ``filter``). A handler raises ``Unresolved`` with
the reason when it cannot answer.
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from autotune_rewrite.evaluate import device, dtype_facts, unknowns
from autotune_rewrite.evaluate.queries import is_query
from autotune_rewrite.evaluate.values import MAX_ITEMS, Builtin, Unresolved, iterable
from autotune_rewrite.triton_names import CDIV, CONFIG, CONSTEXPR, NEXT_POWER_OF_2

Handler = Callable[[list, dict, Callable], Any]
CONFIG_MARKER = Builtin("triton.Config")  # the evaluator builds these itself (it needs the span)


def _range(args, kwargs, apply):
    r = range(*args)
    if len(r) > MAX_ITEMS:  # refuse before building the list
        raise Unresolved("too large to evaluate statically")
    return list(r)


def _product(args, kwargs, apply):
    pools = [iterable(a) for a in args]
    if math.prod(len(p) for p in pools) > MAX_ITEMS:
        raise Unresolved("too large to evaluate statically")
    return [tuple(p) for p in itertools.product(*pools)]


def _filter(args, kwargs, apply):
    pred, items = args
    return [x for x in iterable(items) if (apply(pred, [x]) if pred is not None else x)]


def _map(args, kwargs, apply):
    fn, items = args
    return [apply(fn, [x]) for x in iterable(items)]


def _collection(conv: Callable, keywords: tuple[str, ...] = ()) -> Handler:
    """``list(xs)``, ``zip(a, b, strict=True)``, ``enumerate(xs, start=1)``: the iterables as lists,
    the keywords this builtin takes passed on; another keyword is refused, never dropped (a
    dropped ``start=`` would shift every value)."""
    def handler(args, kwargs, apply):
        unknown = set(kwargs) - set(keywords)
        if unknown:
            raise Unresolved(f"keyword {', '.join(sorted(unknown))} of a builtin is not evaluated")
        if not args:
            return conv(**kwargs)
        return conv(iterable(args[0]), *args[1:], **kwargs) if keywords == ("start",) else conv(
            *[iterable(a) for a in args], **kwargs)

    return handler


def _reduce(args, kwargs, apply):
    """``functools.reduce(fn, xs[, initial])`` with a function value of the tree or a builtin."""
    fn, items, *initial = args
    return functools.reduce(lambda a, b: apply(fn, [a, b]), iterable(items), *initial)


def _partial(args, kwargs, apply):
    """``functools.partial(fn, *args, **kwargs)``: a value that calls ``fn`` with them first."""
    from autotune_rewrite.evaluate.operations import BoundMethod

    fn, *given = args
    return BoundMethod(lambda *more, **named: apply(fn, [*given, *more], {**kwargs, **named}))


def _plain(fn: Callable) -> Handler:
    return lambda args, kwargs, apply: fn(*args, **kwargs)


_TYPES = {"builtins.list": list, "builtins.tuple": tuple, "builtins.dict": dict, "builtins.int": int,
          "builtins.float": float, "builtins.str": str, "builtins.bool": bool, "builtins.set": set}


def _isinstance(args, kwargs, apply):
    """``isinstance(v, list)`` / ``(list, tuple)`` / ``triton.Config`` on a known value."""
    from autotune_rewrite.evaluate.values import ConfigObj

    value, kinds = args
    out = []
    for kind in kinds if isinstance(kinds, tuple) else (kinds,):
        if kind == CONFIG_MARKER:
            out.append(ConfigObj)
        elif isinstance(kind, Builtin) and kind.name in _TYPES:
            out.append(_TYPES[kind.name])
        else:
            raise Unresolved("isinstance with a type the evaluator does not know")
    return isinstance(value, tuple(out))


def _no_handler(args, kwargs, apply):  # the evaluator answers these itself (it needs the values' attributes)
    raise Unresolved("not evaluated here")


def _next_power_of_2(n: int) -> int:
    # triton.next_power_of_2: 1 for n <= 1, else the smallest power of two >= n.
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


_OPERATORS = ("add", "sub", "mul", "floordiv", "truediv", "mod", "neg", "and_", "or_", "xor", "not_", "eq", "ne", "lt",
              "le", "gt", "ge", "truth", "lshift", "rshift", "index")
_MATH = ("log2", "log", "log10", "log1p", "sqrt", "isqrt", "ceil", "floor", "trunc", "exp", "exp2", "expm1",
         "gcd", "lcm", "pow", "fabs", "copysign", "hypot", "sin", "cos", "tan", "asin", "acos", "atan", "atan2",
         "sinh", "cosh", "tanh", "erf", "erfc", "isfinite", "isinf", "isnan")

_CALLS: dict[str, Handler] = {
    "builtins.list": _collection(list), "builtins.tuple": _collection(tuple), "builtins.set": _collection(set),
    "builtins.reversed": _collection(lambda x: list(reversed(x))),
    "builtins.enumerate": _collection(lambda *a, **k: list(enumerate(*a, **k)), ("start",)),
    "builtins.zip": _collection(lambda *a, **k: list(zip(*a, **k)), ("strict",)),
    "functools.reduce": _reduce, "functools.partial": _partial,
    # operator's pure functions of values (``functools.reduce(operator.mul, dims)``); not ``pow``,
    # which can grow without bound.
    **{f"operator.{n}": _plain(getattr(operator, n)) for n in _OPERATORS},
    "builtins.range": _range, "builtins.filter": _filter, "builtins.map": _map,
    "builtins.isinstance": _isinstance, "builtins.getattr": _no_handler, "builtins.hasattr": _no_handler,
    "builtins.sum": lambda args, kwargs, apply: sum(iterable(args[0]), *args[1:]),
    "builtins.any": lambda args, kwargs, apply: any(iterable(args[0])),
    "builtins.all": lambda args, kwargs, apply: all(iterable(args[0])),
    "builtins.sorted": lambda args, kwargs, apply: sorted(
        iterable(args[0]), reverse=bool(kwargs.get("reverse", False)),
        key=None if kwargs.get("key") is None else (lambda x: apply(kwargs["key"], [x]))),
    "builtins.dict": _plain(dict),
    **{f"builtins.{n}": _plain(f) for n, f in (("len", len), ("min", min), ("max", max), ("int", int), ("str", str),
                                               ("bool", bool), ("float", float), ("abs", abs),
                                               ("round", round))},
    "itertools.product": _product,
    # math's pure functions of numbers (module globals such as ``RCP_LN2 = 1.0 / math.log(2)``);
    # none can grow without bound (``factorial`` and integer ``pow`` are left out for that).
    **{f"math.{n}": _plain(getattr(math, n)) for n in _MATH if hasattr(math, n)},
    # ``tl.constexpr(v)`` at module level or in a default is the value ``v`` to every reader here.
    **{fq: (lambda args, kwargs, apply: args[0] if len(args) == 1 and not kwargs else _bad()) for fq in CONSTEXPR},
    **{fq: _plain(lambda a, b: (a + b - 1) // b) for fq in CDIV},
    **{fq: _plain(_next_power_of_2) for fq in NEXT_POWER_OF_2},
    # Device and environment queries: per target (``device.answers_for``), never guessed here.
    **device.NEUTRAL_CALLS,
    **dtype_facts.CALLS,
}
_VALUES: dict[str, Any] = {"math.pi": math.pi, "math.e": math.e, "math.inf": math.inf, "math.tau": math.tau,
                           "math.nan": math.nan, **dtype_facts.VALUES}


def _bad():
    raise Unresolved("tl.constexpr takes one value")


@dataclass(frozen=True)
class Answers:
    """Answers for external names, by absolute dotted name."""

    calls: Mapping[str, Handler] = field(default_factory=lambda: MappingProxyType(_CALLS))
    values: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType(_VALUES))

    def lookup(self, fq: str) -> tuple[bool, Any]:
        """(True, value) for a name this knows: a value, or a ``Builtin`` to call."""
        if fq in CONFIG:
            return True, CONFIG_MARKER
        if fq in self.calls:
            return True, Builtin(fq)
        if fq in self.values:
            return True, self.values[fq]
        head, _, attr = fq.rpartition(".")
        if isinstance(record := self.values.get(head), device.DeviceRecord):
            return True, record.field(attr)  # ``torch.float16.itemsize``: one name to the resolver
        if fq in device.NEUTRAL_VALUES:
            raise device.TargetQuery(fq)
        if is_query(fq):
            raise device.UnansweredQuery(unknowns.unknown_device_query(fq))
        return False, None

    def call(self, fn: Builtin, args: list, kwargs: dict, apply: Callable) -> Any:
        handler = self.calls.get(fn.name)
        if handler is None:
            raise Unresolved(f"`{fn.name}` is not a function the evaluator knows")
        return handler(args, kwargs, apply)

    def extended(self, calls: Mapping[str, Handler] = MappingProxyType({}),
                 values: Mapping[str, Any] = MappingProxyType({})) -> "Answers":
        """These answers plus (or instead of) ``calls`` and ``values``."""
        return Answers(MappingProxyType({**self.calls, **calls}), MappingProxyType({**self.values, **values}))

    def for_target(self, target, env: Mapping[str, str] = MappingProxyType({})) -> "Answers":
        """These answers as ``target`` (a ``targets.Target``; None: device queries stay open)
        answers device queries, with ``os.environ`` read from ``env``."""
        return device.answers_for(self, target, env)


DEFAULT_ANSWERS = Answers()
