"""v3 changes the kernel's signature, so it is refused when some use of the kernel may launch it
where the launch cannot be followed (a registry dict, ``getattr``, ``*args`` forwarding), with
those sites listed, unless ``--allow-unseen-launches``. Real git repositories, the real CLI."""

from __future__ import annotations

import textwrap

from rewrite_e2e import cli, git, make_repo

from autotune_rewrite.locate.scan import scan
from autotune_rewrite.locate.unseen_launches import GETATTR, PASSED, STAR_ARGS, STORED, unseen_launches

KERNEL = "_mma_sparse_decode_split_kernel"
REGISTRY = textwrap.dedent(f'''\
    from mla_decode import decode
    from mla_decode.decode import {KERNEL}

    KERNELS = {{"split": {KERNEL}}}


    def launch_by_name(grid, *args):
        return getattr(decode, "{KERNEL}")[grid](*args)


    def forward(grid, *args):
        {KERNEL}[grid](*args)


    def hand_over(run):
        return run({KERNEL})


    def fine():
        alias = {KERNEL}
        return {KERNEL}.configs, alias
    ''')


def _with_registry(tmp_path, text=REGISTRY):
    root = make_repo(tmp_path, "sm120_mla_decode")
    (root / "mla_decode" / "registry.py").write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "registry")
    return root


def test_the_uses_v3_cannot_follow_are_listed(tmp_path):
    root = _with_registry(tmp_path)
    site = next(s for s in scan(root, jobs=1).sites if s.kernel == KERNEL)
    got = [(u.path, u.line, u.why) for u in unseen_launches(root, site)]
    assert got == [("mla_decode/registry.py", 4, STORED), ("mla_decode/registry.py", 8, GETATTR),
                   ("mla_decode/registry.py", 12, STAR_ARGS), ("mla_decode/registry.py", 16, PASSED)]


def test_the_example_alone_has_no_unseen_launch(tmp_path):
    root = make_repo(tmp_path, "sm120_mla_decode")
    site = next(s for s in scan(root, jobs=1).sites if s.kernel == KERNEL)
    assert unseen_launches(root, site) == ()


def test_v3_is_refused_with_the_sites_listed(tmp_path, cache):
    root = _with_registry(tmp_path)
    proc = cli("diff", "--variant", "v3", "--check", ".", cwd=root, cache=cache, check_rc=1)
    assert proc.stdout == ""  # no caller is left behind half-changed
    assert "v3 refused: it adds a bs_bucket parameter, and 4 use(s) of the kernel may launch it" in proc.stderr
    for where in ("registry.py:4 `_mma_sparse_decode_split_kernel` (kept in a container)",
                  'registry.py:8 `getattr(decode, "_mma_sparse_decode_split_kernel")` (looked up by getattr)',
                  "registry.py:12", "registry.py:16"):
        assert where in proc.stderr
    assert "--allow-unseen-launches" in proc.stderr
    # The other variants do not change the signature: not refused.
    cli("diff", "--variant", "prune", "--check", ".", cwd=root, cache=cache, check_rc=1)


def test_allow_unseen_launches_rewrites_the_seen_callers(tmp_path, cache):
    # Without the ``*args`` forward: the rewriter itself refuses to edit a launch it sees with *args.
    root = _with_registry(tmp_path, REGISTRY.replace(f"def forward(grid, *args):\n    {KERNEL}[grid](*args)\n", ""))
    proc = cli("diff", "--variant", "v3", "--check", "--allow-unseen-launches", ".", cwd=root, cache=cache, check_rc=1)
    assert "bs_bucket=_bs_bucket(" in proc.stdout and "registry.py" not in proc.stdout
    (tmp_path / "v3.diff").write_text(proc.stdout)
    git(root, "apply", "--check", str(tmp_path / "v3.diff"))
