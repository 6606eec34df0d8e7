"""The tool's on-disk caches: one folder, one key recipe, atomic writes, corrupt entries ignored.

Every cache (compile outcomes, isolated kernels, scans, SMEM fits) is a ``Namespace`` of one
folder: ``$AUTOTUNE_REWRITE_CACHE_DIR``, else ``$XDG_CACHE_HOME/autotune-rewrite``, else
``~/.cache/autotune-rewrite``. A key always hashes the namespace's name and schema number and
the versions of everything that may change a stored answer (this tool, Triton, LibCST), then
whatever the cache adds (inputs, code digests, ptxas): an upgrade can never serve a stale entry.
An entry that cannot be read or decoded is a miss, and the recomputed value replaces it. A cache
that cannot be written is not an error: the run just stays cold.

The folder may be shared by concurrent processes and restored between CI runs (docs/ci.md):
every write goes to a temporary file in the entry's own folder and is renamed into place
(``os.replace``, atomic on POSIX), so a reader sees the old entry or the new one, never half of
one, and two writers of one key both succeed (the last rename wins; both wrote the same answer).
Reading an entry touches its mtime: the mtime is its last use, which ``cache_admin`` evicts by
(least recently used first, under the size limit).

Nothing here imports LibCST or Triton (versions come from the installed distributions'
metadata): a warm run must stay cheap.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import functools
import hashlib
import json
import os
import pickle
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

ENV_VAR = "AUTOTUNE_REWRITE_CACHE_DIR"
TEMP_PREFIX = ".tmp-"  # a writer's file before its rename; cache_admin removes those a killed writer left

_written = 0  # bytes this process has stored: a run that wrote nothing has nothing to trim


def default_cache_dir() -> Path:
    """``$AUTOTUNE_REWRITE_CACHE_DIR``, else ``$XDG_CACHE_HOME/autotune-rewrite``, else
    ``~/.cache/autotune-rewrite``."""
    explicit = os.environ.get(ENV_VAR)
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "autotune-rewrite"


@functools.lru_cache(maxsize=1)
def tool_versions() -> tuple[tuple[str, str | None], ...]:
    """(distribution, version) of this tool and of the libraries whose behaviour is cached."""
    from autotune_rewrite import __version__

    def installed(name: str) -> str | None:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return None

    return (("autotune-rewrite", __version__), ("triton", installed("triton")), ("libcst", installed("libcst")))


def file_digest(path: Path) -> str | None:
    """SHA-256 of a file's bytes (None when it cannot be read)."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def write_atomic(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` atomically (temporary file in the same folder, then
    ``os.replace``): a reader never sees half an entry. False, and nothing left behind, on failure."""
    global _written
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=TEMP_PREFIX, suffix=path.suffix)
        with os.fdopen(fd, "wb") as f:
            # mkstemp makes the file private (0600); an entry gets the mode open() would give it,
            # so a cache folder shared with another user (a CI container) stays readable.
            os.fchmod(f.fileno(), 0o666 & ~_umask())
            f.write(data)
        os.replace(tmp, path)
        _written += len(data)
        return True
    except OSError:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        return False


@functools.lru_cache(maxsize=1)
def _umask() -> int:
    mask = os.umask(0o022)  # the only way to read it is to set it: put it straight back
    os.umask(mask)
    return mask


def bytes_written() -> int:
    """Bytes this process has stored in any cache so far."""
    return _written


def touch(path: Path) -> None:
    """Record a use of the entry (its mtime), for least-recently-used eviction; a read-only
    cache just keeps its old times."""
    with contextlib.suppress(OSError):
        os.utime(path)


def make_key(name: str, schema: int, *parts: Any) -> str:
    """SHA-256 over the cache's name and schema, the tool versions and ``parts`` (JSON-able;
    anything else by ``repr``). Independent of the folder: the same inputs, the same key."""
    payload = [name, schema, tool_versions(), parts]
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(blob.encode()).hexdigest()


def canonical(value: Any) -> Any:
    """A JSON-able form that is the same in every process: sets sorted (their order follows
    string hashing, which changes per process), dataclasses by field, enums by value."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [type(value).__qualname__, {f.name: canonical(getattr(value, f.name)) for f in dataclasses.fields(value)}]
    if isinstance(value, enum.Enum):
        return [type(value).__qualname__, canonical(value.value)]
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((canonical(v) for v in value), key=repr)
    if isinstance(value, dict):
        return sorted(([canonical(k), canonical(v)] for k, v in value.items()), key=repr)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Path):
        return value.as_posix()
    return [type(value).__qualname__, repr(value)]


@dataclass(frozen=True)
class Namespace:
    """One cache: entries ``<root>/<name>/<key[:2]>/<key><suffix>``."""

    root: Path
    name: str
    schema: int
    suffix: str = ".json"

    def key(self, *parts: Any) -> str:
        return make_key(self.name, self.schema, *parts)

    def path(self, key: str) -> Path:
        return self.root / self.name / key[:2] / f"{key}{self.suffix}"

    def read_json(self, key: str) -> Any | None:
        """The stored value, or None when absent or unreadable (a corrupt entry is a miss)."""
        path = self.path(key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("schema") != self.schema:
            return None
        touch(path)
        return data.get("value")

    def write_json(self, key: str, value: Any) -> bool:
        return write_atomic(self.path(key), json.dumps({"schema": self.schema, "value": value}).encode("utf-8"))

    def read_pickle(self, key: str, expected: type) -> Any | None:
        """An entry of our own frozen dataclasses (same trust as the rest of the user's cache)."""
        path = self.path(key)
        try:
            value = pickle.loads(path.read_bytes())
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError, ValueError,
                IndexError, KeyError):
            return None
        if not isinstance(value, expected):
            return None
        touch(path)
        return value

    def write_pickle(self, key: str, value: Any) -> bool:
        try:
            data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError):
            return False
        return write_atomic(self.path(key), data)


def namespace(name: str, schema: int, cache_dir: Path | None = None, suffix: str = ".json") -> Namespace:
    """The cache ``name`` under ``cache_dir`` (default: ``default_cache_dir()``)."""
    return Namespace(Path(cache_dir) if cache_dir is not None else default_cache_dir(), name, schema, suffix)


__all__ = ["ENV_VAR", "Namespace", "canonical", "bytes_written", "make_key", "default_cache_dir", "file_digest", "namespace", "tool_versions", "touch", "write_atomic"]
