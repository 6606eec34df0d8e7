"""What element type a pointer parameter's use implies, for the pointers ``--assume-dtype`` would
otherwise give the float default: ints for indices (offsets, bounds, packed bits), int8 for an
int32-accumulating dot's operands, fp32 for tiles fp32-only math takes, int64 for address tables.
Each a heuristic, labelled as such with the verdict; read with the standard ``ast``.
"""

from __future__ import annotations

import ast

from autotune_rewrite.spec.pointer_params import (
    POINTER_CALLS,
    call_name,
    call_name_of,
    kernel_def,
    leftmost,
    loaded_from,
    local_assignments,
    module_functions,
    names_in,
    pointer_params,
    pointer_root,
)

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
    assigned = local_assignments(fn)
    helpers = module_functions(kernel_source)

    def root(name: str | None) -> str | None:
        return pointer_root(name, params, assigned)

    loaded: dict[str, str] = {}  # local name -> pointer parameter it was loaded from
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            source = root(loaded_from(node.value))
            if source is not None:
                loaded[node.targets[0].id] = source
    for _ in range(4):  # values computed from loaded ones (``offs = start + tl.arange(...)``)
        for target, values in assigned.items():
            if target in loaded or target in params:
                continue
            for value in values:
                source = next((loaded[n] for n in sorted(_additive_names(value)) if n in loaded), None)
                if source is not None and loaded_from(value) is None:
                    loaded[target] = source
                    break
    # Values computed from loaded ones through any arithmetic: in an address (``x_ptr + start *
    # stride``) or a loop bound (``tl.range(0, end - start)``, here or in a helper) they are ints,
    # whatever arithmetic made them; pointer + float does not compile.
    # Every source counts: ``index_b = offset_in_bin`` then ``index_b += tl.load(padded_bins + i)``.
    through: dict[str, set[str]] = {n: {src} for n, src in loaded.items()}
    for _ in range(4):
        for target, values in assigned.items():
            if target not in params:
                nodes = [c for v in values for c in _flow_nodes(v)]
                sources = {src for c in nodes if isinstance(c, ast.Name) and c.id in through and c.id != target
                           for src in through[c.id]}
                sources |= {r for c in nodes if (r := root(loaded_from(c))) is not None}
                if sources - through.get(target, set()):
                    through[target] = through.get(target, set()) | sources
    used: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.BinOp) and isinstance(node.op, _INT_OPS):
            for side in (node.left, node.right):
                used |= {loaded[n] for n in names_in(side) if n in loaded}
                direct = root(loaded_from(side))
                if direct is not None:
                    used.add(direct)
        elif isinstance(node, ast.Call) and call_name(node) in POINTER_CALLS and node.args:
            for address in _address_terms(node.args[0], assigned):
                lead = leftmost(address)
                used |= {src for n in names_in(address) if n in through and n != lead for src in through[n]}
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in helpers:
            # a @triton.jit helper of the bundle unpacking what it is given (``w >> 8``)
            for i, arg in enumerate(node.args):
                sources = {loaded[n] for n in names_in(arg) if n in loaded}
                direct = root(loaded_from(arg))
                if (sources or direct) and _int_param(helpers, node.func.id, i):
                    used |= sources | ({direct} if direct else set())
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and call_name(node) in _LOOP_CALLS:
            used |= {src for a in node.args for n in names_in(a) if n in through for src in through[n]}
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in helpers:
            for i, arg in enumerate(node.args):
                sources = {src for n in names_in(arg) if n in through for src in through[n]}
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


def _flow_nodes(expr: ast.expr):
    """The nodes whose values flow into ``expr``'s: not through a comparison (its result is a
    bool, not the value compared), the condition of ``tl.where``, or the arguments of a load or
    atomic (its result is what memory holds; the call itself is yielded)."""
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Compare):
            continue
        yield node
        if isinstance(node, ast.Call) and call_name(node) in POINTER_CALLS:
            continue
        children = list(ast.iter_child_nodes(node))
        if isinstance(node, ast.Call) and call_name(node) == "where" and node.args:
            children = [c for c in children if c is not node.args[0]]
        stack.extend(children)


def _address_terms(address: ast.expr, assigned: dict[str, list[ast.expr]], depth: int = 0):
    """``address`` and the values its base was given (``a_ptrs = A + offs_a[:, None] * s``,
    ``b += index_b * N``, both branches of ``b if c else a``), a few levels deep: their terms other
    than the base are offsets."""
    yield address
    if depth >= 4:
        return
    if isinstance(address, ast.IfExp):  # ``optr = b if A_TO_B else a``: either base, with its offsets
        for branch in (address.body, address.orelse):
            yield from _address_terms(branch, assigned, depth + 1)
        return
    lead = leftmost(address)
    # The base's own assignments are part of the address too (``optr + offs`` where ``b += i * n``).
    for value in assigned.get(lead, ()) if lead is not None else ():
        yield from _address_terms(value, assigned, depth + 1)


def _int_param(helpers: dict[str, ast.FunctionDef], name: str, index: int) -> bool:
    """Whether helper ``name`` uses its ``index``-th parameter with bit operations, ``//`` or
    ``%``, itself or through the helpers it passes it to (a few levels)."""
    return _helper_param_use(helpers, name, index, lambda node, param: (
        isinstance(node, ast.BinOp) and isinstance(node.op, _INT_OPS) and param in names_in(node)))


def _loop_bound_param(helpers: dict[str, ast.FunctionDef], name: str, index: int) -> bool:
    """Whether helper ``name`` uses its ``index``-th parameter in a loop's bounds (``range``,
    ``tl.range``, ``tl.static_range``), itself or through the helpers it passes it to."""
    return _helper_param_use(helpers, name, index, lambda node, param: (
        isinstance(node, ast.Call) and call_name(node) in _LOOP_CALLS and any(param in names_in(a) for a in node.args)))


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
            if any(param in names_in(a) and _helper_param_use(helpers, node.func.id, i, hit, depth + 1)
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
    int_acc = {t.id for node in ast.walk(fn) if isinstance(node, ast.Assign) and call_name_of(node.value) == "zeros"
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
            dot = node.value if call_name_of(node.value) == "dot" else None
        elif isinstance(node, ast.Call) and call_name(node) == "dot" and (
                any(isinstance(a, ast.Name) and a.id in int_acc for a in node.args[2:]) or
                any(k.arg == "acc" and isinstance(k.value, ast.Name) and k.value.id in int_acc for k in node.keywords)):
            dot = node
        if dot is not None:
            operands |= {a.id for a in dot.args[:2] if isinstance(a, ast.Name)}
    loads = {t.id: leftmost(node.value.args[0]) for node in ast.walk(fn) if isinstance(node, ast.Assign)
             and call_name_of(node.value) == "load" and node.value.args
             for t in node.targets if isinstance(t, ast.Name)}
    assigned = local_assignments(fn)
    found = {pointer_root(loads.get(name), params, assigned) for name in operands} - {None}
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
    assigned = local_assignments(fn)

    def root(address: ast.expr) -> str | None:
        return pointer_root(leftmost(address), params, assigned)

    def tiles(expr: ast.expr, bound: dict[str, frozenset[str]]) -> frozenset[str] | None:
        """The pointers an uncast tile expression is loaded from; None when it is not one (a
        cast, a call, a value of unknown dtype: promotion may make it fp32 whatever P holds)."""
        if isinstance(expr, ast.Constant) and isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool):
            return frozenset()
        if isinstance(expr, ast.Name):
            return bound.get(expr.id)
        if isinstance(expr, ast.Call) and call_name(expr) == "load" and expr.args:
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
            name = call_name(node)
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


def mask_pointer_params(kernel_source: str | None, kernel: str) -> tuple[str, ...]:
    """Pointer parameters holding masks: what the kernel loads from them is the ``mask=`` of a
    load, store or atomic, directly or through a local bound once (``hit = tl.load(m_ptr + offs)``,
    ``tl.store(out + offs, x, mask=hit)``). Triton takes only a boolean mask, so their element type
    is bool (``*i1``, a torch.bool tensor)."""
    fn = kernel_def(kernel_source, kernel)
    if fn is None:
        return ()
    params = set(pointer_params(kernel_source, kernel))
    assigned = local_assignments(fn)

    def source(expr: ast.expr | None) -> str | None:
        if isinstance(expr, ast.Name) and len(assigned.get(expr.id, ())) == 1:
            expr = assigned[expr.id][0]
        return pointer_root(loaded_from(expr), params, assigned) if expr is not None else None

    found = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and call_name(node) in POINTER_CALLS:
            mask = next((k.value for k in node.keywords if k.arg == "mask"), None)
            root = source(mask)
            if root is not None:
                found.add(root)
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
                and node.args and isinstance(node.args[0], ast.Call) and call_name(node.args[0]) == "pointer_type"):
            value = node.func.value
            if isinstance(value, ast.Call) and call_name(value) == "load" and value.args:
                lead = leftmost(value.args[0])
                if lead in params:
                    found.add(lead)
    return tuple(p for p in pointer_params(kernel_source, kernel) if p in found)


def _is_fp32(expr: ast.expr) -> bool:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, float):
        return True
    return (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "to"
            and bool(expr.args) and ast.unparse(expr.args[0]).endswith("float32"))


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


__all__ = ["address_table_params", "fp32_pointer_params", "index_pointer_params", "int8_dot_params",
           "mask_pointer_params"]
