"""The user's bench entry point: which function builds inputs for a batch size, which caller runs them.

Declared in the target repo's settings (read and checked by ``settings.schema.BenchEntry``), one
entry per kernel (key: ``path::name`` or the name):

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

Modules are imported with the project root first on ``sys.path``.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any, Callable, Mapping

from autotune_rewrite.errors import UserError
from autotune_rewrite.model import AutotuneSite
from autotune_rewrite.settings import BenchEntry, Settings

EXAMPLE = '[tool.autotune-rewrite.bench] "{ident}" = {{ entry = "module:make_inputs", call = "module:caller" }}'


def find_entry(settings: Settings, site: AutotuneSite) -> BenchEntry:
    """The bench entry for ``site`` (read and checked with the settings); UserError naming the fix when absent."""
    entry = settings.bench_entry(site.ident, site.kernel)
    if entry is None:
        raise settings.where().at("bench").error(f"has no entry for {site.ident}; add {EXAMPLE.format(ident=site.ident)}")
    return entry


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
