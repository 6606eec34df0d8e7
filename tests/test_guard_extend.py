"""A guard an earlier run wrote is extended, not wrapped in a second one (issue 21, item 4):
``guard_extend.extend_edits`` on the guard text itself, for the layouts the end-to-end test
(``test_fleet_rewrite``) does not reach. The rows' text is ``device_guard``'s own."""

from __future__ import annotations

import libcst as cst

from autotune_rewrite.model import ConfigValue
from autotune_rewrite.rewrite.decision import Decision
from autotune_rewrite.rewrite.facts import Guarded, Refused
from autotune_rewrite.rewrite.guard_extend import extend_edits
from autotune_rewrite.rewrite.parsed import ParsedFile
from autotune_rewrite.text_edits import apply_edits

GUARD = '''import triton

_K_CANNOT_LAUNCH = {
    80: [  # sm_80
        # cannot launch
        ({"BLOCK": 256}, 8, 4),
    ],
    120: [  # sm_120
        # cannot launch
        ({"BLOCK": 128}, 8, 4),
    ],
}


def _prune_k(configs, named_args, **kwargs):
    arch = triton.runtime.driver.active.get_current_target().arch
    dead = _K_CANNOT_LAUNCH.get(arch, [])
    return [c for c in configs if (c.kwargs, c.num_warps, c.num_stages) not in dead]


@triton.autotune(configs=[], key=["N"], prune_configs_by={"early_config_prune": _prune_k})
@triton.jit
def k(x, N, BLOCK: tl.constexpr):
    pass
'''


def _decision(*guarded: tuple[int, int, tuple[str, ...]]) -> Decision:
    """``(BLOCK, num_stages, archs)`` per guarded config."""
    gs = tuple(Guarded(ConfigValue(kwargs={"BLOCK": b}, num_warps=8, num_stages=s), archs,
                       tuple(Refused("fp16", a, None) for a in archs)) for b, s, archs in guarded)
    return Decision(variant="prune", site=None, targets=(), specs=("fp16",), guarded=gs)


def _extended(text: str, decision: Decision) -> str | None:
    pf = ParsedFile("k.py", text)
    call = next(n for n in pf.walk(cst.Call) if pf.code(n.func) == "triton.autotune")
    edits = extend_edits(pf, call, decision, '"', "guard")
    return None if edits is None else apply_edits(text, edits)


def test_a_row_joins_its_capabilitys_list_and_a_new_capability_goes_in_order():
    after = _extended(GUARD, _decision((64, 4, ("sm_120",)), (128, 4, ("sm_90",))))
    assert after == GUARD.replace('''        ({"BLOCK": 128}, 8, 4),
    ],
}''', '''        ({"BLOCK": 128}, 8, 4),
        # cannot launch
        ({"BLOCK": 64}, 8, 4),
    ],
}''').replace('''    120: [  # sm_120''', '''    90: [  # sm_90
        # cannot launch
        ({"BLOCK": 128}, 8, 4),
    ],
    120: [  # sm_120''')


def test_a_config_the_table_lists_already_is_not_listed_twice():
    assert _extended(GUARD, _decision((128, 4, ("sm_120",)), (256, 4, ("sm_80",)))) == GUARD


def test_a_capability_past_the_last_goes_before_the_closing_brace():
    after = _extended(GUARD, _decision((64, 2, ("sm_121",))))
    assert after == GUARD.replace("    ],\n}\n", "    ],\n    121: [  # sm_121\n        # cannot launch\n"
                                  '        ({"BLOCK": 64}, 8, 2),\n    ],\n}\n')


def test_anything_but_the_guard_this_tool_writes_is_not_extended():
    one_line = GUARD.replace('''    80: [  # sm_80
        # cannot launch
        ({"BLOCK": 256}, 8, 4),
    ],''', '''    80: [({"BLOCK": 256}, 8, 4)],''')
    assert _extended(one_line, _decision((64, 4, ("sm_120",)))) is None
    theirs = GUARD.replace("    dead = _K_CANNOT_LAUNCH.get(arch, [])\n", "    dead = []\n")
    assert _extended(theirs, _decision((64, 4, ("sm_120",)))) is None
    no_pruner = GUARD.replace(', prune_configs_by={"early_config_prune": _prune_k}', "")
    assert _extended(no_pruner, _decision((64, 4, ("sm_120",)))) is None
