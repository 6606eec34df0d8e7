"""Best-effort atomic file writes for the tool's own caches.

A reader never sees a half-written entry (write to a temporary file in the same folder, then
``os.replace``), and a cache that cannot be written is not an error: the run just stays cold.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` atomically; False (and nothing left behind) when it failed."""
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        return True
    except OSError:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        return False
