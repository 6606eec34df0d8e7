"""Twin defs (one kernel name defined under ``if``/``else``): the loader cuts out the def the site
is on, found by its def line, not the last one in the file. The two bodies here differ in shared
memory (a ``tl.dot`` loop against a plain copy), so compiling the wrong twin shows in the numbers."""

from __future__ import annotations

import textwrap

from autotune_rewrite.check import check as check_stage
from autotune_rewrite.isolate.kernel_loader import load_bundle
from projection_kernel import PROJECTION_SETTINGS, projection_def

TWINS = textwrap.dedent('''\
    import os

    import triton
    import triton.language as tl

    CONFIGS = [triton.Config({"BLOCK_D": 64}, num_warps=4, num_stages=2)]

    if os.environ.get("COPY_ONLY"):
        @triton.autotune(configs=CONFIGS, key=["D"])
        @triton.jit
        def twin_kernel(x_ptr, w_ptr, y_ptr, B, D, BLOCK_B: tl.constexpr, BLOCK_D: tl.constexpr):
            rd = tl.program_id(0) * BLOCK_D + tl.arange(0, BLOCK_D)
            tl.store(y_ptr + rd, tl.load(x_ptr + rd).to(tl.float32))
    else:
        @triton.autotune(configs=CONFIGS, key=["D"])
        @triton.jit
''') + projection_def("twin_kernel", "    ") + textwrap.dedent('''

    def run(x, w, y):
        B, D = x.shape
        twin_kernel[(triton.cdiv(D, 64),)](x, w, y, B, D, BLOCK_B=16)
    ''')

SETTINGS = PROJECTION_SETTINGS.replace("KERNEL", "twin_kernel")

COPY_DEF, DOT_DEF = 11, 17  # the two ``def twin_kernel`` lines


def test_the_loader_cuts_out_the_twin_at_the_given_line(tmp_path):
    (tmp_path / "proj.py").write_text(TWINS)
    assert TWINS.splitlines()[COPY_DEF - 1].strip().startswith("def twin_kernel")
    assert TWINS.splitlines()[DOT_DEF - 1].strip().startswith("def twin_kernel")
    copy = load_bundle(tmp_path, "proj.py", "twin_kernel", line=COPY_DEF)
    dot = load_bundle(tmp_path, "proj.py", "twin_kernel", line=DOT_DEF - 2)  # its decorator line works too
    assert "tl.dot" not in copy.source and "tl.dot" in dot.source
    assert "tl.dot" in load_bundle(tmp_path, "proj.py", "twin_kernel").source  # no line: the last def, as before


def test_check_compiles_each_twin_with_its_own_body(tmp_path):
    (tmp_path / "proj.py").write_text(TWINS)
    (tmp_path / "pyproject.toml").write_text(SETTINGS)
    result = check_stage.check(tmp_path, workers=1)
    shared = {}
    for r in result.reports:
        assert r.problem is None, r.problem
        shared[r.site.ident] = r.verdicts[0].outcome.shared_bytes
    # The dot loop stages its tiles in shared memory; the copy needs none.
    assert set(shared) == {f"proj.py::twin_kernel:{COPY_DEF}", f"proj.py::twin_kernel:{DOT_DEF}"}
    assert shared[f"proj.py::twin_kernel:{COPY_DEF}"] == 0
    assert shared[f"proj.py::twin_kernel:{DOT_DEF}"] > 0
