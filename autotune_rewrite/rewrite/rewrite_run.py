"""What the ``diff`` pipeline gives: ``RewriteRun`` (every kernel's rewrite under one variant,
the combined edits and diff, the outcomes and the exit-code rule) and ``KernelRewrite`` (one
kernel's decision, its evidence, its edits and their re-check).

Separate from the pipeline (``diff``) and the re-check (``recheck``) that fill them in: the
re-check reads and returns ``KernelRewrite``s, and ``apply`` and ``output`` read both types
without running either."""

from __future__ import annotations

from dataclasses import dataclass, replace

from autotune_rewrite.changed import Selection
from autotune_rewrite.check import ranges
from autotune_rewrite.unified_diff import combined_diff
from autotune_rewrite.errors import ExitCode
from autotune_rewrite.evidence import KernelReport
from autotune_rewrite.model import AutotuneSite
from autotune_rewrite.outcomes import Report
from autotune_rewrite.rewrite import bucket
from autotune_rewrite.rewrite.facts import Failed, NoSecondWarpCount, Note
from autotune_rewrite.rewrite.transform import FileChange
from autotune_rewrite.rewrite.decision import Decision


@dataclass(frozen=True)
class KernelRewrite:
    """One kernel under one variant: the decision, its evidence and its edits."""

    site: AutotuneSite
    decision: Decision
    reports: tuple[KernelReport, ...]  # the source's configs, one report per launch spec
    candidates: tuple[KernelReport, ...]  # configs compiled for the decision (not in the source)
    changes: tuple[FileChange, ...]  # this kernel alone (paths relative to the scan root)
    notes: tuple[Note, ...] = ()
    recheck: tuple[KernelReport, ...] = ()  # the rewritten kernel compiled with its new configs
    others: tuple = ()  # a branch's kernel: the site's other TargetConfigs, to prove them unchanged


@dataclass(frozen=True)
class RewriteRun:
    root: str  # the scanned folder
    prefix: str  # root relative to the git top level ("" outside git): diff paths start with it
    variant: str
    targets: tuple[str, ...]
    kernels: tuple[KernelRewrite, ...]
    skipped: tuple[tuple[str, NoSecondWarpCount], ...]  # (kernel ident, why the variant does not apply)
    changes: tuple[FileChange, ...]  # every kernel together, paths relative to ``root``
    notes: tuple[Note, ...]
    triton_version: str
    command: str  # how to reproduce
    buckets: tuple[int, ...] = bucket.DEFAULT_BUCKETS  # v3's bucket edges, as used
    # Every kernel x launch spec's outcome (check's reports; a site whose diff stage hit a bug
    # of ours is replaced by its internal-error report).
    reports: tuple[KernelReport, ...] = ()
    failed: tuple[tuple[str, Failed], ...] = ()  # (kernel ident, why): a change was needed but cannot be made
    changed: Selection | None = None  # ``--changed-since``: the sites judged and rewritten, and why

    def report(self, gate: bool = True, strict: bool = False) -> Report:
        """``found``: a change, a kernel that needs one but cannot get it, or a launch with no
        launchable config at any value of its assumed range (``check/ranges``)."""
        found = bool(self.changes or self.failed) or ranges.unlaunchable_whatever_assumed(self.reports)
        return Report(tuple(r.outcome for r in self.reports), found=found, gate=gate, strict=strict)

    @property
    def diff(self) -> str:
        return combined_diff(replace(c, path=self.prefix + c.path) for c in self.changes)

    @property
    def exit_code(self) -> ExitCode:
        """``diff --check``: 1 when the variant would change something (see ``report``)."""
        return self.report().exit_code


__all__ = ["KernelRewrite", "RewriteRun"]
