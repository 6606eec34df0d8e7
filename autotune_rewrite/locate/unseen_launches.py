"""Uses of a kernel that ``locate.launches`` cannot follow to a ``kernel[grid](...)`` call.

v3 adds a ``bs_bucket`` parameter and edits every launch it sees; a launch it cannot see keeps
calling the old signature and fails at run time. So before v3 edits a kernel, every reference
to it in the tree is classified: a launch with plain arguments, an import, an alias
(``fn = k``, ``a if c else k``, ``wrap_triton(k)``: ``launches`` follows those), a read of an
attribute such as ``k.configs`` are seen; anything else is listed here: ``*args`` forwarding,
``getattr`` by name (literal, or a computed name on the kernel's module), the kernel stored in
a dict/list/tuple or passed to a function (a registry), ``k.run(...)``/``k.warmup(...)``.
Conservative on purpose: a reference it cannot place is unseen.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import libcst as cst

from autotune_rewrite.files import discover, module_name
from autotune_rewrite.locate.parsed import ParsedModule
from autotune_rewrite.model import AutotuneSite
from autotune_rewrite.triton_names import WRAP_TRITON

# UnseenLaunch.why
STAR_ARGS = "star_args"  # k[grid](*args) / (**kwargs): which slot gets bs_bucket is unknown
GETATTR = "getattr"  # getattr(mod, "k") or getattr(mod, name)
STORED = "stored"  # {"k": k}, [k], (k, ...): launched later through the container
PASSED = "passed"  # f(k): launched inside another function under another name
DIRECT_RUN = "direct_run"  # k.run(...), k.warmup(...)

_RUN_ATTRS = frozenset({"run", "warmup", "__getitem__", "__call__"})
_CONTAINERS = (cst.Element, cst.DictElement, cst.StarredElement, cst.StarredDictElement)


@dataclass(frozen=True)
class UnseenLaunch:
    path: str
    line: int
    code: str  # the source text of the use
    why: str  # STAR_ARGS | GETATTR | STORED | PASSED | DIRECT_RUN


class _Uses(cst.CSTVisitor):
    def __init__(self, pm: ParsedModule, name: str, module: str):
        self.pm, self.name, self.module = pm, name, module
        self.stack: list[cst.CSTNode] = []
        self.found: list[tuple[cst.CSTNode, str]] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.Import, cst.ImportFrom)):
            return False
        if isinstance(node, cst.Call):
            self._getattr(node)
        if isinstance(node, cst.Name) and node.value == self.name or (
                isinstance(node, cst.Attribute) and node.attr.value == self.name):
            self._reference(node)
        self.stack.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if self.stack and self.stack[-1] is original_node:
            self.stack.pop()

    def _is_kernel(self, node: cst.CSTNode) -> bool:
        return any(n == f"{self.module}.{self.name}" or n.endswith(f".{self.name}") for n in self.pm.names(node))

    def _getattr(self, call: cst.Call) -> None:
        if "builtins.getattr" not in self.pm.names(call.func) or len(call.args) < 2:
            return
        attr = call.args[1].value
        if isinstance(attr, cst.SimpleString):
            if attr.evaluated_value == self.name:
                self.found.append((call, GETATTR))
        elif self.module in self.pm.names(call.args[0].value):
            self.found.append((call, GETATTR))

    def _reference(self, node: cst.CSTNode) -> None:
        parent = self.stack[-1] if self.stack else None
        if isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Param, cst.AssignTarget, cst.ImportAlias)):
            return
        if isinstance(parent, cst.Attribute) and parent.attr is node:
            return  # ``x.k``: the Attribute itself is visited as the reference
        if not self._is_kernel(node):
            return
        why = self._context(node, len(self.stack) - 1)
        if why is not None:
            self.found.append((node, why))

    def _context(self, node: cst.CSTNode, i: int) -> str | None:
        while i >= 0 and isinstance(self.stack[i], (cst.IfExp, cst.ParenthesizedWhitespace)):
            node, i = self.stack[i], i - 1  # ``a if c else k``: what holds the whole choice decides
        parent = self.stack[i] if i >= 0 else None
        grand = self.stack[i - 1] if i >= 1 else None
        if isinstance(parent, cst.Subscript) and parent.value is node:
            if isinstance(grand, cst.Call) and grand.func is parent:
                return STAR_ARGS if any(a.star for a in grand.args) else None
            return STORED  # ``k[grid]`` kept and called later
        if isinstance(parent, (cst.Assign, cst.AnnAssign, cst.AugAssign)) or isinstance(parent, cst.Decorator):
            return None  # an alias ``launches`` follows, or the decorator stack
        if isinstance(parent, cst.Attribute) and parent.value is node:
            return DIRECT_RUN if parent.attr.value in _RUN_ATTRS else None
        if isinstance(parent, cst.Arg) and isinstance(grand, cst.Call):
            return None if self.pm.names(grand.func) & WRAP_TRITON else PASSED
        if isinstance(parent, _CONTAINERS):
            return STORED
        if isinstance(parent, (cst.Return, cst.Yield)):
            return PASSED
        return None  # ``if k is None``, ``print(k.configs)``: not a launch


def unseen_launches(root: Path, site: AutotuneSite, exclude: tuple[str, ...] = ()) -> tuple[UnseenLaunch, ...]:
    """Every use of ``site``'s kernel under ``root`` that may launch it where v3 cannot see."""
    name = site.bound_to or site.kernel
    module = module_name(site.path)
    fileset = discover(Path(root), exclude)
    word = name.encode()
    out: list[UnseenLaunch] = []
    for rel in fileset.files:
        try:
            data = (fileset.root / rel).read_bytes()
        except OSError:
            continue
        if word not in data:
            continue
        try:
            pm = ParsedModule.parse(rel, data.decode("utf-8"), module_name(rel), rel.endswith("__init__.py"))
        except (UnicodeDecodeError, cst.ParserSyntaxError, cst.CSTValidationError):
            continue  # the scan reports files it cannot parse
        uses = _Uses(pm, name, module)
        pm.tree.visit(uses)
        for node, why in uses.found:
            out.append(UnseenLaunch(rel, pm.span(node).start_line, pm.code(node).strip(), why))
    return tuple(sorted(set(out), key=lambda u: (u.path, u.line)))


__all__ = ["DIRECT_RUN", "GETATTR", "PASSED", "STAR_ARGS", "STORED", "UnseenLaunch", "unseen_launches"]
