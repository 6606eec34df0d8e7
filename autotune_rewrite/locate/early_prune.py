"""``prune_configs_by={"early_config_prune": fn}``: the configs the autotuner really times.

Triton calls ``fn(configs, named_args, **kwargs)`` before benchmarking and times only what it
returns. A pruner that asks the device (``driver.active.get_current_target()``, the shared
memory opt-in) answers per target like any other device query, so a target sees the configs it
would time, and a device-aware guard (``rewrite/device_guard``) shows in ``check`` as the
target fixed and the others unchanged. A pruner that reads the launch's own arguments
(``named_args["N"]``) or anything else not known statically is not applied: the configs are
judged as written. One that narrows the configs and then hands them to such a pruner (the
device guard composed with the user's) is run up to that hand-off: what it dropped is dropped.
"""

from __future__ import annotations

import libcst as cst

from autotune_rewrite.evaluate import Function, Pending, Unresolved
from autotune_rewrite.evaluate.values import LaunchArguments
from autotune_rewrite.evaluate.device import TargetQuery

KEY = "early_config_prune"


def pruner_node(prune: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """The ``early_config_prune`` value of a literal ``prune_configs_by`` dict (``{...}`` or
    ``dict(early_config_prune=...)``), else None."""
    if isinstance(prune, cst.Call) and isinstance(prune.func, cst.Name) and prune.func.value == "dict":
        return next((a.value for a in prune.args if a.keyword is not None and a.keyword.value == KEY), None)
    if not isinstance(prune, cst.Dict):
        return None
    for el in prune.elements:
        if isinstance(el, cst.DictElement) and isinstance(el.key, cst.SimpleString) \
                and el.key.evaluated_value == KEY:
            return el.value
    return None


def pruned(ev, pm, prune: cst.BaseExpression | None, configs):
    """``configs`` (evaluated) after the site's early pruner, when it can be run statically.
    A device query (``TargetQuery``) and another module's name (``Pending``) propagate, so the
    caller resolves per target or later; anything else unknown leaves ``configs`` as written."""
    node = pruner_node(prune)
    if node is None or not isinstance(configs, (list, tuple)):
        return configs
    try:
        fn = ev.eval(pm, node, {})
        if not isinstance(fn, Function):
            return configs
        given = list(configs)
        out = ev.call(fn, [given, LaunchArguments()], {})
        if out is given:  # it could not run (evaluate.statements): the configs as written
            return configs
    except (TargetQuery, Pending):
        raise
    except Unresolved:
        return configs
    if not isinstance(out, (list, tuple)):
        return configs
    ev.note(KEY)
    return out


__all__ = ["KEY", "LaunchArguments", "pruned", "pruner_node"]
