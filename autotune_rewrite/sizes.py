"""Sizes as people write them (``"2GB"``, ``"512MiB"``): the one parser, below every stage that reads one."""

from __future__ import annotations

import re

_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
          "t": 10**12, "tb": 10**12, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def parse_size(text: str | int) -> int:
    """``"2GB"`` -> 2,000,000,000; ``"512MiB"``, ``"1.5G"``, ``"100000"`` (bytes), an int;
    ``"0"`` / ``"none"`` -> 0, no limit. Decimal units as disks are sold, ``KiB``... binary.
    ValueError for anything else."""
    if isinstance(text, bool) or (isinstance(text, int) and text < 0):
        raise ValueError(f"not a size: {text!r}")
    if isinstance(text, int):
        return text
    if text.strip().lower() == "none":
        return 0
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text)
    if m is None or m.group(2).lower() not in _UNITS:
        raise ValueError(f"not a size: {text!r} (e.g. \"2GB\", \"500MB\", \"1GiB\", or bytes)")
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])
