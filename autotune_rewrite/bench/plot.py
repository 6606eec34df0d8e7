"""The PNG plot: time vs batch size, one line per config (matplotlib, an optional extra)."""

from __future__ import annotations

from pathlib import Path

from autotune_rewrite.timings.bench_results import BenchResult

SKIP_NOTE = "matplotlib is not importable: plot skipped (pip install 'autotune-rewrite[plot]')"


def write_plot(result: BenchResult, path: Path) -> tuple[str | None, str | None]:
    """(path written, None) or (None, why it was skipped)."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only, no display
        import matplotlib.pyplot as plt
    except ImportError:
        return None, SKIP_NOTE
    times = result.times()
    shippable = {c.label for c in result.configs if c.launchable_on_target}
    fig, ax = plt.subplots(figsize=(8, 5))
    for label, by_batch in times.items():
        pts = sorted((b, t * 1e3) for b, t in by_batch.items() if t is not None)
        if not pts:
            continue
        style = "-" if label in shippable else "--"
        ax.plot([b for b, _ in pts], [t for _, t in pts], style, marker="o",
                label=label if label in shippable else f"{label} (not on {'/'.join(result.targets)})")
    ax.set_xlabel("batch size B")
    ax.set_ylabel(f"time per call, us ({'CUDA graph replay' if result.metric == 'graph_ms' else 'do_bench'}, median)")
    ax.set_title(f"{result.kernel} on {result.device}\nTriton {result.triton_version}", fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return str(path), None


__all__ = ["SKIP_NOTE", "write_plot"]
