"""An unset environment variable read at its default is an assumption of what it decided, listed
in the configs' origin with how to choose another value (issue 20, item 2). Fixtures written here,
in the shapes serving code uses for tuning switches."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from autotune_rewrite.locate.scan import scan
from autotune_rewrite.settings import load_settings

SWITCHES = {
    "get with a default": ('FAST = os.environ.get("PKG_FAST", "0") == "1"', "PKG_FAST read as its default '0'"),
    "getenv without one": ('FAST = (os.getenv("PKG_FAST") or "") == "1"', "PKG_FAST read as unset"),
    "membership": ('FAST = "PKG_FAST" in os.environ', "PKG_FAST read as unset"),
    "int of a default": ('FAST = int(os.environ.get("PKG_FAST", 0)) > 0', "PKG_FAST read as its default 0"),
}


def _site(tmp_path: Path, switch: str, env=()):
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "k.py").write_text(textwrap.dedent(f'''
        import os
        import triton
        import triton.language as tl

        {switch}
        CONFIGS = [triton.Config({{"B": 64}})] if FAST else [triton.Config({{"B": b}}) for b in (64, 128)]

        @triton.autotune(configs=CONFIGS, key=["n"])
        @triton.jit
        def k(x, n, B: tl.constexpr):
            pass
    '''))
    settings = load_settings(root).with_env(env)
    (site,) = scan(root, jobs=1, settings=settings).sites
    return site


@pytest.mark.parametrize("shape", sorted(SWITCHES))
def test_an_unset_variable_is_read_at_its_default_and_listed(tmp_path, shape):
    switch, words = SWITCHES[shape]
    site = _site(tmp_path, switch)
    assert [c.kwargs["B"] for c in site.configs] == [64, 128]
    assert f"environment: {words} (--env PKG_FAST=VALUE" in site.configs_origin


def test_a_variable_given_with_env_is_no_assumption(tmp_path):
    site = _site(tmp_path, SWITCHES["get with a default"][0], env=[("PKG_FAST", "1")])
    assert [c.kwargs["B"] for c in site.configs] == [64]
    assert "environment:" not in site.configs_origin


def test_every_spec_of_the_kernel_lists_the_variable_as_an_assumption(tmp_path):
    from autotune_rewrite.spec import launch_spec

    site = _site(tmp_path, SWITCHES["get with a default"][0])
    assert site.environment == (("PKG_FAST", "0"),)
    source = (tmp_path / "repo" / site.kernel_path).read_text()
    res = launch_spec.resolve_specs(site, kernel_source=source)
    for spec in res.specs:
        (a,) = [a for a in spec.assumptions if a.parameter == "$PKG_FAST"]
        assert a.value == "'0'" and "--env PKG_FAST=VALUE" in a.source


def test_exact_makes_no_environment_assumption_and_says_which_table_states_it(tmp_path):
    from autotune_rewrite.spec import launch_spec

    site = _site(tmp_path, SWITCHES["get with a default"][0])
    source = (tmp_path / "repo" / site.kernel_path).read_text()
    res = launch_spec.resolve_specs(site, kernel_source=source, exact=True)
    assert not res.ok and all("$PKG_FAST" in lacking for _, lacking in res.missing)
    assert "[tool.autotune-rewrite.env]" in res.stanza and '# PKG_FAST = ""' in res.stanza
    assert "PKG_FAST =" not in res.stanza.split("[tool.autotune-rewrite.env]")[0]
    given = _site(tmp_path / "given", SWITCHES["get with a default"][0], env=[("PKG_FAST", "0")])
    assert given.environment == ()
    assert all("$PKG_FAST" not in lacking for _, lacking in
               launch_spec.resolve_specs(given, kernel_source=source, exact=True).missing)
