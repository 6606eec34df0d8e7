"""The ``configs=`` edit: keep, drop and add ``triton.Config`` elements where they are written.

The edit lands where the configs are written (``inplace``): the decorator's own literal list, a
module variable's, a helper's ``return [...]``, or the literal lists a comprehension or loop
runs over; only the dropped and added elements change, the decorator stays as it is when the
list lives elsewhere. A product of loops whose dead configs share every element with launchable
ones gets a condition over its loop variables instead (``dead_filter``). When no exact edit
exists there, the kernel is refused with the reason,
unless an inline list is asked for (``--inline-configs``): then ``configs=`` itself becomes a
literal list and the summary says so.
"""

from __future__ import annotations

from typing import Callable, Sequence as Seq

import libcst as cst

from autotune_rewrite.model import AutotuneSite
from autotune_rewrite.rewrite import config_text, dead_code, dead_filter, inplace
from autotune_rewrite.rewrite.facts import DataFileNote, InlinedNote, InPlaceRefused, NoInPlaceEdit
from autotune_rewrite.text_edits import Edit
from autotune_rewrite.rewrite.parsed import ParsedFile
from autotune_rewrite.rewrite.sequence import Sequence
from autotune_rewrite.rewrite.decision import Decision, PlannedConfig

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


class ConfigRenderer:
    """Text for a planned config: the written element, a derived copy, or a fresh call."""

    def __init__(self, pf: ParsedFile, site: AutotuneSite, call: cst.Call, load: Callable[[str], ParsedFile],
                 near: int | None = None):
        # ``pf``: the file the text goes into; ``near``: where (its quote style is read there).
        self.pf, self.site, self.call, self.load = pf, site, call, load
        self.near = pf.offsets(call)[0] if near is None else near
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
        quote = config_text.quote_char(self.pf, self.near)
        return config_text.fresh(self._alias, quote, p.config)


def config_edits(
    pf: ParsedFile, site: AutotuneSite, decision: Decision, load: Callable[[str], ParsedFile],
    users: Seq[inplace.User] = (), inline: bool = False, repo_texts: Callable[[], dict[str, str]] | None = None,
) -> tuple[dict[str, list[Edit]], list[str]]:
    """Edits (by file) that turn the site's config list into ``decision.configs``: where the
    configs are written when an exact edit exists there (``inplace``); else, only with
    ``inline``, ``configs=`` becomes a literal list; else ``InPlaceRefused``."""
    if not decision.changes_configs:
        return {}, []
    call = find_autotune_call(pf, site)
    arg = autotune_arg(call, "configs")
    if arg is None:
        raise ValueError(f"{site.ident}: the scan resolved configs but the call has no configs argument")
    why = f"{decision.variant}: {len(decision.configs)} config(s) for {site.kernel}"
    kept = [p.kept for p in decision.configs if p.kept is not None]
    new = [p for p in decision.configs if p.kept is None]
    first_new = next((i for i, p in enumerate(decision.configs) if p.kept is None), len(decision.configs))
    if any(p.kept is not None for p in decision.configs[first_new:]):
        found = NoInPlaceEdit(site.ident, "reordered", ())
    else:
        found = inplace.plan(site, kept, len(new), inplace.Written(load, site.path), users)
    if isinstance(found, inplace.InPlacePlan):
        return _in_place(pf, site, call, found, new, load, why, arg)
    if found.why == "entangled" and not new:  # a product of loops: a condition in the comprehension
        found = dead_filter.filter_edits(site, kept, load, users, found, why)
        if not isinstance(found, NoInPlaceEdit):
            edits, note = found
            return edits, [note]
    if not inline:
        raise InPlaceRefused(found)
    edits, notes = _inline(pf, site, call, arg, decision, load, why)
    if repo_texts is not None:
        for path, more in dead_code.unused_after_inline(pf, arg.value, load, repo_texts).items():
            edits.setdefault(path, []).extend(more)
            notes.append(f"{path}: removed what the inline list left unused")
    notes.insert(0, InlinedNote(site.path, site.line, found))
    return edits, notes


def _in_place(pf, site, call, found: inplace.InPlacePlan, new, load, why, arg):
    edits: dict[str, list[Edit]] = {}
    targets = [(p, s, list(k)) for p, s, k in found.keep]
    if found.append_to is not None and not any((p, s) == found.append_to for p, s, _ in targets):
        p, s = found.append_to
        node = load(p).find(cst.BaseExpression, s, "config list")
        targets.append((p, s, list(range(len(node.elements)))))
    for path, span, keep in targets:
        home = load(path)
        node = home.find(cst.BaseExpression, span, "config list")
        texts = []
        if (path, span) == found.append_to:
            render = ConfigRenderer(home, site, call, load, near=home.offsets(node)[0])
            texts = [render.text(p) for p in new]
        edits.setdefault(path, []).extend(Sequence(home, node).keep_and_append(keep, texts, why))
    notes = []
    lo, hi = pf.offsets(arg.value)
    inside = [p == site.path and lo <= pf.src.span_offsets(s)[0] < hi for p, s, _ in targets]
    if not all(inside):
        notes.append(f"{site.path}:{site.line}: edited where the configs are written ({', '.join(found.where)}); "
                     "the decorator is unchanged")
    elif pf.span(arg.value) not in [s for _, s, _ in targets]:
        notes.append(f"{site.path}:{site.line}: removed elements of the literal list(s) the configs are generated "
                     f"from ({', '.join(found.where)}); the generator stays")
    return edits, notes


def _inline(pf, site, call, arg, decision, load, why):
    """Write the whole list out in ``configs=`` (asked for with ``--inline-configs``)."""
    render = ConfigRenderer(pf, site, call, load)
    start, end = pf.offsets(arg.value)
    nl, unit = pf.src.newline, pf.indent_unit()
    note = (
        f"{site.path}:{site.line}: configs come from {site.configs_origin or 'an expression'}, which cannot "
        f"express the new list; replaced `configs=` with a literal list of {len(decision.configs)}"
    )
    texts = [render.text(p) for p in decision.configs]
    open_at = pf.text.index("(", pf.offsets(call.func)[1])
    close_at = pf.offsets(call)[1] - 1
    if "\n" not in pf.text[open_at:close_at] and "\r" not in pf.text[open_at:close_at] and pf.text[close_at] == ")":
        # A one-line call: a list one config per line cannot stay inside it the way black and
        # ruff format write it, so the call is exploded as they would: one argument per line,
        # with the magic trailing comma.
        lead = pf.src.indent_at(open_at)
        inner = lead + unit
        body = "".join(f"{inner}{unit}{t},{nl}" for t in texts)
        parts = []
        for a in call.args:
            a_start, a_end = pf.offsets(a)[0], pf.offsets(a.value)[1]
            if a is arg:
                parts.append(f"{pf.text[a_start:start]}[{nl}{body}{inner}]")
            else:
                parts.append(pf.text[a_start:a_end])
        text = "(" + nl + "".join(f"{inner}{p},{nl}" for p in parts) + lead + ")"
        return {site.path: [Edit(open_at, close_at + 1, text, why)]}, [_data_note(site, note)]
    outer = pf.src.indent_at(pf.offsets(arg)[0])
    body = "".join(f"{outer}{unit}{t},{nl}" for t in texts)
    return {site.path: [Edit(start, end, f"[{nl}{body}{outer}]", why)]}, [_data_note(site, note)]


def _data_note(site, note: str) -> str | DataFileNote:
    return DataFileNote(note, tuple(site.data_files)) if site.data_files else note
