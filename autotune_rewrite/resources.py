"""The NVIDIA tools Triton bundles: where they are, their versions, and what cuobjdump says.

Found without importing triton (``importlib.util.find_spec`` only locates the package), so the
warm-cache path stays cheap. The lookup mirrors Triton's ``knobs.nvidia`` tools: an explicit
``TRITON_<TOOL>_PATH`` first, then the binary inside the wheel; for ptxas, capability >= 100
uses ``ptxas-blackwell`` exactly as ``triton/backends/nvidia/compiler.py:get_ptxas`` does.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from autotune_rewrite.errors import UserError


@functools.lru_cache(maxsize=1)
def triton_dir() -> Path:
    spec = importlib.util.find_spec("triton")
    if spec is None or spec.origin is None:
        raise UserError("triton is not installed in this Python environment: pip install triton")
    return Path(spec.origin).parent


@functools.lru_cache(maxsize=None)
def triton_has_module(dotted: str) -> bool:
    """Whether the installed Triton has the module ``dotted`` (``triton.language.extra.tlx`` is
    a fork's), read off the package's files without importing it."""
    base = triton_dir().joinpath(*dotted.split(".")[1:])
    return (base.is_dir() or base.with_name(base.name + ".py").is_file()
            or any(base.parent.glob(base.name + ".*.so")))


@functools.lru_cache(maxsize=1)
def triton_version() -> str:
    """``triton.__version__`` read from the package's __init__.py (no import)."""
    text = (triton_dir() / "__init__.py").read_text(encoding="utf-8")
    m = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", text, re.MULTILINE)
    if m is None:  # unusual build: fall back to the installed distribution's metadata
        from importlib.metadata import version

        return version("triton")
    return m.group(1)


def _bundled(binary: str) -> Path:
    return triton_dir() / "backends" / "nvidia" / "bin" / binary


def _candidates(binary: str) -> list[Path]:
    env = os.environ.get(f"TRITON_{binary.upper().replace('-', '_')}_PATH")
    paths = [Path(env)] if env else []
    paths.append(_bundled(binary))
    return paths


def _first_executable(paths: list[Path]) -> Path | None:
    for p in paths:
        if p.is_file() and os.access(p, os.X_OK):
            return p
    return None


def ptxas_path(capability: int) -> Path | None:
    """The ptxas Triton runs for this capability (None: Triton itself would fail to compile)."""
    return _first_executable(_candidates("ptxas-blackwell" if capability >= 100 else "ptxas"))


@functools.lru_cache(maxsize=8)
def _tool_version(path: str, mtime_ns: int) -> str | None:
    del mtime_ns  # part of the cache key only: a replaced binary is asked again
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    m = re.search(r"\bV(\d+\.\d+\.\d+)", out) or re.search(r"release (\d+\.\d+)", out)
    return m.group(1) if m else None


def ptxas_version(capability: int) -> str | None:
    """E.g. "12.9.86" for ptxas-blackwell in Triton 3.6; None when no ptxas is found."""
    path = ptxas_path(capability)
    if path is None:
        return None
    return _tool_version(str(path), path.stat().st_mtime_ns)


def find_cuobjdump() -> Path:
    paths = _candidates("cuobjdump")
    which = shutil.which("cuobjdump")
    if which:
        paths.append(Path(which))
    found = _first_executable(paths)
    if found is None:
        looked = ", ".join(str(p) for p in paths) or "nowhere"
        raise UserError(
            f"cuobjdump not found (looked in: {looked}, and PATH); reinstall the triton wheel "
            "or set TRITON_CUOBJDUMP_PATH to a CUDA cuobjdump"
        )
    return found


@dataclass(frozen=True)
class ResourceUsage:
    registers: int  # REG: registers per thread
    stack_bytes: int  # STACK: per-thread stack frame, where ptxas spills
    static_shared_bytes: int  # SHARED: static shared memory in the cubin (not Triton's dynamic SMEM)
    local_bytes: int

    @property
    def spills(self) -> int:
        # Triton's launcher reports CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES / 4 as n_spills; for Triton
        # kernels cuobjdump's STACK carries that frame (checked against the driver on an H200).
        return self.stack_bytes // 4


_FUNC_RE = re.compile(r"^\s*Function\s+(\S+?):\s*$", re.MULTILINE)
_FIELD_RE = re.compile(r"([A-Z_]+(?:\[\d+\])?):(\d+)")


def parse_res_usage(text: str, kernel: str) -> ResourceUsage:
    """Parse ``cuobjdump -res-usage`` output; the line after ``Function <kernel>:``."""
    blocks = list(_FUNC_RE.finditer(text))
    for i, m in enumerate(blocks):
        if m.group(1) != kernel and len(blocks) > 1:
            continue
        end = blocks[i + 1].start() if i + 1 < len(blocks) else len(text)
        fields = dict(_FIELD_RE.findall(text[m.end() : end]))
        if "REG" in fields:
            return ResourceUsage(
                registers=int(fields["REG"]),
                stack_bytes=int(fields.get("STACK", 0)),
                static_shared_bytes=int(fields.get("SHARED", 0)),
                local_bytes=int(fields.get("LOCAL", 0)),
            )
    raise ValueError(f"no resource usage for {kernel} in cuobjdump output: {text.strip()[:200]!r}")


def read_resource_usage(cubin: bytes, kernel: str, cuobjdump: Path | None = None) -> ResourceUsage:
    tool = cuobjdump or find_cuobjdump()
    fd, name = tempfile.mkstemp(suffix=".cubin", prefix="autotune-rewrite-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(cubin)
        proc = subprocess.run([str(tool), "-res-usage", name], capture_output=True, text=True)
    finally:
        os.unlink(name)
    if proc.returncode != 0:
        raise RuntimeError(f"cuobjdump -res-usage failed: {proc.stderr.strip()}")
    return parse_res_usage(proc.stdout, kernel)
