"""What ``apply`` made: its branches and the rewrite runs behind them, as data the output
package renders (the branches themselves are made by ``apply/branches.py``)."""

from __future__ import annotations

from dataclasses import dataclass

from autotune_rewrite.outcomes import Report, Status
from autotune_rewrite.rewrite.rewrite_run import RewriteRun
from autotune_rewrite.rewrite.facts import Failed, NoSecondWarpCount


@dataclass(frozen=True)
class Branch:
    name: str
    commit: str
    pr_body_path: str
    subject: str
    kernel: str
    variant: str


@dataclass(frozen=True)
class ApplyResult:
    base: str  # the base commit
    branches: tuple[Branch, ...]
    runs: tuple[RewriteRun, ...]
    unchanged: tuple[tuple[str, str], ...]  # (kernel ident, variant) with nothing to change
    skipped: tuple[tuple[str, NoSecondWarpCount | Failed], ...]  # (kernel ident, why: a fact or a failure)

    def report(self, strict: bool = False) -> Report:
        """The kernels' outcomes over every variant's run (a bug in any run counts). The branches
        are apply's requested result, so a change is not "found"; a kernel whose change could not
        be built (no launchable config, an edit that cannot be made) is."""
        seen: dict[tuple[str, str | None], object] = {}
        for run in self.runs:
            for o in run.report().outcomes:
                key = (o.kernel, o.spec)
                if key not in seen or o.status is Status.INTERNAL_ERROR:
                    seen[key] = o
        found = any(run.failed for run in self.runs) or any(o.status is Status.NO_LAUNCHABLE for o in seen.values())
        return Report(tuple(seen.values()), found=found, gate=True, strict=strict)


__all__ = ["ApplyResult", "Branch"]
