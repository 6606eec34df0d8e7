"""The kernel loader binds names as Python's import would: star imports and call-built globals.

Two shapes from real repositories: a ``@triton.jit`` helper reached through ``from .utils import *``
(through a package ``__init__``, with and without ``__all__``), and module globals built by a call
(``LOG2E = tl.constexpr(math.log2(math.e))``). Both must load and compile; a global that truly
cannot be provided makes its kernel ``unresolved`` with the name and its file:line, never a
config that "cannot launch", and the other kernels of the run are still judged.
Real LibCST, real ``triton.compile`` for sm_120, fixtures written here.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from repo_env import pythonpath

from autotune_rewrite.compile.crosscompile import compile_job, undefined_name
from autotune_rewrite.evidence import CompileJob
from autotune_rewrite.isolate.kernel_loader import load_bundle
import cli_process

TRITON = "import triton\nimport triton.language as tl\n"

# A kernel that calls ``helper`` (from wherever the module gets it) on a row of x.
KERNEL = TRITON + """{imports}

@triton.autotune(configs=[triton.Config({{"BLOCK": 64}}, num_warps=4),
                          triton.Config({{"BLOCK": 128}}, num_warps=4)], key=["n"])
@triton.jit
def {name}(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(x_ptr + offs, helper(x), mask=mask)
"""

HELPER = TRITON + """
@triton.jit
def helper(x):
    return x * 2
"""


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text) if text.startswith("\n") else text)
    return root


def compiles(bundle, **constexprs) -> None:
    """The bundle compiles for sm_120 with x_ptr *fp32, n i32, BLOCK=64 (real triton.compile)."""
    signature = (("x_ptr", "*fp32"), ("n", "i32"), ("BLOCK", "constexpr"), *((p, "constexpr") for p in constexprs))
    job = CompileJob(bundle=bundle, signature=signature, constexprs=(("BLOCK", 64), *constexprs.items()),
                     divisible_by_16=("x_ptr",),
                     num_warps=4, num_stages=2, num_ctas=1, maxnreg=None, capability=120)
    outcome = compile_job(job)
    assert outcome.error is None, outcome.error
    assert outcome.registers is not None


# --------------------------------------------------------------------------- star imports
def test_star_import_without_all_binds_every_public_name(tmp_path: Path):
    root = write(tmp_path, {"pkg/__init__.py": "", "pkg/utils.py": HELPER,
                            "pkg/ops.py": KERNEL.format(imports="from .utils import *", name="kern")})
    bundle = load_bundle(root, "pkg/ops.py", "kern")
    assert "def helper(x):" in bundle.source
    assert bundle.unprovided == ()
    compiles(bundle)


def test_star_import_respects_all(tmp_path: Path):
    utils = HELPER + '\n__all__ = ["helper", "_scaled"]\n\n@triton.jit\ndef _scaled(x):\n    return x * 3\n' \
        "\n\n@triton.jit\ndef unlisted(x):\n    return x\n"
    kernel = KERNEL.format(imports="from pkg.utils import *", name="kern").replace(
        "helper(x)", "helper(_scaled(x)) + unlisted(x)")
    root = write(tmp_path, {"pkg/__init__.py": "", "pkg/utils.py": utils, "pkg/ops.py": kernel})
    bundle = load_bundle(root, "pkg/ops.py", "kern")
    # __all__ lists an underscore name (bound) and leaves out a public one (not bound), as Python does.
    assert "def helper(x):" in bundle.source and "def _scaled(x):" in bundle.source
    assert "def unlisted" not in bundle.source
    assert bundle.unprovided == (("unlisted", "pkg/ops.py", 12),)


def test_star_import_through_a_package_init_reexport(tmp_path: Path):
    # pkg/__init__ re-exports pkg/core/utils.py by a star; the kernel star-imports the package.
    root = write(tmp_path, {
        "pkg/__init__.py": "from .core import *\n",
        "pkg/core/__init__.py": "from .utils import *\n",
        "pkg/core/utils.py": HELPER,
        "pkg/ops/kern.py": KERNEL.format(imports="from pkg import *", name="kern"),
        "pkg/ops/named.py": KERNEL.format(imports="from ..core import helper", name="named"),
    })
    for path, name in (("pkg/ops/kern.py", "kern"), ("pkg/ops/named.py", "named")):
        bundle = load_bundle(root, path, name)
        assert "def helper(x):" in bundle.source, path
        assert bundle.unprovided == ()
    compiles(load_bundle(root, "pkg/ops/kern.py", "kern"))


def test_star_import_cycle_ends(tmp_path: Path):
    root = write(tmp_path, {"pkg/__init__.py": "", "pkg/a.py": "from .b import *\n", "pkg/b.py": "from .a import *\n",
                            "pkg/ops.py": KERNEL.format(imports="from .a import *", name="kern")})
    bundle = load_bundle(root, "pkg/ops.py", "kern")
    assert bundle.unprovided == (("helper", "pkg/ops.py", 12),)


# --------------------------------------------------------------------------- call-built globals
CONSTANTS = """
import math
import triton
import triton.language as tl
from .dims import HEAD_DIM

LOG2E = tl.constexpr(math.log2(math.e))
RCP_LN2 = 1.0 / math.log(2)
INV = float(1 / 3)
PADDED = triton.next_power_of_2(int(math.sqrt(HEAD_DIM)) * 20)
TILES = triton.cdiv(PADDED, 16)
SM_SCALE = tl.constexpr(1 / math.sqrt(HEAD_DIM))
BOUND = tl.constexpr(max(abs(-3), int(2.5), min(8, TILES)))
"""

USES_CONSTANTS = TRITON + """from .consts import *

@triton.jit
def helper(x, inv: tl.constexpr = INV):
    return x * LOG2E * SM_SCALE * inv


@triton.jit
def kern(x_ptr, n, BLOCK: tl.constexpr, R: tl.constexpr = RCP_LN2, P: tl.constexpr = PADDED,
         B: tl.constexpr = BOUND):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(x_ptr + offs, helper(x) * R + P + B, mask=mask)
"""


def test_call_built_globals_are_evaluated(tmp_path: Path):
    root = write(tmp_path, {"pkg/__init__.py": "", "pkg/dims.py": "HEAD_DIM = 64\n", "pkg/consts.py": CONSTANTS,
                            "pkg/ops.py": USES_CONSTANTS})
    bundle = load_bundle(root, "pkg/ops.py", "kern")
    src = bundle.source
    # Built by calls the evaluator knows: their values (constexpr stays constexpr).
    for line in ("LOG2E = _ar_triton.language.constexpr(1.4426950408889634)", "RCP_LN2 = 1.4426950408889634",
                 "PADDED = 256", "SM_SCALE = _ar_triton.language.constexpr(0.125)",
                 # static already (literals, builtins, Triton's helpers): as written, with what they read
                 "INV = float(1 / 3)", "TILES = triton.cdiv(PADDED, 16)",
                 "BOUND = tl.constexpr(max(abs(-3), int(2.5), min(8, TILES)))"):
        assert line + "\n" in src, line
    assert "import math" not in src and "HEAD_DIM" not in src
    assert bundle.unprovided == ()
    compiles(bundle, R=1.4426950408889634, P=256, B=8)  # the defaults, as the spec resolver passes them


def test_constexpr_function_helper_is_carried_with_what_it_reads(tmp_path: Path):
    # Triton runs a @triton.constexpr_function at compile time: the bundle needs it and its math.
    utils = HELPER.replace(TRITON, "import math\n" + TRITON) + "\nALIGN = 16\n\n@triton.constexpr_function\n" \
        "def padded(n):\n    return math.ceil(n / ALIGN) * ALIGN\n\n\ndef host_only(n):\n    return n\n"
    kernel = KERNEL.format(imports="from .utils import *", name="kern").replace(
        "offs = tl.arange(0, BLOCK)", "offs = tl.arange(0, padded(BLOCK - 8))")
    root = write(tmp_path, {"pkg/__init__.py": "", "pkg/utils.py": utils, "pkg/ops.py": kernel,
                            "pkg/host.py": kernel.replace("helper(x)", "host_only(x)")})
    bundle = load_bundle(root, "pkg/ops.py", "kern")
    assert "@triton.constexpr_function\ndef padded(n):" in bundle.source
    assert "import math\n" in bundle.source and "ALIGN = 16\n" in bundle.source
    assert "def host_only" not in bundle.source and bundle.unprovided == ()
    compiles(bundle)
    # A plain Python function cannot be carried (Triton would need the module run): recorded.
    assert load_bundle(root, "pkg/host.py", "kern").unprovided == (("host_only", "pkg/utils.py", 16),)


def test_global_that_cannot_be_computed_is_recorded_not_emitted(tmp_path: Path):
    consts = "import os\nimport triton.language as tl\nfrom torch_thing import MAGIC\n\n" \
             "BLOCK_ENV = tl.constexpr(int(os.environ.get('BLOCK', '64')))\nDOUBLE = BLOCK_ENV * 2\n"
    kernel = KERNEL.format(imports="from .consts import DOUBLE, MAGIC\n\n@triton.jit\ndef helper(x):\n"
                                   "    return x * DOUBLE + MAGIC", name="kern")
    root = write(tmp_path, {"pkg/__init__.py": "", "pkg/consts.py": consts, "pkg/ops.py": kernel})
    bundle = load_bundle(root, "pkg/ops.py", "kern")
    assert "BLOCK_ENV" not in bundle.source and "DOUBLE =" not in bundle.source and "MAGIC =" not in bundle.source
    # The first cause of each name the kernel reads, at the user's line.
    assert dict((n, (p, ln)) for n, p, ln in bundle.unprovided) == {
        "BLOCK_ENV": ("pkg/consts.py", 5), "DOUBLE": ("pkg/consts.py", 6), "MAGIC": ("pkg/consts.py", 3)}


def test_triton_import_wins_over_a_fallback_for_when_triton_is_missing(tmp_path: Path):
    # ``triton = MagicMock()`` is bound last in source order, but only runs without Triton.
    guarded = """
    try:
        import triton
        import triton.language as tl
        HAVE_TRITON = True
    except ImportError:
        HAVE_TRITON = False

    if not HAVE_TRITON:
        from unittest.mock import MagicMock
        triton = MagicMock()
        tl = MagicMock()
    """
    kernel = textwrap.dedent(guarded) + KERNEL.format(imports="from .utils import helper", name="kern").replace(TRITON, "")
    root = write(tmp_path, {"pkg/__init__.py": "", "pkg/utils.py": HELPER, "pkg/ops.py": kernel})
    bundle = load_bundle(root, "pkg/ops.py", "kern")
    assert "MagicMock" not in bundle.source and bundle.unprovided == ()
    compiles(bundle)


def test_a_triton_module_this_triton_lacks_is_not_provided(tmp_path: Path):
    kernel = KERNEL.format(imports="import triton.language.extra.not_in_this_triton as ext", name="kern").replace(
        "helper(x)", "ext.helper(x)")
    root = write(tmp_path, {"k.py": kernel})
    bundle = load_bundle(root, "k.py", "kern")
    assert "not_in_this_triton" not in bundle.source  # importing it would fail the whole bundle
    assert bundle.unprovided == (("ext", "k.py", 3),)


# A package of a fork's ops: a plain (non-jit) builtin in a module whose top-level import is a
# native module the installed Triton lacks, re-exported by the package's __init__.
FORK_OPS = {
    "lang/__init__.py": "from .ops import wait\nfrom .extra import tid\n",
    "lang/ops.py": TRITON + "from triton.language.core import builtin\n"
                   "from triton._C.libtriton.not_in_this_triton import ir\n\n\n"
                   "@builtin\ndef wait(x, _semantic=None):\n    return x\n",
    "lang/extra.py": "from lang import ops\n\n\ndef tid(axis):\n    return axis\n",  # lacks it only through ops
    "guarded.py": TRITON + "try:\n    from triton._C.libtriton.not_in_this_triton import ir\nexcept ImportError:\n"
                  "    ir = None\n\n\ndef plain(x):\n    return x\n",
    "runtime.py": "import lang\nimport torch\n\nNUM_SMS = torch.cuda.get_device_properties(0).multi_processor_count\n",
}


@pytest.mark.parametrize("imports, call, absent", [
    ("import lang as dl", "dl.wait(x)", [("triton._C.libtriton.not_in_this_triton", "lang/ops.py", 4)]),
    ("from lang import tid", "x * tid(0)", [("triton._C.libtriton.not_in_this_triton", "lang/ops.py", 4)]),
    # a fallback under ``try`` is meant to survive without the module: a plain "not loadable"
    ("from guarded import plain", "plain(x)", []),
    # a value computed at run time is missing for that reason, not for the fork its module imports
    ("from runtime import NUM_SMS", "x * NUM_SMS", []),
])
def test_a_helper_whose_module_needs_a_fork_of_triton_makes_the_kernel_need_it(tmp_path: Path, imports, call, absent):
    kernel = KERNEL.format(imports=imports, name="kern").replace("helper(x)", call)
    root = write(tmp_path, {**FORK_OPS, "k.py": kernel})
    bundle = load_bundle(root, "k.py", "kern")
    assert [tuple(m) for m in bundle.absent_modules] == absent
    assert bundle.unprovided  # either way the name itself is not provided


def test_an_old_api_under_a_run_time_branch_is_compiled_so_it_counts():
    """Both branches of an ``if`` on a run-time value are compiled; a constexpr ``if`` (in the
    kernel, or on a helper's parameter, which its caller may pass as a constexpr) only one."""
    from autotune_rewrite.isolate.absent_api import absent_attributes

    source = TRITON + """
@triton.jit
def helper(x, MODE):
    if MODE == 1:
        x = tl._old_in_helper_const(x)
    return x


@triton.jit
def kern(x_ptr, sizes_ptr, n, OLD: tl.constexpr):
    m = tl.load(sizes_ptr + tl.program_id(0))
    x = tl.load(x_ptr)
    if OLD:
        x = tl._old_under_constexpr(x)
    if m > 0:
        x = tl._old_under_loaded(x)
    if n > 4:
        x = tl._old_under_param(x)
    tl.store(x_ptr, helper(x, 1))
"""
    found = {name for name, _, _ in absent_attributes(source, "kern", {"tl": "triton.language"}, ())}
    assert found == {"triton.language._old_under_loaded", "triton.language._old_under_param"}


def test_a_script_outside_the_package_finds_it_under_python_by_the_end_of_its_name(tmp_path: Path):
    """``tutorials/run.py`` imports ``mypkg``, which the repo keeps under ``python/`` (installed
    with ``pip install -e python``): found as the scan's linking finds it, by the name's end."""
    root = write(tmp_path, {"python/mypkg/__init__.py": "", "python/mypkg/helpers.py": HELPER,
                            "tutorials/run.py": KERNEL.format(imports="from mypkg.helpers import helper", name="kern")})
    bundle = load_bundle(root, "tutorials/run.py", "kern")
    assert bundle.unprovided == ()
    assert "python/mypkg/helpers.py" in bundle.files
    compiles(bundle)


def test_a_package_installed_from_the_checkout_is_its_files_there(tmp_path: Path, monkeypatch):
    """``pip install -e python`` (here: ``python/`` on the path) makes ``import mypkg`` the checkout's
    own package, even for a bare name the by-name-end fallback would not take."""
    from autotune_rewrite import module_resolver

    root = write(tmp_path, {"python/mypkg/__init__.py": "from .helpers import helper\n",
                            "python/mypkg/helpers.py": HELPER,
                            "tutorials/run.py": KERNEL.format(imports="import mypkg", name="kern").replace(
                                "helper(x)", "mypkg.helper(x)")})
    monkeypatch.syspath_prepend(str(root / "python"))
    module_resolver._installed_at.cache_clear()
    try:
        bundle = load_bundle(root, "tutorials/run.py", "kern")
    finally:
        module_resolver._installed_at.cache_clear()
    assert bundle.unprovided == ()
    assert {"python/mypkg/__init__.py", "python/mypkg/helpers.py"} <= set(bundle.files)
    compiles(bundle)


def test_an_installed_package_is_never_a_repo_file_that_ends_the_same(tmp_path: Path):
    """``import torch`` is the installed torch, not ``tools/check_env/torch.py`` of the repo."""
    helper = "import torch\n\n\n@triton.jit\ndef helper(x):\n    return x * 2 if x.dtype == torch.float32 else x"
    root = write(tmp_path, {"tools/check_env/torch.py": "VERSION = 1\n",
                            "pkg/k.py": KERNEL.format(imports=helper, name="kern")})
    bundle = load_bundle(root, "pkg/k.py", "kern")
    assert "tools/check_env/torch.py" not in bundle.files
    assert [name for name, _, _ in bundle.unprovided] == ["torch"]  # never imported, never a repo namespace


def test_undefined_name_tells_our_name_errors_from_the_kernels():
    assert undefined_name(NameError("name 'LOG2E' is not defined", name="LOG2E")) == "LOG2E"
    wrapped = RuntimeError("at 5:29")
    wrapped.__cause__ = NameError("scale is not defined")  # what Triton's code generator raises
    assert undefined_name(wrapped) == "scale"
    # A global that is not a constexpr fails the same at runtime: the kernel's error, not ours.
    assert undefined_name(NameError("Cannot access global variable RCP_LN2 from within @jit'ed function")) is None
    assert undefined_name(ValueError("x")) is None


def test_bundle_cache_keeps_what_could_not_be_provided(tmp_path: Path):
    root = write(tmp_path / "repo", {"k.py": KERNEL.format(imports="from torch_thing import helper", name="kern")})
    first = load_bundle(root, "k.py", "kern", cache_dir=tmp_path / "cache")
    again = load_bundle(root, "k.py", "kern", cache_dir=tmp_path / "cache")
    assert first.unprovided == again.unprovided == (("helper", "k.py", 3),)


# --------------------------------------------------------------------------- through the CLI
PYPROJECT = """
[tool.autotune-rewrite]
{kernels}
"""
SPEC = '[[tool.autotune-rewrite.kernels]]\nkernel = "{kernel}"\ntypes = {{ x_ptr = "*fp32", n = "i32" }}\n' \
       'values = {{ n = 4096 }}\n'


def test_cli_unloadable_kernel_is_unresolved_and_the_other_is_judged(tmp_path: Path, cache: Path):
    env_helper = "import os\n" + TRITON + "\nSCALE = tl.constexpr(float(os.environ['SCALE']))\n\n" \
        "@triton.jit\ndef helper(x):\n    return x * SCALE\n"
    root = write(tmp_path / "repo", {
        "pkg/__init__.py": "",
        "pkg/utils.py": HELPER,
        "pkg/good.py": KERNEL.format(imports="from .utils import *", name="good_kernel"),
        "pkg/envutils.py": env_helper,
        "pkg/bad.py": KERNEL.format(imports="from .envutils import *", name="bad_kernel"),
        "pyproject.toml": PYPROJECT.format(kernels="\n".join(
            SPEC.format(kernel=k) for k in ("pkg/good.py::good_kernel", "pkg/bad.py::bad_kernel"))),
    })
    for args in (("init", "-q"), ("add", "-A"), ("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    env = dict(os.environ, AUTOTUNE_REWRITE_CACHE_DIR=str(cache), NO_COLOR="1")
    env["PYTHONPATH"] = pythonpath(env=env)
    proc = cli_process.run(["check", ".", "--format", "json"], cwd=root,
                          env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr  # nothing cannot launch; the unresolved kernel is listed
    kernels = {k["kernel"]: k for k in json.loads(proc.stdout)["kernels"]}
    bad, good = kernels["bad_kernel"], kernels["good_kernel"]
    assert bad["status"] == "unresolved"
    assert bad["message"] == "kernel not loadable: global SCALE (pkg/envutils.py:5) could not be provided"
    assert bad["problem"]["reason"] == "kernel_not_isolated"
    assert bad["problem"]["missing"] == ["SCALE"] and bad["problem"]["places"] == ["pkg/envutils.py:5"]
    assert bad["configs"] == []  # no verdict at all, so no "cannot launch"
    assert good["status"] == "judged"
    assert [c["launchable"] for c in good["configs"]] == [True, True]
    assert subprocess.run(["git", "status", "--porcelain", "--ignored"], cwd=root, capture_output=True,
                          text=True).stdout == ""


def test_kernels_own_non_constexpr_global_is_still_its_verdict(tmp_path: Path):
    """A global read in a kernel that is not a constexpr fails at runtime too: Triton's own error
    stays a verdict; only names the loader could not provide are ours."""
    consts = "RCP_LN2 = 1.0 / 0.6931471805599453\n"
    kernel = KERNEL.format(imports="from .consts import RCP_LN2\n\n@triton.jit\ndef helper(x):\n"
                                   "    return x * RCP_LN2", name="kern")
    root = write(tmp_path, {"pkg/__init__.py": "", "pkg/consts.py": consts, "pkg/ops.py": kernel})
    bundle = load_bundle(root, "pkg/ops.py", "kern")
    assert "RCP_LN2 = 1.0 / 0.6931471805599453" in bundle.source and bundle.unprovided == ()
    job = CompileJob(bundle=bundle, signature=(("x_ptr", "*fp32"), ("n", "i32"), ("BLOCK", "constexpr")),
                     constexprs=(("BLOCK", 64),), divisible_by_16=(), num_warps=4, num_stages=2, num_ctas=1,
                     maxnreg=None, capability=120)
    outcome = compile_job(job)
    assert "Cannot access global variable RCP_LN2" in outcome.error
    assert outcome.undefined_name is None


def test_a_kernel_on_a_triton_forks_module_is_unresolved_without_asking_for_a_spec(tmp_path: Path, cache: Path):
    """A kernel written for a Triton fork (TLX's ``triton.language.extra.tlx``) cannot compile on
    the installed Triton whatever its spec: it is unresolved naming the module, and no stanza is
    asked for; the other kernel is still judged."""
    fork = "import triton.language.extra.not_in_this_triton as tlx\n"
    root = write(tmp_path / "repo", {
        "pkg/__init__.py": "",
        "pkg/utils.py": HELPER,
        "pkg/good.py": KERNEL.format(imports="from .utils import *", name="good_kernel"),
        "pkg/fork.py": KERNEL.format(imports=fork + "\n\n@triton.jit\ndef helper(x):\n    return tlx.local_load(x)",
                                     name="fork_kernel"),
        # an API of another Triton version, read by a helper
        "pkg/old.py": KERNEL.format(imports="\n\n@triton.jit\ndef helper(x):\n    return tl._not_in_this_triton(x)",
                                    name="old_kernel"),
        # ... but under a branch it may be harmless: Triton compiles the branch a constexpr takes
        "pkg/branch.py": KERNEL.format(imports="\n\n@triton.jit\ndef helper(x, OLD: tl.constexpr = False):\n"
                                               "    if OLD:\n        x = tl._not_in_this_triton(x)\n    return x",
                                       name="branch_kernel"),
        # ... and so is a helper that reads it when the kernel calls that helper only under a branch
        "pkg/called.py": KERNEL.format(imports="\n\n@triton.jit\ndef old_math(x):\n    return tl._not_in_this_triton(x)"
                                               "\n\n\n@triton.jit\ndef helper(x, OLD: tl.constexpr = False):\n"
                                               "    if OLD:\n        x = old_math(x)\n    return x",
                                       name="called_kernel"),
    })
    env = dict(os.environ, AUTOTUNE_REWRITE_CACHE_DIR=str(cache), NO_COLOR="1")
    env["PYTHONPATH"] = pythonpath(env=env)
    proc = cli_process.run(["check", ".", "--format", "json"], cwd=root,
                          env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    kernels = {k["kernel"]: k for k in json.loads(proc.stdout)["kernels"]}
    fork_k = kernels["fork_kernel"]
    assert fork_k["status"] == "unresolved" and fork_k["problem"]["reason"] == "triton_module_absent"
    assert fork_k["problem"]["missing"] == ["triton.language.extra.not_in_this_triton"]
    assert fork_k["problem"]["places"] == ["pkg/fork.py:3"]
    assert "does not have" in fork_k["message"] and not fork_k["problem"].get("stanza")
    old = kernels["old_kernel"]
    assert old["status"] == "unresolved" and old["problem"]["missing"] == ["triton.language._not_in_this_triton"]
    assert old["problem"]["places"] == ["pkg/old.py:6"]  # the def of the helper that reads it
    assert kernels["good_kernel"]["status"] == kernels["branch_kernel"]["status"] == "assumed"
    assert kernels["called_kernel"]["status"] == "assumed"


MODE_KERNEL = TRITON + """

@triton.autotune(configs=[triton.Config({"BLOCK": 64}, num_warps=4),
                          triton.Config({"BLOCK": 128}, num_warps=4)], key=["n"])
@triton.jit
def act_kernel(x_ptr, n, ACT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if ACT == "tanh":
        x = tl._not_in_this_triton(x) * 2 + 1
    elif ACT == "relu":
        x = tl.maximum(x, 0.0)
    tl.store(x_ptr + offs, x, mask=offs < n)


def act(x, activation: str):
    act_kernel[(1,)](x, x.numel(), ACT=activation)
"""


def test_an_old_api_reached_in_the_branch_an_assumed_mode_takes_is_unresolved(tmp_path: Path, cache: Path):
    """The mode assumed (the value guarding the most code) reaches an API this Triton lacks:
    every config fails on the same missing ``tl`` attribute, which is Triton's version, not the
    spec: unresolved ``triton_module_absent`` at the line, never "spec probably wrong"."""
    root = write(tmp_path / "repo", {"mode.py": MODE_KERNEL})
    env = dict(os.environ, AUTOTUNE_REWRITE_CACHE_DIR=str(cache), NO_COLOR="1")
    env["PYTHONPATH"] = pythonpath(env=env)
    proc = cli_process.run(["check", ".", "--format", "json"], cwd=root,
                          env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    (kernel,) = json.loads(proc.stdout)["kernels"]
    assert kernel["status"] == "unresolved" and kernel["problem"]["reason"] == "triton_module_absent"
    assert kernel["problem"]["missing"] == ["triton.language._not_in_this_triton"]
    line = next(i for i, ln in enumerate(MODE_KERNEL.splitlines(), 1) if "_not_in_this_triton" in ln)
    assert kernel["problem"]["places"] == [f"mode.py:{line}"]
    assert {a["parameter"]: a["value"] for a in kernel["assumptions"]}["ACT"] == "'tanh'"
