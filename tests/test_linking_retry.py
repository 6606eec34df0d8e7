"""Linking's retries rebuild only what they retry: one site by its span, the launches of sites
by theirs, each exactly as the whole pass builds it."""

from __future__ import annotations

from autotune_rewrite.locate.facts import pending_resolver
from autotune_rewrite.locate.launches import find_launches
from autotune_rewrite.locate.parsed import ParsedModule
from autotune_rewrite.locate.sites import find_sites

SOURCE = '''\
import triton
import triton.language as tl

SMALL = [triton.Config({"BLOCK": 16}, num_warps=4)]


@triton.autotune(configs=SMALL, key=["n"])
@triton.jit
def first(x_ptr, n, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 1)


@triton.autotune(configs=[triton.Config({"BLOCK": b}, num_warps=8) for b in (32, 64)], key=["n"])
@triton.jit
def second(x_ptr, n, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 2)


def run(x, n):
    first[(n // 16,)](x, n)
    second[(n // 32,)](x, n)
'''


def _pm():
    return ParsedModule.parse("pkg/k.py", SOURCE, "pkg.k", False)


def test_a_retried_site_is_built_alone_and_as_the_whole_pass_builds_it():
    pm = _pm()
    every = find_sites(pm, pending_resolver(frozenset({"pkg"})))
    assert [d.site.kernel for d in every] == ["first", "second"]
    only = find_sites(pm, pending_resolver(frozenset({"pkg"})), only=every[1].site.span)
    assert only == [every[1]]
    assert [c.kwargs["BLOCK"] for c in only[0].site.configs] == [32, 64]


def test_launches_are_read_again_only_at_the_spans_asked():
    pm = _pm()
    every = find_launches(pm)
    assert [d.launch.callee for d in every] == ["first", "second"]
    assert find_launches(pm, only={every[0].launch.span}) == [every[0]]
    assert find_launches(pm, only=set()) == []
