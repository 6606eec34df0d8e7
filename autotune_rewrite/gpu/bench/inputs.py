"""The user's bench entry point: which function builds inputs for a batch size, which caller runs them.

Declared in the target repo's settings, one entry per kernel (key: ``path::name`` or the name):

```toml
[tool.autotune-rewrite.bench]
"mla_decode/kernels.py::_mma_sparse_decode_split_kernel" = { entry = "bench_inputs:make_inputs", call = "mla_decode.decode:sparse_mla_decode", bytes = "bench_inputs:bytes_moved" }
```

* ``entry``: ``module:function``; ``function(B, **options)`` returns the inputs of one call for
  batch size ``B``: a mapping (``call(**it)``), a tuple/list (``call(*it)``) or an object with a
  ``kwargs()`` method (``call(**it.kwargs())``).
* ``call``: ``module:function``, the real caller that launches the kernel (the launch path the
  application uses is what gets timed).
* ``bytes`` (optional): ``module:function``; ``function(inputs)`` returns the bytes the call
  must move to and from device memory, for achieved bandwidth. Without it bandwidth is omitted.
* ``options`` (optional): a table of keyword arguments passed to ``entry`` after ``B``.

Modules are imported with the settings' folder first on ``sys.path``.
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from autotune_rewrite.errors import UserError
from autotune_rewrite.model import AutotuneSite

EXAMPLE = '[tool.autotune-rewrite.bench] "{ident}" = {{ entry = "module:make_inputs", call = "module:caller" }}'


@dataclass(frozen=True)
class BenchEntry:
    kernel: str  # the settings key it was found under
    entry: str
    call: str
    bytes: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)


def find_entry(raw: Mapping[str, Any], site: AutotuneSite, source: str | None) -> BenchEntry:
    """The bench stanza for ``site`` from the settings table; UserError naming the fix when absent."""
    where = source or "pyproject.toml"
    table = raw.get("bench")
    if table is None:
        raise UserError(f"{where}: no bench entry for {site.ident}; add {EXAMPLE.format(ident=site.ident)}")
    if not isinstance(table, Mapping):
        raise UserError(f"{where}: [tool.autotune-rewrite.bench] must be a table keyed by kernel (path::name)")
    for key in (site.ident, site.kernel):
        if key in table:
            return _parse(key, table[key], where)
    raise UserError(f"{where}: no bench entry for {site.ident}; add {EXAMPLE.format(ident=site.ident)}")


def _parse(key: str, value: Any, where: str) -> BenchEntry:
    if not isinstance(value, Mapping):
        raise UserError(f"{where}: bench entry {key!r} must be a table {{ entry = \"module:fn\", call = \"module:fn\" }}")
    for name in ("entry", "call"):
        if not isinstance(value.get(name), str) or ":" not in value[name]:
            raise UserError(f"{where}: bench entry {key!r} needs {name} = \"module:function\"")
    nbytes = value.get("bytes")
    if nbytes is not None and (not isinstance(nbytes, str) or ":" not in nbytes):
        raise UserError(f"{where}: bench entry {key!r}: bytes must be \"module:function\"")
    options = value.get("options", {})
    if not isinstance(options, Mapping):
        raise UserError(f"{where}: bench entry {key!r}: options must be a table of keyword arguments")
    unknown = set(value) - {"entry", "call", "bytes", "options"}
    if unknown:
        raise UserError(f"{where}: bench entry {key!r}: unknown key(s) {', '.join(sorted(unknown))} "
                        "(known: entry, call, bytes, options)")
    return BenchEntry(key, value["entry"], value["call"], nbytes, dict(options))


def _on_path(root: Path) -> None:
    text = str(root.resolve())
    if text not in sys.path:
        sys.path.insert(0, text)


def load_callable(root: Path, ref: str) -> Callable:
    """``module:attr`` imported with ``root`` on sys.path; UserError when it cannot be."""
    _on_path(root)
    module, _, attr = ref.partition(":")
    try:
        mod = importlib.import_module(module)
    except Exception as exc:  # the user's module: any import error is bad input
        raise UserError(f"bench entry {ref!r}: cannot import {module!r} from {root}: {type(exc).__name__}: {exc}") from None
    fn = getattr(mod, attr, None)
    if not callable(fn):
        raise UserError(f"bench entry {ref!r}: {module} has no callable {attr!r}")
    return fn


def load_autotuner(root: Path, site: AutotuneSite):
    """The live ``Autotuner`` object of ``site``, imported as the caller imports it (a package module)."""
    from triton.runtime.autotuner import Autotuner

    _on_path(root)
    module = site.path.removesuffix(".py").replace("/", ".")
    try:
        mod = importlib.import_module(module)
    except Exception as exc:
        raise UserError(f"{site.ident}: cannot import {module!r} from {root}: {type(exc).__name__}: {exc}") from None
    obj = getattr(mod, site.kernel, None)
    if not isinstance(obj, Autotuner):
        raise UserError(f"{site.ident}: {module}.{site.kernel} is not a triton.autotune kernel at import time")
    return obj


def call_arguments(inputs: Any) -> tuple[tuple, dict]:
    """How the entry's return value is passed to the caller (see the module docstring)."""
    if isinstance(inputs, Mapping):
        return (), dict(inputs)
    if isinstance(inputs, (tuple, list)):
        return tuple(inputs), {}
    kwargs = getattr(inputs, "kwargs", None)
    if callable(kwargs):
        return (), dict(kwargs())
    raise UserError(f"bench entry returned {type(inputs).__name__}: return a dict of keyword arguments, a tuple of "
                    "positional arguments, or an object with a kwargs() method")


__all__ = ["BenchEntry", "call_arguments", "find_entry", "load_autotuner", "load_callable"]
