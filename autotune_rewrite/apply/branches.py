"""``apply``: one review-ready branch per (kernel, variant), never touching the user's checkout.

Everything happens in a temporary detached worktree at the base commit: the pipeline runs on
the base's files there (not on uncommitted edits), each kernel's rewrite becomes one commit
on top of the base, and the branch refs are created at the very end in one
``git update-ref --stdin`` transaction, so either every branch appears or none does, and an
existing branch is never moved unless ``--force`` (and never one that a worktree has checked
out). The worktree is removed whatever happens, SIGINT and SIGTERM included; it lives in
``<tmp>/autotune-rewrite-apply-<pid>-*/worktree``, so the next run can tell a worktree that a
SIGKILL left (owner dead) from everybody else's, and removes only those. Hooks are switched off for our own git calls:
the user's post-checkout/pre-commit hooks belong to their checkout, not to ours.

A PR body is written per branch, by default under ``<git dir>/autotune-rewrite/`` (outside the
working tree, so the checkout stays byte-identical), or under ``--out-dir``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from typing import Sequence

from autotune_rewrite import interrupts, tempdirs
from autotune_rewrite.apply.groups import DEFAULT_GROUP, GROUPS, PREFIX, branch_name, group_branch_name, group_key
from autotune_rewrite.disk_cache import write_atomic
from autotune_rewrite.gitrepo import Git, GitCommandError
from autotune_rewrite.output import templating
from autotune_rewrite.errors import UserError
from autotune_rewrite.rewrite.diff import run_rewrites
from autotune_rewrite.rewrite.rewrite_run import KernelRewrite, RewriteRun
from autotune_rewrite.rewrite.applied import ApplyResult, Branch
from autotune_rewrite.rewrite.variants import VARIANTS

TEMP_KIND = "apply"  # worktrees live in <tmp>/autotune-rewrite-apply-<pid>-*/worktree


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
    assume: Sequence[tuple[str, Any]] = (),
    exact: bool = False,
    allow_unseen_launches: bool = False,
    env: Sequence[tuple[str, str]] = (),
    inline_configs: bool | None = None,
    group: str = DEFAULT_GROUP,
) -> ApplyResult:
    """Build the branches, one per ``group`` of kernels (``apply/groups``). Raises UserError
    (exit 2) with nothing created on bad input."""
    if group not in GROUPS:
        raise UserError(f"--group {group}: choose one of {', '.join(GROUPS)}")
    for v in variants:
        if v not in VARIANTS:
            raise UserError(f"unknown variant {v!r}; choose one of {', '.join(VARIANTS)}")
    path = Path(path).resolve()
    if not path.exists():
        raise UserError(f"{path}: no such file or folder")
    repo = Git.open(path)
    top = repo.top
    rel = path.relative_to(top)
    base_sha = repo.commit_sha(base)
    if base_sha is None:
        raise UserError(f"--base {base}: not a commit in {top}")
    if not (rel.as_posix() == "." or repo.exists_at(base_sha, rel)):
        raise UserError(f"{rel}: does not exist at {base}; commit it or pick another --base")
    git_dir = repo.common_dir
    out = Path(out_dir).resolve() if out_dir else git_dir / PREFIX / "pr"
    _check_writable(out, "--out-dir" if out_dir else "the git dir (PR bodies go there; pass --out-dir)")
    prune_stale_worktrees(repo)

    made: list[tuple[str, str, KernelRewrite, RewriteRun]] = []
    runs, unchanged, skipped = [], [], []
    with tempdirs.temp_dir(TEMP_KIND) as tmp:
        wt_path = tmp / "worktree"
        try:
            with interrupts.deferred():  # a `worktree add` cut short could finish after our cleanup
                wt = _add_worktree(repo, wt_path, base_sha)
            for variant in variants:
                run = run_rewrites(
                    wt_path / rel, variant, kernel=kernel, archs=archs, batch_expr=batch_expr, buckets=buckets,
                    workers=workers, display_path=str(rel), assume_dtype=assume_dtype, assume=assume, exact=exact,
                    allow_unseen_launches=allow_unseen_launches, env=env, inline_configs=inline_configs,
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
                    wt.add([root / c.path for c in kr.changes])
                    ctx = templating.context(kr, run)
                    sha = wt.commit(templating.commit_message(ctx), identity_from=repo)
                    # Two kernels sharing ``path::name`` (``ident_line``) get a branch each.
                    name = kr.site.kernel if kr.site.ident_line is None else f"{kr.site.kernel}-L{kr.site.ident_line}"
                    # A per-target kernel is rewritten per branch of its code: one branch each, named
                    # by the targets that take it.
                    made.append((branch_name(kr.site.view_targets or run.targets, name, variant), sha, [kr], run))
                    wt.reset_hard(base_sha)
            made = _grouped(made, group, wt, base_sha, repo)
            _check_names(repo, [name for name, *_ in made], force)
            branches, bodies = [], []
            from autotune_rewrite.timings.bench_results import load_latest

            for name, sha, krs, run in made:
                members = [(kr, templating.context(kr, run, bench=load_latest(git_dir, kr.site.kernel))) for kr in krs]
                body_path = out / (name.replace("/", "__") + ".md")
                if len(members) == 1:
                    (kr, ctx), = members
                    subject, body = ctx["subject"], templating.pr_body(ctx)
                else:
                    subject = templating.group_subject(krs[0].site.path if group == "file" else None, len(krs), run)
                    body = templating.group_pr_body(subject, members, run)
                idents = ", ".join(f"{run.prefix}{kr.site.ident}" for kr in krs)
                branches.append(Branch(name, sha, str(body_path), subject, idents, run.variant))
                bodies.append((body_path, body))
            # A signal here would leave branches without their PR bodies: finish, then honour it.
            with interrupts.deferred():
                if branches:
                    repo.update_refs([(f"refs/heads/{b.name}", b.commit) for b in branches], force)
                unwritten = [p for p, text in bodies if not write_atomic(p, text.encode("utf-8"))]
        finally:
            repo.worktree_remove(wt_path)
            tempdirs.remove(tmp)
            repo.worktree_prune()
    if unwritten:
        raise UserError(f"{unwritten[0].parent}: cannot write the PR bodies there (the branches were created); "
                        "pass a writable --out-dir with --force to write them")
    return ApplyResult(base_sha, tuple(branches), tuple(runs), tuple(unchanged), tuple(skipped))


def _grouped(made: list, group: str, wt: Git, base_sha: str, repo: Git) -> list:
    """``made`` (one branch per kernel) as one branch per group: the group's kernel commits
    picked onto the base in file and line order, each its own commit. A group whose commits do
    not merge cleanly (two kernels' edits of one line) keeps a branch per kernel."""
    if group == "kernel":
        return made
    groups: dict[tuple, list] = {}
    for entry in made:
        _, _, (kr,), run = entry
        key = (run.variant, kr.site.view_targets or run.targets, group_key(group, kr.site.path, kr.site.ident))
        groups.setdefault(key, []).append(entry)
    out = []
    for (variant, targets, key), entries in groups.items():
        if len(entries) == 1:
            out += entries
            continue
        entries.sort(key=lambda e: (e[2][0].site.path, e[2][0].site.line))
        wt.reset_hard(base_sha)
        head = None
        for _, sha, _, _ in entries:
            head = wt.cherry_pick(sha, identity_from=repo)
            if head is None:
                break
        wt.reset_hard(base_sha)
        if head is None:
            out += entries
            continue
        out.append((group_branch_name(group, key, targets, variant), head, [e[2][0] for e in entries], entries[0][3]))
    return out


def _check_writable(folder: Path, what: str) -> None:
    """Before any work: the folder (or its first existing parent) must be a writable folder.
    Root ignores permission bits, so a file where the folder should be is the honest test there."""
    probe = folder
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    if not probe.is_dir():
        raise UserError(f"{folder}: {probe} is not a folder, so {what} cannot be written; pick another folder")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise UserError(f"{folder}: {probe} is read-only, so {what} cannot be written; pick a writable folder")


def _add_worktree(repo: Git, wt_path: Path, base_sha: str) -> Git:
    try:
        return repo.worktree_add_detached(wt_path, base_sha)
    except GitCommandError as exc:
        detail = (str(exc.stderr).strip().splitlines() or ["git failed"])[-1].strip(" '")
        raise UserError(f"{repo.common_dir}: cannot add a temporary worktree ({detail}); "
                        "apply needs a writable git dir") from None


def prune_stale_worktrees(repo: Git) -> list[str]:
    """Worktrees a killed ``apply`` left: git forgets those whose folder is gone (``prune``); ours
    whose owning process is dead are removed. Nobody else's worktree is ever touched."""
    repo.worktree_prune()
    removed = []
    for wt in repo.worktrees():
        folder = Path(wt.path).parent
        if wt.path and Path(wt.path).name == "worktree" and tempdirs.is_stale(folder) \
                and tempdirs.owner_kind(folder) == TEMP_KIND:
            repo.worktree_remove(Path(wt.path))
            tempdirs.remove(folder)
            removed.append(wt.path)
    if removed:
        repo.worktree_prune()
    return removed


def _check_names(repo: Git, names: list[str], force: bool) -> None:
    for name in names:
        if not repo.valid_branch_name(name):
            raise UserError(f"{name}: not a valid branch name; rename the kernel or report this")
    existing = repo.branches()
    clash = [n for n in names if n in existing]
    if clash and not force:
        raise UserError(f"branch {clash[0]} already exists; delete it or pass --force to replace it")
    checked_out = {wt.branch for wt in repo.worktrees()}
    busy = [n for n in clash if f"refs/heads/{n}" in checked_out]
    if busy:
        raise UserError(f"branch {busy[0]} is checked out in a worktree; switch away from it before --force")


__all__ = ["ApplyResult", "Branch", "PREFIX", "apply_variants", "branch_name", "prune_stale_worktrees"]
