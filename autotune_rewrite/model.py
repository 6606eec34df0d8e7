"""The data every pipeline stage passes on: frozen, plain, JSON-able.

Stages are pure functions over these objects (find files -> locate -> analyse -> decide ->
rewrite -> emit). A stage never raises across the pipeline for bad input in one file; it
returns the error inside its result instead (see ``FileError``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

# Triton's own defaults (triton.Config.__init__, 3.3 through 3.9).
DEFAULT_NUM_WARPS = 4
DEFAULT_NUM_STAGES = 3
DEFAULT_NUM_CTAS = 1


@dataclass(frozen=True)
class Span:
    """A source range as LibCST's PositionProvider reports it: lines 1-based, columns 0-based,
    end exclusive."""

    start_line: int
    start_col: int
    end_line: int
    end_col: int


@dataclass(frozen=True)
class ElementChoice:
    """One element of a literal list/tuple written in the source that a generated config was
    built from: ``for bm in [64, 128]`` gives the config made with ``bm = 128`` the choice
    (that list, index 1). The rewriter removes a config in place by removing such elements."""

    path: str  # file holding the literal
    sequence: Span  # the list/tuple literal itself
    index: int  # the element's position in it


@dataclass(frozen=True)
class ConfigValue:
    """One ``triton.Config`` resolved statically.

    ``num_warps`` etc. hold what the source says (None = not given); the ``effective_*``
    properties apply Triton's defaults. ``span`` is the ``triton.Config(...)`` call in the source
    when the element is written out literally in the list; None when it was generated (a
    comprehension, a helper's loop).
    """

    kwargs: dict[str, Any]
    num_warps: int | None = None
    num_stages: int | None = None
    num_ctas: int | None = None
    maxnreg: int | None = None
    has_pre_hook: bool = False
    span: Span | None = None
    path: str | None = None  # file holding ``span`` (may differ from the site's: helper modules)
    # TMA block shapes the pre_hook sets: (("a_desc", ("BLOCK_M", "BLOCK_K")), ...) (evaluate/pre_hooks.py)
    descriptor_shapes: tuple[tuple[str, tuple[str | int, ...]], ...] = ()
    # Generated configs (``span`` None): the literal elements of every loop that made this one,
    # outermost loop first; a loop over something else (``range``, a call) adds nothing.
    choices: tuple[ElementChoice, ...] = ()
    # Fields written in the source whose value is only known at run time: ((field, reason), ...);
    # the field reads None in ``kwargs`` / ``num_warps`` ... The config is shown, never compiled.
    unknown: tuple[tuple[str, str], ...] = ()

    @property
    def effective_num_warps(self) -> int:
        return DEFAULT_NUM_WARPS if self.num_warps is None else self.num_warps

    @property
    def effective_num_stages(self) -> int:
        return DEFAULT_NUM_STAGES if self.num_stages is None else self.num_stages

    @property
    def effective_num_ctas(self) -> int:
        return DEFAULT_NUM_CTAS if self.num_ctas is None else self.num_ctas

    @classmethod
    def from_label(cls, text: str) -> "ConfigValue":
        """The config a ``label()`` names (``"BLOCK_T=16 w8 s3"``: meta-params as NAME=int, wN,
        sM); ``ValueError`` naming the part it cannot read (a missing wN or sM included)."""
        kwargs, warps, stages = {}, None, None
        for tok in text.split():
            name, eq, value = tok.partition("=")
            if eq:
                kwargs[name] = int(value)
            elif tok[:1] == "w" and tok[1:].isdigit():
                warps = int(tok[1:])
            elif tok[:1] == "s" and tok[1:].isdigit():
                stages = int(tok[1:])
            else:
                raise ValueError(tok)
        if warps is None or stages is None:
            raise ValueError("num_warps and num_stages")
        return cls(kwargs=kwargs, num_warps=warps, num_stages=stages)

    def label(self) -> str:
        """Short human label, e.g. ``BLOCK_T=16 w4 s2``."""
        unknown = {f for f, _ in self.unknown}
        meta = " ".join(f"{k}={'?' if k in unknown else v}" for k, v in self.kwargs.items())
        parts = [meta] if meta else []
        warps = "?" if "num_warps" in unknown else self.effective_num_warps
        stages = "?" if "num_stages" in unknown else self.effective_num_stages
        parts.append(f"w{warps} s{stages}")
        if self.effective_num_ctas != 1:
            parts.append(f"ctas{self.effective_num_ctas}")
        if self.maxnreg is not None:
            parts.append(f"maxnreg{self.maxnreg}")
        return " ".join(parts)


@dataclass(frozen=True)
class KernelParam:
    """One parameter of the ``@triton.jit`` function, as written."""

    name: str
    index: int
    annotation: str | None = None  # source text, e.g. "tl.constexpr"
    is_constexpr: bool = False
    default: str | None = None  # source text of the default, if any
    # The default's value when the static evaluator knows it (literals, module constants, also
    # imported ones, ``tl.constexpr(...)``): what the runtime binds when a caller leaves it out.
    default_known: bool = False
    default_value: Any = None


@dataclass(frozen=True)
class ArgFact:
    """What the code around a launch says about one of its arguments (``wrapper/launch_args``).

    ``kind``: "tensor", "int", "float", "bool", "str", "none", "dtype" or "unknown". ``dtype``: a
    tensor's element type, or a dtype argument's, as torch names it ("float32"), when known.
    ``value``: a known int/float/bool/None, or a dtype's source text. ``assumption``: non-empty
    when the fact holds only if something the code does not guarantee holds (the caller leaves a
    wrapper default alone, a tensor is contiguous)."""

    slot: int | str  # positional index, or keyword name
    text: str  # the argument's source text
    kind: str
    dtype: str | None = None
    value: Any = None
    value_known: bool = False
    fresh: bool = False  # a tensor freshly allocated or made contiguous
    optional: bool = False  # a tensor that may also be None
    why: str = ""  # how it was read, in words
    assumption: str = ""
    options: tuple[Any, ...] = ()  # value unknown, but one of these (the branches of ``a if c else b``)
    upper: int | None = None  # an int of unknown value that the code bounds (``min(128, x)``)
    expr: str = ""  # value unknown: the expression it comes from (``128 if K == 96 else K``)
    # Names the value is computed from that the wrapper pins to a few values before the launch:
    # (name, its values, the statement in words), e.g. ("Lk", (64, 128), "`assert Lk in {64, 128}` (line 12)").
    stated: tuple[tuple[str, tuple[Any, ...], str], ...] = ()


@dataclass(frozen=True)
class LaunchSite:
    """``kernel[grid](...)`` somewhere in the tree, resolved to one autotune site."""

    path: str
    line: int
    span: Span
    callee: str  # source text of what is subscripted, e.g. "_decode_kernel" or "fn"
    grid: str  # source text of the grid expression
    positional: int  # number of positional arguments
    keywords: tuple[str, ...]  # keyword argument names, in order
    has_star_args: bool = False  # *args or **kwargs present: not safely editable
    function: str | None = None  # enclosing function's qualified name, None at module level
    arguments: tuple[ArgFact, ...] = ()  # what the wrapper says about each argument


@dataclass(frozen=True)
class TargetConfigs:
    """The configs some targets see, when the ``configs=`` expression asks the device
    (``torch.version.hip``, the capability, the shared-memory opt-in ...). Targets that take the
    same branch share one entry; ``queries`` says what each query answered there and which
    branch that took (``torch.cuda.get_device_capability() = (12, 0)``, `` `is_hopper()` is False``)."""

    targets: tuple[str, ...]  # ``Target.name`` of each, in the run's order ("sm_90", "h200")
    configs: tuple[ConfigValue, ...] | None  # None when unresolved on these targets
    origin: str | None
    unresolved_reason: str | None
    queries: tuple[str, ...] = ()


FORM_DECORATOR = "decorator"
FORM_CALL = "call"


@dataclass(frozen=True)
class AutotuneSite:
    """One use of ``triton.autotune`` and the kernel it wraps."""

    path: str  # relative to the scan root, POSIX separators
    line: int  # first line of the decorator / call
    span: Span  # the ``@triton.autotune(...)`` decorator (without '@') or the call expression
    form: Literal["decorator", "call"]
    kernel: str  # name of the wrapped @triton.jit function
    kernel_span: Span | None  # the ``def`` of the kernel (None if it lives elsewhere)
    kernel_path: str | None  # file that defines the kernel (usually ``path``)
    params: tuple[KernelParam, ...]
    do_not_specialize: tuple[str, ...]
    decorators: tuple[str, ...]  # qualified names of the whole stack, outermost first
    key: tuple[str, ...] | None  # None when not statically known
    key_span: Span | None
    configs: tuple[ConfigValue, ...] | None  # None when unresolved
    configs_origin: str | None  # how they were resolved: "literal list", "comprehension", ...
    configs_span: Span | None  # the ``configs=`` argument expression in the site's file
    unresolved_reason: str | None
    prune_configs_by: str | None = None  # source text
    reset_to_zero: tuple[str, ...] | None = None
    restore_value: tuple[str, ...] | None = None
    launches: tuple[LaunchSite, ...] = ()
    bound_to: str | None = None  # call form: the name the autotuned kernel is assigned to (``k2 = ...``)
    # Set only when another site shares ``path::kernel`` (two defs of one name under if/else,
    # one kernel autotuned twice): the kernel's def line, else the site's line.
    ident_line: int | None = None
    # Non-empty when the configs depend on the target (``configs`` is then None): one entry per
    # group of the run's targets that see the same configs. Empty: ``configs`` is what every
    # target sees.
    configs_by_target: tuple[TargetConfigs, ...] = ()
    # Data files of the tree (JSON/YAML, root-relative) the configs were read from: inputs of
    # the site (``--changed-since``), and where a rewrite of its configs would have to edit.
    data_files: tuple[str, ...] = ()
    # Environment variables unset where the tool ran that the configs were read at a default of:
    # (name, the default; None for read as unset). Each is an assumption of every verdict.
    environment: tuple[tuple[str, Any], ...] = ()

    @property
    def partly_unknown(self) -> str | None:
        """Why some config has a field only known at run time (the first such field), else None."""
        for i, c in enumerate(self.configs or ()):
            if c.unknown:
                field, reason = c.unknown[0]
                return f"config {i + 1} of {len(self.configs)} ({c.label()}): `{field}` is not known statically: {reason}"
        return None

    @property
    def target_dependent(self) -> bool:
        return bool(self.configs_by_target)

    def on_targets(self, entry: TargetConfigs) -> "AutotuneSite":
        """The site as ``entry``'s targets see it: their configs, and ``configs_by_target`` just
        ``(entry,)``, so every stage still knows the configs were chosen by a device query, and
        for which targets (``view_targets``)."""
        return dataclasses.replace(self, configs=entry.configs, configs_origin=entry.origin,
                                   unresolved_reason=entry.unresolved_reason, configs_by_target=(entry,))

    @property
    def view_targets(self) -> tuple[str, ...]:
        """The targets this site's ``configs`` are for, when they depend on the target (a view
        made by ``on_targets``); () when the configs are the same on every target."""
        return self.configs_by_target[0].targets if len(self.configs_by_target) == 1 else ()

    def entry_for(self, target: str) -> TargetConfigs | None:
        return next((e for e in self.configs_by_target if target in e.targets), None)

    @property
    def ident(self) -> str:
        """``path::kernel`` (``path::kernel:LINE`` for sites that share it), the key used in
        launch-spec tables and reports."""
        base = f"{self.path}::{self.kernel}"
        return base if self.ident_line is None else f"{base}:{self.ident_line}"


@dataclass(frozen=True)
class FileError:
    path: str
    message: str


@dataclass(frozen=True)
class ScanResult:
    root: str
    files_scanned: int
    sites: tuple[AutotuneSite, ...] = ()
    errors: tuple[FileError, ...] = ()
    files_analysed: int = 0  # files this scan parsed and analysed (the others' facts came from the cache)


def to_jsonable(obj: Any) -> Any:
    """Dataclasses -> dicts, tuples -> lists; for ``--format json``."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(x) for x in obj]
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    return obj


__all__ = [
    "ArgFact",
    "AutotuneSite",
    "ConfigValue",
    "ElementChoice",
    "FileError",
    "KernelParam",
    "LaunchSite",
    "ScanResult",
    "Span",
    "TargetConfigs",
    "to_jsonable",
]
