"""`apply` through the real CLI against temporary git repositories: branches, commits, PR
bodies, and the user's checkout left byte-identical."""

from __future__ import annotations

import json
import re
from pathlib import Path

from rewrite_e2e import cli, git, make_repo, state


BRANCH = "autotune-rewrite/sm_120/_proj_kernel-v1"


def test_apply_builds_one_commit_branch_and_leaves_the_checkout_alone(tmp_path, cache):
    root = make_repo(tmp_path, "proj_comprehension")
    # An uncommitted edit and an untracked file: both must survive untouched, and the branch
    # must be built from HEAD, not from the edit.
    (root / "proj" / "__init__.py").write_text("# local edit\n")
    (root / "notes.txt").write_text("mine\n")
    before = state(root)
    head = git(root, "rev-parse", "HEAD").strip()

    proc = cli("apply", "--variant", "v1", ".", cwd=root, cache=cache, check_rc=0)
    name, body_path = proc.stdout.strip().split("\t")
    assert name == BRANCH

    after = state(root)
    refs_before = before.pop("refs")
    refs_after = after.pop("refs")
    assert after == before
    assert refs_after.replace(f"refs/heads/{BRANCH} {git(root, 'rev-parse', BRANCH).strip()}\n", "") == refs_before

    # One commit on top of the base, touching only the kernel file, equal to `diff`'s output.
    assert git(root, "rev-parse", f"{BRANCH}~1").strip() == head
    assert git(root, "diff", "--name-only", head, BRANCH).split() == ["proj/project.py"]
    patch = git(root, "diff", head, BRANCH, text=False)
    dry = cli("diff", "--variant", "v1", ".", cwd=root, cache=cache, check_rc=0)
    def hunks(text):  # git adds the enclosing line after "@@ ... @@"; compare the hunk bodies
        return text.split("@@", 2)[2].split("\n", 1)[1]

    assert hunks(patch.decode()) == hunks(dry.stdout)

    message = git(root, "log", "-1", "--format=%B", BRANCH)
    assert message.startswith("Force num_warps=8 for _proj_kernel on sm_120\n")
    trailer = re.search(r"^Autotune-Rewrite: (.*)$", message, re.M).group(1)
    data = json.loads(trailer)
    assert data["variant"] == "v1" and data["configs"] == ["BLOCK_D=64 w8 s2"] and data["arch"] == ["sm_120"]
    assert git(root, "log", "-1", "--format=%an", BRANCH).strip() == "Test User"

    body = Path(body_path)
    assert body.is_file() and root / ".git" in body.parents  # outside the working tree
    text = body.read_text()
    for section in ("### Before", "### After", "### Shared memory model", "### CUDA graph capture", "### Warm-up cost", "### How to reproduce"):
        assert section in text
    assert "| BLOCK_D=64 w8 s2 | fp16 | sm_120 | 10,240 | 40 | 0 | 100.0% (48 warps/SM) | launches |" in text
    assert "autotune-rewrite diff --variant v1 ." in text


def test_existing_branch_needs_force_and_nothing_changes_without_it(tmp_path, cache):
    root = make_repo(tmp_path, "proj_comprehension")
    cli("apply", "--variant", "v1", ".", cwd=root, cache=cache, check_rc=0)
    before = state(root)
    proc = cli("apply", "--variant", "v1", ".", cwd=root, cache=cache, check_rc=2)
    assert f"branch {BRANCH} already exists" in proc.stderr and "--force" in proc.stderr
    assert state(root) == before
    cli("apply", "--variant", "v1", "--force", ".", cwd=root, cache=cache, check_rc=0)
    assert git(root, "rev-parse", f"{BRANCH}~1").strip() == git(root, "rev-parse", "HEAD").strip()


def test_all_variants_one_branch_each_from_base(tmp_path, cache):
    root = make_repo(tmp_path, "proj_comprehension")
    base = git(root, "rev-parse", "HEAD").strip()
    (root / "later.txt").write_text("x\n")
    git(root, "add", "later.txt")
    git(root, "commit", "-q", "-m", "later")
    proc = cli("apply", "--all-variants", "--base", base, "--out-dir", tmp_path / "bodies", ".", cwd=root, cache=cache, check_rc=0)
    names = [line.split("\t")[0] for line in proc.stdout.strip().splitlines()]
    assert names == [f"autotune-rewrite/sm_120/_proj_kernel-{v}" for v in ("prune", "v1", "v2", "v3")]
    for n in names:
        assert git(root, "rev-parse", f"{n}~1").strip() == base
    assert len(list((tmp_path / "bodies").glob("*.md"))) == 4
    assert git(root, "worktree", "list", "--porcelain").count("worktree ") == 1


def test_not_a_git_checkout_exits_2(tmp_path, cache):
    import shutil

    from golden_cases import input_tree

    plain = tmp_path / "plain"
    shutil.copytree(input_tree("proj_comprehension"), plain)
    proc = cli("apply", "--variant", "v1", ".", cwd=plain, cache=cache, check_rc=2)
    assert "not a git checkout" in proc.stderr


def test_a_kernel_that_cannot_be_changed_leaves_the_other_variants_and_no_worktree(tmp_path, cache):
    root = make_repo(tmp_path, "proj_comprehension")
    p = root / "proj" / "project.py"
    p.write_bytes(p.read_bytes().replace(b"_proj_kernel[grid](x, w, y, B, D, BLOCK_B=16)", b"_proj_kernel[grid](*(x, w, y, B, D), BLOCK_B=16)"))
    git(root, "commit", "-q", "-am", "star args")
    before = state(root)
    # v3 cannot edit a *args launch: that is the kernel's outcome (exit 1), not the run's end;
    # prune/v1/v2 are still built, nothing of the user's changes and no worktree is left.
    proc = cli("apply", "--all-variants", ".", cwd=root, cache=cache, check_rc=1)
    assert "_proj_kernel: skipped: " in proc.stderr and "*args/**kwargs" in proc.stderr
    after = state(root)
    assert {k: v for k, v in after.items() if k != "refs"} == {k: v for k, v in before.items() if k != "refs"}
    assert sorted(git(root, "branch", "--list", "autotune-rewrite/*").split()) == [
        f"autotune-rewrite/sm_120/_proj_kernel-{v}" for v in ("prune", "v1", "v2")]


def test_variant_or_all_variants_is_required(tmp_path, cache):
    root = make_repo(tmp_path, "proj_comprehension")
    proc = cli("apply", ".", cwd=root, cache=cache, check_rc=2)
    assert "--variant" in proc.stderr
