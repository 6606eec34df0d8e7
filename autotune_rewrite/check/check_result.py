"""What a ``check`` run gives: ``CheckResult`` (every report, the scan's errors, the versions,
the counts) and ``RunInfo`` (what each report is printed with, known before the first compile).

Separate from the pipeline (``check``) that makes them: the output package renders them
(``output/check.py``, ``output/sarif.py``) and needs only the types, not the pipeline."""

from __future__ import annotations

from dataclasses import dataclass

from autotune_rewrite.changed import Selection
from autotune_rewrite.check import ranges
from autotune_rewrite.compile.compile_farm import FarmEvent
from autotune_rewrite.errors import ExitCode
from autotune_rewrite.evidence import KernelReport
from autotune_rewrite.model import AutotuneSite, FileError
from autotune_rewrite.outcomes import Report
from autotune_rewrite.targets import Target


@dataclass(frozen=True)
class RunInfo:
    """What every report of a run is printed with; known before the first compile, so reports
    can be printed as they come (``check``'s ``on_report``)."""

    root: str
    targets: tuple[Target, ...]
    triton_version: str
    ptxas_versions: tuple[tuple[str, str | None], ...]  # arch -> ptxas version


@dataclass(frozen=True)
class CheckResult:
    """Everything ``check`` found; the output package renders it, ``exit_code`` gates CI."""

    root: str
    targets: tuple[Target, ...]
    reports: tuple[KernelReport, ...]
    errors: tuple[FileError, ...]  # files the scan could not read
    triton_version: str
    ptxas_versions: tuple[tuple[str, str | None], ...]  # arch -> ptxas version
    warnings: tuple[str, ...] = ()  # e.g. an ``assume`` name that no kernel has
    farm_events: tuple[FarmEvent, ...] = ()  # what the compile farm did (worded by output/farm.py)
    compiled: int = 0  # compiles run now
    cached: int = 0  # outcomes read from the cache
    seconds: float = 0.0
    changed: Selection | None = None  # ``--changed-since``: which sites were judged, and why
    sites: tuple[AutotuneSite, ...] = ()  # every site the scan found (not only the judged ones)

    def report(self, strict: bool = False) -> Report:
        """The outcomes; ``found`` when some judged config cannot launch on some target at every
        value of its assumed range (``ranges``: one that depends on the value does not; a crashed
        compile proves nothing, so it is not "cannot launch"; nor is any config of a kernel whose
        spec is probably wrong: its numbers are the spec's)."""
        found = ranges.dead_whatever_assumed(self.reports)
        return Report(tuple(r.outcome for r in self.reports), found=found, gate=True, strict=strict)

    @property
    def depending(self) -> tuple[ranges.RangeVerdict, ...]:
        """The (config, target) verdicts that change inside an assumed range."""
        return ranges.depending(self.reports)

    @property
    def exit_code(self) -> ExitCode:
        """1 when some compiled config cannot launch on some target (the CI gate), 2 on an
        internal error, else 0. Kernels not judged are listed, not failed (``--strict`` fails them)."""
        return self.report().exit_code


__all__ = ["CheckResult", "RunInfo"]
