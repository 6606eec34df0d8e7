"""Which kernel parameters are pointers, read from the kernel body (for ``--assume-dtype``).

Read with the standard ``ast``: nothing is rewritten here, and a warm ``check`` should not have
to import LibCST.
"""

from __future__ import annotations

import ast
import functools
import re

_POINTER_CALLS = {"load", "store", "make_block_ptr", "make_tensor_descriptor", "atomic_add", "atomic_max",
                  "atomic_min", "atomic_cas", "atomic_xchg", "atomic_and", "atomic_or", "atomic_xor"}


def pointer_params(kernel_source: str | None, kernel: str) -> tuple[str, ...]:
    """Parameters used as pointers in the kernel body, for ``--assume-dtype`` (a heuristic).

    A parameter is a pointer when it is the leftmost term of the address given to ``tl.load``,
    ``tl.store``, an atomic, ``make_block_ptr`` or ``make_tensor_descriptor``, directly or through
    local variables; or when its name ends in ``ptr``/``ptrs``. (Read with the standard ``ast``:
    nothing is rewritten here, and a warm ``check`` should not have to import LibCST.)
    """
    fn = kernel_def(kernel_source, kernel)
    if fn is None:
        return ()
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    addresses: list[ast.expr] = []
    assigned: dict[str, list[ast.expr]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in _POINTER_CALLS and (node.args or node.keywords):
                keyword = next((k.value for k in node.keywords if k.arg in ("pointer", "base")), None)
                addresses.append(keyword if keyword is not None else node.args[0])
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).append(node.value)
    found: set[str] = {p for p in params if re.search(r"ptrs?$", p, re.IGNORECASE)}
    pending, seen = list(addresses), set()
    while pending:
        name = _leftmost(pending.pop())
        if name is None or name in seen:
            continue
        seen.add(name)
        if name in params:
            found.add(name)
        pending += assigned.get(name, [])
    return tuple(p for p in params if p in found)


_INT_OPS = (ast.RShift, ast.LShift, ast.BitAnd, ast.BitOr, ast.BitXor, ast.FloorDiv, ast.Mod)
_LOOP_CALLS = {"range", "static_range"}  # ``tl.range`` is named ``range`` too


def index_pointer_params(kernel_source: str | None, kernel: str) -> tuple[str, ...]:
    """Pointer parameters whose loaded values the kernel uses as ints: as an offset in another
    address, or with bit operations, ``//`` or ``%`` (token ids, expert indices, packed int4
    weights). Their element type is assumed ``i32`` rather than a float dtype (a heuristic,
    labelled as such with the verdict)."""
    fn = kernel_def(kernel_source, kernel)
    if fn is None:
        return ()
    params = set(pointer_params(kernel_source, kernel))
    assigned = _assignments(fn)
    helpers = _module_functions(kernel_source)

    def root(name: str | None) -> str | None:
        return _pointer_root(name, params, assigned)

    loaded: dict[str, str] = {}  # local name -> pointer parameter it was loaded from
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            source = root(_loaded_from(node.value))
            if source is not None:
                loaded[node.targets[0].id] = source
    for _ in range(4):  # values computed from loaded ones (``offs = start + tl.arange(...)``)
        for target, values in assigned.items():
            if target in loaded or target in params:
                continue
            for value in values:
                source = next((loaded[n] for n in sorted(_additive_names(value)) if n in loaded), None)
                if source is not None and _loaded_from(value) is None:
                    loaded[target] = source
                    break
    # Values computed from loaded ones through any arithmetic: in an address (``x_ptr + start *
    # stride``) or a loop bound (``tl.range(0, end - start)``, here or in a helper) they are ints,
    # whatever arithmetic made them; pointer + float does not compile.
    through = dict(loaded)
    for _ in range(4):
        for target, values in assigned.items():
            if target not in through and target not in params:
                source = next((through[n] for v in values for n in sorted(_names(v)) if n in through), None) or next(
                    (r for v in values for c in ast.walk(v) if (r := root(_loaded_from(c))) is not None), None)
                if source is not None:
                    through[target] = source
    used: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.BinOp) and isinstance(node.op, _INT_OPS):
            for side in (node.left, node.right):
                used |= {loaded[n] for n in _names(side) if n in loaded}
                direct = root(_loaded_from(side))
                if direct is not None:
                    used.add(direct)
        elif isinstance(node, ast.Call) and _call_name(node) in _POINTER_CALLS and node.args:
            for address in _address_terms(node.args[0], assigned):
                lead = _leftmost(address)
                used |= {through[n] for n in _names(address) if n in through and n != lead}
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in helpers:
            # a @triton.jit helper of the bundle unpacking what it is given (``w >> 8``)
            for i, arg in enumerate(node.args):
                sources = {loaded[n] for n in _names(arg) if n in loaded}
                direct = root(_loaded_from(arg))
                if (sources or direct) and _int_param(helpers, node.func.id, i):
                    used |= sources | ({direct} if direct else set())
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and _call_name(node) in _LOOP_CALLS:
            used |= {through[n] for a in node.args for n in _names(a) if n in through}
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in helpers:
            for i, arg in enumerate(node.args):
                sources = {through[n] for n in _names(arg) if n in through}
                if sources and _loop_bound_param(helpers, node.func.id, i):
                    used |= sources
    # Values mixed with indices (``end - start``, ``offs < end``) are indices too.
    for _ in range(2):
        for node in ast.walk(fn):
            # Only offsets and bounds mix like this (``end - start``, ``offs < end``); a product
            # (``(q - zero) * scale``) mixes an int with data.
            if (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub))) or isinstance(node, ast.Compare):
                sides = [node.left, node.right] if isinstance(node, ast.BinOp) else [node.left, *node.comparators]
                sources = [{loaded[n] for n in _additive_names(side) if n in loaded} for side in sides]
                if any(src & used for src in sources):
                    used |= set().union(*sources)
    return tuple(p for p in pointer_params(kernel_source, kernel) if p in used)


def _address_terms(address: ast.expr, assigned: dict[str, list[ast.expr]], depth: int = 0):
    """``address`` and, when it is a local pointer (``a_ptrs = A + offs_a[:, None] * s``), the
    values that local was given, a few levels deep: their terms other than the base are offsets."""
    yield address
    lead = _leftmost(address)
    if depth < 4 and isinstance(address, ast.Name) and lead in assigned:
        for value in assigned[lead]:
            yield from _address_terms(value, assigned, depth + 1)


def _module_functions(source: str | None) -> dict[str, ast.FunctionDef]:
    module = _parse(source or "")
    return {s.name: s for s in module.body if isinstance(s, ast.FunctionDef)} if module is not None else {}


def _int_param(helpers: dict[str, ast.FunctionDef], name: str, index: int) -> bool:
    """Whether helper ``name`` uses its ``index``-th parameter with bit operations, ``//`` or
    ``%``, itself or through the helpers it passes it to (a few levels)."""
    return _helper_param_use(helpers, name, index, lambda node, param: (
        isinstance(node, ast.BinOp) and isinstance(node.op, _INT_OPS) and param in _names(node)))


def _loop_bound_param(helpers: dict[str, ast.FunctionDef], name: str, index: int) -> bool:
    """Whether helper ``name`` uses its ``index``-th parameter in a loop's bounds (``range``,
    ``tl.range``, ``tl.static_range``), itself or through the helpers it passes it to."""
    return _helper_param_use(helpers, name, index, lambda node, param: (
        isinstance(node, ast.Call) and _call_name(node) in _LOOP_CALLS and any(param in _names(a) for a in node.args)))


def _helper_param_use(helpers: dict[str, ast.FunctionDef], name: str, index: int, hit, depth: int = 0) -> bool:
    """Whether some node of helper ``name`` is a ``hit(node, param)`` for its ``index``-th
    parameter, or it passes that parameter to a helper where it is (up to 3 calls deep)."""
    fn = helpers.get(name)
    args = fn.args.posonlyargs + fn.args.args if fn is not None else []
    if fn is None or index >= len(args) or depth > 3:
        return False
    param = args[index].arg
    for node in ast.walk(fn):
        if hit(node, param):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in helpers:
            if any(param in _names(a) and _helper_param_use(helpers, node.func.id, i, hit, depth + 1)
                   for i, a in enumerate(node.args)):
                return True
    return False


def int8_dot_params(kernel_source: str | None, kernel: str, int32_names: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """Pointer parameters whose loaded tiles go into a ``tl.dot`` accumulating in int32
    (``acc = tl.zeros(..., dtype=tl.int32)``, or ``dtype=ACC`` with ``ACC`` in ``int32_names``;
    ``acc += tl.dot(a, b)``): int8 GEMM operands."""
    fn = kernel_def(kernel_source, kernel)
    if fn is None:
        return ()
    params = set(pointer_params(kernel_source, kernel))
    # An int32 accumulator made under a test of an operand's own dtype (``if A.dtype.element_ty ==
    # tl.int8:``) is one case of a kernel that adapts to its operands (and often refuses that case
    # with ``static_assert``): the assumed float dtype takes the other branch, so it proves nothing.
    adapting = {id(n) for node in ast.walk(fn) if isinstance(node, ast.If) and _reads_a_dtype(node.test)
                for stmt in node.body for n in ast.walk(stmt)}
    int_acc = {t.id for node in ast.walk(fn) if isinstance(node, ast.Assign) and _call_name_of(node.value) == "zeros"
               and id(node) not in adapting
               for t in node.targets if isinstance(t, ast.Name) and any(
                   k.arg == "dtype" and (ast.unparse(k.value).endswith("int32") or ast.unparse(k.value) in int32_names)
                   for k in node.value.keywords)}
    if not int_acc:
        return ()
    operands: set[str] = set()
    for node in ast.walk(fn):
        dot = None
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id in int_acc:
            dot = node.value if _call_name_of(node.value) == "dot" else None
        elif isinstance(node, ast.Call) and _call_name(node) == "dot" and (
                any(isinstance(a, ast.Name) and a.id in int_acc for a in node.args[2:]) or
                any(k.arg == "acc" and isinstance(k.value, ast.Name) and k.value.id in int_acc for k in node.keywords)):
            dot = node
        if dot is not None:
            operands |= {a.id for a in dot.args[:2] if isinstance(a, ast.Name)}
    loads = {t.id: _leftmost(node.value.args[0]) for node in ast.walk(fn) if isinstance(node, ast.Assign)
             and _call_name_of(node.value) == "load" and node.value.args
             for t in node.targets if isinstance(t, ast.Name)}
    assigned = _assignments(fn)
    found = {_pointer_root(loads.get(name), params, assigned) for name in operands} - {None}
    return tuple(p for p in pointer_params(kernel_source, kernel) if p in found)


def _reads_a_dtype(test: ast.expr) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr in ("dtype", "element_ty") for n in ast.walk(test))


# Triton's math functions that take fp32 (or fp64) tensors only (``_check_dtype`` in
# ``triton/language/math.py``): a bf16 tile passed to one is a compile error, so a tile loaded
# straight into one comes from an fp32 tensor.
_FP32_ONLY = {"exp", "exp2", "log", "log2", "cos", "sin", "sqrt", "sqrt_rn", "rsqrt", "div_rn", "erf", "floor",
              "ceil"}


def fp32_pointer_params(kernel_source: str | None, kernel: str) -> tuple[str, ...]:
    """Pointer parameters whose loaded tiles go, uncast, into an fp32-only math function, or
    into ``tl.fdiv`` beside an fp32 value (a float literal, ``x.to(tl.float32)``): ``fdiv``
    needs both sides of one type, so an fp32 side makes the loaded side fp32 too (verl's
    ``tl.fdiv(1.0, tl.load(accu_ptr + offs))``). "Uncast" follows the tile through arithmetic
    with other such tiles and numbers (``tl.exp(g_last - g)``), in statement order, so a name
    reloaded or cast later is read as it is where the call is."""
    fn = kernel_def(kernel_source, kernel)
    if fn is None:
        return ()
    params = set(pointer_params(kernel_source, kernel))
    assigned = _assignments(fn)

    def root(address: ast.expr) -> str | None:
        return _pointer_root(_leftmost(address), params, assigned)

    def tiles(expr: ast.expr, bound: dict[str, frozenset[str]]) -> frozenset[str] | None:
        """The pointers an uncast tile expression is loaded from; None when it is not one (a
        cast, a call, a value of unknown dtype: promotion may make it fp32 whatever P holds)."""
        if isinstance(expr, ast.Constant) and isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool):
            return frozenset()
        if isinstance(expr, ast.Name):
            return bound.get(expr.id)
        if isinstance(expr, ast.Call) and _call_name(expr) == "load" and expr.args:
            p = root(expr.args[0])
            return frozenset((p,)) if p else None
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
            return tiles(expr.operand, bound)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            left, right = tiles(expr.left, bound), tiles(expr.right, bound)
            return None if left is None or right is None else left | right
        if isinstance(expr, ast.Subscript):  # ``x[:, None]``
            return tiles(expr.value, bound)
        return None

    found: set[str] = set()

    def calls(expr: ast.AST, bound: dict[str, frozenset[str]]) -> None:
        for node in ast.walk(expr):
            if not isinstance(node, ast.Call):
                continue
            name = _call_name(node)
            if name in _FP32_ONLY:
                # ``tl.exp(x)`` or the member form ``x.exp()``
                member = isinstance(node.func, ast.Attribute) and not node.args
                operands = [node.func.value] if member else list(node.args)
            elif name == "fdiv" and len(node.args) >= 2 and any(_is_fp32(a) for a in node.args[:2]):
                operands = list(node.args[:2])
            else:
                continue
            for operand in operands:
                found.update(tiles(operand, bound) or ())

    def block(stmts: list[ast.stmt], bound: dict[str, frozenset[str]]) -> None:
        for stmt in stmts:
            if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and stmt.value is not None:
                calls(stmt.value, bound)
                value = stmt.value if not isinstance(stmt, ast.AugAssign) else ast.BinOp(stmt.target, stmt.op, stmt.value)
                loaded = tiles(value, bound)
                for target in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]):
                    if isinstance(target, ast.Name):
                        if loaded:
                            bound[target.id] = loaded
                        else:
                            bound.pop(target.id, None)
            elif isinstance(stmt, (ast.If, ast.For, ast.While, ast.With)):
                for part in ("test", "iter", "items"):
                    if hasattr(stmt, part):
                        calls(getattr(stmt, part) if part != "items" else ast.Tuple([i.context_expr for i in stmt.items]),
                              bound)
                block(stmt.body, bound)
                block(getattr(stmt, "orelse", []), bound)
            else:
                calls(stmt, bound)

    block(fn.body, {})
    return tuple(p for p in pointer_params(kernel_source, kernel) if p in found)


def address_table_params(kernel_source: str | None, kernel: str) -> tuple[str, ...]:
    """Pointer parameters holding addresses: what the kernel loads from them becomes a pointer
    (``tl.load(bufs + rank).to(tl.pointer_type(tl.bfloat16))``, the peer buffers of distributed
    kernels): their element type is a 64-bit int."""
    fn = kernel_def(kernel_source, kernel)
    if fn is None:
        return ()
    params = set(pointer_params(kernel_source, kernel))
    found = set()
    for node in ast.walk(fn):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "to"
                and node.args and isinstance(node.args[0], ast.Call) and _call_name(node.args[0]) == "pointer_type"):
            value = node.func.value
            if isinstance(value, ast.Call) and _call_name(value) == "load" and value.args:
                lead = _leftmost(value.args[0])
                if lead in params:
                    found.add(lead)
    return tuple(p for p in pointer_params(kernel_source, kernel) if p in found)


def _is_fp32(expr: ast.expr) -> bool:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, float):
        return True
    return (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "to"
            and bool(expr.args) and ast.unparse(expr.args[0]).endswith("float32"))


def _pointer_root(name: str | None, params: set[str], assigned: dict[str, list[ast.expr]]) -> str | None:
    """The pointer parameter an address's leftmost name comes from, through the locals assigned
    to it (``a_ptrs = a_ptr + offs``, ``a_ptrs += BLOCK_K * stride``); None when it is not one, or
    when a local is reused for two pointers (``ptr = a + i`` ... ``ptr = b + i``)."""

    def roots(name: str | None, depth: int) -> set[str]:
        if name is None or depth > 16:
            return set()
        if name in params:
            return {name}
        return set().union(*(roots(_leftmost(v), depth + 1) for v in assigned.get(name, ())))

    found = roots(name, 0)
    return next(iter(found)) if len(found) == 1 else None


def _assignments(fn: ast.FunctionDef) -> dict[str, list[ast.expr]]:
    """Every value assigned to each local name (``=`` and augmented assignments)."""
    assigned: dict[str, list[ast.expr]] = {}
    for node in ast.walk(fn):
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).append(node.value)
    return assigned


def _call_name_of(expr: ast.expr | None) -> str | None:
    return _call_name(expr) if isinstance(expr, ast.Call) else None


def descriptor_params(kernel_source: str | None, kernel: str) -> tuple[str, ...]:
    """Parameters the kernel uses as TMA tensor descriptors (``desc.load(...)``/``.store``),
    itself or in the ``@triton.jit`` helpers it passes them to: their type carries a block shape
    that only the host code knows."""
    fn = kernel_def(kernel_source, kernel)
    if fn is None:
        return ()
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    found = _descriptor_uses(fn, _module_functions(kernel_source), 0)
    return tuple(p for p in params if p in found)


def _descriptor_uses(fn: ast.FunctionDef, helpers: dict[str, ast.FunctionDef], depth: int) -> set[str]:
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    found = set()
    for node in ast.walk(fn):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
            if node.func.attr in ("load", "store", "atomic_add", "gather", "scatter") and node.func.value.id in params:
                found.add(node.func.value.id)
            if node.func.attr in ("_experimental_descriptor_load", "_experimental_descriptor_store",
                                  "experimental_descriptor_load") and node.args and isinstance(node.args[0], ast.Name):
                found.add(node.args[0].id)
        elif isinstance(node.func, ast.Name) and node.func.id in helpers and depth < 3 and helpers[node.func.id] is not fn:
            helper = helpers[node.func.id]
            inner = _descriptor_uses(helper, helpers, depth + 1)
            names = [a.arg for a in helper.args.posonlyargs + helper.args.args]
            for i, arg in enumerate(node.args):
                if i < len(names) and names[i] in inner and isinstance(arg, ast.Name) and arg.id in params:
                    found.add(arg.id)
    return found


def _call_name(node: ast.Call) -> str | None:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)


def _loaded_from(expr: ast.expr) -> str | None:
    """``tl.load(P + ...)`` (also ``.to(...)`` or ``[None, :]`` of it) -> ``P``'s leftmost name."""
    while (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "to"
           or isinstance(expr, ast.Subscript)):
        expr = expr.func.value if isinstance(expr, ast.Call) else expr.value
    if isinstance(expr, ast.Call) and _call_name(expr) == "load" and expr.args:
        return _leftmost(expr.args[0])
    return None


def _additive_names(expr: ast.expr) -> set[str]:
    """Names summed into ``expr`` (``a + b - c[i]``, also through int-only operations such as
    ``(q >> 4) & 0xF``), not those inside a product or a call."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub, *_INT_OPS)):
        return _additive_names(expr.left) | _additive_names(expr.right)
    if isinstance(expr, ast.Subscript):
        return _additive_names(expr.value)
    if isinstance(expr, ast.Name):
        return {expr.id}
    return set()


def _names(expr: ast.expr) -> set[str]:
    return {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}


def kernel_def(kernel_source: str | None, kernel: str) -> ast.FunctionDef | None:
    if not kernel_source:
        return None
    module = _parse(kernel_source)
    return next((s for s in module.body if isinstance(s, ast.FunctionDef) and s.name == kernel), None) \
        if module is not None else None


@functools.lru_cache(maxsize=8)
def _parse(source: str) -> ast.Module | None:
    """One parse per module source: every use reader asks for its kernel and helpers (read-only)."""
    try:
        return ast.parse(source)
    except SyntaxError:
        return None


def _leftmost(expr: ast.expr) -> str | None:
    while True:
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
            expr = expr.left
        elif isinstance(expr, ast.Subscript):
            expr = expr.value
        elif isinstance(expr, ast.Call):  # tl.make_block_ptr(base=..), tl.advance(p, ..), tl.multiple_of(p, ..)
            base = next((k.value for k in expr.keywords if k.arg == "base"), None)
            if base is None and not expr.args:
                return None
            expr = base if base is not None else expr.args[0]
        elif isinstance(expr, ast.Name):
            return expr.id
        else:
            return None
