"""Verdicts over an assumed range: "launches", "cannot launch", or "depends".

A value no code gives (a head dim, a tile bounded by ``min(..., 256)``) is judged at each value of
a stated range (``spec/shape_sweep``): one launch spec per value, one *family* of specs
(``LaunchSpec.family``/``ranged``). Per config and target, a family's verdicts either agree
(the verdict holds whatever the value) or differ: the verdict *depends* on the assumption, and
says at which values it launches and at which it cannot. A spec of its own (no range) is a
family of one: its verdicts hold as they are.

What acts on a verdict acts only on one that holds: ``check``'s gate (exit 1) counts a config
that cannot launch at every value of its range, not one that depends; a rewrite drops a config
only when it is dead for every spec (``rewrite/variants``). A crashed compile says nothing, nor
does one stopped at its time or memory budget, and a spec that is probably wrong (``spec_suspect``) gives
no verdicts to weigh; all are left out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from autotune_rewrite.evidence import ConfigVerdict, KernelReport
from autotune_rewrite.outcomes import Status

Values = tuple[tuple[str, Any], ...]  # the ranged names and the values one spec takes


@dataclass(frozen=True)
class RangeVerdict:
    """One config on one target over one family's specs."""

    kernel: str  # the site's ident
    family: str  # the launch's spec name the range varies
    config: str  # the config's label
    arch: str
    launches_at: tuple[Values, ...]
    cannot_at: tuple[tuple[Values, ConfigVerdict], ...]  # with the verdict (its numbers) at each

    @property
    def depends(self) -> bool:
        return bool(self.launches_at and self.cannot_at)

    @property
    def names(self) -> tuple[str, ...]:
        """The names the range varies (in the order the specs give them)."""
        seen = [n for values in (*self.launches_at, *(v for v, _ in self.cannot_at)) for n, _ in values]
        return tuple(dict.fromkeys(seen))

    @property
    def key(self) -> tuple[str, str, str, str]:
        return self.kernel, self.family, self.config, self.arch


def key_of(report: KernelReport, verdict: ConfigVerdict) -> tuple[str, str, str, str]:
    """The (kernel, family, config, target) a verdict is one value of (``RangeVerdict.key``)."""
    return report.site.ident, report.spec.family if report.spec else "", verdict.config.label(), verdict.arch


def _weighed(reports: Iterable[KernelReport]) -> Iterable[tuple[KernelReport, ConfigVerdict]]:
    for r in reports:
        if r.spec is None or r.suspicions:
            continue
        for v in r.verdicts:
            if v.known:
                yield r, v


def range_verdicts(reports: Iterable[KernelReport]) -> tuple[RangeVerdict, ...]:
    """Every (config, target) of every family of more than one spec, in report order."""
    groups: dict[tuple[str, str, str, str], tuple[list, list]] = {}
    for r, v in _weighed(reports):
        if not r.spec.family:
            continue
        at, dead = groups.setdefault((r.site.ident, r.spec.family, v.config.label(), v.arch), ([], []))
        if v.launchable:
            at.append(r.spec.ranged)
        else:
            dead.append((r.spec.ranged, v))
    return tuple(RangeVerdict(*key, tuple(at), tuple(dead)) for key, (at, dead) in groups.items())


def depending(reports: Iterable[KernelReport]) -> tuple[RangeVerdict, ...]:
    """The verdicts that change inside their range."""
    return tuple(v for v in range_verdicts(reports) if v.depends)


def dead_whatever_assumed(reports: Iterable[KernelReport]) -> bool:
    """Whether some config cannot launch on some target at every value of its range (``check``'s
    gate): a verdict that depends on the assumption alone does not fail the run."""
    reports = tuple(reports)
    soft = {v.key for v in depending(reports)}
    return any(not v.launchable and key_of(r, v) not in soft for r, v in _weighed(reports))


def launch_alive(reports: Iterable[KernelReport]) -> dict[tuple[str, str, str], bool]:
    """(kernel, family, target) -> whether some config launches there at some value of the range."""
    alive: dict[tuple[str, str, str], bool] = {}
    for r, v in _weighed(reports):
        key = (r.site.ident, r.spec.family or r.spec.name, v.arch)
        alive[key] = alive.get(key, False) or v.launchable
    return alive


def unlaunchable_at_every_value(report: KernelReport, alive: dict[tuple[str, str, str], bool]) -> bool:
    """Whether ``report`` (``no_launchable``) has a target where no config launches at any value
    of its range (``alive``: ``launch_alive`` of the run). A value at which none launches, while
    others have some, depends on the assumption: the user's head dim may never be that one."""
    return report.status is Status.NO_LAUNCHABLE and not all(
        alive.get((report.site.ident, report.spec.family or report.spec.name, arch), False)
        for arch in report.dead_targets)


def unlaunchable_whatever_assumed(reports: Iterable[KernelReport]) -> bool:
    """Whether some launch has no launchable config on some target at every value (the rewrite's gate)."""
    reports = tuple(reports)
    alive = launch_alive(reports)
    return any(unlaunchable_at_every_value(r, alive) for r in reports)


__all__ = ["RangeVerdict", "dead_whatever_assumed", "depending", "key_of", "launch_alive", "range_verdicts",
           "unlaunchable_at_every_value", "unlaunchable_whatever_assumed"]
