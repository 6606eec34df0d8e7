"""The scan pipeline: files -> parse in a process pool -> per-file facts -> link -> ScanResult.

Two passes over the files, both in the pool and both behind a byte prefilter:
1. every file is read once; those that say ``autotune`` are analysed (sites, kernels,
   launches, imports); those with a subscript call (``](``) are set aside; when an analysed
   module binds another name to ``triton.autotune`` (``tune = triton.autotune``), the files
   that use that name are analysed too (``aliases.alias_words``; nothing extra otherwise), and
   so is an analysed file that says one of them in a def its focused parse left out;
2. the set-aside files that mention one of the found kernels' names: launches and imports.
A file is parsed only when it passes a prefilter, and then only the statements the locator
needs (``locate.focus``; LibCST's metadata on a trimmed copy of those, see ``locate.parsed``).
``scan`` is pure: no printing, nothing written.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable

from autotune_rewrite import interrupts, stopwatch
from autotune_rewrite.errors import UserError
from autotune_rewrite.files import FileSet, discover, is_site_candidate, may_launch, mentions_any, mentions_word, module_name
from autotune_rewrite.locate.aliases import alias_words
from autotune_rewrite.locate.facts_cache import FactsCache
from autotune_rewrite.locate.facts import MODE_LAUNCHES, MODE_SITES, FileFacts, analyze_source, forget_kept, read_source
from autotune_rewrite.locate.kernel_names import ambiguity, matching
from autotune_rewrite.locate.link_cache import LinkCache
from autotune_rewrite.locate.linking import launch_names, link
from autotune_rewrite.locate.locator_digest import locator_digest
from autotune_rewrite.model import AutotuneSite, ScanResult
from autotune_rewrite.settings import Settings, load_settings

if TYPE_CHECKING:
    from concurrent.futures import Executor

Progress = Callable[[int, int], None]  # (files done, files total)
SMALL_TREE = 64


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _chunk(root: str, paths: list[str], mode: str, names: frozenset[bytes],
           tree_names: frozenset[str], words: tuple[bytes, ...] = (),
           keep: bool = False, cache: FactsCache | None = None) -> tuple[list[FileFacts], list[str], int]:
    """One worker task: read, prefilter, analyse (or take the file's facts from ``cache``).
    Also returns the files the second pass must look at again (they may launch a kernel), and
    how many files were really analysed. ``keep``: in this process, keep the parsed modules
    linking will ask for (``facts.kept``)."""
    out: list[FileFacts] = []
    later: list[str] = []
    analysed = 0
    for p in paths:
        data = read_source(root, p)
        if isinstance(data, FileFacts):
            out.append(data)
            continue
        if mode == MODE_SITES and not (is_site_candidate(data) or mentions_word(data, words)):
            if may_launch(data):
                later.append(p)
            continue
        if mode == MODE_LAUNCHES and not mentions_any(data, names):
            continue
        hit, key = cache.get(p, data, mode, tree_names, words) if cache is not None else (None, None)
        if hit is None:
            hit = analyze_source(p, data, module_name(p), p.endswith("__init__.py"), mode, tree_names, keep,
                                 tuple(w.decode() for w in words))
            analysed += 1
            if cache is not None:
                cache.put(key, hit)
        out.append(hit)
    return out, later, analysed


def _chunks(paths: list[str], jobs: int) -> list[list[str]]:
    # Few, large chunks keep the pool's per-task cost low; several per worker keep it balanced
    # when candidates cluster in one folder (interleaved, so each chunk gets a share).
    n = max(1, min(len(paths), jobs * 4))
    return [paths[i::n] for i in range(n)] if paths else []


def _run(pool: Executor | None, root: str, paths: list[str], mode: str, jobs: int,
         progress: Progress | None, done: int, total: int,
         names: frozenset[bytes] = frozenset(),
         tree_names: frozenset[str] = frozenset(),
         words: tuple[bytes, ...] = (),
         cache: FactsCache | None = None,
         analysed: list[int] | None = None) -> tuple[list[FileFacts], list[str], int]:
    chunks = _chunks(paths, jobs)
    results: Iterable[tuple[list[FileFacts], list[str], int]]
    n = len(chunks)
    if pool is None:
        results = (_chunk(root, c, mode, names, tree_names, words, True, cache) for c in chunks)
    else:
        results = pool.map(_chunk, [root] * n, chunks, [mode] * n, [names] * n, [tree_names] * n, [words] * n,
                           [False] * n, [cache] * n)
    out: list[FileFacts] = []
    later: list[str] = []
    for chunk, (facts, maybe, fresh) in zip(chunks, results):
        out.extend(facts)
        later.extend(maybe)
        if analysed is not None:
            analysed[0] += fresh
        done += len(chunk)
        if progress is not None:
            progress(done, total)
    return out, sorted(later), done


def scan(root: Path, paths: Iterable[Path] | None = None, jobs: int | None = None,
         settings: Settings | None = None, progress: Progress | None = None,
         cache_dir: Path | None = None) -> ScanResult:
    """Locate every autotune site under ``root`` (a folder or one file) and its launches.

    ``paths``: explicit files (scanned even if excluded); ``settings``: defaults to the
    target's own ``[tool.autotune-rewrite]``; its ``arch`` and ``env`` answer the device and
    environment queries of configs (``per_target``); ``cache_dir``: each analysed file's facts
    are looked up there first and stored after (``facts_cache``; None: every file is analysed).
    Raises ``UserError`` only when nothing can be
    scanned (missing path, bad settings); per-file problems land in ``ScanResult.errors``.
    """
    root = Path(root)
    if not root.exists():
        raise UserError(f"{root}: no such file or folder; pass a checkout, folder or .py file")
    settings = settings if settings is not None else load_settings(root)
    fileset = discover(root, settings.exclude, tuple(Path(p) for p in paths or ()))
    base = str(fileset.root)
    files = list(fileset.files)
    # A pool costs ~0.1 s to start: by default small trees are scanned in this process, unless
    # they hold several kernel files (each costs 0.3-3 s of LibCST passes: 40 of them took 23 s
    # serially in a 45-file tree).
    if jobs is None:
        jobs = default_jobs() if len(files) >= SMALL_TREE or _candidates(base, files) > 1 else 1
    jobs = max(1, jobs)
    total = len(files)
    pool = interrupts.process_pool(jobs) if jobs > 1 and len(files) > 1 else None
    cache = FactsCache(cache_dir, locator_digest()) if cache_dir is not None else None
    analysed = [0]
    try:
        with stopwatch.stage("scan"):
            tree_names = _tree_names(fileset.project)
            first, later, done = _run(pool, base, files, MODE_SITES, jobs, progress, 0, total,
                                      tree_names=tree_names, cache=cache, analysed=analysed)
            facts = {f.path: f for f in first}
            # Pass 1b (only when a scanned module binds a name to triton.autotune): the files
            # that never say "autotune" but use such a name (``from pkg.utils import tune``).
            # The focused parse of pass 1 may have left out a def that uses such a name: a file
            # that says one of them and lost defs is analysed again, with the names known.
            seen_words: set[bytes] = set()
            while words := tuple(sorted(alias_words(facts) - seen_words)):
                seen_words.update(words)
                rest = [p for p in files if p not in facts or _lost_words(base, facts[p], words)]
                more, _, _ = _run(pool, base, rest, MODE_SITES, jobs, None, done, total,
                                  tree_names=tree_names, words=tuple(sorted(seen_words)), cache=cache,
                                  analysed=analysed)
                facts.update({f.path: f for f in more})
            later = [p for p in later if p not in facts]
            names = launch_names(facts)
            later += _launchers_outside(base, fileset, names)
            # Pass 2: only files with a subscript call are read again, and only those that name a
            # found kernel are parsed (files that merely re-export are read on demand by linking).
            second, _, _ = _run(pool, base, later if names else [], MODE_LAUNCHES, jobs, None, done, total, names,
                                cache=cache, analysed=analysed)
    except BaseException:
        if pool is not None:  # an interrupt or a bug: end the workers now, never mask what happened
            interrupts.stop_pool(pool)
        raise
    if pool is not None:
        pool.shutdown()
    facts.update({f.path: f for f in second})
    try:
        with stopwatch.stage("link"):
            links = LinkCache(cache_dir, fileset.root, locator_digest(), tree_names) if cache_dir is not None else None
            sites = link(fileset.root, fileset.project, {p: f for p, f in facts.items() if f.error is None},
                         _targets(settings), settings.env, links)
    finally:
        forget_kept()
    errors = tuple(sorted((f.error for f in facts.values() if f.error is not None), key=lambda e: e.path))
    if progress is not None:
        progress(total, total)
    return ScanResult(root=str(root), files_scanned=total, sites=sites, errors=errors, files_analysed=analysed[0])


def _targets(settings: Settings) -> tuple:
    """The run's targets (``arch`` / ``--arch``): configs that ask the device are resolved for each."""
    from autotune_rewrite.targets import DEFAULT_TARGET, resolve_target

    return tuple(dict.fromkeys(resolve_target(a) for a in settings.arch or (DEFAULT_TARGET,)))


def _lost_words(root: str, facts: FileFacts, words: tuple[bytes, ...]) -> bool:
    """Whether the focus left defs out of this analysed file, which says one of ``words``."""
    if not facts.dropped or facts.error is not None:
        return False
    data = read_source(root, facts.path)
    return isinstance(data, bytes) and mentions_word(data, words)


def _launchers_outside(root: str, fileset: FileSet, names: frozenset[bytes]) -> list[str]:
    """Files of the project outside a limited scan that may launch one of its kernels (the same
    byte prefilters as pass 2): ``check pkg/ops/gemm.py`` sees the wrapper in ``pkg/layers.py``."""
    if not fileset.tree or not names:
        return []
    scanned = set(fileset.files)
    out = []
    for rel in fileset.tree:
        if rel in scanned or not rel.endswith(".py"):
            continue
        data = read_source(root, rel)
        if isinstance(data, bytes) and may_launch(data) and mentions_any(data, names):
            out.append(rel)
    return out


def _candidates(root: str, files: list[str]) -> int:
    """Files of a small tree that the first pass will parse (the same byte prefilter)."""
    return sum(1 for f in files if isinstance(data := read_source(root, f), bytes) and is_site_candidate(data))


def _tree_names(files: list[str]) -> frozenset[str]:
    """Every folder and module name in the tree: an absolute name can only point into the tree
    when its first part is one of these (``src/`` layouts included)."""
    names: set[str] = set()
    for f in files:
        names.update(module_name(f).split("."))
    return frozenset(names)


def find_site(result: ScanResult, kernel: str, path: str | None = None) -> AutotuneSite | None:
    """The site ``kernel`` names (any spelling ``--kernel`` takes, see ``kernel_names``;
    ``path`` narrows it to a file); None when absent.

    Raises ``UserError`` when the name is ambiguous (same kernel name in several files)."""
    hits = matching(result.sites, kernel if path is None else f"{path}::{kernel}")
    error = ambiguity(kernel, hits)
    if error is not None:
        raise error
    return hits[0] if hits else None


__all__ = ["default_jobs", "find_site", "scan"]
