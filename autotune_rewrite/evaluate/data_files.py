"""Configs read from a data file of the repository, without running the loader.

``json.load(open(os.path.join(os.path.dirname(__file__), "configs.json")))``,
``yaml.safe_load(Path(__file__).parent.joinpath("x.yaml").read_text())``, ``with open(p) as f:
data = json.load(f)``: a path built from ``__file__`` is a ``RepoPath`` (relative to the scan
root, never outside it); opening and loading it reads the file through the evaluator's
``read_data`` (given by the linking pass, which knows the root) and parses it with ``json`` or
``yaml.safe_load`` (never a loader that can build objects, whatever the code asks). Every file
read is recorded in ``Evaluator.data_files``: it is an input of the site (``--changed-since``).
A path relative to the working directory, or outside the repository, is not known statically.
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass
from typing import Any

from autotune_rewrite.evaluate.values import Pending, Unresolved

MAX_BYTES = 4 << 20  # a config table, not a data set


class NeedsRoot(Pending):
    """The per-file pass has no root to read the file from: the linking pass reads it."""

    def __init__(self, path: str):
        Unresolved.__init__(self, f"reads the data file `{path}` (read by the linking pass)")
        self.fq = f"<data file {path}>"


@dataclass(frozen=True)
class RepoPath:
    """A path inside the scanned tree, relative to its root (POSIX)."""

    rel: str

    def join(self, *parts) -> "RepoPath":
        out = self.rel
        for p in parts:
            if isinstance(p, RepoPath):
                out = p.rel
            elif isinstance(p, str):
                if p.startswith("/"):
                    raise Unresolved(f"reads `{p}`, an absolute path outside the repository")
                out = posixpath.join(out, p)
            else:
                raise Unresolved("a path joined with something that is not a string")
        norm = posixpath.normpath(out)
        if norm == ".." or norm.startswith("../"):
            raise Unresolved(f"reads `{norm}`, outside the repository")
        return RepoPath(norm)

    @property
    def parent(self) -> "RepoPath":
        return RepoPath(posixpath.dirname(self.rel) or ".")

    def __truediv__(self, other) -> "RepoPath":
        return self.join(other)

    def __add__(self, other) -> "RepoPath":  # ``os.path.dirname(__file__) + "/x.json"``
        if not isinstance(other, str):
            raise Unresolved("a path added to something that is not a string")
        return self.join(other.lstrip("/")) if other.startswith("/") else RepoPath(self.rel + other).join()


@dataclass(frozen=True)
class FileHandle:
    path: RepoPath


def _repo_path(value) -> RepoPath:
    if isinstance(value, RepoPath):
        return value
    if isinstance(value, str):
        raise Unresolved(f"reads `{value}`, relative to the working directory at run time")
    raise Unresolved("opens something that is not a path")


def _parse(rel: str, data: bytes, kind: str) -> Any:
    try:
        if kind == "json":
            return json.loads(data)
        import yaml  # PyYAML (LibCST depends on it): imported only when a site reads YAML

        return yaml.safe_load(data)
    except ImportError:
        raise Unresolved(f"reads the YAML file `{rel}`: install PyYAML to read it") from None
    except Exception as exc:  # noqa: BLE001 - the file's own syntax error
        raise Unresolved(f"the data file `{rel}` does not parse ({type(exc).__name__})") from None


class DataFiles:
    """Mixin for ``Evaluator``: paths, ``open`` and the loaders of JSON and YAML."""

    def read_bytes(self, path: RepoPath) -> bytes:
        if self.read_data is None:
            raise NeedsRoot(path.rel)
        data = self.read_data(path.rel)
        if data is None:
            raise Unresolved(f"reads `{path.rel}`, which is not a file of the repository")
        if len(data) > MAX_BYTES:
            raise Unresolved(f"reads `{path.rel}`, too large to be a config table")
        if path.rel not in self.data_files:
            self.data_files.append(path.rel)
        self.note("data file")
        return data

    def enter(self, pm, node, env):
        """``with EXPR as f``: only a data file opened for reading."""
        value = self.eval(pm, node, env)
        if not isinstance(value, FileHandle):
            raise Unresolved("`with` over something that is not a data file opened for reading")
        return value

    def _text(self, value) -> tuple[str, bytes]:
        if isinstance(value, (FileHandle, _Text)):
            return value.path.rel, self.read_bytes(value.path)
        if isinstance(value, str):
            return "<string>", value.encode()
        raise Unresolved("loads something that is not an opened data file")

    def data_call(self, fq: str, args: list, kwargs: dict):
        """The value of a path/file/loader call ``fq`` (``DATA_CALLS``)."""
        if fq == "builtins.open":
            mode = args[1] if len(args) > 1 else kwargs.get("mode", "r")
            if not isinstance(mode, str) or set(mode) - set("rtb"):
                raise Unresolved("opens a file for writing")
            return FileHandle(_repo_path(args[0] if args else kwargs.get("file")))
        if fq in ("pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath"):
            return _repo_path(args[0]).join(*args[1:]) if args else RepoPath(".")
        if fq == "os.path.join":
            return _repo_path(args[0]).join(*args[1:])
        if fq == "os.path.dirname":
            return _repo_path(args[0]).parent
        if fq in ("os.path.abspath", "os.path.realpath", "os.path.normpath"):
            return _repo_path(args[0]).join()
        if fq == "os.path.exists" or fq == "os.path.isfile":
            path = _repo_path(args[0])
            if self.read_data is None:
                raise NeedsRoot(path.rel)
            return self.read_data(path.rel) is not None
        if fq in ("json.load", "json.loads"):
            return _parse(*self._text(args[0]), "json")
        if fq in ("yaml.safe_load", "yaml.load", "yaml.full_load"):
            return _parse(*self._text(args[0]), "yaml")
        raise Unresolved(f"`{fq}` is not evaluated")

    def path_attribute(self, obj, attr: str):
        """``Path`` and file methods: ``.parent``, ``.joinpath(...)``, ``.read_text()``, ``f.read()``."""
        if isinstance(obj, RepoPath):
            if attr == "parent":
                return obj.parent
            if attr == "name":
                return posixpath.basename(obj.rel)
            if attr in ("resolve", "absolute", "expanduser"):
                return PathMethod(lambda: obj)
            if attr == "joinpath":
                return PathMethod(lambda *parts: obj.join(*parts))
            if attr in ("read_text", "read_bytes"):
                return PathMethod(lambda *a, **k: _Text(obj))
            if attr == "open":
                return PathMethod(lambda *a, **k: FileHandle(obj))
        if isinstance(obj, FileHandle) and attr == "read":
            return PathMethod(lambda *a: _Text(obj.path))
        raise Unresolved(f"attribute `{attr}` of a path is not evaluated")


@dataclass(frozen=True)
class _Text:
    """A file's text, read when a loader parses it (so ``json.loads(p.read_text())`` records it)."""

    path: RepoPath


class PathMethod:
    def __init__(self, fn):
        self.fn = fn

    def __call__(self, args, kwargs):
        return self.fn(*args, **kwargs)


DATA_CALLS = frozenset({
    "builtins.open", "pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath", "os.path.join", "os.path.dirname",
    "os.path.abspath", "os.path.realpath", "os.path.normpath", "os.path.exists", "os.path.isfile",
    "json.load", "json.loads", "yaml.safe_load", "yaml.load", "yaml.full_load",
})

__all__ = ["DATA_CALLS", "DataFiles", "FileHandle", "NeedsRoot", "PathMethod", "RepoPath"]
