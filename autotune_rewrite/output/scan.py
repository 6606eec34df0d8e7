"""Rendering of ``scan``: JSON on stdout (stable schema), a rich table on stderr, and a
progress bar on stderr only when it is a terminal.

JSON (``--format json``), one object::

    {"schema_version": 1, "root": PATH, "files_scanned": N,
     "sites": [{"path", "line", "kernel", "form": "decorator"|"call",
                "configs": [{"kwargs", "num_warps", "num_stages", "num_ctas", "maxnreg",
                             "has_pre_hook", "span", "path", "label",
                             "descriptor_shapes": [[param, [dim, ...]], ...],
                             "unknown": [[field, reason], ...]}] | null,
                "unresolved_reason", "key", "launches": [{"path", "line", ...LaunchSite}],
                "configs_by_target": [{"targets": [NAME, ...], "configs": [...as above] | null,
                                       "origin", "unresolved_reason", "queries": [TEXT, ...]}],
                "data_files": [PATH, ...], "ident", ...every other AutotuneSite field}],
     "errors": [{"path", "message"}]}

Paths are relative to PATH (POSIX); spans are LibCST's (lines 1-based, columns 0-based).
``configs_by_target`` is non-empty (and ``configs`` null) when the configs ask the device: one
entry per group of targets that see the same configs, ``queries`` saying what each device or
environment query answered there and which branch it took. A config's ``unknown`` lists the
fields written in the source whose value is only known at run time (they read null; the label
shows ``NAME=?``). ``data_files``: the JSON/YAML files of the tree the configs were read from.
"""

from __future__ import annotations

import json

from rich.table import Table

from autotune_rewrite import output
from autotune_rewrite.model import AutotuneSite, ScanResult, to_jsonable

SCHEMA_VERSION = 1  # bumped only when a key changes meaning or disappears


def _configs_json(configs) -> list | None:
    return None if configs is None else [{**to_jsonable(c), "label": c.label()} for c in configs]


def site_json(site: AutotuneSite) -> dict:
    """One site: the documented keys first, then every field of ``AutotuneSite``."""
    data = to_jsonable(site)
    data["configs"] = _configs_json(site.configs)
    data["configs_by_target"] = [{**to_jsonable(e), "configs": _configs_json(e.configs)} for e in site.configs_by_target]
    data["launches"] = [to_jsonable(l) for l in site.launches]
    data["ident"] = site.ident
    return data


def scan_json(result: ScanResult) -> str:
    payload = {
        "schema_version": SCHEMA_VERSION,
        "root": result.root,
        "files_scanned": result.files_scanned,
        "sites": [site_json(s) for s in result.sites],
        "errors": [{"path": e.path, "message": e.message} for e in result.errors],
    }
    return json.dumps(payload, indent=2) + "\n"


def print_json(result: ScanResult) -> None:
    output.write_raw(scan_json(result))


def print_table(result: ScanResult) -> None:
    console = output.stderr()
    table = Table(title=f"autotune sites under {result.root}", show_lines=False)
    for col in ("site", "form", "key", "configs", "launches"):
        table.add_column(col, no_wrap=True)
    for s in result.sites:
        configs = "\n".join(_configs_cell(e.configs, e.unresolved_reason, e.origin, ", ".join(e.targets), e.queries)
                            for e in s.configs_by_target) or _configs_cell(s.configs, s.unresolved_reason, s.configs_origin)
        key = (", ".join(s.key) or "(empty)") if s.key is not None else "?"
        launches = "\n".join(f"{l.path}:{l.line}" for l in s.launches) or "-"
        table.add_row(f"{s.path}:{s.line}\n[bold]{output.escape(s.kernel)}[/]", s.form, output.escape(key), configs, launches)
    output.print_unwrapped(console, table)
    for e in result.errors:
        output.warning(f"{e.path}: {e.message}")
    console.print(f"{len(result.sites)} site(s) in {result.files_scanned} file(s) scanned, {len(result.errors)} error(s)")


def _configs_cell(configs, reason, origin, targets: str = "", queries=()) -> str:
    """The configs of a site, or of the targets ``targets`` with the queries that chose them."""
    head = f"[bold]on {output.escape(targets)}[/]:\n" if targets else ""
    if configs is None:
        return head + f"[yellow]unresolved[/]: {output.escape(reason or '')}"
    body = "\n".join(output.escape(c.label()) for c in configs)
    why = "\n".join(output.escape(line) for line in (origin or "", *queries))
    return head + body + f"\n[dim]{why}[/]"


def progress_bar():
    """A callback ``(done, total)`` for ``scan``; a bar only when stderr is a terminal."""
    return output.progress_bar("scanning", "files")
