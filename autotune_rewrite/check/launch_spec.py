"""Launch specs: what a compile needs beyond the kernel's source, and how Triton specializes it.

A kernel's parameters have no types in Python. Triton learns them at launch from the arguments
(a bf16 tensor -> ``*bf16``, an int -> ``i32``) and specializes on their values. To compile
without a launch we need the same facts, from, in order:

1. the ``kernels`` array of the target repo's settings (``[[tool.autotune-rewrite.kernels]]``),
   keyed by ``path::kernel``; several tables for one kernel are several specs;
2. the source: type annotations (``n: tl.int32``, ``x: "*fp16"``), constexpr defaults
   (``D: tl.constexpr = 64``), int/float/bool defaults;
3. ``--assume-dtype``: fills pointer types nobody gave; those numbers are labelled assumed.

``specialize`` then reproduces ``triton/runtime/jit.py`` (3.6.0, ``create_function_from_signature``
and ``native_specialize_impl``) for one config:

- pointers get ``tt.divisibility 16`` (we assume 16-byte aligned data, as every fresh torch
  allocation is) unless the parameter is in ``do_not_specialize``;
- an int with a known value divisible by 16 gets ``tt.divisibility 16``; an int equal to 1 becomes
  a constexpr; neither happens for a parameter in ``do_not_specialize``;
- a parameter annotated with a type keeps that type (an annotated int equal to 1 stays ``i32``
  and is not folded); annotated floats and bools are never specialized;
- CHOICE: an int whose value is unknown is compiled as a generic value would be (like 17): no
  divisibility hint and not folded. That is exact for odd sizes and conservative otherwise;
  give ``values = { name = ... }`` in the spec to compile the specialization you launch.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autotune_rewrite.check.pointer_params import pointer_params
from autotune_rewrite.check.spec_toml import Table, render_table
from autotune_rewrite.check.triton_types import bind_dims, normalize_type, pointer_paths
from autotune_rewrite.errors import UserError
from autotune_rewrite.check.evidence import LaunchSpec
from autotune_rewrite.model import AutotuneSite, ConfigValue, KernelParam, ScanResult
from autotune_rewrite.settings import Settings, SpecEntry


def _is_int_type(ty: str) -> bool:
    return bool(re.fullmatch(r"[iu](8|16|32|64)", ty))


# --------------------------------------------------------------------------- from the source
def _default(param: KernelParam) -> tuple[bool, Any]:
    """(True, value) when the locator's static evaluator knew the parameter's default."""
    return param.default_known, param.default_value


def _int_type(value: int) -> str:
    # The runtime's choice for a Python int (native_specialize_impl).
    if -(2**31) <= value < 2**31:
        return "i32"
    if -(2**63) <= value < 2**63:
        return "i64"
    return "u64"


def _value_type(value: Any) -> str | None:
    if isinstance(value, bool):
        return "u1"
    if isinstance(value, int):
        return _int_type(value)
    if isinstance(value, float):
        return "fp32"
    return None


def annotation_type(param: KernelParam) -> str | None:
    """The type an annotation pins (Triton's ``KernelParam.annotation_type``), else None."""
    if param.annotation is None or param.is_constexpr:
        return None
    ty = normalize_type(param.annotation)
    return None if ty in (None, "constexpr") else ty


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

    @property
    def ok(self) -> bool:
        return not self.missing


def check_assume_dtype(assume_dtype: str | None) -> None:
    """``--assume-dtype`` must name a Triton dtype (a usage error for the whole run)."""
    if assume_dtype and normalize_type("*" + assume_dtype) is None:
        raise UserError(f"--assume-dtype {assume_dtype}: not a Triton dtype (e.g. bf16, fp16, fp32)")


def resolve_specs(
    site: AutotuneSite,
    entries: Sequence[SpecEntry] = (),
    assume_dtype: str | None = None,
    kernel_source: str | None = None,
    settings_file: str = "pyproject.toml",
) -> SpecResolution:
    """Launch specs for ``site``: one per settings table naming it, else one from the source."""
    mine = [(f"kernels[{i}]", e) for i, e in enumerate(entries) if e.kernel in _idents(site)]
    if not mine:
        mine = [("", SpecEntry(site.ident, "default", (), (), ()))]
    assumed_ptr = normalize_type("*" + assume_dtype) if assume_dtype else None
    if assume_dtype and assumed_ptr is None:
        raise UserError(f"--assume-dtype {assume_dtype}: not a Triton dtype (e.g. bf16, fp16, fp32)")
    pointers = pointer_params(kernel_source, site.kernel) if assumed_ptr else ()
    meta = set(meta_params(site))
    specs, missing = [], []
    for key, entry in mine:
        spec, lacking = _one_spec(site, entry, meta, assumed_ptr, pointers,
                                  settings_file if entry.types or entry.constexprs or entry.values else "", key)
        specs.append(spec)
        if lacking:
            missing.append((entry.spec, lacking))
    stanza = render_stanza(site, specs, dict(missing), pointers=pointer_params(kernel_source, site.kernel)) if missing else ""
    return SpecResolution(site, tuple(specs), tuple(missing), stanza)


def _idents(site: AutotuneSite) -> set[str]:
    idents = {site.ident}
    if site.kernel_path:
        idents.add(f"{site.kernel_path}::{site.kernel}")
    return idents


def _one_spec(site, entry: SpecEntry, meta: set[str], assumed_ptr, pointers, settings_file: str, key: str = ""):
    given_types = dict(entry.types)
    given_consts = dict(entry.constexprs)
    values = dict(entry.values)
    names = {p.name for p in site.params}
    stray = sorted((set(given_types) | set(given_consts) | set(values)) - names)
    if stray:
        raise UserError(f"{settings_file or 'settings'}: {key + ' ' if key else ''}(kernel {entry.kernel} spec '{entry.spec}'): "
                        f"no parameter named {', '.join(stray)} (parameters: {', '.join(p.name for p in site.params)})")
    types: dict[str, str] = {}
    consts: dict[str, Any] = {}
    assumed: list[str] = []
    lacking: list[str] = []
    from_source = False
    for p in site.params:
        known, default = _default(p)
        # A None argument is a constexpr whatever the annotation: constexprs = { bias = "None" } types it.
        if p.is_constexpr or given_types.get(p.name) == "constexpr" or given_consts.get(p.name, 0) is None:
            types[p.name] = "constexpr"
            if p.name in given_consts:
                consts[p.name] = given_consts[p.name]
            elif p.name in meta:
                pass  # every config sets it
            elif known:
                consts[p.name], from_source = default, True
            else:
                lacking.append(p.name)
            continue
        if p.name in given_types:
            types[p.name] = given_types[p.name]
        elif annotation_type(p):
            types[p.name], from_source = annotation_type(p), True
        elif p.name in values:
            types[p.name] = _int_type(values[p.name])
        elif known and _value_type(default):
            types[p.name], from_source = _value_type(default), True
        elif known and default is None:
            types[p.name] = "constexpr"  # None is always a constexpr at runtime
            consts[p.name] = None
        elif assumed_ptr and p.name in pointers:
            types[p.name] = assumed_ptr
            assumed.append(p.name)
        else:
            lacking.append(p.name)
            continue
        if p.name in given_consts:
            consts[p.name] = given_consts[p.name]
        if p.name not in values and known and isinstance(default, int) and not isinstance(default, bool):
            values[p.name] = default  # what the runtime sees when the caller leaves it out
    sources = [s for s in (settings_file, "annotations" if from_source else "", "--assume-dtype" if assumed else "") if s]
    spec = LaunchSpec(
        name=entry.spec,
        types=tuple((p.name, types.get(p.name, "?")) for p in site.params),
        constexprs=tuple((k, consts[k]) for k in (p.name for p in site.params) if k in consts),
        int_values=tuple((k, values[k]) for k in (p.name for p in site.params) if k in values),
        assumed=tuple(assumed),
        source=" + ".join(sources) or "annotations",
    )
    return spec, tuple(lacking)


# --------------------------------------------------------------------------- specialization
@dataclass(frozen=True)
class Specialization:
    """What ``JITFunction.run`` would hand ``triton.compile`` for one config."""

    signature: tuple[tuple[str, str], ...]
    constexprs: tuple[tuple[str, Any], ...]
    divisible_by_16: tuple[str, ...]


def do_not_specialize(site: AutotuneSite) -> set[str]:
    """``do_not_specialize`` entries as names (Triton accepts names or indices)."""
    by_index = {str(p.index): p.name for p in site.params}
    return {by_index.get(str(d), str(d)) for d in site.do_not_specialize}


def specialize(site: AutotuneSite, spec: LaunchSpec, config: ConfigValue | None) -> Specialization:
    kwargs = dict(config.kwargs) if config is not None else {}
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
        elif _is_int_type(ty) and isinstance(value, int) and not isinstance(value, bool) and specialized:
            if value == 1 and not pinned:
                signature.append((p.name, "constexpr"))
                constexprs.append((p.name, 1))
                continue
            if value % 16 == 0:
                divisible.append(p.name)
        signature.append((p.name, ty))
    return Specialization(tuple(signature), tuple(constexprs), tuple(divisible))


def unknown_ints(site: AutotuneSite, spec: LaunchSpec) -> tuple[str, ...]:
    """Int parameters compiled without a known value (no divisibility, not folded)."""
    values = dict(spec.int_values)
    dns = do_not_specialize(site)
    meta = set(meta_params(site))
    return tuple(
        name for name, ty in spec.types
        if _is_int_type(ty) and name not in values and name not in dns and name not in meta
    )


# --------------------------------------------------------------------------- the stanza
def render_stanza(site: AutotuneSite, specs: Sequence[LaunchSpec], missing: Mapping[str, Sequence[str]],
                  pointers: Sequence[str] = ()) -> str:
    """Ready-to-paste ``[[tool.autotune-rewrite.kernels]]`` tables; guesses are listed in a comment."""
    blocks = []
    for spec in specs:
        lacking = set(missing.get(spec.name, ()))
        types: dict[str, Any] = {}
        consts: dict[str, Any] = dict(spec.constexprs)
        guessed = []
        for name, ty in spec.types:
            if name in lacking and ty == "constexpr":
                consts[name] = 16
                guessed.append(name)
            elif name in lacking:
                types[name] = "*bf16" if name in pointers else "i32"
                guessed.append(name)
            elif ty != "constexpr":
                types[name] = ty
        consts = {n: consts[n] for n, _ in spec.types if n in consts}
        table = Table(site.ident, spec.name, tuple(types.items()), tuple(consts.items()), tuple(spec.int_values),
                      (f"GUESSED, edit before use: {', '.join(guessed)}",) if guessed else ())
        blocks.append(render_table(table, prefix="tool.autotune-rewrite.").rstrip("\n"))
    return "\n\n".join(blocks)


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
