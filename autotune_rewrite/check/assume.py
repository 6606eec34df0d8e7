"""The ``assume`` table a run resolves its launch specs with, and its typos.

``assume_table`` lays ``--assume`` over the settings' ``assume`` table (and says where the values
came from); ``unused_assume_names`` warns about a name no checked kernel has. Separate from the
pipeline (``check``) because both read only the settings and the scan, not the compiles."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from autotune_rewrite.model import AutotuneSite
from autotune_rewrite.settings import Settings


def assume_table(settings: Settings, given: Sequence[tuple[str, Any]]) -> tuple[dict[str, tuple], str]:
    """The ``assume`` values by parameter name: ``--assume`` over the settings' table. Each value
    is a tuple of cases (a list in the settings is a sweep)."""
    table = {name: value if isinstance(value, tuple) else (value,) for name, value in settings.assume}
    for name, value in given:
        table[name] = value if isinstance(value, tuple) else (value,)
    origin = settings.where().file if settings.assume else "--assume"
    if settings.assume and given:
        origin = f"{origin} / --assume"
    return table, origin or "--assume"


def unused_assume_names(table: dict[str, tuple], sites: Sequence[AutotuneSite]) -> tuple[str, ...]:
    """A warning per ``assume`` name that no checked kernel has (a typo, or a renamed parameter)."""
    if not table:
        return ()
    from difflib import get_close_matches

    from autotune_rewrite.evaluate import free_names

    # A kernel parameter, or a name of the code that launches one (``K`` in ``BK = min(K, 64)``).
    have = sorted({p.name for s in sites for p in s.params}
                  | {n for s in sites for launch in s.launches for f in launch.arguments for n in free_names(f.expr)})
    out = []
    for name in table:
        if name not in have:
            close = get_close_matches(name, have, n=1)
            out.append(f"assume {name}: no checked kernel has a parameter of that name, nor uses it at a launch"
                       + (f"; did you mean {close[0]!r}?" if close else ""))
    return tuple(out)


__all__ = ["assume_table", "unused_assume_names"]
