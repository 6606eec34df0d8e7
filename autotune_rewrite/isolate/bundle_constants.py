"""Module globals built by a call, turned into literals for the isolated kernel.

``LOG2E = tl.constexpr(math.log2(math.e))``, ``RCP_LN2 = 1.0 / math.log(2)``,
``BLOCK = triton.next_power_of_2(HEAD_DIM)``: the bundle cannot carry the call (it would need
``math`` or the user's imports), so the project's one static evaluator (``evaluate/``) computes
the value from its ``Answers`` (math, the pure builtins, ``tl.constexpr``, ``triton.cdiv`` /
``next_power_of_2``) and the bundle holds ``LOG2E = <triton>.language.constexpr(1.4426950408889634)``.
A value is emitted only when it is a plain scalar or a tuple of them, whose ``repr`` reads back
as the same value; anything else (a tensor, an object, an env var) stays unknown and the loader
reports the name as not provided.

The evaluator reads modules through ``locate.parsed.ParsedModule`` (parsed again here, and only
for modules holding such a global: the loader's own parse carries no positions); a name imported
from another module of the repository is followed through the loader's module resolver.
"""

from __future__ import annotations

import math
from pathlib import Path

import libcst as cst

from autotune_rewrite.evaluate import Evaluator, Known, Unknown, Unresolved
from autotune_rewrite.files import module_name
from autotune_rewrite.locate.parsed import ParsedModule
from autotune_rewrite.module_resolver import ModuleResolver

_SCALARS = (bool, int, float, str, type(None))


class ConstantValues:
    """Values of module-level names of one repository, by the static evaluator (cached)."""

    def __init__(self, root: Path, resolver: ModuleResolver):
        self.root = root
        self.resolver = resolver
        self._parsed: dict[str, ParsedModule | None] = {}
        self._evaluator = Evaluator(resolve=self._resolve)

    def value(self, rel: str, name: str) -> Known | Unknown:
        """The value of module-level ``name`` of the file ``rel`` (root-relative, POSIX)."""
        pm = self._module(rel)
        if pm is None:
            return Unknown(f"{rel} does not parse")
        self._evaluator.steps = 0  # the step budget is per value, not per bundle
        try:
            return Known(self._evaluator.module_value(pm, name))
        except Unresolved as exc:
            return Unknown(str(exc))
        except RecursionError:
            return Unknown("nested too deeply to evaluate statically")
        except Exception as exc:  # noqa: BLE001 - the user's expression fails (``1 / 0``): not known
            return Unknown(f"`{name}` does not evaluate ({type(exc).__name__})")

    def _module(self, rel: str) -> ParsedModule | None:
        if rel not in self._parsed:
            try:
                text = (self.root / rel).read_text(encoding="utf-8")
                self._parsed[rel] = ParsedModule.parse(rel, text, module_name(rel), rel.endswith("__init__.py"))
            except (OSError, UnicodeDecodeError, cst.ParserSyntaxError, cst.CSTValidationError):
                self._parsed[rel] = None
        return self._parsed[rel]

    def _resolve(self, fq: str, depth: int = 0):
        """Another module's name: the longest module prefix of ``fq`` that is a repo file."""
        parts = fq.split(".")
        for i in range(len(parts) - 1, 0, -1):
            rel = self.resolver.find(".".join(parts[:i]))
            if rel is None:
                continue
            pm = self._module(rel) if i == len(parts) - 1 else None
            if pm is None:
                break
            name = parts[-1]
            if name not in pm.module_bindings():
                # ``from .consts import LN2`` in a package ``__init__``: follow the re-export.
                target = sorted(pm.global_names(cst.Name(name)))
                if target and target[0] != fq and depth < 8:
                    return self._resolve(target[0], depth + 1)
            return self._evaluator.module_value(pm, name)
        raise Unresolved(f"uses `{fq}`, which is not a module of the repository")


def literal(value) -> str | None:
    """Python source that evaluates to ``value``, for plain scalars and tuples/lists of them."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"float({str(value)!r})"
    if isinstance(value, _SCALARS):
        return repr(value)
    if isinstance(value, (tuple, list)):
        items = [literal(v) for v in value]
        if any(i is None for i in items):
            return None
        body = ", ".join(items) + ("," if isinstance(value, tuple) and len(items) == 1 else "")
        return f"({body})" if isinstance(value, tuple) else f"[{body}]"
    return None


__all__ = ["ConstantValues", "literal"]
