"""``capture --from-tritonparse TRACE``: the same launch specs as a live capture, read from a
tritonparse trace (``tritonparse.structured_logging.init(folder)``; NDJSON, one file per process).

What the trace's records carry (tritonparse 0.6, read from its ``structured_logging.py`` and
checked on traces it wrote, on a CPU cross-compile and on an H200):

- ``compilation`` (always): ``metadata.src_constants`` and ``metadata.src_attrs``, keyed by
  parameter index path (``"(4,)"``), i.e. the constexprs and the ``tt.divisibility`` attrs exactly
  as the runtime specialized them (an int folded because it was 1 is in ``src_constants``);
  ``num_warps`` / ``num_stages`` / ``shared`` / ``hash``; the kernel's file (``python_source``) and
  the TTIR (``file_content``), whose ``tt.func`` line gives each non-constexpr parameter's type by
  name. It carries NO parameter types as such and NO int values.
- ``launch`` (only with ``TRITON_TRACE_LAUNCH=1`` / ``init(enable_trace_launch=True)``): every
  argument of the launch (``extracted_args``: tensor dtype and data_ptr, int / float / bool values,
  constexprs) and ``compilation_metadata.hash``, which ties it to its compile.

So a trace with launch events gives exactly what capture gives. A trace without them gives the
exact specialization but no int values: such an int is written with a value that stands for its
specialization class (16 when the runtime marked it divisible by 16, 17 otherwise) and the
spec says so in a note. Nothing here imports tritonparse or Triton: the trace is plain JSON.
"""

from __future__ import annotations

import ast
import gzip
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from autotune_rewrite.spec.runtime_types import int_type
from autotune_rewrite.errors import UserError
from autotune_rewrite.model import AutotuneSite

# MLIR element types in a TTIR signature -> Triton's signature names (``triton/language/core.py``)
_ELEMENT = {
    "i1": "i1", "i8": "i8", "i16": "i16", "i32": "i32", "i64": "i64",
    "f16": "fp16", "bf16": "bf16", "f32": "fp32", "f64": "fp64",
    "f8E4M3FN": "fp8e4nv", "f8E5M2": "fp8e5", "f8E4M3FNUZ": "fp8e4b8", "f8E5M2FNUZ": "fp8e5b16",
    "f8E4M3B11FNUZ": "fp8e4b15",
}
# torch dtypes as a launch record writes them -> Triton's pointer element names (``runtime/jit.py``)
_TORCH = {
    "torch.bool": "i1", "torch.int8": "i8", "torch.int16": "i16", "torch.int32": "i32", "torch.int64": "i64",
    "torch.uint8": "u8", "torch.float16": "fp16", "torch.bfloat16": "bf16", "torch.float32": "fp32",
    "torch.float64": "fp64", "torch.float8_e4m3fn": "fp8e4nv", "torch.float8_e5m2": "fp8e5",
    "torch.float8_e4m3fnuz": "fp8e4b8", "torch.float8_e5m2fnuz": "fp8e5b16",
}
_TL_DTYPE = re.compile(r"^triton\.language\.core\.dtype\('([^']+)'\)$")
_INTS = ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")
SUFFIXES = (".ndjson", ".ndjson.gz", ".json", ".jsonl", ".gz")


def trace_files(path: Path) -> list[Path]:
    """``path`` itself, or the trace files in a tritonparse trace folder (one per process)."""
    if path.is_file():
        return [path]
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith(SUFFIXES))
        if files:
            return files
        raise UserError(f"--from-tritonparse {path}: no .ndjson or .ndjson.gz trace file in that folder")
    raise UserError(f"--from-tritonparse {path}: no such file or folder")


def read_events(path: Path) -> list[dict]:
    """Every JSON record of the trace (lines that are not JSON objects are skipped: a torn last line)."""
    events = []
    for file in trace_files(path):
        if file.name.endswith((".zst", ".bin.ndjson")):
            raise UserError(f"{file}: compressed with zstd/CLP; decompress it with tritonparse's tools first")
        try:
            raw = file.read_bytes()
            text = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8", errors="replace")
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            raise UserError(f"{file}: cannot read the trace ({exc})") from None
        for line in text.splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict):
                events.append(record)
    return events


def _split_top(text: str) -> list[str]:
    """``text`` split at commas outside (), <>, {} and quotes."""
    parts, depth, quoted, start = [], 0, False, 0
    for i, ch in enumerate(text):
        if ch == '"':
            quoted = not quoted
        elif quoted:
            continue
        elif ch in "(<{[":
            depth += 1
        elif ch in ")>}]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _mlir_type(ty: str) -> str | None:
    ty = ty.strip()
    if ty in _ELEMENT:
        return _ELEMENT[ty]
    m = re.fullmatch(r"!tt\.ptr<([^,>]+)(?:,\s*\d+)?>", ty)
    if m and m.group(1).strip() in _ELEMENT:
        return "*" + _ELEMENT[m.group(1).strip()]
    m = re.fullmatch(r"!tt\.tensordesc<tensor<([\dx]+)x([A-Za-z0-9]+)(?:,.*)?>>", ty)
    if m and m.group(2) in _ELEMENT:
        return f"tensordesc<{_ELEMENT[m.group(2)]}[{', '.join(m.group(1).split('x'))}]>"
    return None


def ttir_signature(ttir: str, name: str) -> dict[str, str]:
    """The types of the kernel's TTIR arguments by parameter name (Triton 3.4+ names them)."""
    head = f"tt.func public @{name}("
    at = ttir.find(head)
    if at < 0:
        return {}
    body, depth, i = "", 1, at + len(head)
    while i < len(ttir) and depth:
        ch = ttir[i]
        depth += (ch == "(") - (ch == ")")
        body += ch if depth else ""
        i += 1
    out = {}
    for arg in _split_top(body):
        m = re.match(r"%([\w.]+):\s*(.+?)(?:\s*\{[^{}]*\})?(?:\s+loc\(.*\))?$", arg, re.S)
        if m and not m.group(1).isdigit() and not m.group(1).startswith("arg"):
            ty = _mlir_type(m.group(2))
            if ty is not None:
                out[m.group(1)] = ty
    return out


def _plain(value: Any) -> Any:
    """A constexpr as capture's hooks write it: ``tl.float32`` -> ``"fp32"``."""
    if isinstance(value, str):
        m = _TL_DTYPE.match(value)
        return m.group(1) if m else value
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _by_name(keyed: Mapping[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """``{"(4,)": v}`` -> ``{"stride": v}`` (a tuple element keeps its path, as capture does)."""
    out = {}
    for key, value in (keyed or {}).items():
        try:
            path = ast.literal_eval(key)
        except (ValueError, SyntaxError):
            continue
        path = path if isinstance(path, tuple) else (path,)
        if len(path) == 1 and isinstance(path[0], int) and path[0] < len(names):
            out[names[path[0]]] = value
        else:
            out[".".join(str(p) for p in path)] = value
    return out


def _arg_type(info: Mapping[str, Any]) -> str | None:
    """A launch record's argument -> its signature type, as Triton's binder would give it."""
    kind = info.get("type")
    if kind == "tensor":
        ty = _TORCH.get(str(info.get("dtype")))
        return "*" + ty if ty else None
    if kind == "bool":
        return "i1"
    if kind == "int":
        v = info.get("value")
        return int_type(v) if isinstance(v, int) else "i64"
    if kind == "float":
        return "fp32"
    return None


def locate(file: str | None, root: Path, known: Iterable[str]) -> str | None:
    """The absolute path under ``root`` of a traced kernel file: itself when it lies under the root,
    else the root's file sharing the longest path suffix (a trace written on another machine)."""
    if not file:
        return None
    real_root = os.path.realpath(root)
    if os.path.realpath(file).startswith(real_root + os.sep):
        return file
    parts = Path(file).parts
    best, length = None, 0
    for rel in known:
        rp = Path(rel).parts
        n = 0
        while n < min(len(rp), len(parts)) and rp[-1 - n] == parts[-1 - n]:
            n += 1
        if n == len(rp) and n > length:  # the whole relative path must match
            best, length = str(Path(root) / rel), n
    return best


def records_from_trace(events: Sequence[Mapping[str, Any]], root: Path,
                       sites: Sequence[AutotuneSite]) -> tuple[list[dict], list[str]]:
    """Capture's ``autotune`` / ``compile`` / ``session`` records from a trace, for the autotuned
    kernels among ``sites``; and the compiles left out, with the reason."""
    from autotune_rewrite.spec.launch_spec import meta_params

    by_kernel = {(os.path.realpath(Path(root) / (s.kernel_path or s.path)), s.kernel): s for s in sites}
    known = sorted({s.kernel_path or s.path for s in sites})
    launches: dict[str, list[Mapping]] = {}
    for e in events:
        if e.get("event_type") == "launch":
            h = (e.get("compilation_metadata") or {}).get("hash")
            launches.setdefault(h, []).append(e)
    out: list[dict] = []
    left_out: list[str] = []
    keys_seen: dict[tuple, list] = {}
    triton = None
    for e in events:
        if e.get("event_type") != "compilation":
            continue
        payload = e.get("payload") or {}
        meta = payload.get("metadata") or {}
        name = meta.get("name")
        file = locate((payload.get("python_source") or {}).get("file_path"), root, known)
        site = by_kernel.get((os.path.realpath(file), name)) if file else None
        if site is None:
            where = (payload.get("python_source") or {}).get("file_path")
            left_out.append(f"{where}::{name}: " + ("not an autotuned kernel" if file else
                            f"outside the root {root} (pass --root to include it)"))
            continue
        triton = triton or meta.get("triton_version")
        mine = launches.get(meta.get("hash"), [])
        out.append(_compile_record(payload, site, file, mine))
        seen = keys_seen.setdefault((file, name), [site])
        for launch in mine:
            la = launch.get("extracted_args") or {}
            kv = {k: la[k].get("value") for k in site.key or () if k in la and "value" in la[k]}
            dtypes = [str(v.get("dtype")) for v in la.values() if isinstance(v, Mapping) and v.get("type") == "tensor"]
            if (kv, dtypes) not in seen[1:]:
                seen.append((kv, dtypes))
    tuned = []
    for (file, name), (site, *seen) in keys_seen.items():
        for kv, dtypes in seen or [({}, [])]:
            tuned.append({"event": "autotune", "kernel": {"file": file, "name": name, "qualname": name},
                          "keys": list(site.key or ()), "key_values": kv, "dtypes": dtypes,
                          "meta_params": list(meta_params(site)), "configs": len(site.configs or ())})
    out = tuned + out
    out.append({"event": "session", "triton": triton})
    return out, left_out


def _compile_record(payload: Mapping[str, Any], site: AutotuneSite, file: str, mine: Sequence[Mapping]) -> dict:
    """One ``compilation`` record (and the launch records of that compile) as capture's ``compile`` record."""
    meta = payload.get("metadata") or {}
    name = meta.get("name")
    names = [p.name for p in site.params]
    constants = {k: _plain(v) for k, v in _by_name(meta.get("src_constants"), names).items()}
    attrs = _by_name(meta.get("src_attrs"), names)
    ttir = next((v for k, v in (payload.get("file_content") or {}).items() if k.endswith(".ttir")), "")
    types = ttir_signature(ttir, name)
    args = (mine[0].get("extracted_args") or {}) if mine else {}
    signature, values, notes = {}, {}, []
    for p in site.params:
        if p.name in constants:
            signature[p.name] = "constexpr"
            continue
        ty = types.get(p.name) or _arg_type(args.get(p.name, {}))
        if ty is None:
            notes.append(f"{p.name}: no type in the trace (no TTIR, no launch record)")
            continue
        signature[p.name] = ty
    for p in site.params:
        ty = signature.get(p.name)
        if ty not in _INTS or p.name in site.do_not_specialize:  # i1 (bools) is no int: not specialized
            continue
        if args.get(p.name, {}).get("type") == "int":
            values[p.name] = args[p.name]["value"]
        else:  # a value that compiles the same specialization, said as such
            div = ["tt.divisibility", 16] in (attrs.get(p.name) or [])
            values[p.name] = 16 if div else 17
            notes.append(f"{p.name} = {values[p.name]} stands for the runtime's specialization "
                         f"({p.name} % 16 {'==' if div else '!='} 0, != 1): the trace has no launch records "
                         "with its value (trace with TRITON_TRACE_LAUNCH=1)")
    target = meta.get("target") or {}
    return {
        "event": "compile", "kernel": {"file": file, "name": name, "qualname": name}, "autotuned": True,
        "params": [{"name": p.name, "constexpr": p.is_constexpr, "annotation": p.annotation,
                    "do_not_specialize": p.name in site.do_not_specialize} for p in site.params],
        "signature": signature, "constants": constants,
        "attrs": {k: [list(a) for a in v] for k, v in attrs.items()}, "values": values,
        "options": {k: meta.get(k) for k in ("num_warps", "num_stages", "num_ctas")},
        "resources": {"shared": meta.get("shared"), "hash": meta.get("hash"),
                      "target": f"{target.get('backend', '?')}:{target.get('arch', '?')}"},
        "notes": notes,
    }
