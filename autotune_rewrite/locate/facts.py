"""Everything one file says, as plain picklable data: what a worker process sends back.

``analyze_source`` never raises for bad input: a file that is not UTF-8 or does not parse comes
back as a ``FileError`` naming the file, the place and the fix.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst

from autotune_rewrite.evaluate import Pending, Unresolved
from autotune_rewrite.evaluate import unknowns
from autotune_rewrite.locate.aliases import ModuleNames, module_names
from autotune_rewrite.locate.focus import Want
from autotune_rewrite.locate.kernels import KernelInfo, is_jit, kernel_info
from autotune_rewrite.locate.launches import LaunchCollector, LaunchDraft
from autotune_rewrite.locate.names import absolutize
from autotune_rewrite.locate.parsed import ParsedModule
from autotune_rewrite.locate.sites import SiteDraft, SiteFinder
from autotune_rewrite.model import FileError

MODE_SITES = "sites"  # files that mention autotune: sites, kernels and launches
MODE_LAUNCHES = "launches"  # files that mention a kernel's name: launches and re-exports only


@dataclass(frozen=True)
class FileFacts:
    path: str
    sites: tuple[SiteDraft, ...] = ()
    launches: tuple[LaunchDraft, ...] = ()
    kernels: dict[str, KernelInfo] = field(default_factory=dict)  # module-level @triton.jit defs
    imports: dict[str, str] = field(default_factory=dict)  # module-level ``local name -> absolute``
    error: FileError | None = None
    names: ModuleNames = field(default_factory=ModuleNames)  # aliases, star imports, ``__all__``
    # Decorator / call-form callees naming another module of the tree that may re-export
    # ``triton.autotune`` (``from .triton_utils import *``); linking decides.
    foreign: frozenset[str] = frozenset()
    # Top-level defs and classes the focused parse left out (``locate.focus``): a name another
    # module asks for among them is looked up in the whole file.
    dropped: frozenset[str] = frozenset()


def pending_resolver(tree_names: frozenset[str]):
    """Per-file pass: names of other modules of the tree are left to ``linking``; names from
    outside the tree (``os``, ``yaml``, ``torch``) are refused here, so linking never re-parses
    a file for them."""

    def resolve(fq: str):
        if fq.split(".", 1)[0] in tree_names:
            raise Pending(fq)
        raise Unresolved(unknowns.not_in_tree(fq))

    return resolve


def module_imports(pm: ParsedModule) -> dict[str, str]:
    out: dict[str, str] = {}
    for stmt in pm.tree.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                base = "." * len(small.relative) + (pm.code(small.module) if small.module else "")
                for alias in small.names:
                    name = pm.code(alias.name)
                    local = alias.asname.name.value if alias.asname else name
                    joined = f"{base}.{name}" if base and not base.endswith(".") else f"{base}{name}"
                    out[local] = absolutize(joined, pm.module_name, pm.is_package)
            elif isinstance(small, cst.Import):
                for alias in small.names:
                    if alias.asname is not None:
                        out[alias.asname.name.value] = pm.code(alias.name)
    return out


def parse_source(path: str, data: bytes, module_name: str, is_package: bool,
                 focus: Want | None = None) -> ParsedModule | FileError:
    """``focus``: parse only what the locator needs (``ParsedModule.parse``)."""
    try:
        source = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return FileError(path, f"not UTF-8 (byte 0x{data[exc.start]:02x} on line {line}); save the file as UTF-8")
    try:
        return ParsedModule.parse(path, source, module_name, is_package, focus)
    except cst.ParserSyntaxError as exc:
        what = (exc.message or "syntax error").splitlines()[0].split(": ")[-1]
        return FileError(path, f"does not parse (line {exc.editor_line}): "
                               f"{what}; fix the syntax or --exclude it")
    except cst.CSTValidationError as exc:  # the parser took it, LibCST's node checks did not
        return FileError(path, f"does not parse: {exc}; fix the syntax or --exclude it")
    except RecursionError:
        return FileError(path, "nested too deeply to parse; --exclude it")


# Modules the in-process scan (-j1, small trees) parsed that hold sites or kernels, by (path,
# content): linking asks for exactly those again (a site whose configs wait on another module,
# a launched kernel's parameters), and parsing plus LibCST's metadata is most of a scan's time.
# A pool's workers keep nothing (their modules cannot come back cheaply). ``scan`` empties it.
_KEPT: dict[tuple[str, bytes], ParsedModule] = {}


def kept(path: str, data: bytes) -> ParsedModule | None:
    """The module this process already parsed from exactly ``data``, if it kept it."""
    return _KEPT.get((path, data))


def forget_kept() -> None:
    _KEPT.clear()


def analyze_source(path: str, data: bytes, module_name: str, is_package: bool, mode: str,
                   tree_names: frozenset[str] = frozenset(), keep: bool = False,
                   words: tuple[str, ...] = ()) -> FileFacts:
    """``words``: names other modules bind to ``triton.autotune`` (the focus keeps what uses them)."""
    pm = parse_source(path, data, module_name, is_package, Want(words, tree_names))
    if isinstance(pm, FileError):
        return FileFacts(path, error=pm)
    facts = _analyze(pm, path, mode, tree_names)
    if keep and facts.error is None and (facts.sites or facts.kernels):
        _KEPT[(path, data)] = pm
    return facts


def _analyze(pm: ParsedModule, path: str, mode: str, tree_names: frozenset[str]) -> FileFacts:
    try:
        # One traversal for both collectors (LibCST's batched visitors).
        collector = LaunchCollector(pm)
        names = module_names(pm)
        finder = SiteFinder(pm, pending_resolver(tree_names), names, tree_names) if mode == MODE_SITES else None
        cst.visit_batched(pm.tree, [collector] if finder is None else [finder, collector])
        kernels = ({s.name.value: kernel_info(pm, s) for s in pm.tree.body
                    if isinstance(s, cst.FunctionDef) and is_jit(pm, s)} if finder is not None else {})
        sites = tuple(finder.sites) if finder is not None else ()
        foreign = frozenset(finder.foreign) if finder is not None else frozenset()
        return FileFacts(path, sites, tuple(collector.drafts()), kernels, module_imports(pm), names=names,
                         foreign=foreign, dropped=pm.dropped)
    except RecursionError:
        return FileFacts(path, error=FileError(path, "nested too deeply to analyse; --exclude it"))
    except Exception as exc:  # a locator bug must not sink the whole scan: name the file
        return FileFacts(path, error=FileError(
            path, f"internal error while analysing ({type(exc).__name__}: {exc}); please report it, "
                  f"or --exclude the file"))


def read_source(root: str, path: str) -> bytes | FileFacts:
    try:
        return Path(root, path).read_bytes()
    except OSError as exc:
        return FileFacts(path, error=FileError(path, f"cannot be read ({exc.strerror})"))
