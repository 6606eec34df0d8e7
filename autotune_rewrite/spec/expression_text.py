"""The value of an expression written as text in a wrapper (``128 if K == 96 else K``): the
wrapper-stated values and branches of a launch spec are evaluated with it."""

from __future__ import annotations

from autotune_rewrite.evaluate import Evaluator, Known, Unknown, Unresolved
from autotune_rewrite.locate.parsed import ParsedModule


def evaluate_text(text: str, env: dict) -> Known | Unknown:
    """The value of a Python expression written in a wrapper (``128 if K == 96 else K``) with
    ``env`` giving its names; ``triton``/``math`` calls resolve as in the locator. Never raises."""
    try:
        pm = ParsedModule.parse("<expression>", f"import math\nimport triton\n__value__ = ({text})\n",
                                "__expression__", False)
    except Exception:  # noqa: BLE001 - not an expression we can read
        return Unknown(f"`{text}` does not parse")
    node = pm.tree.body[-1].body[0].value
    try:
        return Known(Evaluator(resolve=_refuse).eval(pm, node, dict(env)))
    except Unresolved as exc:
        return Unknown(str(exc))
    except Exception as exc:  # noqa: BLE001
        return Unknown(f"`{text}` does not evaluate ({type(exc).__name__})")


def _refuse(fq: str):
    raise Unresolved(f"uses `{fq}`")


__all__ = ["evaluate_text"]
