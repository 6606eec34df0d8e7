"""The focused parse (``locate.focus``): LibCST sees kernels cut to their signatures and none of
the plain defs nothing reaches, and the locator's facts are exactly those of the whole file;
a name another module asks for among the left-out defs is read from the whole file."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from autotune_rewrite.files import module_name
from autotune_rewrite.locate.facts import MODE_LAUNCHES, MODE_SITES, _analyze, analyze_source
from autotune_rewrite.locate.focus import Want, focus, lines_of
from autotune_rewrite.locate.parsed import ParsedModule
from autotune_rewrite.locate.scan import scan
from locate_helpers import by_kernel

FIXTURES = Path(__file__).parent / "fixtures"
SOURCES = sorted(p for p in FIXTURES.rglob("*.py") if "autotune" in p.read_text(errors="replace")
                 or "](" in p.read_text(errors="replace"))

EDGE = (
    "# a header comment\r\n"
    "import functools\r\n"
    "import triton\r\n"
    "import triton.language as tl\r\n"
    "from .registry import register\r\n"
    "\r\n"
    "BLOCKS = [16, 32]; WARPS = 4\f\r\n"
    "\r\n"
    "def make_configs():\r\n"
    "    return [triton.Config({'BLOCK': b}, num_warps=WARPS) for b in scale(BLOCKS)]\r\n"
    "\r\n"
    "def scale(xs):  # reached only through make_configs\r\n"
    "    return [x * 2 for x in xs]\r\n"
    "\r\n"
    "def unused_helper(x):\r\n"
    "    return functools.reduce(lambda a, b: a + b, x)\r\n"
    "\r\n"
    "class UnusedTable:\r\n"
    "    rows = {'x': 1}\r\n"
    "\r\n"
    "@functools.lru_cache(maxsize=None)\r\n"
    "def cached(n):\r\n"
    "    return n + 1\r\n"
    "\r\n"
    "@register('add')\r\n"
    "def registered(x):\r\n"
    "    return x\r\n"
    "\r\n"
    "def set_later():\r\n"
    "    global LATE\r\n"
    "    LATE = 1\r\n"
    "\r\n"
    "@triton.autotune(configs=make_configs(), key=['n'])\r\n"
    "@triton.jit\r\n"
    "def add_kernel(x_ptr, n,  # 'é' before the body\r\n"
    "               BLOCK: tl.constexpr = 16):\r\n"
    "    '''A docstring: the body starts here.'''\r\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\r\n"
    "    tl.store(x_ptr + offs, offs, mask=offs < len('é'))\r\n"
    "\r\n"
    "@triton.jit\r\n"
    "def one_line(x): return x\r\n"
    "\r\n"
    "def launch(x, n):\r\n"
    "    add_kernel[(triton.cdiv(n, 16),)](x, n)\r\n"
)


def _whole(path: str, source: str, mode: str, tree_names: frozenset[str]):
    pm = ParsedModule.parse(path, source, module_name(path), path.endswith("__init__.py"))
    return _analyze(pm, path, mode, tree_names)


def _tree_names(path: Path) -> frozenset[str]:
    return frozenset(module_name(str(path.relative_to(FIXTURES))).split("."))


@pytest.mark.parametrize("mode", [MODE_SITES, MODE_LAUNCHES])
@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_focused_facts_equal_the_whole_file_s(path, mode):
    rel = str(path.relative_to(FIXTURES))
    data = path.read_bytes()
    names = _tree_names(path)
    focused = analyze_source(rel, data, module_name(rel), rel.endswith("__init__.py"), mode, names)
    assert focused.error is None or focused.error == _whole(rel, data.decode(), mode, names).error
    assert replace(focused, dropped=frozenset()) == _whole(rel, data.decode(), mode, names)


def test_what_the_focus_keeps_and_leaves_out():
    seen = focus(EDGE, Want(tree_names=frozenset({"pkg"})))
    assert seen.dropped == {"unused_helper", "UnusedTable", "cached"}
    # Kept statements are the file's own lines; a kernel stops at its signature.
    assert "def scale(xs):  # reached only through make_configs\r\n" in seen.text
    assert "def registered(x):" in seen.text and "global LATE" in seen.text
    assert "docstring" not in seen.text and "tl.store" not in seen.text
    assert "               BLOCK: tl.constexpr = 16):\r\n    ...\n" in seen.text
    assert "def one_line(x): return x" in seen.text
    assert set(lines_of(seen.text)) - {"    ...\n"} <= set(lines_of(EDGE))


def test_a_focus_for_sites_leaves_out_the_defs_that_only_launch():
    seen = focus(EDGE, Want(tree_names=frozenset({"pkg"}), launches=False))
    assert seen.dropped == {"unused_helper", "UnusedTable", "cached", "launch"}
    assert "add_kernel[(" not in seen.text and "@triton.autotune(" in seen.text


def test_the_edge_file_s_facts_and_spans_are_the_whole_file_s():
    data = EDGE.encode()
    focused = analyze_source("pkg/k.py", data, "pkg.k", False, MODE_SITES, frozenset({"pkg"}))
    whole = _whole("pkg/k.py", EDGE, MODE_SITES, frozenset({"pkg"}))
    assert focused.dropped == {"unused_helper", "UnusedTable", "cached"}
    assert replace(focused, dropped=frozenset()) == whole
    site = focused.sites[0].site
    assert [c.kwargs["BLOCK"] for c in site.configs] == [32, 64]
    assert site.kernel_span.end_line == 39 and focused.launches[0].launch.line == 45
    assert {"unused_helper", "UnusedTable", "cached"} <= focused.names.defined


HELPERS = '''\
import triton
import triton.language as tl


def tile_configs():
    return [triton.Config({"BLOCK": b}, num_warps=4) for b in (32, 64)]


@triton.autotune(configs=[triton.Config({"BLOCK": 16}, num_warps=4)], key=["n"])
@triton.jit
def local_kernel(x_ptr, n, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 1)
'''

USER = '''\
import triton
import triton.language as tl

from pkg.helpers import tile_configs


@triton.autotune(configs=tile_configs(), key=["n"])
@triton.jit
def user_kernel(x_ptr, n, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 1)
'''


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_def_left_out_of_its_file_s_focus_resolves_from_another_module(tmp_path, jobs):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "helpers.py").write_text(HELPERS)
    (tmp_path / "pkg" / "user.py").write_text(USER)
    assert focus(HELPERS).dropped == {"tile_configs"}
    site = by_kernel(scan(tmp_path, jobs=jobs), "user_kernel")
    assert [c.kwargs["BLOCK"] for c in site.configs] == [32, 64]


TUNE = '''\
import triton

tune = triton.autotune
'''

BUILDER = '''\
import triton
import triton.language as tl

from pkg.tuning import tune


def _body(x_ptr, n, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 1)


def build():
    tuner = tune(configs=[triton.Config({"BLOCK": 16}, num_warps=4)], key=["n"])
    return tuner(triton.jit(_body))
'''


@pytest.mark.parametrize("says_autotune", [True, False])
def test_a_def_using_another_module_s_name_for_autotune_is_analysed(tmp_path, says_autotune):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "tuning.py").write_text(TUNE)
    # Said anywhere (here a comment), the file is analysed before ``tune`` is known to be autotune.
    (tmp_path / "pkg" / "builder.py").write_text(("# autotune\n" if says_autotune else "") + BUILDER)
    result = scan(tmp_path, jobs=1)
    assert [s.path for s in result.sites] == ["pkg/builder.py"]
    assert result.sites[0].configs[0].kwargs == {"BLOCK": 16}
