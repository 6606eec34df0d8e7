"""``assert_rewrite``: the reusable before/after assertion for the rewrite transforms.

One call states a case the way the spec reads: the files before, the variant and its planned
configs, the files after. It checks, as black checks its own output, that every rewritten file
still parses, and that a second pass of the same variant over the result changes nothing
(idempotence), which LibCST's ``assertCodemod`` does not.
"""

from __future__ import annotations

import libcst as cst
from sitebuilder import build_site

from autotune_rewrite.model import ConfigValue
from autotune_rewrite.rewrite.transform import rewrite
from autotune_rewrite.rewrite.decision import Decision, PlannedConfig


def plan(site, spec) -> list[PlannedConfig]:
    """spec: ``("keep", i)`` keeps the site's i-th config; ``("new", t, warps, stages)`` derives a
    config from the i-th written tile with other warps/stages."""
    out = []
    for item in spec:
        if item[0] == "keep":
            out.append(PlannedConfig(site.configs[item[1]], item[1], None, ()))
        else:
            _, t, w, s = item
            base = site.configs[t]
            out.append(PlannedConfig(ConfigValue(dict(base.kwargs), num_warps=w, num_stages=s), None, t, ()))
    return out


def run_rewrite(files: dict[str, str], site, variant: str, planned, **kw):
    d = Decision(variant, site, ("sm_120",), ("default",), configs=tuple(planned), add_bs_bucket=(variant == "v3"))
    return rewrite(d, files.__getitem__, **kw)


def assert_rewrite(
    before: dict[str, str] | str,
    after: dict[str, str] | str,
    *,
    kernel: str,
    variant: str,
    configs,
    site_path: str | None = None,
    site_kw: dict | None = None,
    **rewrite_kw,
):
    """Rewrite ``before`` (one source, or path -> source) with ``variant`` and the planned
    ``configs`` (a ``plan`` spec list, or ``PlannedConfig`` objects); assert the changed files
    are exactly ``after`` (one source for the kernel's file, or path -> source of every changed
    file), that they parse, and that a second pass changes nothing. Returns the first result
    (for its notes)."""
    files = {"k.py": before} if isinstance(before, str) else dict(before)
    site_path = site_path or next(iter(files))
    expected = {site_path: after} if isinstance(after, str) else dict(after)
    site = build_site(files, kernel, site_path, **(site_kw or {}))
    planned = [c if isinstance(c, PlannedConfig) else None for c in configs]
    planned = list(configs) if all(planned) else plan(site, configs)

    result = run_rewrite(files, site, variant, planned, **rewrite_kw)
    got = {c.path: c.after for c in result.changes}
    assert sorted(got) == sorted(expected), f"changed files {sorted(got)}, expected {sorted(expected)}"
    for path, text in expected.items():
        assert got[path] == text, path
        cst.parse_module(got[path])  # the rewritten file must parse

    # Second pass: the same variant over its own output, all configs already written, is a no-op.
    files_after = {**files, **got}
    site2 = build_site(files_after, kernel, site_path)
    keep = plan(site2, [("keep", i) for i in range(len(site2.configs))])
    again = run_rewrite(files_after, site2, variant, keep, **rewrite_kw)
    assert again.changes == (), [c.after for c in again.changes]
    return result
