"""What an isolated kernel's source says about shared memory, for the spec sanity checks.

Two facts, read with Python's ``ast`` from the bundle (the kernel and the ``@triton.jit`` helpers
it calls, cut out of the user's modules by ``kernel_loader``), each with the user's file:line:

- ``pipelined_loops``: loops Triton 3.x's software pipeliner would multi-buffer, so their shared
  memory grows with ``num_stages``. The conditions are the pipeliner's own (``AssignLatencies`` /
  ``preCondition`` in ``lib/Dialect/TritonGPU/Transforms/Pipeliner``, 3.3 to 3.6): the loop is an
  ``scf.for`` (``range`` / ``tl.range``; ``tl.static_range`` is unrolled by the frontend), it is
  innermost (outer loops are never pipelined; a helper called in the body that has a loop of its
  own makes it an outer loop once inlined), its stage count is the config's (``tl.range(...,
  num_stages=N)`` fixes it, so the config's ``num_stages`` does not change it), and a load of
  the body goes through shared memory once pipelined (``pipelined_loads``: one that reaches a
  dot's operands within the same iteration, not an accumulator, not a recurrent state). Its bounds are
  recorded as the kernel parameters they read: a loop over constexpr bounds may have a trip
  count of one and be folded away by the canonicalizer, so the caller only counts loops whose
  bounds are runtime values once the spec is specialized. What cannot be seen here is the
  pipeliner's last condition, a load at least 32 bits wide (cp.async moves 4, 8 or 16 bytes);
  that is what a spec without the runtime's divisibility breaks, and what the check detects.
- ``unconditional_dot``: a ``tl.dot`` that every compile of the kernel contains (not under an
  ``if``, in the kernel or in a helper it always calls). Its operands are staged through shared
  memory (cp.async buffers, wgmma operands, or the layout conversion to the dot-operand layout):
  measured on sm_80 / sm_90 / sm_120, a single 32x32 dot with no loop takes 4,096 B.

Every choice leans towards reporting nothing: a fact is only recorded where it is certain from
the source.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache

from autotune_rewrite.evidence import KernelBundle
from autotune_rewrite.isolate.kernel_ast import (
    TENSOR_MAKERS,
    aliases,
    assignments,
    broadcasts,
    closure,
    constexpr_params,
    is_triton,
    params,
    reads,
)
from autotune_rewrite.isolate.pipelined_loads import through_shared_memory

DYNAMIC = "<runtime>"  # a bound read from tl.program_id, a load, or a helper's parameter
_RUNTIME_CALLS = frozenset({"program_id", "num_programs", "load"})
_DOTS = frozenset({"dot", "dot_scaled"})


@dataclass(frozen=True)
class Place:
    function: str
    file: str | None  # the user's file, root-relative; None when the bundle does not say
    line: int | None


@dataclass(frozen=True)
class PipelinedLoop:
    place: Place
    bound_params: tuple[str, ...]  # the kernel's non-constexpr parameters its bounds read
    runtime: bool  # its bounds read a runtime value whatever the spec (program_id, a load, ...)


@dataclass(frozen=True)
class KernelFacts:
    pipelined_loops: tuple[PipelinedLoop, ...] = ()
    unconditional_dot: Place | None = None


@lru_cache(maxsize=128)
def facts_of(bundle: KernelBundle) -> KernelFacts:
    """The facts of ``bundle``'s kernel; none when its source does not parse here."""
    try:
        tree = ast.parse(bundle.source)
    except SyntaxError:
        return KernelFacts()
    return _Reader(tree, bundle).facts()


class _Reader:
    def __init__(self, tree: ast.Module, bundle: KernelBundle):
        self.bundle = bundle
        self.aliases = aliases(tree)
        self.functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        self.where = {name: (path, line) for name, path, line in bundle.functions}

    def facts(self) -> KernelFacts:
        loops = [loop for fn in self.functions.values() for loop in self._loops(fn)]
        kernel = self.functions.get(self.bundle.kernel)
        return KernelFacts(tuple(loops), self._always_dot(kernel, set()) if kernel is not None else None)

    # ----------------------------------------------------------------- names
    def _triton(self, func: ast.expr, names: frozenset[str]) -> bool:
        """``func`` is ``triton.language.<one of names>`` in the bundle's spelling."""
        return is_triton(func, names, self.aliases)

    def _calls(self, node: ast.AST, names: frozenset[str]):
        return [c for c in ast.walk(node) if isinstance(c, ast.Call) and self._triton(c.func, names)]

    def _helper(self, call: ast.Call) -> ast.FunctionDef | None:
        return self.functions.get(call.func.id) if isinstance(call.func, ast.Name) else None

    def _place(self, fn: ast.FunctionDef, node: ast.AST) -> Place:
        path, line = self.where.get(fn.name, (None, None))
        return Place(fn.name, path, None if line is None else line + node.lineno - fn.lineno)

    # ----------------------------------------------------------------- dots
    def _always_dot(self, fn: ast.FunctionDef, seen: set[str]) -> Place | None:
        seen.add(fn.name)
        for node in _unconditional(fn.body):
            for call in (c for c in ast.walk(node) if isinstance(c, ast.Call)):
                if self._triton(call.func, _DOTS):
                    return self._place(fn, call)
                helper = self._helper(call)
                if helper is not None and helper.name not in seen:
                    found = self._always_dot(helper, seen)
                    if found is not None:
                        return found
        return None

    # ----------------------------------------------------------------- loops
    def _loops(self, fn: ast.FunctionDef) -> list[PipelinedLoop]:
        kernel = fn.name == self.bundle.kernel
        names = params(fn)
        constexpr = constexpr_params(fn)
        assigned = assignments(fn)
        # A helper's parameters are whatever its caller passes: runtime values, possibly tensors.
        seeds = {p: ({p} if kernel else {DYNAMIC}) for p in names if p not in constexpr}
        sources = closure(assigned, seeds, lambda e: {DYNAMIC} if self._calls(e, _RUNTIME_CALLS) else set())
        tensors = set(closure(assigned, {} if kernel else {p: {p} for p in names},
                              lambda e: {"t"} if self._calls(e, TENSOR_MAKERS) or broadcasts(e) else set()))
        out = []
        for loop in (n for n in ast.walk(fn) if isinstance(n, ast.For)):
            bounds = self._scf_for(loop)
            if bounds is None or not self._innermost(loop) \
                    or not through_shared_memory(loop, fn, tensors, self.bundle.kernel, self.functions, self.aliases):
                continue
            read = set().union(*(reads(b, sources) for b in bounds)) if bounds else set()
            out.append(PipelinedLoop(self._place(fn, loop), tuple(sorted(read - {DYNAMIC})), DYNAMIC in read))
        return out

    def _scf_for(self, loop: ast.For) -> list[ast.expr] | None:
        """The bounds of a loop that becomes an scf.for at the config's stage count; else None."""
        it = loop.iter
        if not self._is_range(loop):
            return None  # static_range (unrolled), a Python iterable, ...
        if any(k.arg in ("num_stages", "warp_specialize") for k in it.keywords):
            return None  # the loop's own stage count (or a warp-specialized schedule) wins
        return list(it.args) + [k.value for k in it.keywords if k.arg in (None, "arg1", "arg2", "step")]

    def _is_range(self, loop: ast.For) -> bool:
        """``range`` / ``tl.range``: an scf.for, whatever its own stage count."""
        it = loop.iter
        if not isinstance(it, ast.Call):
            return False
        builtin = isinstance(it.func, ast.Name) and it.func.id == "range" and "range" not in self.aliases
        return builtin or self._triton(it.func, frozenset({"range"}))

    def _innermost(self, loop: ast.For) -> bool:
        for node in ast.walk(ast.Module(body=loop.body, type_ignores=[])):
            # An inner tl.range(..., num_stages=1) is still a loop: the outer one is never pipelined.
            if isinstance(node, ast.While) or (isinstance(node, ast.For) and self._is_range(node)):
                return False
            if isinstance(node, ast.Call):
                helper = self._helper(node)
                if helper is not None and any(isinstance(n, (ast.For, ast.While)) for n in ast.walk(helper)):
                    return False
        return True


def _unconditional(body: list[ast.stmt]):
    """The statements of ``body`` every compile contains, nested loops and ``with`` included;
    not under an ``if`` (a constexpr ``if`` is pruned at compile time), ``try`` or ``match``."""
    for stmt in body:
        if isinstance(stmt, (ast.If, ast.Try, ast.Match, ast.FunctionDef)):
            continue
        if isinstance(stmt, (ast.For, ast.While, ast.With)):
            yield from (n for n in ([stmt.iter] if isinstance(stmt, ast.For) else []))
            yield from _unconditional(stmt.body)
            continue
        if any(isinstance(n, ast.IfExp) for n in ast.walk(stmt)):
            continue
        yield stmt
