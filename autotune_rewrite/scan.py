"""The scan pipeline: files -> parse in a process pool -> per-file facts -> link -> ScanResult.

Two passes over the files, both in the pool and both behind a byte prefilter:
1. files that say ``autotune``: sites, kernels, launches, imports;
2. the other files that mention one of the found kernels' names: launches and re-exports.
A file is parsed only when it passes a prefilter, and LibCST's metadata runs on a trimmed copy
(see ``locate.parsed``). ``scan`` is pure: no printing, nothing written.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Callable, Iterable

from autotune_rewrite.errors import UserError
from autotune_rewrite.files import discover, module_name
from autotune_rewrite.locate.facts import MODE_LAUNCHES, MODE_SITES, FileFacts, analyze_file
from autotune_rewrite.locate.linking import launch_names, link
from autotune_rewrite.model import AutotuneSite, ScanResult
from autotune_rewrite.settings import Settings, load_settings

Progress = Callable[[int, int], None]  # (files done, files total)
SMALL_TREE = 64


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _chunk(root: str, paths: list[str], mode: str, names: frozenset[bytes],
           tree_names: frozenset[str]) -> list[FileFacts]:
    out = []
    for p in paths:
        facts = analyze_file(root, p, module_name(p), p.endswith("__init__.py"), mode, names, tree_names)
        if facts is not None:
            out.append(facts)
    return out


def _chunks(paths: list[str], jobs: int) -> list[list[str]]:
    # Few, large chunks keep the pool's per-task cost low; several per worker keep it balanced
    # when candidates cluster in one folder (interleaved, so each chunk gets a share).
    n = max(1, min(len(paths), jobs * 4))
    return [paths[i::n] for i in range(n)] if paths else []


def _run(pool: ProcessPoolExecutor | None, root: str, paths: list[str], mode: str, jobs: int,
         progress: Progress | None, done: int, total: int,
         names: frozenset[bytes] = frozenset(),
         tree_names: frozenset[str] = frozenset()) -> tuple[list[FileFacts], int]:
    chunks = _chunks(paths, jobs)
    results: Iterable[list[FileFacts]]
    n = len(chunks)
    if pool is None:
        results = (_chunk(root, c, mode, names, tree_names) for c in chunks)
    else:
        results = pool.map(_chunk, [root] * n, chunks, [mode] * n, [names] * n, [tree_names] * n)
    out: list[FileFacts] = []
    for chunk, res in zip(chunks, results):
        out.extend(res)
        done += len(chunk)
        if progress is not None:
            progress(done, total)
    return out, done


def scan(root: Path, paths: Iterable[Path] | None = None, jobs: int | None = None,
         settings: Settings | None = None, progress: Progress | None = None) -> ScanResult:
    """Locate every autotune site under ``root`` (a folder or one file) and its launches.

    ``paths``: explicit files (scanned even if excluded); ``settings``: defaults to the
    target's own ``[tool.autotune-rewrite]``. Raises ``UserError`` only when nothing can be
    scanned (missing path, bad settings); per-file problems land in ``ScanResult.errors``.
    """
    root = Path(root)
    if not root.exists():
        raise UserError(f"{root}: no such file or folder; pass a checkout, folder or .py file")
    settings = settings if settings is not None else load_settings(root)
    fileset = discover(root, settings.exclude, tuple(Path(p) for p in paths or ()))
    base = str(fileset.root)
    files = list(fileset.files)
    # A pool costs ~0.1 s to start: by default small trees are scanned in this process.
    jobs = (default_jobs() if len(files) >= SMALL_TREE else 1) if jobs is None else max(1, jobs)
    total = len(files)
    pool = ProcessPoolExecutor(max_workers=jobs) if jobs > 1 and len(files) > 1 else None
    try:
        first, done = _run(pool, base, files, MODE_SITES, jobs, progress, 0, total, tree_names=_tree_names(files))
        facts = {f.path: f for f in first}
        names = launch_names(facts)
        # Pass 2 (launch-only files) is prefiltered by the workers too, so the re-read of the
        # other files runs in parallel.
        rest = [p for p in files if p not in facts] if names else []
        second, _ = _run(pool, base, rest, MODE_LAUNCHES, jobs, None, done, total, names)
    finally:
        if pool is not None:
            pool.shutdown()
    facts.update({f.path: f for f in second})
    sites = link(fileset.root, fileset.files, {p: f for p, f in facts.items() if f.error is None})
    errors = tuple(sorted((f.error for f in facts.values() if f.error is not None), key=lambda e: e.path))
    if progress is not None:
        progress(total, total)
    return ScanResult(root=str(root), files_scanned=total, sites=sites, errors=errors)


def _tree_names(files: list[str]) -> frozenset[str]:
    """Every folder and module name in the tree: an absolute name can only point into the tree
    when its first part is one of these (``src/`` layouts included)."""
    names: set[str] = set()
    for f in files:
        names.update(module_name(f).split("."))
    return frozenset(names)


def find_site(result: ScanResult, kernel: str, path: str | None = None) -> AutotuneSite | None:
    """The site wrapping ``kernel`` (``path::kernel`` also accepted); None when absent.

    Raises ``UserError`` when the name is ambiguous (same kernel name in several files)."""
    if path is None and "::" in kernel:
        path, kernel = kernel.split("::", 1)
    hits = [s for s in result.sites if s.kernel == kernel and (path is None or s.path == path)]
    if len(hits) > 1:
        where = ", ".join(s.ident for s in hits)
        raise UserError(f"kernel {kernel} is ambiguous ({where}); name it as path::kernel")
    return hits[0] if hits else None


__all__ = ["default_jobs", "find_site", "scan"]
