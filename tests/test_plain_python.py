"""The rest of plain Python in config builders (issue 20, item 3): methods of builtin values,
``functools.partial``/``reduce``, ``operator``, and builtins' keyword arguments, each evaluated
to the exact configs. Fixtures written here in the shapes config helpers use."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from autotune_rewrite.locate.scan import scan

HEAD = '''
import functools
import operator
import triton
import triton.language as tl

BLOCKS = [32, 64, 128]
WARPS = (4, 8)
MODE = "Fast"


def _cfg(b, w, s=3):
    return triton.Config({"B": b}, num_warps=w, num_stages=s)
'''

CASES = {
    # enumerate's start= was once dropped, which shifted every num_stages by two
    "enumerate with start": ("[_cfg(b, 4, s) for s, b in enumerate(reversed(BLOCKS), start=2)]",
                             [(128, 4, 2), (64, 4, 3), (32, 4, 4)]),
    "functools.partial": ("[functools.partial(_cfg, w=8)(b) for b in BLOCKS]", [(32, 8, 3), (64, 8, 3), (128, 8, 3)]),
    "functools.reduce with operator": ("[_cfg(functools.reduce(operator.mul, (2, b)), 4) for b in BLOCKS[:2]]",
                                       [(64, 4, 3), (128, 4, 3)]),
    "str methods": ('[_cfg(b, 4) for b in BLOCKS if MODE.lower() == "fast" and str(b).startswith("6")]',
                    [(64, 4, 3)]),
    "split and join": ('[_cfg(int(x), 4) for x in "-".join(["32", "64"]).split("-")]', [(32, 4, 3), (64, 4, 3)]),
    "set methods": ("[_cfg(b, 4) for b in sorted(set(BLOCKS).intersection({64, 128, 256}))]", [(64, 4, 3), (128, 4, 3)]),
    "tuple index": ("[_cfg(BLOCKS[WARPS.index(8)], 8)]", [(64, 8, 3)]),
    "map over a partial": ("list(map(functools.partial(_cfg, w=4, s=2), BLOCKS[1:]))", [(64, 4, 2), (128, 4, 2)]),
}


def _site(tmp_path: Path, expr: str):
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "k.py").write_text(HEAD + textwrap.dedent(f'''

        @triton.autotune(configs={expr}, key=["n"])
        @triton.jit
        def k(x, n, B: tl.constexpr):
            pass
    '''))
    (site,) = scan(root, jobs=1).sites
    return site


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_config_builder_in_plain_python_gives_the_exact_configs(tmp_path, case):
    expr, expected = CASES[case]
    site = _site(tmp_path, expr)
    assert site.unresolved_reason is None, site.unresolved_reason
    assert [(c.kwargs["B"], c.num_warps, c.num_stages) for c in site.configs] == expected


def test_a_keyword_of_a_builtin_the_evaluator_does_not_take_is_refused_not_dropped(tmp_path):
    site = _site(tmp_path, "[_cfg(b, 4) for b in list(BLOCKS, extra=1)]")
    assert site.configs is None and "keyword extra" in site.unresolved_reason
