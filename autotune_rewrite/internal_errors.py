"""An unexpected exception while handling one kernel becomes that kernel's outcome.

The traceback goes to a file under the cache folder (``<cache>/errors/<time>-<kernel>.txt``,
``AUTOTUNE_REWRITE_CACHE_DIR`` honoured) so a bug report can carry it, while the terminal gets
one line with the path; the other kernels go on.
"""

from __future__ import annotations

import re
import time
import traceback
from pathlib import Path

from autotune_rewrite.outcomes import Problem, Reason


def errors_dir(cache_dir: Path | None = None) -> Path:
    from autotune_rewrite.disk_cache import default_cache_dir

    return (cache_dir or default_cache_dir()) / "errors"


def internal_error(kernel: str, exc: BaseException, stage: str, cache_dir: Path | None = None) -> Problem:
    """Write ``exc``'s traceback and return the kernel's INTERNAL_ERROR problem."""
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    detail = f"{type(exc).__name__} in {stage}" + (f": {message}" if message else "")
    stamp = time.strftime("%Y%m%d-%H%M%S") + f"-{time.time_ns() % 1_000_000_000:09d}"
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", kernel)[-80:]
    path: Path | None = errors_dir(cache_dir) / f"{stamp}-{name}.txt"
    text = (f"autotune-rewrite internal error while handling {kernel} ({stage})\n\n"
            + "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError:
        path = None  # an unwritable cache must not hide the error itself
    return Problem(Reason.INTERNAL_ERROR, detail=detail, traceback_file=str(path) if path else None)


__all__ = ["errors_dir", "internal_error"]
