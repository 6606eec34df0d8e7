"""A kernel's reports, kept on disk: a warm ``check`` of an unchanged kernel does no work for it.

With every compile outcome cached, a warm ``check`` of FBGEMM (33 sites) still took ~70 s on a
2-core box: resolving launch specs (``spec_inference``'s walks over the kernel's source, and a
LibCST parse of the kernel's module per ``@triton.heuristics`` kernel) and building the reports
(SMEM fits, spec sanity) for kernels nothing had changed. Their reports are a function of:

- the site as the scan found it (configs, parameters, launches and their arguments, ...): the
  scan re-reads every file it depends on each run, so its output stands for all of them;
- the content of every file the site's verdict reads besides (``changed_inputs.SiteInputsOf``,
  the same list ``--changed-since`` trusts: the files its kernel was cut from, the decorator's
  and launch files with every module of the tree they import, the configs' data files), and the
  tree's list of Python files when the site reads names nothing in the tree provided;
- the run: targets, the whole settings table, ``--assume-dtype`` / ``--assume`` / ``--exact``,
  the SMEM fit switch, ``--full``, the compiler environment and fp-fusion setting, Triton's and
  each ptxas's version, Python's, and the tool's own code (every module of the package: any
  change of ours rebuilds every report; ``disk_cache`` adds the tool/Triton/LibCST versions).

A site whose inputs cannot be listed is never reused. Only final, reproducible outcomes are
stored (a crashed compile, an internal error or a farm hiccup is computed again next time).
A missing or corrupt entry is a miss; writes are atomic, in the shared cache folder, under its
size cap (``disk_cache``, ``cache_admin.trim``).
"""

from __future__ import annotations

import functools
import hashlib
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from autotune_rewrite import disk_cache
from autotune_rewrite.disk_cache import canonical
from autotune_rewrite.changed import SiteInputs
from autotune_rewrite.outcomes import Status

NAMESPACE = "reports"
SCHEMA = 1
_PACKAGE = Path(__file__).resolve().parent.parent
# Outcomes that the same inputs always give again; the others are recomputed every run.
_STORED = frozenset({Status.JUDGED, Status.ASSUMED, Status.NO_LAUNCHABLE, Status.NEEDS_SPEC,
                     Status.UNRESOLVED, Status.SPEC_SUSPECT})


@dataclass(frozen=True)
class Entry:
    reports: tuple  # the site view's KernelReports, in the order the run made them
    warnings: tuple[str, ...] = ()  # the run's warnings about this site (launches not compiled)
    outcomes: int = 0  # compile outcomes they were built from (counted as cached when reused)


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """SHA-256 of every module of the tool: a report is whatever this code computes."""
    h = hashlib.sha256()
    for path in sorted(_PACKAGE.rglob("*.py")):
        h.update(path.relative_to(_PACKAGE).as_posix().encode() + b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()


class ReportCache:
    """Lookups and writes of one ``check`` run. ``inputs_of``: a site's ``SiteInputs``;
    ``tree_files``: the tree's files (for sites whose names a new file may provide);
    ``run``: everything of the run a report depends on besides the site (see the module doc)."""

    def __init__(self, cache_dir: Path, root: Path, inputs_of: Callable[[Any], SiteInputs],
                 tree_files: Callable[[], Iterable[str] | None], run: Any, serves: Iterable[Any] = ()):
        self.store = disk_cache.namespace(NAMESPACE, SCHEMA, cache_dir, suffix=".pickle")
        self.root, self.inputs_of, self.tree_files = Path(root), inputs_of, tree_files
        self.run = [code_digest(), sys.version_info[:2], canonical(run)]
        # Other runs this run's reports answer as well (a ``--full`` report answers the default
        # run: the same verdicts, with the registers the staged compile would skip).
        self.serves = [[code_digest(), sys.version_info[:2], canonical(r)] for r in serves]
        self._also: dict[str, list[str]] = {}
        self.hits = 0
        self.misses = 0

    def key(self, site: Any, targets: tuple) -> str | None:
        """None when the site's inputs cannot be listed (never reused)."""
        try:
            inputs = self.inputs_of(site)
        except Exception:  # noqa: BLE001 - a doubt is a miss, the site is judged as usual
            return None
        if inputs.unknown:
            return None
        files = [[rel, disk_cache.file_digest(self.root / rel)] for rel in sorted(inputs.files)]
        tree = None
        if inputs.open_names:  # a new file may provide a name it reads: the tree's file list counts
            listed = self.tree_files()
            if listed is None:
                return None
            tree = sorted(listed)
        parts = (canonical(site), canonical(targets), files, tree)
        key = self.store.key(self.run, *parts)
        if self.serves:
            self._also[key] = [self.store.key(run, *parts) for run in self.serves]
        return key

    def get(self, key: str | None) -> Entry | None:
        entry = self.store.read_pickle(key, Entry) if key is not None else None
        if entry is None:
            self.misses += 1
            return None
        self.hits += 1
        # Every outcome behind a reused report is a cached one now (``"cached"`` per config).
        return replace(entry, reports=tuple(replace(r, verdicts=tuple(
            replace(v, outcome=replace(v.outcome, cached=True)) for v in r.verdicts)) for r in entry.reports))

    def put(self, key: str | None, entry: Entry) -> bool:
        if key is None or not entry.reports or any(r.status not in _STORED for r in entry.reports):
            return False
        for other in self._also.get(key, ()):
            self.store.write_pickle(other, entry)
        return self.store.write_pickle(key, entry)


__all__ = ["Entry", "ReportCache", "canonical", "code_digest"]
