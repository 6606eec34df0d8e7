"""``--changed-since REF``: a site whose inputs changed is never skipped, an unchanged one is.

Every test builds a real git repository in tmp_path holding two kernels:
- ``a_kernel`` (pkg/kern_a.py): a @triton.jit helper from pkg/helpers.py, configs from a helper
  in pkg/tuning.py that reads a module variable of pkg/consts.py, launched by ``run_a`` in
  pkg/ops_a.py, which ``forward`` in pkg/model.py calls;
- ``b_kernel`` (pkg/kern_b.py): literal configs, launched in its own file.
and changes one input of one kind, committed, staged, unstaged or untracked.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from repo_env import pythonpath

from autotune_rewrite import gitrepo
from autotune_rewrite.changed import Changes, SiteInputs, Why, changed_sites
from autotune_rewrite.changed_inputs import SiteInputsOf, changes_since
from autotune_rewrite.check.plans import RunBundles
from autotune_rewrite.errors import UserError
from autotune_rewrite.locate.scan import scan
from autotune_rewrite.model import AutotuneSite, Span
from autotune_rewrite.settings import load_settings
import cli_process

FILES = {
    "pyproject.toml": '[project]\nname = "demo"\n\n[tool.autotune-rewrite]\narch = ["sm_120"]\n',
    "pkg/__init__.py": "",
    "pkg/consts.py": "BLOCKS = (32, 64)\n",
    "pkg/tuning.py": (
        "import triton\n\nfrom pkg.consts import BLOCKS\n\n\n"
        "def configs():\n"
        '    return [triton.Config({"BLOCK": b}, num_warps=4, num_stages=2) for b in BLOCKS]\n'
    ),
    "pkg/helpers.py": (
        "import triton\nimport triton.language as tl\n\n\n"
        "@triton.jit\ndef twice(x):\n    return x * 2\n"
    ),
    "pkg/kern_a.py": (
        "import triton\nimport triton.language as tl\n\n"
        "from pkg.helpers import twice\nfrom pkg.tuning import configs\n\n\n"
        '@triton.autotune(configs=configs(), key=["n"])\n'
        "@triton.jit\n"
        "def a_kernel(x_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    x = tl.load(x_ptr + offs, mask=offs < n)\n"
        "    tl.store(x_ptr + offs, twice(x), mask=offs < n)\n"
    ),
    "pkg/ops_a.py": (
        "import torch\nimport triton\n\nfrom pkg.kern_a import a_kernel\n\n\n"
        "def run_a(x: torch.Tensor):\n"
        '    grid = lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)\n'
        "    a_kernel[grid](x, x.numel())\n"
    ),
    "pkg/model.py": "from pkg.ops_a import run_a\n\n\ndef forward(x):\n    return run_a(x)\n",
    "pkg/kern_b.py": (
        "import torch\nimport triton\nimport triton.language as tl\n\n\n"
        "@triton.autotune(\n"
        '    configs=[triton.Config({"BLOCK": 64}, num_warps=4, num_stages=2)],\n'
        '    key=["n"],\n'
        ")\n"
        "@triton.jit\n"
        "def b_kernel(x_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)\n\n\n"
        "def run_b(x: torch.Tensor):\n"
        '    b_kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, x.numel())\n'
    ),
}


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


def committed_files(root: Path) -> Path:
    """``FILES`` written under ``root`` and committed: the checkout every test here starts from."""
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    return root


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = committed_files(tmp_path / "repo")
    scan(root, jobs=1, cache_dir=tmp_path / "scan-cache")  # warm: each change below meets cached facts and links
    return root


def edit(repo: Path, rel: str, old: str, new: str) -> None:
    path = repo / rel
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def selected(repo: Path, ref: str = "HEAD") -> dict[str, Why]:
    settings = load_settings(repo)
    root = Path(settings.root)
    sites = scan(root, jobs=1, settings=settings, cache_dir=repo.parent / "scan-cache").sites
    assert {s.kernel for s in sites} >= {"a_kernel", "b_kernel"}
    selection = changed_sites(sites, changes_since(root, ref), SiteInputsOf(root, RunBundles(root, None)))
    assert selection.total == len(sites)
    return {s.site.kernel: s.why for s in selection.selected}


# --------------------------------------------------------------------------- each kind of change
def test_unchanged_tree_judges_nothing(repo: Path):
    assert selected(repo) == {}


def test_kernel_body_change_selects_only_that_kernel(repo: Path):
    edit(repo, "pkg/kern_a.py", "twice(x), mask", "twice(x) + 1, mask")  # unstaged
    assert selected(repo) == {"a_kernel": Why.INPUT}


def test_staged_and_committed_changes_count(repo: Path):
    edit(repo, "pkg/kern_b.py", "+ 1, mask", "+ 2, mask")
    git(repo, "add", "pkg/kern_b.py")
    assert selected(repo) == {"b_kernel": Why.INPUT}
    git(repo, "commit", "-qm", "b")
    assert selected(repo) == {}
    assert selected(repo, "HEAD~1") == {"b_kernel": Why.INPUT}


def test_jit_helper_in_another_module_selects_the_kernel_reaching_it(repo: Path):
    edit(repo, "pkg/helpers.py", "x * 2", "x * 3")
    assert selected(repo) == {"a_kernel": Why.INPUT}


def test_config_list_in_a_helper_module_and_its_module_variable(repo: Path):
    edit(repo, "pkg/tuning.py", "num_warps=4", "num_warps=8")
    assert selected(repo) == {"a_kernel": Why.INPUT}
    git(repo, "checkout", "--", "pkg/tuning.py")
    edit(repo, "pkg/consts.py", "(32, 64)", "(32, 64, 128)")  # read by the helper, two imports away
    assert selected(repo) == {"a_kernel": Why.INPUT}


def test_launch_site_file_selects_its_kernel(repo: Path):
    edit(repo, "pkg/ops_a.py", "a_kernel[grid](x, x.numel())", "a_kernel[grid](x, x.numel() // 2)")
    assert selected(repo) == {"a_kernel": Why.INPUT}


def test_a_caller_of_the_launching_function_selects_its_kernel(repo: Path):
    edit(repo, "pkg/model.py", "return run_a(x)", "return run_a(x.contiguous())")
    assert selected(repo) == {"a_kernel": Why.CALLER}


def test_settings_table_change_selects_everything_other_pyproject_changes_nothing(repo: Path):
    edit(repo, "pyproject.toml", 'name = "demo"', 'name = "demo2"')
    assert selected(repo) == {}
    edit(repo, "pyproject.toml", 'arch = ["sm_120"]', 'arch = ["sm_120", "sm_90"]')
    assert selected(repo) == {"a_kernel": Why.SETTINGS, "b_kernel": Why.SETTINGS}


def test_a_renamed_file_counts_as_both_paths(repo: Path):
    git(repo, "mv", "pkg/kern_b.py", "pkg/kern_b2.py")  # staged rename
    assert selected(repo) == {"b_kernel": Why.INPUT}
    git(repo, "mv", "pkg/kern_b2.py", "pkg/kern_b.py")
    (repo / "pkg/helpers.py").rename(repo / "pkg/helpers_old.py")  # plain mv: a delete and an untracked file
    sel = selected(repo)  # a_kernel's helper is gone: its inputs changed (it cannot be cut out now)
    assert set(sel) == {"a_kernel"}


def test_an_untracked_new_kernel_file_is_judged(repo: Path):
    text = FILES["pkg/kern_b.py"].replace("b_kernel", "c_kernel").replace("run_b", "run_c")
    (repo / "pkg/kern_c.py").write_text(text)
    assert selected(repo) == {"c_kernel": Why.INPUT}
    (repo / ".gitignore").write_text("pkg/kern_c.py\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-qm", "ignore")
    assert "c_kernel" not in selected(repo, "HEAD")  # ignored: not scanned, not a change either


def test_a_ref_that_names_no_commit_is_a_user_error(repo: Path):
    with pytest.raises(UserError, match="--changed-since no-such-branch: no such commit"):
        changes_since(repo, "no-such-branch")


def test_the_users_index_is_not_written(repo: Path):
    edit(repo, "pkg/kern_a.py", "twice(x), mask", "twice(x) + 1, mask")
    os.utime(repo / "pkg/kern_b.py")  # a stat change git would like to refresh in the index
    index = (repo / ".git" / "index").read_bytes()
    selected(repo)
    assert (repo / ".git" / "index").read_bytes() == index


def test_a_same_size_edit_in_the_commits_second_is_seen(tmp_path: Path):
    """git trusts an index entry's stat data only when the file is older than the index; the
    private copy of the index must keep its mtime, or an edit of the same size made in the second
    of the commit (and read in a later second) looks clean. CI hit this once in ~10 runs."""
    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q")
    path, index = root / "f.py", root / ".git" / "index"
    for _ in range(20):  # until the commit and the edit fall in one second (nearly always the first try)
        path.write_text(f"w = {time.time_ns()}\n")
        git(root, "add", "f.py")
        git(root, "commit", "-qm", "x")
        path.write_text(path.read_text().replace("w =", "v ="))  # same size, same inode
        if int(path.stat().st_mtime) == int(index.stat().st_mtime):
            break
    time.sleep(1.05 - time.time() % 1)  # the copy is then made in a later second
    assert gitrepo.changed_since(root, git(root, "rev-parse", "HEAD").strip()) == (["f.py"], [])


# --------------------------------------------------------------------------- the pure rule
def _site(kernel: str) -> AutotuneSite:
    span = Span(1, 0, 1, 1)
    return AutotuneSite(path=f"{kernel}.py", line=1, span=span, form="decorator", kernel=kernel, kernel_span=span,
                        kernel_path=f"{kernel}.py", params=(), do_not_specialize=(), decorators=(), key=(),
                        key_span=None, configs=(), configs_origin=None, configs_span=None, unresolved_reason=None)


def test_pure_rule_every_doubt_selects():
    k, m, u, o = _site("k"), _site("m"), _site("u"), _site("o")
    inputs = {"k": SiteInputs(frozenset({"k.py"})), "m": SiteInputs(frozenset({"m.py"}), frozenset({"launch_m"})),
              "u": SiteInputs(frozenset(), unknown="cannot read"), "o": SiteInputs(frozenset({"o.py"}), open_names=True)}
    changes = Changes("HEAD", frozenset({"x.py"}), frozenset({"x.py"}), words={"x.py": frozenset({"launch_m"})})
    got = changed_sites([k, m, u, o], changes, lambda s: inputs[s.kernel])
    assert [(s.site.kernel, s.why, s.path) for s in got.selected] == [
        ("m", Why.CALLER, "x.py"), ("u", Why.UNKNOWN, ""), ("o", Why.NEW_FILE, "x.py")]
    assert got.total == 4
    everything = changed_sites([k, m], Changes("HEAD", frozenset({"pyproject.toml"}), settings=("pyproject.toml",)),
                               lambda s: pytest.fail("settings changed: no inputs needed"))
    assert [s.why for s in everything.selected] == [Why.SETTINGS, Why.SETTINGS]
    assert changed_sites([k], Changes("HEAD", frozenset()), lambda s: pytest.fail("nothing changed")).selected == ()


# --------------------------------------------------------------------------- the CLI
def _cli(repo: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": pythonpath(), "NO_COLOR": "1"}
    return cli_process.run(args, cwd=repo, env=env)


def test_cli_check_judges_only_the_changed_kernel(repo: Path):
    same = _cli(repo, "check", ".", "--changed-since", "HEAD", "-j", "1")
    assert same.returncode == 0, same.stderr
    assert "judged 0 of 2 sites changed since HEAD" in same.stderr
    edit(repo, "pkg/kern_b.py", "+ 1, mask", "+ 2, mask")
    run = _cli(repo, "check", ".", "--changed-since", "HEAD", "-j", "1", "--format", "json")
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    assert [k["kernel"] for k in doc["kernels"]] == ["b_kernel"]
    assert doc["changed_since"]["line"].startswith("judged 1 of 2 sites changed since HEAD")
    assert doc["changed_since"]["selected"] == [{"kernel": "pkg/kern_b.py::b_kernel", "why": "input",
                                                 "path": "pkg/kern_b.py", "detail": None,
                                                 "reason": "pkg/kern_b.py changed"}]


def test_cli_diff_takes_the_flag_and_a_bad_ref_exits_2(repo: Path):
    same = _cli(repo, "diff", ".", "--variant", "prune", "--check", "--changed-since", "HEAD")
    assert same.returncode == 0, same.stderr
    assert same.stdout == ""
    assert "judged 0 of 2 sites changed since HEAD" in same.stderr
    for command in (["check", "."], ["diff", ".", "--variant", "prune"]):
        bad = _cli(repo, *command, "--changed-since", "nope")
        assert bad.returncode == 2
        assert bad.stderr.strip().splitlines() == [f"error: --changed-since nope: no such commit in {repo.resolve()}; "
                                                  "name a branch, tag or commit"]
