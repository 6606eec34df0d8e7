"""One ``triton.compile`` for a GPU we do not have, and what it tells us.

``compile_job`` runs a ``CompileJob`` the way Triton's runtime would compile that launch
(signature, constexprs, divisibility attrs, options) for ``GPUTarget("cuda", capability, 32)``,
then reads ``metadata.shared`` / ``tmem_size`` and the cubin's registers and stack through the
bundled ``cuobjdump``. A kernel that fails to compile is an outcome with ``error`` set, never an
exception: the caller reports it as a verdict and goes on.

Environment hygiene: ``TRITON_OVERRIDE_ARCH`` would silently retarget the compile, so it is
removed while compiling; Triton's own cache goes to a private directory (never the user's
``~/.triton``); fp fusion is passed as an explicit option (see ``fp_fusion_setting``).
"""

from __future__ import annotations

import contextlib
import hashlib
import linecache
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from autotune_rewrite import resources
from autotune_rewrite.evidence import CompileJob, CompileOutcome, KernelBundle

# Environment variables that would change what triton.compile produces behind our back.
_UNSET_VARS = ("TRITON_OVERRIDE_ARCH", "TRITON_ALWAYS_COMPILE", "TRITON_KERNEL_OVERRIDE", "TRITON_KERNEL_DUMP")
_TRUE = {"1", "true", "on", "yes"}


def fp_fusion_setting() -> bool:
    """What the user's runtime would use: ``TRITON_DEFAULT_FP_FUSION`` if set, else Triton's
    default (on). Passed explicitly as ``enable_fp_fusion`` and part of the cache key."""
    value = os.environ.get("TRITON_DEFAULT_FP_FUSION")
    return True if value is None else value.strip().lower() in _TRUE


@contextlib.contextmanager
def triton_environment(cache_dir: Path) -> Iterator[None]:
    """Point Triton's cache at ``cache_dir`` and drop retargeting variables; restore after."""
    saved = {k: os.environ.get(k) for k in (*_UNSET_VARS, "TRITON_CACHE_DIR")}
    try:
        for k in _UNSET_VARS:
            os.environ.pop(k, None)
        os.environ["TRITON_CACHE_DIR"] = str(cache_dir)
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


# Exec'd bundles of this process, by hash of (kernel, source): the JITFunction is built once.
_NAMESPACES: dict[str, dict[str, Any]] = {}


def _bundle_id(bundle: KernelBundle) -> str:
    return hashlib.sha256(f"{bundle.kernel}\0{bundle.source}".encode()).hexdigest()[:16]


def load_kernel(bundle: KernelBundle) -> Any:
    """Execute the bundle's source in a fresh module namespace and return its JITFunction.

    The source is registered in ``linecache`` under a synthetic file name because Triton's
    ``JITFunction`` reads its own source through ``inspect.getsourcelines``."""
    bid = _bundle_id(bundle)
    ns = _NAMESPACES.get(bid)
    if ns is None:
        filename = f"<autotune-rewrite bundle {bundle.origin} {bid}>"
        linecache.cache[filename] = (len(bundle.source), None, bundle.source.splitlines(True), filename)
        ns = {"__name__": f"autotune_rewrite_bundle_{bid}", "__file__": filename}
        exec(compile(bundle.source, filename, "exec"), ns)  # noqa: S102 - the point of a bundle
        _NAMESPACES[bid] = ns
    fn = ns.get(bundle.kernel)
    if fn is None or not hasattr(fn, "arg_names"):
        raise LookupError(f"{bundle.origin}: the bundle defines no @triton.jit function {bundle.kernel!r}")
    return fn


def one_line(exc: BaseException) -> str:
    """A compiler error as one line: the message part, without source excerpts or repro commands."""
    text = str(exc).strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    name = type(exc).__name__
    if not lines:
        return name
    if name == "PTXASError":
        # "PTXAS error: Internal Triton PTX codegen error\n`ptxas` stderr:\n<lines>\nRepro command: ..."
        body = [ln for ln in lines if ln.startswith("ptxas") and "fatal" not in ln.lower()]
        body = body or [ln for ln in lines if not ln.startswith(("Repro command", "`ptxas`"))]
        return f"ptxas: {body[0]}" if body else f"ptxas: {lines[0]}"
    if name in ("CompilationError", "CompileTimeAssertionFailure"):
        # "at 12:4:\n<source line>\n    ^\n<message>": keep the position and the message.
        position = lines[0].rstrip(":") if lines[0].startswith("at ") else ""
        message = lines[-1]
        if name == "CompileTimeAssertionFailure":
            message = f"static_assert failed: {message}"
        return f"{message} ({position})" if position else message
    return f"{name}: {lines[-1] if len(lines) > 1 and lines[0].endswith(':') else lines[0]}"


def _options(job: CompileJob, fp_fusion: bool) -> dict[str, Any]:
    options: dict[str, Any] = {
        "num_warps": job.num_warps,
        "num_stages": job.num_stages,
        "num_ctas": job.num_ctas,
        "enable_fp_fusion": fp_fusion,
    }
    if job.maxnreg is not None:
        options["maxnreg"] = job.maxnreg
    return options


def _compile(job: CompileJob, fp_fusion: bool) -> tuple[Any, Any]:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    fn = load_kernel(job.bundle)
    signature = dict(job.signature)
    attrs = {(fn.arg_names.index(name),): [["tt.divisibility", 16]] for name in job.divisible_by_16}
    src = ASTSource(fn, signature=signature, constexprs=dict(job.constexprs), attrs=attrs)
    kernel = triton.compile(src, target=GPUTarget("cuda", job.capability, 32), options=_options(job, fp_fusion))
    return fn, kernel


def compile_job(
    job: CompileJob,
    *,
    triton_cache_dir: Path | None = None,
    fp_fusion: bool | None = None,
) -> CompileOutcome:
    """Cross-compile one job and read its resources. Never raises for a kernel that fails to
    compile (the message is in ``error``); raises UserError only when cuobjdump is missing."""
    fusion = fp_fusion_setting() if fp_fusion is None else fp_fusion
    cuobjdump = resources.find_cuobjdump()
    version = resources.triton_version()
    ptxas = resources.ptxas_version(job.capability)
    own_dir = triton_cache_dir is None
    cache_dir = Path(tempfile.mkdtemp(prefix="autotune-rewrite-triton-")) if own_dir else triton_cache_dir
    start = time.perf_counter()
    try:
        with triton_environment(cache_dir):
            try:
                _, kernel = _compile(job, fusion)
                usage = resources.read_resource_usage(kernel.asm["cubin"], kernel.metadata.name, cuobjdump)
            except Exception as exc:  # noqa: BLE001 - every compiler failure becomes a verdict
                return CompileOutcome(
                    job=job,
                    shared_bytes=None,
                    tmem_bytes=None,
                    registers=None,
                    spills=None,
                    error=one_line(exc),
                    triton_version=version,
                    ptxas_version=ptxas,
                    seconds=time.perf_counter() - start,
                )
        tmem = getattr(kernel.metadata, "tmem_size", None)
        return CompileOutcome(
            job=job,
            shared_bytes=int(kernel.metadata.shared),
            tmem_bytes=None if tmem is None else int(tmem),
            registers=usage.registers,
            spills=usage.spills,
            error=None,
            triton_version=version,
            ptxas_version=ptxas,
            seconds=time.perf_counter() - start,
        )
    finally:
        if own_dir:
            shutil.rmtree(cache_dir, ignore_errors=True)
