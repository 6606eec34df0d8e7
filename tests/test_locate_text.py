"""Text-level guarantees: byte-identical LibCST round trip of every fixture, spans that match
a full-module PositionProvider despite the trimmed metadata copy, CRLF and tab indentation."""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from autotune_rewrite.locate.facts import analyze_source
from autotune_rewrite.locate.scan import scan
from locate_helpers import FIXTURES, text_at

ALL_FIXTURES = sorted(p for p in FIXTURES.rglob("*.py"))


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_libcst_round_trip_is_byte_identical(path):
    data = path.read_bytes()
    assert cst.parse_module(data).bytes == data


def _full_positions(source: str):
    """Decorator spans as an untrimmed PositionProvider reports them."""
    module = cst.parse_module(source)
    pos = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    out = []
    for node in module.body:
        if isinstance(node, cst.FunctionDef):
            for d in node.decorators:
                r = pos[d.decorator]
                out.append((r.start.line, r.start.column, r.end.line, r.end.column))
    return out


@pytest.mark.parametrize("name", ["pkg/kernels.py", "pkg/shapes.py", "pkg/aliases.py"])
def test_trimmed_metadata_gives_the_full_module_positions(name):
    source = (FIXTURES / "repo" / name).read_text()
    facts = analyze_source(name, source.encode(), "pkg." + name[4:-3], False, "sites")
    spans = {(s.site.span.start_line, s.site.span.start_col, s.site.span.end_line, s.site.span.end_col)
             for s in facts.sites if s.site.form == "decorator"}
    assert spans and spans <= set(_full_positions(source))


KERNEL = (
    "import triton\n"
    "import triton.language as tl\n"
    "\n"
    "@triton.jit\n"
    "def helper(x):\n"
    "\treturn x  # a kernel body before the site shifts nothing\n"
    "\n"
    "@triton.autotune(\n"
    "\tconfigs=[\n"
    "\t\ttriton.Config({'BLOCK': 16}, num_warps=4),\n"
    "\t\ttriton.Config({'BLOCK': 32}, num_warps=8),\n"
    "\t],\n"
    "\tkey=['n'],\n"
    ")\n"
    "@triton.jit\n"
    "def k(X, n, BLOCK: tl.constexpr):\n"
    "\tif n > 0:\n"
    "\t\ttl.store(X, 1)\n"
    "\n"
    "def launch(x, n):\n"
    "\tk[(1,)](x, n)\n"
)


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_crlf_and_tabs(tmp_path, newline):
    source = KERNEL.replace("\n", newline)
    (tmp_path / "mod.py").write_bytes(source.encode())
    result = scan(tmp_path, jobs=1)
    assert result.errors == ()
    (site,) = result.sites
    assert site.line == 8 and site.span.start_col == 1
    assert [c.label() for c in site.configs] == ["BLOCK=16 w4 s3", "BLOCK=32 w8 s3"]
    text = source.replace("\r\n", "\n")
    assert text_at(text, site.configs[1].span) == "triton.Config({'BLOCK': 32}, num_warps=8)"
    assert site.configs[1].span.start_col == 2  # two tabs
    assert text_at(text, site.kernel_span).startswith("def k(") and site.kernel_span.end_line == 18
    assert [(l.line, l.span.start_col) for l in site.launches] == [(21, 1)]
    assert cst.parse_module(source.encode()).bytes == source.encode()


@pytest.mark.parametrize("name", ["pkg/shapes.py", "pkg/caller.py", "pkg/aliases.py"])
def test_names_are_what_qualified_name_provider_reports(name):
    from libcst.metadata import QualifiedNameProvider

    from autotune_rewrite.locate.names import absolute_names
    from autotune_rewrite.locate.parsed import ParsedModule

    source = (FIXTURES / "repo" / name).read_text()
    pm = ParsedModule.parse(name, source, "pkg." + name[4:-3], False)
    provider = MetadataWrapper(pm.tree, unsafe_skip_copy=True).resolve(QualifiedNameProvider)
    checked = 0

    class Check(cst.CSTVisitor):
        def on_visit(self, node):
            nonlocal checked
            if isinstance(node, (cst.Name, cst.Attribute, cst.Call)):
                value = provider.get(node, set())
                value = value() if callable(value) else value
                assert pm.names(node) == absolute_names(value, pm.module_name, False), pm.code(node)
                checked += 1
            return True

    pm.tree.visit(Check())
    assert checked > 40


def test_syntax_python_ast_rejects_falls_back_to_the_whole_module(tmp_path):
    # ``type X = ...`` parses in LibCST; Python < 3.12's ast rejects it, so no trimming happens.
    source = KERNEL.replace("import triton.language as tl\n", "import triton.language as tl\n\ntype Alias = int\n")
    (tmp_path / "mod.py").write_text(source)
    (site,) = scan(tmp_path, jobs=1).sites
    assert site.line == 10 and text_at(source, site.configs[0].span) == "triton.Config({'BLOCK': 16}, num_warps=4)"
    assert text_at(source, site.kernel_span).startswith("def k(") and site.kernel_span.end_line == 20
