"""The ``@triton.jit`` function an autotune site wraps: its parameters and decorator stack."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from autotune_rewrite.evaluate import Evaluator, Known, Unresolved, evaluate, outcome, to_names
from autotune_rewrite.triton_names import CONSTEXPR, JIT
from autotune_rewrite.model import KernelParam, Span


@dataclass(frozen=True)
class KernelInfo:
    name: str
    path: str
    span: Span
    params: tuple[KernelParam, ...]
    do_not_specialize: tuple[str, ...]
    decorators: tuple[str, ...]  # qualified names, outermost first


def decorator_name(pm, expr: cst.BaseExpression) -> str:
    """Qualified name of a decorator (``triton.jit`` for ``@tl_jit(...)``), else its text."""
    func = expr.func if isinstance(expr, cst.Call) else expr
    names = pm.names(func)
    triton = sorted(n for n in names if n.startswith("triton."))
    if triton:
        return triton[0]
    return sorted(names)[0] if names else pm.code(func)


def params_of(pm, fn: cst.FunctionDef, resolve=None) -> tuple[KernelParam, ...]:
    """The parameters as written, each default evaluated statically (``resolve`` follows names
    imported from other modules; without it they stay unknown)."""
    p = pm.original(fn).params
    ev = Evaluator(resolve=resolve or _no_imports)
    out = []
    for i, param in enumerate([*p.posonly_params, *p.params, *p.kwonly_params]):
        ann = param.annotation.annotation if param.annotation is not None else None
        ann_text = pm.code(ann) if ann is not None else None
        is_constexpr = ann is not None and (
            bool(pm.annotation_names(ann) & CONSTEXPR)
            or (isinstance(ann, cst.SimpleString) and ann.evaluated_value.rsplit(".", 1)[-1] == "constexpr")
        )
        default = pm.code(param.default) if param.default is not None else None
        known, value = False, None
        if param.default is not None:
            result = outcome(ev, pm, param.default)
            # Only plain values reach a launch spec (a list default is not a kernel argument).
            if isinstance(result, Known) and isinstance(result.value, (bool, int, float, str, type(None))):
                known, value = True, result.value
        out.append(KernelParam(param.name.value, i, ann_text, is_constexpr, default, known, value))
    return tuple(out)


def jit_options(pm, call: cst.Call, params: tuple[KernelParam, ...]) -> tuple[str, ...]:
    """``do_not_specialize`` of ``triton.jit(do_not_specialize=[...])``: names (indices mapped)."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "do_not_specialize":
            try:
                value = evaluate(Evaluator(resolve=_no_imports), pm, arg.value)
            except Unresolved:
                return ()
            items = list(value) if isinstance(value, (list, tuple)) else [value]
            names = []
            for item in items:
                if isinstance(item, int) and 0 <= item < len(params):
                    names.append(params[item].name)
                elif isinstance(item, str):
                    names.append(item)
            return tuple(names)
    return ()


def _no_imports(fq: str):
    raise Unresolved(f"uses `{fq}`")


def kernel_info(pm, fn: cst.FunctionDef) -> KernelInfo:
    params = params_of(pm, fn)
    dns: tuple[str, ...] = ()
    for d in fn.decorators:
        if isinstance(d.decorator, cst.Call) and pm.names(d.decorator.func) & JIT:
            dns = jit_options(pm, d.decorator, params)
    return KernelInfo(
        name=fn.name.value, path=pm.path, span=pm.span(fn), params=params, do_not_specialize=dns,
        decorators=tuple(decorator_name(pm, d.decorator) for d in fn.decorators),
    )


def is_jit(pm, fn: cst.FunctionDef) -> bool:
    return any(pm.names(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) & JIT
               for d in fn.decorators)


__all__ = ["KernelInfo", "decorator_name", "is_jit", "jit_options", "kernel_info", "params_of", "to_names"]
