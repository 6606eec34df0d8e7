"""The bench result as data, and where it is saved (JSON) so ``apply`` can quote it later.

Saved as ``<out>/<kernel>.json``; without ``--out``, under ``<git dir>/autotune-rewrite/bench/``
(the common git dir, so every worktree of the checkout sees the same latest result).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from autotune_rewrite.timings.recommend import Recommendation
from autotune_rewrite.errors import UserError
from autotune_rewrite.model import to_jsonable

SCHEMA = 1
SUBDIR = ("autotune-rewrite", "bench")


@dataclass(frozen=True)
class BenchConfig:
    label: str  # ConfigValue.label(), e.g. "BLOCK_T=16 w8 s2"
    original: bool  # written in the source's config list
    variants: tuple[str, ...]  # variants that emit it
    launchable_on_target: bool  # per the check stage's compiles for the target GPUs


@dataclass(frozen=True)
class Measurement:
    config: str
    batch: int
    median_ms: float | None  # triton.testing.do_bench, median
    graph_ms: float | None  # triton.testing.do_bench_cudagraph (CUDA graph replay), median
    bytes_moved: int | None  # as the bench entry point reports it
    gbps: float | None  # bytes_moved / graph_ms (else median_ms)
    error: str | None = None  # why it did not run (e.g. OutOfResources on this GPU)


@dataclass(frozen=True)
class BenchResult:
    kernel: str  # the kernel's name
    ident: str  # path::name
    timed: str  # what one timed call covers, in words
    device: str
    capability: str  # e.g. "sm_90"
    targets: tuple[str, ...]  # the GPUs the variants were decided for
    triton_version: str
    torch_version: str
    copy_gbps: float  # measured device-to-device copy bandwidth (read + write bytes / time)
    batches: tuple[int, ...]
    buckets: tuple[int, ...]
    configs: tuple[BenchConfig, ...]
    measurements: tuple[Measurement, ...]
    recommendation: Recommendation
    metric: str  # which time the recommendation used ("graph_ms")
    command: str
    notes: tuple[str, ...] = ()
    plot: str | None = None
    schema: int = SCHEMA

    def times(self, metric: str | None = None) -> dict[str, dict[int, float | None]]:
        key = metric or self.metric
        out: dict[str, dict[int, float | None]] = {}
        for m in self.measurements:
            out.setdefault(m.config, {})[m.batch] = getattr(m, key)
        return out


def to_json(result: BenchResult) -> str:
    return json.dumps(to_jsonable(result), indent=2, sort_keys=False) + "\n"


def git_common_dir(path: Path) -> Path | None:
    from autotune_rewrite import gitrepo

    return gitrepo.common_dir(path if path.is_dir() else path.parent)


def default_dir(path: Path) -> Path:
    """``<git dir>/autotune-rewrite/bench`` for the checkout holding ``path``."""
    git_dir = git_common_dir(path)
    if git_dir is None:
        raise UserError(f"{path}: not inside a git checkout, so there is no default place for the result; pass --out DIR")
    return git_dir.joinpath(*SUBDIR)


def result_path(out_dir: Path, kernel: str) -> Path:
    return out_dir / f"{kernel}.json"


def save(result: BenchResult, out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = result_path(out_dir, result.kernel)
    path.write_text(to_json(result), encoding="utf-8")
    return path


def load(path: Path) -> dict | None:
    """A saved result as plain JSON data; None when missing, unreadable or of another schema."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        return None
    return data


def load_latest(git_dir: Path, kernel: str) -> dict | None:
    """The result ``bench`` last saved for ``kernel`` in this checkout's default place."""
    return load(result_path(git_dir.joinpath(*SUBDIR), kernel))


__all__ = ["BenchConfig", "BenchResult", "Measurement", "default_dir", "git_common_dir", "load", "load_latest",
           "result_path", "save", "to_json"]
