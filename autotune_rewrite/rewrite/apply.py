"""``apply``: one review-ready branch per (kernel, variant), never touching the user's checkout.

Everything happens in a temporary detached worktree at the base commit: the pipeline runs on
the base's files there (not on uncommitted edits), each kernel's rewrite becomes one commit
on top of the base, and the branch refs are created at the very end in one
``git update-ref --stdin`` transaction, so either every branch appears or none does, and an
existing branch is never moved unless ``--force`` (and never one that a worktree has checked
out). The worktree is removed whatever happens. Hooks are switched off for our own git calls:
the user's post-checkout/pre-commit hooks belong to their checkout, not to ours.

A PR body is written per branch, by default under ``<git dir>/autotune-rewrite/`` (outside the
working tree, so the checkout stays byte-identical), or under ``--out-dir``.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import git

from autotune_rewrite.output import templating
from autotune_rewrite.errors import UserError
from autotune_rewrite.outcomes import Report, Status
from autotune_rewrite.rewrite.diff import KernelRewrite, RewriteRun, run_rewrites
from autotune_rewrite.rewrite.variants import VARIANTS

PREFIX = "autotune-rewrite"
_NO_HOOKS = ("-c", "core.hooksPath=/dev/null")
_IDENTITY = ("-c", "user.name=autotune-rewrite", "-c", "user.email=autotune-rewrite@users.noreply.localhost")


@dataclass(frozen=True)
class Branch:
    name: str
    commit: str
    pr_body_path: str
    subject: str
    kernel: str
    variant: str


@dataclass(frozen=True)
class ApplyResult:
    base: str  # the base commit
    branches: tuple[Branch, ...]
    runs: tuple[RewriteRun, ...]
    unchanged: tuple[tuple[str, str], ...]  # (kernel ident, variant) with nothing to change
    skipped: tuple[tuple[str, str], ...]  # (kernel ident, why)

    def report(self, strict: bool = False) -> Report:
        """The kernels' outcomes over every variant's run (a bug in any run counts). The branches
        are apply's requested result, so a change is not "found"; a kernel whose change could not
        be built (no launchable config, an edit that cannot be made) is."""
        seen: dict[tuple[str, str | None], object] = {}
        for run in self.runs:
            for o in run.report().outcomes:
                key = (o.kernel, o.spec)
                if key not in seen or o.status is Status.INTERNAL_ERROR:
                    seen[key] = o
        found = any(run.failed for run in self.runs) or any(o.status is Status.NO_LAUNCHABLE for o in seen.values())
        return Report(tuple(seen.values()), found=found, gate=True, strict=strict)


def branch_name(targets: Sequence[str], kernel: str, variant: str) -> str:
    name = f"{PREFIX}/{'+'.join(targets)}/{kernel}-{variant}"
    # git check-ref-format rules that a Python identifier or arch name could still break.
    name = re.sub(r"[\s~^:?*\[\\]+", "_", name).replace("..", "_").replace("@{", "_")
    return name


def _repo(path: Path) -> git.Repo:
    try:
        repo = git.Repo(path, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise UserError(f"{path}: not a git checkout; `apply` builds branches, use `diff` outside git") from None
    if repo.bare:
        raise UserError(f"{path}: a bare repository has no files to rewrite; run apply in a checkout")
    return repo


def _checked_out(repo: git.Repo) -> set[str]:
    out = set()
    for line in repo.git.worktree("list", "--porcelain").splitlines():
        if line.startswith("branch "):
            out.add(line[len("branch "):])
    return out


def _commit(wt: git.Repo, ident: tuple[str, ...], message: str) -> str:
    wt.git.execute(["git", *_NO_HOOKS, *ident, "commit", "-q", "--no-verify", "-F", "-"], istream=_stdin(message))
    return wt.head.commit.hexsha


def _stdin(text: str):
    f = tempfile.TemporaryFile()
    f.write(text.encode("utf-8"))
    f.seek(0)
    return f


def apply_variants(
    path: Path | str,
    variants: Sequence[str],
    kernel: str | None = None,
    base: str = "HEAD",
    force: bool = False,
    out_dir: Path | str | None = None,
    archs: Sequence[str] | None = None,
    batch_expr: str | None = None,
    buckets: Sequence[int] | None = None,
    workers: int | None = None,
    assume_dtype: str | None = None,
) -> ApplyResult:
    """Build the branches. Raises UserError (exit 2) with nothing created on bad input."""
    for v in variants:
        if v not in VARIANTS:
            raise UserError(f"unknown variant {v!r}; choose one of {', '.join(VARIANTS)}")
    path = Path(path).resolve()
    if not path.exists():
        raise UserError(f"{path}: no such file or folder")
    repo = _repo(path)
    top = Path(repo.working_tree_dir).resolve()
    rel = path.relative_to(top)
    try:
        base_sha = repo.commit(base).hexsha
    except (git.BadName, ValueError, git.GitCommandError):
        raise UserError(f"--base {base}: not a commit in {top}") from None
    if not (rel.as_posix() == "." or _exists_at(repo, base_sha, rel)):
        raise UserError(f"{rel}: does not exist at {base}; commit it or pick another --base")
    ident = () if _has_identity(repo) else _IDENTITY
    git_dir = Path(repo.git.rev_parse("--git-common-dir"))
    if not git_dir.is_absolute():
        git_dir = (top / git_dir).resolve()
    out = Path(out_dir).resolve() if out_dir else git_dir / PREFIX / "pr"

    tmp = Path(tempfile.mkdtemp(prefix="autotune-rewrite-apply-"))
    wt_path = tmp / "worktree"
    made: list[tuple[str, str, KernelRewrite, RewriteRun]] = []
    runs, unchanged, skipped = [], [], []
    try:
        repo.git.execute(["git", *_NO_HOOKS, "worktree", "add", "-q", "--detach", str(wt_path), base_sha])
        wt = git.Repo(wt_path)
        for variant in variants:
            run = run_rewrites(
                wt_path / rel, variant, kernel=kernel, archs=archs, batch_expr=batch_expr, buckets=buckets,
                workers=workers, display_path=str(rel), assume_dtype=assume_dtype,
            )
            runs.append(run)
            skipped += [(f"{run.prefix}{k}", why) for k, why in run.skipped + run.failed]
            for kr in run.kernels:
                if not kr.changes:
                    unchanged.append((f"{run.prefix}{kr.site.ident}", variant))
                    continue
                root = Path(run.root)
                for change in kr.changes:
                    with open(root / change.path, "w", encoding="utf-8", newline="") as fh:
                        fh.write(change.after)
                wt.git.add("--", *[str(root / c.path) for c in kr.changes])
                ctx = templating.context(kr, run)
                sha = _commit(wt, ident, templating.commit_message(ctx))
                made.append((branch_name(run.targets, kr.site.kernel, variant), sha, kr, run))
                wt.git.execute(["git", *_NO_HOOKS, "reset", "-q", "--hard", base_sha])
        _check_names(repo, [name for name, *_ in made], force)
        branches, bodies = [], []
        from autotune_rewrite.gpu.bench.results import load_latest

        for name, sha, kr, run in made:
            ctx = templating.context(kr, run, bench=load_latest(git_dir, kr.site.kernel))
            body_path = out / (name.replace("/", "__") + ".md")
            branches.append(Branch(name, sha, str(body_path), kr.decision.subject, f"{run.prefix}{kr.site.ident}", kr.decision.variant))
            bodies.append((body_path, templating.pr_body(ctx)))
        _create_refs(repo, [(b.name, b.commit) for b in branches], force)
        for body_path, text in bodies:  # only once every branch exists
            body_path.parent.mkdir(parents=True, exist_ok=True)
            body_path.write_text(text, encoding="utf-8")
    finally:
        try:
            repo.git.execute(["git", "worktree", "remove", "--force", str(wt_path)])
        except git.GitCommandError:
            pass
        shutil.rmtree(tmp, ignore_errors=True)
        repo.git.execute(["git", "worktree", "prune"])
    return ApplyResult(base_sha, tuple(branches), tuple(runs), tuple(unchanged), tuple(skipped))


def _exists_at(repo: git.Repo, sha: str, rel: Path) -> bool:
    try:
        repo.git.cat_file("-e", f"{sha}:{rel.as_posix()}")
        return True
    except git.GitCommandError:
        return False


def _has_identity(repo: git.Repo) -> bool:
    try:
        return bool(repo.git.config("user.name")) and bool(repo.git.config("user.email"))
    except git.GitCommandError:
        return False


def _check_names(repo: git.Repo, names: list[str], force: bool) -> None:
    for name in names:
        try:
            repo.git.check_ref_format("--branch", name)
        except git.GitCommandError:
            raise UserError(f"{name}: not a valid branch name; rename the kernel or report this") from None
    existing = {h.name for h in repo.heads}
    clash = [n for n in names if n in existing]
    if clash and not force:
        raise UserError(f"branch {clash[0]} already exists; delete it or pass --force to replace it")
    busy = [n for n in clash if f"refs/heads/{n}" in _checked_out(repo)]
    if busy:
        raise UserError(f"branch {busy[0]} is checked out in a worktree; switch away from it before --force")


def _create_refs(repo: git.Repo, refs: list[tuple[str, str]], force: bool) -> None:
    """All branches in one transaction: ``create`` fails if a ref exists, so a branch made
    meanwhile by someone else is never overwritten; ``--force`` updates from the value seen."""
    if not refs:
        return
    lines = ["start"]
    for name, sha in refs:
        ref = f"refs/heads/{name}"
        try:
            old = repo.git.rev_parse("--verify", "-q", ref)
        except git.GitCommandError:
            old = ""
        if old and force:
            lines.append(f"update {ref} {sha} {old}")
        else:
            lines.append(f"create {ref} {sha}")
    lines += ["prepare", "commit", ""]
    try:
        repo.git.execute(["git", "update-ref", "--stdin"], istream=_stdin("\n".join(lines)))
    except git.GitCommandError as exc:
        raise UserError(f"could not create the branches (nothing was created): {exc.stderr.strip()}") from None


__all__ = ["ApplyResult", "Branch", "PREFIX", "apply_variants", "branch_name"]
