"""A Triton function bound by version at module level (``if <version test>: rsqrt = tl.math.rsqrt
else: rsqrt = tl.libdevice.rsqrt``) is isolated with the branch the installed Triton takes
(``isolate/installed_branch.py``; issue 20, item 5). Fixtures written here."""

from __future__ import annotations

import textwrap

import pytest

from autotune_rewrite.isolate.kernel_loader import load_bundle

KERNEL = '''
@triton.jit
def norm(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    tl.store(x_ptr + offs, rsqrt(x), mask=offs < n)
'''

BINDINGS = {
    "present first": '''
        if tuple(int(p) for p in triton.__version__.split(".")[:2]) >= (2, 1):
            rsqrt = tl.math.rsqrt
        else:
            rsqrt = tl.libdevice.rsqrt
    ''',
    "absent last, as a fallback": '''
        try:
            rsqrt = tl.math.rsqrt
        except AttributeError:
            rsqrt = tl.libdevice.rsqrt
    ''',
    "absent first": '''
        if tuple(int(p) for p in triton.__version__.split(".")[:2]) < (2, 1):
            rsqrt = tl.libdevice.rsqrt
        else:
            rsqrt = tl.math.rsqrt
    ''',
}


@pytest.mark.parametrize("shape", sorted(BINDINGS))
def test_the_binding_the_installed_triton_has_is_taken(tmp_path, shape):
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "k.py").write_text("import triton\nimport triton.language as tl\n"
                                      + textwrap.dedent(BINDINGS[shape]) + KERNEL)
    bundle = load_bundle(root, "pkg/k.py", "norm", cache_dir=tmp_path / "cache")
    assert bundle.unprovided == ()
    assert "rsqrt = tl.math.rsqrt" in bundle.source and "libdevice" not in bundle.source


def test_a_binding_of_a_name_no_triton_has_is_still_the_last_one(tmp_path):
    # Nothing to choose: both branches name something the installed Triton lacks; the last wins
    # as when the module runs, and the kernel is reported not loadable as before.
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "k.py").write_text("import triton\nimport triton.language as tl\n" + textwrap.dedent('''
        if triton.__version__ > "9":
            rsqrt = tl.nowhere.rsqrt
        else:
            rsqrt = tl.libdevice.rsqrt
    ''') + KERNEL)
    bundle = load_bundle(root, "pkg/k.py", "norm", cache_dir=tmp_path / "cache")
    assert "rsqrt = tl.libdevice.rsqrt" in bundle.source or [n for n, *_ in bundle.unprovided] == ["rsqrt"]
