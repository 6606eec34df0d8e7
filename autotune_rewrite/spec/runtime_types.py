"""The runtime's Triton types of Python values and annotations: what ``JITFunction`` would make of
an int, a float or a bool at the launch, an annotation's type, a torch dtype's Triton name."""

from __future__ import annotations

from typing import Any

from autotune_rewrite.model import KernelParam
from autotune_rewrite.triton_types import normalize_type


def int_type(value: int) -> str:
    """The runtime's type for a Python int (``native_specialize_impl``)."""
    if -(2**31) <= value < 2**31:
        return "i32"
    if -(2**63) <= value < 2**63:
        return "i64"
    return "u64"


def value_type(value: Any) -> str | None:
    if isinstance(value, bool):
        return "u1"
    if isinstance(value, int):
        return int_type(value)
    if isinstance(value, float):
        return "fp32"
    return None


def annotation_type(param: KernelParam) -> str | None:
    """The type an annotation pins (Triton's ``KernelParam.annotation_type``), else None."""
    if param.annotation is None or param.is_constexpr:
        return None
    ty = normalize_type(param.annotation)
    return None if ty in (None, "constexpr") else ty


def triton_dtype(torch_name: str) -> str | None:
    """``float32`` -> ``fp32``, with Triton's own table (``triton._utils``)."""
    from triton._utils import type_canonicalisation_dict

    return type_canonicalisation_dict.get(torch_name)


__all__ = ["annotation_type", "int_type", "triton_dtype", "value_type"]
