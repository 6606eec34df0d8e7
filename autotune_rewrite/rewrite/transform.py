"""Rewrite stage: turn a variant ``Decision`` into new file texts (pure; nothing is written).

Each transform finds its nodes with LibCST (by the spans the scan reported) and emits text
edits, so everything it does not touch stays byte-identical. Every changed file is parsed
again before it is returned (black's habit of checking its own output).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Callable, Sequence as Seq

import libcst as cst

from autotune_rewrite.errors import UserError
from autotune_rewrite.model import AutotuneSite
from autotune_rewrite.rewrite import bucket, shared_lists
from autotune_rewrite.rewrite.configs import config_edits, find_autotune_call
from autotune_rewrite.rewrite.device_guard import guard_edits
from autotune_rewrite.text_edits import Edit, apply_edits
from autotune_rewrite.rewrite.facts import Note
from autotune_rewrite.rewrite.parsed import ParsedFile
from autotune_rewrite.rewrite.decision import Decision
from autotune_rewrite.settings.formatter import DEFAULT


@dataclass(frozen=True)
class FileChange:
    path: str  # relative to the scan root, POSIX separators
    before: str
    after: str


@dataclass(frozen=True)
class RewriteResult:
    decision: Decision
    changes: tuple[FileChange, ...] = ()  # only files whose text changed
    notes: tuple[Note, ...] = ()  # things the user should know (a generator replaced by a list)

    @property
    def changed(self) -> bool:
        return bool(self.changes)


class _Files:
    def __init__(self, read: Callable[[str], str], line_length: Callable[[str], int] | None) -> None:
        self.read, self.line_length = read, line_length or (lambda path: DEFAULT)
        self.parsed: dict[str, ParsedFile] = {}
        self.edits: dict[str, list[Edit]] = {}

    def __call__(self, path: str) -> ParsedFile:
        if path not in self.parsed:
            self.parsed[path] = ParsedFile(path, self.read(path), self.line_length(path))
        return self.parsed[path]

    def add(self, path: str, edits: Seq[Edit]) -> None:
        # Kernels that share one written list (a decorator object ``tuner = triton.autotune(...)``
        # applied to both) may ask for the same edit: it is made once. Different edits of the
        # same text still overlap, and ``apply_edits`` refuses them.
        have = self.edits.setdefault(path, [])
        seen = {(e.start, e.end, e.text) for e in have}
        have.extend(e for e in edits if (e.start, e.end, e.text) not in seen)


def rewrite(
    decision: Decision,
    read: Callable[[str], str],
    *,
    batch_expr: str | None = None,
    buckets: Seq[int] = bucket.DEFAULT_BUCKETS,
    sites: Seq[AutotuneSite] = (),
    inline: bool = False,
    repo_texts: Callable[[], dict[str, str]] | None = None,
    decided: Mapping[Group, Decision] | None = None,
    line_length: Callable[[str], int] | None = None,
) -> RewriteResult:
    """Edit the site's files so they carry ``decision``. ``read(path)`` returns a file's text
    (paths as the scan reported them, newlines untranslated). ``sites``: every site of the scan
    (an in-place edit must not change what the others read); ``inline``: write ``configs=`` out
    as a literal list where no in-place edit exists (else that is ``InPlaceRefused``), and remove
    what it leaves unused when ``repo_texts()`` (every Python file, path -> text) is given.
    ``decided``: every decision of the run, by group, so a list other kernels read may lose
    what their own decisions drop too (``shared_lists``). ``line_length(path)``: the width the
    repository's formatters give the file (default 88)."""
    changes, notes = rewrite_all([decision], read, batch_expr=batch_expr, buckets=buckets, sites=sites, inline=inline,
                                 repo_texts=repo_texts, decided=decided, line_length=line_length)
    return RewriteResult(decision, changes, notes)


def rewrite_all(
    decisions: Seq[Decision],
    read: Callable[[str], str],
    *,
    batch_expr: str | None = None,
    buckets: Seq[int] = bucket.DEFAULT_BUCKETS,
    sites: Seq[AutotuneSite] = (),
    inline: bool = False,
    repo_texts: Callable[[], dict[str, str]] | None = None,
    decided: Mapping[Group, Decision] | None = None,
    line_length: Callable[[str], int] | None = None,
) -> tuple[tuple[FileChange, ...], tuple[Note, ...]]:
    """Several kernels' decisions at once (``diff`` over a tree): one set of edits per file."""
    files = _Files(read, line_length)
    notes: list[Note] = []
    helpers: set[str] = set()
    live = [d for d in decisions if not (d.skipped or d.needs)]
    everyone = shared_lists.readers(sites, decided if decided is not None else {_group(d): d for d in live})
    guards = _guards(live)
    for decision in live:
        users = shared_lists.others(_group(decision), everyone)
        notes += _collect(decision, files, helpers, batch_expr, buckets, users, inline, repo_texts,
                          guards.pop(decision.site.ident, None))
    changes = []
    for path, path_edits in files.edits.items():
        if not path_edits:
            continue
        before = files(path).text
        after = apply_edits(before, path_edits)
        if after == before:
            continue
        try:
            cst.parse_module(after)
        except cst.ParserSyntaxError as exc:  # a transform bug, never the user's input
            raise RuntimeError(f"rewritten {path} does not parse: {exc}") from exc
        changes.append(FileChange(path, before, after))
    return tuple(sorted(changes, key=lambda c: c.path)), tuple(notes)


def _group(d: Decision) -> shared_lists.Group:
    return d.site.ident, d.site.view_targets


def _guards(decisions: Seq[Decision]) -> dict[str, Decision]:
    """Per site, the decision whose guard is written: one guard per decorator, holding what
    every branch of a kernel whose configs are chosen per target guards (each on its targets)."""
    out: dict[str, Decision] = {}
    for d in decisions:
        first = out.get(d.site.ident)
        out[d.site.ident] = d if first is None else replace(first, guarded=(*first.guarded, *d.guarded))
    return out


def _collect(decision: Decision, files: _Files, helpers: set[str], batch_expr, buckets, users, inline,
             repo_texts=None, guard: Decision | None = None) -> list[str]:
    site = decision.site
    pf = files(site.path)
    edits, notes = config_edits(pf, site, decision, files, users, inline, repo_texts)
    for path, path_edits in edits.items():
        files.add(path, path_edits)
    if guard is not None:  # fleet: some targets only, or a list another kernel reads
        files.add(site.path, guard_edits(pf, guard.site, guard, find_autotune_call(pf, guard.site)))
    if not decision.add_bs_bucket:
        return notes
    if not site.launches:
        raise UserError(
            f"{site.ident}: v3 adds a {bucket.PARAM} argument but the scan found no launch site to "
            "pass it; scan the folder that holds the callers"
        )
    call = find_autotune_call(pf, site)
    files.add(site.path, bucket.key_edits(pf, call, site))
    kpath = site.kernel_path or site.path
    kpf = files(kpath)
    fn = bucket.find_kernel(kpf, site)
    already = any(p.name.value == bucket.PARAM for p in fn.params.params)
    idx = bucket.insert_index(fn, site.launches, site)
    files.add(kpath, bucket.signature_edits(kpf, fn, idx, site))
    files.add(kpath, bucket.jit_edits(kpf, fn, idx, site, inserted=not already))
    for launch in site.launches:
        files.add(launch.path, bucket.launch_edits(files(launch.path), launch, batch_expr, site.kernel))
        if launch.path not in helpers:
            helpers.add(launch.path)
            files.add(launch.path, bucket.helper_edits(files(launch.path), buckets))
    return notes
