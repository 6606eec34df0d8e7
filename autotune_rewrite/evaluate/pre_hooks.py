"""The TMA block shapes a config's ``pre_hook`` sets, read from the hook's source.

Kernels that take host-side tensor descriptors (``TensorDescriptor.from_tensor(x, block_shape=
dummy)``) let each config fix the block shape before launch, as Triton's tutorials do::

    def _pre_hook(nargs):
        BLOCK_M = nargs["BLOCK_M"]
        nargs["a_desc"].block_shape = [BLOCK_M, nargs["BLOCK_K"]]

The descriptor's type in the compiled signature is ``tensordesc<dtype[BLOCK_M, BLOCK_K]>`` with
those values, so the launch spec can take the shape from here instead of asking for it. Only
statements of exactly these forms are read; nothing is run.
"""

from __future__ import annotations

import libcst as cst


def descriptor_shapes(node: cst.FunctionDef | cst.Lambda) -> tuple[tuple[str, tuple[str | int, ...]], ...]:
    """``(("a_desc", ("BLOCK_M", "BLOCK_K")), ...)``: each descriptor argument the hook gives a
    block shape, a dimension being a config/launch argument name or an int."""
    if not isinstance(node, cst.FunctionDef) or not node.params.params:
        return ()
    nargs = node.params.params[0].name.value
    local: dict[str, str | int] = {}
    out: dict[str, tuple[str | int, ...]] = {}
    for stmt in _assignments(node.body):
        (target,) = stmt.targets if len(stmt.targets) == 1 else (None,)
        if target is None:
            continue
        target = target.target
        if isinstance(target, cst.Name):
            value = _dim(stmt.value, nargs, local)
            if value is not None:
                local[target.value] = value
        elif isinstance(target, cst.Attribute) and target.attr.value == "block_shape":
            arg = _nargs_key(target.value, nargs)
            if arg is None or not isinstance(stmt.value, (cst.List, cst.Tuple)):
                continue
            dims = [_dim(e.value, nargs, local) for e in stmt.value.elements]
            if dims and all(d is not None for d in dims):
                out[arg] = tuple(dims)  # type: ignore[arg-type]
    return tuple(out.items())


def _assignments(block) -> list[cst.Assign]:
    """The hook's assignments, also under ``if`` (an early ``return`` guard does not change them)."""
    out = []
    for stmt in getattr(block, "body", ()):
        if isinstance(stmt, cst.SimpleStatementLine):
            out += [s for s in stmt.body if isinstance(s, cst.Assign)]
        elif isinstance(stmt, cst.If):
            out += _assignments(stmt.body)
            if stmt.orelse is not None:
                out += _assignments(stmt.orelse.body)
    return out


def _nargs_key(expr: cst.BaseExpression, nargs: str) -> str | None:
    """``nargs["NAME"]`` -> ``NAME``."""
    if (isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Name) and expr.value.value == nargs
            and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index)):
        key = expr.slice[0].slice.value
        if isinstance(key, cst.SimpleString):
            return key.evaluated_value if isinstance(key.evaluated_value, str) else None
    return None


def _dim(expr: cst.BaseExpression, nargs: str, local: dict[str, str | int]) -> str | int | None:
    if isinstance(expr, cst.Integer):
        return int(expr.evaluated_value)
    if isinstance(expr, cst.Name):
        return local.get(expr.value)
    return _nargs_key(expr, nargs)


__all__ = ["descriptor_shapes"]
