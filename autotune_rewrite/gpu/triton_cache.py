"""Read a Triton cache folder (``$TRITON_CACHE_DIR``, default ``~/.triton/cache``) as an engineer
does by hand on a production box: one sub-folder per compiled kernel, named by hash, holding
``<name>.json`` (launch metadata), ``<name>.ttir`` (typed signature), ``<name>.cubin`` and, when
the autotuner ran with ``cache_results``, ``<name>.autotune.json`` (every config's timing).

Pure reading: nothing here compiles, loads or writes. Each unreadable entry becomes an
``EntryError`` and the others go on.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# TTIR element types -> the signature spelling Triton and launch specs use.
_TTIR_SCALARS = {
    "i1": "i1",
    "i8": "i8",
    "i16": "i16",
    "i32": "i32",
    "i64": "i64",
    "f16": "fp16",
    "bf16": "bf16",
    "f32": "fp32",
    "f64": "fp64",
    "f8E4M3FN": "fp8e4nv",
    "f8E5M2": "fp8e5",
}

# The public entry of a TTIR module: `tt.func public @name(%a: type {attrs} loc(..), ...)`.
# This parses compiler output, not user code.
_FUNC = re.compile(r"tt\.func\s+public\s+@(?P<name>[\w$.]+)\((?P<args>.*?)\)\s+attributes", re.S)
_ARG = re.compile(
    r"%(?P<name>[\w$.]+)\s*:\s*(?P<type>!tt\.ptr<(?P<elem>[\w]+)(?:,\s*\d+)?>|[\w]+)"
    r"(?:\s*\{(?P<attrs>[^}]*)\})?"
)
_DIVISIBILITY = re.compile(r"tt\.divisibility\s*=\s*(\d+)")


@dataclass(frozen=True)
class CacheParam:
    name: str
    type: str  # "*bf16", "i32", ...
    divisibility: int | None


@dataclass(frozen=True)
class ConfigTiming:
    """One config the autotuner timed (from ``<name>.autotune.json``); ``inf`` = could not run."""

    kwargs: dict[str, Any]
    num_warps: int
    num_stages: int
    time_ms: float

    @property
    def pruned(self) -> bool:
        return math.isinf(self.time_ms)


@dataclass(frozen=True)
class CacheEntry:
    folder: str  # the hash-named sub-folder
    name: str
    capability: int | None
    num_warps: int
    num_stages: int
    num_ctas: int
    maxnreg: int | None
    shared_bytes: int
    tmem_bytes: int
    triton_version: str | None
    params: tuple[CacheParam, ...]
    cubin: str | None  # path of the cubin, when present


@dataclass(frozen=True)
class TuningRecord:
    """A ``<name>.autotune.json``: the autotuner's timings for one key."""

    folder: str
    name: str
    timings: tuple[ConfigTiming, ...]


@dataclass(frozen=True)
class EntryError:
    path: str
    message: str


@dataclass(frozen=True)
class CacheContents:
    root: str
    entries: tuple[CacheEntry, ...]
    tunings: tuple[TuningRecord, ...]
    errors: tuple[EntryError, ...]


def parse_ttir_signature(ttir: str) -> tuple[str | None, tuple[CacheParam, ...]]:
    """Name and typed parameters of the public function of a TTIR module."""
    match = _FUNC.search(ttir)
    if match is None:
        return None, ()
    params = []
    for arg in _ARG.finditer(match.group("args")):
        elem = arg.group("elem")
        if elem is not None:
            type_ = "*" + _TTIR_SCALARS.get(elem, elem)
        else:
            type_ = _TTIR_SCALARS.get(arg.group("type"), arg.group("type"))
        div = _DIVISIBILITY.search(arg.group("attrs") or "")
        params.append(CacheParam(arg.group("name"), type_, int(div.group(1)) if div else None))
    return match.group("name"), tuple(params)


def _capability(target: Any) -> int | None:
    if isinstance(target, dict) and isinstance(target.get("arch"), int):
        return target["arch"]
    return None


def _read_entry(folder: Path, meta_path: Path) -> CacheEntry:
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    if not isinstance(meta, dict) or "num_warps" not in meta or "shared" not in meta:
        raise ValueError("not a Triton kernel metadata file (no num_warps/shared)")
    name = meta.get("name") or meta_path.stem
    ttir = folder / f"{name}.ttir"
    params: tuple[CacheParam, ...] = ()
    if ttir.is_file():
        _, params = parse_ttir_signature(ttir.read_text(encoding="utf-8", errors="replace"))
    cubin = folder / f"{name}.cubin"
    return CacheEntry(
        folder=folder.name,
        name=name,
        capability=_capability(meta.get("target")),
        num_warps=int(meta["num_warps"]),
        num_stages=int(meta.get("num_stages", 0)),
        num_ctas=int(meta.get("num_ctas", 1)),
        maxnreg=meta.get("maxnreg"),
        shared_bytes=int(meta["shared"]),
        tmem_bytes=int(meta.get("tmem_size") or 0),
        triton_version=meta.get("triton_version"),
        params=params,
        cubin=str(cubin) if cubin.is_file() else None,
    )


def _read_tuning(folder: Path, path: Path) -> TuningRecord:
    data = json.loads(path.read_text(encoding="utf-8"))
    timings = []
    for config, timing in data["configs_timings"]:
        # The autotuner stores a list of timings (do_bench quantiles) or a single float.
        value = timing[0] if isinstance(timing, list) else timing
        timings.append(
            ConfigTiming(
                kwargs=dict(config.get("kwargs", {})),
                num_warps=int(config.get("num_warps", 4)),
                num_stages=int(config.get("num_stages", 3)),
                time_ms=float(value),
            )
        )
    name = path.name[: -len(".autotune.json")]
    return TuningRecord(folder=folder.name, name=name, timings=tuple(timings))


def read_cache(root: Path) -> CacheContents:
    entries: list[CacheEntry] = []
    tunings: list[TuningRecord] = []
    errors: list[EntryError] = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        for path in sorted(folder.glob("*.json")):
            if path.name.startswith("__grp__"):
                continue
            rel = str(path.relative_to(root))
            try:
                if path.name.endswith(".autotune.json"):
                    tunings.append(_read_tuning(folder, path))
                else:
                    entries.append(_read_entry(folder, path))
            except (OSError, ValueError, KeyError, TypeError) as exc:
                errors.append(EntryError(rel, f"{type(exc).__name__}: {exc}"))
    return CacheContents(str(root), tuple(entries), tuple(tunings), tuple(errors))


def recover_meta_params(entry: CacheEntry, tunings: tuple[TuningRecord, ...]) -> dict[str, Any] | None:
    """Constexpr values are folded into the binary; they are recoverable only when the
    autotuner's own record for this kernel has exactly one config with this entry's
    (num_warps, num_stages)."""
    matches = {
        json.dumps(t.kwargs, sort_keys=True)
        for record in tunings
        if record.name == entry.name
        for t in record.timings
        if (t.num_warps, t.num_stages) == (entry.num_warps, entry.num_stages)
    }
    if len(matches) != 1:
        return None
    return json.loads(matches.pop())
