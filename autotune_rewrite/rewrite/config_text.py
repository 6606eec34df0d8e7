"""Write a ``triton.Config(...)`` element in the file's own style.

A config derived from one the file already spells out (same tile, other num_warps/num_stages)
is that element's text with the two numbers changed, so its quotes, spacing, ``pre_hook=`` and
``maxnreg=`` come along. A config with no literal ancestor is written fresh, using the name
the file already uses for ``Config`` and its quote character.
"""

from __future__ import annotations

import re

import libcst as cst

from autotune_rewrite.errors import UserError
from autotune_rewrite.model import DEFAULT_NUM_CTAS, DEFAULT_NUM_STAGES, DEFAULT_NUM_WARPS, ConfigValue
from autotune_rewrite.rewrite.parsed import ParsedFile
from autotune_rewrite.triton_names import CONFIG

# triton.Config(kwargs, num_warps=4, num_stages=3, num_ctas=1, maxnreg=None, pre_hook=None)
_POSITIONAL = {"num_warps": 1, "num_stages": 2}


def _with_number(call: cst.Call, name: str, value: int, default: int) -> cst.Call:
    args = list(call.args)
    for i, arg in enumerate(args):
        if (arg.keyword is not None and arg.keyword.value == name) or (
            arg.keyword is None and not arg.star and i == _POSITIONAL[name]
        ):
            if isinstance(arg.value, cst.Integer) and int(arg.value.value, 0) == value:
                return call
            args[i] = arg.with_changes(value=cst.Integer(str(value)))
            return call.with_changes(args=args)
    if value == default:  # left to Triton's default in the template, and still the default
        return call
    if args and isinstance(args[-1].comma, cst.Comma):
        last_comma = args[-1].comma
        new = cst.Arg(
            keyword=cst.Name(name),
            value=cst.Integer(str(value)),
            equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
            comma=last_comma,
        )
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        args.append(new)
    else:
        args.append(
            cst.Arg(
                keyword=cst.Name(name),
                value=cst.Integer(str(value)),
                equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
            )
        )
    return call.with_changes(args=args)


def derive(template_file: ParsedFile, template_call: cst.Call, config: ConfigValue) -> str:
    """The template element's text with ``config``'s num_warps and num_stages."""
    call = _with_number(template_call, "num_warps", config.effective_num_warps, DEFAULT_NUM_WARPS)
    call = _with_number(call, "num_stages", config.effective_num_stages, DEFAULT_NUM_STAGES)
    if call is template_call:
        return template_file.code(template_call)
    return template_file.module.code_for_node(call)


def config_alias(pf: ParsedFile, autotune_call: cst.Call) -> str:
    """How this file names ``triton.Config``: from an existing element, else from the imports."""
    for call in pf.walk(cst.Call):
        if pf.qualified_names(call.func) & CONFIG:
            return pf.code(call.func)
    func = autotune_call.func
    if isinstance(func, cst.Attribute):  # ``triton.autotune`` / ``tt.autotune`` -> same module's Config
        return f"{pf.code(func.value)}.Config"
    for node in pf.walk(cst.ImportFrom):
        module = pf.code(node.module) if node.module else ""
        if isinstance(node.names, cst.ImportStar):
            if f"{module}.Config" in CONFIG:
                return "Config"  # ``from triton import *`` binds it
            continue
        if f"{module}.Config" in CONFIG:
            for alias in node.names:
                if pf.code(alias.name) == "Config":
                    return pf.code(alias.asname.name) if alias.asname else "Config"
    for node in pf.walk(cst.Import):
        for alias in node.names:
            if pf.code(alias.name) == "triton":
                return (pf.code(alias.asname.name) if alias.asname else "triton") + ".Config"
    raise UserError(
        f"{pf.path}: no name for triton.Config in this file; add `import triton` (or "
        "`from triton import Config`) and re-run"
    )


def quote_char(pf: ParsedFile, near: int) -> str:
    """The quote the file uses for strings: the nearest string literal before ``near`` wins."""
    best = None
    for node in pf.walk(cst.SimpleString):
        start = pf.offsets(node)[0]
        if start <= near or best is None:
            best = node
        if start > near:
            break
    if best is None:
        return '"'
    prefix = re.match(r"[A-Za-z]*", best.value).group(0)
    return best.value[len(prefix)]


def _literal(value: object, quote: str) -> str:
    if isinstance(value, str):
        return quote + value.replace("\\", "\\\\").replace(quote, "\\" + quote) + quote
    return repr(value)


def fresh(alias: str, quote: str, config: ConfigValue) -> str:
    if config.has_pre_hook:
        raise UserError(
            f"config {config.label()} has a pre_hook and is not written literally; "
            "write the configs out as a literal list so the rewrite can keep the hook"
        )
    meta = ", ".join(f"{_literal(k, quote)}: {_literal(v, quote)}" for k, v in config.kwargs.items())
    parts = [f"{{{meta}}}", f"num_warps={config.effective_num_warps}", f"num_stages={config.effective_num_stages}"]
    if config.effective_num_ctas != DEFAULT_NUM_CTAS:
        parts.append(f"num_ctas={config.effective_num_ctas}")
    if config.maxnreg is not None:
        parts.append(f"maxnreg={config.maxnreg}")
    return f"{alias}({', '.join(parts)})"
