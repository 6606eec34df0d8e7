"""The cross-file step: follow imports through the scanned tree.

- launches -> sites: a launch's possible targets (absolute names) are followed through
  re-exports (``pkg/__init__.py``: ``from .kernels import _k``) to ``(file, name)`` and matched
  to the site whose launchable object is exactly that; never by bare name;
- configs built by helpers or variables imported from another module of the tree are
  evaluated there (that module is parsed on demand);
- call-form sites over a kernel imported from another module get that kernel's parameters.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import libcst as cst

from autotune_rewrite.files import module_name
from autotune_rewrite.evaluate import Evaluator, Unresolved
from autotune_rewrite.locate.facts import FileFacts, module_imports, parse_source
from autotune_rewrite.locate.kernels import KernelInfo, is_jit, kernel_info, params_of
from autotune_rewrite.locate.parsed import ParsedModule
from autotune_rewrite.module_resolver import ModuleResolver
from autotune_rewrite.locate.sites import SiteDraft, find_sites
from autotune_rewrite.model import AutotuneSite, LaunchSite


class Project:
    """The scanned tree as a set of modules, parsed on demand."""

    def __init__(self, root: Path, files: tuple[str, ...], facts: dict[str, FileFacts]):
        self.root, self.facts = root, facts
        self.resolver = ModuleResolver(root, files)
        self._parsed: dict[str, ParsedModule | None] = {}

    def find_module(self, dotted: str) -> str | None:
        """File of module ``dotted`` in the scanned tree (``module_resolver`` decides how)."""
        return self.resolver.find(dotted)

    def parsed(self, path: str) -> ParsedModule | None:
        if path not in self._parsed:
            try:
                data = (self.root / path).read_bytes()
            except OSError:
                self._parsed[path] = None
                return None
            pm = parse_source(path, data, module_name(path), path.endswith("__init__.py"))
            self._parsed[path] = pm if isinstance(pm, ParsedModule) else None
        return self._parsed[path]

    def imports(self, path: str) -> dict[str, str]:
        if path in self.facts and self.facts[path].error is None:
            return self.facts[path].imports
        pm = self.parsed(path)
        return module_imports(pm) if pm is not None else {}

    def locate(self, fq: str, depth: int = 0) -> tuple[str, str] | None:
        """Absolute name -> (file, module-level name), through re-exports."""
        parts = fq.split(".")
        for i in range(len(parts) - 1, 0, -1):
            path = self.find_module(".".join(parts[:i]))
            if path is None:
                continue
            if i != len(parts) - 1:
                return None  # ``mod.obj.attr``: not a module-level name
            name = parts[-1]
            target = self.imports(path).get(name)
            if target is not None and depth < 8:
                return self.locate(target, depth + 1)
            return path, name
        return None

    def resolve(self, fq: str):
        """Value of another module's name, for the config evaluator."""
        where = self.locate(fq)
        if where is None:
            raise Unresolved(f"uses `{fq}`, which is not defined in the scanned tree")
        pm = self.parsed(where[0])
        if pm is None:
            raise Unresolved(f"uses `{fq}` from {where[0]}, which does not parse")
        return Evaluator(resolve=self.resolve).module_value(pm, where[1])

    def params(self, path: str, kernel: str):
        """The kernel's parameters with defaults evaluated across modules (``D = HEAD_DIM``
        imported from a config module), or None when the kernel is not found."""
        pm = self.parsed(path)
        for stmt in pm.tree.body if pm is not None else ():
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value == kernel:
                return params_of(pm, stmt, self.resolve)
        return None

    def kernel(self, fq: str) -> KernelInfo | None:
        where = self.locate(fq)
        if where is None:
            return None
        facts = self.facts.get(where[0])
        if facts is not None and where[1] in facts.kernels:
            return facts.kernels[where[1]]
        pm = self.parsed(where[0])
        if pm is None:
            return None
        for stmt in pm.tree.body:
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value == where[1] and is_jit(pm, stmt):
                return kernel_info(pm, stmt)
        return None


def _complete(project: Project, draft: SiteDraft) -> SiteDraft:
    if draft.pending is not None:
        pm = project.parsed(draft.site.path)
        if pm is not None:
            for again in find_sites(pm, project.resolve):
                if again.site.span == draft.site.span:
                    draft = replace(again, kernel_ref=draft.kernel_ref, pending=None,
                                    site=replace(again.site, kernel=draft.site.kernel, kernel_span=draft.site.kernel_span,
                                                 kernel_path=draft.site.kernel_path, params=draft.site.params,
                                                 do_not_specialize=draft.site.do_not_specialize))
                    break
    if draft.kernel_ref is not None and draft.site.kernel_span is None:
        info = project.kernel(draft.kernel_ref)
        if info is not None:
            draft = replace(draft, site=replace(
                draft.site, kernel=info.name, kernel_span=info.span, kernel_path=info.path, params=info.params,
                do_not_specialize=draft.site.do_not_specialize or info.do_not_specialize,
                decorators=draft.site.decorators + tuple(d for d in info.decorators if d not in draft.site.decorators)))
    site = draft.site
    if any(p.default is not None and not p.default_known for p in site.params):
        params = project.params(site.kernel_path or site.path, site.kernel)
        if params is not None and [p.name for p in params] == [p.name for p in site.params]:
            draft = replace(draft, site=replace(site, params=params))
    return draft


def link(root: Path, files: tuple[str, ...], facts: dict[str, FileFacts]) -> tuple[AutotuneSite, ...]:
    project = Project(root, files, facts)
    drafts = [_complete(project, d) for f in facts.values() for d in f.sites]
    by_handle: dict[tuple[str, str], int] = {}
    for i, d in enumerate(drafts):
        if d.handle is not None:
            by_handle[(d.site.path, d.handle.rsplit(".", 1)[-1])] = i
    launches: dict[int, dict[tuple, LaunchSite]] = {}
    for f in facts.values():
        for ld in f.launches:
            for fq in ld.targets:
                where = project.locate(fq)
                i = by_handle.get(where) if where is not None else None
                if i is not None:
                    launches.setdefault(i, {})[(ld.launch.path, ld.launch.span)] = ld.launch
    out = []
    for i, d in enumerate(drafts):
        found = sorted(launches.get(i, {}).values(), key=lambda l: (l.path, l.span.start_line, l.span.start_col))
        out.append(replace(d.site, launches=tuple(found)))
    return tuple(sorted(out, key=lambda s: (s.path, s.line, s.span.start_col)))


def launch_names(facts: dict[str, FileFacts]) -> frozenset[bytes]:
    """Names a file must mention to possibly launch one of the sites (launch prefilter)."""
    names = set()
    for f in facts.values():
        for d in f.sites:
            if d.handle is not None:
                names.add(d.handle.rsplit(".", 1)[-1].encode())
    return frozenset(names)
