"""Uses of ``triton.autotune`` in one parsed file: ``@triton.autotune(...)`` decorators, the
call form ``k = triton.autotune(...)(fn)`` and decorator objects applied later
(``tuner = triton.autotune(...)``; ``@tuner`` / ``tuner(fn)``), each turned into an
``AutotuneSite``. Every alias counts (``aliases``)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import libcst as cst
from libcst.metadata import GlobalScope

from autotune_rewrite.evaluate import Evaluator, Pending, Unresolved, evaluate, to_names
from autotune_rewrite.locate.aliases import ModuleNames, expr_names, meanings, module_names
from autotune_rewrite.locate.kernels import KernelInfo, jit_options, kernel_info
from autotune_rewrite.locate.nesting import NestingVisitor
from autotune_rewrite.locate.per_target import Resolution, TargetContext, resolve_configs
from autotune_rewrite.triton_names import AUTOTUNE, HEURISTICS, JIT, is_autotune, is_triton_module
from autotune_rewrite.model import FORM_CALL, FORM_DECORATOR, AutotuneSite, Span

# triton.autotune(configs, key, prune_configs_by, reset_to_zero, restore_value, ...)
_POSITIONAL = ("configs", "key", "prune_configs_by", "reset_to_zero", "restore_value")


@dataclass(frozen=True)
class SiteDraft:
    """A site as one file sees it; ``linking`` completes what needs other files."""

    site: AutotuneSite
    handle: str | None  # absolute name of the launchable object (``pkg.kernels._k``)
    pending: str | None  # configs need this name from another module
    kernel_ref: str | None  # call form over a kernel imported from another module
    deferred: bool = False  # configs ask the device or environment: linking resolves them per target


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
               decorators: tuple[str, ...], resolve: Callable, handle: str | None, kernel_ref: str | None,
               context: TargetContext | None = None) -> SiteDraft:
    args, star = _arguments(call)
    configs_node = args.get("configs")
    if configs_node is None:
        found = Resolution(reason=(f"autotune arguments are passed through {star.star}{pm.code(star.value).strip()}"
                                   if star is not None else "no configs argument"))
    else:
        found = resolve_configs(pm, configs_node, resolve, context, args.get("prune_configs_by"))
    configs, origin, reason, pending = found.configs, found.origin, found.reason, found.pending
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
        configs_by_target=found.by_target,
        data_files=found.data_files,
        environment=found.environment,
    )
    return SiteDraft(site, handle, pending, kernel_ref, found.deferred)


def _kernel_from_expr(pm, expr, bindings, depth=0):
    """What ``triton.autotune(...)(expr)`` wraps: (KernelInfo | None, name, extra decorators,
    do_not_specialize, imported name). Wrappers between the two (``triton.jit(fn)``,
    ``triton.heuristics(h)(fn)``) are seen through: the kernel is the ``def`` they wrap."""
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
        if isinstance(expr.func, cst.Call) and pm.names(expr.func.func) & HEURISTICS and expr.args:
            info, name, extra, dns, ref = _kernel_from_expr(pm, expr.args[0].value, bindings, depth + 1)
            return info, name, ("triton.heuristics", *extra), dns, ref
    if isinstance(expr, cst.Name):
        local = _local_def(pm, expr)
        if local is not None:  # a def in the enclosing function (a kernel built by a factory)
            info = kernel_info(pm, local)
            return info, info.name, info.decorators, info.do_not_specialize, None
        found = bindings.get(expr.value, [])
        if len(found) == 1 and isinstance(found[0], cst.FunctionDef):
            info = kernel_info(pm, found[0])
            return info, info.name, info.decorators, info.do_not_specialize, None
        if len(found) == 1:
            return _kernel_from_expr(pm, found[0], bindings, depth + 1)
        return None, expr.value, (), (), _imported(pm, expr)
    if isinstance(expr, cst.Attribute):  # ``mod.kernel`` of an imported module: named by its def
        return None, expr.attr.value, (), (), _imported(pm, expr)
    return None, pm.code(expr), (), (), None


def _imported(pm, expr) -> str | None:
    imported = sorted(n for n in pm.names(expr) if not n.startswith(pm.module_name + "."))
    return imported[0] if imported else None


def _local_def(pm, name: cst.Name) -> cst.FunctionDef | None:
    """The one ``def`` a name inside a function is bound to, when that is its only binding."""
    scope = pm.scope(name)
    if scope is None or isinstance(scope, GlobalScope):
        return None
    bound = list(scope[name.value])
    if len(bound) == 1 and isinstance(bound[0].node, cst.FunctionDef) and bound[0].scope is scope:
        return bound[0].node
    return None


class SiteFinder(NestingVisitor):
    """Collects ``SiteDraft``s; batchable, so it shares one traversal with the launch collector.

    ``triton.autotune`` is recognised by what a name means (``aliases``): LibCST's qualified
    names, the file's own aliases (``_AT = triton.autotune``, a conditional alias, star
    imports) and ``autotune``, names of other modules the linking pass found to mean it. A name
    of another module of the tree (``tree_names``) that might mean it is kept in ``foreign``
    for that pass. A decorator object kept in a variable (``tuner = triton.autotune(...)``,
    also under an ``if``) is a site where it is applied: ``@tuner`` or ``k = tuner(fn)``."""

    def __init__(self, pm, resolve, names: ModuleNames | None = None, tree_names: frozenset[str] = frozenset(),
                 autotune: frozenset[str] = frozenset(), context: TargetContext | None = None,
                 only: Span | None = None):
        super().__init__()
        self.pm, self.resolve, self.context = pm, resolve, context
        self.only = only  # build only the sites of the autotune call at this span (linking's retry)
        self.sites: list[SiteDraft] = []
        self.bindings = pm.module_bindings()
        self.seen: set[int] = set()  # call-form nodes already reported (``visit_Assign`` sees them first)
        self.aliases = (names or module_names(pm)).aliases
        self.tree_names, self.known = tree_names, AUTOTUNE | autotune
        self.foreign: set[str] = set()
        self.tuners: dict[cst.Name, cst.Call] = {}  # ``tuner = triton.autotune(...)``: target -> call
        self.tuner_names: set[str] = set()
        # Where a name of ``tuner_names`` is applied: (the name node, form, the decorated def or
        # the applying call, the decorator's index or the call's assignment target, at module level)
        self.applied: list[tuple] = []

    def autotune_spelling(self, func: cst.BaseExpression) -> str | None:
        """The Triton name ``func`` means when it is ``triton.autotune`` (through any alias)."""
        pm = self.pm
        names = meanings(pm, expr_names(pm, func), self.aliases)
        hit = sorted(names & self.known)
        if hit:
            return hit[0] if hit[0] in AUTOTUNE else "triton.autotune"
        if is_autotune(names):
            return "triton.autotune"
        own = pm.module_name + "."
        self.foreign.update(n for n in names if not n.startswith(own) and n.split(".", 1)[0] in self.tree_names
                            and not is_triton_module(n.split(".", 1)[0]))
        return None

    def _builds(self, autotune: cst.Call) -> bool:
        return self.only is None or self.pm.span(autotune) == self.only

    def _is_autotune_call(self, node) -> bool:
        return isinstance(node, cst.Call) and self.autotune_spelling(node.func) is not None

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        pm = self.pm
        for i, dec in enumerate(node.decorators):
            d = dec.decorator
            spelling = self.autotune_spelling(d.func) if isinstance(d, cst.Call) else None
            if spelling is not None and self._builds(d):
                info = _spelled(kernel_info(pm, node), i, spelling)
                handle = f"{pm.module_name}.{node.name.value}" if not self.stack else None
                self.sites.append(build_site(pm, d, FORM_DECORATOR, info, info.name,
                                             info.decorators, self.resolve, handle, None, self.context))
            elif isinstance(d, cst.Name) and d.value in self.tuner_names:
                self.applied.append((d, FORM_DECORATOR, node, i, not self.stack))
        super().visit_FunctionDef(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        target = node.targets[0].target if len(node.targets) == 1 else None
        value = node.value
        if isinstance(target, cst.Name) and isinstance(value, cst.Call) and self._is_autotune_call(value):
            self.tuners[target] = value  # a decorator object, applied later
            self.tuner_names.add(target.value)
            return
        self._call_form(value, target)

    def visit_Call(self, node: cst.Call) -> None:
        # A call form not on the right of ``name = ...`` (e.g. passed along): no launch handle.
        if isinstance(node.func, cst.Call) and self._is_autotune_call(node.func):
            self._call_form(node, None)
        elif isinstance(node.func, cst.Name) and node.func.value in self.tuner_names and node.args \
                and id(node) not in self.seen:
            self.applied.append((node.func, FORM_CALL, node, None, False))

    def _call_form(self, value, target) -> None:
        if not isinstance(value, cst.Call) or id(value) in self.seen:
            return
        if isinstance(value.func, cst.Call) and self._is_autotune_call(value.func):
            self.seen.add(id(value))
            self._wrapping(value.func, value, target)
        elif isinstance(value.func, cst.Name) and value.func.value in self.tuner_names and value.args:
            self.seen.add(id(value))
            self.applied.append((value.func, FORM_CALL, value, target, not self.stack))

    def _wrapping(self, autotune: cst.Call, call: cst.Call, target) -> None:
        """A site of the call form: ``autotune`` (the ``triton.autotune(...)`` call) applied by
        ``call`` to the kernel expression; ``target`` is what the result is assigned to."""
        pm = self.pm
        if not self._builds(autotune):
            return
        info, name, extra, _dns, ref = (_kernel_from_expr(pm, call.args[0].value, self.bindings)
                                        if call.args else (None, "?", (), (), None))
        handle = (f"{pm.module_name}.{target.value}"
                  if isinstance(target, cst.Name) and not self.stack else _module_attribute(pm, target))
        bound = pm.code(target).strip() if isinstance(target, (cst.Name, cst.Attribute)) else None
        draft = build_site(pm, autotune, FORM_CALL, info, name, ("triton.autotune", *extra), self.resolve, handle, ref,
                           self.context)
        self.sites.append(replace(draft, site=replace(draft.site, bound_to=bound)))

    def leave_Module(self, original_node: cst.Module) -> None:
        # Where a decorator object is applied: one site per ``triton.autotune(...)`` the name
        # may be bound to there (``if``/``else`` may bind two).
        pm = self.pm
        for name, form, where, index_or_target, top in self.applied:
            scope = pm.scope(name)
            calls = [self.tuners[a.node] for a in (scope[name.value] if scope is not None else ())
                     if a.node in self.tuners]
            for autotune in sorted(calls, key=lambda c: pm.span(c).start_line):
                if form != FORM_DECORATOR:
                    self._wrapping(autotune, where, index_or_target if top else None)
                elif self._builds(autotune):
                    info = _spelled(kernel_info(pm, where), index_or_target, "triton.autotune")
                    handle = f"{pm.module_name}.{where.name.value}" if top else None
                    self.sites.append(build_site(pm, autotune, FORM_DECORATOR, info, info.name, info.decorators,
                                                 self.resolve, handle, None, self.context))


def _spelled(info: KernelInfo, index: int, spelling: str) -> KernelInfo:
    """``info`` with its ``index``-th decorator named as the Triton name it means."""
    decorators = list(info.decorators)
    if index < len(decorators):
        decorators[index] = spelling
    return replace(info, decorators=tuple(decorators))


def find_sites(pm, resolve: Callable, autotune: frozenset[str] = frozenset(),
               context: TargetContext | None = None, only: Span | None = None) -> list[SiteDraft]:
    """The module's sites; ``only``: just those of the autotune call at that span."""
    finder = SiteFinder(pm, resolve, autotune=autotune, context=context, only=only)
    cst.visit_batched(pm.tree, [finder])
    return finder.sites


def _module_attribute(pm, target) -> str | None:
    """``mod.k = triton.autotune(...)(mod.k)`` (anywhere, often in a class's ``__init__``):
    the absolute name ``pkg.mod.k`` it rebinds, which every launch reading ``mod``'s global
    ``k`` at call time goes through; None for any other target (``self.k = ...``)."""
    if not isinstance(target, cst.Attribute) or not isinstance(target.value, (cst.Name, cst.Attribute)):
        return None
    names = pm.names(target)
    return next(iter(names)) if len(names) == 1 else None


__all__ = ["SiteDraft", "SiteFinder", "build_site", "find_sites"]
