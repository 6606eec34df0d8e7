"""The repository modules a bundle is cut from, each parsed and scope-analysed once per run.

``kernel_loader`` follows a kernel's dependencies through these modules; what it reads of each
(the LibCST tree, the global scope, which Name reads which global, which reads nothing binds) is
worked out here, once, and shared read-only by every bundle of the run. Separate from the loader
because it is a cache with its own lifetime (a run, not a bundle) and no knowledge of what a
bundle keeps: the loader asks it for a module and gets the same object for every kernel of it.
It also holds the run's ``ForkImports`` walk, for the same reason.
"""

from __future__ import annotations

import functools

from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, ScopeProvider

from autotune_rewrite.isolate.bundle_cache import KernelLoadError
from autotune_rewrite.isolate.fork_imports import ForkImports
from autotune_rewrite.isolate.loader_syntax import assignments
from autotune_rewrite.resources import triton_has_module
from autotune_rewrite.files import discover
from autotune_rewrite.module_resolver import ModuleResolver
from autotune_rewrite.triton_names import is_triton_module


@dataclass
class ScopedModule:
    path: Path  # absolute
    rel: str  # relative to root, POSIX
    module: cst.Module
    global_scope: object
    statements: dict[int, cst.CSTNode]  # id(target Name) -> its module-level Assign/AnnAssign
    global_refs: dict[int, str]  # id(Name node) -> global name it reads
    text: str = ""  # the file as read (to map compile errors back to its lines)
    # id(Name node) -> name, for reads no statement of the module binds: a star import's, a
    # builtin's Triton does not know, or a typo (LibCST's scopes do not follow ``import *``)
    unbound_refs: dict[int, str] = field(default_factory=dict)


class ParsedModules:
    """Parsed modules shared by the bundles of one run: a module holding five kernels (or the
    helpers every kernel imports) is parsed and scope-analysed once, not once per kernel; that
    pass is most of a bundle's cost (about 3.5 s for a 4,400-line kernel file). Read-only once
    made, so sharing it cannot leak one bundle's state into another. Bounded: sites come
    grouped by file, so the last few modules are the ones asked for again."""

    def __init__(self, root: Path, size: int = 32):
        self.root = root.resolve()
        self.get = functools.lru_cache(maxsize=size)(self._parse)
        self.tree_files = functools.cache(lambda: discover(self.root).files)  # listed once, when first asked
        # Which modules need another Triton: a walk of their imports, shared by the run's bundles
        # (in a large package each walk may reach hundreds of modules).
        self.forks = ForkImports(self.root, ModuleResolver(self.root, tree_files=self.tree_files), importable)

    def _parse(self, path: Path) -> ScopedModule:
        rel = relative(self.root, path)
        try:
            text = path.read_text(encoding="utf-8")
            tree = cst.parse_module(text)
        except (OSError, UnicodeDecodeError, cst.ParserSyntaxError, cst.CSTValidationError) as exc:
            raise KernelLoadError(f"{rel}: cannot read: {str(exc).splitlines()[0]}") from exc
        wrapper = MetadataWrapper(tree, unsafe_skip_copy=True)
        scopes = wrapper.resolve(ScopeProvider)
        gscope = scopes[tree]
        refs = {id(ref.node): a.name for a in gscope.assignments for ref in a.references}
        # Names nothing binds: what a star import may provide (LibCST's scopes do not follow it).
        unbound = {id(access.node): access.node.value for scope in {id(s): s for s in scopes.values() if s}.values()
                   for access in scope.accesses if not access.referents and isinstance(access.node, cst.Name)}
        return ScopedModule(path=path, rel=rel, module=tree, global_scope=gscope,
                            statements=assignments(tree.body), global_refs=refs, text=text, unbound_refs=unbound)


def relative(root: Path, path: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return str(path)


def importable(module: str) -> bool:
    return not is_triton_module(module) or triton_has_module(module)


__all__ = ["ParsedModules", "ScopedModule", "importable", "relative"]
