"""Uses of ``triton.autotune`` in one parsed file: ``@triton.autotune(...)`` decorators and the
call form ``k = triton.autotune(...)(fn)``, each turned into an ``AutotuneSite``."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import libcst as cst

from autotune_rewrite.evaluate import Evaluator, Pending, Unresolved, evaluate, to_configs, to_names
from autotune_rewrite.locate.kernels import KernelInfo, jit_options, kernel_info
from autotune_rewrite.locate.nesting import NestingVisitor
from autotune_rewrite.triton_names import AUTOTUNE, JIT
from autotune_rewrite.model import FORM_CALL, FORM_DECORATOR, AutotuneSite

# triton.autotune(configs, key, prune_configs_by, reset_to_zero, restore_value, ...)
_POSITIONAL = ("configs", "key", "prune_configs_by", "reset_to_zero", "restore_value")


@dataclass(frozen=True)
class SiteDraft:
    """A site as one file sees it; ``linking`` completes what needs other files."""

    site: AutotuneSite
    handle: str | None  # absolute name of the launchable object (``pkg.kernels._k``)
    pending: str | None  # configs need this name from another module
    kernel_ref: str | None  # call form over a kernel imported from another module


def _is_autotune_call(pm, node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Call) and bool(pm.names(node.func) & AUTOTUNE)


def _arguments(call: cst.Call) -> tuple[dict[str, cst.BaseExpression], cst.Arg | None]:
    out: dict[str, cst.BaseExpression] = {}
    star = None
    positional = 0
    for arg in call.args:
        if arg.star:
            star = star or arg
        elif arg.keyword is not None:
            out[arg.keyword.value] = arg.value
        else:
            if positional < len(_POSITIONAL):
                out[_POSITIONAL[positional]] = arg.value
            positional += 1
    return out, star


def _names_or_none(ev: Evaluator, pm, node) -> tuple[str, ...] | None:
    if node is None:
        return None
    try:
        return to_names(evaluate(ev, pm, node))
    except Unresolved:
        return None


def build_site(pm, call: cst.Call, form: str, kernel: KernelInfo | None, kernel_name: str,
               decorators: tuple[str, ...], resolve: Callable, handle: str | None, kernel_ref: str | None) -> SiteDraft:
    args, star = _arguments(call)
    configs = origin = reason = None
    pending = None
    configs_node = args.get("configs")
    if configs_node is None:
        reason = (f"autotune arguments are passed through {star.star}{pm.code(star.value).strip()}"
                  if star is not None else "no configs argument")
    else:
        ev = Evaluator(resolve=resolve)
        try:
            configs = to_configs(evaluate(ev, pm, configs_node))
            origin = ", ".join(ev.origin) or "literal list"
        except Pending as exc:
            pending, reason = exc.fq, f"configs {exc}"
        except Unresolved as exc:
            reason = f"configs: {exc}"
    ev = Evaluator(resolve=resolve)
    key = None
    if args.get("key") is not None:
        try:
            key = to_names(evaluate(ev, pm, args["key"]))
        except Pending as exc:  # e.g. ``key=KEYS`` imported from another module: linking retries
            pending = pending or exc.fq
        except Unresolved:
            pass
    prune = args.get("prune_configs_by")
    site = AutotuneSite(
        path=pm.path, line=pm.span(call).start_line, span=pm.span(call), form=form, kernel=kernel_name,
        kernel_span=kernel.span if kernel else None, kernel_path=kernel.path if kernel else None,
        params=kernel.params if kernel else (), do_not_specialize=kernel.do_not_specialize if kernel else (),
        decorators=decorators, key=key, key_span=pm.span(args["key"]) if "key" in args else None,
        configs=configs, configs_origin=origin,
        configs_span=pm.span(configs_node) if configs_node is not None else None,
        unresolved_reason=None if configs is not None else reason,
        prune_configs_by=pm.code(prune).strip() if prune is not None else None,
        reset_to_zero=_names_or_none(ev, pm, args.get("reset_to_zero")),
        restore_value=_names_or_none(ev, pm, args.get("restore_value")),
    )
    return SiteDraft(site, handle, pending, kernel_ref)


def _kernel_from_expr(pm, expr, bindings, depth=0):
    """What ``triton.autotune(...)(expr)`` wraps: (KernelInfo | None, name, extra decorators,
    do_not_specialize, imported name)."""
    if depth > 4:
        return None, pm.code(expr), (), (), None
    if isinstance(expr, cst.Call):
        jit_call = None
        if pm.names(expr.func) & JIT:
            jit_call = expr  # triton.jit(fn, do_not_specialize=...)
        elif isinstance(expr.func, cst.Call) and pm.names(expr.func.func) & JIT:
            jit_call = expr.func  # triton.jit(do_not_specialize=...)(fn)
        if jit_call is not None and expr.args:
            info, name, extra, _dns, ref = _kernel_from_expr(pm, expr.args[0].value, bindings, depth + 1)
            dns = jit_options(pm, jit_call, info.params) if info else ()
            if info is not None:
                info = replace(info, do_not_specialize=dns or info.do_not_specialize)
            return info, name, ("triton.jit", *extra), dns, ref
    if isinstance(expr, cst.Name):
        found = bindings.get(expr.value, [])
        if len(found) == 1 and isinstance(found[0], cst.FunctionDef):
            info = kernel_info(pm, found[0])
            return info, info.name, info.decorators, info.do_not_specialize, None
        if len(found) == 1:
            return _kernel_from_expr(pm, found[0], bindings, depth + 1)
        names = pm.names(expr)
        imported = sorted(n for n in names if not n.startswith(pm.module_name + "."))
        return None, expr.value, (), (), imported[0] if imported else None
    return None, pm.code(expr), (), (), None


class SiteFinder(NestingVisitor):
    """Collects ``SiteDraft``s; batchable, so it shares one traversal with the launch collector."""

    def __init__(self, pm, resolve):
        super().__init__()
        self.pm, self.resolve = pm, resolve
        self.sites: list[SiteDraft] = []
        self.bindings = pm.module_bindings()
        self.seen: set[int] = set()  # call-form nodes already reported (``visit_Assign`` sees them first)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        pm = self.pm
        for dec in node.decorators:
            if _is_autotune_call(pm, dec.decorator):
                info = kernel_info(pm, node)
                handle = f"{pm.module_name}.{node.name.value}" if not self.stack else None
                self.sites.append(build_site(pm, dec.decorator, FORM_DECORATOR, info, info.name,
                                             info.decorators, self.resolve, handle, None))
        super().visit_FunctionDef(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        self._call_form(node.value, node.targets[0].target if len(node.targets) == 1 else None)

    def visit_Call(self, node: cst.Call) -> None:
        # A call form not on the right of ``name = ...`` (e.g. passed along): no launch handle.
        if isinstance(node.func, cst.Call) and _is_autotune_call(self.pm, node.func):
            self._call_form(node, None)

    def _call_form(self, value, target) -> None:
        pm = self.pm
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Call) and _is_autotune_call(pm, value.func)):
            return
        if id(value) in self.seen:
            return
        self.seen.add(id(value))
        info, name, extra, _dns, ref = (_kernel_from_expr(pm, value.args[0].value, self.bindings)
                                        if value.args else (None, "?", (), (), None))
        handle = (f"{pm.module_name}.{target.value}"
                  if isinstance(target, cst.Name) and not self.stack else None)
        self.sites.append(build_site(pm, value.func, FORM_CALL, info, name,
                                     ("triton.autotune", *extra), self.resolve, handle, ref))


def find_sites(pm, resolve: Callable) -> list[SiteDraft]:
    finder = SiteFinder(pm, resolve)
    cst.visit_batched(pm.tree, [finder])
    return finder.sites


__all__ = ["SiteDraft", "SiteFinder", "build_site", "find_sites"]
