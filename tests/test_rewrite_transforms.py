"""Inline before/after cases for each transform, through ``assert_rewrite`` (which also checks
that the result parses and that a second pass changes nothing)."""

from __future__ import annotations

import pytest
from rewrite_assert import assert_rewrite, plan, run_rewrite
from sitebuilder import build_site

from autotune_rewrite.errors import UserError
from autotune_rewrite.model import ConfigValue
from autotune_rewrite.output.explain_rewrite import rewrite_note
from autotune_rewrite.rewrite.decision import PlannedConfig

KERNEL = '''import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_T": 16}, num_warps=4, num_stages=2),  # fits
        # tuned on an H100
        triton.Config({"BLOCK_T": 32}, num_warps=4, num_stages=2),
        triton.Config({"BLOCK_T": 32}, num_warps=8, num_stages=2),
    ],
    key=["topk"],
)
@triton.jit
def _decode_kernel(
    Q,
    Out,
    topk,
    BLOCK_H: tl.constexpr,
    BLOCK_T: tl.constexpr,
):
    pass
'''


def test_prune_removes_whole_lines_with_their_comments():
    assert_rewrite(
        KERNEL,
        KERNEL.replace(
            '        # tuned on an H100\n        triton.Config({"BLOCK_T": 32}, num_warps=4, num_stages=2),\n'
            '        triton.Config({"BLOCK_T": 32}, num_warps=8, num_stages=2),\n',
            "",
        ),
        kernel="_decode_kernel", variant="prune", configs=[("keep", 0)],
    )


def test_v1_derives_the_new_config_from_the_written_tile():
    # The one config left is the written BLOCK_T=16 tile with 8 warps; the old lines (and the
    # comments that belonged to them) are gone.
    assert_rewrite(
        KERNEL,
        KERNEL.replace(
            '        triton.Config({"BLOCK_T": 16}, num_warps=4, num_stages=2),  # fits\n'
            '        # tuned on an H100\n        triton.Config({"BLOCK_T": 32}, num_warps=4, num_stages=2),\n'
            '        triton.Config({"BLOCK_T": 32}, num_warps=8, num_stages=2),\n',
            '        triton.Config({"BLOCK_T": 16}, num_warps=8, num_stages=2),\n',
        ),
        kernel="_decode_kernel", variant="v1", configs=[("new", 0, 8, 2)],
    )


def test_v2_keeps_and_appends_after_the_last_kept():
    assert_rewrite(
        KERNEL,
        KERNEL.replace(
            '        # tuned on an H100\n        triton.Config({"BLOCK_T": 32}, num_warps=4, num_stages=2),\n'
            '        triton.Config({"BLOCK_T": 32}, num_warps=8, num_stages=2),\n',
            '        triton.Config({"BLOCK_T": 16}, num_warps=8, num_stages=2),\n'
            '        triton.Config({"BLOCK_T": 16}, num_warps=8, num_stages=3),\n',
        ),
        kernel="_decode_kernel", variant="v2", configs=[("keep", 0), ("new", 0, 8, 2), ("new", 0, 8, 3)],
    )


INLINE = """import triton
from triton import Config


@triton.autotune(configs=[Config({'BLOCK': 64}, num_warps=4), Config({'BLOCK': 128}, num_warps=4), Config({'BLOCK': 256})], key=['n'])
@triton.jit
def k(x, n, BLOCK: tl.constexpr):
    pass
"""


def test_inline_list_keeps_the_files_alias_and_quotes():
    assert_rewrite(
        INLINE,
        INLINE.replace(", Config({'BLOCK': 256})]", ", Config({'BLOCK': 128}, num_warps=8, num_stages=4)]"),
        kernel="k", variant="v2", configs=[("keep", 0), ("keep", 1), ("new", 1, 8, 4)],
    )


@pytest.mark.parametrize("stages, written", [(4, "num_warps=8, num_stages=4"), (3, "num_warps=8")])
def test_missing_num_stages_keyword_is_added_only_when_not_the_default(stages, written):
    old = "configs=[Config({'BLOCK': 64}, num_warps=4), Config({'BLOCK': 128}, num_warps=4), Config({'BLOCK': 256})]"
    assert_rewrite(
        INLINE,
        INLINE.replace(old, f"configs=[Config({{'BLOCK': 256}}, {written})]"),
        kernel="k", variant="v1", configs=[("new", 2, 8, stages)],
    )


COMPREHENSION = """import triton
import triton.language as tl

CONFIGS = [triton.Config({"BLOCK": b}, num_warps=w, num_stages=2) for b in (64, 128) for w in (4, 8)]


@triton.autotune(
    configs=CONFIGS,  # shared with the prefill kernel
    key=["n"],
)
@triton.jit
def k(x, n, BLOCK: tl.constexpr):
    pass
"""


def test_generated_configs_become_a_literal_list_when_asked():
    configs = tuple(ConfigValue({"BLOCK": b}, num_warps=w, num_stages=2) for b in (64, 128) for w in (4, 8))
    res = assert_rewrite(
        COMPREHENSION,
        COMPREHENSION.replace(
            "    configs=CONFIGS,",
            "    configs=[\n"
            '        triton.Config({"BLOCK": 64}, num_warps=4, num_stages=2),\n'
            '        triton.Config({"BLOCK": 64}, num_warps=8, num_stages=2),\n'
            "    ],",
        ),
        kernel="k", variant="prune",
        configs=[PlannedConfig(configs[0], 0, None, ()), PlannedConfig(configs[1], 1, None, ())],
        site_kw={"configs": configs, "origin": "comprehension"},
        inline=True,  # configs without provenance: no in-place edit, the inline list is asked for
    )
    assert "no minimal in-place edit" in rewrite_note(res.notes[0]) and "literal list" in rewrite_note(res.notes[1])


def test_crlf_file_stays_crlf():
    after = KERNEL.replace(
        '        # tuned on an H100\n        triton.Config({"BLOCK_T": 32}, num_warps=4, num_stages=2),\n'
        '        triton.Config({"BLOCK_T": 32}, num_warps=8, num_stages=2),\n',
        '        triton.Config({"BLOCK_T": 16}, num_warps=8, num_stages=2),\n',
    )
    assert_rewrite(
        KERNEL.replace("\n", "\r\n"), after.replace("\n", "\r\n"),  # every line, the new one too
        kernel="_decode_kernel", variant="v2", configs=[("keep", 0), ("new", 0, 8, 2)],
    )


CALLER = '''"""Decode entry point."""
import torch

from .kernels import _decode_kernel


def decode(q, out, topk):
    B = q.shape[0]
    grid = (B,)
    _decode_kernel[grid](
        q,
        out,
        topk,
        BLOCK_H=16,
    )
    return out


def decode_inline(q, out, topk, batch_size):
    _decode_kernel[(batch_size,)](q, out, topk, BLOCK_H=16)
'''


def test_v3_adds_param_key_dns_helper_and_caller_keywords():
    kernels = KERNEL.replace(
        '        # tuned on an H100\n        triton.Config({"BLOCK_T": 32}, num_warps=4, num_stages=2),\n'
        '        triton.Config({"BLOCK_T": 32}, num_warps=8, num_stages=2),\n',
        '        triton.Config({"BLOCK_T": 16}, num_warps=8, num_stages=2),\n',
    ).replace(
        'key=["topk"],\n)\n@triton.jit\n', 'key=["topk", "bs_bucket"],\n)\n@triton.jit(do_not_specialize=["bs_bucket"])\n'
    ).replace("    topk,\n    BLOCK_H: tl.constexpr,", "    topk,\n    bs_bucket: tl.int32,\n    BLOCK_H: tl.constexpr,")
    decode = CALLER.replace(
        "from .kernels import _decode_kernel\n",
        "from .kernels import _decode_kernel\n\n\n"
        "def _bs_bucket(B):\n"
        "    # autotune-rewrite v3: batch-size bucket (1, 32, 96) for the autotune key\n"
        "    return 1 if B <= 8 else (32 if B <= 48 else 96)\n",
    ).replace(
        "        BLOCK_H=16,\n    )",
        "        BLOCK_H=16,\n        bs_bucket=_bs_bucket(B),\n    )",
    ).replace(
        "(q, out, topk, BLOCK_H=16)", "(q, out, topk, BLOCK_H=16, bs_bucket=_bs_bucket(batch_size))"
    )
    assert_rewrite(
        {"pkg/kernels.py": KERNEL, "pkg/decode.py": CALLER},
        {"pkg/kernels.py": kernels, "pkg/decode.py": decode},
        kernel="_decode_kernel", variant="v3", configs=[("keep", 0), ("new", 0, 8, 2)],
    )


def test_v3_batch_expr_overrides_inference_and_buckets_are_configurable():
    files = {"pkg/kernels.py": KERNEL, "pkg/decode.py": CALLER}
    site = build_site(files, "_decode_kernel", "pkg/kernels.py")
    res = run_rewrite(files, site, "v3", plan(site, [("keep", 0), ("new", 0, 8, 2)]), batch_expr="q.shape[0]", buckets=(4, 16, 64))
    d = next(c.after for c in res.changes if c.path == "pkg/decode.py")
    assert d.count("bs_bucket=_bs_bucket(q.shape[0])") == 2
    assert "return 1 if B <= 4 else (16 if B <= 16 else (64 if B <= 64 else 128))" in d


def test_v3_refuses_star_args_launch():
    caller = "from k import _decode_kernel\n\ndef go(B, *args):\n    _decode_kernel[(B,)](*args, BLOCK_H=16)\n"
    files = {"k.py": KERNEL, "c.py": caller}
    site = build_site(files, "_decode_kernel", "k.py")
    with pytest.raises(UserError, match=r"c.py:4: .*\*args/\*\*kwargs"):
        run_rewrite(files, site, "v3", plan(site, [("keep", 0), ("new", 0, 8, 2)]))


def test_v3_ambiguous_batch_size_stops_with_a_clear_error():
    caller = "from k import _decode_kernel\n\ndef go(q, o, t, B, bs):\n    _decode_kernel[(B,)](q, o, t, BLOCK_H=16)\n"
    files = {"k.py": KERNEL, "c.py": caller}
    site = build_site(files, "_decode_kernel", "k.py")
    with pytest.raises(UserError, match=r"ambiguous in go\(\) \(B, bs\); pass --batch-expr"):
        run_rewrite(files, site, "v3", plan(site, [("keep", 0), ("new", 0, 8, 2)]))


def test_v3_no_batch_size_stops_with_a_clear_error():
    caller = "from k import _decode_kernel\n\ndef go(q, o, t):\n    _decode_kernel[(1,)](q, o, t, BLOCK_H=16)\n"
    files = {"k.py": KERNEL, "c.py": caller}
    site = build_site(files, "_decode_kernel", "k.py")
    with pytest.raises(UserError, match="cannot infer the batch size in go"):
        run_rewrite(files, site, "v3", plan(site, [("keep", 0), ("new", 0, 8, 2)]))


JIT_CALL = '''import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"B": 16}, num_warps=4), triton.Config({"B": 32}, num_warps=4)], key=("n",))
@triton.heuristics({"EVEN": lambda a: a["n"] % 16 == 0})
@triton.jit(do_not_specialize=[1, "n"])
def k(x, y, n, EVEN: tl.constexpr, B: tl.constexpr):
    pass


def run(x, y, n, num_tokens):
    k[(1,)](x, y, n)
'''


def test_v3_extends_do_not_specialize_and_shifts_indices():
    # The new w8 s3 config is written without num_stages (3 is the default); do_not_specialize
    # gains the name, and index 1 (y) stays right because it is before the new parameter.
    after = _v3_of_jit_call(JIT_CALL).replace(
        "def k(x, y, n, EVEN: tl.constexpr,", "def k(x, y, n, bs_bucket: tl.int32, EVEN: tl.constexpr,"
    ).replace("k[(1,)](x, y, n)", "k[(1,)](x, y, n, bs_bucket=_bs_bucket(num_tokens))")
    assert_rewrite(JIT_CALL, after, kernel="k", variant="v3", configs=[("keep", 0), ("new", 0, 8, 3)])


def _v3_of_jit_call(src: str) -> str:
    """JIT_CALL-shaped source after v3 with configs {B16 w4, B16 w8}: everything but the signature
    and the call, which the tests spell out."""
    return src.replace(
        "import triton.language as tl\n",
        "import triton.language as tl\n\n\n"
        "def _bs_bucket(B):\n"
        "    # autotune-rewrite v3: batch-size bucket (1, 32, 96) for the autotune key\n"
        "    return 1 if B <= 8 else (32 if B <= 48 else 96)\n",
    ).replace(
        'triton.Config({"B": 32}, num_warps=4)], key=("n",))',
        'triton.Config({"B": 16}, num_warps=8)], key=("n", "bs_bucket"))',
    ).replace('@triton.jit(do_not_specialize=[1, "n"])', '@triton.jit(do_not_specialize=[1, "n", "bs_bucket"])')


def test_positional_constexpr_callers_push_the_new_parameter_after_them():
    src = JIT_CALL.replace("k[(1,)](x, y, n)", "k[(1,)](x, y, n, True)")
    after = _v3_of_jit_call(src).replace(
        "def k(x, y, n, EVEN: tl.constexpr, B: tl.constexpr):",
        "def k(x, y, n, EVEN: tl.constexpr, bs_bucket: tl.int32, B: tl.constexpr):",
    ).replace("k[(1,)](x, y, n, True)", "k[(1,)](x, y, n, True, bs_bucket=_bs_bucket(num_tokens))")
    assert_rewrite(src, after, kernel="k", variant="v3", configs=[("keep", 0), ("new", 0, 8, 3)])
