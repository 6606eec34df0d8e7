"""``triton.autotune`` through every alias real code uses, each found with its kernel, configs
and key: module aliases, conditional aliases, star imports, PEP 614 decorators, re-exports
through the repo's own modules, and decorator objects kept in a variable."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest

from autotune_rewrite.locate.scan import scan
from locate_helpers import text_at

HEAD = "import triton\nimport triton.language as tl\n"
PARAMS = "(X, n, BLOCK: tl.constexpr):\n    pass\n"


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def sites_of(root: Path):
    result = scan(root, jobs=1)
    assert result.errors == ()
    return result.sites


def found(sites) -> list[tuple]:
    """(path, kernel, config labels, key) per site, in scan order."""
    return [(s.path, s.kernel, [c.label() for c in s.configs or ()], s.key) for s in sites]


def test_module_alias(tmp_path):
    write(tmp_path, {"k.py": HEAD + '''
_AT = triton.autotune
_B = _AT  # an alias of the alias
CONFIGS = [triton.Config({"BLOCK": 32}, num_warps=4), triton.Config({"BLOCK": 64}, num_warps=8)]

@_AT(configs=CONFIGS, key=["n"])
@triton.jit
def k_alias''' + PARAMS + '''
@_B(configs=[triton.Config({"BLOCK": 16}, num_warps=2)], key=["n", "BLOCK"])
@triton.jit
def k_alias2''' + PARAMS})
    sites = sites_of(tmp_path)
    assert found(sites) == [("k.py", "k_alias", ["BLOCK=32 w4 s3", "BLOCK=64 w8 s3"], ("n",)),
                            ("k.py", "k_alias2", ["BLOCK=16 w2 s3"], ("n", "BLOCK"))]
    assert sites[0].decorators == ("triton.autotune", "triton.jit")
    src = (tmp_path / "k.py").read_text()
    assert text_at(src, sites[0].span) == '_AT(configs=CONFIGS, key=["n"])'
    assert sites[0].line == 8 and sites[0].kernel_span.start_line == 10


def test_conditional_alias_expression_and_statement(tmp_path):
    write(tmp_path, {"k.py": '''
try:
    import triton
    import triton.language as tl
    HAS_TRITON = True
except ImportError:
    HAS_TRITON = False


def _noop_autotune(*args, **kwargs):
    return lambda fn: fn


autotune = triton.autotune if HAS_TRITON else _noop_autotune

if HAS_TRITON:
    tune = triton.autotune
else:
    def tune(*args, **kwargs):
        return lambda fn: fn

not_triton = _noop_autotune

@autotune(configs=[triton.Config({"BLOCK": 32}, num_warps=4)], key=["n"])
@triton.jit
def k_expr''' + PARAMS + '''
@tune(configs=[triton.Config({"BLOCK": 64}, num_warps=8)], key=["n"])
@triton.jit
def k_stmt''' + PARAMS + '''
@not_triton(configs=[], key=["n"])
def not_a_kernel(X, n):
    pass
'''})
    assert found(sites_of(tmp_path)) == [("k.py", "k_expr", ["BLOCK=32 w4 s3"], ("n",)),
                                         ("k.py", "k_stmt", ["BLOCK=64 w8 s3"], ("n",))]


def test_star_import_and_import_as(tmp_path):
    write(tmp_path, {
        "star.py": '''
from triton import *
import triton.language as tl

@autotune(configs=[Config({"BLOCK": 32}, num_warps=4, num_stages=2)], key=["n"])
@jit
def k_star''' + PARAMS,
        "renamed.py": '''
from triton import autotune as at, Config as C, jit
import triton.language as tl

@at([C({"BLOCK": 16}, num_warps=2)], ["n"])
@jit
def k_as''' + PARAMS,
        # A star import that is not Triton's binds nothing the locator takes for autotune.
        "other.py": '''
from functools import *

@autotune(configs=[], key=["n"])
def not_a_kernel(n):
    pass
'''})
    sites = sites_of(tmp_path)
    assert found(sites) == [("renamed.py", "k_as", ["BLOCK=16 w2 s3"], ("n",)),
                            ("star.py", "k_star", ["BLOCK=32 w4 s2"], ("n",))]
    assert sites[1].decorators == ("triton.autotune", "triton.jit")
    assert sites[1].params[2].is_constexpr


def test_pep614_decorators(tmp_path):
    write(tmp_path, {"k.py": HEAD + '''
TUNERS = {"fast": triton.autotune, "none": None}
REGISTRY = {}
REGISTRY["x"] = triton.autotune  # filled at run time: not known statically


def pick():
    return triton.autotune


@(triton.autotune)(configs=[triton.Config({"BLOCK": 32}, num_warps=4)], key=["n"])
@triton.jit
def k_paren''' + PARAMS + '''
@TUNERS["fast"](configs=[triton.Config({"BLOCK": 64}, num_warps=4)], key=["n"])
@triton.jit
def k_literal_dict''' + PARAMS + '''
@REGISTRY["x"](configs=[triton.Config({"BLOCK": 64}, num_warps=4)], key=["n"])
@triton.jit
def k_registry''' + PARAMS + '''
@pick()(configs=[triton.Config({"BLOCK": 64}, num_warps=4)], key=["n"])
@triton.jit
def k_call''' + PARAMS + '''
@TUNERS["none"](configs=[], key=["n"])
def k_none(n):
    pass
'''})
    sites = sites_of(tmp_path)
    assert found(sites) == [("k.py", "k_paren", ["BLOCK=32 w4 s3"], ("n",)),
                            ("k.py", "k_literal_dict", ["BLOCK=64 w4 s3"], ("n",))]
    src = (tmp_path / "k.py").read_text()
    assert text_at(src, sites[0].configs_span) == '[triton.Config({"BLOCK": 32}, num_warps=4)]'


REEXPORTS = {
    "pkg/__init__.py": "",
    "pkg/triton_utils.py": '''
import triton
from triton import autotune, Config

tune = triton.autotune
_private = triton.autotune
CONFIGS = [Config({"BLOCK": 128}, num_warps=8)]
__all__ = ["autotune", "Config", "tune", "CONFIGS"]
''',
    "pkg/public.py": '''
import triton
shared_tuner = triton.autotune
_hidden = triton.autotune
''',
    "pkg/by_name.py": '''
import triton.language as tl
from pkg.triton_utils import autotune, Config
from triton import jit

@autotune(configs=[Config({"BLOCK": 32}, num_warps=4)], key=["n"])
@jit
def k_by_name''' + PARAMS,
    # Never says "autotune": found because triton_utils binds ``tune`` to it.
    "pkg/star.py": '''
import triton.language as tl
from .triton_utils import *
from triton import jit

@tune(configs=CONFIGS, key=["n"])
@jit
def k_star''' + PARAMS + '''
@_private(configs=CONFIGS, key=["n"])
@jit
def k_not_exported''' + PARAMS,
    # No ``__all__``: a star import binds the public names only.
    "pkg/star_public.py": '''
import triton.language as tl
from pkg.public import *
from triton import jit, Config

@shared_tuner(configs=[Config({"BLOCK": 16}, num_warps=4)], key=["n"])
@jit
def k_public''' + PARAMS + '''
@_hidden(configs=[Config({"BLOCK": 16}, num_warps=4)], key=["n"])
@jit
def k_hidden''' + PARAMS,
    # Renamed on import; a second module imports the rename: neither says "autotune".
    "pkg/renamed.py": '''
import triton.language as tl
from pkg.triton_utils import tune as T, Config
from triton import jit

@T(configs=[Config({"BLOCK": 64}, num_warps=2)], key=["n"])
@jit
def k_renamed''' + PARAMS,
    "pkg/again.py": '''
import triton.language as tl
from pkg.renamed import T
from triton import jit, Config

@T(configs=[Config({"BLOCK": 64}, num_warps=4)], key=["n"])
@jit
def k_again''' + PARAMS,
}


def test_reexports_through_the_repos_own_modules(tmp_path):
    sites = sites_of(write(tmp_path, REEXPORTS))
    assert found(sites) == [
        ("pkg/again.py", "k_again", ["BLOCK=64 w4 s3"], ("n",)),
        ("pkg/by_name.py", "k_by_name", ["BLOCK=32 w4 s3"], ("n",)),
        ("pkg/renamed.py", "k_renamed", ["BLOCK=64 w2 s3"], ("n",)),
        ("pkg/star.py", "k_star", ["BLOCK=128 w8 s3"], ("n",)),
        ("pkg/star_public.py", "k_public", ["BLOCK=16 w4 s3"], ("n",)),
    ]
    star = sites[3]
    assert star.decorators == ("triton.autotune", "triton.jit") and star.configs[0].path == "pkg/triton_utils.py"


def test_reexports_are_found_with_a_process_pool(tmp_path):
    write(tmp_path, REEXPORTS)
    assert found(scan(tmp_path, jobs=2).sites) == found(scan(tmp_path, jobs=1).sites)


def test_decorator_object_applied_later(tmp_path):
    write(tmp_path, {"k.py": HEAD + '''
USE_AUTOTUNE = True

tuner = triton.autotune(configs=[triton.Config({"BLOCK": 32}, num_warps=4)], key=["n"])
other = triton.autotune(configs=[triton.Config({"BLOCK": 64}, num_warps=8)], key=["n", "BLOCK"])
if USE_AUTOTUNE:
    maybe = triton.autotune(configs=[triton.Config({"BLOCK": 16}, num_warps=2)], key=["n"])
else:
    maybe = lambda fn: fn
unused = triton.autotune(configs=[triton.Config({"BLOCK": 8}, num_warps=1)], key=["n"])


def k_fn''' + PARAMS + '''
k_obj = tuner(triton.jit(k_fn))


@other
@triton.jit
def k_dec''' + PARAMS + '''

@maybe
@triton.jit
def k_if''' + PARAMS + '''

def launch(x, n):
    k_obj[(1,)](x, n)
    k_dec[(1,)](x, n)
'''})
    sites = sites_of(tmp_path)
    assert found(sites) == [("k.py", "k_fn", ["BLOCK=32 w4 s3"], ("n",)),
                            ("k.py", "k_dec", ["BLOCK=64 w8 s3"], ("n", "BLOCK")),
                            ("k.py", "k_if", ["BLOCK=16 w2 s3"], ("n",))]
    by_name = {s.kernel: s for s in sites}
    assert by_name["k_fn"].form == "call" and by_name["k_fn"].bound_to == "k_obj"
    assert by_name["k_fn"].decorators == ("triton.autotune", "triton.jit")
    assert [p.name for p in by_name["k_fn"].params] == ["X", "n", "BLOCK"]
    assert by_name["k_dec"].decorators == ("triton.autotune", "triton.jit")
    # The site is the ``triton.autotune(...)`` call where the object is made: its configs are
    # written there, which is where a rewrite edits them.
    src = (tmp_path / "k.py").read_text()
    assert text_at(src, by_name["k_dec"].span).startswith("triton.autotune(configs=[triton.Config({\"BLOCK\": 64}")
    assert by_name["k_if"].line == 9
    assert [l.line for l in by_name["k_fn"].launches] == [34]
    assert [l.line for l in by_name["k_dec"].launches] == [35]


def test_decorator_object_under_if_else_gives_one_site_per_branch(tmp_path):
    write(tmp_path, {"k.py": HEAD + '''
import os

if os.environ.get("BIG"):
    tuner = triton.autotune(configs=[triton.Config({"BLOCK": 128}, num_warps=8)], key=["n"])
else:
    tuner = triton.autotune(configs=[triton.Config({"BLOCK": 32}, num_warps=4)], key=["n"])


@tuner
@triton.jit
def k_twice''' + PARAMS})
    sites = sites_of(tmp_path)
    assert found(sites) == [("k.py", "k_twice", ["BLOCK=128 w8 s3"], ("n",)),
                            ("k.py", "k_twice", ["BLOCK=32 w4 s3"], ("n",))]
    assert [s.ident for s in sites] == ["k.py::k_twice:7", "k.py::k_twice:9"]


def test_reexported_triton_module(tmp_path):
    # An engine re-exporting Triton itself (``from engine.triton_utils import triton``).
    write(tmp_path, {
        "engine/__init__.py": "",
        "engine/triton_utils.py": "import triton\nimport triton.language as tl\n",
        "engine/k.py": '''
from engine.triton_utils import triton, tl

@triton.autotune(configs=[triton.Config({"BLOCK": 32}, num_warps=4)], key=["n"])
@triton.jit
def k_engine''' + PARAMS})
    assert found(sites_of(tmp_path)) == [("engine/k.py", "k_engine", ["BLOCK=32 w4 s3"], ("n",))]


@pytest.mark.parametrize("source", [
    HEAD + "\nautotune = lambda **kw: (lambda fn: fn)\n\n@autotune(configs=[], key=['n'])\ndef f(n):\n    pass\n",
    "from mylib import *\n\n@autotune(configs=[], key=['n'])\ndef f(n):\n    pass\n",
])
def test_lookalikes_are_not_sites(tmp_path, source):
    (tmp_path / "k.py").write_text(source)
    assert sites_of(tmp_path) == ()


def test_a_new_config_under_a_star_import_is_spelled_as_the_star_binds_it():
    from autotune_rewrite.rewrite.config_text import config_alias
    from autotune_rewrite.rewrite.parsed import ParsedFile

    pf = ParsedFile("k.py", "from triton import *\n\n@autotune(configs=[], key=['n'])\n@jit\ndef k(n):\n    pass\n")
    call = next(c for c in pf.walk(cst.Call) if pf.code(c.func) == "autotune")
    assert config_alias(pf, call) == "Config"
