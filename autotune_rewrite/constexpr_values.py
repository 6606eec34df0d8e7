"""Constexpr values TOML cannot hold directly: ``None`` and dtypes (``tl.bfloat16``, ``torch.float16``).

A launch spec's ``constexprs`` table holds TOML scalars. Two kinds of value a Triton launch passes
have no TOML form, so they are spelled as strings, read here into typed values and written back
the same way (``spelling``):

- ``"None"``: the argument is ``None``. Triton 3.6 makes every ``None`` argument a constexpr
  (``native_specialize_impl`` returns ``("constexpr", None)``), so this also works for a parameter
  that is not annotated ``tl.constexpr`` (an optional pointer such as ``bias_ptr``).
- ``"tl.X"`` / ``"triton.language.X"`` (a ``tl.dtype`` attribute, e.g. ``tl.float32``) and
  ``"torch.X"`` (a torch dtype, e.g. ``torch.float16``): a ``DtypeRef``, turned into the object the
  launch passes only inside the compile (``runtime_value``), so jobs stay hashable and the main
  process never imports torch.

Mirrors ``triton/runtime/jit.py`` (3.6.0) exactly: a constexpr argument goes to the compiler as it
was passed (the binder emits ``("constexpr", value)`` without conversion; only ``warmup`` wraps a
torch dtype, and then as a mock *tensor*). So ``torch.float16`` stays a torch dtype: comparing it
compiles, using it as a Triton dtype (``tl.zeros(..., dtype=ACC)``, ``x.to(ACC)``) fails to
compile, at launch as here. Any other string stays a string (``ACTIVATION = "gelu"`` is a real
constexpr value).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

NONE = "None"
_TL_PREFIXES = ("triton.language.", "tl.")
# torch's dtype attributes (torch 2.x); read without importing torch, which takes seconds.
_TORCH_DTYPES = frozenset("""
bfloat16 bool cdouble cfloat chalf complex128 complex32 complex64 double float float16 float32
float4_e2m1fn_x2 float64 float8_e4m3fn float8_e4m3fnuz float8_e5m2 float8_e5m2fnuz float8_e8m0fnu
half int int1 int16 int2 int3 int32 int4 int5 int6 int64 int7 int8 long qint32 qint8 quint2x4
quint4x2 quint8 short uint1 uint16 uint2 uint3 uint32 uint4 uint5 uint6 uint64 uint7 uint8
""".split())


@dataclass(frozen=True)
class DtypeRef:
    """A dtype passed as a constexpr, by the name the launch code writes it with."""

    module: str  # "tl" (triton.language) or "torch"
    name: str  # the attribute: "bfloat16", "float16"

    @property
    def spelling(self) -> str:
        return f"{self.module}.{self.name}"

    def __repr__(self) -> str:  # part of the compile cache key: keep it short and stable
        return self.spelling


def _tl_dtype_names() -> list[str]:
    import triton.language as tl  # only when a spec names a tl dtype

    return sorted(a for a in dir(tl) if isinstance(getattr(tl, a), tl.dtype) and not isinstance(getattr(tl, a), tl.pointer_type))


def _close(name: str, known) -> str:
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def read_constexpr(value: Any) -> Any:
    """The typed value of one ``constexprs`` entry; ``ValueError`` (the problem in words) for a
    string that names a dtype Triton or torch does not have."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if text == NONE:
        return None
    if text.lower() in ("none", "null", "nil"):
        raise ValueError(f"= {value!r}: write \"None\" for a None argument")
    for prefix in _TL_PREFIXES:
        if text.startswith(prefix):
            name = text[len(prefix):]
            names = _tl_dtype_names()
            if name not in names:
                raise ValueError(f"= {value!r}: triton.language has no dtype {name!r}{_close(name, names)}")
            return DtypeRef("tl", name)
    if text.startswith("torch."):
        name = text[len("torch."):]
        if name not in _TORCH_DTYPES:
            raise ValueError(f"= {value!r}: torch has no dtype {name!r}{_close(name, _TORCH_DTYPES)}")
        return DtypeRef("torch", name)
    return value


def spelling(value: Any) -> Any:
    """The TOML value that ``read_constexpr`` reads back as ``value``."""
    if value is None:
        return NONE
    if isinstance(value, DtypeRef):
        return value.spelling
    return value


def from_runtime(text: str) -> DtypeRef | None:
    """The ``DtypeRef`` for a dtype's ``str()`` as Triton's hooks see it: ``"fp32"`` (a
    ``tl.dtype``, which prints its Triton name) or ``"torch.float16"``; None when not a dtype.
    No Triton import: ``triton.language`` names each dtype ``float*`` / ``bfloat16`` / ``int*``
    after its Triton name (``fp8e4nv`` is ``tl.float8e4nv``), as 3.3-3.6 define them."""
    if text.startswith("torch."):
        name = text[len("torch."):]
        return DtypeRef("torch", name) if name in _TORCH_DTYPES else None
    if text == "bf16":
        return DtypeRef("tl", "bfloat16")
    if text.startswith("fp") and text[2:3].isdigit():
        return DtypeRef("tl", "float" + text[2:])
    if text in ("void", "int1") or (text.startswith(("int", "uint")) and text.lstrip("uint")[:1].isdigit()):
        return DtypeRef("tl", text)
    return None


def runtime_value(value: Any) -> Any:
    """What the launch hands the compiler for a spec value (inside the compile process only)."""
    if not isinstance(value, DtypeRef):
        return value
    if value.module == "tl":
        import triton.language as tl

        return getattr(tl, value.name)
    try:
        import torch
    except ImportError:
        raise RuntimeError(f"a {value.spelling} constexpr is a torch dtype, and torch is not installed here") from None
    return getattr(torch, value.name)


__all__ = ["DtypeRef", "NONE", "from_runtime", "read_constexpr", "runtime_value", "spelling"]
