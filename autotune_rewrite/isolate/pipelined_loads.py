"""Does Triton's software pipeliner multi-buffer a load of this loop through shared memory?

Triton 3.6's rule (``loadOpsToIndirectionLevel`` in ``Pipeliner/AssignLatencies.cpp``, the same
from 3.3 on): from each ``tt.dot`` at the top level of the loop body (helpers are inlined; a dot
under a runtime ``if`` sits inside an ``scf.if`` and is no root), walk back through the ops that
define its two operands, then the operands of every op reached, as long as they lie in the same
iteration of the body: every load met is pipelined, one buffer per stage. The walk skips a dot's
accumulator, and it stops at values from before the loop and at values carried from the previous
iteration (the body's block arguments have no defining op). What that means for a kernel's
source, each case measured with ``triton.compile`` at ``num_stages`` 1 to 4 on sm_80, sm_90 and
sm_120 (``benchmarks/pipelined_loads.py``, ``benchmarks/results/pipelined_loads/pipelined_loads.json``):

- arithmetic does not stop the walk: ``x * 2``, ``tl.exp(x)``, ``.to()``, ``tl.reshape`` between
  the load and the operand still give one SMEM buffer per stage;
- a recurrent state computed from this iteration's load and only used as an operand by the next
  iteration's dot (an RNN or GRU cell: ``h = act(dot(h, W) + x)``) is carried: nothing is pipelined;
- so is a load assigned after the dot that reads it (a hand-written prefetch);
- ``tl.dot(a, b) + x`` is folded into ``tl.dot(a, b, x)`` before pipelining (the dot+add combine
  pattern, for a dot without accumulator): ``x`` is an accumulator, not an operand;
- a load under a runtime ``if`` is not pipelined (only the body's top-level loads are lowered);
- a transposition (``tl.trans``, ``.T``, ``tl.permute``) on the way to a dot's *first* operand is
  pipelined in registers on sm_80 and sm_120 (SMEM flat) and through SMEM on sm_90: not counted,
  as every doubt here leans towards reporting nothing; on the second operand it counts.

A compile-time ``if`` (on constexprs, shapes, dtypes, ``x is None``, a helper's mode string) is
resolved by the frontend, so each walk takes one branch of it and the loop pipelines when some
combination of branches does (a config compiles one; merging them would mix cute-kernels'
``tl.sum(A.T * B) + C`` branch for one-row tiles with the ``tl.dot`` of the others).

Besides, only a load of a tensor whose address moves with the loop is counted (a loop-invariant
load is hoisted out of it), and the caller checks the loop itself (an innermost ``scf.for`` at the
config's stage count). What cannot be seen here is the pipeliner's width condition (at least 4
bytes per copy), which is what a spec without the runtime's divisibility breaks.
"""

from __future__ import annotations

import ast

from autotune_rewrite.isolate.kernel_ast import (
    TENSOR_MAKERS,
    assignments,
    broadcasts,
    closure,
    constexpr_params,
    is_triton,
    params,
    targets,
)
from autotune_rewrite.isolate.walk_frames import (
    LOAD, NONE, STATIC_ATTRS, UNKNOWN, Flags, Frame, Memo, flat, fold, is_static, merge, transposed, union,
)

_TRANSPOSES = frozenset({"trans", "permute"})
_MAX_WALKS = 64


class _Undecided(Exception):
    """A compile-time ``if`` whose branch this walk has not chosen yet."""

    def __init__(self, node: ast.If):
        super().__init__()
        self.node = node


def through_shared_memory(loop: ast.For, fn: ast.FunctionDef, tensors: set[str], kernel: str,
                          functions: dict[str, ast.FunctionDef], spelled: dict[str, str]) -> bool:
    """Whether the pipeliner multi-buffers a load of ``loop`` (a loop of ``fn``) through shared
    memory. ``tensors``: the names of ``fn`` that may hold a tensor; ``kernel``: the bundle's
    kernel; ``functions``: its ``@triton.jit`` functions (helpers are inlined); ``spelled``: its
    import aliases."""
    body = ast.Module(body=loop.body, type_ignores=[])
    assigned = assignments(body)
    # What changes from one iteration to the next: the loop variable, what is computed from its own
    # previous value (``p += BK``, ``p = tl.advance(p, ...)``), and what is computed from those.
    seeds = {n: {"m"} for n in targets(loop.target)}
    seeds.update({n: {"m"} for n, values in assigned.items() if any(n in _names_read(v) for v in values)})
    moving = {n for n, s in closure(assigned, seeds, lambda e: set()).items() if s}
    # One walk per combination of the compile-time ``if`` branches it meets (a config compiles one
    # branch of each, and a helper's branch decides both what it returns and whether it has a dot):
    # merging them would mix the addend of the no-dot branch with the dot of the other.
    pending: list[dict | None] = [{}]
    memo = Memo(spelled)
    static = _static_params(fn, kernel, functions, memo)
    walks = 0
    while pending:
        decisions = pending.pop()
        walks += 1
        if walks > _MAX_WALKS:
            pending, decisions = [], None  # too many combinations: merge every branch instead
        walk = _Iteration(functions, spelled, decisions, memo)
        try:
            walk.block(loop.body, memo.frame(fn, {}, moving, tensors, static), root=True, returns=[])
        except _Undecided as fork:
            pending += [{**decisions, fork.node: False}, {**decisions, fork.node: True}]
            continue
        if walk.pipelined:
            return True
    return False


def _names_read(expr: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}


# --------------------------------------------------------------------------- the walk
class _Iteration:
    """One iteration of the loop body, statement by statement, helpers inlined."""

    def __init__(self, functions: dict[str, ast.FunctionDef], spelled: dict[str, str], decisions: dict | None,
                 memo: Memo):
        self.memo = memo
        self.functions = functions
        self.spelled = spelled
        self.decisions = decisions  # compile-time if -> the branch this walk takes; None: merge both
        self.pipelined = False
        self.inlining: list[str] = []

    def _triton(self, func: ast.expr, names: frozenset[str]) -> bool:
        return is_triton(func, names, self.spelled)

    # ----------------------------------------------------------------- statements
    def block(self, body: list[ast.stmt], frame: Frame, root: bool, returns: list) -> None:
        for stmt in body:
            self.statement(stmt, frame, root, returns)

    def statement(self, stmt: ast.stmt, frame: Frame, root: bool, returns: list) -> None:
        if isinstance(stmt, ast.Assign):
            value = self.expr(stmt.value, frame, root)
            for target in stmt.targets:
                self._bind(target, value, frame)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self._bind(stmt.target, self.expr(stmt.value, frame, root), frame)
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            # ``acc += tl.dot(a, b)`` is ``acc = acc + tl.dot(a, b)``: the dot+add fold applies.
            current = ast.Name(id=stmt.target.id, ctx=ast.Load())
            self._bind(stmt.target, self.expr(ast.BinOp(left=current, op=stmt.op, right=stmt.value), frame, root),
                       frame)
        elif isinstance(stmt, ast.If):
            static = is_static(stmt.test, frame.static, frame.local)
            if static:
                taken = fold(stmt.test, frame)
                if taken is UNKNOWN and self.decisions is not None:
                    if stmt not in self.decisions:
                        raise _Undecided(stmt)
                    taken = self.decisions[stmt]
                if taken is not UNKNOWN:
                    self.block(stmt.body if taken else stmt.orelse, frame, root, returns)
                    return
            inner = root and static  # a dot under a runtime if is inside an scf.if: no root
            before = dict(frame.state)
            self.block(stmt.body, frame, inner, returns)
            taken, frame.state = frame.state, dict(before)
            self.block(stmt.orelse, frame, inner, returns)
            frame.state = {n: merge(taken.get(n, NONE), frame.state.get(n, NONE))
                           for n in set(taken) | set(frame.state)}
        elif isinstance(stmt, (ast.For, ast.While)):
            self.block(stmt.body, frame, False, returns)  # a helper's own loop: its dots are not this loop's
        elif isinstance(stmt, ast.With):
            self.block(stmt.body, frame, root, returns)
        elif isinstance(stmt, ast.Return) and stmt.value is not None:
            returns.append(self.expr(stmt.value, frame, root))
        elif isinstance(stmt, ast.Expr):
            self.expr(stmt.value, frame, root)

    def _bind(self, target: ast.expr, value, frame: Frame) -> None:
        if isinstance(target, ast.Name):
            frame.state[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            pairwise = isinstance(value, tuple) and len(value) == len(target.elts) \
                and not any(isinstance(e, ast.Starred) for e in target.elts)
            for i, element in enumerate(target.elts):
                self._bind(element, value[i] if pairwise else flat(value), frame)
        elif isinstance(target, ast.Starred):
            self._bind(target.value, flat(value), frame)

    # ----------------------------------------------------------------- expressions
    def expr(self, e: ast.AST, frame: Frame, root: bool):
        if isinstance(e, ast.Name):
            return frame.state.get(e.id, NONE)
        if isinstance(e, ast.Constant):
            return NONE
        if isinstance(e, (ast.Tuple, ast.List)):
            return tuple(self.expr(x, frame, root) for x in e.elts)
        if isinstance(e, ast.Attribute):
            if e.attr in STATIC_ATTRS:
                return NONE
            base = self.expr(e.value, frame, root)
            return transposed(base) if e.attr == "T" else flat(base)
        if isinstance(e, ast.Subscript):
            base = self.expr(e.value, frame, root)
            index = e.slice.value if isinstance(e.slice, ast.Constant) else None
            if isinstance(base, tuple) and isinstance(index, int) and -len(base) <= index < len(base):
                return base[index]
            return union(base, self.expr(e.slice, frame, root))
        if isinstance(e, ast.Call):
            return self._call(e, frame, root)
        if isinstance(e, ast.BinOp):
            if isinstance(e.op, ast.MatMult):
                return self._dot(e.left, e.right, frame, root)
            if isinstance(e.op, ast.Add):
                for dot, addend in ((e.left, e.right), (e.right, e.left)):
                    if self._dot_without_accumulator(dot):
                        self.expr(addend, frame, root)  # folded into the dot's accumulator
                        return self.expr(dot, frame, root)
        # Arithmetic, comparisons, selects: the walk goes through every operand.
        return union(*(self.expr(c, frame, root) for c in ast.iter_child_nodes(e) if isinstance(c, ast.expr)))

    def _call(self, call: ast.Call, frame: Frame, root: bool):
        args = list(call.args) + [k.value for k in call.keywords]
        if self._triton(call.func, frozenset({"load"})):
            return frozenset({LOAD}) if root and self._moving_load(args, frame) else NONE
        if self._triton(call.func, frozenset({"dot"})):
            a, b, acc = _dot_arguments(call)
            if acc is not None:
                self.expr(acc, frame, root)
            return self._dot(a, b, frame, root)
        if self._triton(call.func, frozenset({"dot_scaled"})):
            # lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, acc: all but acc are operands.
            lhs = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "lhs"), None)
            rest = [a for i, a in enumerate(call.args) if i not in (0, 6)]
            rest += [k.value for k in call.keywords if k.arg not in ("lhs", "acc")]
            return self._dot(lhs, ast.Tuple(elts=rest, ctx=ast.Load()), frame, root)
        if self._triton(call.func, _TRANSPOSES):
            return transposed(union(*(self.expr(a, frame, root) for a in args)))
        helper = self.functions.get(call.func.id) if isinstance(call.func, ast.Name) else None
        if helper is not None and helper.name not in self.inlining:
            return self._inline(helper, call, frame, root)
        values = [self.expr(a, frame, root) for a in args]
        if isinstance(call.func, ast.Attribute):  # a method of a value: x.to(...), x.reshape(...)
            receiver = self.expr(call.func.value, frame, root)
            if call.func.attr in _TRANSPOSES:
                return transposed(union(receiver, *values))
            values.append(receiver)
        return union(*values)

    def _dot(self, a: ast.expr | None, b: ast.expr | None, frame: Frame, root: bool) -> Flags:
        first = flat(self.expr(a, frame, root)) if a is not None else NONE
        second = flat(self.expr(b, frame, root)) if b is not None else NONE
        if root and (LOAD in first or second):
            self.pipelined = True
        return first | second

    def _dot_without_accumulator(self, e: ast.expr) -> bool:
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.MatMult):
            return True
        if not (isinstance(e, ast.Call) and self._triton(e.func, frozenset({"dot"}))):
            return False
        acc = _dot_arguments(e)[2]
        return acc is None or (isinstance(acc, ast.Constant) and acc.value is None)

    def _moving_load(self, address: list[ast.expr], frame: Frame) -> bool:
        """A load of a tensor whose address moves with the loop (an invariant one is hoisted)."""
        names = {n.id for a in address for n in ast.walk(a) if isinstance(n, ast.Name)}
        makers = any(isinstance(c, ast.Call) and self._triton(c.func, TENSOR_MAKERS) for a in address for c in ast.walk(a))
        tensor = bool(names & frame.tensors) or makers or any(broadcasts(a) for a in address)
        return tensor and bool(names & frame.moving)

    def _inline(self, helper: ast.FunctionDef, call: ast.Call, frame: Frame, root: bool):
        bound = _bound(helper, call)
        state = {p: self.expr(v, frame, root) for p, v in bound.items()}
        moving = {p for p, v in bound.items() if _names_read(v) & frame.moving}
        moving = self.memo.derived(helper, frozenset(moving))
        # A helper's parameters may be tensors; a parameter left at its default is a constant.
        names = params(helper)
        tensors = self.memo.derived(helper, frozenset(names), makers=True)
        static = constexpr_params(helper) | {p for p in names if p not in bound}
        static |= {p for p, v in bound.items() if is_static(v, frame.static, frame.local)}
        consts, not_none = _defaults(helper), set()
        for p, v in bound.items():
            consts.pop(p, None)
            if isinstance(v, ast.Constant):
                consts[p] = v.value
            elif isinstance(v, ast.Name) and v.id in frame.consts:
                consts[p] = frame.consts[v.id]
            elif isinstance(v, (ast.Call, ast.BinOp, ast.UnaryOp, ast.Subscript, ast.Attribute, ast.Compare)) \
                    or (isinstance(v, ast.Name) and v.id in frame.not_none):
                not_none.add(p)
        inner = self.memo.frame(helper, state, moving, tensors, static, consts, not_none)
        returns: list = []
        self.inlining.append(helper.name)
        try:
            self.block(helper.body, inner, root, returns)
        finally:
            self.inlining.pop()
        out = returns[0] if returns else NONE
        for more in returns[1:]:
            out = merge(out, more)
        return out


def _bound(fn: ast.FunctionDef, call: ast.Call) -> dict[str, ast.expr]:
    """``fn``'s parameters -> the arguments ``call`` binds them to."""
    positional = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    bound: dict[str, ast.expr] = {}
    for i, a in enumerate(call.args):
        if isinstance(a, ast.Starred):
            break  # positions after ``*args`` are not known
        if i < len(positional):
            bound[positional[i]] = a
    bound.update({k.arg: k.value for k in call.keywords if k.arg is not None})
    return bound


def _static_params(fn: ast.FunctionDef, kernel: str, functions: dict[str, ast.FunctionDef], memo: Memo,
                   seen: frozenset[str] = frozenset()) -> set[str]:
    """The parameters of ``fn`` known at compile time: the kernel's ``tl.constexpr`` ones; for a
    helper, also those every call of it in the bundle passes a compile-time value (``no_k_mask=
    NO_K_MASK``), or none (a default)."""
    own = constexpr_params(fn)
    if fn.name == kernel or fn.name in seen:
        return own
    static = set(params(fn))
    for caller in functions.values():
        for call in (c for c in ast.walk(caller) if isinstance(c, ast.Call)):
            if not (isinstance(call.func, ast.Name) and call.func.id == fn.name):
                continue
            known = memo.static(caller, frozenset(_static_params(caller, kernel, functions, memo, seen | {fn.name})))
            for p, arg in _bound(fn, call).items():
                if not is_static(arg, known, memo.local(caller)):
                    static.discard(p)
    return own | static


def _defaults(fn: ast.FunctionDef) -> dict:
    """The literal defaults of ``fn``'s parameters."""
    positional = fn.args.posonlyargs + fn.args.args
    pairs = list(zip(positional[len(positional) - len(fn.args.defaults):], fn.args.defaults))
    pairs += [(a, d) for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults) if d is not None]
    return {a.arg: d.value for a, d in pairs if isinstance(d, ast.Constant)}


def _dot_arguments(call: ast.Call) -> tuple[ast.expr | None, ast.expr | None, ast.expr | None]:
    """``tl.dot(input, other, acc=None, ...)``'s two operands and accumulator as written."""
    keywords = {k.arg: k.value for k in call.keywords if k.arg is not None}

    def pick(index: int, names: tuple[str, ...]) -> ast.expr | None:
        if len(call.args) > index:
            return call.args[index]
        return next((keywords[n] for n in names if n in keywords), None)

    return pick(0, ("input", "a", "lhs")), pick(1, ("other", "b", "rhs")), pick(2, ("acc", "c"))


__all__ = ["through_shared_memory"]
