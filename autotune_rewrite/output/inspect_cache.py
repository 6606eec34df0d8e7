"""Rendering of ``inspect-cache``: a rich table on stderr, JSON on stdout.

JSON (``--format json``), one object::

    {"schema_version": 1, "root", "targets": ["sm_120", ...], "reader_triton_version",
     "kernels": [{"folder", "name", "capability", "triton_version", "num_warps", "num_stages",
                  "num_ctas", "shared_bytes", "tmem_columns", "registers", "spills",
                  "resource_error", "meta_params" | null,
                  "params": [{"name", "type", "divisibility"}],
                  "targets": [{"target", "launchable", "blocks_per_sm", "warps_per_sm",
                               "occupancy", "limiter", "reason", "registers_from"}]}],
     "tunings": [{"folder", "name", "configs": [{"kwargs", "num_warps", "num_stages",
                                                 "time_ms" | null, "pruned"}]}],
     "errors": [{"path", "message"}]}

A timing of ``inf`` (the autotuner's mark for a config that could not run) is written as
``null`` with ``"pruned": true``, since JSON has no infinity.
"""

from __future__ import annotations

import json

from rich.table import Table

from autotune_rewrite import output
from autotune_rewrite.model import to_jsonable
from autotune_rewrite.output import explain
from autotune_rewrite.gpu.inspect_cache import InspectedKernel, InspectResult

SCHEMA_VERSION = 1


def _kernel_json(k: InspectedKernel) -> dict:
    e = k.entry
    return {
        "folder": e.folder,
        "name": e.name,
        "capability": e.capability,
        "triton_version": e.triton_version,
        "num_warps": e.num_warps,
        "num_stages": e.num_stages,
        "num_ctas": e.num_ctas,
        "maxnreg": e.maxnreg,
        "shared_bytes": e.shared_bytes,
        "tmem_columns": e.tmem_bytes,
        "registers": k.registers,
        "spills": k.spills,
        "resource_error": k.resource_error,
        "meta_params": k.meta_params,
        "params": [{"name": p.name, "type": p.type, "divisibility": p.divisibility} for p in e.params],
        "targets": [
            {
                "target": v.target,
                "launchable": v.launchable,
                "blocks_per_sm": v.occupancy.blocks_per_sm,
                "warps_per_sm": v.occupancy.warps_per_sm,
                "occupancy": round(v.occupancy.occupancy, 4),
                "limiter": v.occupancy.limiter,
                "reason": explain.occupancy_reason(v.occupancy.blocked),
                "blocked": to_jsonable(v.occupancy.blocked),
                "registers_from": v.registers_from,
            }
            for v in k.verdicts
        ],
    }


def inspect_json(result: InspectResult) -> str:
    payload = {
        "schema_version": SCHEMA_VERSION,
        "root": result.root,
        "targets": list(result.targets),
        "reader_triton_version": result.reader_triton_version,
        "kernels": [_kernel_json(k) for k in result.kernels],
        "tunings": [
            {
                "folder": t.folder,
                "name": t.name,
                "configs": [
                    {"kwargs": c.kwargs, "num_warps": c.num_warps, "num_stages": c.num_stages,
                     "time_ms": None if c.pruned else c.time_ms, "pruned": c.pruned}
                    for c in t.timings
                ],
            }
            for t in result.tunings
        ],
        "errors": [{"path": e.path, "message": e.message} for e in result.errors],
    }
    return json.dumps(payload, indent=2) + "\n"


def print_json(result: InspectResult) -> None:
    output.write_raw(inspect_json(result))


def print_table(result: InspectResult) -> None:
    console = output.stderr()
    esc = output.escape
    table = Table(title=f"Triton cache {esc(result.root)}", title_justify="left")
    table.add_column("kernel", no_wrap=True)
    table.add_column("built for", no_wrap=True)
    table.add_column("meta-params", no_wrap=True)
    table.add_column("config", no_wrap=True)
    for col in ("SMEM (B)", "regs", "spills"):
        table.add_column(col, justify="right", no_wrap=True)
    for t in result.targets:
        table.add_column(f"on {esc(t)}", no_wrap=True)
    reasons = []
    for k in result.kernels:
        e = k.entry
        cells = []
        for v in k.verdicts:
            occ = v.occupancy
            mark = "*" if v.registers_from else ""
            if v.launchable:
                cells.append(f"[green]yes[/] {occ.blocks_per_sm} blk/SM, {occ.occupancy:.1%}{mark}")
            else:
                cells.append(f"[bold red]no[/] ({esc(occ.limiter)}){mark}")
                reasons.append(f"  [red]x[/] {esc(e.name)} {e.folder[:8]} on {esc(v.target)}: {esc(explain.occupancy_reason(occ.blocked) or occ.limiter)}")
        if not k.verdicts:
            cells = ["[yellow]?[/]"] * len(result.targets)
            reasons.append(f"  [yellow]?[/] {esc(e.name)} {e.folder[:8]}: {esc(k.resource_error or 'no registers')}")
        meta = "(folded)" if k.meta_params is None else " ".join(f"{n}={v}" for n, v in k.meta_params.items())
        table.add_row(
            f"[bold]{esc(e.name)}[/] [dim]{e.folder[:8]}[/]",
            f"sm_{e.capability}, Triton {esc(str(e.triton_version))}",
            esc(meta),
            f"w{e.num_warps} s{e.num_stages}" + (f" ctas{e.num_ctas}" if e.num_ctas != 1 else ""),
            f"{e.shared_bytes:,}",
            "-" if k.registers is None else str(k.registers),
            "-" if k.spills is None else str(k.spills),
            *cells,
        )
    output.print_unwrapped(console, table)
    for line in reasons:
        console.print(line)
    if any(v.registers_from for k in result.kernels for v in k.verdicts):
        console.print("  * registers of the build in the cache, for another architecture than the target: "
                      "SMEM carries over, registers are an estimate there")
    for t in result.tunings:
        for c in t.timings:
            label = " ".join(f"{n}={v}" for n, v in c.kwargs.items())
            timing = "inf: could not run (pruned by the autotuner)" if c.pruned else f"{c.time_ms:.4f} ms"
            console.print(f"  autotuner record {esc(t.name)}: {esc(label)} w{c.num_warps} s{c.num_stages}: {timing}")
    for e in result.errors:
        output.warning(f"{e.path}: {e.message}")
    console.print(f"{len(result.kernels)} compiled kernel(s); registers/spills read with the cuobjdump of "
                  f"Triton {esc(result.reader_triton_version)}; SMEM and warps from each entry's own metadata")
