"""What an isolated kernel's source says about shared memory, for the spec sanity checks.

Two facts, read with Python's ``ast`` from the bundle (the kernel and the ``@triton.jit`` helpers
it calls, cut out of the user's modules by ``kernel_loader``), each with the user's file:line:

- ``pipelined_loops``: loops Triton 3.x's software pipeliner would multi-buffer, so their shared
  memory grows with ``num_stages``. The conditions are the pipeliner's own (``AssignLatencies`` /
  ``preCondition`` in ``lib/Dialect/TritonGPU/Transforms/Pipeliner``, 3.3 to 3.6): the loop is an
  ``scf.for`` (``range`` / ``tl.range``; ``tl.static_range`` is unrolled by the frontend), it is
  innermost (outer loops are never pipelined; a helper called in the body that has a loop of its
  own makes it an outer loop once inlined), its stage count is the config's (``tl.range(...,
  num_stages=N)`` fixes it, so the config's ``num_stages`` does not change it), and a
  ``tl.load`` of a tensor whose address changes per iteration feeds a ``tl.dot`` in the body
  (without ``num_stages=`` on the loop only loads reaching a dot are pipelined). Its bounds are
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

from autotune_rewrite.check.evidence import KernelBundle

DYNAMIC = "<runtime>"  # a bound read from tl.program_id, a load, or a helper's parameter
_TENSOR_MAKERS = frozenset({"arange", "make_block_ptr", "advance", "zeros", "full", "broadcast_to", "reshape",
                            "expand_dims", "make_tensor_descriptor"})
_RUNTIME_CALLS = frozenset({"program_id", "num_programs", "load"})
_DOTS = frozenset({"dot", "dot_scaled"})
_OPERANDS = frozenset({"input", "other", "a", "b", "lhs", "rhs"})  # tl.dot's / dot_scaled's operand keywords


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
        self.aliases = _aliases(tree)
        self.functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        self.where = {name: (path, line) for name, path, line in bundle.functions}

    def facts(self) -> KernelFacts:
        loops = [loop for fn in self.functions.values() for loop in self._loops(fn)]
        kernel = self.functions.get(self.bundle.kernel)
        return KernelFacts(tuple(loops), self._always_dot(kernel, set()) if kernel is not None else None)

    # ----------------------------------------------------------------- names
    def _triton(self, func: ast.expr, names: frozenset[str]) -> bool:
        """``func`` is ``triton.language.<one of names>`` in the bundle's spelling."""
        dotted = _dotted(func, self.aliases)
        if dotted is None or "." not in dotted:
            return False
        module, name = dotted.rsplit(".", 1)
        return name in names and (module == "triton.language" or module.endswith(".language"))

    def _calls(self, node: ast.AST, names: frozenset[str]):
        return [c for c in ast.walk(node) if isinstance(c, ast.Call) and self._triton(c.func, names)]

    def _helper(self, call: ast.Call) -> ast.FunctionDef | None:
        return self.functions.get(call.func.id) if isinstance(call.func, ast.Name) else None

    def _place(self, fn: ast.FunctionDef, node: ast.AST) -> Place:
        path, line = self.where.get(fn.name, (None, None))
        return Place(fn.name, path, None if line is None else line + node.lineno - fn.lineno)

    # ----------------------------------------------------------------- dots
    def _has_dot(self, node: ast.AST, seen: frozenset[str] = frozenset()) -> bool:
        if self._calls(node, _DOTS) or any(isinstance(b, ast.BinOp) and isinstance(b.op, ast.MatMult)
                                           for b in ast.walk(node)):
            return True
        for call in (c for c in ast.walk(node) if isinstance(c, ast.Call)):
            helper = self._helper(call)
            if helper is not None and helper.name not in seen and self._has_dot(helper, seen | {helper.name}):
                return True
        return False

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
        params = [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]
        constexpr = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs
                     if a.annotation is not None and "constexpr" in ast.unparse(a.annotation)}
        assigned = _assignments(fn)
        # A helper's parameters are whatever its caller passes: runtime values, possibly tensors.
        seeds = {p: ({p} if kernel else {DYNAMIC}) for p in params if p not in constexpr}
        sources = _closure(assigned, seeds, lambda e: {DYNAMIC} if self._calls(e, _RUNTIME_CALLS) else set())
        tensors = set(_closure(assigned, {} if kernel else {p: {p} for p in params},
                               lambda e: {"t"} if self._calls(e, _TENSOR_MAKERS) or _broadcasts(e) else set()))
        out = []
        for loop in (n for n in ast.walk(fn) if isinstance(n, ast.For)):
            bounds = self._scf_for(loop)
            if bounds is None or not self._innermost(loop) or not self._load_feeds_dot(loop, tensors):
                continue
            read = set().union(*(_reads(b, sources) for b in bounds)) if bounds else set()
            out.append(PipelinedLoop(self._place(fn, loop), tuple(sorted(read - {DYNAMIC})), DYNAMIC in read))
        return out

    def _scf_for(self, loop: ast.For) -> list[ast.expr] | None:
        """The bounds of a loop that becomes an scf.for at the config's stage count; else None."""
        it = loop.iter
        if not isinstance(it, ast.Call):
            return None
        builtin = isinstance(it.func, ast.Name) and it.func.id == "range" and "range" not in self.aliases
        if not (builtin or self._triton(it.func, frozenset({"range"}))):
            return None  # static_range (unrolled), a Python iterable, ...
        if any(k.arg in ("num_stages", "warp_specialize") for k in it.keywords):
            return None  # the loop's own stage count (or a warp-specialized schedule) wins
        return list(it.args) + [k.value for k in it.keywords if k.arg in (None, "arg1", "arg2", "step")]

    def _innermost(self, loop: ast.For) -> bool:
        for node in ast.walk(ast.Module(body=loop.body, type_ignores=[])):
            if isinstance(node, ast.While) or (isinstance(node, ast.For) and self._scf_for(node) is not None):
                return False
            if isinstance(node, ast.Call):
                helper = self._helper(node)
                if helper is not None and any(isinstance(n, (ast.For, ast.While)) for n in ast.walk(helper)):
                    return False
        return True

    def _load_feeds_dot(self, loop: ast.For, tensors: set[str]) -> bool:
        body = ast.Module(body=loop.body, type_ignores=[])
        assigned = _assignments(body)
        variant = set(_targets(loop.target)) | set(assigned)

        def is_load(call: ast.Call) -> bool:
            helper = self._helper(call)
            if not (self._triton(call.func, frozenset({"load"}))
                    or (helper is not None and self._calls(helper, frozenset({"load"})))):
                return False
            address = list(call.args) + [k.value for k in call.keywords]
            names = {n.id for a in address for n in ast.walk(a) if isinstance(n, ast.Name)}
            tensor = any(names & tensors or self._calls(a, _TENSOR_MAKERS) or _broadcasts(a) for a in address)
            return tensor and bool(names & variant)  # a tensor whose address moves with the loop

        def has_load(expr: ast.AST) -> set[str]:
            return {"load"} if any(is_load(c) for c in ast.walk(expr) if isinstance(c, ast.Call)) else set()

        loaded = {n for n, s in _closure(assigned, {}, has_load).items() if s}
        for node in ast.walk(body):
            operands: list[ast.AST] = []
            helper = self._helper(node) if isinstance(node, ast.Call) else None
            if isinstance(node, ast.Call) and self._triton(node.func, _DOTS):
                operands = node.args[:2] + [k.value for k in node.keywords if k.arg in _OPERANDS]
            elif helper is not None and self._has_dot(helper):
                # Only what reaches the dot's two operands goes through shared memory; an
                # accumulator or an addend (``matmul(A=h, B=W, C=x)``) does not.
                operands = _bound_to(helper, node, self._dot_operand_params(helper))
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
                operands = [node.left, node.right]
            for op in operands:
                if has_load(op) or any(isinstance(n, ast.Name) and n.id in loaded for n in ast.walk(op)):
                    return True
        return False


    def _dot_operand_params(self, fn: ast.FunctionDef, seen: frozenset[str] = frozenset()) -> set[str]:
        """The parameters of helper ``fn`` that reach the two operands of a dot in it (not its
        accumulator), through local assignments and further helpers."""
        params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
        reach = _closure(_assignments(fn), {p: {p} for p in params}, lambda e: set())
        found: set[str] = set()
        for node in ast.walk(fn):
            if not isinstance(node, (ast.Call, ast.BinOp)):
                continue
            operands: list[ast.AST] = []
            helper = self._helper(node) if isinstance(node, ast.Call) else None
            if isinstance(node, ast.Call) and self._triton(node.func, _DOTS):
                operands = node.args[:2] + [k.value for k in node.keywords if k.arg in _OPERANDS]
            elif helper is not None and helper.name not in seen and helper is not fn:
                operands = _bound_to(helper, node, self._dot_operand_params(helper, seen | {fn.name}))
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
                operands = [node.left, node.right]
            for op in operands:
                for n in ast.walk(op):
                    if isinstance(n, ast.Name):
                        found |= {p for p in params if p == n.id or p in reach.get(n.id, set())}
        return found


def _bound_to(fn: ast.FunctionDef, call: ast.Call, names: set[str]) -> list[ast.AST]:
    """The arguments of ``call`` that bind ``fn``'s parameters in ``names``."""
    positional = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    out = [a for i, a in enumerate(call.args) if i < len(positional) and positional[i] in names]
    return out + [k.value for k in call.keywords if k.arg in names]


# --------------------------------------------------------------------------- plain ast helpers
def _aliases(tree: ast.Module) -> dict[str, str]:
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for a in node.names:
                out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                out[a.asname or a.name] = f"{node.module}.{a.name}"
    out.setdefault("tl", "triton.language")  # the loader's spelling when a re-export is not followed
    return out


def _dotted(expr: ast.expr, aliases: dict[str, str]) -> str | None:
    if isinstance(expr, ast.Name):
        return aliases.get(expr.id, expr.id)
    if isinstance(expr, ast.Attribute):
        base = _dotted(expr.value, aliases)
        return None if base is None else f"{base}.{expr.attr}"
    return None


def _targets(target: ast.expr) -> list[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


def _assignments(node: ast.AST) -> dict[str, list[ast.expr]]:
    """Every name assigned anywhere under ``node`` -> the expressions it is assigned from
    (flow-insensitive: what a name may hold somewhere, which only widens what it derives from)."""
    out: dict[str, list[ast.expr]] = {}
    for n in ast.walk(node):
        pairs = []
        if isinstance(n, ast.Assign):
            pairs = [(t, n.value) for t in n.targets]
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign)) and n.value is not None:
            pairs = [(n.target, n.value)] + ([(n.target, n.target)] if isinstance(n, ast.AugAssign) else [])
        elif isinstance(n, ast.For):
            pairs = [(n.target, n.iter)]
        for target, value in pairs:
            for name in _targets(target):
                out.setdefault(name, []).append(value)
    return out


def _closure(assigned, seeds: dict[str, set[str]], own) -> dict[str, set[str]]:
    """Per name, the sources it derives from: ``seeds`` plus ``own(expr)`` of each expression
    assigned to it, carried through the names those expressions read, to a fixed point."""
    out = {k: set(v) for k, v in seeds.items()}
    changed = True
    while changed:
        changed = False
        for name, values in assigned.items():
            got = set(out.get(name, ()))
            for v in values:
                got |= own(v) | _reads(v, out)
            if got != out.get(name, set()):
                out[name] = got
                changed = True
    return out


def _reads(expr: ast.AST, sources: dict[str, set[str]]) -> set[str]:
    return set().union(*(sources.get(n.id, set()) for n in ast.walk(expr) if isinstance(n, ast.Name)))


def _broadcasts(expr: ast.AST) -> bool:
    """``x[:, None]``: only a tensor is indexed with None."""
    return any(isinstance(n, ast.Subscript) and any(isinstance(c, ast.Constant) and c.value is None
                                                    for c in ast.walk(n.slice)) for n in ast.walk(expr))


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
