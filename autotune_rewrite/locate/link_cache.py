"""A site's linking step, kept on disk with what it read: an edit elsewhere does not redo it.

With every file's facts cached (``facts_cache``), a scan after a one-file edit still spent most
of its time linking: a site whose configs wait on another module's names, or ask the device,
has its module parsed and its configs evaluated again (LibCST parse and metadata of the
module, and of every module the evaluation reaches). What that step computes
(``linking._complete``) is a function of:

- the site's draft (from its file's facts), the run's targets and env, and which names of
  other modules stand for ``triton.autotune`` in its file (``Project.autotune``);
- every file ``Project`` opened or consulted for it (``parsed``, ``imports``, ``names``, a
  kernel's facts, data files), by content and by the tree names it mentions (a file's facts
  depend on those too, ``facts_cache``);
- every module lookup it made (``find_module``) and its answer: a new or removed file that
  would change an answer (a module now in the tree) shows there;
- the locator's code, Python's and LibCST's versions.

So an entry holds its result and those recorded dependencies, and is reused only when every
file still has its digest and every lookup still gets the same answer (a build system's
recorded-dependency check). A missing, corrupt or outdated entry is a miss, and the fresh
result (with its fresh dependencies) replaces it; writes are atomic (``disk_cache``).
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from autotune_rewrite import disk_cache
from autotune_rewrite.locate.facts_cache import relevant_tree_names

NAMESPACE = "links"
SCHEMA = 1


@dataclass(frozen=True)
class Entry:
    files: tuple[tuple[str, Any], ...]  # (path, (SHA-256 or None when absent, tree names it mentions))
    modules: tuple[tuple[str, str | None], ...]  # (dotted name, the file it resolved to)
    result: Any  # the completed SiteDraft


class Recorder:
    """What ``Project`` consulted while one site was linked."""

    def __init__(self) -> None:
        self.files: set[str] = set()
        self.modules: dict[str, str | None] = {}


class LinkCache:
    def __init__(self, cache_dir: Path, root: Path, locator: str, tree_names: frozenset[str] = frozenset()):
        self.store = disk_cache.namespace(NAMESPACE, SCHEMA, cache_dir, suffix=".pickle")
        self.root, self.locator, self.tree_names = Path(root), locator, tree_names
        self._prints: dict[str, tuple] = {}
        self.hits = 0

    def fingerprint(self, rel: str) -> tuple:
        """(SHA-256, tree names mentioned) of a file; (None, ()) when it cannot be read."""
        if rel not in self._prints:
            try:
                data = (self.root / rel).read_bytes()
            except OSError:
                self._prints[rel] = (None, ())
            else:
                self._prints[rel] = (hashlib.sha256(data).hexdigest(),
                                     relevant_tree_names(rel, data, self.tree_names))
        return self._prints[rel]

    def complete(self, project, draft, context, compute: Callable) -> Any:
        """``compute(project, draft, context)``, or its stored result while what it read is unchanged."""
        key = self.store.key(self.locator, sys.version_info[:2], disk_cache.canonical(draft),
                             disk_cache.canonical((context.targets, context.env)),
                             sorted(project.autotune.get(draft.site.path, frozenset())))
        entry = self.store.read_pickle(key, Entry)
        if entry is not None and self._holds(project, entry):
            self.hits += 1
            return entry.result
        recorder = Recorder()
        project.recorder = recorder
        try:
            result = compute(project, draft, context)
        finally:
            project.recorder = None
        self.store.write_pickle(key, Entry(tuple((f, self.fingerprint(f)) for f in sorted(recorder.files)),
                                           tuple(sorted(recorder.modules.items())), result))
        return result

    def _holds(self, project, entry: Entry) -> bool:
        if any(self.fingerprint(path) != tuple(known) for path, known in entry.files):
            return False
        return all(project.resolver.find(dotted) == found for dotted, found in entry.modules)


__all__ = ["Entry", "LinkCache", "Recorder"]
