"""Values the static evaluator produces, its results, and the reasons it stops.

Plain Python values (ints, strings, lists, dicts) stand for themselves; ``ConfigObj`` is a
``triton.Config`` being built; ``Function`` a helper or lambda from the tree; ``Builtin`` a
function answered by ``answers``. A caller gets ``Known(value)`` or ``Unknown(reason)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import libcst as cst

from autotune_rewrite.evaluate import unknowns
from autotune_rewrite.model import ConfigValue, Span

MAX_ITEMS = 4096  # bigger lists are not config sets; stop before a runaway loop
MAX_STEPS = 200_000
MAX_DEPTH = 32
CONFIG_POSITIONAL = ("kwargs", "num_warps", "num_stages", "num_ctas", "maxnreg", "pre_hook")


class Unresolved(Exception):
    """The expression cannot be evaluated statically; the message says why."""


class LaunchArguments(dict):
    """``named_args``: the launch's arguments by name that ``locate/early_prune`` hands an
    ``early_config_prune``, none of them known statically. A helper called with them is a pruner
    (``statements.HelperCalls``)."""

    def __missing__(self, key):
        raise Unresolved(unknowns.launch_arguments(str(key)))


class Pending(Unresolved):
    """Needs a name imported from another module (resolved in the linking pass)."""

    def __init__(self, fq: str):
        super().__init__(f"uses `{fq}`, defined in another module")
        self.fq = fq


@dataclass(frozen=True)
class Known:
    """The expression's value, statically known."""

    value: Any


@dataclass(frozen=True)
class Unknown:
    """The value is not known statically, because ``reason``; ``pending`` names the import of
    another module it waits for (the linking pass may still know it)."""

    reason: str
    pending: str | None = None


class Opaque:
    """A value only known at run time (a tensor's size, a wrapper's parameter), passed along
    but never looked into: a context class built with it keeps its other fields known
    (``Ctx(n=x.shape[0], BLOCK_M=64).BLOCK_M`` is 64), and anything that would depend on it
    (an operator, a test, a comparison, an attribute, a builtin) stops with its reason, so it
    can never be mistaken for a value. Only an evaluator in ``opaque_arguments`` mode makes
    them (``calls``)."""

    __slots__ = ("reason",)

    def __init__(self, reason: str):
        self.reason = reason

    def __repr__(self) -> str:
        return f"Opaque({self.reason!r})"

    def refuse(self, *_):
        raise Unresolved(self.reason)

    __bool__ = __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __hash__ = __iter__ = __len__ = refuse
    __getitem__ = __contains__ = __index__ = __int__ = __float__ = __neg__ = __pos__ = __invert__ = refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = refuse
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __pow__ = __rpow__ = refuse
    __lshift__ = __rlshift__ = __rshift__ = __rrshift__ = __and__ = __rand__ = __or__ = __ror__ = refuse
    __xor__ = __rxor__ = refuse


def opaque_in(values) -> Opaque | None:
    """The first ``Opaque`` among ``values`` (not looked into), or None."""
    return next((v for v in values if isinstance(v, Opaque)), None)


@dataclass
class ConfigObj:
    kwargs: dict
    num_warps: Any = None
    num_stages: Any = None
    num_ctas: Any = None
    maxnreg: Any = None
    has_pre_hook: bool = False
    span: Span | None = None
    path: str | None = None
    descriptor_shapes: tuple = ()
    choices: tuple = ()  # ElementChoice of each loop that generated it (evaluate/provenance.py)
    unknown: tuple = ()  # ((field, reason), ...): fields only known at run time

    def freeze(self) -> ConfigValue:
        return ConfigValue(dict(self.kwargs), self.num_warps, self.num_stages, self.num_ctas, self.maxnreg,
                           self.has_pre_hook, self.span, self.path, self.descriptor_shapes, self.choices, self.unknown)

    def identity(self) -> tuple:
        return (tuple(sorted(self.kwargs.items())), self.num_warps, self.num_stages, self.num_ctas, self.maxnreg,
                self.has_pre_hook, self.unknown)


@dataclass
class Function:
    pm: Any  # ParsedModule holding ``node``
    node: cst.FunctionDef | cst.Lambda
    closure: Any = None


@dataclass(frozen=True)
class Builtin:
    name: str


class Return(Exception):
    def __init__(self, value):
        self.value = value


class Break(Exception):
    pass


class Continue(Exception):
    pass


def iterable(value):
    if isinstance(value, (list, tuple, set, dict, str, range)):
        return list(value)
    raise Unresolved("iterates over something that is not a literal collection")


def bind(target, value, env) -> None:
    if isinstance(target, cst.Name):
        env[target.value] = value
    elif isinstance(target, (cst.Tuple, cst.List)):
        items = iterable(value)
        if len(items) != len(target.elements):
            raise Unresolved("unpacking with the wrong number of values")
        for el, item in zip(target.elements, items):
            bind(el.value, item, env)
    else:
        raise Unresolved("assignment to something other than a name")


def to_configs(value) -> tuple[ConfigValue, ...]:
    """An evaluated ``configs`` value -> ConfigValues (or ``Unresolved``)."""
    if not isinstance(value, (list, tuple)):
        raise Unresolved(f"evaluates to {type(value).__name__}, not a list of triton.Config")
    if not all(isinstance(c, ConfigObj) for c in value):
        raise Unresolved("the list holds something other than triton.Config objects")
    return tuple(c.freeze() for c in value)


def to_names(value) -> tuple[str, ...]:
    """An evaluated ``key``/``reset_to_zero``/... value -> names (or ``Unresolved``)."""
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise Unresolved("not a list of argument names")

