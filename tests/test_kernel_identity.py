"""Which kernel a site wraps, and telling kernels apart: a call form over another wrapper names
the ``def``; kernels built inside functions are sites; sites that share ``path::name`` get
distinct idents, ``--kernel path::name:LINE`` or the assigned name selects one, and a bare
ambiguous name is a one-line usage error. ``diff`` edits the new shapes' lists in place."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from autotune_rewrite.errors import UserError
from autotune_rewrite.locate.kernel_names import select_sites
from autotune_rewrite.locate.scan import find_site, scan
from projection_kernel import PROJECTION_SETTINGS, projection_def
from rewrite_e2e import cli, commit_tree, git

HEAD = "import triton\nimport triton.language as tl\n"
PARAMS = "(X, n, BLOCK: tl.constexpr):\n    pass\n"
ONE = 'triton.Config({"BLOCK": 32}, num_warps=4)'


def scanned(root: Path, files: dict[str, str]):
    for rel, text in files.items():
        (root / rel).write_text(textwrap.dedent(text))
    result = scan(root, jobs=1)
    assert result.errors == ()
    return result


def test_call_form_over_heuristics_names_the_def(tmp_path):
    result = scanned(tmp_path, {"k.py": HEAD + f'''
@triton.jit
def k{PARAMS}
k2 = triton.autotune([{ONE}], ["n"])(triton.heuristics({{"EVEN": lambda a: True}})(k))
k3 = triton.autotune([{ONE}], ["n"])(triton.heuristics({{"EVEN": lambda a: True}})(triton.jit(k_raw)))
'''})
    s = find_site(result, "k2")  # by the name it is assigned to
    assert s.kernel == "k" and s.bound_to == "k2" and s.kernel_span.start_line == 5
    assert s.decorators == ("triton.autotune", "triton.heuristics", "triton.jit")
    assert [p.name for p in s.params] == ["X", "n", "BLOCK"]
    assert find_site(result, "k3").kernel == "k_raw"  # not defined anywhere: named, no def


def test_kernels_defined_inside_functions(tmp_path):
    result = scanned(tmp_path, {"k.py": HEAD + f'''
def make_decorated():
    @triton.autotune(configs=[{ONE}], key=["n"])
    @triton.jit
    def inner{PARAMS.replace(chr(10) + "    pass", chr(10) + "        pass")}
    return inner


def make_wrapped(configs):
    @triton.jit
    def inner2{PARAMS.replace(chr(10) + "    pass", chr(10) + "        pass")}
    return triton.autotune(configs=[{ONE}], key=["n"])(inner2)
'''})
    assert [(s.kernel, s.form, s.kernel_span.start_line, [p.name for p in s.params]) for s in result.sites] == [
        ("inner", "decorator", 7, ["X", "n", "BLOCK"]), ("inner2", "call", 15, ["X", "n", "BLOCK"])]


TWINS = HEAD + '''import os

if os.environ.get("WIDE"):
    @triton.autotune(configs=[triton.Config({"BLOCK": 64}, num_warps=8)], key=["n"])
    @triton.jit
    def k_same(X, n, BLOCK: tl.constexpr):
        pass
else:
    @triton.autotune(configs=[triton.Config({"BLOCK": 32}, num_warps=4)], key=["n"])
    @triton.jit
    def k_same(X, n, BLOCK: tl.constexpr):
        pass


@triton.jit
def base(X, n, BLOCK: tl.constexpr):
    pass


fast = triton.autotune(configs=[triton.Config({"BLOCK": 128}, num_warps=8)], key=["n"])(base)
slow = triton.autotune(configs=[triton.Config({"BLOCK": 16}, num_warps=2)], key=["n"])(base)
'''


def test_sites_that_share_path_and_name_are_told_apart(tmp_path):
    result = scanned(tmp_path, {"k.py": TWINS})
    # Two defs: by their def lines. One def autotuned twice: by the sites' lines.
    assert [s.ident for s in result.sites] == ["k.py::k_same:8", "k.py::k_same:13", "k.py::base:22", "k.py::base:23"]
    sites = result.sites
    assert select_sites(sites, "k.py::k_same:13") == [sites[1]]
    assert select_sites(sites, "k_same:8") == [sites[0]]
    assert select_sites(sites, "k.py::k_same:11") == [sites[1]]  # the site's own line works too
    assert select_sites(sites, "slow") == [sites[3]] and select_sites(sites, "k.py::fast") == [sites[2]]
    for name in ("k_same", "k.py::k_same", "base"):
        with pytest.raises(UserError) as err:
            select_sites(sites, name)
        assert "\n" not in str(err.value) and f"kernel '{name}' is ambiguous" in str(err.value)
    with pytest.raises(UserError, match=r"k\.py::base:22 \(fast\), k\.py::base:23 \(slow\); pass one of them"):
        select_sites(sites, "base")


# A projection whose 256-wide tile needs 128 KiB of SMEM: it cannot launch on sm_120.
PROJECT = '''import triton
import triton.language as tl

_AT = triton.autotune
tuner = triton.autotune(
    configs=[
        triton.Config({"BLOCK_D": 64}, num_warps=4, num_stages=2),
        triton.Config({"BLOCK_D": 256}, num_warps=4, num_stages=2),
    ],
    key=["D"],
)


@tuner
@triton.jit
''' + projection_def("tuned_kernel") + '''

def run(x, w, y):
    B, D = x.shape
    tuned_kernel[(triton.cdiv(D, 64),)](x, w, y, B, D, BLOCK_B=16)
'''

SETTINGS = PROJECTION_SETTINGS


def _repo(tmp_path: Path, source: str, kernel: str) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "proj.py").write_text(source)
    (root / "pyproject.toml").write_text(SETTINGS.replace("KERNEL", kernel))
    return commit_tree(root)


def _removed_and_added(diff: str) -> tuple[list[str], list[str]]:
    lines = [l for l in diff.splitlines() if not l.startswith(("---", "+++"))]
    return [l[1:].strip() for l in lines if l.startswith("-")], [l[1:].strip() for l in lines if l.startswith("+")]


def test_diff_edits_a_decorator_objects_list_in_place(tmp_path, cache):
    root = _repo(tmp_path, PROJECT, "tuned_kernel")
    proc = cli("diff", "--variant", "prune", "--check", ".", cwd=root, cache=cache, check_rc=1)
    assert _removed_and_added(proc.stdout) == (['triton.Config({"BLOCK_D": 256}, num_warps=4, num_stages=2),'], [])
    (tmp_path / "p.diff").write_text(proc.stdout)
    git(root, "apply", str(tmp_path / "p.diff"))
    assert "@tuner\n@triton.jit\ndef tuned_kernel(" in (root / "proj.py").read_text()
    again = cli("diff", "--variant", "prune", "--check", ".", cwd=root, cache=cache, check_rc=0)
    assert again.stdout == ""


def test_diff_of_one_decorator_object_applied_to_two_kernels(tmp_path, cache):
    kernel = "@tuner\n@triton.jit\n" + PROJECT.split("@tuner\n@triton.jit\n", 1)[1].split("\n\n\ndef run", 1)[0]
    source = PROJECT.replace("\n\ndef run(", "\n\n" + kernel.replace("tuned_kernel", "other_kernel") + "\n\n\ndef run(")
    root = _repo(tmp_path, source, "tuned_kernel")
    (root / "pyproject.toml").write_text(SETTINGS.replace("KERNEL", "tuned_kernel")
                                         + SETTINGS.split("\n\n", 1)[1].replace("KERNEL", "other_kernel"))
    proc = cli("diff", "--variant", "prune", "--check", ".", cwd=root, cache=cache, check_rc=1)
    # Both kernels are decided before the one list they read is edited: both drop BLOCK_D=256,
    # so it goes once, where it is written, and neither kernel is refused.
    assert _removed_and_added(proc.stdout) == (['triton.Config({"BLOCK_D": 256}, num_warps=4, num_stages=2),'], [])
    assert "also reads the list" not in proc.stderr
    assert "judged 2 of 2 kernels" in proc.stderr
    inlined = cli("diff", "--variant", "prune", "--check", "--inline-configs", ".", cwd=root, cache=cache, check_rc=1)
    assert inlined.stdout == proc.stdout  # an in-place edit exists, so nothing is inlined


def _twins(first: str) -> str:
    """Two defs of ``tuned_kernel`` under ``if``/``else``, through the ``_AT`` alias; the
    first one's configs are ``first`` (on the def's decorator line), the second's are a
    launchable and an unlaunchable one."""
    body = PROJECT.split("@tuner\n@triton.jit\n", 1)[1].split("\n\n\ndef run", 1)[0]
    return PROJECT.split("tuner = ", 1)[0] + textwrap.dedent('''\
        import os

        if os.environ.get("NARROW"):
            @_AT(configs=[FIRST], key=["D"])
            @triton.jit
            BODY
        else:
            @_AT(
                configs=[
                    triton.Config({"BLOCK_D": 64}, num_warps=4, num_stages=2),
                    triton.Config({"BLOCK_D": 256}, num_warps=4, num_stages=2),
                ],
                key=["D"],
            )
            @triton.jit
            BODY
        ''').replace("BODY", textwrap.indent(body, "    ").strip()).replace("FIRST", first)


def test_diff_through_an_alias_and_a_twin_chosen_by_line(tmp_path, cache):
    root = _repo(tmp_path, _twins('triton.Config({"BLOCK_D": 256}, num_warps=8, num_stages=2)'), "tuned_kernel")
    ambiguous = cli("diff", "--variant", "prune", "--kernel", "tuned_kernel", ".", cwd=root, cache=cache, check_rc=2)
    assert ambiguous.stderr.count("\n") == 1 and "proj.py::tuned_kernel:10, proj.py::tuned_kernel:30" in ambiguous.stderr
    proc = cli("diff", "--variant", "prune", "--check", "--kernel", "proj.py::tuned_kernel:30", ".",
               cwd=root, cache=cache, check_rc=1)
    # Only the chosen twin's list changes (the other's lone config cannot launch either).
    assert _removed_and_added(proc.stdout) == (['triton.Config({"BLOCK_D": 256}, num_warps=4, num_stages=2),'], [])
    (tmp_path / "p.diff").write_text(proc.stdout)
    git(root, "apply", "--check", str(tmp_path / "p.diff"))


def test_apply_makes_one_branch_per_twin(tmp_path, cache):
    first = 'triton.Config({"BLOCK_D": 64}, num_warps=8, num_stages=2), triton.Config({"BLOCK_D": 256}, num_warps=8, num_stages=2)'
    root = _repo(tmp_path, _twins(first), "tuned_kernel")
    proc = cli("apply", "--variant", "prune", "--group", "kernel", ".", cwd=root, cache=cache, check_rc=0)
    assert [line.split("\t")[0] for line in proc.stdout.splitlines()] == [
        "autotune-rewrite/sm_120/tuned_kernel-L10-prune", "autotune-rewrite/sm_120/tuned_kernel-L30-prune"]
