"""``check --format github``: GitHub workflow annotations on stdout, one per config that cannot
launch (an error; a warning when it launches at other values of an assumed range), one per
compile that proved nothing, one per spilling config, one per kernel not judged."""

from __future__ import annotations

import os
from pathlib import Path

from autotune_rewrite import output
from autotune_rewrite.check import ranges
from autotune_rewrite.check.check_result import CheckResult
from autotune_rewrite.outcomes import Status
from autotune_rewrite.output.check import summary, verdict_text, versions_line
from autotune_rewrite.output.outcomes import problem_text


def _gh_escape(text: str, prop: bool = False) -> str:
    # GitHub workflow command escaping; properties also escape ':' and ','.
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def _gh_file(result: CheckResult, path: str) -> str:
    full = Path(result.root) / path
    try:
        return os.path.relpath(full.resolve(), Path.cwd().resolve()) if full.exists() else path
    except ValueError:
        return path


def check_github(result: CheckResult, strict: bool = False) -> str:
    lines: list[str] = []
    soft = {rv.key for rv in result.depending}  # fails at some values of an assumed range only
    for report in result.reports:
        site = report.site
        if report.problem is not None:
            level = "error" if report.status is Status.INTERNAL_ERROR else "warning"
            lines.append(f"::{level} file={_gh_escape(_gh_file(result, site.path), True)},line={site.line},"
                         f"title={_gh_escape(f'autotune-rewrite: kernel not judged ({report.status.value})', True)}::"
                         f"{_gh_escape(f'{site.kernel}: {problem_text(report)}')}")
            continue
        for v in report.verdicts:
            path = v.config.path or site.path
            line = v.config.span.start_line if v.config.span else site.line
            where = f"file={_gh_escape(_gh_file(result, path), True)},line={line}"
            versions = versions_line(result, next(t for t in result.targets if t.arch.name == v.arch))
            spec = f", spec {report.spec.name}" if report.spec is not None else ""
            if not v.known:
                title = (f"{site.kernel}: the compiler crashed on {v.arch} (nothing proved)" if v.crashed else
                         f"{site.kernel}: compile over its time or memory budget on {v.arch} (nothing proved)")
                msg = f"{v.config.label()}: {verdict_text(v)} ({versions}{spec})"
                lines.append(f"::warning {where},title={_gh_escape(title, True)}::{_gh_escape(msg)}")
            elif not v.launchable:
                depends = ranges.key_of(report, v) in soft
                title = (f"{site.kernel}: config cannot launch on {v.arch} at an assumed value (it launches at others)"
                         if depends else f"{site.kernel}: config cannot launch on {v.arch}")
                msg = f"{v.config.label()}: {verdict_text(v)} ({versions}{spec})"
                level = "warning" if depends else "error"
                lines.append(f"::{level} {where},title={_gh_escape(title, True)}::{_gh_escape(msg)}")
            elif v.outcome.spills:
                title = f"{site.kernel}: register spills on {v.arch}"
                msg = (f"{v.config.label()}: spills {v.outcome.spills} registers "
                       f"({v.outcome.registers} registers/thread; {versions}{spec})")
                lines.append(f"::warning {where},title={_gh_escape(title, True)}::{_gh_escape(msg)}")
    lines.append(summary(result, strict))
    return "\n".join(lines) + "\n"


def print_github(result: CheckResult, strict: bool = False) -> None:
    output.write_raw(check_github(result, strict))


__all__ = ["check_github", "print_github"]
