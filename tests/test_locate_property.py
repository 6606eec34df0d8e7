"""Property test: generated decorator/config shapes never crash the scan, and every shape the
locator claims to resolve comes back with exactly the configs the source describes."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autotune_rewrite.locate.scan import scan
from locate_helpers import text_at

IMPORTS = {
    "triton": ("import triton\n", "triton.autotune", "triton.Config"),
    "alias": ("import triton as tt\n", "tt.autotune", "tt.Config"),
    "from": ("from triton import autotune, Config\n", "autotune", "Config"),
    "runtime": ("from triton.runtime.autotuner import autotune as at, Config as C\n", "at", "C"),
}

config = st.tuples(
    st.dictionaries(st.sampled_from(["BLOCK_M", "BLOCK_N", "BLOCK_T"]), st.sampled_from([16, 32, 64, 128]), max_size=2),
    st.none() | st.sampled_from([1, 2, 4, 8]),
    st.none() | st.sampled_from([1, 2, 3, 4]),
)


def config_src(cfg, C: str, positional: bool) -> str:
    kwargs, warps, stages = cfg
    meta = "{" + ", ".join(f'"{k}": {v}' for k, v in kwargs.items()) + "}"
    if positional and warps is not None and stages is not None:
        return f"{C}({meta}, {warps}, {stages})"
    opts = "".join(f", {n}={v}" for n, v in (("num_warps", warps), ("num_stages", stages)) if v is not None)
    return f"{C}({meta}{opts})"


def label(cfg) -> str:
    kwargs, warps, stages = cfg
    meta = " ".join(f"{k}={v}" for k, v in kwargs.items())
    return " ".join(filter(None, [meta, f"w{warps or 4} s{stages or 3}"]))


@st.composite
def programs(draw):
    style = draw(st.sampled_from(sorted(IMPORTS)))
    head, autotune, C = IMPORTS[style]
    cfgs = draw(st.lists(config, min_size=1, max_size=4))
    shape = draw(st.sampled_from(["literal", "positional", "variable", "helper", "concat", "conditional",
                                  "comprehension", "filter", "yaml", "kwargs"]))
    form = draw(st.sampled_from(["decorator", "call"]))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    indent = draw(st.sampled_from(["    ", "\t"]))
    elems = [config_src(c, C, shape == "positional") for c in cfgs]
    lines = [head, "import os\nimport yaml\n", "import triton.language as tl\n", "# @triton.autotune(configs=[], key=[])\n"]
    expected = [label(c) for c in cfgs]
    key = '["n"]'
    if shape in ("literal", "positional"):
        arg = "[\n" + "".join(f"{indent}{e},\n" for e in elems) + "]"
    elif shape == "variable":
        lines.append(f"CONFIGS = [{', '.join(elems)}]\n")
        arg = "CONFIGS"
    elif shape == "helper":
        lines.append(f"def make():\n{indent}out = []\n{indent}for c in [{', '.join(elems)}]:\n{indent}{indent}out.append(c)\n{indent}return out\n")
        arg = "make()"
    elif shape == "concat":
        lines.append(f"A = [{elems[0]}]\nB = [{', '.join(elems[1:])}]\n")
        arg = "A + B"
    elif shape == "conditional":
        lines.append(f"A = [{elems[0]}]\n")
        # ``os.environ.get`` is read at its default (None: unset), so the else branch is in force;
        # never the union of both branches.
        arg = f"A if os.environ.get('X') else [{', '.join(elems)}]"
    elif shape == "comprehension":
        blocks = sorted({v for c in cfgs for v in c[0].values()} or {16})
        arg = f'[{C}({{"BLOCK": b}}, num_warps=w) for b in {blocks} for w in (4, 8) if b * w <= 512]'
        expected = [f"BLOCK={b} w{w} s3" for b in blocks for w in (4, 8) if b * w <= 512]
    elif shape == "filter":
        arg = f"list(filter(lambda c: c.num_stages == 2, [{', '.join(elems)}]))"
        expected = [label(c) for c in cfgs if c[2] == 2]
    elif shape == "yaml":
        arg, expected = 'yaml.safe_load(open("c.yaml"))', None
    else:
        lines.append(f"OPTS = dict(configs=[{', '.join(elems)}], key=['n'])\n")
        arg, expected = None, None
    call = (f"{autotune}(**OPTS)" if arg is None else
            f"{autotune}({arg}, {key})" if shape == "positional" else f"{autotune}(configs={arg}, key={key})")
    if form == "decorator":
        lines.append(f"@{call}\n@triton.jit\ndef kern(X, n, BLOCK: tl.constexpr):\n{indent}pass\n")
    else:
        lines.append(f"@triton.jit\ndef _raw(X, n, BLOCK: tl.constexpr):\n{indent}pass\nkern = {call}(_raw)\n")
    lines.append(f"def launch(x, n):\n{indent}kern[(n,)](x, n)\n")
    if "import triton\n" not in head:
        lines.insert(0, "import triton\n")
    source = "\n".join(lines).replace("\n", newline)
    return source, shape, form, expected


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_generated_shapes_never_crash_and_resolve(program):
    source, shape, form, expected = program
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "gen.py"
        path.write_bytes(source.encode())
        result = scan(path, jobs=1)
    assert result.errors == ()
    (site,) = result.sites
    assert site.form == form
    assert len(site.launches) == 1
    if expected is None:
        assert site.configs is None and site.unresolved_reason
        return
    assert site.unresolved_reason is None, site.unresolved_reason
    assert [c.label() for c in site.configs] == expected
    if shape in ("literal", "positional", "variable", "concat"):
        text = source.replace("\r\n", "\n")
        for c in site.configs:
            assert text_at(text, c.span).split("(")[0] in ("triton.Config", "tt.Config", "Config", "C")


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200))
def test_arbitrary_text_never_crashes(text):
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "junk.py").write_text("# autotune\n" + text, encoding="utf-8")
        result = scan(Path(tmp), jobs=1)
    assert result.files_scanned == 1
    assert result.sites == ()  # a comment that says autotune is not a site
    assert all(e.path == "junk.py" and e.message.startswith("does not parse") for e in result.errors)


# Arbitrary expressions in the configs/key position: whatever they are, the scan reports one
# site, either resolved or with a reason, and never crashes or hangs.
atoms = st.sampled_from([
    "1", "0", "-3", "10**12", "'s'", "None", "True", "BASE", "unknown", "os.environ", "[]", "{}",
    'triton.Config({"B": 1})', 'triton.Config({"B": 2}, num_warps=8)', "triton.Config(1)",
    "range(3)", "range(10**12)", "x", "lambda c: c",
])


def _combine(children):
    unary = st.builds(lambda a, op: f"{op}({a})", children, st.sampled_from(["-", "not ", "~"]))
    binary = st.builds(lambda a, b, op: f"({a}) {op} ({b})", children, children,
                       st.sampled_from(["+", "*", "-", "//", "**", "<<", "%", "<", "in", "and", "or"]))
    calls = st.builds(lambda f, a: f"{f}({a})", st.sampled_from(
        ["list", "tuple", "sorted", "len", "make", "filter(lambda c: c, ", "itertools.product"]), children)
    displays = st.builds(lambda xs: "[" + ", ".join(xs) + "]", st.lists(children, max_size=3))
    comps = st.builds(lambda a, b: f"[{a} for x in {b}]", children, children)
    cond = st.builds(lambda a, b, c: f"({a}) if ({b}) else ({c})", children, children, children)
    subs = st.builds(lambda a, b: f"({a})[{b}]", children, children)
    attr = st.builds(lambda a: f"({a}).num_warps", children)
    return unary | binary | calls | displays | comps | cond | subs | attr


expressions = st.recursive(atoms, _combine, max_leaves=8)


def _balanced(expr: str) -> str:
    # ``filter(lambda c: c, X)`` above leaves one parenthesis open.
    return expr + ")" * (expr.count("(") - expr.count(")"))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions, expressions)
def test_arbitrary_config_expressions_never_crash(configs, key):
    source = (
        "import itertools\nimport os\nimport triton\n\n"
        "BASE = [triton.Config({'B': 16}, num_warps=4)]\n\n"
        "def make(n=2):\n    out = []\n    for i in range(n):\n        out.append(triton.Config({'B': i}))\n    return out\n\n"
        f"@triton.autotune(configs={_balanced(configs)}, key={_balanced(key)})\n@triton.jit\ndef k(X, n):\n    pass\n"
    )
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "gen.py").write_text(source)
        result = scan(Path(tmp), jobs=1)
    if result.errors:  # the generator can write invalid syntax (``-(lambda c: c)`` is fine, others not)
        assert [e.message.startswith("does not parse") for e in result.errors] == [True]
        return
    (site,) = result.sites
    assert (site.configs is None) != (site.unresolved_reason is None)
    assert site.key is None or all(isinstance(k, str) for k in site.key)


def test_a_name_the_parser_takes_but_libcst_rejects_is_a_file_error(tmp_path):
    # Found by the property above: LibCST's parser accepts U+13460 (an Egyptian hieroglyph added
    # to Unicode's identifier set after this Python's) and its Name node then fails validation.
    (tmp_path / "junk.py").write_text("# autotune\nx = \U00013460\n", encoding="utf-8")
    (tmp_path / "ok.py").write_text("import triton\n\n\n@triton.autotune(configs=[], key=[])\n@triton.jit\n"
                                    "def k():\n    pass\n", encoding="utf-8")
    result = scan(tmp_path, jobs=1)
    assert [e.path for e in result.errors] == ["junk.py"] and result.errors[0].message.startswith("does not parse")
    assert [s.kernel for s in result.sites] == ["k"]
