"""Words for what a variant decided and why: the rewrite's facts (``rewrite/facts.py``), the
reasons a kernel was skipped or could not be changed, and the notes of an edit. Used by the
rewrite summary, the JSON's human strings, the commit message and the PR body; the refusals a
decision quotes are worded by ``explain``.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from functools import singledispatch

from autotune_rewrite.model import to_jsonable
from autotune_rewrite.output.explain import largest_fits, refusal
from autotune_rewrite.rewrite import facts as rf


def _refused(refused: Iterable[rf.Refused]) -> str:
    return "; ".join(f"{r.arch} ({r.spec}): {refusal(r.refusal) if r.refusal else None}" for r in refused)


def _measured(measured: Iterable[rf.Measured]) -> str:
    return "; ".join(
        f"{m.arch}/{m.spec}: {m.occupancy:.1%} occupancy ({m.warps_per_sm} warps/SM, limited by {m.limiter}), "
        f"{m.registers} regs, {m.spills} spills, {m.shared_bytes:,} B SMEM"
        for m in measured
    )


def dropped_why(d: rf.Dropped) -> str:
    """Why a config is not in the variant's list (the JSON's ``why``)."""
    if d.reason == rf.CANNOT_LAUNCH:
        return f"cannot launch: {_refused(d.refused)}"
    if d.reason == rf.SINGLE_CONFIG:
        return "v1 keeps a single config"
    if d.reason == rf.TWO_WARP_COUNTS:
        return "v3 keeps the chosen tile at two warp counts"
    raise ValueError(f"no words for drop reason {d.reason!r}")


KEPT_LISTED = 8  # kept configs named in one explanation line


@singledispatch
def fact(f) -> str:
    """One line of a decision's explanation."""
    raise TypeError(f"no words for {type(f).__name__}")


@fact.register
def _(f: rf.Dropped) -> str:
    return f"drop {f.config.label()}: {dropped_why(f)}"


@fact.register
def _(f: rf.Guarded) -> str:
    where = ", ".join(f.archs)
    if f.in_place is not None:
        since = no_in_place_edit(f.in_place, inline_hint=False).removeprefix("no minimal in-place edit: ")
        return (f"keep {f.config.label()} in the list and prune it on {where} (a device-aware early_config_prune), "
                f"since {since}: {_refused(f.refused)}")
    if f.kept_for:
        why = "which keeps it" if f.kept_for.decided else "which this run does not rewrite"
        return (f"keep {f.config.label()} in the list for {f.kept_for.name}, {why}; prune it for this kernel "
                f"on {where} (a device-aware early_config_prune): {_refused(f.refused)}")
    return (f"keep {f.config.label()} for the other targets, prune it on {where} only (a device-aware "
            f"early_config_prune): {_refused(f.refused)}")


@fact.register
def _(f: rf.KeptForSpec) -> str:
    serves = ", ".join(f"{spec} on {arch}" for spec, arch in f.launches)
    return (f"keep {f.config.label()}: it launches for {serves}; where it cannot ({_refused(f.refused)}) "
            "the autotuner times it as inf and moves on")


@fact.register
def _(f: rf.KeptNotKnown) -> str:
    where = ", ".join(f"{spec} on {arch}" for spec, arch, _ in f.over_budget)
    return (f"keep {f.config.label()}: {f.over_budget[0][2]} ({where}), so whether it launches there is not "
            "known")


@fact.register
def _(f: rf.TargetEffect) -> str:
    if not f.removed:
        return f"{f.arch}: unchanged, {f.after} config{'s' if f.after != 1 else ''}"
    n = len(f.removed)
    removed = f"{n} config{'s' if n != 1 else ''} removed"
    if f.launchable_removed:
        return (f"{f.arch}: {removed} ({f.before} -> {f.after}), {f.launchable_removed} of which launched there "
                "(the variant keeps fewer)")
    return (f"{f.arch}: every config that launches there is kept ({f.after}); {removed}, "
            f"{'it' if n == 1 else 'they'} cannot launch there")


@fact.register
def _(f: rf.SpecEffect) -> str:
    return (f"{f.arch}, spec {f.spec}: {f.launch_after} of {f.after} configs launch "
            f"(before: {f.launch_before} of {f.before})")


@fact.register
def _(f: rf.KeptLaunchable) -> str:
    if not f.configs:  # each kept config launches for some specs only (listed above)
        return "no config launches for every launch spec"
    shown = [c.label() for c in f.configs[:KEPT_LISTED]]
    more = len(f.configs) - len(shown)
    # A product keeps dozens: the first few name the shape, `check` lists every config.
    return f"keep {len(f.configs)} launchable config(s): " + ", ".join(shown) + (f" and {more} more" if more else "")


@fact.register
def _(f: rf.WarpsRejected) -> str:
    return f"not {f.config.label()}: {_refused(f.refused)}"


@fact.register
def _(f: rf.WarpsSpill) -> str:
    return f"not {f.config.label()}: {f.spills} spills (vs {f.base_spills} at {f.base_warps} warps)"


@fact.register
def _(f: rf.SingleConfig) -> str:
    return (f"keep one config, {f.config.label()}: the only tile that launches, at the highest occupancy reachable "
            f"by raising num_warps without new spills ({_measured(f.measured)}); a single config is never "
            "benchmarked, so warm-up costs nothing and CUDA-graph capture is safe")


@fact.register
def _(f: rf.BenchChosen) -> str:
    at = "the fastest" if f.worst_gap <= 0 else f"within {f.worst_gap:+.1%} of the fastest"
    return (f"keep one config, {f.config.label()}: measured on {f.capability} ({f.metric}, {f.bench_path}), "
            f"{at} launchable config at every batch ({', '.join(map(str, f.batches))}); a single config is never "
            "benchmarked, so warm-up costs nothing and CUDA-graph capture is safe")


def tile_text(c) -> str:
    """A tile as engineers write it: its block sizes joined by x (64x32x32)."""
    return "x".join(str(v) for v in c.kwargs.values()) or c.label()


def bench_command(ident: str, targets) -> str:
    """The bench run that would decide among the tiles (run from the scanned folder)."""
    return shlex.join(["autotune-rewrite", "bench", ".", "--kernel", ident] + [x for t in targets for x in ("--arch", t)])


@fact.register
def _(f: rf.NotForced) -> str:
    where = "/".join(f.targets)
    what = {"v1": "v1 would choose among them", "v2": "v2 would add a warp count and a stage to one of them",
            "v3": "v3 would pick one of them for its warp pair"}.get(f.variant, f"{f.variant} would choose among them")
    text = (f"{f.variant} does not apply: {len(f.tiles)} tiles launch on {where}: "
            f"{', '.join(tile_text(c) for c in f.tiles)}; {what} by occupancy alone, which does not say which is "
            "fastest")
    if f.bench_capability:
        text += f" (the saved bench ran on {f.bench_capability}, not on {where})"
    elif f.bench_incomplete:
        text += " (the saved bench on it timed no launchable config at every batch)"
    return text + f"; time them on {where} hardware, then run diff again: {bench_command(f.ident, f.targets)}"


@fact.register
def _(f: rf.WarpsRaised) -> str:
    return f"add {f.config.label()}: {_measured(f.measured)}"


@fact.register
def _(f: rf.StageAdded) -> str:
    return f"add {f.config.label()}: {_measured(f.measured)}"


@fact.register
def _(f: rf.StageRejected) -> str:
    return f"skip {f.config.label()}: {_refused(f.refused)}"


@fact.register
def _(f: rf.StageSpill) -> str:
    return f"skip {f.config.label()}: {f.spills} spills (vs {f.base_spills} at num_stages={f.base_stages})"


_UNSEEN = {"star_args": "*args/**kwargs forwarded", "getattr": "looked up by getattr", "stored": "kept in a container",
           "passed": "passed on as an object", "direct_run": "launched through .run/.warmup"}


@fact.register
def _(f: rf.LaunchesUnseen) -> str:
    sites = "; ".join(f"{u.path}:{u.line} `{u.code}` ({_UNSEEN.get(u.why, u.why)})" for u in f.launches)
    return (f"v3 refused: it adds a bs_bucket parameter, and {len(f.launches)} use(s) of the kernel may launch it "
            f"where the launch cannot be followed, so those callers would fail at run time: {sites}; pass each its "
            "bs_bucket yourself and re-run with --allow-unseen-launches")


@fact.register
def _(f: rf.StageNotPipelined) -> str:
    shared = f"{f.shared_bytes:,} B" if f.shared_bytes is not None else "unknown"
    return (f"skip {f.config.label()}: the same shared memory as at num_stages={f.base_stages} ({shared}) on every "
            "target, so no loop of the kernel is pipelined and the extra stage changes nothing")


@fact.register
def _(f: rf.BenchmarkedAtWarmup) -> str:
    return f"{f.configs} configs: the autotuner benchmarks them at warm-up (capture CUDA graphs after warm-up)"


@fact.register
def _(f: rf.BucketKeyed) -> str:
    return (f"keep {f.lower.label()} and {f.upper.label()} and key on a batch-size bucket, so the autotuner "
            "picks the warp count per bucket (warm-up: distinct keys x 2 configs)")


@fact.register
def _(f: rf.NoSecondWarpCount) -> str:
    return (f"v3 needs the tile {f.config.label()} at two warp counts, but raising num_warps gives no "
            "launchable config without new spills; use v1")


def explanation(decision) -> list[str]:
    """A ``variants.Decision``'s explanation, one line per fact."""
    return [fact(f) for f in decision.explanation]


def why(reason) -> str:
    """A skipped or failed kernel's reason: a fact or a failure (worded here), or an error's message."""
    if isinstance(reason, str):
        return reason
    if isinstance(reason, rf.Failed):
        return failed(reason)
    return fact(reason)


def failed(f: rf.Failed) -> str:
    """Why a kernel that needs a change cannot get it; a per-target kernel's says which branch
    (the others' lists stay as written)."""
    if isinstance(f.cause, rf.InPlaceRefused):
        text = no_in_place_edit(f.cause.fact, inline_hint=f.inline_hint)
        text += f"; {data_file_note(f.data_files)}" if f.data_files else ""
    else:
        text = error_text(f.cause)
    if not f.branch:
        return text
    return (f"on {', '.join(f.branch)} (configs chosen by a device query; only the list those targets take "
            f"may change, and it cannot): {text}")


def error_text(err: BaseException) -> str:
    """A ``UserError``'s one line: the rewrite's typed refusals are worded here, any other error
    is its own message."""
    if isinstance(err, rf.InPlaceRefused):
        return no_in_place_edit(err.fact)
    if isinstance(err, rf.NoCommonConfig):
        return no_common_config(err)
    if isinstance(err, rf.VariantRefused):
        return fact(err.fact)
    if isinstance(err, rf.RecheckRefused):
        return recheck_refused(err)
    return str(err)


def rewrite_note(n: rf.Note) -> str:
    """A rewrite's note: words it wrote, or a fact worded here."""
    if isinstance(n, rf.InlinedNote):
        return f"{n.path}:{n.line}: {no_in_place_edit(n.fact, inline_hint=False)}"
    if isinstance(n, rf.DataFileNote):
        return f"{n.note}; {data_file_note(n.files)}"
    if isinstance(n, rf.FilterNote):
        return filter_note(n)
    return n


def filter_note(n: rf.FilterNote) -> str:
    """A condition added to a comprehension: which rows went, why no element could, the condition."""
    k = len(n.dropped)
    how = f"extended the `if` of the innermost `for` with `{n.condition}`" if n.extended else \
        f"added `if {n.condition}` to the innermost `for`"
    form = ("written as the combinations that go, being shorter than the ones that stay" if n.negated
            else "it says which combinations stay")
    free = (f"; {n.free} combination{'s' if n.free != 1 else ''} the list's later filter or early_config_prune "
            "drops anyway may go either way" if n.free else "")
    cause = f" (removing {', '.join(n.entangled)} would also remove configs that launch)" if n.entangled else ""
    return (f"{n.path}:{n.line}: {how} ({form}): it drops the {k} config{'s' if k != 1 else ''} that cannot "
            f"launch ({', '.join(c.label() for c in n.dropped)}) and keeps the other {n.kept}{free}; no loop "
            f"element makes only configs that cannot launch{cause}, so the loops stay as written")


def subject(decision) -> str:
    """A Dependabot-style commit subject for a ``variants.Decision``."""
    k, arch = decision.site.kernel, "/".join(decision.targets)
    if decision.variant == "prune" and decision.guarded:
        g = len(decision.guarded)
        where = "/".join(dict.fromkeys(a for x in decision.guarded for a in x.archs))
        text = f"Prune {g} config{'s' if g != 1 else ''} of {k} on {where} only"
        n = len(decision.dropped)
        return text + (f", drop {n} that cannot launch on {arch}" if n else "")
    if decision.variant == "prune":
        n = len(decision.dropped)
        return f"Drop {n} config{'s' if n != 1 else ''} that cannot launch from {k} on {arch}"
    if decision.variant == "v1":
        return f"Force num_warps={decision.configs[0].config.effective_num_warps} for {k} on {arch}"
    if decision.variant == "v2":
        return f"Add higher-warp and num_stages+1 configs to {k} on {arch}"
    return f"Key {k} autotuning on batch-size bucket on {arch}"


def recheck_refused(err: rf.RecheckRefused) -> str:
    return f"{err.ident}: rewritten config {err.config.label()} does not launch on {err.arch}: {refusal(err.refusal)}"


def no_common_config(err: rf.NoCommonConfig) -> str:
    msg = f"{err.ident}: no config can launch on {', '.join(err.archs)}"
    fits = largest_fits(err.fits)
    if fits:
        return (msg + "; by the fitted SMEM model (an estimate) the largest tile that fits is "
                + "; ".join(f"{arch}: {text}" for arch, text in fits.items()) + ": add such a config and re-run")
    return msg + "; add a smaller tile (fewer stages or a smaller BLOCK_*) and re-run"


# --------------------------------------------------------------------------- JSON beside the words
def data_file_note(files) -> str:
    """Configs read from a data file (YAML/JSON): that file is where a maintainer changes them."""
    return f"the configs are read from {', '.join(files)}, which is where this change belongs"


def no_in_place_edit(f: rf.NoInPlaceEdit, inline_hint: bool = True) -> str:
    """Why the configs cannot be edited where they are written."""
    at = f" ({', '.join(f.where)})" if f.where else ""
    c = [x.label() for x in f.configs] + ["?"]
    if f.why == "reordered":
        why = "the variant orders the configs differently from the written list"
    elif f.why == "not_literal":
        why = f"config {c[0]} is not made from an element written in a literal list"
    elif f.why == "entangled":
        each = "; ".join(f"removing {el} also removes {cfg}" for el, cfg in zip(f.where, c[1:]))
        why = (f"config {c[0]} cannot be removed alone, every element it is made from also makes a config that "
               f"launches ({each})")
    elif f.why == "adds":
        why = "the variant adds configs, and they are generated, so there is no written list of configs to add them to"
    elif f.why == "shared":
        why = (f"{f.user} also reads the list{at}, and the edit would remove its config {c[0]}" if f.configs
               else f"the list{at} is bound to a name also read elsewhere ({f.user}), which the edit would change too")
        if f.condition:
            why += (f"; for this kernel alone, `{f.condition}` on the comprehension's innermost `for` would drop "
                    "exactly its configs that cannot launch")
    else:
        why = f.why
    hint = "; pass --inline-configs to replace `configs=` with a literal list" if inline_hint else ""
    return f"no minimal in-place edit: {why}{hint}"


def fact_json(f) -> dict | None:
    """A fact's structured fields for ``--format json`` (``kind`` names it); None for a reason
    that is an error's message."""
    return None if isinstance(f, (str, rf.Failed)) else to_jsonable(f)


__all__ = ["bench_command", "data_file_note", "dropped_why", "error_text", "explanation", "fact",
           "fact_json", "failed", "filter_note", "no_common_config", "no_in_place_edit", "recheck_refused",
           "rewrite_note", "subject", "tile_text", "why"]
