"""Dtypes the wrapper itself states for its tensor parameters before a launch.

``assert a.dtype == torch.float8_e4m3fn``, ``assert q.dtype in (torch.float16, torch.bfloat16)``,
``if x.dtype not in SUPPORTED: raise``: past that check the tensor has one of those dtypes. Read
so that a quantized GEMM's operands are not taken at the assumed bf16 (twice the shared memory
of fp8: configs that launch looked dead). One dtype is exact. Several of one element size (fp8
e4m3 in its CUDA and ROCm spellings, a set built with ``.append`` where the names exist) give the
first, listed as an assumption: the figures are the same for all of them but the type. Sets of
different sizes state nothing here (the kernel then takes the assumed dtype, as before).

The set may be a literal, a module constant (evaluated: ``evaluate/dtype_facts``), or a local the
function builds from ``torch.NAME`` literals (assigned, ``.append``-ed, ``tuple(...)``-ed).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from autotune_rewrite.wrapper.asserts import conditions_before
from autotune_rewrite.wrapper.torch_names import dtype_name

# Element sizes of the dtypes torch spells (``torch_names.TORCH_DTYPES``, canonical names).
_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8, "int8": 1, "int16": 2, "int32": 4, "int64": 8,
          "uint8": 1, "uint16": 2, "uint32": 4, "uint64": 8, "bool": 1, "float8_e4m3fn": 1, "float8_e5m2": 1,
          "float8_e4m3fnuz": 1, "float8_e5m2fnuz": 1}


@dataclass(frozen=True)
class StatedDtype:
    dtype: str  # torch's name, canonical (``float8_e4m3fn``)
    statement: str
    assumption: str  # "" when the statement names one dtype


def stated_dtypes(wrapper, before_line: int, module_value=None) -> dict[str, StatedDtype]:
    """Tensor name -> the dtype its checks above ``before_line`` state."""
    out: dict[str, StatedDtype] = {}
    for test, words in conditions_before(wrapper, before_line):
        for conjunct in _conjuncts(test):
            found = _dtype_check(wrapper, conjunct, module_value)
            if found is None:
                continue
            tensor, dtypes = found
            if not dtypes or len({_BYTES.get(d) for d in dtypes}) != 1 or None in {_BYTES.get(d) for d in dtypes}:
                continue
            if wrapper.assigned.get(tensor):
                continue  # bound again in the function: the check may be about another tensor
            first = dtypes[0]
            said = (f"one of {', '.join(dtypes)} (all {_BYTES[first]}-byte) by `{words}`: assumed {first}"
                    if len(set(dtypes)) > 1 else "")
            out[tensor] = StatedDtype(first, words, said)
    return out


def _conjuncts(test: cst.BaseExpression):
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        yield from _conjuncts(test.left)
        yield from _conjuncts(test.right)
    else:
        yield test


def _dtype_check(wrapper, test: cst.BaseExpression, module_value) -> tuple[str, list[str]] | None:
    """(tensor, its dtypes) of ``t.dtype == torch.D`` (either side) / ``t.dtype in S``."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    op, right = test.comparisons[0].operator, test.comparisons[0].comparator
    left = test.left
    if isinstance(op, cst.Equal) and _is_dtype_of(right) and not _is_dtype_of(left):
        left, right = right, left
    if not _is_dtype_of(left) or not isinstance(left.value, cst.Name):
        return None
    tensor = left.value.value
    if isinstance(op, cst.Equal):
        d = dtype_name(right)
        return (tensor, [d]) if d is not None else None
    if isinstance(op, cst.In):
        dtypes = _dtype_set(wrapper, right, module_value)
        return (tensor, dtypes) if dtypes else None
    return None


def _is_dtype_of(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Attribute) and node.attr.value == "dtype"


def _dtype_set(wrapper, node: cst.BaseExpression, module_value) -> list[str] | None:
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        names = [dtype_name(e.value) for e in node.elements]
        return names if names and None not in names else None
    if not isinstance(node, cst.Name):
        return None
    if node.value in wrapper.history:
        return _built_locally(wrapper, node.value)
    if module_value is not None:
        known, value = module_value(node.value)
        if known and isinstance(value, (tuple, list, set, frozenset)):
            names = [getattr(v, "name", None) for v in value]
            return names if names and None not in names else None
    return None


def _built_locally(wrapper, name: str) -> list[str] | None:
    """The dtypes a local collection is built from: ``ok = [torch.A]``, ``ok.append(torch.B)``,
    ``ok = tuple(ok)``; None when anything else binds or changes it."""
    found: list[str] = []
    for value, _, _ in wrapper.history[name]:
        if isinstance(value, (cst.Tuple, cst.List, cst.Set)):
            names = [dtype_name(e.value) for e in value.elements]
            if None in names:
                return None
            found += names
        elif not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in (
                "tuple", "list", "set") and len(value.args) == 1 and isinstance(value.args[0].value, cst.Name)
                and value.args[0].value.value == name):
            return None
    uses = _ChangeReader(name)
    wrapper.fn.visit(uses)
    if uses.other:
        return None
    found += uses.appended
    return found if found and None not in found else None


class _ChangeReader(cst.CSTVisitor):
    """``name.append(torch.D)`` calls (their dtypes), and whether any other method changes it."""

    def __init__(self, name: str):
        self.name, self.appended, self.other = name, [], False

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == self.name:
            if func.attr.value == "append" and len(node.args) == 1:
                self.appended.append(dtype_name(node.args[0].value))
            else:
                self.other = True


__all__ = ["StatedDtype", "stated_dtypes"]
