"""GPU timing: a config pinned on the live autotuner, ``do_bench`` and CUDA-graph replay, copy bandwidth.

Pinning sets the autotuner's config list to the one config for the duration of a measurement:
with ``len(configs) == 1`` Triton's autotuner neither keys, prunes nor benchmarks (DOMAIN.md
section 3), so the real caller runs that config and nothing else, under graph capture too.
"""

from __future__ import annotations

import contextlib
from typing import Callable

from autotune_rewrite.errors import UserError
from autotune_rewrite.model import ConfigValue, DEFAULT_NUM_CTAS

COPY_BYTES = 1 << 30  # 1 GiB: far past any L2, so the copy runs at DRAM speed


def require_gpu() -> None:
    """UserError (exit 2) unless torch sees a CUDA device."""
    try:
        import torch
    except ImportError:
        raise UserError("bench needs a CUDA GPU and PyTorch: torch is not installed (pip install 'autotune-rewrite[interp]')") from None
    if not torch.cuda.is_available():
        raise UserError("bench needs a CUDA GPU: torch.cuda.is_available() is False on this machine (run it where the GPU is)")


def device_info() -> tuple[str, str]:
    import torch

    major, minor = torch.cuda.get_device_capability()
    return torch.cuda.get_device_name(), f"sm_{major}{minor}"


def live_config(autotuner, cv: ConfigValue):
    """The ``triton.Config`` for ``cv``: the autotuner's own object when the source lists it (keeps
    its pre_hook), else a new one with the same meta-params and options."""
    import triton

    for c in autotuner.configs:
        if (dict(c.kwargs) == dict(cv.kwargs) and c.num_warps == cv.effective_num_warps
                and c.num_stages == cv.effective_num_stages and getattr(c, "num_ctas", 1) == cv.effective_num_ctas
                and getattr(c, "maxnreg", None) == cv.maxnreg):
            return c
    extra = {"maxnreg": cv.maxnreg} if cv.maxnreg is not None else {}
    return triton.Config(dict(cv.kwargs), num_warps=cv.effective_num_warps, num_stages=cv.effective_num_stages,
                         num_ctas=cv.num_ctas or DEFAULT_NUM_CTAS, **extra)


@contextlib.contextmanager
def pinned(autotuner, config):
    """Run ``autotuner`` with ``config`` alone, then restore its list and cache."""
    saved = autotuner.configs, autotuner.cache
    autotuner.configs, autotuner.cache = [config], {}
    try:
        yield
    finally:
        autotuner.configs, autotuner.cache = saved


def time_call(fn: Callable[[], object]) -> tuple[float, float]:
    """(median ms with do_bench, median ms with CUDA graph replay) of ``fn``.

    ``fn`` runs once first, outside any capture, so compilation happens before timing.
    """
    import torch
    from triton.testing import do_bench, do_bench_cudagraph

    fn()
    torch.cuda.synchronize()
    eager = do_bench(fn, return_mode="median")
    graph = do_bench_cudagraph(fn, return_mode="median")
    return float(eager), float(graph)


def copy_bandwidth(nbytes: int = COPY_BYTES) -> float:
    """Device-to-device copy bandwidth in GB/s (bytes read + bytes written per second)."""
    import torch
    from triton.testing import do_bench

    src = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    ms = do_bench(lambda: dst.copy_(src), return_mode="median")
    del src, dst
    torch.cuda.empty_cache()
    return 2 * nbytes / (ms * 1e-3) / 1e9


def launch_error(exc: BaseException) -> str | None:
    """A one-line reason when ``exc`` means "this config cannot run here"; None for a real failure."""
    name = type(exc).__name__
    if name in ("OutOfResources", "CompileTimeAssertionFailure", "PTXASError"):
        return f"{name}: {str(exc).splitlines()[0] if str(exc) else ''}".strip()
    return None


__all__ = ["copy_bandwidth", "device_info", "launch_error", "live_config", "pinned", "require_gpu", "time_call"]
