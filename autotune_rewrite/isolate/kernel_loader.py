"""Isolated kernel loading: cut a kernel and what it needs out of its module, without running it.

The target module's top level may import torch or the serving engine, read environment variables,
write files or simply raise. None of that may run during ``check``. So instead of importing the
module we read it with LibCST and emit a new, self-contained module text (a ``KernelBundle``)
holding only:

- the kernel's ``def`` with ``@triton.jit`` (autotune / heuristics / foreign decorators dropped;
  ``@triton.jit`` added when the kernel was wrapped by a call such as ``triton.jit(fn)``),
- the ``@triton.jit`` helpers it reaches, transitively, in the same module or in modules of the
  repository, bound as Python's import would bind them: by name (``from .helpers import f``,
  ``import pkg.helpers as h; h.f``) and by star imports (``from .utils import *``: the module's
  ``__all__``, else its public names, through package ``__init__`` re-exports; ``star_imports``),
- the module-level constants they read: as written when the right-hand side is static (literals,
  arithmetic on other constants, ``tl.constexpr(...)``), as their value when it is built by calls
  the static evaluator knows (``tl.constexpr(math.log2(math.e))``; ``bundle_constants``),
- the Triton (and ``math``) imports those definitions name.

Every global the kernel's code reads that cannot be provided so (computed at import time, from a
package outside the repository, undefined) is recorded in ``KernelBundle.unprovided`` with the
user's file and line: a compile that then fails with a NameError for it failed in our loading,
and the check stage reports the kernel as not loadable instead of judging its configs.

Names are resolved with LibCST's ``ScopeProvider``: what a def reads from the global scope, and
the qualified name of each decorator (which one is ``triton.jit``), through the scope's own
``get_qualified_names_for``. Only that one metadata pass runs per module (it is most of the cost
of building a bundle; a warm ``check`` reads bundles from ``bundle_cache`` instead), in
``parsed_modules``, shared by the run's bundles; ``twin_defs`` picks which of two defs of the
kernel a site means. Nothing here executes user code.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import libcst as cst
from libcst.metadata import (
    Assignment,
    ImportAssignment,
)

from autotune_rewrite.isolate.absent_api import absent_attributes
from autotune_rewrite.isolate.bundle_cache import KernelLoadError, dep_names, lookup, store
from autotune_rewrite.isolate.bundle_constants import ConstantValues, literal
from autotune_rewrite.evidence import KernelBundle
from autotune_rewrite.isolate.parsed_modules import ParsedModules, ScopedModule, importable, relative
from autotune_rewrite.isolate.twin_defs import def_at
from autotune_rewrite.isolate.installed_branch import installed_attribute, taken
from autotune_rewrite.isolate.loader_syntax import (
    Reads, binding_line, bound_name, compile_relevant, def_line, dotted, import_binding,
    imports_triton, is_static, reads_constexpr,
)
from autotune_rewrite.isolate.star_imports import declared_all, exported, star_imports, triton_exports
from autotune_rewrite.evaluate import Known
from autotune_rewrite.module_resolver import ModuleResolver
from autotune_rewrite.triton_names import CONSTEXPR_FUNCTION, REEXPORTED_MODULES, is_jit, is_triton_module

_MAX_MODULES = 64  # a kernel that pulls in more repo modules than this is not a kernel we can cut out
# Modules besides Triton the bundle may import: importing them runs no user code and reads
# nothing outside (a kernel may call ``math.log2`` on constexprs; Triton calls it at compile time).
# A built-in module, so a repo file of the same name cannot shadow it.
_SAFE_MODULES = frozenset({"math"})


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
    provided: dict[tuple[str, str], bool] = field(default_factory=dict)  # (module, name) -> emitted
    # bundle name -> (module, line) of each global read that could not be provided, first cause first
    unprovided: dict[str, tuple[str, int | None]] = field(default_factory=dict)
    # Triton modules the kernel imports that this Triton lacks (a fork's, such as TLX) -> (module, line)
    absent: dict[str, tuple[str, int | None]] = field(default_factory=dict)


class _Loader:
    def __init__(self, root: Path, parsed: ParsedModules | None = None):
        self.root = root.resolve()
        self.parsed = parsed if parsed is not None and parsed.root == self.root else ParsedModules(self.root)
        self.modules: dict[Path, ScopedModule] = {}  # the modules this bundle was cut from
        self.out = _Emit()
        self.namespace_source: dict[str, Path] = {}  # alias -> repo module file
        self.resolver = ModuleResolver(self.root, tree_files=self.parsed.tree_files)
        self.constants = ConstantValues(self.root, self.resolver)
        self.forks_asked = False  # whether this bundle's verdict rests on that walk

    # ----------------------------------------------------------------- modules
    def module(self, path: Path) -> ScopedModule:
        path = path.resolve()
        if path in self.modules:
            return self.modules[path]
        if len(self.modules) >= _MAX_MODULES:
            raise KernelLoadError(f"{path}: more than {_MAX_MODULES} modules reached from the kernel")
        mod = self.parsed.get(path)
        self.modules[path] = mod
        return mod

    def _rel(self, path: Path) -> str:
        return relative(self.root, path)

    def find_module(self, importer: Path, dotted: str, level: int) -> Path | None:
        """A repo file for ``dotted`` imported from ``importer`` (relative when level > 0)."""
        hit = self.resolver.find(dotted, self._rel(importer), level)
        return self.root / hit if hit is not None else None

    # --------------------------------------------------------------- resolving
    def name(self, mod: ScopedModule, name: str, as_name: str | None = None) -> bool:
        """Make ``name`` of ``mod`` available in the bundle under ``as_name`` (default: same).
        False when it cannot be (recorded in ``unprovided`` with the user's file and line)."""
        as_name = as_name or name
        key = (mod.rel, name)
        if key in self.out.done:
            provided = self.out.provided.get(key, True)  # absent: still being followed (a cycle)
        else:
            self.out.done.add(key)
            provided = self.out.provided[key] = self._provide(mod, name)
        if not provided:
            self.out.unprovided.setdefault(as_name, (mod.rel, binding_line(mod.text, name)))
            return False
        self._alias(mod, name, as_name)
        return True

    def _provide(self, mod: ScopedModule, name: str) -> bool:
        found = [a for a in mod.global_scope.assignments[name]] if name in mod.global_scope else []
        if not found:
            return self._star(mod, name)
        # The last definition in source order wins, as it would when the module runs; but a Triton
        # import wins over a fallback for when Triton is missing (``except ImportError: triton =
        # MagicMock()``): the compile runs where Triton is installed, so that branch never runs.
        of_triton = [a for a in found if isinstance(a, ImportAssignment) and imports_triton(a.node, name)]
        # Bound by version (``if ...: rsqrt = tl.math.rsqrt / else: ... tl.libdevice.rsqrt``): the
        # branch the installed Triton takes (``installed_branch``).
        assignment = taken(mod, of_triton or found, _statement, _order)
        if isinstance(assignment, ImportAssignment):
            return self._import(mod, assignment, name)
        if isinstance(assignment, Assignment) and isinstance(assignment.node, cst.FunctionDef):
            return self._function(mod, assignment.node, jit_required=True)
        if isinstance(assignment, Assignment):
            return self._constant(mod, assignment, name)
        return False  # a class, a ``global`` statement, ...

    def _star(self, mod: ScopedModule, name: str) -> bool:
        """``name`` bound by one of ``mod``'s ``from M import *`` (the last that binds it wins)."""
        for star in reversed(star_imports(mod.module.body)):
            if star.level == 0 and is_triton_module(star.source):
                if triton_exports(star.source, name):
                    self._add_import(f"from {star.source} import {name}")
                    return True
                continue
            source = self.find_module(mod.path, star.source, star.level)
            if source is None or not self._exports(self.module(source), name):
                continue
            key = (self._rel(source), name)
            if key in self.out.done and key not in self.out.provided:
                continue  # being followed already: star imports in a cycle, another one binds it
            return self.name(self.module(source), name)
        return False  # a builtin Triton does not know, or from a package outside the repo

    def _exports(self, mod: ScopedModule, name: str, seen: frozenset[str] = frozenset()) -> bool:
        """Whether ``from <mod> import *`` binds ``name``: its ``__all__``, else its public names,
        including those its own star imports bind (cycles end: a module is asked once)."""
        declared = declared_all(mod.module.body)
        bound = name in mod.global_scope and bool(mod.global_scope.assignments[name])
        if declared is not None or bound or name.startswith("_"):
            return exported(name, declared, bound)
        for star in star_imports(mod.module.body):
            source = self.find_module(mod.path, star.source, star.level)
            if source is not None and mod.rel not in seen and self._exports(self.module(source), name, seen | {mod.rel}):
                return True
            if source is None and star.level == 0 and is_triton_module(star.source) and triton_exports(star.source, name):
                return True
        return False

    def _alias(self, mod: ScopedModule, name: str, as_name: str) -> None:
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

    def _import(self, mod: ScopedModule, assignment: ImportAssignment, name: str) -> bool:
        node = assignment.node
        aliases = () if isinstance(node.names, cst.ImportStar) else node.names
        for alias in aliases:
            if bound_name(alias, isinstance(node, cst.Import)) != name:
                continue
            imported = dotted(alias.name)
            if isinstance(node, cst.Import):
                if is_triton_module(imported) or imported in _SAFE_MODULES:
                    if not importable(imported):  # a Triton fork's module (TLX): this Triton cannot compile it
                        self.out.absent.setdefault(imported, (mod.rel, binding_line(mod.text, name)))
                        return False
                    self._add_import(f"import {imported}" + (f" as {name}" if alias.asname else ""))
                    return True
                target = self.find_module(mod.path, imported, 0)
                if target is not None and (alias.asname or "." not in imported):
                    self._namespace(mod, name, target)
                    return True
            else:
                source = dotted(node.module) if node.module else ""
                level = len(node.relative)
                if level == 0 and (is_triton_module(source) or source in _SAFE_MODULES):
                    if not importable(source):
                        self.out.absent.setdefault(source, (mod.rel, binding_line(mod.text, name)))
                        return False
                    self._add_import(f"from {source} import {imported}" + (f" as {name}" if alias.asname else ""))
                    return True
                sub = self.find_module(mod.path, f"{source}.{imported}" if source else imported, level)
                if sub is not None:  # ``from pkg import helpers``: a module object
                    self._namespace(mod, name, sub)
                    return True
                package = self.find_module(mod.path, source, level)
                if package is not None:
                    return self.name(self.module(package), imported, name)
            if name in REEXPORTED_MODULES:
                self._add_import(REEXPORTED_MODULES[name])
                return True
            return False  # a package outside the repo (torch, the engine): never imported
        return False

    def _namespace(self, mod: ScopedModule, alias: str, target: Path) -> None:
        """``alias`` names a repo module; kernels reach its helpers as ``alias.helper``."""
        self._claim(alias, (mod.rel, alias))
        self.namespace_source[alias] = target
        # A real module object: Triton only lets a kernel read attributes of module globals.
        self.out.defs.append(f"{alias} = _ar_types.ModuleType({alias!r})")
        self._add_import("import types as _ar_types")

    def _add_import(self, line: str) -> None:
        bound, target = import_binding(line)
        prev = self.out.import_targets.get(bound)
        if prev == target:
            return  # ``import triton.language as tl`` and ``from triton import language as tl``
        if prev is not None:
            raise KernelLoadError(f"'{bound}' is imported as both {prev} and {target} by the kernel's modules")
        self.out.import_targets[bound] = target
        self.out.imports.append(line)

    def _constant(self, mod: ScopedModule, assignment: Assignment, name: str) -> bool:
        stmt = _statement(mod, assignment.node)
        value = stmt.value if isinstance(stmt, (cst.Assign, cst.AnnAssign)) else None
        if value is None:
            return False  # ``for x in ...``, ``with ... as x``, a tuple target: not a constant
        if is_static(value) or installed_attribute(mod, value):  # ``tl.math.rsqrt``: as written
            if self._follow(mod, value):
                return False  # it reads a global we cannot provide: executing it would fail
            code = mod.module.code_for_node(stmt).strip()
            if isinstance(stmt, cst.Assign) and len(stmt.targets) != 1:
                code = f"{name} = {mod.module.code_for_node(value)}"
        else:
            # Built by a call (``tl.constexpr(math.log2(math.e))``): its value, when the static
            # evaluator knows every call in it; else computed at import time (env vars, torch).
            known = self.constants.value(mod.rel, name)
            text = literal(known.value) if isinstance(known, Known) else None
            if text is None:
                return False
            if reads_constexpr(value):  # Triton reads only constexpr globals in a kernel
                self._add_import("import triton as _ar_triton")
                text = f"_ar_triton.language.constexpr({text})"
            code = f"{name} = {text}"
        self._claim(name, (mod.rel, name))
        self.out.defs.append(code)
        return True

    def _function(self, mod: ScopedModule, node: cst.FunctionDef, jit_required: bool) -> bool:
        kept = [compile_relevant(d) for d in node.decorators if _compile_time(mod, d.decorator)]
        if not kept and jit_required:
            # A plain Python function: Triton reads it only as a module attribute (an engine's
            # ``@core.extern`` op), which needs the module run; the kernel is not loadable if it does.
            # When that module cannot even be imported on this Triton, the op is a fork's builtin
            # (``_semantic.builder.create_<op>``): no spec helps, the kernel needs that Triton.
            self.forks_asked = True
            fork = self.parsed.forks.needed_by(mod.rel)
            if fork is not None:
                self.out.absent.setdefault(fork[0], (fork[1], fork[2]))
            return False
        new = node.with_changes(decorators=kept or [cst.Decorator(cst.parse_expression("_ar_triton.jit"))])
        if not kept:
            self._add_import("import triton as _ar_triton")
        self._follow(mod, new)
        self._claim(node.name.value, (mod.rel, node.name.value))
        self.out.defs.append(mod.module.code_for_node(new).strip("\n"))
        line = def_line(mod.text, node.name.value)
        if line is not None:
            self.out.functions.append((node.name.value, mod.rel, line))
        return True

    def _follow(self, mod: ScopedModule, node: cst.CSTNode) -> list[str]:
        """Resolve every global name ``node`` reads (and ``alias.attr`` of repo-module aliases);
        the names that could not be provided."""
        collector = Reads(mod.global_refs, mod.unbound_refs)
        node.visit(collector)
        missing = [name for name in collector.names if not self.name(mod, name)]
        for base, attr in collector.attributes:
            target = self.namespace_source.get(base)
            if target is None or (base, attr) in self.out.namespace_attrs:
                continue
            self.out.namespace_attrs.add((base, attr))
            if self.name(self.module(target), attr):
                self.out.defs.append(f"{base}.{attr} = {attr}")
            else:  # the kernel reads ``base.attr``: an AttributeError names it so (``undefined_name``)
                self.out.unprovided.setdefault(f"{base}.{attr}", self.out.unprovided[attr])
                missing.append(f"{base}.{attr}")
        return missing

    # ------------------------------------------------------------------- entry
    def bundle(self, path: Path, kernel: str, line: int | None = None) -> KernelBundle:
        mod = self.module(path)
        defs = sorted((
            a for a in (mod.global_scope.assignments[kernel] if kernel in mod.global_scope else [])
            if isinstance(a, Assignment) and isinstance(a.node, cst.FunctionDef)
        ), key=_order)
        if not defs:
            raise KernelLoadError(f"{mod.rel}: no function named '{kernel}' at module level")
        self.out.done.add((mod.rel, kernel))
        self._function(mod, def_at(mod, [a.node for a in defs], kernel, line), jit_required=False)
        lines = [f"# Isolated by autotune-rewrite from {mod.rel}::{kernel}; generated, do not edit."]
        lines += self.out.imports
        source = "\n".join(lines) + "\n\n\n" + "\n\n\n".join(self.out.defs) + "\n"
        for name, rel, line in absent_attributes(source, kernel, self.out.import_targets, tuple(self.out.functions)):
            self.out.absent.setdefault(name, (rel, line))
        return KernelBundle(kernel=kernel, source=source, origin=f"{mod.rel}::{kernel}",
                            functions=tuple(self.out.functions),
                            unprovided=tuple((n, rel, line) for n, (rel, line) in self.out.unprovided.items()),
                            absent_modules=tuple((m, rel, line) for m, (rel, line) in self.out.absent.items()))


def _compile_time(mod: ScopedModule, decorator: cst.BaseExpression) -> bool:
    """``@triton.jit`` (any spelling, with arguments) or ``@triton.constexpr_function``."""
    names = {q.name for q in _qualnames(mod, decorator)}
    return is_jit(names) or bool(names & CONSTEXPR_FUNCTION)


def _order(assignment) -> int:
    # LibCST numbers assignments in visiting order; there is no public accessor for it.
    return getattr(assignment, "_index", 0)


def _qualnames(mod: ScopedModule, expr: cst.BaseExpression):
    target = expr.func if isinstance(expr, cst.Call) else expr
    name = dotted(target)
    return mod.global_scope.get_qualified_names_for(name) if name else set()


def _statement(mod: ScopedModule, node: cst.CSTNode):
    """The module-level Assign/AnnAssign whose whole target is this Name, if any."""
    return mod.statements.get(id(node))


def load_bundle(root: Path | str, path: str, kernel: str, cache_dir: Path | None = None,
                parsed: ParsedModules | None = None, line: int | None = None) -> KernelBundle:
    """The self-contained module text for ``kernel`` defined in ``path`` (relative to ``root``).

    With ``cache_dir``, a bundle built before is reused while every file it was cut from keeps
    its bytes (see ``bundle_cache``). ``parsed``: modules already parsed in this run (the
    bundles of many kernels share them). Raises ``KernelLoadError`` when the file cannot be
    read or has no such function. ``line``: the def's line (a decorator line works too), to
    pick one of twin defs; without it the last def is taken.
    """
    root = Path(root)
    if cache_dir is not None:
        hit = lookup(root, path, kernel, cache_dir, line)
        if hit is not None:
            return hit
    loader = _Loader(root, parsed)
    bundle = loader.bundle(root / path, kernel, line)
    files = [m.path for m in loader.modules.values()]
    if loader.forks_asked:  # every module that walk read (a superset: safe for the cache's deps)
        files += [f for f in loader.parsed.forks.read if f not in files]
    bundle = replace(bundle, files=dep_names(root, files))
    if cache_dir is not None:
        store(root, path, kernel, cache_dir, bundle, files, line)
    return bundle


__all__ = ["KernelLoadError", "load_bundle"]
