"""Fold the raw records a captured program wrote into launch specs (pure; no Triton import).

One spec per distinct runtime specialization of an autotuned kernel, with the config
meta-params taken out: the compiles of one launch shape under its N configs differ only in
those meta-params (and num_warps/num_stages), so they fold into one spec; a second head-block
size, dtype or a ``== 1`` / divisible-by-16 change is a second spec.

What goes where in the ``[[kernels]]`` table ``check`` reads (``spec/launch_spec.py``):

- ``types``: every non-constexpr parameter with the type the runtime gave it; an int the runtime
  folded to a constexpr because it was 1 keeps its int type here and ``values`` says 1 (``check``
  folds it again);
- ``constexprs``: declared constexprs that no config sets (e.g. ``BLOCK_H``, ``D_LATENT``);
- ``values``: the int arguments of the launch that caused the compile (same ``== 1`` and
  divisibility facts as every other launch of that spec, by construction).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autotune_rewrite.constexpr_values import from_runtime
from autotune_rewrite.triton_types import tuple_text


@dataclass(frozen=True)
class LiveCompile:
    """One compiled config as the live program had it (numbers from the driver / metadata)."""

    meta: tuple[tuple[str, Any], ...]  # config meta-params (BLOCK_T=16)
    num_warps: int | None
    num_stages: int | None
    shared: int | None
    n_regs: int | None
    n_spills: int | None
    target: str | None
    load_error: str | None = None
    hash: str | None = None  # Triton's cache key of the compiled kernel (folder = base32 of it)


@dataclass(frozen=True)
class CapturedSpec:
    name: str
    types: tuple[tuple[str, str], ...]
    constexprs: tuple[tuple[str, Any], ...]
    values: tuple[tuple[str, int], ...]
    divisible_by_16: tuple[str, ...]  # as the runtime marked them (pointers and ints)
    compiles: tuple[LiveCompile, ...]
    notes: tuple[str, ...] = ()  # facts the table cannot say (unaligned pointers, None constexprs)


@dataclass(frozen=True)
class KernelCapture:
    ident: str  # "path::name", path relative to the root
    file: str  # absolute
    keys: tuple[str, ...]
    key_values: tuple[tuple[tuple[str, Any], ...], ...]  # distinct key values seen, in order
    dtypes: tuple[tuple[str, ...], ...]
    specs: tuple[CapturedSpec, ...]


@dataclass(frozen=True)
class CaptureResult:
    kernels: tuple[KernelCapture, ...]
    skipped: tuple[str, ...] = ()  # autotuned kernels not folded, with the reason
    triton: str | None = None
    targets: tuple[str, ...] = ()
    driver_error: str | None = None
    errors: tuple[str, ...] = ()  # hook errors reported by the child
    warnings: tuple[str, ...] = field(default=())


def read_records(path: Path) -> list[dict]:
    """The JSON lines the child wrote (a torn last line from a killed child is dropped)."""
    if not path.is_file():
        return []
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def _relative(file: str | None, root: Path) -> str | None:
    if not file:
        return None
    try:
        return Path(os.path.realpath(file)).relative_to(Path(os.path.realpath(root))).as_posix()
    except ValueError:
        return None


def _is_int(ty: str) -> bool:
    return ty in ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")


def _constant(value: Any) -> Any:
    """A constexpr as the hooks wrote it, as a spec holds it (a dtype is a ``DtypeRef``)."""
    if isinstance(value, Mapping) and isinstance(value.get("dtype"), str):
        return from_runtime(value["dtype"]) or value["dtype"]
    return value


_DESCRIPTOR = re.compile(r"tensordesc<([^\[\]]+)\[([\d, ]+)\]>")


def descriptor_dims(records: Sequence[Mapping[str, Any]], meta: Sequence[str]) -> dict[str, tuple[str | None, ...]]:
    """TMA descriptor parameter -> per dim, the meta-parameter that sets it, where an autotuner
    ``pre_hook`` sets the block shape per config: a dim that differs between the compiles and
    equals one meta-parameter's value in every one of them (ambiguous or fixed: None, kept as
    seen). The spec then says ``tensordesc<bf16[1, BLOCK_M, BLOCK_K]>`` once, right for every
    config, instead of one spec per block shape."""
    seen: dict[str, list[tuple[tuple[int, ...], Mapping[str, Any]]]] = {}
    for r in records:
        constants = r.get("constants") or {}
        for name, ty in (r.get("signature") or {}).items():
            m = _DESCRIPTOR.fullmatch(ty) if isinstance(ty, str) else None
            if m:
                seen.setdefault(name, []).append((tuple(int(x) for x in m.group(2).split(",")), constants))
    out = {}
    for name, shapes in seen.items():
        if len({len(dims) for dims, _ in shapes}) != 1:
            continue
        names: list[str | None] = []
        for i in range(len(shapes[0][0])):
            if len({dims[i] for dims, _ in shapes}) < 2:
                names.append(None)
                continue
            matches = [m for m in meta if all(c.get(m) == dims[i] for dims, c in shapes)]
            names.append(matches[0] if len(matches) == 1 else None)
        if any(names):
            out[name] = tuple(names)
    return out


def _symbolic(ty: str, names: tuple[str | None, ...] | None) -> str:
    m = _DESCRIPTOR.fullmatch(ty) if names else None
    if m is None:
        return ty
    dims = [d.strip() for d in m.group(2).split(",")]
    return f"tensordesc<{m.group(1)}[{', '.join(n or d for n, d in zip(names, dims))}]>"


def _spec_facts(record: Mapping[str, Any], meta: set[str], descriptors: Mapping[str, tuple] | None = None):
    """(types, constexprs, values, divisible, notes) of one compile record, meta-params removed;
    ``descriptors``: the block-shape dims the configs set (``descriptor_dims``)."""
    params = record.get("params") or []
    signature = record.get("signature") or {}
    constants = record.get("constants") or {}
    attrs = record.get("attrs") or {}
    values = record.get("values") or {}
    types, consts, vals, divisible = [], [], [], []
    notes = list(record.get("notes") or ())  # facts a trace reader found (gpu/capture/tritonparse_trace.py)
    for p in params:
        name = p["name"]
        if name in meta:
            continue
        ty = signature.get(name)
        if p.get("constexpr"):
            if name in constants:
                consts.append((name, _constant(constants[name])))  # None is written "None"
            continue
        if ty == "constexpr":  # the runtime folded it: an int equal to 1, or None
            value = _constant(constants.get(name, values.get(name)))
            if value is None:
                types.append((name, "constexpr"))
                consts.append((name, None))
            elif isinstance(value, bool) or not isinstance(value, int):
                types.append((name, "constexpr"))
                consts.append((name, value))
            else:
                types.append((name, "i32"))
                vals.append((name, value))
            continue
        if isinstance(ty, list):  # a tuple parameter: "(*fp16, i32)"
            ty = tuple_text(ty)
            if ty is None:
                notes.append(f"{name} is a tuple holding constexprs (not folded: a spec's types cannot hold them)")
                continue
        if not isinstance(ty, str):
            notes.append(f"{name} has type {ty!r} (not folded)")
            continue
        types.append((name, _symbolic(ty, (descriptors or {}).get(name))))
        hinted = any(a == "tt.divisibility" and b == 16 for a, b in attrs.get(name, []))
        if hinted:
            divisible.append(name)
        if ty.startswith("*") and not hinted and not p.get("do_not_specialize"):
            notes.append(f"pointer {name} was not 16-byte aligned at launch (check assumes aligned)")
        if _is_int(ty) and name in values:
            vals.append((name, int(values[name])))
    return tuple(types), tuple(consts), tuple(vals), tuple(divisible), tuple(notes)


def _live(record: Mapping[str, Any], meta: set[str]) -> LiveCompile:
    res = record.get("resources") or {}
    opts = record.get("options") or {}
    consts = record.get("constants") or {}
    return LiveCompile(
        meta=tuple((k, consts[k]) for k in sorted(meta) if k in consts),
        num_warps=opts.get("num_warps"), num_stages=opts.get("num_stages"),
        shared=res.get("shared"), n_regs=res.get("n_regs"), n_spills=res.get("n_spills"),
        target=res.get("target"), load_error=res.get("load_error"), hash=res.get("hash"),
    )


def _names(groups: Sequence[tuple]) -> list[str]:
    """Spec names that depend on the spec itself, so a later capture of the same launch shape
    replaces it and a different one is added: "captured" plus the non-meta constexprs; specs of
    one run that share those get what tells them apart (types, then == 1 / divisibility)."""
    base = ["captured" + (" " + ",".join(f"{k}={v}" for k, v in g[1]) if g[1] else "") for g in groups]
    names = []
    for i, (types, _consts, vals, divisible, _notes) in enumerate(groups):
        same = [g for g, b in zip(groups, base) if b == base[i]]
        parts = []
        if len(same) > 1:
            parts = [f"{k}={v}" for k, v in types if len({repr(dict(g[0]).get(k)) for g in same}) > 1]
            ones_of = [{n for n, v in g[2] if v == 1} for g in same]
            own_ones = {n for n, v in vals if v == 1}
            parts += [f"{n}{'==' if n in own_ones else '!='}1"
                      for n in sorted(set.union(*ones_of) - set.intersection(*ones_of))]
            div_of = [set(g[3]) for g in same]
            parts += [f"{n}%16{'==' if n in divisible else '!='}0"
                      for n in sorted(set.union(*div_of) - set.intersection(*div_of))]
        names.append(base[i] + (" " + ",".join(parts) if parts else ""))
    counts = {n: names.count(n) for n in names}
    names = [f"{n} #{i + 1}" if counts[n] > 1 else n for i, n in enumerate(names)]
    return names


def fold(records: Iterable[Mapping[str, Any]], root: Path) -> CaptureResult:
    """Launch specs per autotuned kernel under ``root`` from the raw records."""
    records = list(records)
    tuned: dict[tuple[str, str], dict] = {}
    for r in records:
        if r.get("event") != "autotune":
            continue
        k = (r["kernel"].get("file"), r["kernel"].get("qualname"))
        entry = tuned.setdefault(k, {"kernel": r["kernel"], "keys": tuple(r.get("keys") or ()), "meta": [],
                                     "key_values": [], "dtypes": []})
        entry["meta"] += [m for m in r.get("meta_params") or () if m not in entry["meta"]]
        kv = tuple((name, value) for name, value in (r.get("key_values") or {}).items())
        if kv not in entry["key_values"]:
            entry["key_values"].append(kv)
        dt = tuple(r.get("dtypes") or ())
        if dt not in entry["dtypes"]:
            entry["dtypes"].append(dt)
    kernels, skipped = [], []
    for k, entry in tuned.items():
        file, name = entry["kernel"].get("file"), entry["kernel"].get("name")
        rel = _relative(file, root)
        if rel is None:
            skipped.append(f"{file}::{name}: outside the root {root} (pass --root to include it)")
            continue
        meta = set(entry["meta"])
        groups: dict[tuple, list] = {}
        compiles = [r for r in records if r.get("event") == "compile" and r.get("autotuned")
                    and (r["kernel"].get("file"), r["kernel"].get("qualname")) == k]
        descriptors = descriptor_dims(compiles, entry["meta"])
        for r in compiles:
            facts = _spec_facts(r, meta, descriptors)
            identity = (facts[0], facts[1], facts[3], tuple(n for n, v in facts[2] if v == 1))
            live = groups.setdefault(identity, [facts, []])[1]
            if _live(r, meta) not in live:  # a config compiled again (another process) is one compile
                live.append(_live(r, meta))
        ordered = list(groups.values())
        names = _names([facts for facts, _ in ordered])
        specs = tuple(
            CapturedSpec(name=n, types=facts[0], constexprs=facts[1], values=facts[2], divisible_by_16=facts[3],
                         compiles=tuple(live), notes=facts[4])
            for n, (facts, live) in zip(names, ordered)
        )
        if not specs:
            skipped.append(f"{rel}::{name}: launched but never compiled in this process (no specialization seen)")
            continue
        kernels.append(KernelCapture(ident=f"{rel}::{name}", file=file, keys=entry["keys"],
                                     key_values=tuple(entry["key_values"]), dtypes=tuple(entry["dtypes"]),
                                     specs=specs))
    sessions = [r for r in records if r.get("event") == "session"]
    triton = next((s.get("triton") for s in sessions if s.get("triton")), None)
    targets = tuple(sorted({s["target"] for s in sessions if s.get("target")}))
    driver_error = next((s["driver_error"] for s in sessions if s.get("driver_error")), None)
    errors = tuple(f"{r.get('where')}: {r.get('error')}" for r in records if r.get("event") == "error")
    warnings = tuple("the program replaced Triton's jit_post_compile_hook: compiles after that were not seen"
                     for s in sessions if s.get("hook_replaced"))[:1]
    kernels.sort(key=lambda kc: kc.ident)
    return CaptureResult(tuple(kernels), tuple(skipped), triton, targets, driver_error, errors, warnings)
