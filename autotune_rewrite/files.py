"""Which files a scan reads, and the byte prefilter in front of every parse.

In a git checkout the file list comes from git itself (tracked plus untracked-but-not-ignored),
so ``.gitignore`` is respected exactly as the user's git sees it. Elsewhere a walk skips hidden
folders, virtualenvs and caches. Explicitly named files are always processed, excludes or not.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from autotune_rewrite.errors import UserError

# Cheap test before any parse: a file that never says "autotune" cannot hold a site, unless
# it uses a name another module binds to it (``tune = triton.autotune``; see ``mentions_word``).
SITE_MARKER = b"autotune"

_SKIP_DIRS = frozenset({"__pycache__", "node_modules", "site-packages", "venv", "env", "build", "dist"})


@dataclass(frozen=True)
class FileSet:
    """The files of one scan: POSIX paths relative to ``root`` (a folder).

    ``tree``: the project's files the scanned ones may import or be launched from. A scan limited
    to some paths (``check pkg/ops/gemm.py``) still reads the rest of the project for the helper
    modules its configs call and the wrappers that launch its kernels, so it judges those kernels
    as a scan of the whole project would; ``()`` means the same as ``files``.
    """

    root: Path
    files: tuple[str, ...]
    from_git: bool
    tree: tuple[str, ...] = ()

    @property
    def project(self) -> tuple[str, ...]:
        """Every file of the project the scan may read (``tree``, else ``files``)."""
        return self.tree or self.files


# A launch is ``kernel[grid](...)``: a file without ``](`` (or black-less ``] (``) launches
# nothing, so the second pass re-reads only files that have one.
LAUNCH_MARKERS = (b"](", b"] (")


def is_site_candidate(data: bytes) -> bool:
    return SITE_MARKER in data


def may_launch(data: bytes) -> bool:
    return any(m in data for m in LAUNCH_MARKERS)


def mentions_any(data: bytes, names: frozenset[bytes]) -> bool:
    """True when any of ``names`` occurs in ``data`` (launch-site prefilter)."""
    return any(name in data for name in names)


@functools.lru_cache(maxsize=8)
def _word_pattern(words: tuple[bytes, ...]) -> re.Pattern[bytes]:
    return re.compile(rb"(?<![\w.])(?:" + b"|".join(re.escape(w) for w in words) + rb")(?!\w)")


def mentions_word(data: bytes, words: tuple[bytes, ...]) -> bool:
    """True when one of ``words`` occurs in ``data`` as a whole name (not ``x.T`` or ``Tx``)."""
    return bool(words) and _word_pattern(words).search(data) is not None


def module_name(rel: str) -> str:
    """``pkg/sub/mod.py`` -> ``pkg.sub.mod``; ``pkg/__init__.py`` -> ``pkg``."""
    parts = list(PurePosixPath(rel).with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_excluded(rel: str, patterns: tuple[str, ...]) -> bool:
    """A glob matches the path or any folder above it (``third_party/*``, ``build``, ``*_test.py``)."""
    if not patterns:
        return False
    parts = PurePosixPath(rel).parts
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    return any(fnmatch.fnmatchcase(p, pat) or fnmatch.fnmatchcase(parts[i], pat)
               for pat in patterns for i, p in enumerate(prefixes))


def _git_files(root: Path) -> list[str] | None:
    """Python files git knows about under ``root``; None when ``root`` is not in a work tree."""
    from autotune_rewrite import gitrepo  # GitPython costs ~90 ms: only when a folder is scanned

    names = gitrepo.ls_files(root, "*.py")
    if names is None:  # not in git, or no git binary: fall back to the walk
        return None
    if not names and gitrepo.is_ignored(root):
        return None  # the user named an ignored folder (build/, vendor/): scan it as a plain folder
    # ls-files lists deleted-but-tracked files too; only what is on disk can be scanned.
    return sorted(n for n in names if (root / n).is_file())


def _is_venv(path: str, names: list[str]) -> bool:
    return "pyvenv.cfg" in names or os.path.isfile(os.path.join(path, "pyvenv.cfg"))


def _walk_files(root: Path) -> list[str]:
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            d for d in dirnames
            if not d.startswith(".") and d not in _SKIP_DIRS and not _is_venv(os.path.join(dirpath, d), [])
        )
        rel_dir = os.path.relpath(dirpath, root)
        for name in filenames:
            if name.endswith(".py"):
                rel = name if rel_dir == "." else f"{rel_dir}/{name}"
                out.append(rel.replace(os.sep, "/"))
    return sorted(out)


def discover(root: Path, exclude: tuple[str, ...] = (), explicit: tuple[Path, ...] = ()) -> FileSet:
    """The files to scan under ``root`` (a folder), or ``root`` itself when it is a file.

    ``explicit`` paths (absolute or relative to ``root``) limit the scan to them: a file is
    scanned even when excluded or ignored; a folder is listed as ``root`` would be (git's view,
    excludes applied) with its files named relative to ``root``, so ``check some/subfolder``
    names kernels as a check of the whole project does.
    """
    if not root.exists():
        raise UserError(f"{root}: no such file or folder; pass a checkout, folder or .py file")
    if root.is_file():
        return FileSet(root=root.parent, files=(root.name,), from_git=False)
    if explicit:
        rels: list[str] = []
        for p in explicit:
            full = p if p.is_absolute() else root / p
            if full.is_dir():
                under = full.resolve().relative_to(root.resolve()).as_posix()
                listed = _listed(full)
                rels += [f for f in (n if under == "." else f"{under}/{n}" for n in listed) if not is_excluded(f, exclude)]
                continue
            if not full.is_file():
                raise UserError(f"{full}: no such file; pass files that exist under {root}")
            rels.append(full.resolve().relative_to(root.resolve()).as_posix())
        return FileSet(root=root, files=tuple(dict.fromkeys(rels)), from_git=False,
                       tree=_project_files(root, exclude)[0])
    files, from_git = _project_files(root, exclude)
    return FileSet(root=root, files=files, from_git=from_git)


def _project_files(root: Path, exclude: tuple[str, ...]) -> tuple[tuple[str, ...], bool]:
    """The files a scan of the whole of ``root`` lists (git's view, excludes applied), and
    whether git listed them."""
    git = _git_files(root)
    files = git if git is not None else _walk_files(root)
    return tuple(f for f in files if not is_excluded(f, exclude)), git is not None


def _listed(folder: Path) -> list[str]:
    git = _git_files(folder)
    return git if git is not None else _walk_files(folder)


def scope_of(root: Path, path: Path) -> tuple[Path, ...]:
    """What a command given ``path`` scans inside the project ``root``: nothing explicit when
    ``path`` is the root itself, else ``path`` (a file or a subfolder)."""
    full = path.resolve()
    return () if full == root.resolve() else (full,)


__all__ = ["FileSet", "LAUNCH_MARKERS", "SITE_MARKER", "discover", "is_excluded", "is_site_candidate", "may_launch",
           "mentions_any", "module_name", "scope_of"]
