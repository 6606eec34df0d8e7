"""The facts of one analysed file, kept on disk: an edit re-analyses that file only.

``scan_cache`` reuses a whole ``ScanResult`` while no file of the tree changed; one edited file
used to rescan everything (LibCST parses and metadata of every candidate, most of a warm
``check --changed-since``). This cache sits one level below it: a worker that would analyse a
file first looks up its ``FileFacts`` here.

What a file's facts depend on, exactly (``analyze_source`` reads nothing else; a wrong key is a
kernel judged on stale facts):
- the file's bytes (SHA-256) and its path (the module name and ``__init__`` come from it);
- the mode (``sites`` or ``launches``: what the analysis collects);
- the tree's names (``scan._tree_names``), but only through ``name.split(".")[0] in tree_names``
  for absolute names the file itself spells (imports, dotted names, star imports) or that its own
  module name starts (relative imports): so only the tree names that are one of the file's words
  or one of its path's parts count. A new module elsewhere changes no other file's key unless
  that file mentions its name;
- the locator's code and LibCST's version (``locator_digest``; ``disk_cache`` adds
  the tool, LibCST and Triton versions and the schema).
- the alias words (names other modules bind to ``triton.autotune``) the file says: the focused
  parse keeps the defs that use them (``locate.focus``).
Not in the key, because the per-file pass never sees them: the run's targets, env and data
files (configs asking for those are left to linking, which runs on every scan), the kernel
names and the alias words the file does not say (they only decide *whether* a file is
analysed: the byte prefilter runs before the lookup, every time).

A missing, unreadable or corrupt entry is a miss; the fresh facts are written over it
(atomically, ``disk_cache.write_atomic``), in the same cache folder and under the same size cap
as the other caches (``cache_admin.trim`` after ``check``).
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

from autotune_rewrite import disk_cache
from autotune_rewrite.files import mentions_word, module_name

NAMESPACE = "file-facts"
SCHEMA = 1
_WORD = re.compile(r"\w+")


def relevant_tree_names(path: str, data: bytes, tree_names: frozenset[str]) -> tuple[str, ...]:
    """The tree names this file's analysis can test: those among its words (strings and comments
    included: a superset) or its own module name's parts."""
    if not tree_names:
        return ()
    words = set(_WORD.findall(data.decode("utf-8", "replace")))
    words.update(module_name(path).split("."))
    return tuple(sorted(words & tree_names))


def facts_key(path: str, data: bytes, mode: str, tree_names: frozenset[str], locator: str,
              words: tuple[bytes, ...] = ()) -> str:
    # Python's version too: LibCST's parser and ``ast`` follow the running interpreter's grammar.
    said = tuple(w.decode() for w in words if mentions_word(data, (w,)))
    return disk_cache.make_key(NAMESPACE, SCHEMA, locator, sys.version_info[:2], path, mode,
                               hashlib.sha256(data).hexdigest(), relevant_tree_names(path, data, tree_names), said)


class FactsCache:
    """Lookups and writes for one scan; ``None`` folder: nothing is read or written."""

    def __init__(self, cache_dir: Path | None, locator: str):
        self.store = disk_cache.namespace(NAMESPACE, SCHEMA, cache_dir, suffix=".pickle") if cache_dir else None
        self.locator = locator

    def get(self, path: str, data: bytes, mode: str, tree_names: frozenset[str], words: tuple[bytes, ...] = ()):
        """The stored facts, or (None, key) on a miss (key None when there is no cache)."""
        from autotune_rewrite.locate.facts import FileFacts

        if self.store is None:
            return None, None
        key = facts_key(path, data, mode, tree_names, self.locator, words)
        facts = self.store.read_pickle(key, FileFacts)
        if facts is not None and facts.path != path:
            facts = None  # cannot happen with an honest key; never hand back another file's facts
        return facts, key

    def put(self, key: str | None, facts) -> None:
        # A file that failed (bad UTF-8, a syntax error, a locator crash, too deep for this
        # process's recursion limit) is not stored: rare, and a crash or a depth limit is the
        # run's state, not the file's content; the next run simply tries again.
        if self.store is not None and key is not None and facts.error is None:
            self.store.write_pickle(key, facts)


__all__ = ["FactsCache", "facts_key", "relevant_tree_names"]
