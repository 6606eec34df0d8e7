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


PRODUCT = """\
import torch
import triton

STAGES = [2] if torch.version.hip else [3, 4]
CONFIGS = [
    triton.Config({"BLOCK_M": m}, num_stages=s, num_warps=w)
    for m in [64, 128]
    for s in ([1] if torch.version.hip else [3, 4, 7])
    for w in [4, 8]
    if m * w <= 512
]
AGAIN = [triton.Config({"BLOCK_M": 64}, num_stages=s) for s in STAGES]
"""


def _product(name: str):
    from autotune_rewrite.targets import resolve_target

    pm = ParsedModule.parse("pkg/p.py", PRODUCT, "pkg.p", False)
    ev = Evaluator(resolve=lambda fq: None, answers=DEFAULT_ANSWERS.for_target(resolve_target("sm_120")))
    (node,) = pm.module_bindings()[name]
    return pm, ev, node


def test_a_loop_over_a_conditional_records_the_branch_the_target_takes():
    pm, ev, node = _product("CONFIGS")
    configs = outcome(ev, pm, node).value
    cuda = pm.span(node.for_in.inner_for_in.iter.orelse)  # ``[3, 4, 7]``, the branch sm_120 takes
    assert [c.num_stages for c in configs[0:6:2]] == [3, 4, 7]  # m=64, w=4
    assert (configs[2].choices[1].sequence, configs[2].choices[1].index) == (cuda, 1)
    pm, ev, node = _product("AGAIN")  # through a module-level name bound to a conditional
    stages = pm.span(pm.module_bindings()["STAGES"][0].orelse)
    made = [(ch.sequence, ch.index) for c in outcome(ev, pm, node).value for ch in c.choices]
    assert made == [(stages, 0), (stages, 1)]


def test_a_comprehension_evaluated_row_by_row():
    from autotune_rewrite.evaluate import loop_table

    pm, ev, node = _product("CONFIGS")
    rows = loop_table.rows(ev, pm, node)
    # Its own ``if`` drops m=128 w=8: those combinations are not rows.
    assert [r.values for r in rows][:3] == [(("m", 64), ("s", 3), ("w", 4)), (("m", 64), ("s", 3), ("w", 8)),
                                           (("m", 64), ("s", 4), ("w", 4))]
    assert len(rows) == 9 and all(r.bindings["m"] * r.bindings["w"] <= 512 for r in rows)
    assert rows[4].item.num_stages == 7 and rows[4].item.choices  # the scan's own config, with its elements
