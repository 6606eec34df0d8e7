"""How Triton treats an int parameter when it specializes a launch: which types are ints, and
which parameters the kernel exempts (``do_not_specialize``). Spec inference and the launch spec
both ask, so it lives below them."""

from __future__ import annotations

import re

from autotune_rewrite.model import AutotuneSite


def is_int_type(ty: str) -> bool:
    return bool(re.fullmatch(r"[iu](8|16|32|64)", ty))


def do_not_specialize(site: AutotuneSite) -> set[str]:
    """``do_not_specialize`` entries as names (Triton accepts names or indices)."""
    by_index = {str(p.index): p.name for p in site.params}
    return {by_index.get(str(d), str(d)) for d in site.do_not_specialize}


__all__ = ["do_not_specialize", "is_int_type"]
