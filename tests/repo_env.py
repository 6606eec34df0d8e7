"""How a test's subprocess finds this checkout's package: first on PYTHONPATH, before whatever the
environment already has there (wheels carried to the GPU machine live on PYTHONPATH too, so
replacing it would lose libcst and tomlkit in the child)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

REPO = Path(__file__).resolve().parents[1]


def pythonpath(*first: Path | str, env: Mapping[str, str] | None = None) -> str:
    """``REPO``, then ``first``, then the entries ``env`` (default: ``os.environ``) already has."""
    env = os.environ if env is None else env
    kept = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    return os.pathsep.join([str(REPO), *map(str, first), *kept])
