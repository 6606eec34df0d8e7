"""Property tests of the list edit every config rewrite goes through: any layout, any subset
kept, any configs added -> the file parses, kept elements (and their comments) stay
byte-identical and in order, and keeping everything changes nothing. A hanging list keeps its
layout: every item after the first on its own line at the first one's column."""

from __future__ import annotations

import ast

import libcst as cst
from hypothesis import given, settings
from hypothesis import strategies as st

from autotune_rewrite.text_edits import apply_edits
from autotune_rewrite.rewrite.parsed import ParsedFile
from autotune_rewrite.rewrite.sequence import Sequence


@st.composite
def lists(draw):
    n = draw(st.integers(1, 6))
    elems = [f"triton.Config({{'B': {16 * (i + 1)}}}, num_warps={draw(st.sampled_from([2, 4, 8]))})" for i in range(n)]
    nl = draw(st.sampled_from(["\n", "\r\n"]))
    layout = draw(st.sampled_from(["one per line", "hanging", "inline"]))
    if layout == "hanging":  # the first after the bracket, the others aligned under it
        indent = " " * len("    configs=[")
        body = "[" + f",{nl}{indent}".join(elems) + ("," if draw(st.booleans()) else "") + "]"
    elif layout == "one per line":  # comments, trailing comma or not
        lines = []
        for i, e in enumerate(elems):
            if draw(st.booleans()):
                lines.append(f"        # about {i}{nl}")
            comma = "," if i < n - 1 or draw(st.booleans()) else ""
            tail = f"  # tail {i}" if draw(st.booleans()) else ""
            lines.append(f"        {e}{comma}{tail}{nl}")
        body = f"[{nl}" + "".join(lines) + "    ]"
    else:
        sep = draw(st.sampled_from([", ", ","]))
        body = "[" + sep.join(elems) + ("," if draw(st.booleans()) else "") + "]"
    src = f"import triton{nl}{nl}X = triton.autotune({nl}    configs={body},{nl}    key=['n'],{nl}){nl}"
    keep = sorted(draw(st.sets(st.integers(0, n - 1))))
    new = draw(st.lists(st.sampled_from(["triton.Config({'B': 8}, num_warps=16)", "triton.Config({'B': 4})"]), max_size=2))
    if not keep and not new:
        keep = [0]
    return src, elems, keep, new


def _seq(src: str) -> tuple[ParsedFile, Sequence]:
    pf = ParsedFile("m.py", src)
    node = next(pf.walk(cst.List))
    return pf, Sequence(pf, node)


@settings(max_examples=80, deadline=None)
@given(lists())
def test_keep_and_append_invariants(case):
    src, elems, keep, new = case
    pf, seq = _seq(src)
    out = apply_edits(src, seq.keep_and_append(keep, new, "test"))
    ast.parse(out)  # parses
    tree = ast.parse(out)
    configs = [ast.unparse(e) for e in tree.body[1].value.keywords[0].value.elts]
    assert configs == [ast.unparse(ast.parse(elems[i]).body[0].value) for i in keep] + [
        ast.unparse(ast.parse(t).body[0].value) for t in new
    ]
    for i in keep:  # kept text byte-identical, with its comments
        assert elems[i] in out
        for marker in (f"# about {i}", f"# tail {i}"):
            if marker in src:
                assert marker in out
    for i in set(range(len(elems))) - set(keep):
        assert f"# tail {i}" not in out and f"# about {i}" not in out
    # The file's newline everywhere.
    newline = "\r\n" if "\r\n" in src else "\n"
    assert out.replace(newline, "").count("\n") == 0 and out.replace(newline, "").count("\r") == 0
    # Keeping everything again is a no-op (idempotence of the edit itself).
    pf2, seq2 = _seq(out)
    assert apply_edits(out, seq2.keep_and_append(list(range(len(seq2.items))), [], "again")) == out


@settings(max_examples=60, deadline=None)
@given(lists())
def test_a_hanging_list_stays_hanging(case):
    src, elems, keep, new = case
    pf, seq = _seq(src)
    if seq.hanging_indent() is None:
        return
    out = apply_edits(src, seq.keep_and_append(keep, new, "test"))
    pf2, seq2 = _seq(out)
    assert len(seq2.items) == len(keep) + len(new)
    if len(seq2.items) > 1:
        assert seq2.hanging_indent() == seq.hanging_indent()
    else:
        newline = "\r\n" if "\r\n" in src else "\n"
        assert out.count(newline) == src.count(newline) - (len(elems) - 1)


def test_dropping_the_last_item_of_a_hanging_list_removes_its_line_only():
    src = ("@triton.autotune(configs=[triton.Config({'B': 32}, num_warps=4),\n"
           "                          triton.Config({'B': 64}, num_warps=8),\n"
           "                          triton.Config({'B': 128}, num_warps=8)], key=['n'])\n"
           "def k():\n    pass\n")
    pf, seq = _seq(src)
    out = apply_edits(src, seq.keep_and_append([0, 1], [], "test"))
    assert out == ("@triton.autotune(configs=[triton.Config({'B': 32}, num_warps=4),\n"
                   "                          triton.Config({'B': 64}, num_warps=8)], key=['n'])\n"
                   "def k():\n    pass\n")
