"""``bench``: plan the configs, time each one per batch size on the local GPU, recommend, save.

One timed call is the user's whole caller (``call`` of the bench entry) with the kernel pinned
to one config, so everything the caller launches is inside the time (for the example: the
split kernel, the combine kernel and the output allocations); only the split kernel changes
between configs, so differences between configs are the split kernel's.
"""

from __future__ import annotations

import gc
import shlex
from pathlib import Path
from typing import Sequence

from autotune_rewrite.bench import inputs as bench_inputs
from autotune_rewrite.bench import timing
from autotune_rewrite.bench.plan import BenchPlan, parse_config, plan as make_plan
from autotune_rewrite.timings.recommend import recommend
from autotune_rewrite.timings.bench_results import BenchConfig, BenchResult, Measurement
from autotune_rewrite.errors import UserError
from autotune_rewrite.rewrite.variants import VARIANTS

DEFAULT_BATCHES = (1, 8, 32, 64, 96)
METRIC = "graph_ms"  # serving replays CUDA graphs: rank configs by graph replay time


def parse_batches(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        values = ()
    if not values or any(v < 1 for v in values):
        raise UserError(f"--batch {text!r}: give positive batch sizes separated by commas, e.g. 1,8,32,64,96")
    return tuple(sorted(set(values)))


def bucket_of(edges: Sequence[int]):
    from autotune_rewrite.rewrite.bucket import bucket_values

    values = bucket_values(edges)

    def of(batch: int) -> int:
        for edge, value in zip(edges, values):
            if batch <= edge:
                return value
        return values[-1]

    return of


def run_bench(path: Path | str, kernel: str, variants: Sequence[str] | None = None,
              batches: Sequence[int] = DEFAULT_BATCHES, archs: Sequence[str] | None = None,
              workers: int | None = None, progress=None, log=None, also: Sequence[str] = ()) -> BenchResult:
    """Bench every distinct config of ``variants`` (default: all) for ``kernel`` under ``path``.

    ``also``: extra configs to time, as labels ("BLOCK_T=16 w8 s3"): part of the exhaustive best,
    never of a variant. Raises UserError (exit 2) with nothing written: no GPU, no bench entry,
    unknown kernel.
    ``log(text)`` receives progress lines (stderr).
    """
    import torch
    import triton

    from autotune_rewrite.rewrite.bucket import DEFAULT_BUCKETS, parse_buckets
    from autotune_rewrite.settings import load_settings

    timing.require_gpu()  # first: no compiles, no imports of user code without a GPU
    path = Path(path)
    if not path.exists():
        raise UserError(f"{path}: no such file or folder")
    variants = tuple(variants or VARIANTS)
    settings = load_settings(path)
    extra = [parse_config(t) for t in also]
    p: BenchPlan = make_plan(path, kernel, variants, archs=archs, workers=workers, progress=progress, also=extra,
                             settings=settings)
    root = Path(settings.root)
    entry = bench_inputs.find_entry(settings, p.site)
    build = bench_inputs.load_callable(root, entry.entry)
    caller = bench_inputs.load_callable(root, entry.call)
    count_bytes = bench_inputs.load_callable(root, entry.bytes) if entry.bytes else None
    autotuner = bench_inputs.load_autotuner(Path(p.root), p.site)
    edges = parse_buckets(settings.variants.buckets or DEFAULT_BUCKETS)

    say = log or (lambda text: None)
    device, capability = timing.device_info()
    copy_gbps = timing.copy_bandwidth()
    say(f"{device} ({capability}): device-to-device copy {copy_gbps:,.0f} GB/s")

    measurements: list[Measurement] = []
    for batch in batches:
        made = build(batch, **dict(entry.options))
        args, kwargs = bench_inputs.call_arguments(made)
        nbytes = int(count_bytes(made)) if count_bytes else None
        for cv in p.configs:
            label = cv.label()
            cfg = timing.live_config(autotuner, cv)
            try:
                with timing.pinned(autotuner, cfg):
                    eager, graph = timing.time_call(lambda: caller(*args, **kwargs))
            except Exception as exc:  # noqa: BLE001 - only launch failures are recorded, others re-raised
                why = timing.launch_error(exc)
                if why is None:
                    raise
                measurements.append(Measurement(label, batch, None, None, nbytes, None, why))
                say(f"B={batch} {label}: cannot run here ({why})")
                continue
            gbps = nbytes / (graph * 1e-3) / 1e9 if nbytes else None
            measurements.append(Measurement(label, batch, eager, graph, nbytes, gbps))
            say(f"B={batch} {label}: {eager * 1e3:,.1f} us, graph {graph * 1e3:,.1f} us")
        del made, args, kwargs
        gc.collect()
        torch.cuda.empty_cache()

    times: dict[str, dict[int, float | None]] = {}
    for m in measurements:
        times.setdefault(m.config, {})[m.batch] = getattr(m, METRIC)
    rec = recommend(times, p.variants, batches, bucket_of=bucket_of(edges))
    configs = tuple(
        BenchConfig(c.label(), c.label() in p.original, tuple(v for v, cs in p.variants.items() if c.label() in cs),
                    c.label() in p.launchable)
        for c in p.configs
    )
    command = ["autotune-rewrite", "bench", str(path), "--kernel", kernel]
    for v in variants:
        command += ["--variant", v]
    command += ["--batch", ",".join(map(str, batches))]
    for a in archs or ():
        command += ["--arch", a]
    for t in also:
        command += ["--also", t]
    notes = list(p.notes)
    notes.append(f"one timed call = {entry.call} with the kernel pinned to one config (everything it launches); "
                 "configs differ only in the pinned kernel")
    if not count_bytes:
        notes.append("no bytes function in the bench entry: achieved bandwidth omitted")
    return BenchResult(
        kernel=p.site.kernel,
        ident=p.site.ident,
        timed=f"{entry.call} (whole call, kernel pinned)",
        device=device,
        capability=capability,
        targets=p.targets,
        triton_version=triton.__version__,
        torch_version=torch.__version__,
        copy_gbps=copy_gbps,
        batches=tuple(batches),
        buckets=tuple(edges),
        configs=configs,
        measurements=tuple(measurements),
        recommendation=rec,
        metric=METRIC,
        command=shlex.join(command),
        notes=tuple(notes),
    )


def bench_and_save(path: Path | str, kernel: str, out_dir: Path | str | None = None, **kw) -> tuple[BenchResult, str]:
    """``run_bench``, then the PNG plot (when matplotlib imports) and the JSON, both under ``out_dir``
    (default ``<git dir>/autotune-rewrite/bench``). Returns the result and the JSON's path."""
    from dataclasses import replace

    from autotune_rewrite.bench import plot
    from autotune_rewrite.timings import bench_results as results

    timing.require_gpu()
    path = Path(path)
    out = Path(out_dir) if out_dir else results.default_dir(path)  # before the GPU work: bad input fails fast
    result = run_bench(path, kernel, **kw)
    png, skipped = plot.write_plot(result, out / f"{result.kernel}.png")
    result = replace(result, plot=png, notes=result.notes + ((skipped,) if skipped else ()))
    return result, str(results.save(result, out))


__all__ = ["DEFAULT_BATCHES", "METRIC", "bench_and_save", "bucket_of", "parse_batches", "run_bench"]
