"""The device-aware guard: configs that cannot launch on some fleet targets only, pruned there.

A config that launches on sm_90 but not on sm_120 must not be deleted for the H100 user. The
guard keeps it in ``configs=`` and adds an ``early_config_prune`` (Triton calls it before
benchmarking, on the device the launch runs on) that drops it where it cannot launch:

    # Configs that cannot launch on some GPUs this kernel serves (...), by the capability ...
    _GEMM_KERNEL_CANNOT_LAUNCH = {
        120: [  # sm_120
            # 147,456 B shared memory > 101,376 B opt-in (launch spec fp16)
            ({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64}, 8, 4),
        ],
    }


    def _prune_gemm_kernel(configs, named_args, **kwargs):
        arch = triton.runtime.driver.active.get_current_target().arch
        dead = _GEMM_KERNEL_CANNOT_LAUNCH.get(arch, [])
        return [c for c in configs if (c.kwargs, c.num_warps, c.num_stages) not in dead]

Why this form: it runs at the first launch (never at import, so no CUDA initialisation when
the module is imported, which forking servers need), asks Triton's own driver (no torch
needed; on AMD ``arch`` is a string and nothing is pruned), lists the dead configs with the
compiled numbers a reviewer can check, and leaves every other GPU's list byte for byte as
before. The scan runs it per target (``locate/early_prune``), so ``check`` on the patched tree
shows those targets fixed and the others unchanged. An existing ``early_config_prune`` is
composed, not replaced: the helper drops the dead configs, then calls it; a guard written by an
earlier run is extended instead (``guard_extend``).
"""

from __future__ import annotations

import re

import libcst as cst

from autotune_rewrite.errors import UserError
from autotune_rewrite.model import AutotuneSite
from autotune_rewrite.rewrite import config_text
from autotune_rewrite.rewrite.configs import autotune_arg
from autotune_rewrite.line_split import bracketed
from autotune_rewrite.rewrite.guard_extend import extend_edits
from autotune_rewrite.rewrite.guard_text import by_capability, capability_block, guard_comment
from autotune_rewrite.text_edits import Edit
from autotune_rewrite.rewrite.parsed import ParsedFile
from autotune_rewrite.rewrite.sequence import Sequence
from autotune_rewrite.rewrite.decision import Decision, config_key

KEY = "early_config_prune"
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*\Z")


def guard_edits(pf: ParsedFile, site: AutotuneSite, decision: Decision, call: cst.Call) -> list[Edit]:
    """Edits adding the guard for ``decision.guarded`` to the site's file ([] when none)."""
    if not decision.guarded:
        return []
    _refuse_ambiguous(site, decision)
    quote = config_text.quote_char(pf, pf.offsets(call)[0])
    why = f"guard {len(decision.guarded)} config(s) of {site.kernel} per target"
    # The site already has a guard (the fleet grew): its table gets the rows. Only when the scan
    # ran it, as for any pruner ours is composed with (``_prune_argument``).
    extended = extend_edits(pf, call, decision, quote, why) if KEY in (site.configs_origin or "") else None
    if extended is not None:
        return extended
    triton = _triton_name(pf)
    taken = _bound_names(pf)
    stem = site.kernel.lstrip("_") or "kernel"
    if site.ident_line is not None:  # twin defs of one name: a guard each
        stem += f"_l{site.ident_line}"
    table = _free(f"_{stem.upper()}_CANNOT_LAUNCH", taken)
    helper = _free(f"_prune_{stem}", taken)
    previous, arg_edits = _prune_argument(pf, site, decision, call, helper, quote, why)
    text = _helper_text(pf, decision, table, helper, triton, quote, previous, _triton_version())
    at = _insert_at(pf, call)
    return [*_after_imports(pf, at, why), Edit(at, at, text, why), *arg_edits]


def _prune_argument(pf: ParsedFile, site: AutotuneSite, decision: Decision, call: cst.Call, helper: str,
                    quote: str, why: str) -> tuple[str | None, list[Edit]]:
    """(the early pruner ours must call after it, or None; the edits naming ours in
    ``prune_configs_by``, whose other keys stay as written)."""
    prune = autotune_arg(call, "prune_configs_by")
    if prune is None:
        return None, Sequence(pf, call).append([f"prune_configs_by={{{quote}{KEY}{quote}: {helper}}}"], why)
    if not isinstance(prune.value, cst.Dict):
        raise UserError(f"{site.path}:{site.line}: prune_configs_by is `{pf.code(prune.value)}`, not a literal dict; "
                        f"the device guard for {site.kernel} cannot be composed with it (write it as a dict)")
    el = next((e for e in prune.value.elements if isinstance(e, cst.DictElement)
               and isinstance(e.key, cst.SimpleString) and e.key.evaluated_value == KEY), None)
    if el is None:
        return None, [_dict_insert(pf, prune.value, f"{quote}{KEY}{quote}: {helper}", why)]
    # Compose: ours first, then theirs on what is left. Theirs may read the launch's arguments,
    # which the scan cannot: it then runs ours and takes theirs as keeping every config
    # (locate/early_prune), so the re-check still sees what ours prunes on each target.
    previous = pf.code(el.value)
    s, e = pf.offsets(el.value)
    return (previous if _IDENT.match(previous) else f"({previous})"), [Edit(s, e, helper, why)]


def _triton_version() -> str:
    """The Triton the verdicts were compiled with (the one installed here)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("triton")
    except PackageNotFoundError:
        return ""


def _refuse_ambiguous(site: AutotuneSite, decision: Decision) -> None:
    """The guard tells configs apart by (meta-parameters, num_warps, num_stages): two configs
    that differ only in num_ctas/maxnreg/pre_hook, one guarded and one not, cannot be."""
    def short(c):
        return (tuple(sorted((k, repr(v)) for k, v in c.kwargs.items())), c.effective_num_warps, c.effective_num_stages)

    for g in decision.guarded:
        for p in decision.configs:
            if short(p.config) == short(g.config) and config_key(p.config) != config_key(g.config):
                other = next((h for h in decision.guarded if config_key(h.config) == config_key(p.config)), None)
                if other is None or other.archs != g.archs:
                    raise UserError(f"{site.ident}: {g.config.label()} and {p.config.label()} differ only in "
                                    "num_ctas/maxnreg/pre_hook, which the device guard does not tell apart")


def _triton_name(pf: ParsedFile) -> str:
    for node in pf.walk(cst.Import):
        for alias in node.names:
            if pf.code(alias.name) == "triton":
                return pf.code(alias.asname.name) if alias.asname else "triton"
    raise UserError(f"{pf.path}: the device guard asks Triton's driver for the GPU, but this file has no "
                    "`import triton`; add it and re-run")


def _bound_names(pf: ParsedFile) -> set[str]:
    return {n.value for n in pf.walk(cst.Name)}


def _free(name: str, taken: set[str]) -> str:
    out, i = name, 2
    while out in taken:
        out, i = f"{name}_{i}", i + 1
    return out


def _helper_text(pf, decision: Decision, table: str, helper: str, triton: str, quote: str,
                 previous: str | None, triton_version: str) -> str:
    nl, unit, width = pf.src.newline, pf.indent_unit(), pf.line_length
    many_specs = len(decision.specs) > 1
    blocks = [capability_block(guards, cap, many_specs, quote, unit, unit, nl, width)
              for cap, guards in by_capability(decision).items()]

    # Each statement as the formatters write it at the file's width (the ``arch =`` line is 63 columns).
    def split(head: str, items: list[str], tail: str, joint: str = ", ", indent: str = unit) -> str:
        return indent + bracketed(head, items, tail, at=len(indent), indent=indent, unit=unit, nl=nl, width=width,
                                  joint=joint) + nl

    args = ["configs", "named_args", "**kwargs"]
    keep = ["c", "for c in configs", "if (c.kwargs, c.num_warps, c.num_stages) not in dead"]
    body = [f"{unit}arch = {triton}.runtime.driver.active.get_current_target().arch{nl}",
            split(f"dead = {table}.get(", ["arch", "[]"], ")")]
    if previous is None:
        body.append(split("return [", keep, "]", joint=" "))
    else:
        body.append(split("configs = [", keep, "]", joint=" "))
        body.append(split(f"return {previous}(", args, ")"))
    return (guard_comment(triton_version, nl, width) + f"{table} = {{{nl}" + "".join(blocks) + f"}}{nl}{nl}{nl}"
            + split(f"def {helper}(", args, "):", indent="") + "".join(body) + f"{nl}{nl}")


def _insert_at(pf: ParsedFile, call: cst.Call) -> int:
    """Before the module-level statement that holds the autotune call, above its own comments."""
    at = pf.offsets(call)[0]
    stmt = next((s for s in pf.module.body if _start(pf, s) <= at < pf.offsets(s)[1]), None)
    if stmt is None:
        raise UserError(f"{pf.path}: the autotune call is not inside a module-level statement")
    src, text = pf.src, pf.text
    start = src.line_start(_start(pf, stmt))
    while start > 0:
        prev = src.line_start(start - 1)
        if not text[prev:start].strip().startswith("#"):
            break
        start = prev
    return start


def _after_imports(pf: ParsedFile, at: int, why: str) -> list[Edit]:
    """One blank line, not the decorated def's two, between imports and a guard right below them:
    black (since 24) writes one before a statement that is not a def; ruff accepts either."""
    last = next((s for s in reversed(pf.module.body) if pf.offsets(s)[1] <= at), None)
    if not (isinstance(last, cst.SimpleStatementLine)
            and all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in last.body)):
        return []
    end = pf.src.line_end(pf.offsets(last)[1] - 1)
    if pf.text[end:at].strip() or pf.src.line_of(at) - pf.src.line_of(end) < 2:
        return []
    return [Edit(end, at, pf.src.newline, why)]


def _start(pf: ParsedFile, stmt: cst.CSTNode) -> int:
    """Where a statement starts, its decorators included (LibCST's position starts at ``def``)."""
    decorators = getattr(stmt, "decorators", ())
    return pf.offsets(decorators[0])[0] if decorators else pf.offsets(stmt)[0]


def _dict_insert(pf: ParsedFile, node: cst.Dict, text: str, why: str) -> Edit:
    """``text`` as the dict's first entry, in its layout (own line when entries are on lines)."""
    s, _ = pf.offsets(node)
    open_end = s + 1
    first = node.elements[0] if node.elements else None
    if first is None:
        return Edit(open_end, open_end, text, why)
    fs = pf.offsets(first)[0]
    if pf.src.only_whitespace(pf.src.line_start(fs), fs) and pf.src.line_of(fs) > pf.src.line_of(s):
        line = pf.src.line_start(fs)
        return Edit(line, line, f"{pf.src.indent_at(fs)}{text},{pf.src.newline}", why)
    return Edit(fs, fs, f"{text}, ", why)


__all__ = ["KEY", "guard_edits"]
