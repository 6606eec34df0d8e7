"""``@triton.heuristics`` values, evaluated on a launch spec the way the runtime evaluates them.

``@triton.heuristics({"EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0})`` sets a
constexpr from the other arguments at every launch; below ``@triton.autotune`` it also sees each
config's meta-parameters, so its value can differ per config. ``check`` needs that value to
compile what the runtime compiles. The lambda is evaluated by the one static evaluator
(``evaluate/``) on a dict of the spec's values plus the config's; a tensor argument is an
opaque object (``args["g"] is not None`` holds), an int of unknown value is
``spec_draft.ASSUMED_INT`` (divisible by 16, not 1, large: the same assumption as
everywhere else, listed with the verdict). A lambda that needs anything else (a call into the
program, a tensor's shape) stays unknown, and the parameter is what the kernel still needs,
unless the spec gives its value (a captured spec records what the lambda gave at that launch):
then it is used as given, and listed as an assumption only when the lambda reads the config. A
scalar argument the spec types without a value is not None, and nothing else is known of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import libcst as cst

from autotune_rewrite.evaluate import Evaluator, Function, Unresolved
from autotune_rewrite.files import module_name
from autotune_rewrite.model import AutotuneSite, ConfigValue
from autotune_rewrite.triton_names import HEURISTICS


class TensorArg:
    """A tensor in a heuristic's ``args`` (not None; nothing else is known about it)."""

    def __repr__(self) -> str:
        return "<tensor>"


class ScalarArg:
    """A scalar argument whose value the spec does not give: not None (a None argument is typed
    ``none`` in the spec); any other use of it makes the heuristic unknown, never a guess."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name}>"

    def _unknown(self, *_: Any) -> Any:
        raise Unresolved(f"the value of `{self.name}`")

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __bool__ = __int__ = __float__ = __index__ = _unknown
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _unknown
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __pow__ = __neg__ = __abs__ = _unknown
    __hash__ = object.__hash__


@dataclass(frozen=True)
class Heuristic:
    name: str
    pm: Any  # ParsedModule of the kernel's file
    node: cst.Lambda


def heuristics_of(root: Path, site: AutotuneSite, parsed: dict | None = None) -> tuple[Heuristic, ...]:
    """The ``@triton.heuristics`` lambdas on the kernel's ``def`` (none when there are none, or
    when the file cannot be read; a dict value that is not a lambda is left out). ``parsed``:
    the run's modules by (path, bytes), so a file of several such kernels is parsed once (a
    LibCST parse with metadata of a 4,000-line kernel file is seconds)."""
    if not site.kernel_path or not any(d in HEURISTICS for d in site.decorators):
        return ()
    from autotune_rewrite.locate.facts import parse_source

    path = Path(root, site.kernel_path)
    try:
        data = path.read_bytes()
    except OSError:
        return ()
    key = (site.kernel_path, data)
    pm = parsed.get(key) if parsed is not None else None
    if pm is None:
        pm = parse_source(site.kernel_path, data, module_name(site.kernel_path), path.name == "__init__.py")
        if parsed is not None:
            parsed[key] = pm
    if not hasattr(pm, "tree"):
        return ()
    fn = next((s for s in pm.tree.body if isinstance(s, cst.FunctionDef) and s.name.value == site.kernel), None)
    if fn is None:
        return ()
    out = []
    for dec in fn.decorators:
        call = dec.decorator
        if not (isinstance(call, cst.Call) and pm.names(call.func) & HEURISTICS and call.args):
            continue
        table = call.args[0].value
        if not isinstance(table, cst.Dict):
            continue
        for el in table.elements:
            if isinstance(el, cst.DictElement) and isinstance(el.key, cst.SimpleString) \
                    and isinstance(el.value, cst.Lambda):
                out.append(Heuristic(el.key.evaluated_value, pm, el.value))
    return tuple(out)


def evaluate(heuristic: Heuristic, args: dict[str, Any]) -> tuple[bool, Any, str]:
    """(known, value, why not) of one heuristic on ``args``."""
    ev = Evaluator(resolve=_no_imports)
    try:
        fn = ev.eval(heuristic.pm, heuristic.node, {})
        assert isinstance(fn, Function)
        return True, ev.call(fn, [args], {}), ""
    except Unresolved as exc:
        return False, None, str(exc)
    except Exception as exc:  # noqa: BLE001 - the user's lambda failing on our values
        return False, None, f"{type(exc).__name__}: {exc}"


def reads(heuristic: Heuristic, names) -> list[str]:
    """The ``names`` the lambda reads from ``args`` (``args["K"]``), in the order given."""
    code = heuristic.pm.code(heuristic.node)
    return [n for n in names if f"'{n}'" in code or f'"{n}"' in code]


def reads_config(heuristic: Heuristic, meta: frozenset[str] | set[str]) -> bool:
    """Whether the lambda names a config's value (a meta-parameter, num_warps, num_stages): its
    value may then differ per config."""
    return bool(reads(heuristic, (*meta, "num_warps", "num_stages")))


def tile_inputs(heuristics, tiles: set[str], constexprs) -> set[str]:
    """The ``constexprs`` a heuristic reads where the value it sets is one of ``tiles`` (a tile
    extent: ``N_BLOCK = next_power_of_2(N)`` makes N a shape, swept like one)."""
    return {n for h in heuristics if h.name in tiles for n in reads(h, sorted(constexprs))}


def _no_imports(fq: str):
    raise Unresolved(f"calls into the program (`{fq}`)")


def config_args(config: ConfigValue | None) -> dict[str, Any]:
    """What Triton adds to ``args`` from a config: its meta-parameters, num_warps, num_stages."""
    if config is None:
        return {}
    return {**config.kwargs, "num_warps": config.effective_num_warps, "num_stages": config.effective_num_stages}


__all__ = ["Heuristic", "ScalarArg", "TensorArg", "config_args", "evaluate", "heuristics_of", "reads", "reads_config",
           "tile_inputs"]
