"""Launch specs: what a compile needs beyond the kernel's source, and how Triton specializes it.

A kernel's parameters have no types in Python. Triton learns them at launch from the arguments
(a bf16 tensor -> ``*bf16``, an int -> ``i32``) and specializes on their values. To compile
without a launch we need the same facts. ``resolve_specs`` gathers them (``spec_inference``
says from where and in which order: the settings' ``kernels`` tables, the launch call and its
wrapper, the kernel's signature, the ``assume`` table, and the listed general assumptions).

``specialize`` then reproduces ``triton/runtime/jit.py`` (3.6.0, ``create_function_from_signature``
and ``native_specialize_impl``) for one config:

- pointers get ``tt.divisibility 16`` (we assume 16-byte aligned data, as every fresh torch
  allocation is) unless the parameter is in ``do_not_specialize``;
- an int with a known value divisible by 16 gets ``tt.divisibility 16``; an int equal to 1 becomes
  a constexpr; neither happens for a parameter in ``do_not_specialize``;
- an int of unknown value is compiled divisible by 16 and not 1 when the spec assumes so
  (``LaunchSpec.divisible``: the serving case, and the specialization with the pipelined
  copies); with ``--exact`` it is compiled as a generic value would be (like 17), and noted;
- a parameter annotated with a type keeps that type (an annotated int equal to 1 stays ``i32``
  and is not folded); annotated floats and bools are never specialized;
- ``@triton.heuristics`` values are the spec's, per config (``LaunchSpec.heuristic_values``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autotune_rewrite.spec import spec_cases as cases
from autotune_rewrite.spec.specialization import do_not_specialize, is_int_type
from autotune_rewrite.spec import spec_inference as inf
from autotune_rewrite.spec.runtime_types import annotation_type, int_type
from autotune_rewrite.spec.spec_draft import Context, Draft, ParamSpec
from autotune_rewrite.spec.param_modes import modes_of
from autotune_rewrite.spec.param_uses import (
    arithmetic_only, dtypes_of, flag_rules, flags_of, required_values, tile_extents,
)
from autotune_rewrite.spec.dot_operands import scaled_dot_operands
from autotune_rewrite.spec.pointer_dtypes import (
    address_table_params, fp32_pointer_params, index_pointer_params, int8_dot_params, mask_pointer_params,
)
from autotune_rewrite.spec.pointer_params import descriptor_params, pointer_params
from autotune_rewrite.spec import flag_ranges
from autotune_rewrite.spec.thresholds import thresholds_of
from autotune_rewrite.spec.scalar_types import float_scalars
from autotune_rewrite.spec.shape_sweep import SWEEP_COMPILES, specs_per_draft, sweep_shapes
from autotune_rewrite.triton_types import bind_dims, normalize_type, pointer_paths
from autotune_rewrite.errors import UserError
from autotune_rewrite.evidence import LaunchSpec
from autotune_rewrite.model import AutotuneSite, ConfigValue, ScanResult
from autotune_rewrite.outcomes import Assumption
from autotune_rewrite.settings import Settings, SpecEntry


def meta_params(site: AutotuneSite) -> tuple[str, ...]:
    """Names every config sets (they need no spec value)."""
    names: list[str] = []
    for config in site.configs or ():
        names += [k for k in config.kwargs if k not in names]
    return tuple(names)


@dataclass(frozen=True)
class SpecResolution:
    """The specs for one site, or what is missing to build them."""

    site: AutotuneSite
    specs: tuple[LaunchSpec, ...]
    missing: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (spec name, parameters without type/value)
    stanza: str = ""  # ready-to-paste TOML when something is missing
    not_compiled: tuple[str, ...] = ()  # distinct launches beyond MAX_LAUNCH_SPECS (file:line)

    @property
    def ok(self) -> bool:
        return not self.missing


def check_assume_dtype(assume_dtype: str | None) -> None:
    """``--assume-dtype`` must name a Triton dtype (a usage error for the whole run)."""
    if assume_dtype and normalize_type("*" + assume_dtype) is None:
        raise UserError(f"--assume-dtype {assume_dtype}: not a Triton dtype (e.g. bf16, fp16, fp32)")


DEFAULT_ASSUME_DTYPE = "bf16"


def resolve_specs(
    site: AutotuneSite,
    entries: Sequence[SpecEntry] = (),
    assume_dtype: str | None = None,
    kernel_source: str | None = None,
    settings_file: str = "pyproject.toml",
    assume: Mapping[str, tuple[Any, ...]] | None = None,
    exact: bool = False,
    assume_origin: str = "settings",
    heuristics: Sequence[Any] = (),
) -> SpecResolution:
    """Launch specs for ``site`` (``spec_inference`` says from what): one per settings table naming
    it; else one per distinct launch of it; else one from the kernel's source alone.

    ``assume_dtype``: the pointer dtype assumed where the code gives none (default bf16);
    ``assume``: values by parameter name (the repo's ``assume`` table and ``--assume``);
    ``exact``: assume nothing beyond ``assume``."""
    check_assume_dtype(assume_dtype)
    dtype_name = assume_dtype or DEFAULT_ASSUME_DTYPE
    pointers = pointer_params(kernel_source, site.kernel)
    constexprs = {p.name for p in site.params if p.is_constexpr} - set(meta_params(site))
    # A constexpr naming a TMA block dimension in a pre_hook shapes a tile, whatever the body does with it.
    tile_dims = {d for c in site.configs or () for _, dims in c.descriptor_shapes for d in dims if isinstance(d, str)}
    # A dimension a heuristic turns into a tile extent (``N_BLOCK = next_power_of_2(N)``) is a
    # shape too: swept, never the 4096 an arithmetic-only value is assumed at.
    if heuristics:
        from autotune_rewrite.spec.heuristics import tile_inputs  # LibCST: loaded with the heuristics

        tile_dims |= tile_inputs(heuristics, tile_extents(kernel_source, site.kernel, {h.name for h in heuristics}),
                                 constexprs)
    ctx = Context(site, frozenset(meta_params(site)), frozenset(pointers),
                      frozenset(index_pointer_params(kernel_source, site.kernel)),
                      normalize_type("*" + dtype_name), dtype_name, exact,
                      arithmetic=frozenset(arithmetic_only(kernel_source, site.kernel, constexprs - tile_dims)),
                      descriptors=frozenset(descriptor_params(kernel_source, site.kernel)),
                      heuristics=frozenset(h.name for h in heuristics),
                      int8_dots=frozenset(int8_dot_params(kernel_source, site.kernel)),
                      fp32_loads=frozenset(fp32_pointer_params(kernel_source, site.kernel)),
                      address_tables=frozenset(address_table_params(kernel_source, site.kernel)),
                      masks=frozenset(mask_pointer_params(kernel_source, site.kernel)),
                      flags=frozenset(flags := flags_of(kernel_source, site.kernel, constexprs)),
                      flag_rules=flag_rules(kernel_source, site.kernel, flags),
                      dtypes=frozenset(dtypes_of(kernel_source, site.kernel, constexprs)),
                      modes=modes_of(kernel_source, site.kernel, constexprs),
                      thresholds=thresholds_of(kernel_source, site.kernel, constexprs - tile_dims),
                      scaled_operands=frozenset(scaled_dot_operands(kernel_source, site.kernel)),
                      float_scalars=float_scalars(site, kernel_source, pointers),
                      required=required_values(kernel_source, site.kernel, constexprs))
    mine = [(f"kernels[{i}]", e) for i, e in enumerate(entries) if e.kernel in _idents(site)]
    drafts: list[Draft] = []
    sources: list[str] = []
    not_compiled: tuple[str, ...] = ()
    if mine:
        for key, entry in mine:
            drafts += cases.branches(ctx, inf.one_draft(ctx, entry.spec, _stated(site, entry, settings_file, key),
                                                      {}, None))
        sources.append(settings_file)
    else:
        launches = [launch for launch in site.launches if launch.arguments or launch.positional == 0]
        per_launch = inf.distinct([inf.one_draft(ctx, f"{launch.path}:{launch.line}", {}, inf.bind(site, launch, ctx.meta),
                                                 f"{launch.path}:{launch.line}") for launch in launches])
        if len(per_launch) > inf.MAX_LAUNCH_SPECS:
            not_compiled = tuple(d.name for d in per_launch[inf.MAX_LAUNCH_SPECS:])
            per_launch = per_launch[:inf.MAX_LAUNCH_SPECS]
        if len(per_launch) == 1:
            sources.append(f"launch {per_launch[0].name}")
            per_launch[0].name = "default"
        elif per_launch:
            sources.append("launches")
        else:
            per_launch = [inf.one_draft(ctx, "default", {}, {}, None)]
        drafts = [b for d in per_launch for s in cases.stated(ctx, d, assume) for b in cases.branches(ctx, s)]
    if assume:
        drafts = [d for draft in drafts for d in cases.sweep(ctx, draft, assume, assume_origin)]
    for d in drafts:  # before the sweep: an int32 accumulator decides operands a range would sweep
        cases.int8_operands(ctx, d, kernel_source)
    if not exact:  # a tile extent no code gives: judged over a sweep (shape_sweep)
        tiles = frozenset(tile_extents(kernel_source, site.kernel, constexprs | tile_dims) | tile_dims)
        limit = specs_per_draft(len(drafts), len(site.configs or ()))
        drafts = [d for draft in drafts for d in sweep_shapes(ctx, draft, tiles, limit)]
        # Assumed flags at both ends of their range, where twice the specs fit the sweep budget.
        if 2 * len(drafts) * max(1, len(site.configs or ())) <= SWEEP_COMPILES:
            drafts = [d for draft in drafts for d in flag_ranges.both_ends(ctx, draft)]
    for d in drafts:
        cases.dot_partners(ctx, d, kernel_source)
        if exact:  # the configs' environment defaults are assumptions too: --exact makes none
            for name, default in site.environment:
                d.lacking.append(f"${name}")
                d.why[f"${name}"] = (f"unset where the tool runs; the configs read it at its default {default!r}"
                                     if default is not None else "unset where the tool runs; the configs test it")
    specs = tuple(_spec(site, d, sources, *cases.heuristic_values(ctx, d, heuristics)) for d in drafts)
    missing = tuple((d.name, tuple(d.lacking)) for d in drafts if d.lacking)
    why = {n: w for d in drafts for n, w in d.why.items()}
    stanza = render_stanza(site, specs, dict(missing), why) if missing else ""
    return SpecResolution(site, specs, missing, stanza, not_compiled)


def _stated(site: AutotuneSite, entry: SpecEntry, settings_file: str, key: str) -> dict[str, ParamSpec]:
    """A settings table's parameters (exact: the user, or ``capture``, stated them)."""
    given_types, given_consts, values = dict(entry.types), dict(entry.constexprs), dict(entry.values)
    names = {p.name for p in site.params}
    stray = sorted((set(given_types) | set(given_consts) | set(values)) - names)
    if stray:
        raise UserError(f"{settings_file or 'settings'}: {key + ' ' if key else ''}(kernel {entry.kernel} spec '{entry.spec}'): "
                        f"no parameter named {', '.join(stray)} (parameters: {', '.join(p.name for p in site.params)})")
    out: dict[str, ParamSpec] = {}
    for p in site.params:
        if p.name in given_consts:
            out[p.name] = ParamSpec("constexpr", given_consts[p.name], source="settings")
        elif p.name in given_types:
            ty = given_types[p.name]
            if ty != "constexpr":
                value = values.get(p.name)
                out[p.name] = (ParamSpec(ty, value, source="settings") if value is not None
                               else ParamSpec(ty, source="settings"))
        elif p.name in values:
            out[p.name] = ParamSpec(int_type(values[p.name]), values[p.name], source="settings")
    return out


def _spec(site: AutotuneSite, draft: Draft, sources: Sequence[str], heuristic_values: tuple = (),
          heuristic_assumptions: Sequence = ()) -> LaunchSpec:
    params = draft.params
    used = {s.source for s in params.values()}
    words = list(sources)
    if used & {"annotation", "default"}:
        words.append("annotations")
    if "assume" in used:
        words.append("assume")
    if any(s.assumption is not None and s.source == "assumed" for s in params.values()):
        words.append("assumptions")
    order = [p.name for p in site.params]
    return LaunchSpec(
        name=draft.name,
        types=tuple((p.name, params[p.name].type if p.name in params else "constexpr" if p.is_constexpr else "?")
                    for p in site.params),
        constexprs=tuple((n, params[n].value) for n in order
                         if n in params and params[n].type == "constexpr" and params[n].has_value),
        int_values=tuple((n, params[n].value) for n in order
                         if n in params and params[n].type != "constexpr" and params[n].has_value
                         and isinstance(params[n].value, int) and not isinstance(params[n].value, bool)),
        assumed=tuple(n for n in order if n in params and params[n].source == "assumed"
                      and params[n].type.startswith("*")),
        source=" + ".join(dict.fromkeys(words)) or "annotations",
        divisible=tuple(n for n in order if n in params and params[n].divisible),
        assumptions=tuple(params[n].assumption for n in order if n in params and params[n].assumption is not None)
        + tuple(heuristic_assumptions) + environment_assumptions(site),
        heuristic_values=heuristic_values,
        family=draft.family,
        ranged=tuple(draft.ranged.items()),
    )


def environment_assumptions(site: AutotuneSite) -> tuple[Assumption, ...]:
    """The unset environment variables the site's configs were read at a default of: every verdict
    of the kernel rests on them."""
    return tuple(Assumption(f"${name}", "unset" if default is None else repr(default),
                            f"not set where the tool ran: the configs were read at this default (--env {name}=VALUE "
                            "or [tool.autotune-rewrite.env] to choose)")
                 for name, default in site.environment)


def _idents(site: AutotuneSite) -> set[str]:
    idents = {site.ident}
    if site.kernel_path:
        idents.add(f"{site.kernel_path}::{site.kernel}")
    return idents


# --------------------------------------------------------------------------- specialization
@dataclass(frozen=True)
class Specialization:
    """What ``JITFunction.run`` would hand ``triton.compile`` for one config."""

    signature: tuple[tuple[str, str], ...]
    constexprs: tuple[tuple[str, Any], ...]
    divisible_by_16: tuple[str, ...]


def specialize(site: AutotuneSite, spec: LaunchSpec, config: ConfigValue | None) -> Specialization:
    kwargs = dict(config.kwargs) if config is not None else {}
    if spec.heuristic_values and config is not None:
        kwargs.update({name: value for name, value in heuristic_kwargs(site, spec, config).items()
                       if name not in kwargs})
    types = dict(spec.types)
    consts = dict(spec.constexprs)
    values = dict(spec.int_values)
    dns = do_not_specialize(site)
    signature, constexprs, divisible = [], [], []
    for p in site.params:
        ty = bind_dims(types.get(p.name, "?"), {**consts, **kwargs})
        if ty == "constexpr":
            value = kwargs.get(p.name, consts.get(p.name))
            signature.append((p.name, "constexpr"))
            constexprs.append((p.name, value))
            continue
        value = kwargs.get(p.name, values.get(p.name))
        specialized = p.name not in dns and not (ty in ("u1",) or ty.startswith(("fp", "bf")))
        pinned = annotation_type(p) is not None
        if ty.startswith("*") or pointer_paths(ty):  # a pointer, or a tuple holding pointers
            if specialized:
                divisible.append(p.name)  # assumed 16-byte aligned (fresh torch allocations are 256)
        elif is_int_type(ty) and name_divisible(spec, p.name) and specialized and p.name not in kwargs:
            divisible.append(p.name)  # an int of unknown value, assumed divisible by 16 and not 1
        elif is_int_type(ty) and isinstance(value, int) and not isinstance(value, bool) and specialized:
            if value == 1 and not pinned:
                signature.append((p.name, "constexpr"))
                constexprs.append((p.name, 1))
                continue
            if value % 16 == 0:
                divisible.append(p.name)
        signature.append((p.name, ty))
    return Specialization(tuple(signature), tuple(constexprs), tuple(divisible))


def heuristic_kwargs(site: AutotuneSite, spec: LaunchSpec, config: ConfigValue) -> dict[str, Any]:
    """The spec's ``@triton.heuristics`` values for ``config``. They were evaluated for the site's
    own configs (``LaunchSpec.heuristic_values``, by config label); a config a rewrite adds (same
    tile, other warps or stages) takes those of a config with the same meta-parameters, or the
    value every config got."""
    label, meta = config.label(), cases.meta_key(config)
    out = {}
    for name, per_config in spec.heuristic_values:
        exact = [v for lab, key, v in per_config if lab == label]
        same_meta = [v for lab, key, v in per_config if key == meta]
        if exact or same_meta:
            out[name] = (exact or same_meta)[0]
        elif len({repr(v) for _, _, v in per_config}) == 1:
            out[name] = per_config[0][2]
        else:
            raise ValueError(f"@triton.heuristics {name} was not evaluated for {label}, and its value "
                             "differs between the kernel's configs")
    return out


def name_divisible(spec: LaunchSpec, name: str) -> bool:
    return name in spec.divisible and name not in dict(spec.int_values)


def unknown_ints(site: AutotuneSite, spec: LaunchSpec) -> tuple[str, ...]:
    """Int parameters compiled without a known value (no divisibility, not folded)."""
    values = dict(spec.int_values)
    dns = do_not_specialize(site)
    meta = set(meta_params(site))
    return tuple(
        name for name, ty in spec.types
        if is_int_type(ty) and name not in values and name not in dns and name not in meta
        and name not in spec.divisible
    )


# --------------------------------------------------------------------------- the stanza
def render_stanza(site: AutotuneSite, specs: Sequence[LaunchSpec], missing: Mapping[str, Sequence[str]],
                  why: Mapping[str, str] | None = None) -> str:
    """What the kernel still needs, as an ``assume`` table to fill in: one commented line per
    missing parameter, saying where its value comes from. Nothing is guessed: pasted as it is,
    the table is valid TOML and assumes nothing."""
    names = list(dict.fromkeys(n for spec in specs for n in missing.get(spec.name, ())))
    kinds = {p.name: "constexpr" if p.is_constexpr else "parameter" for p in site.params}
    params = [n for n in names if not n.startswith("$")]
    variables = [n[1:] for n in names if n.startswith("$")]  # environment variables (``--exact``)
    lines = []
    if params:
        lines.append("[tool.autotune-rewrite.assume]  # by parameter name, for every kernel that has it; a list is a sweep")
    for name in params:
        said = (why or {}).get(name, "")
        lines.append(f"# {name} =    # {kinds.get(name, 'parameter')} of {site.kernel}{': ' + said if said else ''}")
    if variables:
        lines.append("[tool.autotune-rewrite.env]  # what os.environ answers in the scanned code")
    for name in variables:
        said = (why or {}).get(f"${name}", "")
        lines.append(f'# {name} = ""    # read by the configs of {site.kernel}{": " + said if said else ""}')
    return "\n".join(lines)


def settings_destination(settings_file: str | None) -> str:
    """Where a missing spec's stanza goes, in words: the file the settings came from, if any."""
    if settings_file is None:
        return "pyproject.toml (or autotune-rewrite.toml without the tool.autotune-rewrite prefix)"
    if settings_file.endswith("pyproject.toml"):
        return settings_file
    return settings_file + " (without the tool.autotune-rewrite prefix)"


# --------------------------------------------------------------------------- specs of unknown kernels
def _in_scope(path: str, scope: Sequence[str]) -> bool:
    return not scope or any(path == s or path.startswith(s + "/") for s in scope)


def check_spec_kernels(settings: Settings, scanned: ScanResult, scope: Sequence[Path] = ()) -> None:
    """``UserError`` (exit 2) for a ``kernels`` entry naming no autotuned kernel the scan found.

    Only entries whose file lies under the scanned ``scope`` (absolute paths; none = the whole
    root) can be judged; a file the scan could not read or that the settings exclude proves nothing."""
    from difflib import get_close_matches

    from autotune_rewrite.files import is_excluded

    root = Path(settings.root).resolve()
    under = [p.resolve().relative_to(root).as_posix() for p in scope]
    known = sorted({ident for site in scanned.sites for ident in _idents(site)})
    unreadable = {e.path for e in scanned.errors}
    for i, entry in enumerate(settings.kernels):
        path = entry.kernel.split("::", 1)[0]
        if (entry.kernel in known or not _in_scope(path, under) or path in unreadable
                or is_excluded(path, settings.exclude)):
            continue
        close = get_close_matches(entry.kernel, known, n=3, cutoff=0.5) or known[:3]
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else "; the scan found no autotuned kernel"
        raise settings.where().at("kernels").at(i).at("kernel").error(
            f"= {entry.kernel!r} names no autotuned kernel found under {settings.root}{hint}")
