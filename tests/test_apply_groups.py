"""``apply --group``: one branch for the kernels of a file (the default) or of the repository,
one commit per kernel inside it; ``--group kernel`` keeps a branch each (issue 21 item 5).

The fixture is a git repository in tmp_path with two projection kernels in one file, each with
its own literal list holding one config that cannot launch on sm_120 (``BLOCK_D=256``)."""

from __future__ import annotations

from projection_kernel import projection_def
from projection_repo import kernel, repo
from rewrite_e2e import cli, git

LIST = '[triton.Config({"BLOCK_D": 64}, num_warps=4, num_stages=2), triton.Config({"BLOCK_D": 256}, num_warps=4, num_stages=2)]'
TWO = (kernel(f'@triton.autotune(configs={LIST}, key=["D"])') + "\n\n"
       + f'@triton.autotune(configs={LIST}, key=["B"])\n@triton.jit\n' + projection_def("proj_kernel_b"))
DEAD = 'triton.Config({"BLOCK_D": 256}, num_warps=4, num_stages=2)'


def _branches(root) -> list[str]:
    return sorted(git(root, "branch", "--list", "autotune-rewrite/*", "--format=%(refname:short)").split())


def test_the_kernels_of_one_file_get_one_branch_with_a_commit_each(tmp_path, cache):
    root = repo(tmp_path, {"proj.py": TWO})
    base = git(root, "rev-parse", "HEAD").strip()
    proc = cli("apply", "--variant", "prune", ".", cwd=root, cache=cache, check_rc=0)
    [branch] = _branches(root)
    assert branch == "autotune-rewrite/sm_120/file/proj.py-prune"
    log = git(root, "log", "--format=%s", f"{base}..{branch}").splitlines()
    assert len(log) == 2  # one commit per kernel: a reviewer can drop one
    after = git(root, "show", f"{branch}:proj.py")
    assert DEAD not in after and after.count('triton.Config({"BLOCK_D": 64}') == 2
    assert git(root, "rev-parse", "HEAD").strip() == base and (root / "proj.py").read_text() == TWO  # checkout untouched
    [line] = proc.stdout.splitlines()
    body = open(line.split("\t")[1]).read()
    assert body.startswith("# prune for sm_120: 2 kernels of proj.py\n")
    assert "| `proj.py::proj_kernel` | 2 | 1 | 1 | - |" in body and "| `proj.py::proj_kernel_b` | 2 | 1 | 1 | - |" in body
    assert body.count("### What changed and why") == 2  # each kernel's own section follows the table


def test_group_kernel_keeps_a_branch_per_kernel(tmp_path, cache):
    root = repo(tmp_path, {"proj.py": TWO})
    cli("apply", "--variant", "prune", "--group", "kernel", ".", cwd=root, cache=cache, check_rc=0)
    assert _branches(root) == ["autotune-rewrite/sm_120/proj_kernel-prune", "autotune-rewrite/sm_120/proj_kernel_b-prune"]


def test_an_unknown_group_is_a_usage_error(tmp_path, cache):
    root = repo(tmp_path, {"proj.py": TWO})
    proc = cli("apply", "--variant", "prune", "--group", "team", ".", cwd=root, cache=cache, check_rc=2)
    assert "--group team: choose one of kernel, file, repo" in proc.stderr
    assert _branches(root) == []


def test_group_repo_puts_every_file_in_one_branch(tmp_path, cache):
    other = kernel(f'@triton.autotune(configs={LIST}, key=["B"])').replace("def proj_kernel(", "def other_kernel(")
    root = repo(tmp_path, {"proj.py": kernel(f'@triton.autotune(configs={LIST}, key=["D"])'), "other.py": other})
    base = git(root, "rev-parse", "HEAD").strip()
    cli("apply", "--variant", "prune", ".", cwd=root, cache=cache, check_rc=0)
    assert _branches(root) == ["autotune-rewrite/sm_120/other_kernel-prune", "autotune-rewrite/sm_120/proj_kernel-prune"]
    cli("apply", "--variant", "prune", "--group", "repo", ".", cwd=root, cache=cache, check_rc=0)
    assert "autotune-rewrite/sm_120/repo-prune" in _branches(root)
    log = git(root, "log", "--format=%s", f"{base}..autotune-rewrite/sm_120/repo-prune").splitlines()
    assert len(log) == 2
    for path in ("proj.py", "other.py"):
        assert DEAD not in git(root, "show", f"autotune-rewrite/sm_120/repo-prune:{path}")
