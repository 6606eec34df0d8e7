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
from autotune_rewrite.wrapper.torch_names import SAME, SAME_FRESH, TORCH_DTYPES, dtype_name

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
    """Tensor name -> the dtype its checks above ``before_line`` state: top-level checks, and a
    top-level ``if``/``elif``/``else`` whose every branch checks it (``if torch.version.cuda:
    assert a.dtype in (...) else: assert a.dtype in (...)``: one of all they name)."""
    found: dict[str, tuple[list[str], list[str]]] = {}
    for test, words in conditions_before(wrapper, before_line):
        for tensor, dtypes in _checked(wrapper, test, module_value):
            found[tensor] = (dtypes, [words])
    if wrapper.fn is not None and isinstance(wrapper.fn.body, cst.IndentedBlock):
        for stmt in wrapper.fn.body.body:
            if wrapper.pm.span(stmt).start_line >= before_line:
                break
            if isinstance(stmt, cst.If):
                for tensor, (dtypes, words) in _every_branch(wrapper, stmt, module_value).items():
                    found.setdefault(tensor, (dtypes, words))
    out: dict[str, StatedDtype] = {}
    for tensor, (dtypes, words) in found.items():
        sizes = {_BYTES.get(d) for d in dtypes}
        if len(sizes) != 1 or None in sizes or not _keeps_dtype(wrapper, tensor):
            continue  # sizes differ, or bound again to what may be another dtype
        first, said = dtypes[0], " ".join("; ".join(words).split())  # a check written over lines, on one
        out[tensor] = StatedDtype(first, said, (f"one of {', '.join(dict.fromkeys(dtypes))} (all {_BYTES[first]}-byte) "
                                               f"by `{said}`: assumed {first}") if len(set(dtypes)) > 1 else "")
    return out


def _checked(wrapper, test: cst.BaseExpression, module_value):
    for conjunct in _conjuncts(test):
        found = _dtype_check(wrapper, conjunct, module_value)
        if found is not None and found[1]:
            yield found


def _every_branch(wrapper, stmt: cst.If, module_value) -> dict[str, tuple[list[str], list[str]]]:
    """Tensors every branch of ``stmt`` checks (nested ifs alike), with the union of dtypes."""
    branches, node = [], stmt
    while isinstance(node, cst.If):
        branches.append(node.body)
        node = node.orelse.body if node.orelse is not None else None
        if isinstance(node, cst.IndentedBlock):  # ``else:``
            branches.append(node)
            node = None
        elif node is None:
            return {}  # no else: a path with no check
    per_branch = [_branch_checks(wrapper, b, module_value) for b in branches]
    common = set.intersection(*(set(c) for c in per_branch)) if per_branch else set()
    return {t: ([d for c in per_branch for d in c[t][0]], [w for c in per_branch for w in c[t][1]]) for t in common}


def _branch_checks(wrapper, block: cst.BaseSuite, module_value) -> dict[str, tuple[list[str], list[str]]]:
    out: dict[str, tuple[list[str], list[str]]] = {}
    for stmt in getattr(block, "body", ()):
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assert):
                    for tensor, dtypes in _checked(wrapper, small.test, module_value):
                        out[tensor] = (dtypes, [f"assert {wrapper.code(small.test)}"])
        elif isinstance(stmt, cst.If):
            for tensor, found in _every_branch(wrapper, stmt, module_value).items():
                out.setdefault(tensor, found)
    return out


def _keeps_dtype(wrapper, tensor: str) -> bool:
    """Every binding of ``tensor`` in the function is a method of itself that keeps its dtype
    (``a = a.view(-1, a.size(-1))``): a check anywhere then states the parameter's dtype."""
    for value in wrapper.assigned.get(tensor) or ():
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                and isinstance(value.func.value, cst.Name) and value.func.value.value == tensor
                and value.func.attr.value in SAME | SAME_FRESH):
            return False
    return True


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


def _element_dtype(node: cst.BaseExpression) -> str | None:
    """``torch.float8_e4m3fn``, or ``getattr(torch, "float8_e4m3fn", None)`` (a name older torch lacks)."""
    if (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "getattr"
            and len(node.args) >= 2 and isinstance(node.args[1].value, cst.SimpleString)):
        name = node.args[1].value.evaluated_value
        return name if name in TORCH_DTYPES else None
    return dtype_name(node)


def _dtype_set(wrapper, node: cst.BaseExpression, module_value) -> list[str] | None:
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        names = [_element_dtype(e.value) for e in node.elements]
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
