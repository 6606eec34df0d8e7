"""What a launch spec is built from: one parameter at a time (``ParamSpec``) into a ``Draft``,
with what every spec of a kernel shares (``Context``: the kernel's uses of its parameters) and
the values assumed where nothing gives one. ``spec_inference`` fills drafts from what is stated
and what the code says, ``general_assumptions`` from the general rules, ``spec_cases`` turns one
into several."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from autotune_rewrite.model import AutotuneSite
from autotune_rewrite.outcomes import Assumption

# The value assumed for an int of unknown value where a value is needed: a constexpr the kernel
# uses only in arithmetic (a stride, a loop bound; ``param_uses``), an input of a heuristic.
# Divisible by 16, not 1, and large, so that no loop gets too short to pipeline.
ASSUMED_INT = 4096
ASSUMED_DTYPE = "tl.float32"  # a dtype constexpr nobody gives (accumulators are fp32 in nearly every kernel)

# The default sweep of a dimension used as a tile extent (the head dims and hidden-size tiles LLM
# serving uses), and the values a bounded tile is judged at below its bound. One home for it; the
# words in the output name it.
SHAPE_SWEEP = (64, 128, 256)
UNSET = object()  # a ParamSpec without a value


@dataclass(frozen=True)
class ParamSpec:
    """One parameter in one spec: its Triton type, value, and what it rests on."""

    type: str  # "*bf16", "i32", "fp32", "u1", "constexpr"
    value: Any = UNSET  # a constexpr's value, or a runtime int's (for specialization)
    divisible: bool = False  # an int of unknown value assumed divisible by 16 (and not 1)
    assumption: Assumption | None = None
    source: str = ""  # "launch", "annotation", "default", "settings", "assume"

    @property
    def has_value(self) -> bool:
        return self.value is not UNSET


@dataclass
class Draft:
    """A spec being built: one parameter at a time."""

    name: str
    params: dict[str, ParamSpec] = field(default_factory=dict)
    lacking: list[str] = field(default_factory=list)
    why: dict[str, str] = field(default_factory=dict)  # lacking parameter -> where its value comes from
    options: dict[str, tuple] = field(default_factory=dict)  # constexpr -> the values it may take
    option_why: dict[str, str] = field(default_factory=dict)  # constexpr -> why those values
    exprs: dict[str, str] = field(default_factory=dict)  # value unknown -> the launch expression it comes from
    # Names the wrapper pins to a few values before the launch (``assert Lk in {64, 128}``):
    # name -> (values, the statement in words); and the parameters computed from them -> expression.
    stated: dict[str, tuple[tuple, str]] = field(default_factory=dict)
    stated_exprs: dict[str, str] = field(default_factory=dict)
    stated_where: str = ""
    # Assumed ranges: a value the code bounds but does not give (``min(next_power_of_2(D), 256)``):
    # name -> (the values judged, why); ``shape_sweep`` makes one spec per value.
    ranges: dict[str, tuple[tuple, str]] = field(default_factory=dict)
    # Set on a spec made from a range: the launch's spec it varies (``family``) and the values this
    # one takes (name -> value); a verdict that differs between them "depends" (``check/ranges``).
    family: str = ""
    ranged: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Context:
    """What every spec of one kernel shares."""

    site: AutotuneSite
    meta: frozenset[str]  # set by every config
    pointers: frozenset[str]  # used as pointers in the kernel body
    index_pointers: frozenset[str]  # pointers whose loaded values are used as ints
    assume_dtype: str  # "*bf16"
    assume_dtype_name: str  # "bf16", for the words
    exact: bool
    heuristics: frozenset[str] = frozenset()  # set by @triton.heuristics
    arithmetic: frozenset[str] = frozenset()  # constexprs used only in arithmetic (param_uses)
    descriptors: frozenset[str] = frozenset()  # used as TMA tensor descriptors: typed only from a pre_hook
    int8_dots: frozenset[str] = frozenset()  # pointers feeding a tl.dot with an int32 accumulator
    fp32_loads: frozenset[str] = frozenset()  # pointers whose tiles go into fp32-only math
    address_tables: frozenset[str] = frozenset()  # pointers whose loaded values become pointers
    masks: frozenset[str] = frozenset()  # pointers whose loaded values are a load's or store's mask=
    flags: frozenset[str] = frozenset()  # constexprs the kernel only tests (``if HAS_BIAS:``)
    dtypes: frozenset[str] = frozenset()  # constexprs the kernel only uses as a dtype
    modes: Mapping[str, tuple] = field(default_factory=dict)  # compared only with literals: their values
    flag_rules: tuple[str, ...] = ()  # the kernel's static_asserts over flags alone
    required: Mapping[str, tuple[tuple, str]] = field(default_factory=dict)  # static_assert(D == 64 or D == 128)
    thresholds: Mapping[str, tuple[int, ...]] = field(default_factory=dict)  # ``if SPLIT_K > 1:``: {1, 2}
    scaled_operands: frozenset[str] = frozenset()  # a tl.dot operand of a kernel taking scale tensors
    float_scalars: frozenset[str] = frozenset()  # runtime scalars used beside a float literal (fp32)


__all__ = ["ASSUMED_DTYPE", "ASSUMED_INT", "SHAPE_SWEEP", "Context", "Draft", "ParamSpec", "UNSET"]
