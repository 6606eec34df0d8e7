"""What the pipeliner walk of ``pipelined_loads`` carries: the flags a value holds (derived from a
pipelined load, transposed on the way), one frame per function walked (the loop's own or an
inlined helper), what each function's names are once per loop (``Memo``: assignments, the names
known at compile time, the names derived from a seed), and compile-time tests folded from the
literals a frame binds."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from autotune_rewrite.isolate.kernel_ast import TENSOR_MAKERS, assignments, broadcasts, closure, is_triton, params

Flags = frozenset  # of LOAD / TRANSPOSED
LOAD = "load"  # derived from a pipelined load by ops the pipeliner walks through
TRANSPOSED = "transposed"  # ... with a transposition on the way
NONE: Flags = frozenset()
STATIC_ATTRS = frozenset({"shape", "dtype", "element_ty", "type", "numel", "primitive_bitwidth"})
UNKNOWN = object()  # a compile-time test ``fold`` cannot decide


def flat(v) -> Flags:
    if isinstance(v, tuple):
        return frozenset().union(*(flat(x) for x in v))
    return v


def union(*values) -> Flags:
    return frozenset().union(*(flat(v) for v in values))


def transposed(v) -> Flags:
    flags = flat(v)
    return frozenset({TRANSPOSED}) if flags else NONE


def merge(a, b):
    """What a name holds after an ``if`` whose branches gave it ``a`` and ``b``."""
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        return tuple(merge(x, y) for x, y in zip(a, b))
    return union(a, b)


@dataclass
class Frame:
    """One function being walked: the loop's own, or a helper inlined into it."""

    state: dict  # name -> what it holds so far in this iteration; absent: a value from before it
    moving: set[str]  # names whose value changes with the iteration
    tensors: set[str]  # names that may hold a tensor
    static: set[str]  # names known at compile time (constexprs and what is computed from them)
    local: set[str]  # the function's parameters and assigned names (any other name is a global)
    consts: dict  # parameters bound to a literal (a helper's mode string, None, a default)
    not_none: set[str]  # parameters bound to something that cannot be None (a call, arithmetic)



class Memo:
    """What the walks of one loop need of each function, computed once for all of them."""

    def __init__(self, spelled: dict[str, str]):
        self.spelled = spelled
        self._assigned: dict = {}
        self._static: dict = {}
        self._derived: dict = {}

    def assigned(self, fn: ast.FunctionDef) -> dict[str, list[ast.expr]]:
        if fn not in self._assigned:
            self._assigned[fn] = assignments(fn)
        return self._assigned[fn]

    def local(self, fn: ast.FunctionDef) -> set[str]:
        return set(params(fn)) | set(self.assigned(fn))

    def static(self, fn: ast.FunctionDef, static_params: frozenset[str]) -> set[str]:
        """The largest set of names whose every assignment is static given the set itself."""
        key = (fn, static_params)
        if key not in self._static:
            assigned, local = self.assigned(fn), self.local(fn)
            static = set(static_params) | (set(assigned) - set(params(fn)))
            changed = True
            while changed:
                changed = False
                for name, values in assigned.items():
                    if name in static and not all(is_static(v, static, local) for v in values):
                        static.discard(name)
                        changed = True
            self._static[key] = static
        return self._static[key]

    def derived(self, fn: ast.FunctionDef, seeds: frozenset[str], makers: bool = False) -> set[str]:
        """The names of ``fn`` computed from ``seeds`` (and, with ``makers``, from a tensor maker)."""
        key = (fn, seeds, makers)
        if key not in self._derived:
            own = self._makes_tensor if makers else (lambda e: set())
            found = closure(self.assigned(fn), {p: {"x"} for p in seeds}, own)
            self._derived[key] = {n for n, s in found.items() if s} | set(seeds)
        return self._derived[key]

    def _makes_tensor(self, e: ast.AST) -> set[str]:
        makes = broadcasts(e) or any(isinstance(c, ast.Call) and is_triton(c.func, TENSOR_MAKERS, self.spelled)
                                     for c in ast.walk(e))
        return {"x"} if makes else set()

    def frame(self, fn: ast.FunctionDef, state: dict, moving: set[str], tensors: set[str],
              static_params: set[str], consts: dict | None = None, not_none: set[str] = frozenset()) -> Frame:
        return Frame(state, moving, tensors, self.static(fn, frozenset(static_params)), self.local(fn),
                      dict(consts or {}), set(not_none))


def is_static(e: ast.AST, static: set[str], local: set[str]) -> bool:
    """``e`` is known at compile time: constexprs, globals, shapes and dtypes, ``x is None``."""
    if isinstance(e, ast.Constant):
        return True
    if isinstance(e, ast.Name):
        return e.id in static or e.id not in local
    if isinstance(e, ast.Attribute):
        return e.attr in STATIC_ATTRS or is_static(e.value, static, local)
    if isinstance(e, ast.Compare) and all(isinstance(op, (ast.Is, ast.IsNot)) for op in e.ops):
        return True  # decided by the frontend, tensors included
    if isinstance(e, (ast.BinOp, ast.BoolOp, ast.UnaryOp, ast.Compare, ast.IfExp, ast.Tuple, ast.List,
                      ast.Subscript, ast.Slice)):
        return all(is_static(c, static, local) for c in ast.iter_child_nodes(e) if isinstance(c, ast.expr))
    return False  # a call, a lambda, ...: not known here


def fold(e: ast.AST, frame: Frame):
    """The value of a compile-time test from the literals its names are bound to; UNKNOWN else."""
    if isinstance(e, ast.Constant):
        return e.value
    if isinstance(e, ast.Name):
        return frame.consts.get(e.id, UNKNOWN)
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
        v = fold(e.operand, frame)
        return UNKNOWN if v is UNKNOWN else not v
    if isinstance(e, ast.BoolOp):
        values = [fold(v, frame) for v in e.values]
        if UNKNOWN in values:
            return UNKNOWN
        return all(values) if isinstance(e.op, ast.And) else any(values)
    if isinstance(e, ast.Compare) and len(e.ops) == 1:
        op, right = e.ops[0], e.comparators[0]
        if isinstance(op, (ast.Is, ast.IsNot)) and isinstance(right, ast.Constant) and right.value is None \
                and isinstance(e.left, ast.Name) and e.left.id in frame.not_none:
            return isinstance(op, ast.IsNot)
        left, value = fold(e.left, frame), fold(right, frame)
        if UNKNOWN in (left, value):
            return UNKNOWN
        compare = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b,
                   ast.Is: lambda a, b: a is b, ast.IsNot: lambda a, b: a is not b}.get(type(op))
        return UNKNOWN if compare is None else compare(left, value)
    return UNKNOWN


__all__ = ["Flags", "Frame", "LOAD", "Memo", "NONE", "TRANSPOSED", "UNKNOWN", "flat", "fold", "is_static", "merge", "transposed",
           "union"]
