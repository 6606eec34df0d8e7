"""Rendering of ``bench``: the timing table and recommendation (stderr), JSON (stdout)."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from autotune_rewrite import output
from autotune_rewrite.timings.bench_results import BenchResult, to_json


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


def _tags(result: BenchResult, c) -> str:
    tags = ",".join((["orig"] if c.original else []) + list(c.variants)) or "extra"
    return tags if c.launchable_on_target else f"{tags}; dead on {'/'.join(result.targets)}"


def _times_table(result: BenchResult, metric: str, title: str, fastest: dict[int, str | None]) -> Table:
    """Rows = batch sizes, columns = configs: stays readable for many batches."""
    table = Table(title=title)
    table.add_column("B", justify="right")
    for c in result.configs:
        table.add_column(f"{escape(c.label)}\n[dim]{escape(_tags(result, c))}[/]", justify="right")
    by = {(m.config, m.batch): m for m in result.measurements}
    for b in result.batches:
        cells = []
        for c in result.configs:
            m = by.get((c.label, b))
            if m is None:
                cells.append("-")
            elif m.error:
                cells.append(f"[red]{escape(m.error.split(':')[0])}[/]")
            else:
                text = _us(getattr(m, metric))
                cells.append(f"[bold green]{text}[/]" if fastest.get(b) == c.label else text)
        table.add_row(str(b), *cells)
    return table


def print_table(result: BenchResult, saved: str | None = None) -> None:
    con = output.stderr()
    rec = result.recommendation
    con.print(f"[bold]{escape(result.ident)}[/] on {escape(result.device)} ({result.capability}), Triton "
              f"{result.triton_version}, torch {result.torch_version}; variants decided for {'/'.join(result.targets)}")
    con.print(f"timed: {escape(result.timed)}; device-to-device copy bandwidth {result.copy_gbps:,.0f} GB/s (measured)")
    fastest = {bb.batch: bb.exhaustive for bb in rec.batches}
    con.print(_times_table(result, "graph_ms", "CUDA graph replay: median us per call (green: fastest)", fastest))
    eager = {}
    for b in result.batches:
        got = [(m.median_ms, m.config) for m in result.measurements if m.batch == b and m.median_ms is not None]
        eager[b] = min(got)[1] if got else None
    con.print(_times_table(result, "median_ms", "do_bench: median us per call (green: fastest)", eager))

    by = {(m.config, m.batch): m for m in result.measurements}
    vt = Table(title=f"variants: time over the fastest shippable config ({result.metric})")
    vt.add_column("B", justify="right")
    for s in rec.variants:
        vt.add_column(s.variant, justify="right")
    vt.add_column("fastest shippable", overflow="fold")
    vt.add_column("fastest timed", overflow="fold")
    vt.add_column("its GB/s (of copy)", justify="right")
    for i, bb in enumerate(rec.batches):
        m = by.get((bb.exhaustive, bb.batch))
        bw = "-" if m is None or m.gbps is None else f"{m.gbps:,.0f} ({m.gbps / result.copy_gbps:.0%})"
        vt.add_row(str(bb.batch), *[_pct(s.per_batch[i].gap) for s in rec.variants], escape(str(bb.best)),
                   escape(str(bb.exhaustive)), bw)
    vt.add_row("worst", *[_pct(s.worst_gap) for s in rec.variants], "", "", "")
    con.print(vt)
    for s in rec.variants:
        con.print(f"  {s.variant}: {escape('; '.join(s.configs))} [dim]({escape(s.model)})[/]")
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
