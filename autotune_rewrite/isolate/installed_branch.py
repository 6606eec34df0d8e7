"""Which of a module-level name's bindings the installed Triton takes.

Kernel modules bind a Triton function by version (``if Version(triton.__version__) > ...:
rsqrt = tl.math.rsqrt / else: rsqrt = tl.libdevice.rsqrt``, or a ``try``/``except`` around the
import). Run on the installed Triton, the module takes the branch that works there, so the
bundle does too: the last binding in source order, unless it names a Triton attribute the
installed Triton does not have, then the last one that does. The condition itself is not
evaluated: whatever it tests, a branch naming an absent API would fail on this Triton.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst
from libcst.metadata import Assignment

from autotune_rewrite.isolate.loader_syntax import dotted
from autotune_rewrite.triton_names import installed_has


def _triton_names(mod, value) -> list[str]:
    """The Triton names a dotted attribute ``value`` (``tl.math.rsqrt``) stands for; [] otherwise."""
    text = dotted(value) if isinstance(value, cst.Attribute) else ""
    names = {q.name for q in mod.global_scope.get_qualified_names_for(text)} if "." in text else set()
    return [n for n in names if n.split(".")[0] == "triton"]


def _installed(names: list[str]) -> bool:
    return any(installed_has(*n.rsplit(".", 1)) for n in names)


def on_installed_triton(mod, assignment, statement) -> bool:
    """False when the binding is ``name = <a dotted Triton attribute>`` the installed Triton lacks."""
    if not isinstance(assignment, Assignment):
        return True
    stmt = statement(mod, assignment.node)
    names = _triton_names(mod, stmt.value) if isinstance(stmt, (cst.Assign, cst.AnnAssign)) else []
    return not names or _installed(names)


def installed_attribute(mod, value) -> bool:
    """``value`` is a dotted Triton attribute the installed Triton has (``tl.math.rsqrt``): a
    module-level binding of it is copied into the bundle as written."""
    names = _triton_names(mod, value)
    return bool(names) and _installed(names)


def taken(mod, candidates: Sequence, statement, order) -> object:
    """The binding the installed Triton takes among ``candidates`` (see the module docstring)."""
    latest = sorted(candidates, key=order, reverse=True)
    if len(latest) == 1:
        return latest[0]
    return next((a for a in latest if on_installed_triton(mod, a, statement)), latest[0])


__all__ = ["installed_attribute", "on_installed_triton", "taken"]
