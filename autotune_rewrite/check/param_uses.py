"""How a kernel uses a constexpr parameter, read from its body: does the value shape the code?

A constexpr that reaches a tile shape (``tl.arange(0, D)``, ``tl.zeros((BLOCK, D))``, a block
pointer's ``block_shape``, ``tl.static_range(N)``), a branch (``if HAS_BIAS:``), a
``static_assert``, or a call we cannot see into (a ``@triton.jit`` helper) decides what is
compiled: its value must be stated. One that only enters arithmetic (a stride, a loop bound, a
mask's comparison) does not change any tile shape, so an assumed value gives the same shared
memory as the true one, provided the assumed value does not remove work: ``check`` assumes a
large one (see ``spec_inference.ARITHMETIC_CONSTEXPR``), which keeps every loop long enough to
pipeline. Read with the standard ``ast``, names followed through local assignments.
"""

from __future__ import annotations

import ast
import re

from autotune_rewrite.check.pointer_params import kernel_def

_ARITHMETIC_CALLS = {"range", "cdiv", "multiple_of", "max_contiguous", "minimum", "maximum", "where", "load",
                     "store", "program_id", "num_programs", "abs", "min", "max",
                     # elementwise math: its arguments are data, never a shape
                     "clamp", "exp", "exp2", "log", "log2", "sqrt", "sqrt_rn", "rsqrt", "fma", "erf", "sigmoid",
                     "cos", "sin", "div_rn", "fdiv", "floor", "ceil", "umulhi", "atomic_add", "atomic_max",
                     "atomic_min"}
# Keyword arguments of Triton calls that take a bool: a constexpr passed only there is a flag.
_FLAG_KEYWORDS = {"allow_tf32", "fast_accum", "use_fast_accum", "sanitize_overflow", "propagate_nan"}


_DATA_CALLS = {"load", "atomic_add", "atomic_max", "atomic_min", "atomic_cas", "atomic_xchg", "atomic_and",
               "atomic_or", "atomic_xor", "program_id", "num_programs"}


def _free_names(expr: ast.AST) -> set[str]:
    """Names an expression's value depends on, not counting addresses it loads from: what
    ``tl.load(A + i * stride)`` returns is data, whatever ``stride`` was."""
    out: set[str] = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Call) and _call_name(node) in _DATA_CALLS:
            out.add("<runtime>")
            continue
        if isinstance(node, ast.Name):
            out.add(node.id)
        stack.extend(ast.iter_child_nodes(node))
    return out


def _call_name(node: ast.Call) -> str | None:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)


def arithmetic_only(kernel_source: str | None, kernel: str, names: set[str]) -> set[str]:
    """Those of ``names`` (constexpr parameters) that the kernel uses only in arithmetic."""
    fn = kernel_def(kernel_source, kernel)
    if fn is None or not names:
        return set()
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]
    constexprs = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs
                  if a.annotation is not None and "constexpr" in ast.unparse(a.annotation)}
    parents = _parents(fn)
    # names derived from each parameter through local assignments
    derived: dict[str, set[str]] = {n: {n} for n in names}
    assigns = [n for n in ast.walk(fn) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))]
    static = set(constexprs)  # names whose value is known at compile time
    data: set[str] = set()  # locals holding loaded data: a constexpr mixed into them shapes nothing
    for _ in range(4):
        for a in assigns:
            value = a.value
            if value is None:
                continue
            used = _free_names(value)
            if "<runtime>" in used or used & data:
                data |= {x.id for t in (a.targets if isinstance(a, ast.Assign) else [a.target])
                         for x in ast.walk(t) if isinstance(x, ast.Name)}
            for t in (a.targets if isinstance(a, ast.Assign) else [a.target]):
                if isinstance(t, ast.Name):
                    if used <= static | {"tl", "triton", "True", "False", "None"} and t.id not in params:
                        static.add(t.id)
            targets = a.targets if isinstance(a, ast.Assign) else [a.target]
            for t in targets:
                if isinstance(a, ast.AugAssign) and isinstance(t, ast.Name):
                    used = used | {t.id}
                for tn in (x.id for x in ast.walk(t) if isinstance(x, ast.Name)):
                    for n in names:
                        if used & derived[n] and tn not in data:
                            derived[n].add(tn)
    out = set()
    for n in names:
        if all(_arithmetic_use(occ, parents, fn, static) for occ in ast.walk(fn)
               if isinstance(occ, ast.Name) and isinstance(occ.ctx, ast.Load) and occ.id in derived[n]):
            out.add(n)
    return out


def _arithmetic_use(node: ast.AST, parents: dict[int, ast.AST], fn: ast.FunctionDef, static: set[str]) -> bool:
    child, parent = node, parents.get(id(node))
    while parent is not None and parent is not fn:
        if isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)) and child is parent.test:
            # A branch on compile-time values decides what is compiled; one on runtime values
            # (``if pid * BLOCK >= N: return``) is arithmetic.
            return not (_free_names(parent.test) - {"tl", "triton", "True", "False", "None"} <= static)
        if isinstance(parent, ast.Call):
            func = parent.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if child is not func and name not in _ARITHMETIC_CALLS:
                return False  # a shape, a cast, a helper we do not see into
        if isinstance(parent, ast.Subscript) and child is parent.slice:
            return False  # ``x[:, :D]``-like indexing shapes a block
        if isinstance(parent, ast.stmt):
            return True
        child, parent = parent, parents.get(id(parent))
    return True




def flags_of(kernel_source: str | None, kernel: str, names: set[str]) -> set[str]:
    """Those of ``names`` that the kernel only tests (``if HAS_BIAS:``, ``if not X and Y:``,
    ``tl.static_assert(not (X and Y))``) or passes as a bool option (``tl.dot(..., allow_tf32=X)``): flags, whose two values are two
    kernels."""

    def flag_use(occ: ast.Name, parents: dict[int, ast.AST]) -> bool:
        child, parent = occ, parents.get(id(occ))
        while isinstance(parent, (ast.BoolOp, ast.UnaryOp)) and (
                not isinstance(parent, ast.UnaryOp) or isinstance(parent.op, ast.Not)):
            child, parent = parent, parents.get(id(parent))
        tested = isinstance(parent, (ast.If, ast.IfExp, ast.While)) and child is parent.test
        # ``tl.static_assert(not (A and B), ...)``: a rule between flags, tested at compile time
        asserted = isinstance(parent, ast.Call) and _call_name(parent) == "static_assert" and parent.args[:1] == [child]
        return tested or asserted or (isinstance(parent, ast.keyword) and parent.arg in _FLAG_KEYWORDS)

    return _used_only(kernel_source, kernel, names, flag_use)


def dtypes_of(kernel_source: str | None, kernel: str, names: set[str]) -> set[str]:
    """Those of ``names`` that the kernel only uses as a dtype (``dtype=ACC``, ``x.to(ACC)``, or
    chosen against a dtype: ``tl.float32 if allow_tf32 else ACC``)."""

    def dtype_use(occ: ast.Name, parents: dict[int, ast.AST]) -> bool:
        parent = parents.get(id(occ))
        if isinstance(parent, ast.IfExp) and occ is not parent.test:
            other = parent.orelse if occ is parent.body else parent.body
            return _is_dtype(other)
        return bool((isinstance(parent, ast.keyword) and parent.arg is not None and "dtype" in parent.arg) or (
            isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute)
            and parent.func.attr == "to" and parent.args and parent.args[0] is occ))

    return _used_only(kernel_source, kernel, names, dtype_use)


def _is_dtype(expr: ast.expr) -> bool:
    """``tl.float32``, ``tl.bfloat16``, ``torch.float16``...: a dtype spelled out."""
    return (isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id in ("tl", "torch")
            and re.fullmatch(r"u?int\d+|float\d+(\w*)?|bfloat16|f(p|loat)8\w*|bool|int1", expr.attr) is not None)


def _used_only(kernel_source: str | None, kernel: str, names: set[str], use) -> set[str]:
    """Those of ``names`` the kernel reads, every read satisfying ``use(name_node, parents)``."""
    fn = kernel_def(kernel_source, kernel)
    if fn is None:
        return set()
    parents = _parents(fn)
    found: dict[str, bool] = {}
    for occ in ast.walk(fn):
        if isinstance(occ, ast.Name) and isinstance(occ.ctx, ast.Load) and occ.id in names:
            found[occ.id] = found.get(occ.id, True) and use(occ, parents)
    return {n for n, ok in found.items() if ok}


def _parents(fn: ast.AST) -> dict[int, ast.AST]:
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(fn):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    return parents


__all__ = ["arithmetic_only", "dtypes_of", "flags_of"]
