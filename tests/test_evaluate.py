"""The one static evaluator on its own: known values, the reason for an unknown one, and answers
for names outside the tree that a caller can extend (as target-aware evaluation will)."""

from __future__ import annotations


from autotune_rewrite.evaluate import DEFAULT_ANSWERS, Evaluator, Known, Unknown, Unresolved, outcome
from autotune_rewrite.locate.parsed import ParsedModule

SOURCE = """\
import math
import torch
import triton
import triton.language as tl

W = 64
LOG2E = tl.constexpr(math.log2(8))
TILES = [triton.cdiv(W, b) for b in (16, 32)]
HIP = torch.version.hip
"""


def _value(name: str, answers=DEFAULT_ANSWERS):
    pm = ParsedModule.parse("pkg/m.py", SOURCE, "pkg.m", False)

    def no_imports(fq):
        raise Unresolved(f"uses `{fq}`")

    ev = Evaluator(resolve=no_imports, answers=answers)
    (node,) = pm.module_bindings()[name]
    return outcome(ev, pm, node)


def test_module_globals_built_by_calls_are_known():
    assert _value("LOG2E") == Known(3.0)
    assert _value("TILES") == Known([4, 2])


def test_an_external_attribute_is_unknown_with_the_reason():
    result = _value("HIP")
    assert isinstance(result, Unknown) and "torch.version.hip" in result.reason


def test_answers_are_pluggable_per_target():
    cuda = DEFAULT_ANSWERS.extended(values={"torch.version.hip": None})
    assert _value("HIP", cuda) == Known(None)
    assert _value("LOG2E", cuda) == Known(3.0)  # the defaults stay
