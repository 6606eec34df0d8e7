"""``inspect-cache``: the manual investigation of a production Triton cache in one pass.

For every compiled kernel in the cache: its launch metadata, registers and spills read from its
own cubin with ``cuobjdump``, and whether it would launch on each requested target under the
CUDA occupancy rules. SMEM does not depend on the architecture it was compiled for (measured on
sm_90 and sm_120, DOMAIN.md section 2) but registers do, so a verdict for a target other than
the one the cubin was built for says which build its registers came from.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from autotune_rewrite.errors import UserError
from autotune_rewrite.evidence import Occupancy
from autotune_rewrite.check.occupancy import occupancy
from autotune_rewrite.resources import read_resource_usage, triton_version
from autotune_rewrite.targets import Target
from autotune_rewrite.gpu.triton_cache import (
    CacheContents,
    CacheEntry,
    EntryError,
    TuningRecord,
    read_cache,
    recover_meta_params,
)


@dataclass(frozen=True)
class TargetVerdict:
    target: str  # "sm_120"
    occupancy: Occupancy
    registers_from: str | None  # "sm_90 build" when the cubin is for another architecture

    @property
    def launchable(self) -> bool:
        return self.occupancy.blocks_per_sm > 0


@dataclass(frozen=True)
class InspectedKernel:
    entry: CacheEntry
    meta_params: dict[str, Any] | None  # None: folded into the binary, not recoverable
    registers: int | None
    spills: int | None
    resource_error: str | None  # why registers could not be read (no cubin, cuobjdump failed)
    verdicts: tuple[TargetVerdict, ...]


@dataclass(frozen=True)
class InspectResult:
    root: str
    targets: tuple[str, ...]
    reader_triton_version: str  # the Triton whose cuobjdump read the cubins
    kernels: tuple[InspectedKernel, ...]
    tunings: tuple[TuningRecord, ...]
    errors: tuple[EntryError, ...]

    @property
    def all_launchable(self) -> bool:
        return all(v.launchable for k in self.kernels for v in k.verdicts)


def _arch_name(capability: int | None) -> str:
    return f"sm_{capability}" if capability is not None else "unknown arch"


def _inspect_entry(entry: CacheEntry, contents: CacheContents, targets: Sequence[Target]) -> InspectedKernel:
    registers = spills = None
    error = None
    if entry.cubin is None:
        error = "no cubin in the cache entry"
    else:
        try:
            usage = read_resource_usage(Path(entry.cubin).read_bytes(), entry.name)
            registers, spills = usage.registers, usage.spills
        except (OSError, ValueError, RuntimeError) as exc:
            error = f"cuobjdump: {exc}"
    verdicts = []
    if registers is not None:
        for target in targets:
            occ = occupancy(target.arch, entry.num_warps, registers, entry.shared_bytes,
                            entry.num_ctas, tmem_columns=entry.tmem_bytes)
            other = entry.capability != target.arch.capability
            verdicts.append(TargetVerdict(target.label, occ,
                                          f"{_arch_name(entry.capability)} build" if other else None))
    return InspectedKernel(
        entry=entry,
        meta_params=recover_meta_params(entry, contents.tunings),
        registers=registers,
        spills=spills,
        resource_error=error,
        verdicts=tuple(verdicts),
    )


def inspect_cache(root: Path, targets: Sequence[Target]) -> InspectResult:
    if not root.is_dir():
        raise UserError(f"{root}: not a folder; pass a Triton cache folder (TRITON_CACHE_DIR, default ~/.triton/cache)")
    contents = read_cache(root)
    if not contents.entries and not contents.tunings:
        raise UserError(f"{root}: no Triton cache entries (<hash>/<kernel>.json) found; pass the cache folder itself")
    kernels = tuple(_inspect_entry(e, contents, targets) for e in contents.entries)
    return InspectResult(
        root=str(root),
        targets=tuple(t.label for t in targets),
        reader_triton_version=triton_version(),
        kernels=kernels,
        tunings=contents.tunings,
        errors=contents.errors,
    )
