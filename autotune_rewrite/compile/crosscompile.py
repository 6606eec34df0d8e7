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
import io
import linecache
import os
import re
import sys
import tempfile
import time
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from autotune_rewrite.compile import budget, early_smem, peak_memory
from autotune_rewrite import resources
from autotune_rewrite import tempdirs
from autotune_rewrite.constexpr_values import runtime_value
from autotune_rewrite.evidence import CRASHED, OVER_BUDGET, REJECTED, CompileJob, CompileOutcome, KernelBundle
from autotune_rewrite.triton_types import pointer_paths, signature_value

# Environment variables that would change what triton.compile produces behind our back.
_UNSET_VARS = ("TRITON_OVERRIDE_ARCH", "TRITON_ALWAYS_COMPILE", "TRITON_KERNEL_OVERRIDE", "TRITON_KERNEL_DUMP")
_TRUE = {"1", "true", "on", "yes", "y"}  # what libtriton's getenv_bool accepts (any case)


def fp_fusion_setting() -> bool:
    """What the user's runtime would use: ``TRITON_DEFAULT_FP_FUSION`` if set, else Triton's
    default (on). Passed explicitly as ``enable_fp_fusion`` and part of the cache key."""
    value = os.environ.get("TRITON_DEFAULT_FP_FUSION")
    return True if value is None else value.strip().lower() in _TRUE


@contextlib.contextmanager
def triton_environment(cache_dir: Path, fp_fusion: bool | None = None) -> Iterator[None]:
    """Point Triton's cache at ``cache_dir`` and drop retargeting variables; restore after.

    ``fp_fusion`` also goes into ``TRITON_DEFAULT_FP_FUSION``: the ``enable_fp_fusion`` option
    decides it in Triton 3.3-3.6, and the variable covers versions that read only the knob.
    Python's temporary directory moves into ``cache_dir`` too: Triton's ptxas step leaves its
    .ptx/.o files in the temp dir when ptxas fails, and those should go away with it."""
    saved = {k: os.environ.get(k) for k in (*_UNSET_VARS, "TRITON_CACHE_DIR", "TRITON_DEFAULT_FP_FUSION")}
    saved_tempdir = tempfile.tempdir
    scratch = cache_dir / "tmp"
    try:
        for k in _UNSET_VARS:
            os.environ.pop(k, None)
        os.environ["TRITON_CACHE_DIR"] = str(cache_dir)
        if fp_fusion is not None:
            os.environ["TRITON_DEFAULT_FP_FUSION"] = "1" if fp_fusion else "0"
        scratch.mkdir(parents=True, exist_ok=True)
        tempfile.tempdir = str(scratch)
        yield
    finally:
        tempfile.tempdir = saved_tempdir
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
    from triton.runtime.jit import JITFunction

    fn = ns.get(bundle.kernel)
    # A bundle may keep @triton.autotune / @triton.heuristics: they wrap the JITFunction in .fn
    while fn is not None and not isinstance(fn, JITFunction) and hasattr(fn, "fn"):
        fn = fn.fn
    if not isinstance(fn, JITFunction):
        raise LookupError(f"{bundle.origin}: the bundle defines no @triton.jit function {bundle.kernel!r}")
    return fn


def one_line(exc: BaseException, diagnostics: str = "") -> str:
    """A compiler error as one line: the message part, without source excerpts or repro commands.

    ``diagnostics`` is what the compiler wrote to stdout/stderr meanwhile (MLIR prints its
    ``error:`` lines there and then raises a bare "PassManager::run failed")."""
    # An error inside a @triton.jit helper arrives wrapped: the caller's CompilationError points
    # at the call ("^"), its __cause__ at the helper line and the message. Report the innermost.
    while type(exc).__name__ == "CompilationError" and type(exc.__cause__).__name__ in (
        "CompilationError", "CompileTimeAssertionFailure"
    ):
        exc = exc.__cause__
    text = str(exc).strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    name = type(exc).__name__
    if not lines:
        return _with_diagnostic(name, diagnostics)
    if name == "PTXASError":
        # "PTXAS error: <what>\n`ptxas` stderr:\n<ptxas lines>\nRepro command: ..."
        log = lines[lines.index("`ptxas` stderr:") + 1 :] if "`ptxas` stderr:" in lines else []
        log = [ln for ln in log if not ln.startswith("Repro command")]
        chosen = next((ln for ln in log if "error" in ln or "fatal" in ln), log[0] if log else lines[0])
        return re.sub(r"\s+:", ":", re.sub(r"^PTXAS error:\s*", "", chosen))
    if name in ("CompilationError", "CompileTimeAssertionFailure"):
        # "at 12:4:\n<source line>\n    ^\n<message>": keep the position and the message.
        position = lines[0].rstrip(":") if lines[0].startswith("at ") else ""
        message = lines[-1]
        if name == "CompileTimeAssertionFailure":
            message = f"static_assert failed: {message}"
        return f"{message} ({position})" if position else message
    message = lines[-1] if len(lines) > 1 and lines[0].endswith(":") else lines[0]
    return _with_diagnostic(f"{name}: {message}", diagnostics)


# What Triton's autotuner itself treats as "this config does not work" (plus the kernel's own
# source failing to compile for the config); anything else is the compiler failing.
_REJECTIONS = {"OutOfResources", "CompileTimeAssertionFailure", "PTXASError", "CompilationError",
               "UnsupportedLanguageConstruct"}


def error_kind(exc: BaseException) -> str:
    return REJECTED if type(exc).__name__ in _REJECTIONS else CRASHED


def user_position(exc: BaseException, bundle: KernelBundle) -> tuple[str, int] | None:
    """The user's (file, line) a CompilationError points at: its node's line counts from the
    ``def`` line of the function whose source it carries, which the bundle maps back."""
    while type(exc).__name__ == "CompilationError" and type(exc.__cause__).__name__ in (
        "CompilationError", "CompileTimeAssertionFailure"
    ):
        exc = exc.__cause__
    src, line = getattr(exc, "src", None), getattr(getattr(exc, "node", None), "lineno", None)
    name = re.search(r"def\s+(\w+)", src) if isinstance(src, str) else None
    if name is None or not isinstance(line, int):
        return None
    where = next(((path, first) for fn, path, first in bundle.functions if fn == name.group(1)), None)
    return None if where is None else (where[0], where[1] + line - 1)


# Python's "name 'x' is not defined" (executing the bundle: a parameter default, a decorator
# argument) and Triton's "x is not defined" (a global read inside a @triton.jit body).
_NOT_DEFINED = re.compile(r"^(?:name ')?([A-Za-z_]\w*)'? is not defined")


def undefined_name(exc: BaseException) -> str | None:
    """The global a NameError in ``exc``'s chain says is not defined (Triton wraps it in a
    CompilationError), or ``alias.name`` for an attribute missing on a module object; None for
    other failures, and for Triton's "Cannot access global variable", which is the kernel's own
    error (a global that is not a constexpr)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, AttributeError) and isinstance(getattr(exc, "obj", None), types.ModuleType):
            return f"{exc.obj.__name__}.{exc.name}"
        if isinstance(exc, NameError):
            name = getattr(exc, "name", None)
            if name:
                return name
            found = _NOT_DEFINED.match(str(exc))
            return found.group(1) if found else None
        exc = exc.__cause__ or exc.__context__
    return None


def _with_diagnostic(message: str, diagnostics: str) -> str:
    first = next((ln.strip() for ln in diagnostics.splitlines() if "error:" in ln), None)
    return f"{message}: {first}" if first else message


@contextlib.contextmanager
def captured_output(file_descriptors: bool) -> Iterator[io.StringIO]:
    """Collect what the compiler prints (Triton prints the whole PTX on a ptxas failure; MLIR
    writes diagnostics to fd 2) so it never mixes with the tool's own output. Redirecting the
    file descriptors is only done in worker processes: in the caller's process it would also
    swallow the caller's output (a progress bar on stderr) for the duration."""
    sink = io.StringIO()
    if not file_descriptors:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            yield sink
        return
    sys.stdout.flush()
    sys.stderr.flush()
    saved = (os.dup(1), os.dup(2))
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        try:
            os.dup2(tmp.fileno(), 1)
            os.dup2(tmp.fileno(), 2)
            with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
                yield sink
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
            tmp.seek(0)
            sink.write(tmp.read().decode("utf-8", "replace"))


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


# The process that last ran LLVM (triton.compile) in itself. A child forked from it after that
# can abort inside LLVM (its locks and threads do not survive a fork): the pool then forks from
# a clean server process instead (``compile_pool._context``).
_COMPILED_IN: list[int] = []


def compiled_in_this_process() -> bool:
    return bool(_COMPILED_IN) and _COMPILED_IN[-1] == os.getpid()


def _compile(job: CompileJob, fp_fusion: bool) -> tuple[Any, Any]:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    fn = load_kernel(job.bundle)
    # Tuple types travel as text (hashable, one cache key) and become the nested tuples Triton
    # takes here; a tuple's divisibility goes to each pointer inside it, by index path, as the
    # runtime marks them. Dtype constexprs become the object the launch passes.
    signature = {name: signature_value(ty) for name, ty in job.signature}
    types = dict(job.signature)
    attrs = {(fn.arg_names.index(name),) + path: [["tt.divisibility", 16]]
             for name in job.divisible_by_16 for path in (pointer_paths(types[name]) or [()])}
    constexprs = {name: runtime_value(value) for name, value in job.constexprs}
    src = ASTSource(fn, signature=signature, constexprs=constexprs, attrs=attrs)
    if not compiled_in_this_process():
        _COMPILED_IN.append(os.getpid())
    kernel = triton.compile(src, target=GPUTarget("cuda", job.capability, 32), options=_options(job, fp_fusion))
    return fn, kernel


def over_budget_outcome(job: CompileJob, message: str, seconds: float) -> CompileOutcome:
    """A compile stopped at its time or memory budget (``message`` says which): no numbers, and it
    proves nothing."""
    return CompileOutcome.failed(job, message, resources.triton_version(),
                                 resources.ptxas_version(job.capability), seconds=seconds, kind=OVER_BUDGET)


def compile_job(
    job: CompileJob,
    *,
    triton_cache_dir: Path | None = None,
    fp_fusion: bool | None = None,
    capture_fds: bool = False,
    enforce_budget: bool = False,
) -> CompileOutcome:
    """Cross-compile one job and read its resources. Never raises for a kernel that fails to
    compile (the message is in ``error``); raises UserError only when cuobjdump is missing.

    ``triton_cache_dir``: where Triton may write (default: a temporary directory removed
    afterwards). ``capture_fds``: also silence file descriptors 1 and 2 while compiling (set by
    the process pool for its workers). ``enforce_budget``: stop the compile at the job's time
    budget (``compile/budget``; for worker processes only: it takes over SIGALRM)."""
    fusion = fp_fusion_setting() if fp_fusion is None else fp_fusion
    cuobjdump = resources.find_cuobjdump()
    version = resources.triton_version()
    ptxas = resources.ptxas_version(job.capability)
    own_dir = triton_cache_dir is None
    cache_dir = tempdirs.make("triton") if own_dir else triton_cache_dir
    start = time.perf_counter()
    try:
        stopped: early_smem.EarlySmem | None = None
        failure: Exception | None = None
        with triton_environment(cache_dir, fusion), captured_output(capture_fds) as printed:
            try:
                with budget.limited(job.budget if enforce_budget else None), peak_memory.measured() as peak:
                    with early_smem.stopping_hook(job.stop_smem_above):
                        _, kernel = _compile(job, fusion)
                    usage = resources.read_resource_usage(kernel.asm["cubin"], kernel.metadata.name, cuobjdump)
            except budget.OverBudget as over:
                return over_budget_outcome(job, over.message, time.perf_counter() - start)
            except early_smem.StoppedAtSmem as stop:  # over the limit: LLVM and ptxas would add nothing
                stopped = stop.found
            except Exception as exc:  # noqa: BLE001 - every compiler failure becomes a verdict
                failure = exc
        if stopped is not None:
            return CompileOutcome(job=job, shared_bytes=stopped.shared, tmem_bytes=stopped.tmem, registers=None,
                                  spills=None, error=None, triton_version=version, ptxas_version=ptxas,
                                  seconds=time.perf_counter() - start, stopped_early=True, peak_mb=peak[0])
        if failure is not None:
            message = one_line(failure, printed.getvalue())
            memory = job.budget.memory_mb if job.budget and enforce_budget else None
            if memory and budget.out_of_memory(failure, printed.getvalue()):
                return over_budget_outcome(job, budget.over_memory_message(memory), time.perf_counter() - start)
            where = user_position(failure, job.bundle)
            if where is not None:  # the bundle's "(at 3:11)" means nothing to the user
                message = re.sub(r" \(at \d+:\d+\)$", "", message)
            return CompileOutcome.failed(job, message, version, ptxas, seconds=time.perf_counter() - start,
                                         kind=error_kind(failure), file=where[0] if where else None,
                                         line=where[1] if where else None, undefined_name=undefined_name(failure))
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
            peak_mb=peak[0],
        )
    finally:
        if own_dir:
            tempdirs.remove(cache_dir)
