"""Config lists several kernels read: every reader decided first, then each list edited once.

A written list (a module constant, a helper's comprehension) that several kernels read, or one
kernel's per-target branches, is one list: deleting a config deletes it for every reader. So
``diff`` decides every reader first (``variants.decide``), then, per config of the list:

* one every reader drops (no reader can launch it on any of its targets) goes, in one edit;
* one some reader keeps stays in the list, and each reader that cannot launch it prunes it for
  itself with its device-aware guard, on every one of its targets (``Guarded.kept_for``).

A reader this run does not decide (a kernel not judged, or outside ``--kernel``) keeps every
config it reads: what it sees must not change. Pure: decisions and sites in, facts out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from autotune_rewrite.model import AutotuneSite
from autotune_rewrite.rewrite.decision import Decision, source_key
from autotune_rewrite.rewrite.facts import Keeper
from autotune_rewrite.rewrite.inplace import User

# A decision's group: the site's ident and, for a kernel whose configs are chosen per target,
# the targets of its branch (``AutotuneSite.view_targets``; () otherwise).
Group = tuple[str, tuple[str, ...]]


def readers(sites: Sequence[AutotuneSite], decisions: Mapping[Group, Decision]) -> tuple[tuple[Group, User], ...]:
    """Every reader of config lists (a site, or one target branch of a site) with what its own
    decision drops from them (nothing when it is not decided in this run)."""
    out = []
    for s in sites:
        entries = [((s.ident, ()), s.ident, s.configs)] if not s.configs_by_target else [
            ((s.ident, tuple(e.targets)), f"{s.ident} on {', '.join(e.targets)}", e.configs)
            for e in s.configs_by_target]
        for group, name, configs in entries:
            if not configs:
                continue
            d = decisions.get(group)
            drops = frozenset(source_key(x.config, s.path) for x in d.dropped) if d is not None else frozenset()
            out.append((group, User(name, tuple(configs), drops, s.path, d is not None, s.span)))
    return tuple(out)


def others(group: Group, everyone: Sequence[tuple[Group, User]]) -> tuple[User, ...]:
    """The readers other than ``group``: the other sites, and this site's branches for other targets."""
    ident, mine = group[0], set(group[1])
    return tuple(u for (i, targets), u in everyone if i != ident or (mine and not mine & set(targets)))


def kept_elsewhere(group: Group, everyone: Sequence[tuple[Group, User]]) -> dict[tuple, Keeper]:
    """The configs (``source_key``) another reader keeps, each with the first such reader
    (``Guarded.kept_for``)."""
    out: dict[tuple, Keeper] = {}
    for u in others(group, everyone):
        for c in u.configs:
            key = source_key(c, u.site_path)
            if key not in u.drops:
                out.setdefault(key, Keeper(u.name, u.decided))
    return out


__all__ = ["Group", "kept_elsewhere", "others", "readers"]
