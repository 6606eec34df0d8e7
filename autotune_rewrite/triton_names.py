"""Triton's names: every spelling of the Triton objects the tool recognises, in one place.

Absolute dotted names as LibCST's qualified-name analysis reports them (``import triton as tt;
tt.jit`` is ``triton.jit``). Triton re-exports the same object under several modules, and the
set moved between 3.3 and 3.9, so each concept is the set of all of them. Nothing here imports
LibCST or Triton at import (``installed_has`` imports Triton when asked): the light paths (a
warm ``check``, the capture hooks) may use it.
"""

from __future__ import annotations

import functools
import importlib

AUTOTUNE = frozenset({"triton.autotune", "triton.runtime.autotune", "triton.runtime.autotuner.autotune"})
CONFIG = frozenset({"triton.Config", "triton.runtime.Config", "triton.runtime.autotuner.Config"})
JIT = frozenset({"triton.jit", "triton.runtime.jit", "triton.runtime.jit.jit"})
# ``triton.runtime.jit.JITFunction(fn)`` builds the same object ``@triton.jit`` does.
JIT_CONSTRUCTORS = JIT | {"triton.runtime.jit.JITFunction"}
# ``@triton.constexpr_function`` (3.5+): a Python helper Triton runs at compile time when a kernel
# calls it, so a bundle carries it as it carries a @triton.jit helper.
CONSTEXPR_FUNCTION = frozenset({"triton.constexpr_function", "triton.runtime.jit.constexpr_function"})
HEURISTICS = frozenset({"triton.heuristics", "triton.runtime.heuristics", "triton.runtime.autotuner.heuristics"})
CONSTEXPR = frozenset({"triton.language.constexpr", "triton.language.core.constexpr"})
# torch's wrapper that makes a kernel launchable under torch.compile; ``capture_triton`` is its
# name before torch 2.6 (still an alias after).
WRAP_TRITON = frozenset({"torch.library.wrap_triton", "torch._library.triton.wrap_triton",
                         "torch.library.capture_triton", "torch._library.capture_triton",
                         "torch._library.triton.capture_triton"})
# Host-side helpers Triton exports whose value follows from their arguments alone.
CDIV = frozenset({"triton.cdiv", "triton.runtime.cdiv", "triton.language.cdiv"})
NEXT_POWER_OF_2 = frozenset({"triton.next_power_of_2", "triton.runtime.next_power_of_2"})

# What ``from triton import *`` (or a submodule's star) can bind that the tool reads: every
# spelling above (Triton's own ``__all__`` is not read: Triton is never imported to scan).
STAR_EXPORTED = (AUTOTUNE | CONFIG | JIT_CONSTRUCTORS | CONSTEXPR_FUNCTION | HEURISTICS | CONSTEXPR | CDIV
                 | NEXT_POWER_OF_2)

# Decorator spellings whose function bodies the locator never needs (kernel bodies): trimmed
# before metadata runs. Only a speed-up: sites are still decided by qualified names.
KERNEL_DECORATOR_TAILS = frozenset({"jit", "autotune", "heuristics"})

# Names an engine may re-export Triton under (``from vllm.triton_utils import tl, triton``):
# when the re-export cannot be followed inside the repo, these still mean Triton.
REEXPORTED_MODULES = {"triton": "import triton", "tl": "import triton.language as tl"}


def is_triton_module(dotted: str) -> bool:
    """``triton`` or one of its submodules (``triton.language``), not ``tritonfoo``."""
    return dotted == "triton" or dotted.startswith("triton.")


@functools.lru_cache(maxsize=None)
def installed_has(module: str, attr: str) -> bool:
    """Whether the installed Triton's ``module`` has ``attr`` (what ``check`` compiles with);
    imports the module, so only asked when code needs the answer."""
    try:
        mod = importlib.import_module(module)
    except Exception:  # noqa: BLE001 - a module that does not import has nothing
        return False
    if hasattr(mod, attr):
        return True
    try:  # a submodule not imported by its package yet (``triton.language.extra.cuda``)
        importlib.import_module(f"{module}.{attr}")
        return True
    except Exception:  # noqa: BLE001
        return False


def is_autotune(names) -> bool:
    """Whether a set of qualified names holds ``triton.autotune`` in any spelling, also when
    Triton is re-exported by another package (``vllm.triton_utils.triton.autotune``)."""
    return any(n in AUTOTUNE or n.endswith(".triton.autotune") for n in names)


def is_jit(names) -> bool:
    """Whether a set of qualified names holds ``triton.jit`` in any spelling, also when Triton is
    re-exported by another package (``vllm.triton_utils.triton.jit``)."""
    return any(n in JIT_CONSTRUCTORS or n.endswith(".triton.jit") for n in names)
