"""The static evaluator: a tiny interpreter over LibCST nodes, without running any code.

The one evaluator of the project: the locator evaluates ``configs=``/``key=`` and the kernel's
parameter defaults with it, so the spec resolver reads known values instead of re-deriving
them. It covers the shapes real repos use: literals, list/tuple/dict displays, comprehensions
(nested ``for``, ``if``; ``comprehensions``), operators, ``list(filter(lambda ..., xs))``,
module-level variables as bound where they are read (``scopes``: the binding in force at the
decorator, also under a module-level ``if``/``else``: the branch taken; tuple unpacking; a
function's own locals),
helper functions of the tree whose bodies build a list (``statements``), instances of its
plain classes (``classes``), calls (``calls``) and JSON/YAML data files (``data_files``). A branch whose test is not known
statically is refused, never the union of both branches. Names outside the tree are answered
by an ``Answers`` table (``answers``: builtins, itertools, math, ``tl.constexpr``,
``triton.cdiv``; device and environment queries per target, ``device``), which a caller may
extend; the queries a value depended on, and the branches they decided, are in ``queries``.

A module is anything with ``path``, ``module_name``, ``names(node)`` (absolute qualified
names), ``tree`` (the module walked), ``scope(node)``, ``span(node)`` and ``code(node)``
(``locate.parsed.ParsedModule``).
Internally a value that cannot be known raises ``Unresolved`` with the reason; callers get a
``Known``/``Unknown`` result from ``outcome`` (or the exception from ``evaluate``). Names
imported from another module call ``resolve(fq)``, which the locator's per-file pass answers
with ``Pending`` and its linking pass by evaluating that module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import libcst as cst

from autotune_rewrite.evaluate import unknowns
from autotune_rewrite.evaluate.answers import DEFAULT_ANSWERS, Answers
from autotune_rewrite.evaluate.calls import TRITON_MODULES, CallForms, TritonModule
from autotune_rewrite.evaluate.classes import ClassCalls
from autotune_rewrite.evaluate.comprehensions import Comprehensions
from autotune_rewrite.evaluate.data_files import DATA_CALLS, DataFiles, FileHandle, RepoPath
from autotune_rewrite.evaluate.device import DeviceRecord, TargetQuery, UnansweredQuery
from autotune_rewrite.evaluate.queries import is_query
from autotune_rewrite.evaluate.literals import literal
from autotune_rewrite.evaluate.operations import BINOPS, CMPOPS, attribute, check_size, short
from autotune_rewrite.evaluate.scopes import NOT_LOCAL, NameLookup
from autotune_rewrite.evaluate.statements import HelperCalls
from autotune_rewrite.evaluate.values import (
    MAX_ITEMS, MAX_STEPS, Builtin, ConfigObj, Function, Known, Pending, Unknown,
    Unresolved, iterable, opaque_in, to_configs, to_names,
)


@dataclass
class Evaluator(CallForms, HelperCalls, NameLookup, ClassCalls, DataFiles, Comprehensions):
    """Evaluates nodes of one or more ``ParsedModule``s. ``resolve(fq)`` returns the value of a
    module-level name of another module (or raises)."""

    resolve: Callable[[str], Any]
    answers: Answers = DEFAULT_ANSWERS
    origin: list[str] = field(default_factory=list)
    # Device/env queries answered, and branches they decided, in words ("torch.version.hip = None")
    queries: list[str] = field(default_factory=list)
    loop_depth: int = 0
    # The literal elements the loops around the current point iterate over (``provenance``)
    choices: list = field(default_factory=list)
    steps: int = 0
    depth: int = 0
    # Per block (a module's path, a function's ``def``): the line the evaluation is at there
    # (``scopes``: the binding in force at that line is read).
    positions: dict = field(default_factory=dict)
    # Reads a file of the tree by its root-relative path (None when absent); None: the
    # per-file pass, which leaves data files to the linking pass (``data_files``).
    read_data: Callable[[str], bytes | None] | None = None
    data_files: list[str] = field(default_factory=list)  # the data files read, in order
    # A launch's context object (``ctx = MoECtx(n=x.size(0), BLOCK_M=64)``): an argument of a
    # call into the tree that does not evaluate is passed as ``Opaque`` instead of stopping,
    # and constructors run statement by statement (``classes``). Off for configs.
    opaque_arguments: bool = False
    # id(def) -> the values its parameters stand for (a launch wrapper's: ``Opaque``, or the
    # defaults a reader assumes the caller leaves alone); read where a local is not rebound.
    parameters: dict | None = None
    _module_cache: dict = field(default_factory=dict)

    def note(self, what: str) -> None:
        if what not in self.origin:
            self.origin.append(what)

    def asked(self, what: str) -> None:
        if what not in self.queries:
            self.queries.append(what)

    def test(self, pm, node, env) -> bool:
        """A branch's condition; when a device/env query decided it, that is noted."""
        before = len(self.queries)
        value = bool(self.eval(pm, node, env))
        if len(self.queries) > before:
            self.asked(f"`{short(pm, node)}` is {value}")
        return value

    def _tick(self, n: int = 1) -> None:
        self.steps += n
        if self.steps > MAX_STEPS:
            raise Unresolved("too large to evaluate statically")

    # -- names --------------------------------------------------------------------------------
    def _name(self, pm, node: cst.Name, env):
        if node.value in env:
            return env[node.value]
        if node.value in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[node.value]
        if node.value == "__file__":
            return RepoPath(pm.path)
        local = self.local_value(pm, node)
        if local is not NOT_LOCAL:
            return local
        return self._qualified(pm, node, node.value)

    def _qualified(self, pm, node, text: str):
        names = _names(pm, node)
        if not names:
            raise Unresolved(unknowns.no_binding(text))
        for fq in sorted(names):
            if fq in DATA_CALLS:
                return Builtin(fq)
            known, value = self.answers.lookup(fq)
            if known:
                if is_query(fq) and not isinstance(value, (Builtin, DeviceRecord)):
                    self.asked(f"{text} = {value!r}")
                return value
            prefix = pm.module_name + "."
            if fq.startswith(prefix):
                # ``NAME`` or ``Loader.ATTR`` of this module: read where the evaluation is.
                head, *tail = fq[len(prefix):].split(".")
                if self.optional_import(pm, head):
                    continue  # the import's own qualified name is among ``names``
                value = self.module_value(pm, head)
                for attr in tail:
                    value = self.get_attribute(value, attr, self._plain_attribute)
                return value
        fq = sorted(names)[0]
        if fq in TRITON_MODULES:
            return TritonModule(fq)  # only ``hasattr`` asks it anything (``_getattr``)
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
            raise Unresolved(f"`{short(pm, node)}` is not a form the locator evaluates statically")
        return method(pm, node, env)

    def _e_Integer(self, pm, n, env):
        return literal(n)

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
        if not dotted or not _names(pm, n):
            obj = self.eval(pm, n.value, env)
            value = self.get_attribute(obj, n.attr.value, self._plain_attribute)
            if isinstance(obj, DeviceRecord):
                self.asked(f"{short(pm, n)} = {value!r}")
            return value
        return self._qualified(pm, n, short(pm, n))

    def _plain_attribute(self, obj, attr: str):
        if isinstance(obj, (RepoPath, FileHandle)):
            return self.path_attribute(obj, attr)
        return attribute(obj, attr)

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
        fn = BINOPS.get(type(n.operator))
        if fn is None:
            raise Unresolved("unsupported operator")
        if isinstance(n.operator, cst.Add) and isinstance(left, list):
            self.note("concatenation")
        check_size(type(n.operator), left, right)
        try:
            out = fn(left, right)
        except Unresolved:
            raise
        except Exception as exc:  # a type error in the user's expression: we cannot know it
            raise Unresolved(f"`{short(pm, n)}` does not evaluate ({type(exc).__name__})") from None
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
            if (opaque := opaque_in((left, right))) is not None:
                raise Unresolved(opaque.reason)  # ``x is None`` on a run-time value: not known
            try:
                ok = CMPOPS[type(target.operator)](left, right)
            except Exception:
                raise Unresolved(f"`{short(pm, n)}` does not evaluate") from None
            if not ok:
                return False
            left = right
        return True

    def taken(self, pm, n, env):
        """The branch ``a if c else b`` takes here (nested ones followed); any other node as is.
        A loop over it iterates that branch's literal, so its configs record that branch's
        elements (``provenance``), never the other one's."""
        while isinstance(n, cst.IfExp):
            # Never the union of both branches: configs no target sees would be judged and emitted.
            try:
                test = self.test(pm, n.test, env)
            except (Pending, TargetQuery, UnansweredQuery):
                raise
            except Unresolved:
                raise Unresolved(unknowns.runtime_branch(short(pm, n.test))) from None
            n = n.body if test else n.orelse
        return n

    def _e_IfExp(self, pm, n, env):
        return self.eval(pm, self.taken(pm, n, env), env)

    def _e_Subscript(self, pm, n, env):
        obj = self.eval(pm, n.value, env)
        if len(n.slice) != 1:
            raise Unresolved("multi-dimensional subscript")
        sl = n.slice[0].slice
        try:
            if isinstance(sl, cst.Index):
                value = obj[self.eval(pm, sl.value, env)]
                if isinstance(obj, DeviceRecord):
                    self.asked(f"{short(pm, n)} = {value!r}")
                return value
            lo = self.eval(pm, sl.lower, env) if sl.lower else None
            hi = self.eval(pm, sl.upper, env) if sl.upper else None
            st = self.eval(pm, sl.step, env) if sl.step else None
            return obj[lo:hi:st]
        except (KeyError, IndexError, TypeError):
            raise Unresolved(f"`{short(pm, n)}` does not evaluate") from None

    def _e_Lambda(self, pm, n, env):
        return Function(pm, n, dict(env))

    def _e_FormattedString(self, pm, n, env):
        raise Unresolved("f-strings are not evaluated")


_IN_PROGRESS = object()


def outcome(ev: "Evaluator", pm, node) -> Known | Unknown:
    """The value of ``node``, or why it is not known statically (never raises). A name imported
    from another module that the resolver could not follow yet is ``Unknown(pending=fq)``."""
    try:
        return Known(evaluate(ev, pm, node))
    except Pending as exc:
        return Unknown(str(exc), pending=exc.fq)
    except Unresolved as exc:
        return Unknown(str(exc))


def _names(pm, node) -> frozenset[str]:
    """Qualified names of ``node``; a node outside the analysed tree (a parameter default of a
    trimmed kernel) is read in the module's global scope, where Python evaluates it."""
    names = pm.names(node)
    if not names and hasattr(pm, "global_names"):
        names = pm.global_names(node)
    return names


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
        raise Unresolved(f"`{short(pm, node)}` does not evaluate ({type(exc).__name__})") from None


__all__ = ["ConfigObj", "Evaluator", "Function", "Known", "Pending", "Unknown", "Unresolved", "evaluate",
           "outcome",
           "to_configs", "to_names"]
