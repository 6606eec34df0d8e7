"""torch's dtype facts are constants of the number formats: the evaluator answers them, and its
table equals what torch itself says (torch is installed with the test extras)."""

from __future__ import annotations

import pytest

from autotune_rewrite.evaluate import DEFAULT_ANSWERS, Evaluator, Known, Unresolved, outcome
from autotune_rewrite.evaluate.dtype_facts import CALLS, VALUES
from autotune_rewrite.locate.parsed import ParsedModule

SOURCE = """\
import torch

SECTOR = 32 * 8
LOAD = int(SECTOR / torch.finfo(torch.bfloat16).bits)
FP8_MAX = torch.finfo(torch.float8_e4m3fn).max
I8 = (torch.iinfo(torch.int8).min, torch.iinfo(torch.int8).max)
WIDE = torch.float.itemsize * 2
SAME = torch.half == torch.float16
OTHER = torch.bfloat16 == torch.float16
BAD = torch.iinfo(torch.float16).max
"""


def _value(name: str):
    pm = ParsedModule.parse("pkg/m.py", SOURCE, "pkg.m", False)

    def no_imports(fq):
        raise Unresolved(f"uses `{fq}`")

    (node,) = pm.module_bindings()[name]
    return outcome(Evaluator(resolve=no_imports, answers=DEFAULT_ANSWERS), pm, node)


def test_module_constants_built_from_dtype_facts_are_known():
    assert _value("LOAD") == Known(16)
    assert _value("FP8_MAX") == Known(448.0)
    assert _value("I8") == Known((-128, 127))
    assert _value("WIDE") == Known(8)
    assert _value("SAME") == Known(True)
    assert _value("OTHER") == Known(False)
    assert "not an integer dtype" in _value("BAD").reason


def test_the_table_equals_torch():
    torch = pytest.importorskip("torch")
    for fq, facts in VALUES.items():
        real = getattr(torch, fq.split(".", 1)[1])
        assert (facts.field("itemsize"), facts.field("is_floating_point"), facts.field("is_signed")) == (
            real.itemsize, real.is_floating_point, real.is_signed), fq
        info, mine = (torch.finfo, CALLS["torch.finfo"]) if real.is_floating_point else (torch.iinfo, CALLS["torch.iinfo"])
        got, want = mine([facts], {}, None), info(real)
        fields = ("bits", "max", "min", "eps", "tiny", "smallest_normal") if real.is_floating_point else ("bits", "max", "min")
        assert [got.field(f) for f in fields] == [getattr(want, f) for f in fields], fq
