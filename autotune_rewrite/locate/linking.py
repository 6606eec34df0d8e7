"""The cross-file step: follow imports through the scanned tree.

- launches -> sites: a launch's possible targets (absolute names) are followed through
  re-exports (``pkg/__init__.py``: ``from .kernels import _k``) to ``(file, name)`` and matched
  to the site whose launchable object is exactly that; never by bare name;
- configs built by helpers or variables imported from another module of the tree are
  evaluated there (that module is parsed on demand);
- call-form sites over a kernel imported from another module get that kernel's parameters;
- ``triton.autotune`` re-exported by the tree's own modules (``from .triton_utils import *``,
  ``tune = triton.autotune`` there) is followed (``Project.origins``), and the files using it
  are analysed again knowing it;
- sites that share ``path::kernel`` are told apart (``tell_apart``).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import libcst as cst

from autotune_rewrite.files import module_name
from autotune_rewrite.evaluate import DEFAULT_ANSWERS, Answers, Evaluator, Unresolved
from autotune_rewrite.evaluate import unknowns
from autotune_rewrite.locate.aliases import ModuleNames, alias_words, module_names
from autotune_rewrite.locate.facts import FileFacts, kept, module_imports, parse_source
from autotune_rewrite.locate.focus import Want
from autotune_rewrite.locate.kernels import KernelInfo, is_jit, kernel_info, params_of
from autotune_rewrite.locate.launches import LaunchDraft, find_launches
from autotune_rewrite.locate.parsed import ParsedModule
from autotune_rewrite.module_resolver import ModuleResolver
from autotune_rewrite.locate.per_target import TargetContext
from autotune_rewrite.locate.sites import SiteDraft, find_sites
from autotune_rewrite.model import AutotuneSite, LaunchSite
from autotune_rewrite.triton_names import is_autotune


class Project:
    """The scanned tree as a set of modules, parsed on demand."""

    def __init__(self, root: Path, files: tuple[str, ...], facts: dict[str, FileFacts]):
        self.root, self.facts = root, facts
        self.resolver = ModuleResolver(root, files)
        self._parsed: dict[str, ParsedModule | None] = {}
        self._whole: dict[str, ParsedModule | None] = {}
        self._for_sites: dict[str, ParsedModule | None] = {}
        # What the modules are parsed for here: sites, kernels, launches and the names others
        # ask for; so the focused parse (``locate.focus``) serves, knowing the alias words.
        self.words = tuple(sorted(w.decode() for w in alias_words(facts)))
        self.autotune: dict[str, frozenset[str]] = {}  # file -> other modules' names for triton.autotune
        self.reads: list[str] = []  # data files read so far, by any evaluation (a site's are a slice)
        self.recorder = None  # ``link_cache.Recorder`` of the site being linked: what it consulted

    def _consulted(self, path: str) -> None:
        if self.recorder is not None:
            self.recorder.files.add(path)

    def find_module(self, dotted: str) -> str | None:
        """File of module ``dotted`` in the scanned tree (``module_resolver`` decides how)."""
        found = self.resolver.find(dotted)
        if self.recorder is not None:
            self.recorder.modules[dotted] = found
        return found

    def parsed(self, path: str, name: str | None = None) -> ParsedModule | None:
        """The module at ``path``; focused, unless ``name`` is one of the defs its focus left out."""
        self._consulted(path)
        if path not in self._parsed:
            self._parsed[path] = self._load(path, Want(self.words))
        pm = self._parsed[path]
        return self.whole(path) if pm is not None and name is not None and name in pm.dropped else pm

    def for_sites(self, path: str) -> ParsedModule | None:
        """The module at ``path`` to find its sites again: what this process already parsed, or
        a focus without the defs that only launch (a pool's workers keep no module, and a kernel
        file's launch wrappers are often half of what the focus keeps)."""
        self._consulted(path)
        if path in self.autotune:
            return self.whole(path)
        if path not in self._for_sites:
            self._for_sites[path] = self._parsed.get(path) or self._load(path, Want(self.words, launches=False))
        return self._for_sites[path]

    def whole(self, path: str) -> ParsedModule | None:
        """The module at ``path``, every statement of it (for what the focus cannot foresee)."""
        self._consulted(path)
        if path not in self._whole:
            pm = self._parsed.get(path)
            self._whole[path] = pm if pm is not None and not pm.dropped else self._load(path, None)
        return self._whole[path]

    def _load(self, path: str, want: Want | None) -> ParsedModule | None:
        """What this process's scan kept of ``path`` if that serves ``want``, else a fresh parse
        (None when it cannot be read or parsed)."""
        try:
            data = (self.root / path).read_bytes()
        except OSError:
            return None
        pm = kept(path, data)
        if pm is None or (want is None and pm.dropped):
            pm = parse_source(path, data, module_name(path), path.endswith("__init__.py"), want)
        return pm if isinstance(pm, ParsedModule) else None

    def imports(self, path: str) -> dict[str, str]:
        self._consulted(path)
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

    def names(self, path: str) -> ModuleNames:
        self._consulted(path)
        if path in self.facts and self.facts[path].error is None:
            return self.facts[path].names
        pm = self.parsed(path)
        return module_names(pm) if pm is not None else ModuleNames()

    def origins(self, fq: str, depth: int = 0) -> frozenset[str]:
        """What absolute name ``fq`` finally stands for: followed through the tree's imports,
        aliases (``tune = triton.autotune``, both branches of a conditional one) and star
        imports (``__all__`` respected) to names outside the tree (``triton.autotune``), or
        to the tree module that binds it."""
        parts = fq.split(".")
        for i in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:i])
            path = self.find_module(module)
            if path is None:
                continue
            if depth >= 8:
                return frozenset()
            names, name = self.names(path), parts[i]
            tail = "".join(f".{p}" for p in parts[i + 1:])
            if name in names.aliases:
                return frozenset().union(*(self.origins(t + tail, depth + 1) for t in names.aliases[name]))
            if name in names.defined:
                return frozenset({fq})
            for star in names.stars:
                star_path = self.find_module(star)
                if star_path is None or self.names(star_path).star_binds(name):
                    found = self.origins(f"{star}.{name}{tail}", depth + 1)
                    if found:
                        return found
            return frozenset()
        return frozenset({fq})

    def resolve(self, fq: str, answers: Answers = DEFAULT_ANSWERS):
        """Value of another module's name, for the config evaluator (evaluated there as
        ``answers`` answer: a module list chosen by a device query is chosen per target)."""
        where = self.locate(fq)
        pm = self.parsed(*where) if where is not None else None
        if pm is None or where[1] not in pm.module_bindings():
            # Re-exported from outside the tree (``from .triton_utils import Config``) or
            # through star imports: what it stands for there.
            for origin in sorted(self.origins(fq)):
                known, value = DEFAULT_ANSWERS.lookup(origin)
                if known:
                    return value
                there = self.locate(origin)
                if there is not None and there != where:
                    return self.resolve(origin, answers)
        if where is None:
            raise Unresolved(unknowns.not_in_tree(fq))
        pm = self.parsed(*where)
        if pm is None:
            raise Unresolved(f"uses `{fq}` from {where[0]}, which does not parse")
        return Evaluator(resolve=self.resolve_as(answers), answers=answers,
                         read_data=self.read_data).module_value(pm, where[1])

    def read_data(self, rel: str) -> bytes | None:
        """A data file of the tree (``evaluate.data_files``), by its root-relative path."""
        self.reads.append(rel)
        self._consulted(rel)
        path = self.root / rel
        try:
            if not path.resolve().is_relative_to(self.root.resolve()):
                return None  # a link out of the tree
            return path.read_bytes() if path.is_file() else None
        except OSError:
            return None

    def resolve_as(self, answers: Answers):
        return lambda fq: self.resolve(fq, answers)

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
        self._consulted(where[0])
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


def _through_other_modules(project: Project, facts: dict[str, FileFacts]) -> dict[str, FileFacts]:
    """Files whose decorators or call forms name another module's ``triton.autotune``
    (``from .triton_utils import *``, ``from pkg.utils import tune``) are analysed again,
    knowing those names."""
    out = dict(facts)
    # Only a name some scanned module binds to triton.autotune can be one (a chain of
    # re-exports starts in a file that says "autotune", which the scan analysed): the other
    # callees (``@register(...)``, ``@torch_op(...)``) are not followed, so no file is parsed for them.
    words = {w.decode() for w in alias_words(facts)} | {"autotune"}
    for path, f in facts.items():
        known = frozenset(n for n in f.foreign if n.rsplit(".", 1)[-1] in words
                          and _star_binds(project, f, n) and is_autotune(project.origins(n)))
        pm = project.whole(path) if known else None
        if pm is not None:
            project.autotune[path] = known
            out[path] = replace(f, sites=tuple(find_sites(pm, project.resolve, known)))
    return out


def _star_binds(project: Project, f: FileFacts, fq: str) -> bool:
    """False when ``fq`` is a name the file only has through ``from m import *`` and ``m``
    does not export it (``__all__``, else public names): it is not bound there at all."""
    for star in f.names.stars:
        name = fq[len(star) + 1:].split(".", 1)[0] if fq.startswith(star + ".") else None
        if name is not None and name not in f.names.defined:
            path = project.find_module(star)
            return path is None or project.names(path).star_binds(name)
    return True


def _complete(project: Project, draft: SiteDraft, context: TargetContext) -> SiteDraft:
    if draft.pending is not None or draft.deferred:
        path = draft.site.path
        pm = project.for_sites(path)
        if pm is not None:
            for again in find_sites(pm, project.resolve, project.autotune.get(path, frozenset()), context,
                                    only=draft.site.span):
                if again.site.span == draft.site.span:
                    draft = replace(again, kernel_ref=draft.kernel_ref, pending=None, deferred=False,
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


def _needs_work(draft: SiteDraft) -> bool:
    """Whether ``_complete`` would read other modules for this draft (else it is free)."""
    return (draft.pending is not None or draft.deferred
            or (draft.kernel_ref is not None and draft.site.kernel_span is None)
            or any(p.default is not None and not p.default_known for p in draft.site.params))


def link(root: Path, files: tuple[str, ...], facts: dict[str, FileFacts],
         targets: tuple = (), env: tuple[tuple[str, str], ...] = (), cache=None) -> tuple[AutotuneSite, ...]:
    """``targets`` (``targets.Target``) and ``env``: how configs that ask the device or the
    environment are resolved (``per_target``). ``cache``: a ``link_cache.LinkCache`` that
    keeps each site's completion with what it read."""
    project = Project(root, files, facts)
    context = TargetContext(tuple(targets), dict(env), project.resolve_as, project.read_data,
                            lambda: project.reads)
    facts = _through_other_modules(project, facts)
    drafts = [cache.complete(project, d, context, _complete) if cache is not None and _needs_work(d)
              else _complete(project, d, context) for f in facts.values() for d in f.sites]
    by_handle: dict[tuple[str, str], list[int]] = {}  # two defs of one name (if/else): a launch may be either
    rebound: set[int] = set()  # ``mod.k = triton.autotune(...)(mod.k)``: sites that rebind another module's global
    for i, d in enumerate(drafts):
        if d.handle is not None:
            key = (d.site.path, d.handle.rsplit(".", 1)[-1])
            if d.site.bound_to is not None and "." in d.site.bound_to:
                key = project.locate(d.handle)
                rebound.add(i)
            if key is not None:
                by_handle.setdefault(key, []).append(i)
    launches: dict[int, dict[tuple, LaunchSite]] = {}
    hits: list[tuple[LaunchDraft, list[int]]] = []
    for f in facts.values():
        for ld in f.launches:
            found = []
            for fq in ld.targets:
                where = project.locate(fq)
                for i in by_handle.get(where, ()) if where is not None else ():
                    if i in rebound and not (ld.launch.path == where[0] or "." in ld.launch.callee):
                        continue  # ``from mod import k`` bound ``k`` at import time, maybe before the patch
                    found.append(i)
            if found:
                hits.append((ld, found))
    # Only a launch of a site is read again (its arguments; what it launches stays).
    again = _relaunched(project, [ld for ld, _ in hits])
    for ld, found in hits:
        launch = again.get((ld.launch.path, ld.launch.span), ld).launch
        for i in found:
            launches.setdefault(i, {})[(launch.path, launch.span)] = launch
    out = []
    for i, d in enumerate(drafts):
        found = sorted(launches.get(i, {}).values(), key=lambda l: (l.path, l.span.start_line, l.span.start_col))
        out.append(replace(d.site, launches=tuple(found)))
    return tell_apart(sorted(out, key=lambda s: (s.path, s.line, s.span.start_col)))


def _relaunched(project: Project, drafts: list[LaunchDraft]) -> dict[tuple, LaunchDraft]:
    """Launches whose arguments read a context object made by another module of the tree
    (``ctx = make_ctx(...)`` imported), read again following the tree's modules: (path, span)
    -> the new draft (its arguments replace the per-file pass's)."""
    asking = {(ld.launch.path, ld.launch.span): ld for ld in drafts
              if any(project.locate(fq) is not None for fq in ld.imports)}
    spans: dict[str, set] = {}
    for path, span in asking:
        spans.setdefault(path, set()).add(span)
    out = {}
    for path, wanted in spans.items():
        pm = project.parsed(path)
        for d in find_launches(pm, project.resolve, wanted) if pm is not None else ():
            old = asking[(path, d.launch.span)]
            out[(path, d.launch.span)] = replace(old, launch=replace(old.launch, arguments=d.launch.arguments))
    return out


def tell_apart(sites: list[AutotuneSite]) -> tuple[AutotuneSite, ...]:
    """Sites that share ``path::kernel`` get ``ident_line``: the kernel's def line when the
    defs differ (``if``/``else``), else the site's own line (one kernel autotuned twice)."""
    groups: dict[str, list[int]] = {}
    for i, s in enumerate(sites):
        groups.setdefault(s.ident, []).append(i)
    for members in groups.values():
        if len(members) < 2:
            continue
        defs = [_def_line(sites[i]) for i in members]
        by_def = None not in defs and len(set(defs)) == len(defs)
        for i, line in zip(members, defs):
            sites[i] = replace(sites[i], ident_line=line if by_def else sites[i].line)
    return tuple(sites)


def _def_line(site: AutotuneSite) -> int | None:
    same_file = site.kernel_span is not None and site.kernel_path in (None, site.path)
    return site.kernel_span.start_line if same_file else None


def launch_names(facts: dict[str, FileFacts]) -> frozenset[bytes]:
    """Names a file must mention to possibly launch one of the sites (launch prefilter)."""
    names = set()
    for f in facts.values():
        for d in f.sites:
            if d.handle is not None:
                names.add(d.handle.rsplit(".", 1)[-1].encode())
    return frozenset(names)
