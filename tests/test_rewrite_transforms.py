"""Inline before/after cases for each transform, each with a second-pass idempotence check."""

from __future__ import annotations

import pytest
from sitebuilder import build_site

from autotune_rewrite.errors import UserError
from autotune_rewrite.model import ConfigValue
from autotune_rewrite.rewrite.transform import rewrite
from autotune_rewrite.rewrite.variants import Decision, PlannedConfig

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


def _plan(site, spec):
    """spec: list of ("keep", i) / ("new", template_index, warps, stages)."""
    out = []
    for item in spec:
        if item[0] == "keep":
            out.append(PlannedConfig(site.configs[item[1]], item[1], None, ()))
        else:
            _, t, w, s = item
            base = site.configs[t]
            out.append(PlannedConfig(ConfigValue(dict(base.kwargs), num_warps=w, num_stages=s), None, t, ()))
    return out


def _run(files, site, variant, plan, **kw):
    d = Decision(variant, site, ("sm_120",), ("default",), configs=tuple(plan), add_bs_bucket=(variant == "v3"))
    return rewrite(d, files.__getitem__, **kw)


def _second_pass_unchanged(files_after, site_path, kernel, variant, plan_spec, **kw):
    site2 = build_site(files_after, kernel, site_path)
    # Same configs again, all already written: every element is kept.
    keep = [("keep", i) for i in range(len(site2.configs))]
    res = _run(files_after, site2, variant, _plan(site2, keep), **kw)
    assert res.changes == (), [c.after for c in res.changes]


def _apply(files, res):
    out = dict(files)
    for c in res.changes:
        out[c.path] = c.after
    return out


def test_prune_removes_whole_lines_with_their_comments():
    files = {"k.py": KERNEL}
    site = build_site(files, "_decode_kernel", "k.py")
    res = _run(files, site, "prune", _plan(site, [("keep", 0)]))
    after = res.changes[0].after
    assert after == KERNEL.replace(
        '        # tuned on an H100\n        triton.Config({"BLOCK_T": 32}, num_warps=4, num_stages=2),\n'
        '        triton.Config({"BLOCK_T": 32}, num_warps=8, num_stages=2),\n',
        "",
    )
    _second_pass_unchanged(_apply(files, res), "k.py", "_decode_kernel", "prune", None)


def test_v1_derives_the_new_config_from_the_written_tile():
    files = {"k.py": KERNEL}
    site = build_site(files, "_decode_kernel", "k.py")
    res = _run(files, site, "v1", _plan(site, [("new", 0, 8, 2)]))
    after = res.changes[0].after
    expected_list = (
        "    configs=[\n"
        '        triton.Config({"BLOCK_T": 16}, num_warps=8, num_stages=2),\n'
        "    ],\n"
    )
    assert expected_list in after
    assert after.count("triton.Config(") == 1
    _second_pass_unchanged(_apply(files, res), "k.py", "_decode_kernel", "v1", None)


def test_v2_keeps_and_appends_after_the_last_kept():
    files = {"k.py": KERNEL}
    site = build_site(files, "_decode_kernel", "k.py")
    res = _run(files, site, "v2", _plan(site, [("keep", 0), ("new", 0, 8, 2), ("new", 0, 8, 3)]))
    after = res.changes[0].after
    assert (
        '        triton.Config({"BLOCK_T": 16}, num_warps=4, num_stages=2),  # fits\n'
        '        triton.Config({"BLOCK_T": 16}, num_warps=8, num_stages=2),\n'
        '        triton.Config({"BLOCK_T": 16}, num_warps=8, num_stages=3),\n'
        "    ],\n"
    ) in after
    _second_pass_unchanged(_apply(files, res), "k.py", "_decode_kernel", "v2", None)


INLINE = """import triton
from triton import Config


@triton.autotune(configs=[Config({'BLOCK': 64}, num_warps=4), Config({'BLOCK': 128}, num_warps=4), Config({'BLOCK': 256})], key=['n'])
@triton.jit
def k(x, n, BLOCK: tl.constexpr):
    pass
"""


def test_inline_list_keeps_the_files_alias_and_quotes():
    files = {"k.py": INLINE}
    site = build_site(files, "k", "k.py")
    res = _run(files, site, "v2", _plan(site, [("keep", 0), ("keep", 1), ("new", 1, 8, 4)]))
    assert res.changes[0].after == INLINE.replace(
        ", Config({'BLOCK': 256})]", ", Config({'BLOCK': 128}, num_warps=8, num_stages=4)]"
    )
    _second_pass_unchanged(_apply(files, res), "k.py", "k", "v2", None)


def test_missing_num_stages_keyword_is_added_only_when_not_the_default():
    files = {"k.py": INLINE}
    site = build_site(files, "k", "k.py")
    res = _run(files, site, "v1", _plan(site, [("new", 2, 8, 4)]))
    assert "configs=[Config({'BLOCK': 256}, num_warps=8, num_stages=4)]" in res.changes[0].after
    res = _run(files, site, "v1", _plan(site, [("new", 2, 8, 3)]))
    assert "configs=[Config({'BLOCK': 256}, num_warps=8)]" in res.changes[0].after


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


def test_generated_configs_become_a_literal_list():
    files = {"k.py": COMPREHENSION}
    configs = tuple(ConfigValue({"BLOCK": b}, num_warps=w, num_stages=2) for b in (64, 128) for w in (4, 8))
    site = build_site(files, "k", "k.py", configs=configs, origin="comprehension")
    plan = [PlannedConfig(configs[0], 0, None, ()), PlannedConfig(configs[1], 1, None, ())]
    res = _run(files, site, "prune", plan)
    assert res.changes[0].after == COMPREHENSION.replace(
        "    configs=CONFIGS,",
        "    configs=[\n"
        '        triton.Config({"BLOCK": 64}, num_warps=4, num_stages=2),\n'
        '        triton.Config({"BLOCK": 64}, num_warps=8, num_stages=2),\n'
        "    ],",
    )
    assert "literal list" in res.notes[0]
    _second_pass_unchanged(_apply(files, res), "k.py", "k", "prune", None)


def test_crlf_file_stays_crlf():
    crlf = KERNEL.replace("\n", "\r\n")
    files = {"k.py": crlf}
    site = build_site(files, "_decode_kernel", "k.py")
    res = _run(files, site, "v2", _plan(site, [("keep", 0), ("new", 0, 8, 2)]))
    after = res.changes[0].after
    assert "\n" not in after.replace("\r\n", "")
    assert 'triton.Config({"BLOCK_T": 16}, num_warps=8, num_stages=2),\r\n' in after
    _second_pass_unchanged(_apply(files, res), "k.py", "_decode_kernel", "v2", None)


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
    files = {"pkg/kernels.py": KERNEL, "pkg/decode.py": CALLER}
    site = build_site(files, "_decode_kernel", "pkg/kernels.py")
    res = _run(files, site, "v3", _plan(site, [("keep", 0), ("new", 0, 8, 2)]))
    got = {c.path: c.after for c in res.changes}
    k = got["pkg/kernels.py"]
    assert 'key=["topk", "bs_bucket"],' in k
    assert '@triton.jit(do_not_specialize=["bs_bucket"])\n' in k
    assert "    topk,\n    bs_bucket: tl.int32,\n    BLOCK_H: tl.constexpr," in k
    d = got["pkg/decode.py"]
    assert d == CALLER.replace(
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
    after = _apply(files, res)
    _second_pass_unchanged(after, "pkg/kernels.py", "_decode_kernel", "v3", None)


def test_v3_batch_expr_overrides_inference_and_buckets_are_configurable():
    files = {"pkg/kernels.py": KERNEL, "pkg/decode.py": CALLER}
    site = build_site(files, "_decode_kernel", "pkg/kernels.py")
    res = _run(files, site, "v3", _plan(site, [("keep", 0), ("new", 0, 8, 2)]), batch_expr="q.shape[0]", buckets=(4, 16, 64))
    d = next(c.after for c in res.changes if c.path == "pkg/decode.py")
    assert d.count("bs_bucket=_bs_bucket(q.shape[0])") == 2
    assert "return 1 if B <= 4 else (16 if B <= 16 else (64 if B <= 64 else 128))" in d


def test_v3_refuses_star_args_launch():
    caller = "from k import _decode_kernel\n\ndef go(B, *args):\n    _decode_kernel[(B,)](*args, BLOCK_H=16)\n"
    files = {"k.py": KERNEL, "c.py": caller}
    site = build_site(files, "_decode_kernel", "k.py")
    with pytest.raises(UserError, match=r"c.py:4: .*\*args/\*\*kwargs"):
        _run(files, site, "v3", _plan(site, [("keep", 0), ("new", 0, 8, 2)]))


def test_v3_ambiguous_batch_size_stops_with_a_clear_error():
    caller = "from k import _decode_kernel\n\ndef go(q, o, t, B, bs):\n    _decode_kernel[(B,)](q, o, t, BLOCK_H=16)\n"
    files = {"k.py": KERNEL, "c.py": caller}
    site = build_site(files, "_decode_kernel", "k.py")
    with pytest.raises(UserError, match=r"ambiguous in go\(\) \(B, bs\); pass --batch-expr"):
        _run(files, site, "v3", _plan(site, [("keep", 0), ("new", 0, 8, 2)]))


def test_v3_no_batch_size_stops_with_a_clear_error():
    caller = "from k import _decode_kernel\n\ndef go(q, o, t):\n    _decode_kernel[(1,)](q, o, t, BLOCK_H=16)\n"
    files = {"k.py": KERNEL, "c.py": caller}
    site = build_site(files, "_decode_kernel", "k.py")
    with pytest.raises(UserError, match="cannot infer the batch size in go"):
        _run(files, site, "v3", _plan(site, [("keep", 0), ("new", 0, 8, 2)]))


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
    files = {"k.py": JIT_CALL}
    site = build_site(files, "k", "k.py")
    res = _run(files, site, "v3", _plan(site, [("keep", 0), ("new", 0, 8, 3)]))
    after = res.changes[0].after
    assert 'key=("n", "bs_bucket"))' in after
    assert '@triton.jit(do_not_specialize=[1, "n", "bs_bucket"])' in after  # index 1 (y) is before the new param
    assert "def k(x, y, n, bs_bucket: tl.int32, EVEN: tl.constexpr, B: tl.constexpr):" in after
    assert "k[(1,)](x, y, n, bs_bucket=_bs_bucket(num_tokens))" in after
    after_files = _apply(files, res)
    _second_pass_unchanged(after_files, "k.py", "k", "v3", None)


def test_positional_constexpr_callers_push_the_new_parameter_after_them():
    src = JIT_CALL.replace("k[(1,)](x, y, n)", "k[(1,)](x, y, n, True)")
    files = {"k.py": src}
    site = build_site(files, "k", "k.py")
    res = _run(files, site, "v3", _plan(site, [("keep", 0), ("new", 0, 8, 3)]))
    after = res.changes[0].after
    assert "def k(x, y, n, EVEN: tl.constexpr, bs_bucket: tl.int32, B: tl.constexpr):" in after
