"""Isolated kernel loading: cut a kernel and what it needs out of its module, without running it.

The target module's top level may import torch or the serving engine, read environment variables,
write files or simply raise. None of that may run during ``check``. So instead of importing the
module we read it with LibCST and emit a new, self-contained module text (a ``KernelBundle``)
holding only:

- the kernel's ``def`` with ``@triton.jit`` (autotune / heuristics / foreign decorators dropped;
  ``@triton.jit`` added when the kernel was wrapped by a call such as ``triton.jit(fn)``),
- the ``@triton.jit`` helpers it reaches, transitively, in the same module or in modules of the
  repository imported by name (``from .helpers import f``, ``import pkg.helpers as h; h.f``),
- the module-level constants they read when the right-hand side is static (literals, arithmetic
  on other constants, ``tl.constexpr(...)``),
- the Triton imports those definitions name.

Names are resolved with LibCST's ``ScopeProvider``: what a def reads from the global scope, and
the qualified name of each decorator (which one is ``triton.jit``), through the scope's own
``get_qualified_names_for``. Only that one metadata pass runs per module (it is most of the cost
of building a bundle; a warm ``check`` reads bundles from ``bundle_cache`` instead). Nothing here
executes user code.
"""

from __future__ import annotations

import functools
import re

from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst
from libcst.metadata import (
    Assignment,
    ImportAssignment,
    MetadataWrapper,
    ScopeProvider,
)

from autotune_rewrite.check.bundle_cache import KernelLoadError, lookup, store
from autotune_rewrite.check.evidence import KernelBundle
from autotune_rewrite.module_resolver import ModuleResolver
from autotune_rewrite.triton_names import REEXPORTED_MODULES, is_jit, is_triton_module

_MAX_MODULES = 64  # a kernel that pulls in more repo modules than this is not a kernel we can cut out
_STATIC_CALLS = {"constexpr", "int", "float", "bool", "min", "max", "abs", "cdiv", "next_power_of_2"}


@dataclass
class _Module:
    path: Path  # absolute
    rel: str  # relative to root, POSIX
    module: cst.Module
    global_scope: object
    statements: dict[int, cst.CSTNode]  # id(target Name) -> its module-level Assign/AnnAssign
    global_refs: dict[int, str]  # id(Name node) -> global name it reads
    text: str = ""  # the file as read (to map compile errors back to its lines)


@dataclass
class _Emit:
    """What the bundle collects while following dependencies."""

    imports: list[str] = field(default_factory=list)
    import_targets: dict[str, str] = field(default_factory=dict)  # bound name -> what it imports
    defs: list[str] = field(default_factory=list)  # constants, functions, aliases in def-time order
    owners: dict[str, tuple[str, str]] = field(default_factory=dict)  # emitted name -> (module, name)
    done: set[tuple[str, str]] = field(default_factory=set)
    namespace_attrs: set[tuple[str, str]] = field(default_factory=set)  # (alias, attr) emitted
    functions: list[tuple[str, str, int]] = field(default_factory=list)  # (name, module, def line)


class ParsedModules:
    """Parsed modules shared by the bundles of one run: a module holding five kernels (or the
    helpers every kernel imports) is parsed and scope-analysed once, not once per kernel; that
    pass is most of a bundle's cost (about 3.5 s for a 4,400-line kernel file). Read-only once
    made, so sharing it cannot leak one bundle's state into another. Bounded: sites come
    grouped by file, so the last few modules are the ones asked for again."""

    def __init__(self, root: Path, size: int = 32):
        self.root = root.resolve()
        self.get = functools.lru_cache(maxsize=size)(self._parse)

    def _parse(self, path: Path) -> _Module:
        rel = _relative(self.root, path)
        try:
            text = path.read_text(encoding="utf-8")
            tree = cst.parse_module(text)
        except (OSError, UnicodeDecodeError, cst.ParserSyntaxError) as exc:
            raise KernelLoadError(f"{rel}: cannot read: {str(exc).splitlines()[0]}") from exc
        wrapper = MetadataWrapper(tree, unsafe_skip_copy=True)
        scopes = wrapper.resolve(ScopeProvider)
        gscope = scopes[tree]
        refs = {id(ref.node): a.name for a in gscope.assignments for ref in a.references}
        return _Module(path=path, rel=rel, module=tree, global_scope=gscope,
                       statements=_assignments(tree.body), global_refs=refs, text=text)


def _relative(root: Path, path: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return str(path)


class _Loader:
    def __init__(self, root: Path, parsed: ParsedModules | None = None):
        self.root = root.resolve()
        self.parsed = parsed if parsed is not None and parsed.root == self.root else ParsedModules(self.root)
        self.modules: dict[Path, _Module] = {}  # the modules this bundle was cut from
        self.out = _Emit()
        self.namespace_source: dict[str, Path] = {}  # alias -> repo module file
        self.resolver = ModuleResolver(self.root)

    # ----------------------------------------------------------------- modules
    def module(self, path: Path) -> _Module:
        path = path.resolve()
        if path in self.modules:
            return self.modules[path]
        if len(self.modules) >= _MAX_MODULES:
            raise KernelLoadError(f"{path}: more than {_MAX_MODULES} modules reached from the kernel")
        mod = self.parsed.get(path)
        self.modules[path] = mod
        return mod

    def _rel(self, path: Path) -> str:
        return _relative(self.root, path)

    def find_module(self, importer: Path, dotted: str, level: int) -> Path | None:
        """A repo file for ``dotted`` imported from ``importer`` (relative when level > 0)."""
        hit = self.resolver.find(dotted, self._rel(importer), level)
        return self.root / hit if hit is not None else None

    # --------------------------------------------------------------- resolving
    def name(self, mod: _Module, name: str, as_name: str | None = None) -> None:
        """Make ``name`` of ``mod`` available in the bundle under ``as_name`` (default: same)."""
        as_name = as_name or name
        key = (mod.rel, name)
        if key in self.out.done:
            self._alias(mod, name, as_name)
            return
        self.out.done.add(key)
        assignments = [a for a in mod.global_scope.assignments[name]] if name in mod.global_scope else []
        if not assignments:
            return  # a builtin (min, range) or undefined: Triton's own error will say which
        # The last definition in source order wins, as it would when the module runs.
        assignment = max(assignments, key=lambda a: _order(a))
        if isinstance(assignment, ImportAssignment):
            self._import(mod, assignment, name)
        elif isinstance(assignment, Assignment) and isinstance(assignment.node, cst.FunctionDef):
            self._function(mod, assignment.node, jit_required=True)
        elif isinstance(assignment, Assignment):
            self._constant(mod, assignment, name)
        self._alias(mod, name, as_name)

    def _alias(self, mod: _Module, name: str, as_name: str) -> None:
        if as_name != name and self.out.owners.get(as_name) != (mod.rel, name):
            self._claim(as_name, (mod.rel, name))
            self.out.defs.append(f"{as_name} = {name}")

    def _claim(self, emitted: str, owner: tuple[str, str]) -> None:
        prev = self.out.owners.get(emitted)
        if prev is not None and prev != owner:
            raise KernelLoadError(
                f"{owner[0]}: '{owner[1]}' and {prev[0]}::{prev[1]} would share the name '{emitted}' "
                "in the isolated kernel; rename one of them"
            )
        self.out.owners[emitted] = owner

    def _import(self, mod: _Module, assignment: ImportAssignment, name: str) -> None:
        node = assignment.node
        aliases = () if isinstance(node.names, cst.ImportStar) else node.names
        for alias in aliases:
            if _bound_name(alias, isinstance(node, cst.Import)) != name:
                continue
            imported = _dotted(alias.name)
            if isinstance(node, cst.Import):
                if is_triton_module(imported):
                    self._add_import(f"import {imported}" + (f" as {name}" if alias.asname else ""))
                    return
                target = self.find_module(mod.path, imported, 0)
                if target is not None and (alias.asname or "." not in imported):
                    self._namespace(mod, name, target)
                    return
            else:
                source = _dotted(node.module) if node.module else ""
                level = len(node.relative)
                if level == 0 and is_triton_module(source):
                    self._add_import(f"from {source} import {imported}" + (f" as {name}" if alias.asname else ""))
                    return
                sub = self.find_module(mod.path, f"{source}.{imported}" if source else imported, level)
                if sub is not None:  # ``from pkg import helpers``: a module object
                    self._namespace(mod, name, sub)
                    return
                package = self.find_module(mod.path, source, level)
                if package is not None:
                    self.name(self.module(package), imported, name)
                    return
            if name in REEXPORTED_MODULES:
                self._add_import(REEXPORTED_MODULES[name])
            return  # a package outside the repo (torch, the engine): never imported

    def _namespace(self, mod: _Module, alias: str, target: Path) -> None:
        """``alias`` names a repo module; kernels reach its helpers as ``alias.helper``."""
        self._claim(alias, (mod.rel, alias))
        self.namespace_source[alias] = target
        # A real module object: Triton only lets a kernel read attributes of module globals.
        self.out.defs.append(f"{alias} = _ar_types.ModuleType({alias!r})")
        self._add_import("import types as _ar_types")

    def _add_import(self, line: str) -> None:
        bound, target = _import_binding(line)
        prev = self.out.import_targets.get(bound)
        if prev == target:
            return  # ``import triton.language as tl`` and ``from triton import language as tl``
        if prev is not None:
            raise KernelLoadError(f"'{bound}' is imported as both {prev} and {target} by the kernel's modules")
        self.out.import_targets[bound] = target
        self.out.imports.append(line)

    def _constant(self, mod: _Module, assignment: Assignment, name: str) -> None:
        stmt = _statement(mod, assignment.node)
        if stmt is None:
            return
        value = stmt.value if isinstance(stmt, (cst.Assign, cst.AnnAssign)) else None
        if value is None or not _is_static(value):
            return  # computed at import time (env vars, torch queries): Triton will name it if used
        self._follow(mod, value)
        self._claim(name, (mod.rel, name))
        code = mod.module.code_for_node(stmt).strip()
        if isinstance(stmt, cst.Assign) and len(stmt.targets) != 1:
            code = f"{name} = {mod.module.code_for_node(value)}"
        self.out.defs.append(code)

    def _function(self, mod: _Module, node: cst.FunctionDef, jit_required: bool) -> None:
        kept = [_compile_relevant(d) for d in node.decorators if is_jit(q.name for q in _qualnames(mod, d.decorator))]
        if not kept and jit_required:
            return  # a plain Python helper: not callable from a kernel, so not needed
        new = node.with_changes(decorators=kept or [cst.Decorator(cst.parse_expression("_ar_triton.jit"))])
        if not kept:
            self._add_import("import triton as _ar_triton")
        self._follow(mod, new)
        self._claim(node.name.value, (mod.rel, node.name.value))
        self.out.defs.append(mod.module.code_for_node(new).strip("\n"))
        line = _def_line(mod.text, node.name.value)
        if line is not None:
            self.out.functions.append((node.name.value, mod.rel, line))

    def _follow(self, mod: _Module, node: cst.CSTNode) -> None:
        """Resolve every global name ``node`` reads (and ``alias.attr`` of repo-module aliases)."""
        collector = _Reads(mod.global_refs)
        node.visit(collector)
        for name in collector.names:
            self.name(mod, name)
        for base, attr in collector.attributes:
            target = self.namespace_source.get(base)
            if target is None or (base, attr) in self.out.namespace_attrs:
                continue
            self.out.namespace_attrs.add((base, attr))
            self.name(self.module(target), attr)
            self.out.defs.append(f"{base}.{attr} = {attr}")

    # ------------------------------------------------------------------- entry
    def bundle(self, path: Path, kernel: str) -> KernelBundle:
        mod = self.module(path)
        defs = [
            a.node
            for a in (mod.global_scope.assignments[kernel] if kernel in mod.global_scope else [])
            if isinstance(a, Assignment) and isinstance(a.node, cst.FunctionDef)
        ]
        if not defs:
            raise KernelLoadError(f"{mod.rel}: no function named '{kernel}' at module level")
        self.out.done.add((mod.rel, kernel))
        self._function(mod, defs[-1], jit_required=False)
        lines = [f"# Isolated by autotune-rewrite from {mod.rel}::{kernel}; generated, do not edit."]
        lines += self.out.imports
        source = "\n".join(lines) + "\n\n\n" + "\n\n\n".join(self.out.defs) + "\n"
        return KernelBundle(kernel=kernel, source=source, origin=f"{mod.rel}::{kernel}",
                            functions=tuple(self.out.functions))


def _def_line(text: str, name: str) -> int | None:
    """Line of the last module-level ``def name(`` (the one that wins when the module runs)."""
    found = list(re.finditer(rf"^(?:async[ \t]+)?def[ \t]+{re.escape(name)}[ \t]*\(", text, re.MULTILINE))
    return text.count("\n", 0, found[-1].start()) + 1 if found else None


# @triton.jit arguments that only matter at launch or for printing; they usually name host-side
# Python functions (a FLOP counter for the profiler) that the bundle does not carry.
_LAUNCH_ONLY_ARGS = {"launch_metadata", "repr"}


def _compile_relevant(decorator: cst.Decorator) -> cst.Decorator:
    call = decorator.decorator
    if not isinstance(call, cst.Call):
        return decorator
    args = [a for a in call.args if not (a.keyword and a.keyword.value in _LAUNCH_ONLY_ARGS)]
    if len(args) == len(call.args):
        return decorator
    if args:  # the last argument must not keep a dangling comma from a dropped one
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return decorator.with_changes(decorator=call.with_changes(args=args))


class _Reads(cst.CSTVisitor):
    """Global names read inside a node, and ``base.attr`` pairs on them."""

    def __init__(self, global_refs: dict[int, str]):
        self.global_refs = global_refs
        self.names: list[str] = []
        self.attributes: list[tuple[str, str]] = []

    def visit_Name(self, node: cst.Name) -> None:
        name = self.global_refs.get(id(node))
        if name is not None and name not in self.names:
            self.names.append(name)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name) and id(node.value) in self.global_refs:
            pair = (node.value.value, node.attr.value)
            if pair not in self.attributes:
                self.attributes.append(pair)


def _order(assignment) -> int:
    # LibCST numbers assignments in visiting order; there is no public accessor for it.
    return getattr(assignment, "_index", 0)


def _qualnames(mod: _Module, expr: cst.BaseExpression):
    target = expr.func if isinstance(expr, cst.Call) else expr
    dotted = _dotted(target)
    return mod.global_scope.get_qualified_names_for(dotted) if dotted else set()


def _assignments(body) -> dict[int, cst.CSTNode]:
    """Module-level ``x = ...`` / ``x: T = ...`` statements by their target Name, looking into
    module-level if/try/with blocks (``if HAS_TRITON:``) as Python's global scope does."""
    out: dict[int, cst.CSTNode] = {}
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign):
                    for target in small.targets:
                        if isinstance(target.target, cst.Name):
                            out[id(target.target)] = small
                elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                    out[id(small.target)] = small
        elif isinstance(stmt, (cst.If, cst.Try, cst.With)):
            blocks = [stmt.body]
            if isinstance(stmt, cst.If) and stmt.orelse is not None:
                blocks.append(stmt.orelse if isinstance(stmt.orelse, cst.Else) else cst.IndentedBlock([stmt.orelse]))
            if isinstance(stmt, cst.Try):
                blocks += [h.body for h in stmt.handlers] + [b.body for b in (stmt.orelse, stmt.finalbody) if b]
            for block in blocks:
                inner = block.body if hasattr(block, "body") else block
                out.update(_assignments(inner.body if isinstance(inner, cst.IndentedBlock) else inner))
    return out


def _import_binding(line: str) -> tuple[str, str]:
    """(bound name, dotted target) of an import line this module emits."""
    words = line.split()
    if words[0] == "import":
        target = words[1]
        bound = words[3] if len(words) > 3 else target.split(".")[0]
        return bound, (target if len(words) > 3 else bound)
    target = f"{words[1]}.{words[3]}"  # from <module> import <name> [as <bound>]
    return (words[5] if len(words) > 5 else words[3]), target


def _bound_name(alias: cst.ImportAlias, plain_import: bool) -> str:
    if alias.asname is not None:
        return alias.asname.name.value
    dotted = _dotted(alias.name)
    return dotted.split(".")[0] if plain_import else dotted


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def _statement(mod: _Module, node: cst.CSTNode):
    """The module-level Assign/AnnAssign whose whole target is this Name, if any."""
    return mod.statements.get(id(node))


def _is_static(expr: cst.BaseExpression) -> bool:
    """True when evaluating ``expr`` needs nothing but literals and other module constants."""
    if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString)):
        return True
    if isinstance(expr, cst.Name):
        return True  # another constant (followed) or True/False/None
    if isinstance(expr, cst.Attribute):
        return isinstance(expr.value, cst.Name)  # tl.float16, tl.constexpr: module attributes
    if isinstance(expr, cst.UnaryOperation):
        return _is_static(expr.expression)
    if isinstance(expr, cst.BinaryOperation):
        return _is_static(expr.left) and _is_static(expr.right)
    if isinstance(expr, cst.BooleanOperation):
        return _is_static(expr.left) and _is_static(expr.right)
    if isinstance(expr, cst.Comparison):
        return _is_static(expr.left) and all(_is_static(c.comparator) for c in expr.comparisons)
    if isinstance(expr, (cst.Tuple, cst.List)):
        return all(isinstance(e, cst.Element) and _is_static(e.value) for e in expr.elements)
    if isinstance(expr, cst.Call):
        callee = expr.func.attr.value if isinstance(expr.func, cst.Attribute) else getattr(expr.func, "value", "")
        return callee in _STATIC_CALLS and all(_is_static(a.value) for a in expr.args)
    return False


def load_bundle(root: Path | str, path: str, kernel: str, cache_dir: Path | None = None,
                parsed: ParsedModules | None = None) -> KernelBundle:
    """The self-contained module text for ``kernel`` defined in ``path`` (relative to ``root``).

    With ``cache_dir``, a bundle built before is reused while every file it was cut from keeps
    its bytes (see ``bundle_cache``). ``parsed``: modules already parsed in this run (the
    bundles of many kernels share them). Raises ``KernelLoadError`` when the file cannot be
    read or has no such function.
    """
    root = Path(root)
    if cache_dir is not None:
        hit = lookup(root, path, kernel, cache_dir)
        if hit is not None:
            return hit
    loader = _Loader(root, parsed)
    bundle = loader.bundle(root / path, kernel)
    if cache_dir is not None:
        store(root, path, kernel, cache_dir, bundle, [m.path for m in loader.modules.values()])
    return bundle


__all__ = ["KernelLoadError", "ParsedModules", "load_bundle"]
