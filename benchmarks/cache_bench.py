"""The shared cache in numbers: what a corpus repository's check leaves in it, and what keeping
it under its size limit costs.

1. ``check`` (the CLI, in a fresh process) on a corpus repository with an empty cache folder,
   then ``cache stats --format json`` on it; again warm (every entry read, so touched), and
   ``cache stats`` again.
2. Eviction on a synthetic cache of 10,000 entries (``outcomes``, 256 shards, entry sizes drawn
   from the filled cache's own outcome entries): the stats walk, ``prune --max-size`` down to
   half (least recently used first), ``trim`` (a run over its limit, down to 90%) and
   ``prune --older-than``; the median of three runs each, on a fresh copy.

    PYTHONPATH=. python benchmarks/cache_bench.py [--repo /tmp/corpus/ModelTC__lightllm]
        [--out benchmarks/results/cache_bench/cache_bench.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autotune_rewrite import cache_admin, disk_cache  # noqa: E402


def _cli(cache: Path, *args: str) -> tuple[float, subprocess.CompletedProcess]:
    env = dict(os.environ, AUTOTUNE_REWRITE_CACHE_DIR=str(cache), NO_COLOR="1",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    env.pop(cache_admin.ENV_MAX, None)
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "autotune_rewrite", *args], env=env, capture_output=True, text=True)
    return time.perf_counter() - t, proc


def filled_cache(repo: Path, cache: Path) -> dict:
    out = {"repo": repo.name}
    for state in ("cold", "warm"):
        wall, proc = _cli(cache, "check", str(repo), "--format", "json")
        data = json.loads(proc.stdout)
        _, stats = _cli(cache, "cache", "stats", "--format", "json")
        out[state] = {"check_wall_s": round(wall, 2), "exit_code": proc.returncode, "compiled": data["compiled"],
                      "cached": data["cached"], "kernels": len(data["kernels"]), "stats": json.loads(stats.stdout)}
    return out


def synthetic(folder: Path, n: int, sizes: list[int], now: float) -> int:
    rng = random.Random(0)
    total = 0
    for i in range(n):
        shard = folder / "outcomes" / f"{i % 256:02x}"
        shard.mkdir(parents=True, exist_ok=True)
        path = shard / f"{i:064x}.json"
        size = rng.choice(sizes)
        path.write_bytes(b"x" * size)
        used = now - rng.uniform(0, 60 * 86400)  # last used within two months
        os.utime(path, (used, used))
        total += size
    return total


def eviction(n: int, sizes: list[int]) -> dict:
    now = time.time()
    base = Path(tempfile.mkdtemp(prefix="cache-bench-"))
    try:
        master = base / "master"
        total = synthetic(master, n, sizes, now)
        runs: dict[str, list[float]] = {"stats": [], "prune_to_half": [], "trim_to_90pct": [], "prune_older_than_30d": []}
        removed: dict[str, int] = {}
        for _ in range(3):
            for name in runs:
                work = base / "work"
                shutil.rmtree(work, ignore_errors=True)
                shutil.copytree(master, work)  # copytree keeps the mtimes
                t = time.perf_counter()
                if name == "stats":
                    cache_admin.stats(work)
                elif name == "prune_to_half":
                    removed[name] = cache_admin.prune(work, max_size=total // 2).removed
                elif name == "trim_to_90pct":
                    disk_cache._written = 1  # as after a run that stored something
                    removed[name] = cache_admin.trim(work, int(total * 0.8)).removed
                else:
                    removed[name] = cache_admin.prune(work, older_than_days=30).removed
                runs[name].append(time.perf_counter() - t)
        return {"entries": n, "bytes": total,
                "median_s": {k: round(statistics.median(v), 3) for k, v in runs.items()},
                "removed": removed}
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", type=Path, default=Path("/tmp/corpus/ModelTC__lightllm"))
    ap.add_argument("--entries", type=int, default=10_000)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    cache = Path(tempfile.mkdtemp(prefix="cache-bench-filled-"))
    try:
        filled = filled_cache(args.repo, cache)
        sizes = [p.stat().st_size for p in (cache / "outcomes").rglob("*.json")] or [1000]
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    result = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "load_average": os.getloadavg()},
        "filled_by_check": filled,
        "eviction": eviction(args.entries, sizes),
    }
    text = json.dumps(result, indent=2) + "\n"
    if args.out:
        args.out.write_text(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
