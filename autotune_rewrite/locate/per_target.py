"""Configs resolved per (site, target): the step that answers device queries as each target would.

The per-file pass evaluates ``configs=`` without a target; an expression that asks the device
or the environment (``device.TargetQuery``) is left to the linking pass, which knows the run's
targets (``arch`` / ``--arch``) and environment (``env`` / ``--env``). There it is evaluated once
with only the environment answered: when that suffices the configs are the same on every
target. Otherwise it is evaluated once per target, and the targets that see the same configs
share one ``TargetConfigs`` entry, with the queries and branches that decided it. Never the
union of two branches.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from autotune_rewrite.evaluate import DEFAULT_ANSWERS, Answers, Evaluator, Pending, Unresolved, evaluate, to_configs
from autotune_rewrite.evaluate.device import TargetQuery, defaults_read
from autotune_rewrite.evaluate.unknowns import env_default
from autotune_rewrite.locate.early_prune import KEY, pruned
from autotune_rewrite.model import ConfigValue, TargetConfigs
from autotune_rewrite.targets import Target


@dataclass(frozen=True)
class TargetContext:
    """What the linking pass knows: the run's targets, its environment, and a resolver of other
    modules' names that answers as the given ``Answers`` do."""

    targets: tuple[Target, ...]
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    resolve_with: Callable[[Answers], Callable] | None = None
    read_data: Callable[[str], bytes | None] | None = None  # a data file of the tree (``data_files``)
    reads: Callable[[], list] | None = None  # every data file read so far, also by other modules' evaluations


@dataclass(frozen=True)
class Resolution:
    configs: tuple[ConfigValue, ...] | None = None
    origin: str | None = None
    reason: str | None = None
    pending: str | None = None  # needs another module's name (linking retries)
    deferred: bool = False  # asks the device or environment (linking resolves it per target)
    by_target: tuple[TargetConfigs, ...] = ()
    data_files: tuple[str, ...] = ()  # data files of the tree the configs were read from
    environment: tuple[tuple[str, Any], ...] = ()  # unset variables read at a default: (name, default)


def _at_site(pm, node, resolve, answers: Answers, read_data=None) -> Evaluator:
    """An evaluator reading ``pm``'s names as bound where ``node`` (the configs) is: the
    binding in force at the decorator, not the last one of the module."""
    return Evaluator(resolve=resolve, answers=answers, positions={pm.path: pm.span(node).start_line},
                     read_data=read_data)


def _value(ev: Evaluator, pm, node, prune) -> tuple[ConfigValue, ...]:
    """``configs=`` as the autotuner times it: after the site's early pruner (``early_prune``)."""
    return to_configs(pruned(ev, pm, prune, evaluate(ev, pm, node)))


def _once(pm, node, resolve, answers: Answers, prune=None,
          read_data=None) -> tuple[Evaluator, tuple[ConfigValue, ...]]:
    ev = _at_site(pm, node, resolve, answers, read_data)
    return ev, _value(ev, pm, node, prune)


def resolve_configs(pm, node, resolve: Callable, context: TargetContext | None, prune=None) -> Resolution:
    """The ``configs=`` expression ``node`` of ``pm``: for every target alike, or per target.
    ``prune``: the site's ``prune_configs_by=`` expression (its early pruner is applied)."""
    if context is None or context.reads is None:
        return _resolve(pm, node, resolve, context, prune)
    before = len(context.reads())
    found = _resolve(pm, node, resolve, context, prune)
    files = tuple(dict.fromkeys((*found.data_files, *context.reads()[before:])))
    return replace(found, data_files=files)


def _resolve(pm, node, resolve: Callable, context: TargetContext | None, prune=None) -> Resolution:
    if context is None:
        try:
            ev, configs = _once(pm, node, resolve, DEFAULT_ANSWERS, prune)
        except Pending as exc:
            return Resolution(reason=f"configs {exc}", pending=exc.fq)
        except TargetQuery as exc:
            return Resolution(reason=f"configs {exc}", deferred=True)
        except Unresolved as exc:
            return Resolution(reason=f"configs: {exc}")
        return Resolution(configs, ", ".join(ev.origin) or "literal list")
    resolve_for = context.resolve_with or (lambda answers: resolve)
    neutral = DEFAULT_ANSWERS.for_target(None, context.env)
    ev = _at_site(pm, node, resolve_for(neutral), neutral, context.read_data)
    try:
        configs = _value(ev, pm, node, prune)
        return Resolution(configs, _origin(ev, neutral), data_files=tuple(ev.data_files),
                          environment=defaults_read(neutral))
    except Pending as exc:
        return Resolution(reason=f"configs {exc}", pending=exc.fq, data_files=tuple(ev.data_files))
    except TargetQuery:
        pass
    except Unresolved as exc:
        return Resolution(reason=f"configs: {exc}", data_files=tuple(ev.data_files))
    groups: list[TargetConfigs] = []
    files: dict[str, None] = dict.fromkeys(ev.data_files)
    environment: dict[str, Any] = {}
    for target in context.targets:
        answers = DEFAULT_ANSWERS.for_target(target, context.env)
        ev = _at_site(pm, node, resolve_for(answers), answers, context.read_data)
        try:
            entry = TargetConfigs((target.name,), _value(ev, pm, node, prune),
                                  _origin(ev, answers), None, tuple(ev.queries))
        except Unresolved as exc:
            entry = TargetConfigs((target.name,), None, None, f"configs: {exc}", tuple(ev.queries))
        groups = _merge(groups, entry)
        files.update(dict.fromkeys(ev.data_files))
        environment.update(defaults_read(answers))
    if prune is not None and not any(KEY in (g.origin or "") for g in groups):
        # The pruner asked the device before it stopped (on ``named_args``, say) and ran on no
        # target: the configs are as written, and the same everywhere unless they ask too.
        try:
            neutral = DEFAULT_ANSWERS.for_target(None, context.env)
            ev, configs = _once(pm, node, resolve_for(neutral), neutral, read_data=context.read_data)
            return Resolution(configs, _origin(ev, neutral), data_files=tuple(files),
                              environment=defaults_read(neutral))
        except Unresolved:
            pass
    names = " / ".join(", ".join(g.targets) for g in groups)
    return Resolution(reason=f"configs depend on the target ({names})", by_target=tuple(groups),
                      data_files=tuple(files), environment=tuple(environment.items()))


def _origin(ev, answers) -> str:
    """How the configs were resolved, with every unset environment variable they rest on (read
    at its default: an assumption, listed)."""
    return ", ".join([*ev.origin, *(env_default(n, d) for n, d in defaults_read(answers))]) or "literal list"


def _merge(groups: list[TargetConfigs], entry: TargetConfigs) -> list[TargetConfigs]:
    """Targets that see the same configs (or fail the same way) share one entry."""
    for i, g in enumerate(groups):
        if (g.configs, g.origin, g.unresolved_reason) == (entry.configs, entry.origin, entry.unresolved_reason):
            queries = g.queries if g.queries == entry.queries else tuple(dict.fromkeys(g.queries + entry.queries))
            groups[i] = TargetConfigs(g.targets + entry.targets, g.configs, g.origin, g.unresolved_reason, queries)
            return groups
    return [*groups, entry]


__all__ = ["Resolution", "TargetContext", "resolve_configs"]
