"""Launch specs: settings tables, annotations and defaults, the stanza, and Triton's specialization.

The specialization tests use Triton's own runtime binder (``create_function_from_signature``
with the native ``specialize_impl``, as ``JITFunction.run`` calls it) as the oracle, fed with
real torch tensors and ints, so "reproduce the runtime" is checked against the runtime itself.
"""

from __future__ import annotations

import ast
import inspect
import tomllib

import pytest

from autotune_rewrite.spec import launch_spec
from autotune_rewrite.spec.pointer_params import pointer_params
from autotune_rewrite.errors import UserError
from autotune_rewrite.evidence import LaunchSpec
from autotune_rewrite.model import AutotuneSite, ConfigValue, KernelParam, Span
from autotune_rewrite.settings import from_table

SPAN = Span(1, 0, 1, 1)


def make_site(params, configs=(), dns=(), path="pkg/k.py", kernel="kern") -> AutotuneSite:
    # Defaults are given as literals here; the locator evaluates real ones (see the scan tests below).
    kps = tuple(
        KernelParam(name=n, index=i, annotation=a, is_constexpr=bool(a and "constexpr" in a), default=d,
                    default_known=d is not None, default_value=None if d is None else ast.literal_eval(d))
        for i, (n, a, d) in enumerate(params)
    )
    return AutotuneSite(
        path=path, line=1, span=SPAN, form="decorator", kernel=kernel, kernel_span=SPAN, kernel_path=path,
        params=kps, do_not_specialize=tuple(dns), decorators=(), key=None, key_span=None,
        configs=tuple(configs), configs_origin="literal list", configs_span=None, unresolved_reason=None,
    )


# --------------------------------------------------------------------------- settings tables
def _entries(table, file="pyproject.toml"):
    return from_table(table, file).kernels


def test_settings_entries_are_checked_and_normalized():
    raw = {"kernels": [{"kernel": "pkg/k.py::kern", "spec": "a",
                        "types": {"q": "*bfloat16", "n": "int32", "s": "tl.float32"},
                        "constexprs": {"D": 64}, "values": {"n": 48}}]}
    (entry,) = _entries(raw)
    assert entry.types == (("q", "*bf16"), ("n", "i32"), ("s", "fp32"))
    assert entry.constexprs == (("D", 64),) and entry.values == (("n", 48),)


@pytest.mark.parametrize("table, needle", [
    ({"kernel": "no-separator"}, "path/to/file.py::kernel_name"),
    ({"kernel": "a.py::k", "types": {"q": "*bf17"}}, "not a Triton type"),
    ({"kernel": "a.py::k", "type": {"q": "*bf16"}}, "kernels[0].type is not a known key; did you mean 'types'?"),
    ({"kernel": "a.py::k", "values": {"n": "16"}}, "values.n must be an integer"),
    ({"kernel": "a.py::k", "types": "i32"}, "kernels[0].types must be a table"),
])
def test_malformed_settings_are_user_errors(table, needle):
    with pytest.raises(UserError) as err:
        _entries({"kernels": [table]}, "pyproject.toml")
    assert needle in str(err.value) and str(err.value).startswith("pyproject.toml: [tool.autotune-rewrite] kernels[0]")


def test_duplicate_spec_names_are_rejected():
    table = {"kernel": "a.py::k", "spec": "s"}
    with pytest.raises(UserError, match="two specs named 's'"):
        _entries({"kernels": [table, dict(table)]})


# --------------------------------------------------------------------------- resolution
KERNEL_WITH_DEFAULTS = """\
import triton
import triton.language as tl
from .dims import HEAD_DIM

HEAD = 2 * 64
SCALE = tl.constexpr(HEAD // 2)


@triton.autotune(configs=[triton.Config({"BLOCK": 32})], key=[])
@triton.jit
def kern(x: "*fp16", n: tl.int32, eps=1e-6, flag=True, stride=64, D: tl.constexpr = HEAD,
         E: tl.constexpr = HEAD_DIM, S: tl.constexpr = SCALE, F: tl.constexpr = triton.cdiv(HEAD, 48),
         BLOCK: tl.constexpr = None, R: tl.constexpr = UNDEFINED):
    pass
"""


def test_types_and_values_from_annotations_and_defaults(tmp_path):
    from autotune_rewrite.locate.scan import scan

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "dims.py").write_text("HEAD_DIM = 64 + 16\n")
    (tmp_path / "pkg" / "k.py").write_text(KERNEL_WITH_DEFAULTS)
    (site,) = scan(tmp_path).sites
    res = launch_spec.resolve_specs(site)
    assert res.missing == (("default", ("R",)),)  # a name defined nowhere stays unknown
    (spec,) = res.specs
    assert dict(spec.types) == {"x": "*fp16", "n": "i32", "eps": "fp32", "flag": "u1", "stride": "i32",
                                "D": "constexpr", "E": "constexpr", "S": "constexpr", "F": "constexpr",
                                "BLOCK": "constexpr", "R": "constexpr"}
    # Module constants (also an imported one, and tl.constexpr/triton.cdiv of them), not only literals.
    assert dict(spec.constexprs) == {"D": 128, "E": 80, "S": 64, "F": 3}  # BLOCK: every config sets it
    assert dict(spec.int_values) == {"stride": 64}  # what the runtime sees when the caller omits it
    assert spec.source == "annotations"


def test_settings_override_source_and_select_by_path_and_kernel():
    site = make_site([("q", None, None), ("n", "tl.int64", None), ("H", "tl.constexpr", "16")])
    entries = _entries({"kernels": [
        {"kernel": "pkg/k.py::kern", "spec": "H=16", "types": {"q": "*bf16"}},
        {"kernel": "pkg/k.py::kern", "spec": "H=32", "types": {"q": "*bf16"}, "constexprs": {"H": 32}},
        {"kernel": "pkg/other.py::kern", "spec": "x", "types": {"q": "*fp32"}},
    ]})
    res = launch_spec.resolve_specs(site, entries)
    assert [s.name for s in res.specs] == ["H=16", "H=32"]
    assert [dict(s.constexprs)["H"] for s in res.specs] == [16, 32]
    assert all(dict(s.types) == {"q": "*bf16", "n": "i64", "H": "constexpr"} for s in res.specs)


def test_unknown_parameter_in_settings_is_named():
    site = make_site([("q", None, None)])
    entries = _entries({"kernels": [{"kernel": "pkg/k.py::kern", "types": {"qq": "*bf16"}}]})
    with pytest.raises(UserError, match="no parameter named qq"):
        launch_spec.resolve_specs(site, entries)


def test_missing_values_give_an_assume_table_that_parses_and_guesses_nothing():
    source = (
        "import triton.language as tl\n"
        "def kern(Q, Out, n, stride, SCALE: tl.constexpr, BLOCK: tl.constexpr):\n"
        "    q_ptrs = Q + tl.arange(0, BLOCK) * stride\n"
        "    tl.store(Out + tl.arange(0, BLOCK), tl.load(q_ptrs) * SCALE)\n"
    )
    site = make_site([("Q", None, None), ("Out", None, None), ("n", None, None), ("stride", None, None),
                      ("SCALE", "tl.constexpr", None), ("BLOCK", "tl.constexpr", None)],
                     configs=[ConfigValue({"BLOCK": 64})])
    res = launch_spec.resolve_specs(site, kernel_source=source, exact=True)
    # --exact: nothing says what Q, Out, n and stride are, nor SCALE's value.
    assert not res.ok and res.missing == (("default", ("Q", "Out", "n", "stride", "SCALE")),)
    assert tomllib.loads(res.stanza) == {"tool": {"autotune-rewrite": {"assume": {}}}}
    assert [ln.split("=")[0] for ln in res.stanza.splitlines()[1:]] == ["# Q ", "# Out ", "# n ", "# stride ",
                                                                       "# SCALE "]
    # Filled in, it resolves.
    again = launch_spec.resolve_specs(site, kernel_source=source, assume={"SCALE": (2,)}, assume_dtype="fp16")
    assert again.ok and dict(again.specs[0].constexprs)["SCALE"] == 2


SWAPPED_POINTERS = """
import triton.language as tl


def scatter(src, dst, ids, starts, ends, N: tl.constexpr, FORWARD: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    slot = tl.program_id(0)
    group = tl.load(ids + row)
    if group > 0:
        slot -= tl.load(starts + group - 1)
    target = slot
    if group > 0:
        target += tl.load(ends + group - 1)
    src += row * N
    dst += tl.multiple_of(target * N, N)
    inp = src if FORWARD else dst
    out = dst if FORWARD else src
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(inp + offs))
"""


def test_a_pointer_chosen_by_a_conditional_and_offsets_summed_from_loads_are_read_as_such():
    from autotune_rewrite.spec.pointer_dtypes import index_pointer_params

    # ``inp = src if FORWARD else dst``: both are pointers (not ints of unknown value), and what
    # ``starts``/``ends`` hold is summed into the row a store goes to: ints, through ``-=``/``+=``
    # and a local copy, whichever of the two loads reached it first.
    assert pointer_params(SWAPPED_POINTERS, "scatter") == ("src", "dst", "ids", "starts", "ends")
    assert index_pointer_params(SWAPPED_POINTERS, "scatter") == ("ids", "starts", "ends")


SCORES_TO_SLOTS = """
import triton.language as tl


def kern(q, k, counts, slots, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    qk = tl.dot(tl.load(q + offs[:, None] * BLOCK + offs[None, :]), tl.load(k + offs[:, None] * BLOCK + offs[None, :]))
    keep = qk >= tl.max(qk, axis=1, keep_dims=True)
    idx = tl.where(keep, offs[None, :], n)
    per_row = tl.sum(keep.to(tl.int32), axis=1, keep_dims=True)
    start = tl.atomic_add(counts + offs[:, None], per_row)
    tl.store(slots + start + offs[None, :], idx, mask=idx < n)
"""


def test_what_a_comparison_or_an_atomic_returns_does_not_make_the_compared_tensors_ints():
    from autotune_rewrite.spec.pointer_dtypes import index_pointer_params

    # ``keep`` is a bool made by comparing scores: counting it gives an int, but q and k stay data
    # (an int32 tl.dot does not compile); what the atomic returns is what ``counts`` held, and it
    # is an offset of the store's address: counts holds ints.
    assert index_pointer_params(SCORES_TO_SLOTS, "kern") == ("counts",)


MASK_FROM_MEMORY = """
import triton.language as tl


def kern(keep_ptr, hits_ptr, flags_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    hit = tl.load(hits_ptr + offs, mask=offs < n, other=False)
    tl.store(keep_ptr + offs, False, mask=hit)
    tl.store(keep_ptr + offs + n, True, mask=tl.load(flags_ptr + offs))
"""


def test_a_tensor_loaded_as_a_mask_is_assumed_bool():
    from autotune_rewrite.spec.pointer_dtypes import mask_pointer_params

    # Triton takes only a boolean mask: a bf16 guess for hits_ptr would not compile.
    assert mask_pointer_params(MASK_FROM_MEMORY, "kern") == ("hits_ptr", "flags_ptr")
    site = make_site([("keep_ptr", None, None), ("hits_ptr", None, None), ("flags_ptr", None, None), ("n", None, None),
                      ("BLOCK", "tl.constexpr", None)], configs=[ConfigValue({"BLOCK": 16})])
    (spec,) = launch_spec.resolve_specs(site, kernel_source=MASK_FROM_MEMORY).specs
    types = dict(spec.types)
    assert types["hits_ptr"] == types["flags_ptr"] == "*i1" and types["keep_ptr"] == "*bf16"
    assert any(a.parameter == "hits_ptr" and "mask=" in a.source for a in spec.assumptions)


def test_assume_dtype_fills_only_pointers_and_marks_them():
    source = (
        "import triton.language as tl\n"
        "def kern(Q, KV, out_ptr, n, BLOCK: tl.constexpr):\n"
        "    base = KV + n\n"
        "    blk = tl.make_block_ptr(base=Q, shape=(n,), strides=(1,), offsets=(0,), block_shape=(BLOCK,), order=(0,))\n"
        "    tl.store(out_ptr, tl.load(base) + tl.sum(tl.load(blk)))\n"
    )
    site = make_site([("Q", None, None), ("KV", None, None), ("out_ptr", None, None), ("n", None, None),
                      ("BLOCK", "tl.constexpr", None)], configs=[ConfigValue({"BLOCK": 16})])
    assert pointer_params(source, "kern") == ("Q", "KV", "out_ptr")
    res = launch_spec.resolve_specs(site, assume_dtype="bf16", kernel_source=source)
    (spec,) = res.specs
    assert spec.assumed == ("Q", "KV", "out_ptr")
    assert [t for _, t in spec.types][:3] == ["*bf16"] * 3
    assert res.ok and spec.divisible == ("n",)  # an int of unknown value: divisible by 16, listed
    assert [a.parameter for a in spec.assumptions] == ["Q", "KV", "out_ptr", "n"]
    with pytest.raises(UserError, match="not a Triton dtype"):
        launch_spec.resolve_specs(site, assume_dtype="bf17", kernel_source=source)


# --------------------------------------------------------------------------- specialization
def _oracle(fn, args, dns=()):
    """Triton 3.6's own runtime specialization of ``fn`` called with ``args``."""
    from triton.backends.nvidia.compiler import CUDABackend
    from triton.runtime.jit import KernelParam as TritonParam
    from triton.runtime.jit import create_function_from_signature

    sig = inspect.signature(fn)
    params = [TritonParam(i, p, p.name in dns, False) for i, p in enumerate(sig.parameters.values())]
    _, specialization, _ = create_function_from_signature(sig, params, CUDABackend)(*args)
    names = list(sig.parameters)
    signature = tuple((n, s[0]) for n, s in zip(names, specialization))
    constexprs = tuple((n, a) for n, s, a in zip(names, specialization, args) if s[0] == "constexpr")
    divisible = tuple(n for n, s in zip(names, specialization) if s[1] == "D")
    return signature, constexprs, divisible


def test_specialization_matches_triton_runtime():
    torch = pytest.importorskip("torch")
    import triton.language as tl

    def kern(x, out, n16, n17, one, one_pinned: tl.int32, dns16, dns1, eps, flag, big, BLOCK: tl.constexpr):
        pass

    args = (torch.empty(4, dtype=torch.bfloat16), torch.empty(4, dtype=torch.float32),
            4096, 17, 1, 1, 32, 1, 0.5, True, 2**40, 64)
    site = make_site([
        ("x", None, None), ("out", None, None), ("n16", None, None), ("n17", None, None), ("one", None, None),
        ("one_pinned", "tl.int32", None), ("dns16", None, None), ("dns1", None, None), ("eps", None, None),
        ("flag", None, None), ("big", None, None), ("BLOCK", "tl.constexpr", None),
    ], configs=[ConfigValue({"BLOCK": 64})], dns=("dns16", "7"))  # by name and by index, as Triton allows
    spec = LaunchSpec(
        name="s",
        types=(("x", "*bf16"), ("out", "*fp32"), ("n16", "i32"), ("n17", "i32"), ("one", "i32"),
               ("one_pinned", "i32"), ("dns16", "i32"), ("dns1", "i32"), ("eps", "fp32"), ("flag", "u1"),
               ("big", "i64"), ("BLOCK", "constexpr")),
        constexprs=(),
        int_values=(("n16", 4096), ("n17", 17), ("one", 1), ("one_pinned", 1), ("dns16", 32), ("dns1", 1),
                    ("big", 2**40)),
    )
    mine = launch_spec.specialize(site, spec, site.configs[0])
    signature, constexprs, divisible = _oracle(kern, args, dns=("dns16", "dns1"))
    assert mine.signature == signature
    assert mine.constexprs == constexprs
    assert set(mine.divisible_by_16) == set(divisible)
    # The facts the oracle establishes, spelled out:
    assert ("one", "constexpr") in mine.signature and ("one_pinned", "i32") in mine.signature
    assert set(divisible) == {"x", "out", "n16", "big"}


def test_unknown_int_values_compile_like_a_generic_value():
    site = make_site([("x", None, None), ("n", None, None), ("BLOCK", "tl.constexpr", None)],
                     configs=[ConfigValue({"BLOCK": 64})])
    spec = LaunchSpec("s", (("x", "*fp16"), ("n", "i32"), ("BLOCK", "constexpr")), ())
    spz = launch_spec.specialize(site, spec, site.configs[0])
    assert spz.signature == (("x", "*fp16"), ("n", "i32"), ("BLOCK", "constexpr"))
    assert spz.divisible_by_16 == ("x",) and spz.constexprs == (("BLOCK", 64),)
    assert launch_spec.unknown_ints(site, spec) == ("n",)
