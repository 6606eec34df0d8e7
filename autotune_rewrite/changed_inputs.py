"""What ``changed.changed_sites`` decides from: git's changes since REF, and each site's inputs.

The changes (``changes_since``): ``git diff --no-renames REF`` against the working tree plus the
untracked files git does not ignore, read-only (see ``gitrepo.changed_since``). A settings file
counts only when its ``[tool.autotune-rewrite]`` table changed (or cannot be read): then every
site is judged, since a launch spec, an assumption or the targets may be any site's.

A site's inputs (``SiteInputsOf``), each over-approximated rather than missed:
- the files its bundle was cut from (the kernel loader records them: the kernel's module, the
  @triton.jit helpers and module constants it reaches in other modules);
- the decorator's file and the launch files, each with every module of the tree it imports,
  transitively (the config expression and the launch arguments may read any of their names:
  helpers, module variables, re-exports through ``__init__``), the configs' own files, and the
  data files (JSON/YAML) they were read from;
- the names of the functions around its launches (a changed file naming one may be a caller).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from autotune_rewrite import gitrepo
from autotune_rewrite.changed import Changes, SiteInputs
from autotune_rewrite.evidence import KernelBundle
from autotune_rewrite.model import AutotuneSite
from autotune_rewrite.module_resolver import ModuleResolver
from autotune_rewrite.settings.root import TABLE, TOOL_FILE

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

try:
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib


def changes_since(root: Path, ref: str) -> Changes:
    """The changes between ``ref`` and the working tree under ``root``; UserError (exit 2) when
    ``ref`` names no commit or ``root`` is not in a git checkout."""
    sha = gitrepo.commit_of(root, ref)
    paths, added = gitrepo.changed_since(root, sha)
    settings = tuple(p for p in paths if _settings_changed(root, sha, p))
    words = {p: _words(root, sha, p) for p in paths if p.endswith(".py")}
    return Changes(ref, frozenset(paths), frozenset(added), settings, words)


def _settings_changed(root: Path, sha: str, rel: str) -> bool:
    name = PurePosixPath(rel).name
    if name == TOOL_FILE:
        return True  # the tool's own file: any change is a settings change
    if name != "pyproject.toml":
        return False
    try:
        now = (root / rel).read_text(encoding="utf-8") if (root / rel).is_file() else None
        return _table(now) != _table(gitrepo.text_at(root, sha, rel))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return True  # cannot tell: judge everything


def _table(text: str | None):
    return None if text is None else tomllib.loads(text).get("tool", {}).get(TABLE)


def _words(root: Path, sha: str, rel: str) -> frozenset[str]:
    try:
        now = (root / rel).read_text(encoding="utf-8", errors="replace")
    except OSError:
        now = ""  # deleted
    before = gitrepo.text_at(root, sha, rel) or ""
    return frozenset(_WORD.findall(now)) | frozenset(_WORD.findall(before))


class SiteInputsOf:
    """``inputs_of`` for one run: imports are read once per file (``ast``: no LibCST needed)."""

    def __init__(self, root: Path, bundle_of: Callable[[AutotuneSite], KernelBundle]):
        self.root = Path(root)
        self.bundle_of = bundle_of
        files = gitrepo.ls_files(self.root)
        self.resolver = ModuleResolver(self.root, files)  # None outside git: the disk is asked
        self._direct: dict[str, frozenset[str]] = {}

    def __call__(self, site: AutotuneSite) -> SiteInputs:
        files = {site.path, site.kernel_path or site.path}
        files |= {c.path for c in site.configs or () if c.path}
        files |= set(site.data_files)  # the JSON/YAML the configs were read from
        launch_files = {launch.path for launch in site.launches}
        for start in {site.path} | launch_files:
            files |= self.imported(start)
        callers = frozenset(launch.function.rsplit(".", 1)[-1] for launch in site.launches if launch.function)
        if not site.configs:  # unresolved or empty: never compiled, so no bundle is cut
            return SiteInputs(frozenset(files | launch_files), callers, open_names=site.configs is None)
        try:
            bundle = self.bundle_of(site)
        except Exception as exc:  # noqa: BLE001 - a kernel that cannot be cut is judged (and says why)
            return SiteInputs(frozenset(files), callers, unknown=(str(exc).splitlines() or [type(exc).__name__])[0])
        return SiteInputs(frozenset(files | launch_files | set(bundle.files)), callers,
                          open_names=bool(bundle.unprovided or bundle.absent_modules))

    def imported(self, path: str) -> frozenset[str]:
        """Every module of the tree ``path`` imports, transitively (packages' ``__init__`` too)."""
        seen: set[str] = set()
        todo = [path]
        while todo:
            for dep in self._imports_of(todo.pop()):
                if dep not in seen:
                    seen.add(dep)
                    todo.append(dep)
        return frozenset(seen)

    def _imports_of(self, path: str) -> frozenset[str]:
        if path not in self._direct:
            self._direct[path] = frozenset(self._read_imports(path))
        return self._direct[path]

    def _read_imports(self, path: str) -> set[str]:
        try:
            tree = ast.parse((self.root / path).read_bytes())
        except (OSError, SyntaxError, ValueError):
            return set()  # the file itself is an input already; nothing more to follow
        out: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                out.update(self.resolver.imported_by(node, path))
        return out


__all__ = ["SiteInputsOf", "changes_since"]
