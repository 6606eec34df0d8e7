"""How a kernel uses a constexpr parameter, read from its body: does the value shape the code?

A constexpr that reaches a tile shape (``tl.arange(0, D)``, ``tl.zeros((BLOCK, D))``, a block
pointer's ``block_shape``, ``tl.static_range(N)``), a branch (``if HAS_BIAS:``), a
``static_assert``, or a call we cannot see into (a ``@triton.jit`` helper) decides what is
compiled: its value must be stated. One that only enters arithmetic (a stride, a loop bound, a
mask's comparison) does not change any tile shape, so an assumed value gives the same shared
memory as the true one, provided the assumed value does not remove work: ``check`` assumes a
large one (see ``spec_draft.ASSUMED_INT``), which keeps every loop long enough to
pipeline. Read with the standard ``ast``, names followed through local assignments.
"""

from __future__ import annotations

import ast
import re

from autotune_rewrite.spec.pointer_params import kernel_def, module_functions

_ARITHMETIC_CALLS = {"range", "cdiv", "multiple_of", "max_contiguous", "minimum", "maximum", "where", "load",
                     "store", "program_id", "num_programs", "abs", "min", "max", "cast",
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


def arithmetic_only(kernel_source: str | None, kernel: str, names: set[str], depth: int = 0,
                    tests=None) -> set[str]:
    """Those of ``names`` (constexpr parameters) that the kernel uses only in arithmetic, itself
    or in the ``@triton.jit`` helpers of its module it passes them to (a few levels). With
    ``tests`` (a ``thresholds.LiteralTests``), a use it reads (a compile-time comparison of the
    name with a number literal) also counts, and is recorded there."""
    fn = kernel_def(kernel_source, kernel)
    if fn is None or not names:
        return set()
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]
    # In a helper, the caller's constexprs arrive as plain parameters: still compile-time values.
    constexprs = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs
                  if a.annotation is not None and "constexpr" in ast.unparse(a.annotation)} | (names if depth else set())
    helpers = set(module_functions(kernel_source)) - {kernel} if depth < 3 else set()

    def helper_arithmetic(call: ast.Call, arg: ast.AST) -> bool:
        return _lands_on(kernel_source, helpers, call, arg,
                         lambda name, param: param in arithmetic_only(kernel_source, name, {param}, depth + 1))
    parents = _parents(fn)
    # names derived from each parameter through local assignments
    derived: dict[str, set[str]] = {n: {n} for n in names}
    assigns = [n for n in ast.walk(fn) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))]
    static = set(constexprs)  # names whose value is known at compile time
    data: set[str] = set()  # locals holding loaded data: a constexpr mixed into them shapes nothing
    # Data first, to its fixpoint: ``ast.walk`` is breadth-first, so a local may be met before
    # the loaded value it is computed from (``a_scale = MAX / cur_max`` above ``cur_max = tl.max(a)``).
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
    for _ in range(4):
        for a in assigns:
            if a.value is None or _divisibility(a.value):
                continue  # ``even_k = K % BLOCK_K == 0``: decided by the value assumed for K, as heuristics are
            used = _free_names(a.value)
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
        def use(occ: ast.Name) -> bool:
            if tests is not None and occ.id == n and (test := tests.read(occ, parents)) is not None:
                tests.found.setdefault(n, set()).add(test)
                return True
            return _arithmetic_use(occ, parents, fn, static, helper_arithmetic)

        if all([use(occ) for occ in ast.walk(fn)
                if isinstance(occ, ast.Name) and isinstance(occ.ctx, ast.Load) and occ.id in derived[n]]):
            out.add(n)
    return out


def _arithmetic_use(node: ast.AST, parents: dict[int, ast.AST], fn: ast.FunctionDef, static: set[str],
                    helper_arithmetic) -> bool:
    child, parent = node, parents.get(id(node))
    if isinstance(parent, ast.BinOp) and _divisibility(parents.get(id(parent))):
        return True  # ``if K % BLOCK_K == 0:``: a large value divisible by every tile decides it
    while parent is not None and parent is not fn:
        if isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)) and child is parent.test:
            # A branch on compile-time values decides what is compiled; one on runtime values
            # (``if pid * BLOCK >= N: return``) is arithmetic.
            return not (_free_names(parent.test) - {"tl", "triton", "True", "False", "None"} <= static)
        if isinstance(parent, ast.Call):
            func = parent.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if child is not func and name not in _ARITHMETIC_CALLS:
                if _runtime_extent(parent, child, name):
                    return True
                return helper_arithmetic(parent, child)  # else a shape, a cast, a call we do not see into
        if isinstance(parent, ast.Subscript) and child is parent.slice:
            return False  # ``x[:, :D]``-like indexing shapes a block
        if isinstance(parent, ast.stmt):
            return True
        child, parent = parent, parents.get(id(parent))
    return True


def flags_of(kernel_source: str | None, kernel: str, names: set[str], depth: int = 0) -> set[str]:
    """Those of ``names`` that the kernel only tests (``if HAS_BIAS:``, ``if not X and Y:``,
    ``tl.static_assert(not (X and Y))``), passes as a bool option (``tl.dot(..., allow_tf32=X)``)
    or hands to a ``@triton.jit`` helper of its module that only tests it (a few levels): flags,
    whose two values are two kernels."""
    helpers = set(module_functions(kernel_source)) - {kernel} if depth < 3 else set()

    def helper_flag(call: ast.Call, arg: ast.AST) -> bool:
        return _lands_on(kernel_source, helpers, call, arg,
                         lambda name, param: param in flags_of(kernel_source, name, {param}, depth + 1))

    def flag_use(occ: ast.Name, parents: dict[int, ast.AST]) -> bool:
        child, parent = occ, parents.get(id(occ))
        while isinstance(parent, (ast.BoolOp, ast.UnaryOp)) and (
                not isinstance(parent, ast.UnaryOp) or isinstance(parent.op, ast.Not)):
            child, parent = parent, parents.get(id(parent))
        tested = isinstance(parent, (ast.If, ast.IfExp, ast.While)) and child is parent.test
        # ``tl.static_assert(not (A and B), ...)``: a rule between flags, tested at compile time
        asserted = isinstance(parent, ast.Call) and _call_name(parent) == "static_assert" and parent.args[:1] == [child]
        handed = isinstance(parent, ast.Call) and child is occ and helper_flag(parent, occ)
        return tested or asserted or handed or (isinstance(parent, ast.keyword) and parent.arg in _FLAG_KEYWORDS)

    return used_only(kernel_source, kernel, names, flag_use)


_RULE_NODES = (ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.Name, ast.Load, ast.Constant)


def flag_rules(kernel_source: str | None, kernel: str, flags: set[str]) -> tuple[str, ...]:
    """The kernel's ``tl.static_assert`` conditions over flags alone (``not (FUSE and HAS_B)``),
    as source text: the flag values the kernel itself rules out."""
    fn = kernel_def(kernel_source, kernel)
    if fn is None or not flags:
        return ()
    out = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and _call_name(node) == "static_assert" and node.args:
            test = ast.Expression(node.args[0])
            names = {n.id for n in ast.walk(test) if isinstance(n, ast.Name)}
            if names and names <= flags and all(isinstance(n, _RULE_NODES) for n in ast.walk(test)):
                out.append(ast.unparse(node.args[0]))
    return tuple(out)


def required_values(kernel_source: str | None, kernel: str, names: set[str]) -> dict[str, tuple[tuple, str]]:
    """Those of ``names`` that a ``tl.static_assert`` at the kernel's top level pins to a few
    literals (``tl.static_assert(D == 64 or D == 128)``): name -> (values, the condition's text).
    Any other value fails to compile, so these are the only specs there can be."""
    fn = kernel_def(kernel_source, kernel)
    if fn is None or not names:
        return {}
    out: dict[str, tuple[tuple, str]] = {}
    for stmt in fn.body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if not (isinstance(call, ast.Call) and _call_name(call) == "static_assert" and call.args):
            continue
        test = call.args[0]
        terms = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) else [test]
        found = [_equals_literal(t) for t in terms]
        subjects = {f[0] for f in found if f is not None}
        if None in found or len(subjects) != 1 or not subjects <= names:
            continue
        (name,) = subjects
        out[name] = (tuple(dict.fromkeys(v for _, v in found)), ast.unparse(test))
    return out


def _equals_literal(node: ast.AST) -> tuple[str, int | str] | None:
    """``D == 64`` (or ``64 == D``) -> ("D", 64)."""
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq)):
        return None
    left, right = node.left, node.comparators[0]
    if isinstance(right, ast.Name):
        left, right = right, left
    if isinstance(left, ast.Name) and isinstance(right, ast.Constant) and isinstance(right.value, (int, str)) \
            and not isinstance(right.value, bool):
        return left.id, right.value
    return None


def rule_names(rule: str) -> set[str]:
    """The names a rule from ``flag_rules`` reads."""
    return {n.id for n in ast.walk(ast.parse(rule, mode="eval")) if isinstance(n, ast.Name)}


def rule_holds(rule: str, values: dict[str, bool]) -> bool:
    """``rule`` (from ``flag_rules``: only and/or/not over names and constants) on these values."""
    return bool(eval(compile(ast.parse(rule, mode="eval"), "<rule>", "eval"), {"__builtins__": {}}, values))


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

    return used_only(kernel_source, kernel, names, dtype_use)


# Where each Triton call takes a tile shape: ``all`` its arguments, the ``first`` (``tl.zeros(shape,
# dtype)``), the ``rest`` after a tensor (``tl.reshape(x, shape)``; as a method, ``x.reshape(*shape)``:
# all), or the block shape of a block pointer / descriptor (its position).
_SHAPE_ARGS = {"arange": "all", "static_range": "all", "zeros": "first", "full": "first", "reshape": "rest",
               "view": "rest", "broadcast_to": "rest", "make_block_ptr": 4, "make_tensor_descriptor": 3}
# A local that is a compile-time function of a constexpr (``half: tl.constexpr = D // 2``).
_STATIC_CALLS = {"cdiv", "next_power_of_2", "min", "max", "constexpr"}


def tile_extents(kernel_source: str | None, kernel: str, names: set[str]) -> set[str]:
    """Those of ``names`` the kernel uses as a tile extent: an argument of ``tl.arange``, a
    dimension of a block shape (``tl.zeros((BLOCK_M, D))``, ``block_shape=(...)``), a
    ``tl.static_range`` count, themselves or through a local computed from them at compile time
    (``half: tl.constexpr = D // 2``). Such a value is a shape the caller chooses (a head dim, a
    rank), and every value is a different kernel."""
    fn = kernel_def(kernel_source, kernel)
    if fn is None or not names:
        return set()
    derived = {n: {n} for n in names}
    for _ in range(3):  # compile-time locals computed from a name, to a small fixpoint
        for a in ast.walk(fn):
            if isinstance(a, (ast.Assign, ast.AnnAssign)) and a.value is not None and _static(a.value):
                used = {x.id for x in ast.walk(a.value) if isinstance(x, ast.Name)}
                targets = a.targets if isinstance(a, ast.Assign) else [a.target]
                for n in names:
                    if used & derived[n]:
                        derived[n] |= {t.id for t in targets if isinstance(t, ast.Name)}
    found: set[str] = set()
    for call in ast.walk(fn):
        shapes = _shape_args(call) if isinstance(call, ast.Call) else []
        read = {x.id for arg in shapes for x in ast.walk(arg) if isinstance(x, ast.Name)}
        found |= {n for n in names if read & derived[n]}
    return found


def _divisibility(node: ast.AST | None) -> bool:
    """``x % y == 0`` / ``!= 0``: whether a size divides by a tile."""
    return (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq))
            and isinstance(node.left, ast.BinOp) and isinstance(node.left.op, ast.Mod)
            and isinstance(node.comparators[0], ast.Constant) and node.comparators[0].value == 0)


# A block pointer's / tensor descriptor's global shape, strides and offsets: run-time values the
# hardware indexes with (by position and keyword); only its block shape is a tile.
_RUNTIME_EXTENTS = {"make_block_ptr": ((1, 2, 3), ("shape", "strides", "offsets")),
                    "make_tensor_descriptor": ((1, 2), ("shape", "strides"))}


def _runtime_extent(call: ast.Call, child: ast.AST, name: str | None) -> bool:
    """``child`` (an argument of ``call``) is a descriptor's shape, strides or offsets."""
    positions, keywords = _RUNTIME_EXTENTS.get(name, ((), ()))
    return (isinstance(child, ast.keyword) and child.arg in keywords) or any(
        i < len(call.args) and child is call.args[i] for i in positions)


def _shape_args(call: ast.Call) -> list[ast.AST]:
    where = _SHAPE_ARGS.get(_call_name(call))
    if where is None:
        return []
    if isinstance(where, int):
        return [*call.args[where:where + 1], *(k.value for k in call.keywords if k.arg == "block_shape")]
    keywords = [k.value for k in call.keywords if k.arg == "shape"]
    on_tl = isinstance(call.func, ast.Attribute) and getattr(call.func.value, "id", None) in ("tl", "triton")
    if where == "first":
        return [*call.args[:1], *keywords]
    if where == "rest" and on_tl:
        return [*call.args[1:], *keywords]
    return [*call.args, *keywords]


def _static(expr: ast.AST) -> bool:
    """An expression of names, literals and arithmetic (and a few compile-time calls): no load."""
    for node in ast.walk(expr):
        if isinstance(node, ast.Call) and _call_name(node) not in _STATIC_CALLS:
            return False
    return True


def _is_dtype(expr: ast.expr) -> bool:
    """``tl.float32``, ``tl.bfloat16``, ``torch.float16``...: a dtype spelled out."""
    return (isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id in ("tl", "torch")
            and re.fullmatch(r"u?int\d+|float\d+(\w*)?|bfloat16|f(p|loat)8\w*|bool|int1", expr.attr) is not None)


def _lands_on(kernel_source: str | None, helpers: set[str], call: ast.Call, arg: ast.AST, test) -> bool:
    """Whether ``arg``, a positional argument of ``call`` to one of ``helpers`` (the module's
    ``@triton.jit`` functions), lands on a parameter that ``test(helper, parameter)`` accepts."""
    name = getattr(call.func, "id", None)
    target = kernel_def(kernel_source, name) if name in helpers else None
    if target is None or arg not in call.args:
        return False
    positional = [a.arg for a in target.args.posonlyargs + target.args.args]
    i = call.args.index(arg)
    return i < len(positional) and test(name, positional[i])


def used_only(kernel_source: str | None, kernel: str, names: set[str], use) -> set[str]:
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


__all__ = ["arithmetic_only", "dtypes_of", "flag_rules", "flags_of", "required_values", "rule_holds",
           "rule_names", "tile_extents", "used_only"]
