"""The locator's code as one digest: a part of every locator cache key (scans, per-file facts,
links), so a change in the locator's code never reuses what older code found."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

_PACKAGE = Path(__file__).parent.parent
# The locator's code: a change in any of these may change what a scan returns.
_LOCATOR_FILES = ("files.py", "model.py", "triton_names.py", "module_resolver.py", "targets.py")
_LOCATOR_PACKAGES = ("locate", "wrapper", "evaluate", "settings")  # wrapper: the launches' argument facts


@functools.lru_cache(maxsize=1)
def locator_digest() -> str:
    """SHA-256 of the locator's code (also a part of every per-file facts key, ``facts_cache``)."""
    h = hashlib.sha256()
    files = [*(_PACKAGE / n for n in _LOCATOR_FILES),
             *(p for package in _LOCATOR_PACKAGES for p in (_PACKAGE / package).glob("*.py"))]
    for path in sorted(files):
        h.update(path.relative_to(_PACKAGE).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()


__all__ = ["locator_digest"]
