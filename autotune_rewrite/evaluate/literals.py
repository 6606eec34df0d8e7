"""The value of a literal node (``64``, ``1e-3``, ``"BLOCK_M"``), worked out once per spelling.

LibCST's ``evaluated_value`` runs ``ast.literal_eval`` (a compile) on every call; a kernel
library's config lists and launches spell the same few literals thousands of times (22,000
calls, about 1 s of a 12 s FBGEMM scan). Literal values are immutable, so one cache serves.
"""

from __future__ import annotations

import ast
import functools

import libcst as cst

_SIMPLE = (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString)


@functools.lru_cache(maxsize=4096)
def _value(text: str):
    return ast.literal_eval(text)


def literal(node: cst.BaseExpression):
    """What ``node.evaluated_value`` says, for numbers and strings (others: asked of LibCST)."""
    return _value(node.value) if isinstance(node, _SIMPLE) else node.evaluated_value


__all__ = ["literal"]
