"""Triton's spelling of a parameter type (``*bf16``, ``i32``, ``constexpr``, tuples, tensor descriptors).

Shared by the settings loader (which checks the ``types`` of a launch spec as it reads them) and
the launch-spec resolver (which reads annotations); it imports nothing of ours, so settings can
depend on it without a cycle.

Besides scalars and pointers, Triton 3.x launches take two composite kinds, spelled here as
Triton's own ``native_specialize_impl`` spells them, so a captured signature and a hand-written
spec compare equal:

- a tensor descriptor (``triton.tools.tensor_descriptor.TensorDescriptor``):
  ``tensordesc<bf16[64, 64]>`` (element type, block shape; the Gluon layout suffix is not taken);
  a dimension may name a config meta-parameter or constexpr (``tensordesc<bf16[BM, BK]>``), for
  kernels whose autotuner ``pre_hook`` sets the descriptor's block shape per config;
- a tuple argument: ``(*fp16, i32)``, nested ``(*fp16, (i32, i64))``, one element ``(*fp16,)``.
  ``triton.compile`` wants a Python tuple there: ``signature_value`` builds it.
"""

from __future__ import annotations

import re

# Triton's canonical spellings; anything else goes through Triton's own alias table.
_CANONICAL = re.compile(r"(u1|[iu](8|16|32|64)|fp(16|32|64)|bf16|fp8e4nv|fp8e5|fp8e4b15|fp8e4b8|fp8e5b16)")
_TENSORDESC = re.compile(r"tensordesc\s*<\s*([^\[\]<>]+?)\s*\[\s*(\w+(?:\s*,\s*\w+)*)\s*\]\s*>")
_DIMS = re.compile(r"(tensordesc<[^\[]*\[)([^\]]*)(\]>)")


def _canonical_types() -> dict[str, str]:
    # Triton's own table, so "*bfloat16", "int32" and "float" mean what they mean to Triton.
    # Imported only for aliases: a warm-cache run with canonical types never imports triton.
    from triton._utils import type_canonicalisation_dict

    return dict(type_canonicalisation_dict)


def _split_tuple(text: str) -> list[str] | None:
    """The top-level elements of ``(a, (b, c))``, or None when ``text`` is not one tuple."""
    if not (text.startswith("(") and text.endswith(")")):
        return None
    inner, parts, depth, start = text[1:-1], [], 0, 0
    for i, ch in enumerate(inner):
        if ch in "(<[":
            depth += 1
        elif ch in ")>]":
            depth -= 1
            if depth < 0:
                return None
        elif ch == "," and depth == 0:
            parts.append(inner[start:i])
            start = i + 1
    if depth:
        return None
    tail = inner[start:]
    if tail.strip():
        parts.append(tail)
    elif not parts:
        return None  # "()": Triton has no empty tuple argument
    return [p.strip() for p in parts]


def _tuple_type(elements: list[str]) -> str | None:
    out = []
    for element in elements:
        ty = normalize_type(element)
        if ty is None or ty == "constexpr":
            return None  # a constexpr inside a tuple needs a value a type table cannot carry
        out.append(ty)
    return "(" + ", ".join(out) + ("," if len(out) == 1 else "") + ")"


def _tensordesc(match: re.Match) -> str | None:
    element = normalize_type(match.group(1))
    if element is None or element.startswith(("*", "(", "tensordesc")) or element == "constexpr":
        return None
    dims = [d.strip() for d in match.group(2).split(",")]
    if any(not (d.isdigit() or d.isidentifier()) for d in dims):
        return None
    dims = [str(int(d)) if d.isdigit() else d for d in dims]
    return f"tensordesc<{element}[{', '.join(dims)}]>"  # Triton writes list(block_shape)


def normalize_type(text: str) -> str | None:
    """Triton's spelling of a type (``*bf16``, ``i32``, ``constexpr``, ``(*fp16, i32)``,
    ``tensordesc<bf16[64, 64]>``), or None if not a type."""
    ty = text.strip().strip("'\"").strip()
    for prefix in ("triton.language.", "tl."):
        ty = ty.replace(prefix, "")
    if ty == "constexpr":
        return "constexpr"
    elements = _split_tuple(ty)
    if elements is not None:
        return _tuple_type(elements)
    desc = _TENSORDESC.fullmatch(ty)
    if desc is not None:
        return _tensordesc(desc)
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
    if not re.fullmatch(r"\w+", ty):
        return None
    canon = _canonical_types()
    ty = canon.get(ty.replace("_t", ""), canon.get(ty))
    if ty is None or (pointer and ty == "void"):
        return None
    return pointer + ty


def bind_dims(ty: str, values) -> str:
    """``ty`` with each tensor-descriptor block dimension that names a value (``BM`` in
    ``tensordesc<bf16[BM, BK]>``) replaced by it: an autotuner ``pre_hook`` sets the host
    descriptor's block shape from the config, so the type depends on the config being compiled."""
    def dims(match: re.Match) -> str:
        bound = [str(values.get(d.strip(), d.strip())) for d in match.group(2).split(",")]
        return match.group(1) + ", ".join(bound) + match.group(3)

    return _DIMS.sub(dims, ty) if "tensordesc" in ty else ty


def is_tuple_type(ty: str) -> bool:
    return ty.startswith("(")


def signature_value(ty: str):
    """What ``triton.compile``'s signature holds for ``ty``: the string, or nested tuples of them."""
    elements = _split_tuple(ty)
    return ty if elements is None else tuple(signature_value(e) for e in elements)


def tuple_text(value) -> str | None:
    """The spelling of a tuple signature as JSON holds it (nested lists of strings), or None
    when it holds something a spec's ``types`` cannot (a constexpr element)."""
    if isinstance(value, (list, tuple)):
        parts = [tuple_text(v) for v in value]
        if not parts or any(p is None for p in parts):
            return None
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
    return value if isinstance(value, str) and value != "constexpr" else None


def pointer_paths(ty: str, path: tuple[int, ...] = ()) -> list[tuple[int, ...]]:
    """Index paths (below the parameter's own index) of the pointers in ``ty``: ``[()]`` for a
    pointer, ``[(0,), (2, 1)]`` for ``(*fp16, i32, (i32, *bf16))``."""
    elements = _split_tuple(ty)
    if elements is None:
        return [path] if ty.startswith("*") else []
    return [p for i, e in enumerate(elements) for p in pointer_paths(e, path + (i,))]


__all__ = ["bind_dims", "is_tuple_type", "normalize_type", "pointer_paths", "signature_value", "tuple_text"]
