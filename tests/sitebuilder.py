"""Build the scan's AutotuneSite for small inline sources, for the rewrite unit tests.

The real locator lives in ``autotune_rewrite.locate.scan``; these tests exercise the transforms on
their own, so they read the few facts a transform needs straight from LibCST here.
"""

from __future__ import annotations

import ast

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from autotune_rewrite.model import AutotuneSite, ConfigValue, KernelParam, LaunchSite, Span


def _span(pos, node):
    r = pos[node]
    return Span(r.start.line, r.start.column, r.end.line, r.end.column)


def _config(call: cst.Call, module: cst.Module, span=None, path=None) -> ConfigValue:
    kwargs = ast.literal_eval(module.code_for_node(call.args[0].value))
    kw = {}
    for i, a in enumerate(call.args[1:], start=1):
        name = a.keyword.value if a.keyword else {1: "num_warps", 2: "num_stages"}[i]
        if name == "pre_hook":
            kw["has_pre_hook"] = True
        else:
            kw[name] = ast.literal_eval(module.code_for_node(a.value))
    return ConfigValue(kwargs=kwargs, span=span, path=path, **kw)


def build_site(files: dict[str, str], kernel: str, site_path: str, configs=None, origin="literal list") -> AutotuneSite:
    wrappers = {p: MetadataWrapper(cst.parse_module(t)) for p, t in files.items()}
    w = wrappers[site_path]
    pos = w.resolve(PositionProvider)
    module = w.module
    fn = next(n for n in _walk(module, cst.FunctionDef) if n.name.value == kernel)
    auto = next(
        d.decorator for d in fn.decorators
        if isinstance(d.decorator, cst.Call) and module.code_for_node(d.decorator.func).endswith("autotune")
    )
    cfg_arg = next(a for i, a in enumerate(auto.args) if (a.keyword and a.keyword.value == "configs") or (a.keyword is None and i == 0))
    key_arg = next((a for i, a in enumerate(auto.args) if (a.keyword and a.keyword.value == "key") or (a.keyword is None and i == 1)), None)
    if configs is None:
        configs = tuple(
            _config(el.value, module, _span(pos, el.value), site_path) for el in cfg_arg.value.elements
        )
        origin = "literal list"
    params = tuple(
        KernelParam(
            name=p.name.value,
            index=i,
            annotation=module.code_for_node(p.annotation.annotation) if p.annotation else None,
            is_constexpr=bool(p.annotation and "constexpr" in module.code_for_node(p.annotation.annotation)),
        )
        for i, p in enumerate(fn.params.params)
    )
    launches = []
    for path, lw in wrappers.items():
        lpos = lw.resolve(PositionProvider)
        for call in _walk(lw.module, cst.Call):
            if isinstance(call.func, cst.Subscript) and lw.module.code_for_node(call.func.value).split(".")[-1] == kernel:
                launches.append(
                    LaunchSite(
                        path=path,
                        line=lpos[call].start.line,
                        span=_span(lpos, call),
                        callee=lw.module.code_for_node(call.func.value),
                        grid=lw.module.code_for_node(call.func.slice[0].slice.value),
                        positional=sum(1 for a in call.args if a.keyword is None and not a.star),
                        keywords=tuple(a.keyword.value for a in call.args if a.keyword),
                        has_star_args=any(a.star for a in call.args),
                    )
                )
    key = None
    if key_arg is not None and isinstance(key_arg.value, (cst.List, cst.Tuple)):
        key = tuple(e.value.evaluated_value for e in key_arg.value.elements if isinstance(e.value, cst.SimpleString))
    return AutotuneSite(
        path=site_path,
        line=_span(pos, auto).start_line,
        span=_span(pos, auto),
        form="decorator",
        kernel=kernel,
        kernel_span=_span(pos, fn),
        kernel_path=site_path,
        params=params,
        do_not_specialize=(),
        decorators=(),
        key=key,
        key_span=_span(pos, key_arg.value) if key_arg is not None else None,
        configs=tuple(configs),
        configs_origin=origin,
        configs_span=_span(pos, cfg_arg.value),
        unresolved_reason=None,
        launches=tuple(launches),
    )


def _walk(module, kind):
    out = []

    class V(cst.CSTVisitor):
        def on_visit(self, node):
            if isinstance(node, kind):
                out.append(node)
            return True

    module.visit(V())
    return out
