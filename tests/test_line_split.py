"""``line_split.bracketed`` writes what black and ruff's formatter leave as it is (issue 21, item 4):
each form the rewrite emits (a guard's rows and helper, a comprehension's condition), at the
widths repositories use, checked by the real formatters."""

from __future__ import annotations

import subprocess
import sys

import pytest

from autotune_rewrite.line_split import bracketed

U, NL = "    ", "\n"
WIDTHS = (66, 72, 79, 88, 100, 120)
KEEP = ["c", "for c in configs", "if (c.kwargs, c.num_warps, c.num_stages) not in dead"]
METAS = (['"BLOCK_M": 128', '"BLOCK_N": 256'],
         ['"BLOCK_SIZE_ROWS": 128', '"BLOCK_SIZE_COLS": 256', '"BLOCK_SIZE_INNER": 64'],
         ['"A_VERY_LONG_PARAMETER_NAME_ONE": 128', '"A_VERY_LONG_PARAMETER_NAME_TWO": 256', '"BLOCK_K": 64'])
CONDITIONS = (["projection_block_size == 64", "pipeline_stage_count == 2"],
              ["projection_block_size == 128", "pipeline_stage_count == 4", "projection_block_size == 64"])


def _source(width: int) -> str:
    def split(head, items, tail, indent="", at=None, **kw):
        at = len(indent) if at is None else at
        return bracketed(head, items, tail, at=at, indent=indent, unit=U, nl=NL, width=width, **kw)

    out = ["T = {", "    120: ["]
    for items in METAS:
        # the dict's line ends with a comma: one column less
        meta = bracketed("{", items, "}", at=12, indent=U * 3, unit=U, nl=NL, width=width - 1, collection=True)
        out.append(U * 2 + split("(", [meta, "8", "4"], "),", indent=U * 2, collection=True))
    out += ["    ],", "}", "", ""]
    for name in ("_prune_gemm", "_prune_a_very_long_kernel_name_for_testing_and_more_l123"):
        out.append(split(f"def {name}(", ["configs", "named_args", "**kwargs"], "):"))
        out.append(U + split(f"dead = {name.upper()}.get(", ["arch", "[]"], ")", indent=U))
        out.append(U + split("configs = [", KEEP, "]", indent=U, joint=" "))
        out.append(U + split("return [", KEEP, "]", indent=U, joint=" "))
        out += ["", ""]
    out += ["C = [", "    f(b, s)", "    for projection_block_size in [64, 128, 256]",
            "    for pipeline_stage_count in [2, 4]"]
    for terms in CONDITIONS:  # as dead_filter writes them: ``not (...)``, or a bare ``or`` when it fits
        out.append(f"{U}if " + split("not (", terms, ")", indent=U, at=len(U) + 3, joint=" and "))
        flat = " or ".join(terms)
        fits = len(U) + 3 + len(flat) <= width
        out.append(f"{U}if " + (flat if fits else split("(", terms, ")", indent=U, at=len(U) + 3, joint=" or ")))
    return "\n".join([*out, "]", ""])


@pytest.mark.parametrize("width", WIDTHS)
def test_the_formatters_leave_every_split_as_written(tmp_path, width):
    pytest.importorskip("black")
    path = tmp_path / "emitted.py"
    path.write_text(_source(width))
    for args in (["black", "--check", "-q", "-l", str(width)], ["ruff", "format", "--check", "-q", "--line-length",
                                                               str(width)]):
        proc = subprocess.run([sys.executable, "-m", *args, str(path)], capture_output=True, text=True)
        assert proc.returncode == 0, (args[0], width, proc.stdout, proc.stderr, path.read_text())


def test_the_three_forms():
    def split(width, **kw):
        return bracketed("return [", KEEP, "]", at=4, indent=U, unit=U, nl=NL, width=width, joint=" ", **kw)

    assert split(120) == "return [c for c in configs if (c.kwargs, c.num_warps, c.num_stages) not in dead]"
    assert split(79) == ("return [\n        c for c in configs if (c.kwargs, c.num_warps, c.num_stages) not in dead\n"
                         "    ]")
    assert split(72) == ("return [\n        c\n        for c in configs\n"
                         "        if (c.kwargs, c.num_warps, c.num_stages) not in dead\n    ]")
    # A tuple display is never hugged: one item per line, with the trailing comma.
    row = bracketed("(", ['{"BLOCK_M": 128}', "8", "4"], "),", at=8, indent=U * 2, unit=U, nl=NL, width=30,
                    collection=True)
    assert row == '(\n            {"BLOCK_M": 128},\n            8,\n            4,\n        ),'
