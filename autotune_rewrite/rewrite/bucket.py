"""v3's batch-size bucket: the ``bs_bucket`` parameter, key entry, ``do_not_specialize`` entry,
the caller-side helper and the launch-site keyword.

Bucket values: for edges ``e1 < e2 < ... < en`` the buckets are ``B <= e1``, ``e(i-1) < B <= ei``
and ``B > en``. The first bucket's value is 1, a middle bucket's is the largest power of two
inside it (its upper edge if none is), the last one's is ``2 * en``. ``--buckets 8,48`` gives
1 / 32 / 96 as in DOMAIN.md. The values only have to be distinct (the autotuner keys on them;
``do_not_specialize`` keeps them from causing recompiles); representative batch sizes make the
key readable in the autotuner's cache files.
"""

from __future__ import annotations

from typing import Sequence as Seq

import libcst as cst

from autotune_rewrite.errors import UserError
from autotune_rewrite.model import AutotuneSite, LaunchSite
from autotune_rewrite.rewrite.config_text import quote_char
from autotune_rewrite.rewrite.configs import autotune_arg
from autotune_rewrite.text_edits import Edit
from autotune_rewrite.rewrite.parsed import ParsedFile
from autotune_rewrite.rewrite.sequence import Sequence
from autotune_rewrite.triton_names import JIT

PARAM = "bs_bucket"
HELPER = "_bs_bucket"
DEFAULT_BUCKETS = (8, 48)
# Names a caller's batch size usually goes by, checked in the launching function's scope.
BATCH_NAMES = ("B", "bs", "batch", "batch_size", "num_seqs", "num_tokens", "n_tokens")


def parse_buckets(text: str | Seq[int]) -> tuple[int, ...]:
    try:
        edges = tuple(int(x) for x in (text.split(",") if isinstance(text, str) else text))
    except ValueError:
        raise UserError(f"--buckets {text!r}: give increasing positive integers, e.g. 8,48") from None
    if not edges or any(e < 1 for e in edges) or list(edges) != sorted(set(edges)):
        raise UserError(f"--buckets {text!r}: give increasing positive integers, e.g. 8,48")
    return edges


def bucket_values(edges: Seq[int]) -> tuple[int, ...]:
    values = [1]
    for lo, hi in zip(edges, edges[1:]):
        p = 1
        while p * 2 <= hi:
            p *= 2
        values.append(p if p > lo else hi)
    values.append(2 * edges[-1])
    return tuple(values)


def bucket_expr(edges: Seq[int], var: str = "B") -> str:
    values = bucket_values(edges)
    expr = str(values[-1])
    for edge, value in reversed(list(zip(edges, values))):
        inner = expr if expr == str(values[-1]) else f"({expr})"
        expr = f"{value} if {var} <= {edge} else {inner}"
    return expr


def helper_source(edges: Seq[int], nl: str, unit: str) -> str:
    names = ", ".join(str(v) for v in bucket_values(edges))
    return (
        f"def {HELPER}(B):{nl}"
        f"{unit}# autotune-rewrite v3: batch-size bucket ({names}) for the autotune key{nl}"
        f"{unit}return {bucket_expr(edges)}{nl}"
    )


# -- kernel side ---------------------------------------------------------------------------------


def _strings(node: cst.BaseExpression) -> list[str]:
    if isinstance(node, (cst.List, cst.Tuple)):
        return [e.value.evaluated_value for e in node.elements if isinstance(e.value, cst.SimpleString)]
    return []


def key_edits(pf: ParsedFile, call: cst.Call, site: AutotuneSite) -> list[Edit]:
    arg = autotune_arg(call, "key")
    why = f"v3: key {site.kernel} on {PARAM}"
    if arg is None:
        return Sequence(pf, call).append([f'key=["{PARAM}"]'], why)
    value = arg.value
    if PARAM in _strings(value):
        return []
    quote = quote_char(pf, pf.offsets(value)[0])
    if isinstance(value, (cst.List, cst.Tuple)) and (not isinstance(value, cst.Tuple) or value.lpar):
        return Sequence(pf, value).append([f"{quote}{PARAM}{quote}"], why)
    s, e = pf.offsets(value)
    return [Edit(s, e, f"[*{pf.code(value)}, {quote}{PARAM}{quote}]", why)]


def find_kernel(pf: ParsedFile, site: AutotuneSite) -> cst.FunctionDef:
    if site.kernel_span is not None:
        node = pf.find(cst.FunctionDef, site.kernel_span, f"kernel {site.kernel}")
        if node.name.value == site.kernel:
            return node
    for node in pf.walk(cst.FunctionDef):
        if node.name.value == site.kernel:
            return node
    raise UserError(f"{pf.path}: kernel {site.kernel} not found; re-run the scan")


def insert_index(fn: cst.FunctionDef, launches: Seq[LaunchSite], site: AutotuneSite) -> int:
    """Before the first constexpr, after every argument a caller passes positionally, and
    before any parameter with a default (``bs_bucket`` has none: a defaulted key is dropped)."""
    params = list(fn.params.params)
    idx = next(
        (i for i, p in enumerate(params) if p.annotation is not None and "constexpr" in cst.Module([]).code_for_node(p.annotation.annotation)),
        len(params),
    )
    idx = max([idx] + [ls.positional for ls in launches])
    first_default = next((i for i, p in enumerate(params) if p.default is not None), len(params))
    if idx > first_default or idx > len(params):
        raise UserError(
            f"{site.kernel_path or site.path}: cannot place {PARAM} in {site.kernel}'s signature: callers pass "
            f"{idx} arguments positionally and parameter {first_default} has a default; pass them by keyword"
        )
    return idx


def _param_text(pf: ParsedFile, fn: cst.FunctionDef) -> str:
    """``bs_bucket: tl.int32`` when the kernel spells constexprs as ``<alias>.constexpr``: the
    annotation pins the type for Triton (``KernelParam.annotation_type``) and for ``check``'s
    launch specs, so no settings entry is needed; plain ``bs_bucket`` otherwise."""
    for p in fn.params.params:
        if p.annotation is not None and isinstance(p.annotation.annotation, cst.Attribute):
            ann = p.annotation.annotation
            if ann.attr.value == "constexpr":
                return f"{PARAM}: {pf.code(ann.value)}.int32"
    return PARAM


def signature_edits(pf: ParsedFile, fn: cst.FunctionDef, idx: int, site: AutotuneSite) -> list[Edit]:
    params = list(fn.params.params)
    if any(p.name.value == PARAM for p in list(params) + list(fn.params.kwonly_params)):
        return []
    why = f"v3: add parameter {PARAM} to {site.kernel}"
    param_text = _param_text(pf, fn)
    src, nl = pf.src, pf.src.newline
    if idx < len(params):
        at = pf.offsets(params[idx])[0]
        if src.only_whitespace(src.line_start(at), at):
            line = src.line_start(at)
            return [Edit(line, line, f"{src.indent_at(at)}{param_text},{nl}", why)]
        return [Edit(at, at, f"{param_text}, ", why)]
    if not params:
        at = pf.text.index("(", pf.offsets(fn.name)[1]) + 1
        return [Edit(at, at, param_text, why)]
    last = params[-1]
    end = pf.offsets(last)[1]
    if isinstance(last.comma, cst.Comma):
        comma_end = pf.offsets(last.comma)[0] + 1
        start = pf.offsets(last)[0]
        if src.only_whitespace(src.line_start(start), start):
            at = src.line_end(comma_end)
            return [Edit(at, at, f"{src.indent_at(start)}{param_text},{nl}", why)]
        return [Edit(comma_end, comma_end, f" {param_text},", why)]
    return [Edit(end, end, f", {param_text}", why)]


def _is_jit(pf: ParsedFile, expr: cst.BaseExpression) -> bool:
    target = expr.func if isinstance(expr, cst.Call) else expr
    names = pf.qualified_names(target)
    if names & JIT:
        return True
    return not names and pf.code(target).split(".")[-1] == "jit"


def _shift_ints(pf: ParsedFile, value: cst.BaseExpression, idx: int, why: str) -> list[Edit]:
    """Integer entries of do_not_specialize count parameters: the new one shifts those after it."""
    edits = []
    if isinstance(value, (cst.List, cst.Tuple)):
        for el in value.elements:
            if isinstance(el.value, cst.Integer) and int(el.value.value, 0) >= idx:
                s, e = pf.offsets(el.value)
                edits.append(Edit(s, e, str(int(el.value.value, 0) + 1), why))
    return edits


def jit_edits(pf: ParsedFile, fn: cst.FunctionDef, idx: int, site: AutotuneSite, inserted: bool) -> list[Edit]:
    why = f"v3: compile {site.kernel} once for every {PARAM} value"
    for dec in fn.decorators:
        if not _is_jit(pf, dec.decorator):
            continue
        expr = dec.decorator
        quote = quote_char(pf, pf.offsets(expr)[0])
        entry = f"{quote}{PARAM}{quote}"
        if not isinstance(expr, cst.Call):
            end = pf.offsets(expr)[1]
            return [Edit(end, end, f"(do_not_specialize=[{entry}])", why)]
        edits = []
        for arg in expr.args:
            if arg.keyword is not None and arg.keyword.value == "do_not_specialize_on_alignment" and inserted:
                edits += _shift_ints(pf, arg.value, idx, why)
        for arg in expr.args:
            if arg.keyword is not None and arg.keyword.value == "do_not_specialize":
                if PARAM in _strings(arg.value):
                    return edits
                if inserted:
                    edits += _shift_ints(pf, arg.value, idx, why)
                if isinstance(arg.value, cst.List) or (isinstance(arg.value, cst.Tuple) and arg.value.lpar):
                    return edits + Sequence(pf, arg.value).append([entry], why)
                s, e = pf.offsets(arg.value)
                return edits + [Edit(s, e, f"[*{pf.code(arg.value)}, {entry}]", why)]
        return edits + Sequence(pf, expr).append([f"do_not_specialize=[{entry}]"], why)
    raise UserError(f"{pf.path}: {site.kernel} has no @triton.jit decorator this tool can edit")


# -- caller side ---------------------------------------------------------------------------------


def _bound_names(fn: cst.FunctionDef) -> set[str]:
    """Names a function binds itself (parameters, assignments, loop/with targets), not in
    nested functions or classes."""
    names = {p.name.value for p in fn.params.params + fn.params.kwonly_params + fn.params.posonly_params}

    class _Targets(cst.CSTVisitor):
        def visit_FunctionDef(self, node):
            return node is fn

        def visit_ClassDef(self, node):
            return False

        def visit_Lambda(self, node):
            return False

        def _names(self, target):
            if isinstance(target, cst.Name):
                names.add(target.value)
            elif isinstance(target, (cst.Tuple, cst.List)):
                for el in target.elements:
                    self._names(el.value)
            elif isinstance(target, cst.StarredElement):
                self._names(target.value)

        def visit_AssignTarget(self, node):
            self._names(node.target)

        def visit_AnnAssign(self, node):
            self._names(node.target)

        def visit_For(self, node):
            self._names(node.target)

        def visit_AsName(self, node):
            self._names(node.name)

        def visit_NamedExpr(self, node):
            self._names(node.target)

    fn.visit(_Targets())
    return names


def enclosing_function(pf: ParsedFile, node: cst.CSTNode) -> cst.FunctionDef | None:
    s, e = pf.offsets(node)
    best = None
    for fn in pf.walk(cst.FunctionDef):
        fs, fe = pf.offsets(fn)
        if fs <= s and e <= fe and (best is None or fs >= pf.offsets(best)[0]):
            best = fn
    return best


def batch_expr_for(pf: ParsedFile, call: cst.Call, launch: LaunchSite, given: str | None) -> str:
    if given:
        try:
            cst.parse_expression(given)
        except (cst.ParserSyntaxError, cst.CSTValidationError):
            raise UserError(f"--batch-expr {given!r} is not a Python expression") from None
        return given
    fn = enclosing_function(pf, call)
    where = f"{launch.path}:{launch.line}"
    if fn is None:
        raise UserError(f"{where}: launch at module level, cannot infer the batch size; pass --batch-expr")
    found = [n for n in BATCH_NAMES if n in _bound_names(fn)]
    if len(found) == 1:
        return found[0]
    if not found:
        raise UserError(
            f"{where}: cannot infer the batch size in {fn.name.value}() (no local named "
            f"{', '.join(BATCH_NAMES)}); pass --batch-expr, e.g. --batch-expr 'q.shape[0]'"
        )
    raise UserError(f"{where}: batch size is ambiguous in {fn.name.value}() ({', '.join(found)}); pass --batch-expr")


def find_launch(pf: ParsedFile, launch: LaunchSite) -> cst.Call:
    node = pf.find(cst.Call, launch.span, f"launch of {launch.callee}")
    return node


def launch_edits(pf: ParsedFile, launch: LaunchSite, batch_expr: str | None, kernel: str) -> list[Edit]:
    call = find_launch(pf, launch)
    if launch.has_star_args or any(a.star for a in call.args):
        raise UserError(
            f"{launch.path}:{launch.line}: the launch of {kernel} passes *args/**kwargs, so adding "
            f"{PARAM}= cannot be checked; pass the arguments explicitly or add {PARAM} by hand"
        )
    if any(a.keyword is not None and a.keyword.value == PARAM for a in call.args):
        return []
    expr = batch_expr_for(pf, call, launch, batch_expr)
    return Sequence(pf, call).append([f"{PARAM}={HELPER}({expr})"], f"v3: pass {PARAM} to {kernel}")


def helper_edits(pf: ParsedFile, edges: Seq[int]) -> list[Edit]:
    """Define ``_bs_bucket`` once per caller module, after the imports."""
    want = helper_source(edges, pf.src.newline, pf.indent_unit())
    for fn in pf.module.body:
        if isinstance(fn, cst.FunctionDef) and fn.name.value == HELPER:
            if pf.code(fn).strip() == want.strip():
                return []
            raise UserError(f"{pf.path}: already defines {HELPER}() with other buckets; remove it or pass matching --buckets")
    anchor = None
    for stmt in pf.module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                break
            continue
        if all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body):
            anchor = stmt
        elif anchor is None and stmt is pf.module.body[0] and isinstance(stmt.body[0], cst.Expr):
            anchor = stmt  # the module docstring
    nl = pf.src.newline
    why = f"v3: add {HELPER}()"
    if anchor is None:
        return [Edit(0, 0, want + nl + nl, why)]
    at = pf.src.line_end(pf.offsets(anchor.body[-1])[1])
    # PEP 8: two blank lines around a top-level def; count the ones already below the imports.
    blank = 0
    for line_start in pf.src.line_starts[pf.src.line_of(at) - 1 :] if at < len(pf.text) else []:
        line_end = pf.src.line_end(line_start)
        if pf.text[line_start:line_end].strip():
            break
        blank += 1
    return [Edit(at, at, nl + nl + want + nl * max(0, 2 - blank), why)]
