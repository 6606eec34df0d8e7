"""What a variant's decision rests on, as typed facts with the compiled numbers (no words).

``variants.decide`` returns these in ``Decision.dropped``, ``Decision.explanation`` and
``Decision.skipped``; ``autotune_rewrite/output/explain_rewrite.py`` chooses the words (the
summary, the JSON's ``why``/``explanation`` strings, the commit message and the PR body). Every
fact is JSON-able through ``model.to_jsonable`` and names itself with ``kind``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from autotune_rewrite.findings import LargestFit, Refusal
from autotune_rewrite.errors import UserError
from autotune_rewrite.model import ConfigValue

# Dropped.reason: why a config is not in the variant's list.
CANNOT_LAUNCH = "cannot_launch"
SINGLE_CONFIG = "single_config"  # v1 keeps one config
TWO_WARP_COUNTS = "two_warp_counts"  # v3 keeps the chosen tile at two warp counts


@dataclass(frozen=True)
class Measured:
    """A launchable config's numbers on one (launch spec, target)."""

    spec: str
    arch: str
    occupancy: float
    warps_per_sm: int
    limiter: str
    registers: int | None
    spills: int | None
    shared_bytes: int | None


@dataclass(frozen=True)
class Refused:
    """One (launch spec, target) a config cannot launch on, and why."""

    spec: str
    arch: str
    refusal: Refusal | None


@dataclass(frozen=True)
class Dropped:
    config: ConfigValue
    reason: str  # CANNOT_LAUNCH | SINGLE_CONFIG | TWO_WARP_COUNTS
    refused: tuple[Refused, ...] = ()  # for CANNOT_LAUNCH
    kind: str = field(default="dropped", init=False)


@dataclass(frozen=True)
class Keeper:
    """Another reader of a config list that keeps one of its configs (``rewrite/shared_lists``):
    its name (``path::kernel``, ``path::kernel on sm_90`` for a branch), and whether this run
    decided it (it keeps the config) or does not rewrite it (it keeps every config it reads)."""

    name: str
    decided: bool


@dataclass(frozen=True)
class Guarded:
    """A config that cannot launch on some of the fleet's targets only (for no launch spec
    there), or on all of them where another kernel reading the list launches it: it stays in the
    list for the others, and the device-aware guard (``rewrite/device_guard``) prunes it on
    ``archs`` alone."""

    config: ConfigValue
    archs: tuple[str, ...]
    refused: tuple[Refused, ...]
    # Dead on every target of this kernel, but another kernel reads the same list and launches
    # it (``path::kernel``, or ``path::kernel on sm_90`` for a branch): the list keeps it for that
    # one, and this kernel's guard prunes it on every target (``rewrite/shared_lists``).
    kept_for: Keeper | None = None
    # Dead on every target, but the list has no edit that drops it alone (``inplace``: every
    # element making it also makes a launchable config, say): the guard prunes it instead.
    in_place: NoInPlaceEdit | None = None
    kind: str = field(default="guarded", init=False)


@dataclass(frozen=True)
class KeptForSpec:
    """A config that cannot launch for some launch specs but launches for another one on the
    same target: kept (where it cannot launch Triton's autotuner times it as inf and moves on),
    since dropping it would take it from the spec it serves."""

    config: ConfigValue
    refused: tuple[Refused, ...]
    launches: tuple[tuple[str, str], ...]  # (spec, arch) where it launches
    kind: str = field(default="kept_for_spec", init=False)


@dataclass(frozen=True)
class KeptNotKnown:
    """A config whose compile ran past its time or memory budget for some (spec, target): whether
    it launches there is not known, so no variant drops it for that, and none picks it."""

    config: ConfigValue
    over_budget: tuple[tuple[str, str, str], ...]  # (spec, arch, which budget in words)
    kind: str = field(default="kept_not_known", init=False)


@dataclass(frozen=True)
class TargetEffect:
    """What one fleet target's autotuner times after the change (the PR body's per-target line)."""

    arch: str
    before: int  # configs it timed before
    after: int  # configs it times after
    removed: tuple[ConfigValue, ...]  # of those it timed before
    launchable_removed: int  # of ``removed``, configs that did launch there (a variant's choice)
    kind: str = field(default="target_effect", init=False)


@dataclass(frozen=True)
class SpecEffect:
    """Per (launch spec, target): configs that launch, before and after."""

    spec: str
    arch: str
    launch_before: int
    before: int
    launch_after: int
    after: int
    kind: str = field(default="spec_effect", init=False)


@dataclass(frozen=True)
class KeptLaunchable:
    """prune: the launchable configs, all kept."""

    configs: tuple[ConfigValue, ...]
    kind: str = field(default="kept_launchable", init=False)


@dataclass(frozen=True)
class WarpsRejected:
    """A tile at more warps that cannot launch somewhere."""

    config: ConfigValue
    refused: tuple[Refused, ...]
    kind: str = field(default="warps_rejected", init=False)


@dataclass(frozen=True)
class WarpsSpill:
    """A tile at more warps that spills more than at its lowest launchable warp count."""

    config: ConfigValue
    spills: int
    base_spills: int
    base_warps: int
    kind: str = field(default="warps_spill", init=False)


@dataclass(frozen=True)
class SingleConfig:
    """v1's one config: the highest occupancy reachable by raising num_warps without new spills."""

    config: ConfigValue
    measured: tuple[Measured, ...]
    kind: str = field(default="single_config", init=False)


@dataclass(frozen=True)
class BenchChosen:
    """v1's one config: the fastest launchable config of a bench run on the target GPU."""

    config: ConfigValue
    capability: str  # the GPU the bench ran on (the target)
    metric: str
    batches: tuple[int, ...]
    worst_gap: float  # its time / the fastest measured launchable config's - 1, worst batch
    bench_path: str
    kind: str = field(default="bench_chosen", init=False)


@dataclass(frozen=True)
class WarpsRaised:
    """v2 adds v1's choice: the tile at more warps than the source has."""

    config: ConfigValue
    from_warps: int
    measured: tuple[Measured, ...]
    kind: str = field(default="warps_raised", init=False)


@dataclass(frozen=True)
class StageAdded:
    """v2 adds the choice at num_stages+1."""

    config: ConfigValue
    from_stages: int
    measured: tuple[Measured, ...]
    kind: str = field(default="stage_added", init=False)


@dataclass(frozen=True)
class StageRejected:
    config: ConfigValue
    refused: tuple[Refused, ...]
    kind: str = field(default="stage_rejected", init=False)


@dataclass(frozen=True)
class StageSpill:
    config: ConfigValue
    spills: int
    base_spills: int
    base_stages: int
    kind: str = field(default="stage_spill", init=False)


@dataclass(frozen=True)
class StageNotPipelined:
    """v2 skips num_stages+1: it compiles to the same shared memory as the choice on every
    (spec, target), so the kernel has no loop the extra stage pipelines."""

    config: ConfigValue
    shared_bytes: int | None
    base_stages: int
    kind: str = field(default="stage_not_pipelined", init=False)


@dataclass(frozen=True)
class BenchmarkedAtWarmup:
    """Several configs: the autotuner benchmarks them at warm-up."""

    configs: int
    kind: str = field(default="benchmarked_at_warmup", init=False)


@dataclass(frozen=True)
class BucketKeyed:
    """v3: the tile at two warp counts, keyed on a batch-size bucket."""

    lower: ConfigValue
    upper: ConfigValue
    kind: str = field(default="bucket_keyed", init=False)


@dataclass(frozen=True)
class NoSecondWarpCount:
    """v3 does not apply: raising num_warps gives no launchable config without new spills."""

    config: ConfigValue
    kind: str = field(default="no_second_warp_count", init=False)


@dataclass(frozen=True)
class NotForced:
    """v1/v2/v3 do not apply: several tiles launch on the targets and nothing measured says
    which is fastest there (choosing by occupancy alone is not evidence)."""

    variant: str
    ident: str
    targets: tuple[str, ...]
    tiles: tuple[ConfigValue, ...]  # each launchable tile at its lowest launchable warp count
    bench_capability: str | None = None  # a saved bench ran on this GPU, not on the target
    bench_incomplete: bool = False  # a saved bench on the target timed no launchable config at every batch
    kind: str = field(default="not_forced", init=False)


@dataclass(frozen=True)
class LaunchesUnseen:
    """v3 refused: it changes the kernel's signature, and these uses may launch it where the
    launch cannot be followed (``locate.unseen_launches``), so their callers would break."""

    ident: str
    launches: tuple  # of locate.unseen_launches.UnseenLaunch
    variant: str = "v3"
    kind: str = field(default="launches_unseen", init=False)


@dataclass(frozen=True)
class NoInPlaceEdit:
    """The new config list cannot be written where the configs are written (``rewrite/inplace``).

    ``why``: ``reordered`` (the variant's order differs), ``not_literal`` (``configs[0]`` is not
    made from a literal element), ``entangled`` (``configs[0]`` is dead but each element making
    it, ``where[k]``, also makes the launchable ``configs[k + 1]``), ``adds`` (the variant adds
    configs and the list is generated), ``shared`` (``user`` also reads the element, and would
    lose ``configs[0]``). ``condition``: the comprehension condition that would drop exactly the
    dead configs (``rewrite/dead_filter``), when one exists and still cannot be written (shared)."""

    ident: str
    why: str
    configs: tuple[ConfigValue, ...]
    where: tuple[str, ...] = ()  # ``path:line`` of the lists concerned
    user: str | None = None
    condition: str | None = None
    kind: str = field(default="no_in_place_edit", init=False)


class InPlaceRefused(UserError):
    """No minimal in-place edit, and no inline list asked for (``--inline-configs``)."""

    def __init__(self, fact: NoInPlaceEdit):
        super().__init__(fact.ident)
        self.fact = fact


Fact = (Dropped | Guarded | KeptForSpec | KeptNotKnown | KeptLaunchable | WarpsRejected | WarpsSpill | SingleConfig | BenchChosen | WarpsRaised
        | StageAdded | StageRejected | StageSpill | StageNotPipelined | BenchmarkedAtWarmup | BucketKeyed)


class NoCommonConfig(UserError):
    """No config launches on every (launch spec, target) of a kernel; ``fits`` are the check
    stage's largest fitting tiles. The message is worded by ``output/explain_rewrite.py``."""

    def __init__(self, ident: str, archs: tuple[str, ...], fits: tuple[LargestFit, ...]):
        super().__init__(ident)
        self.ident, self.archs, self.fits = ident, archs, fits


class VariantRefused(UserError):
    """The variant cannot be decided honestly for this kernel (``fact`` says why; worded by
    ``output/explain_rewrite.py``). Nothing is rewritten for it."""

    def __init__(self, fact: NotForced | LaunchesUnseen):
        super().__init__(fact.ident)
        self.fact = fact


class RecheckRefused(UserError):
    """A rewritten config does not launch when the rewritten kernel is compiled again."""

    def __init__(self, ident: str, config: ConfigValue, arch: str, refusal: Refusal | None):
        super().__init__(ident)
        self.ident, self.config, self.arch, self.refusal = ident, config, arch, refusal


@dataclass(frozen=True)
class Failed:
    """A kernel that needs a change and cannot get it (worded by ``output/explain_rewrite.py``).

    ``cause``: the ``UserError`` that stopped it (a typed refusal above, or a plain message);
    ``branch``: the targets whose list it is, for a kernel whose configs are chosen per target;
    ``data_files``: where its configs are read from, for a refused in-place edit."""

    cause: Exception
    branch: tuple[str, ...] = ()
    data_files: tuple[str, ...] = ()
    inline_hint: bool = True  # a refused in-place edit: say that --inline-configs would write a list


@dataclass(frozen=True)
class InlinedNote:
    """``configs=`` was written out as a literal list because no in-place edit exists there."""

    path: str
    line: int
    fact: NoInPlaceEdit


@dataclass(frozen=True)
class FilterNote:
    """Dead configs of a comprehension dropped by a condition over its loop variables
    (``rewrite/dead_filter``): no element of its loops makes only dead configs."""

    path: str
    line: int  # the comprehension's ``for`` the condition was added to
    condition: str  # as written
    negated: bool  # written as the rows that go (``not (...)``), being the shorter
    extended: bool  # added to the innermost ``for``'s own ``if`` (else a new ``if``)
    dropped: tuple[ConfigValue, ...]
    kept: int  # rows that stay
    free: int  # rows a later filter or early_config_prune drops anyway (either way)
    entangled: tuple[str, ...] = ()  # ``element at path:line``: why no element could go instead


@dataclass(frozen=True)
class DataFileNote:
    """A note on an edit of configs that are read from a data file of the repository."""

    note: str
    files: tuple[str, ...]


Note = str | InlinedNote | DataFileNote | FilterNote  # a rewrite's note: already words, or a fact output/ words
