"""``kernel[grid](...)`` launch sites in one parsed file, and what the subscripted object can be.

What a launch calls is found by following names, not by spelling: local aliases
(``fn = k64 if c else k32``: both), ``wrap_triton(k)``, and imports through LibCST's qualified
names (``from .kernels import _k``, ``kernels._k``). The result is a set of absolute dotted
names; ``linking`` matches them to sites, so two kernels that share a name in different files
are never confused.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from libcst.metadata import Assignment

from autotune_rewrite.evaluate import Evaluator, Known, outcome
from autotune_rewrite.wrapper.launch_args import launch_arguments
from autotune_rewrite.locate.nesting import NestingVisitor
from autotune_rewrite.triton_names import WRAP_TRITON
from autotune_rewrite.model import LaunchSite


@dataclass(frozen=True)
class LaunchDraft:
    launch: LaunchSite
    targets: frozenset[str]  # absolute names the subscripted object may be
    # Names of other modules its arguments' context objects asked for (``ctx = make_ctx(...)``
    # imported): linking reads the arguments again with the whole tree (``linking._relaunched``).
    imports: tuple[str, ...] = ()


class LaunchCollector(NestingVisitor):
    """Collects subscript calls and local assignments; ``drafts()`` resolves them."""

    def __init__(self, pm, resolve=None):
        super().__init__()
        self.pm = pm
        self.resolve = resolve  # another module's name -> value; None: the per-file pass
        self.values: dict[cst.Name, cst.BaseExpression] = {}  # assignment target -> value
        self.calls: list[tuple[cst.Call, str | None, cst.FunctionDef | None]] = []
        self.functions: list[cst.FunctionDef] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        super().visit_FunctionDef(node)
        self.functions.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        super().leave_FunctionDef(original_node)
        self.functions.pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            if isinstance(t.target, cst.Name):
                self.values[t.target] = node.value

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None and isinstance(node.target, cst.Name):
            self.values[node.target] = node.value

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Subscript):
            self.calls.append((node, ".".join(self.stack) if self.stack else None,
                               self.functions[-1] if self.functions else None))

    def drafts(self) -> list[LaunchDraft]:
        return _drafts(self)


def _targets(pm, values, expr, depth=0) -> set[str]:
    if depth > 8:
        return set()
    if isinstance(expr, cst.IfExp):
        return _targets(pm, values, expr.body, depth + 1) | _targets(pm, values, expr.orelse, depth + 1)
    if isinstance(expr, cst.Call):
        if pm.names(expr.func) & WRAP_TRITON and expr.args:
            return _targets(pm, values, expr.args[0].value, depth + 1)
        return set()
    if isinstance(expr, cst.Name):
        scope = pm.scope(expr)
        out: set[str] = set()
        followed = False
        if scope is not None and expr.value in scope:
            for a in scope[expr.value]:
                value = values.get(a.node) if isinstance(a, Assignment) else None
                if value is not None and not _made_by_call(pm, value):
                    followed = True
                    out |= _targets(pm, values, value, depth + 1)
        if not followed:
            out |= pm.names(expr)
        return out
    if isinstance(expr, cst.Attribute):
        return set(pm.names(expr))
    return set()


def _made_by_call(pm, value) -> bool:
    """``k = <call>`` other than ``wrap_triton(...)``: the launch names ``k`` itself, which is
    the handle of a call-form site (``k = triton.autotune(...)(fn)``, through any alias, or
    ``k = tuner(fn)``), and of nothing else."""
    return isinstance(value, cst.Call) and not pm.names(value.func) & WRAP_TRITON


def _module_constants(pm):
    """name -> (known, value) of the launch file's own module-level constants (no imports)."""
    ev = Evaluator(resolve=_no_imports)
    bindings = pm.module_bindings()

    def lookup(name: str):
        nodes = bindings.get(name)
        if not nodes or len(nodes) != 1 or isinstance(nodes[0], (cst.FunctionDef, cst.ClassDef)):
            return False, None
        result = outcome(ev, pm, nodes[0])
        return (True, result.value) if isinstance(result, Known) else (False, None)

    return lookup


def _no_imports(fq: str):
    from autotune_rewrite.evaluate import Unresolved

    raise Unresolved(f"`{fq}` is imported")


def _asking(asked: list[str]):
    """Per-file pass: another module's name is not followed here, but noted."""

    def resolve(fq: str):
        asked.append(fq)
        _no_imports(fq)

    return resolve


def find_launches(pm, resolve=None, only: set | None = None) -> list[LaunchDraft]:
    """The module's launches; ``only``: just those at these spans (linking's re-read)."""
    collector = LaunchCollector(pm, resolve)
    cst.visit_batched(pm.tree, [collector])
    return _drafts(collector, only)


def _drafts(collector: LaunchCollector, only: set | None = None) -> list[LaunchDraft]:
    pm = collector.pm
    out = []
    for call, function, fn_node in collector.calls:
        span = pm.span(call)
        if only is not None and span not in only:
            continue
        sub = call.func
        targets = _targets(pm, collector.values, sub.value)
        if not targets:
            continue
        grid = ", ".join(pm.code(el.slice).strip() for el in sub.slice)
        asked: list[str] = []
        resolve = collector.resolve or _asking(asked)
        out.append(LaunchDraft(
            LaunchSite(
                path=pm.path, line=span.start_line, span=span, callee=pm.code(sub.value).strip(), grid=grid,
                positional=sum(1 for a in call.args if a.keyword is None and not a.star),
                keywords=tuple(a.keyword.value for a in call.args if a.keyword is not None),
                has_star_args=any(a.star for a in call.args), function=function,
                arguments=launch_arguments(pm, call, fn_node, _module_constants(pm), resolve),
            ),
            frozenset(targets), tuple(dict.fromkeys(asked)),
        ))
    return out


__all__ = ["LaunchCollector", "LaunchDraft", "find_launches"]
