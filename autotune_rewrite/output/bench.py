"""Rendering of ``bench``: the timing table and recommendation (stderr), JSON (stdout)."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from autotune_rewrite import output
from autotune_rewrite.bench.results import BenchResult, to_json


def log(text: str) -> None:
    output.stderr().print(escape(text), style="dim")


def note(text: str) -> None:
    output.stderr().print(f"note: {escape(text)}")


def print_json(result: BenchResult) -> None:
    output.write_raw(to_json(result))


def _us(ms: float | None) -> str:
    return "-" if ms is None else f"{ms * 1e3:,.1f}"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:+.1%}"


def print_table(result: BenchResult, saved: str | None = None) -> None:
    con = output.stderr()
    rec = result.recommendation
    con.print(f"[bold]{escape(result.ident)}[/] on {escape(result.device)} ({result.capability}), Triton "
              f"{result.triton_version}, torch {result.torch_version}; variants decided for {'/'.join(result.targets)}")
    con.print(f"timed: {escape(result.timed)}; device-to-device copy bandwidth {result.copy_gbps:,.0f} GB/s (measured)")
    table = Table(title="median time per call, us (do_bench / CUDA graph replay); achieved GB/s (% of copy)")
    table.add_column("config")
    table.add_column("in")
    for b in result.batches:
        table.add_column(f"B={b}", justify="right")
    by = {(m.config, m.batch): m for m in result.measurements}
    best = {bb.batch: bb.exhaustive for bb in rec.batches}
    for c in result.configs:
        where = ",".join((["orig"] if c.original else []) + list(c.variants)) or "extra"
        if not c.launchable_on_target:
            where += f" (dead on {'/'.join(result.targets)})"
        cells = []
        for b in result.batches:
            m = by.get((c.label, b))
            if m is None:
                cells.append("-")
            elif m.error:
                cells.append(f"[red]{escape(m.error.split(':')[0])}[/]")
            else:
                text = f"{_us(m.median_ms)} / {_us(m.graph_ms)}"
                if m.gbps is not None:
                    text += f"\n{m.gbps:,.0f} GB/s ({m.gbps / result.copy_gbps:.0%})"
                cells.append(f"[bold green]{text}[/]" if best.get(b) == c.label else text)
        table.add_row(escape(c.label), escape(where), *cells)
    con.print(table)

    vt = Table(title=f"variants vs the fastest shippable config at each batch ({result.metric})")
    vt.add_column("variant")
    vt.add_column("configs")
    for b in result.batches:
        vt.add_column(f"B={b}", justify="right")
    vt.add_column("worst", justify="right")
    for s in rec.variants:
        vt.add_row(s.variant, escape("; ".join(s.configs)), *[_pct(p.gap) for p in s.per_batch], _pct(s.worst_gap))
    vt.add_row("best", "", *[escape(f"{bb.best}") for bb in rec.batches], "")
    vt.add_row("exhaustive best", "", *[escape(f"{bb.exhaustive}") for bb in rec.batches], "")
    con.print(vt)
    if rec.variant:
        gaps = ", ".join(f"B={b}: {_pct(g)}" for b, g in rec.recommended_vs_exhaustive)
        con.print(f"[bold]recommendation: {rec.variant}[/]: {escape(rec.reason)}")
        con.print(f"{rec.variant} vs the exhaustive best (every config timed, shippable or not): {gaps}")
    else:
        con.print(f"[bold]no recommendation[/]: {escape(rec.reason)}")
    for n in result.notes:
        note(n)
    if saved:
        con.print(f"saved {escape(saved)}")
    if result.plot:
        con.print(f"plot {escape(result.plot)}")
