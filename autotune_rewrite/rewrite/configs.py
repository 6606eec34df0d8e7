"""The ``configs=`` edit: keep, drop and add ``triton.Config`` elements.

When ``configs=`` is a literal list whose elements the scan resolved one by one, only the
dropped and added elements' lines change. Otherwise (a comprehension, a helper call, a
variable) the ``configs=`` expression itself is replaced with a literal list, and the summary
says so, because the generator can no longer express the new list.
"""

from __future__ import annotations

from typing import Callable

import libcst as cst

from autotune_rewrite.model import AutotuneSite
from autotune_rewrite.rewrite import config_text
from autotune_rewrite.rewrite.edits import Edit
from autotune_rewrite.rewrite.parsed import ParsedFile
from autotune_rewrite.rewrite.sequence import Sequence
from autotune_rewrite.rewrite.variants import Decision, PlannedConfig

# triton.autotune(configs, key, prune_configs_by=None, reset_to_zero=None, restore_value=None, ...)
AUTOTUNE_POSITIONAL = ("configs", "key")


def autotune_arg(call: cst.Call, name: str) -> cst.Arg | None:
    for i, arg in enumerate(call.args):
        if arg.keyword is not None:
            if arg.keyword.value == name:
                return arg
        elif not arg.star and i < len(AUTOTUNE_POSITIONAL) and AUTOTUNE_POSITIONAL[i] == name:
            return arg
    return None


def find_autotune_call(pf: ParsedFile, site: AutotuneSite) -> cst.Call:
    call = pf.find(cst.Call, site.span, "@triton.autotune(...) call")
    # Call form ``triton.autotune(configs=...)(kernel)``: the span may cover the outer call.
    while isinstance(call.func, cst.Call) and autotune_arg(call, "configs") is None:
        call = call.func
    return call


def _literal_elements(pf: ParsedFile, site: AutotuneSite, value: cst.BaseExpression) -> list[int] | None:
    """Element index of each site config when ``value`` is a list literal spelled out one
    ``Config`` per element in this file; None otherwise."""
    if not isinstance(value, cst.List) or len(value.elements) != len(site.configs or ()):
        return None
    starts = {}
    for j, el in enumerate(value.elements):
        if not isinstance(el, cst.Element) or not isinstance(el.value, cst.Call):
            return None
        s = pf.span(el.value)
        starts[(s.start_line, s.start_col)] = j
    out = []
    for c in site.configs or ():
        if c.span is None or (c.path not in (None, site.path)):
            return None
        j = starts.get((c.span.start_line, c.span.start_col))
        if j is None:
            return None
        out.append(j)
    return out if sorted(out) == list(range(len(out))) else None


class ConfigRenderer:
    """Text for a planned config: the written element, a derived copy, or a fresh call."""

    def __init__(self, pf: ParsedFile, site: AutotuneSite, call: cst.Call, load: Callable[[str], ParsedFile]):
        self.pf, self.site, self.call, self.load = pf, site, call, load
        self._alias: str | None = None

    def _element(self, index: int) -> tuple[ParsedFile, cst.Call] | None:
        c = (self.site.configs or ())[index]
        if c.span is None:
            return None
        pf = self.load(c.path or self.site.path)
        node = pf.find(cst.Call, c.span, f"config {c.label()}")
        return pf, node

    def text(self, p: PlannedConfig) -> str:
        source = p.kept if p.kept is not None else p.template
        found = self._element(source) if source is not None else None
        if found is not None:
            pf, node = found
            if p.kept is not None:
                return pf.code(node)
            return config_text.derive(pf, node, p.config)
        if self._alias is None:
            self._alias = config_text.config_alias(self.pf, self.call)
        quote = config_text.quote_char(self.pf, self.pf.offsets(self.call)[0])
        return config_text.fresh(self._alias, quote, p.config)


def config_edits(
    pf: ParsedFile, site: AutotuneSite, decision: Decision, load: Callable[[str], ParsedFile]
) -> tuple[list[Edit], list[str]]:
    """Edits to the site's file that turn its config list into ``decision.configs``."""
    if not decision.changes_configs:
        return [], []
    call = find_autotune_call(pf, site)
    arg = autotune_arg(call, "configs")
    if arg is None:
        raise ValueError(f"{site.ident}: the scan resolved configs but the call has no configs argument")
    render = ConfigRenderer(pf, site, call, load)
    why = f"{decision.variant}: {len(decision.configs)} config(s) for {site.kernel}"
    elements = _literal_elements(pf, site, arg.value)
    if elements is not None:
        seq = Sequence(pf, arg.value)
        keep = [elements[p.kept] for p in decision.configs if p.kept is not None]
        new = [render.text(p) for p in decision.configs if p.kept is None]
        return seq.keep_and_append(keep, new, why), []
    # Not a literal list: write the whole list out.
    start, end = pf.offsets(arg.value)
    nl, unit = pf.src.newline, pf.indent_unit()
    outer = pf.src.indent_at(pf.offsets(arg)[0])
    body = "".join(f"{outer}{unit}{render.text(p)},{nl}" for p in decision.configs)
    text = f"[{nl}{body}{outer}]"
    note = (
        f"{site.path}:{site.line}: configs come from {site.configs_origin or 'an expression'}, which cannot "
        f"express the new list; replaced `configs=` with a literal list of {len(decision.configs)}"
    )
    if site.data_files:  # the table lives in a data file: that file is what a maintainer would edit
        note += f"; the configs are read from {', '.join(site.data_files)}, which is where this change belongs"
    return [Edit(start, end, text, why)], [note]
