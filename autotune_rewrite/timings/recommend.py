"""From a timing table to a recommendation (pure: numbers in, verdict out; no GPU, no I/O).

The model of each variant follows Triton's autotuner (DOMAIN.md section 3): a variant with one
config always runs it; a variant with several configs benchmarks them on the first launch of
each distinct key and keeps the winner for every later launch with that key. The example's key
(``topk_rounded``) does not depend on the batch size, so prune/v2 pick one config at whatever
batch happens to warm up first, and run it at every batch; v3 adds a ``bs_bucket`` key, so it
picks once per bucket. Which batch warms up is not known here, so a multi-config variant is
scored at its *worst* warm-up batch within each group: a conservative figure, said as such.

Two references per batch:
* ``best`` (used by the rule): the fastest config any variant may emit, i.e. one that launches
  on the target GPUs;
* ``exhaustive``: the fastest config timed at all, including configs that launch only on the
  GPU the bench ran on (the BLOCK_T=32 configs on an H200): reported, not shippable.

Rule: v1 when its single config is within ``tolerance`` of ``best`` at every batch; otherwise
another single-config variant that is (prune leaving one config); otherwise v3 when it is (some
bucket prefers another config: named); otherwise the variant with the smallest worst-case gap,
saying whether it is within tolerance (v2/prune) or none is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

TOLERANCE = 0.02
Times = Mapping[str, Mapping[int, "float | None"]]  # config label -> batch -> ms (None: did not run)


@dataclass(frozen=True)
class BatchBest:
    batch: int
    best: str | None  # fastest shippable config
    best_ms: float | None
    exhaustive: str | None  # fastest config timed at all
    exhaustive_ms: float | None


@dataclass(frozen=True)
class VariantAtBatch:
    batch: int
    config: str | None  # the config this variant runs at this batch (worst warm-up case)
    ms: float | None
    gap: float | None  # ms / best_ms - 1 (None: cannot run)
    gap_exhaustive: float | None


@dataclass(frozen=True)
class VariantScore:
    variant: str
    configs: tuple[str, ...]
    per_batch: tuple[VariantAtBatch, ...]
    worst_gap: float | None  # None: some batch cannot run or the variant was not timed
    model: str  # how the autotuner's choice was modelled, in words


@dataclass(frozen=True)
class BucketPreference:
    bucket: int  # the bs_bucket value
    batches: tuple[int, ...]
    config: str  # what v3 runs in this bucket (worst warm-up case)
    v1_config: str
    gain: float  # v1 time / this config's time - 1, worst batch of the bucket


@dataclass(frozen=True)
class Recommendation:
    variant: str | None
    reason: str
    tolerance: float
    batches: tuple[BatchBest, ...]
    variants: tuple[VariantScore, ...]
    bucket_preferences: tuple[BucketPreference, ...] = ()
    recommended_vs_exhaustive: tuple[tuple[int, float | None], ...] = ()  # (batch, gap)


def _fastest(times: Times, labels: Sequence[str], batch: int) -> tuple[str | None, float | None]:
    got = [(times.get(c, {}).get(batch), c) for c in labels]
    got = [(t, c) for t, c in got if t is not None]
    if not got:
        return None, None
    t, c = min(got)
    return c, t


def _groups(batches: Sequence[int], group_of: Callable[[int], int] | None) -> dict[int, tuple[int, ...]]:
    out: dict[int, list[int]] = {}
    for b in batches:
        out.setdefault(group_of(b) if group_of else 0, []).append(b)
    return {k: tuple(v) for k, v in out.items()}


def _score(variant: str, configs: Sequence[str], times: Times, batches: Sequence[int],
           bests: dict[int, BatchBest], group_of: Callable[[int], int] | None) -> VariantScore:
    configs = tuple(configs)
    runs: dict[int, tuple[str | None, float | None]] = {}
    if len(configs) == 1:
        model = "one config: the autotuner never benchmarks, it always runs"
        for b in batches:
            runs[b] = (configs[0], times.get(configs[0], {}).get(b))
    else:
        model = ("several configs, benchmarked once per bs_bucket: scored at the worst warm-up batch of each bucket"
                 if group_of else
                 "several configs, benchmarked once (the key does not see the batch): scored at the worst warm-up batch")
        for group in _groups(batches, group_of).values():
            # The autotuner keeps the config fastest at the warm-up batch w; take the w that hurts most.
            worst: dict[int, tuple[str | None, float | None]] | None = None
            worst_gap = -1.0
            for w in group:
                pick, _ = _fastest(times, configs, w)
                cand = {b: (pick, times.get(pick, {}).get(b) if pick else None) for b in group}
                gaps = [_gap(cand[b][1], bests[b].best_ms) for b in group]
                g = float("inf") if any(x is None for x in gaps) else max(gaps)
                if worst is None or g > worst_gap:
                    worst, worst_gap = cand, g
            runs.update(worst or {})
    per = tuple(
        VariantAtBatch(b, runs[b][0], runs[b][1], _gap(runs[b][1], bests[b].best_ms), _gap(runs[b][1], bests[b].exhaustive_ms))
        for b in batches
    )
    gaps = [p.gap for p in per]
    worst_gap = None if not gaps or any(g is None for g in gaps) else max(gaps)
    return VariantScore(variant, configs, per, worst_gap, model)


def _gap(ms: float | None, ref: float | None) -> float | None:
    if ms is None or ref is None or ref <= 0:
        return None
    return ms / ref - 1.0


def recommend(
    times: Times,
    variants: Mapping[str, Sequence[str]],
    batches: Sequence[int],
    bucket_of: Callable[[int], int] | None = None,
    tolerance: float = TOLERANCE,
) -> Recommendation:
    """Score every variant against the fastest shippable config at each batch and pick one.

    ``variants`` maps a variant name to the config labels it emits (all launch on the target);
    ``times`` may hold more configs (originals that launch only on the bench GPU); ``bucket_of``
    maps a batch size to its ``bs_bucket`` value (for v3).
    """
    shippable = sorted({c for cs in variants.values() for c in cs})
    batches = tuple(sorted(set(batches)))
    bests = {}
    for b in batches:
        c, t = _fastest(times, shippable, b)
        ce, te = _fastest(times, sorted(times), b)
        bests[b] = BatchBest(b, c, t, ce, te)
    scores = tuple(
        _score(v, cs, times, batches, bests, bucket_of if v == "v3" else None) for v, cs in variants.items() if cs
    )
    by_name = {s.variant: s for s in scores}

    def ok(name: str) -> bool:
        s = by_name.get(name)
        return s is not None and s.worst_gap is not None and s.worst_gap <= tolerance

    prefs: tuple[BucketPreference, ...] = ()
    v1 = by_name.get("v1")
    v3 = by_name.get("v3")
    if v1 and v3 and bucket_of:
        prefs = _bucket_preferences(v1, v3, times, batches, bucket_of)
    pct = f"{tolerance:.0%}"
    single = [s.variant for s in scores if s.variant != "v1" and len(s.configs) == 1 and ok(s.variant)]
    if ok("v1"):
        choice = "v1"
        reason = (f"v1's single config {v1.configs[0]} is within {pct} of the fastest shippable config at every "
                  f"batch (worst {v1.worst_gap:+.1%}); one config means no warm-up benchmarking and safe CUDA-graph capture")
    elif single:  # e.g. prune when it leaves one config: as capture-safe as v1
        choice = single[0]
        only = by_name[choice]
        reason = (f"v1's config is not within {pct} at every batch; {choice} keeps the single config {only.configs[0]}, "
                  f"within {pct} everywhere (worst {only.worst_gap:+.1%}), with no warm-up benchmarking")
    elif ok("v3"):
        choice = "v3"
        named = "; ".join(f"bucket {p.bucket} (B={','.join(map(str, p.batches))}) prefers {p.config} over "
                          f"{p.v1_config} by {p.gain:.1%}" for p in prefs) or "v3's buckets recover the gap"
        reason = f"v1 is not within {pct} at every batch, v3 is (worst {v3.worst_gap:+.1%}): {named}"
    else:
        ranked = sorted((s for s in scores if s.worst_gap is not None), key=lambda s: s.worst_gap)
        if not ranked:
            return Recommendation(None, "no variant could run at every batch", tolerance, tuple(bests.values()), scores, prefs)
        top = ranked[0]
        choice = top.variant
        if top.worst_gap <= tolerance:
            reason = (f"neither a single config nor v3's buckets are within {pct} at every batch; {top.variant} is "
                      f"(worst {top.worst_gap:+.1%}, after its warm-up benchmark)")
        else:
            reason = (f"no variant is within {pct} of the fastest shippable config at every batch; {top.variant} comes "
                      f"closest (worst {top.worst_gap:+.1%})")
    chosen = by_name[choice]
    vs_ex = tuple((p.batch, p.gap_exhaustive) for p in chosen.per_batch)
    return Recommendation(choice, reason, tolerance, tuple(bests.values()), scores, prefs, vs_ex)


def _bucket_preferences(v1: VariantScore, v3: VariantScore, times: Times, batches, bucket_of) -> tuple[BucketPreference, ...]:
    """Buckets where v3 runs a config other than v1's and it is faster than v1's there."""
    v1_cfg = v1.configs[0]
    at = {p.batch: p for p in v3.per_batch}
    out = []
    for bucket, group in sorted(_groups(batches, bucket_of).items()):
        cfg = at[group[0]].config
        if cfg is None or cfg == v1_cfg:
            continue
        gains = []
        for b in group:
            t1, t3 = times.get(v1_cfg, {}).get(b), at[b].ms
            if t1 is None or t3 is None:
                break
            gains.append(t1 / t3 - 1.0)
        else:
            if gains and min(gains) > 0:
                out.append(BucketPreference(bucket, group, cfg, v1_cfg, min(gains)))
    return tuple(out)


__all__ = ["TOLERANCE", "BatchBest", "BucketPreference", "Recommendation", "VariantAtBatch", "VariantScore", "recommend"]
