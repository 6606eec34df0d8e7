"""Triton's spelling of a parameter type (``*bf16``, ``i32``, ``constexpr``).

Shared by the settings loader (which checks the ``types`` of a launch spec as it reads them) and
the launch-spec resolver (which reads annotations); it imports nothing of ours, so settings can
depend on it without a cycle.
"""

from __future__ import annotations

import re

# Triton's canonical spellings; anything else goes through Triton's own alias table.
_CANONICAL = re.compile(r"(u1|[iu](8|16|32|64)|fp(16|32|64)|bf16|fp8e4nv|fp8e5|fp8e4b15|fp8e4b8|fp8e5b16)")


def _canonical_types() -> dict[str, str]:
    # Triton's own table, so "*bfloat16", "int32" and "float" mean what they mean to Triton.
    # Imported only for aliases: a warm-cache run with canonical types never imports triton.
    from triton._utils import type_canonicalisation_dict

    return dict(type_canonicalisation_dict)


def normalize_type(text: str) -> str | None:
    """Triton's spelling of a type (``*bf16``, ``i32``, ``constexpr``), or None if not a type."""
    ty = text.strip().strip("'\"").strip()
    for prefix in ("triton.language.", "tl."):
        ty = ty.replace(prefix, "")
    if ty == "constexpr":
        return "constexpr"
    pointer = ""
    if ty.startswith("const "):
        ty, pointer = ty[len("const "):].strip(), "*k"
    if ty.startswith("*k"):
        ty, pointer = ty[2:], "*k"
    elif ty.startswith("*"):
        ty, pointer = ty[1:], "*"
    elif ty.endswith("*"):
        ty, pointer = ty[:-1], "*"
    if pointer == "*k" and ty.startswith("*"):
        ty = ty[1:]
    if _CANONICAL.fullmatch(ty):
        return pointer + ty
    canon = _canonical_types()
    ty = canon.get(ty.replace("_t", ""), canon.get(ty))
    if ty is None or (pointer and ty == "void"):
        return None
    return pointer + ty


__all__ = ["normalize_type"]
