"""Every git call the tool makes, in one small adapter over GitPython.

Why one place: the safety rules for the user's repository (hooks off for our own commands, refs
created in one transaction, worktrees only under our own temporary folders, errors as one-line
``UserError``s naming the path) are then written once instead of at each call site.

``Git`` wraps a checkout (``open`` raises, ``find`` returns None outside git); ``ls_files`` and
``prefix`` work on a folder without building a ``Repo``. A missing git binary is "not in git"
for the read-only lookups and a ``UserError`` for ``apply``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

# GitPython refuses to import when no git binary is found unless told to stay quiet; the
# lookups below then fail per call, which files.py turns into a plain folder walk.
os.environ.setdefault("GIT_PYTHON_REFRESH", "quiet")

import git  # noqa: E402

from autotune_rewrite.errors import UserError  # noqa: E402

GitCommandError = git.GitCommandError

# Our own commands never run the user's hooks: post-checkout/pre-commit belong to their checkout.
NO_HOOKS = ("-c", "core.hooksPath=/dev/null")
_IDENTITY = ("-c", "user.name=autotune-rewrite", "-c", "user.email=autotune-rewrite@users.noreply.localhost")


@dataclass(frozen=True)
class Worktree:
    path: str
    head: str
    branch: str | None  # refs/heads/..., None when detached
    prunable: bool


# No git call of ours should take this long (a worktree of a large checkout takes seconds); one
# that does (a lock held, a filesystem hung) is killed and reads as a failed git command.
GIT_TIMEOUT_S = 600


def _run(cwd: Path | str, *args: str, stdin: str | None = None, strip: bool = True,
         env: dict[str, str] | None = None) -> str:
    """``git <args>`` in ``cwd``; raises git.GitCommandError (or GitCommandNotFound). Every call
    is ``--no-optional-locks``: a lookup (``ls-files``, ``rev-parse``) must not refresh the
    user's index as a side effect either (seen once under load in the index test)."""
    cmd = git.Git(str(cwd))
    argv = ["git", *(() if args[:1] == ("--no-optional-locks",) else ("--no-optional-locks",)), *args]
    if stdin is None:
        return cmd.execute(argv, strip_newline_in_stdout=strip, env=env, kill_after_timeout=GIT_TIMEOUT_S)
    with tempfile.TemporaryFile() as fh:  # GitPython feeds stdin from a file object
        fh.write(stdin.encode("utf-8"))
        fh.seek(0)
        return cmd.execute(argv, istream=fh, strip_newline_in_stdout=strip, kill_after_timeout=GIT_TIMEOUT_S)


def _try(cwd: Path | str, *args: str) -> str | None:
    """``git <args>`` output, or None when git fails or is missing (a lookup, not an action)."""
    try:
        return _run(cwd, *args)
    except (git.GitCommandError, git.GitCommandNotFound, OSError):
        return None


# --------------------------------------------------------------------------- folder lookups
def ls_files(root: Path, pattern: str = "*.py") -> list[str] | None:
    """Tracked plus untracked-not-ignored files under ``root`` matching ``pattern``, relative to
    ``root``; None when ``root`` is not in a work tree or git is missing."""
    out = _try(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", pattern)
    if out is None:
        return None
    return sorted({n for n in out.split("\0") if n})


def is_ignored(path: Path) -> bool:
    """True when git ignores the folder ``path`` (the user named build/ or vendor/ explicitly)."""
    try:
        _run(path, "check-ignore", "-q", ".")
        return True
    except (git.GitCommandError, git.GitCommandNotFound, OSError):
        return False


def prefix(folder: Path) -> str:
    """``folder`` relative to its top level with a trailing slash ('' at the top or outside git)."""
    return _try(folder, "rev-parse", "--show-prefix") or ""


def top_level(folder: Path) -> Path | None:
    out = _try(folder, "rev-parse", "--show-toplevel")
    return Path(out) if out else None


def common_dir(folder: Path) -> Path | None:
    """The git dir every worktree of the checkout shares (absolute), or None outside git."""
    out = _try(folder, "rev-parse", "--path-format=absolute", "--git-common-dir")
    return Path(out) if out else None


def commit_of(folder: Path, ref: str) -> str:
    """The commit ``ref`` names, seen from ``folder``; UserError (exit 2) when there is none."""
    sha = _try(folder, "rev-parse", "--verify", "-q", "--end-of-options", f"{ref}^{{commit}}")
    if not sha:
        where = top_level(folder)
        raise UserError(f"--changed-since {ref}: no such commit in {where or folder}"
                        + ("" if where else " (not a git checkout)") + "; name a branch, tag or commit")
    return sha


def changed_since(folder: Path, sha: str) -> tuple[list[str], list[str]]:
    """(paths that differ between ``sha`` and the working tree, paths that did not exist at
    ``sha``), relative to ``folder`` and limited to it. Committed, staged and unstaged changes
    of tracked files and untracked files that are not ignored all count; a rename is its two
    paths (``--no-renames``: a delete and an add). Read-only: ``git diff`` refreshes and writes
    the index it reads whatever ``--no-optional-locks`` says (seen: a stat-dirty file's entry
    rewritten), so it reads a private copy of the user's index (``GIT_INDEX_FILE``). The copy keeps
    the index's mtime: git trusts an entry's stat data only when the file is older than the index
    (its "racy" check), and a fresh mtime made a same-size edit in the commit's second look clean."""
    with tempfile.TemporaryDirectory(prefix="autotune-rewrite-index-") as tmp:
        env = None
        index = _try(folder, "rev-parse", "--path-format=absolute", "--git-path", "index")
        if index and Path(index).is_file():
            copy = Path(tmp) / "index"
            shutil.copy2(index, copy)
            env = {"GIT_INDEX_FILE": str(copy)}
        out = _run(folder, "--no-optional-locks", "diff", "--name-status", "-z", "--no-renames", "--relative",
                   sha, "--", strip=False, env=env)
    fields = [f for f in out.split("\0") if f]
    changed, added = [], []
    for status, path in zip(fields[0::2], fields[1::2]):
        changed.append(path)
        if status.startswith("A"):
            added.append(path)
    untracked = _run(folder, "--no-optional-locks", "ls-files", "-z", "--others", "--exclude-standard", strip=False)
    new = [n for n in untracked.split("\0") if n]
    return sorted({*changed, *new}), sorted({*added, *new})


def text_at(folder: Path, sha: str, rel: str) -> str | None:
    """The text of ``rel`` (relative to ``folder``) at commit ``sha``; None when it was absent."""
    return _try(folder, "show", f"{sha}:./{rel}")


# --------------------------------------------------------------------------- a checkout
class Git:
    """One checkout (``open``) or a worktree of it (``at``)."""

    def __init__(self, repo: git.Repo):
        self.repo = repo
        self.top = Path(repo.working_tree_dir).resolve()

    @classmethod
    def open(cls, path: Path) -> Git:
        try:
            repo = git.Repo(path, search_parent_directories=True)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            raise UserError(f"{path}: not a git checkout; `apply` builds branches, use `diff` outside git") from None
        except git.GitCommandNotFound:
            raise UserError(f"{path}: the git command was not found; install git to use `apply`") from None
        if repo.bare:
            raise UserError(f"{path}: a bare repository has no files to rewrite; run apply in a checkout")
        return cls(repo)

    def _git(self, *args: str, stdin: str | None = None) -> str:
        return _run(self.top, *args, stdin=stdin)

    @property
    def common_dir(self) -> Path:
        found = common_dir(self.top)
        return found if found is not None else Path(self.repo.common_dir).resolve()

    def commit_sha(self, rev: str) -> str | None:
        try:
            return self.repo.commit(rev).hexsha
        except (git.BadName, ValueError, git.GitCommandError):
            return None

    def exists_at(self, sha: str, rel: Path) -> bool:
        try:
            self._git("cat-file", "-e", f"{sha}:{rel.as_posix()}")
            return True
        except git.GitCommandError:
            return False

    def has_identity(self) -> bool:
        try:
            return bool(self._git("config", "user.name")) and bool(self._git("config", "user.email"))
        except git.GitCommandError:
            return False

    def branches(self) -> set[str]:
        return {h.name for h in self.repo.heads}

    def valid_branch_name(self, name: str) -> bool:
        try:
            self._git("check-ref-format", "--branch", name)
            return True
        except git.GitCommandError:
            return False

    def ref_sha(self, ref: str) -> str | None:
        try:
            return self._git("rev-parse", "--verify", "-q", ref) or None
        except git.GitCommandError:
            return None

    # ----------------------------------------------------------------------- worktrees
    def worktrees(self) -> list[Worktree]:
        out, cur = [], {}
        for line in self._git("worktree", "list", "--porcelain").splitlines() + [""]:
            if not line:
                if cur:
                    out.append(Worktree(cur.get("worktree", ""), cur.get("HEAD", ""), cur.get("branch"),
                                        "prunable" in cur))
                cur = {}
                continue
            key, _, value = line.partition(" ")
            cur[key] = value
        return out

    def worktree_add_detached(self, path: Path, sha: str) -> Git:
        self._git(*NO_HOOKS, "worktree", "add", "-q", "--detach", str(path), sha)
        return Git(git.Repo(path))

    def worktree_remove(self, path: Path) -> None:
        try:
            self._git("worktree", "remove", "--force", str(path))
        except git.GitCommandError:
            pass  # half-made or already gone: prune clears what is left

    def worktree_prune(self) -> None:
        try:
            self._git("worktree", "prune")
        except git.GitCommandError:
            pass  # a read-only git dir: nothing of ours can be left there either

    # ----------------------------------------------------------------------- writing (worktrees only)
    def add(self, paths: list[Path]) -> None:
        self._git("add", "--", *[str(p) for p in paths])

    def commit(self, message: str, identity_from: Git | None = None) -> str:
        """Commit the index with hooks off; an identity of our own when the user has none."""
        ident = () if (identity_from or self).has_identity() else _IDENTITY
        self._git(*NO_HOOKS, *ident, "commit", "-q", "--no-verify", "-F", "-", stdin=message)
        return self._git("rev-parse", "HEAD")

    def cherry_pick(self, sha: str, identity_from: Git | None = None) -> str | None:
        """``sha``'s change on top of HEAD as a commit of its own (its message kept), merged
        three-way, so an edit HEAD already has merges cleanly; the new HEAD, or None (aborted,
        HEAD unchanged) when the change conflicts with what HEAD has."""
        ident = () if (identity_from or self).has_identity() else _IDENTITY
        try:
            self._git(*NO_HOOKS, *ident, "cherry-pick", "--allow-empty", "--keep-redundant-commits", sha)
        except git.GitCommandError:
            try:
                self._git("cherry-pick", "--abort")
            except git.GitCommandError:
                pass
            return None
        return self._git("rev-parse", "HEAD")

    def reset_hard(self, sha: str) -> None:
        self._git(*NO_HOOKS, "reset", "-q", "--hard", sha)

    def update_refs(self, refs: list[tuple[str, str]], force: bool) -> None:
        """All refs in one ``update-ref --stdin`` transaction: ``create`` fails when a ref
        exists, so a branch made meanwhile is never overwritten; ``force`` updates from the
        value seen. Raises UserError (nothing created) when git refuses."""
        lines = ["start"]
        for ref, sha in refs:
            old = self.ref_sha(ref)
            lines.append(f"update {ref} {sha} {old}" if old and force else f"create {ref} {sha}")
        lines += ["prepare", "commit", ""]
        try:
            self._git("update-ref", "--stdin", stdin="\n".join(lines))
        except git.GitCommandError as exc:
            raise UserError(f"could not create the branches (nothing was created): {str(exc.stderr).strip()}") from None


__all__ = ["Git", "GitCommandError", "NO_HOOKS", "Worktree", "changed_since", "commit_of", "common_dir", "is_ignored",
           "ls_files", "prefix", "text_at", "top_level"]
